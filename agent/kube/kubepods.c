// SPDX-License-Identifier: Apache-2.0
/* The kubelet's cgroup tree (agent/kube/kubepods.h). */
#include "agent/kube/kubepods.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroupv2/cg2.h"
#include "common/cleanup.h"
#include "common/xalloc.h"

#define MAX_PARTS 5

static bool alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* A pod uid as the driver spells it: letters, digits and SEP ('-' for
 * cgroupfs, '_' for systemd), starting with a letter or digit. */
static bool uid_ok(const char *s, size_t n, char sep) {
  if (n == 0 || n >= AGENT_KP_UID_MAX || !alnum(s[0]))
    return false;
  for (size_t i = 0; i < n; i++)
    if (!alnum(s[i]) && s[i] != sep)
      return false;
  return true;
}

/* A container id: what runc accepts ([A-Za-z0-9_.+-], not starting with a
 * dot), bounded. */
static bool id_ok(const char *s, size_t n) {
  if (n == 0 || n >= AGENT_KP_ID_MAX || !alnum(s[0]))
    return false;
  for (size_t i = 0; i < n; i++)
    if (!alnum(s[i]) && s[i] != '_' && s[i] != '.' && s[i] != '-' && s[i] != '+')
      return false;
  return true;
}

static void set_uid(struct agent_kubepods_path *p, const char *s, size_t n) {
  memcpy(p->pod_uid, s, n);
  p->pod_uid[n] = '\0';
  for (size_t i = 0; i < n; i++)
    if (p->pod_uid[i] == '_')
      p->pod_uid[i] = '-';
}

static void set_id(struct agent_kubepods_path *p, const char *s, size_t n) {
  memcpy(p->id, s, n);
  p->id[n] = '\0';
}

static bool starts(const char *s, const char *prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool ends(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* cgroupfs: "pod<uid>". */
static int cgfs_pod(const char *c, struct agent_kubepods_path *p) {
  if (!starts(c, "pod") || !uid_ok(c + 3, strlen(c + 3), '-'))
    return -1;
  set_uid(p, c + 3, strlen(c + 3));
  return 0;
}

/* cgroupfs: parts after "kubepods". */
static int parse_cgroupfs(char **part, size_t n, struct agent_kubepods_path *p) {
  size_t i = 1;
  if (n == 1)
    return p->level = AGENT_KP_ROOT, 0;
  if (strcmp(part[1], "burstable") == 0 || strcmp(part[1], "besteffort") == 0) {
    snprintf(p->qos, sizeof(p->qos), "%s", part[1]);
    if (n == 2)
      return p->level = AGENT_KP_QOS, 0;
    i = 2;
  } else {
    snprintf(p->qos, sizeof(p->qos), "guaranteed");
  }
  if (cgfs_pod(part[i], p) < 0)
    return -1;
  if (n == i + 1)
    return p->level = AGENT_KP_POD, 0;
  if (n != i + 2 || !id_ok(part[i + 1], strlen(part[i + 1])))
    return -1;
  set_id(p, part[i + 1], strlen(part[i + 1]));
  return p->level = AGENT_KP_CONTAINER, 0;
}

/* systemd: "<prefix>pod<uid>.slice" with the uid's '-' as '_'. */
static int sd_pod(const char *c, const char *prefix, struct agent_kubepods_path *p) {
  if (!starts(c, prefix) || !ends(c, ".slice"))
    return -1;
  const char *u = c + strlen(prefix);
  size_t n = strlen(u) - strlen(".slice");
  if (strlen(u) < strlen(".slice") || !uid_ok(u, n, '_'))
    return -1;
  set_uid(p, u, n);
  return 0;
}

/* systemd: a container's scope, named by its runtime
 * (containerd's systemd cgroup driver: "cri-containerd"; CRI-O: "crio",
 * with its monitor in "crio-conmon-<id>.scope"; dockershim: "docker"). */
static int sd_scope(const char *c, struct agent_kubepods_path *p) {
  static const char *const prefixes[] = {"cri-containerd-", "crio-", "docker-"};
  if (!ends(c, ".scope"))
    return -1;
  if (starts(c, "crio-conmon-"))
    return p->level = AGENT_KP_OTHER, 0;
  for (size_t i = 0; i < IOB_ARRAY_SIZE(prefixes); i++) {
    if (!starts(c, prefixes[i]))
      continue;
    const char *id = c + strlen(prefixes[i]);
    size_t n = strlen(id) - strlen(".scope");
    if (strlen(id) < strlen(".scope") || !id_ok(id, n))
      return -1;
    set_id(p, id, n);
    return p->level = AGENT_KP_CONTAINER, 0;
  }
  return -1;
}

static int parse_systemd(char **part, size_t n, struct agent_kubepods_path *p) {
  char prefix[64];
  size_t i = 1;
  if (n == 1)
    return p->level = AGENT_KP_ROOT, 0;
  if (strcmp(part[1], "kubepods-burstable.slice") == 0 ||
      strcmp(part[1], "kubepods-besteffort.slice") == 0) {
    size_t q = strlen(part[1]) - strlen("kubepods-") - strlen(".slice");
    snprintf(p->qos, sizeof(p->qos), "%.*s", (int)q, part[1] + strlen("kubepods-"));
    if (n == 2)
      return p->level = AGENT_KP_QOS, 0;
    snprintf(prefix, sizeof(prefix), "kubepods-%s-pod", p->qos);
    i = 2;
  } else {
    snprintf(p->qos, sizeof(p->qos), "guaranteed");
    snprintf(prefix, sizeof(prefix), "kubepods-pod");
  }
  if (sd_pod(part[i], prefix, p) < 0)
    return -1;
  if (n == i + 1)
    return p->level = AGENT_KP_POD, 0;
  if (n != i + 2)
    return -1;
  return sd_scope(part[i + 1], p);
}

int agent_kubepods_parse(const char *rel, struct agent_kubepods_path *out) {
  char buf[1024];
  size_t len = strlen(rel);
  if (len == 0 || len >= sizeof(buf))
    return -1;
  memcpy(buf, rel, len + 1);
  char *part[MAX_PARTS];
  size_t n = 0;
  for (char *s = buf;;) {
    char *slash = strchr(s, '/');
    if (slash)
      *slash = '\0';
    if (*s == '\0' || n == MAX_PARTS) /* "a//b", a leading or trailing '/', too deep */
      return -1;
    part[n++] = s;
    if (slash == NULL)
      break;
    s = slash + 1;
  }
  struct agent_kubepods_path p;
  memset(&p, 0, sizeof(p));
  int r;
  if (strcmp(part[0], "kubepods") == 0) {
    p.driver = AGENT_KP_CGROUPFS;
    r = parse_cgroupfs(part, n, &p);
  } else if (strcmp(part[0], "kubepods.slice") == 0) {
    p.driver = AGENT_KP_SYSTEMD;
    r = parse_systemd(part, n, &p);
  } else {
    r = -1;
  }
  if (r < 0)
    return -1;
  *out = p;
  return 0;
}

void agent_kubepods_found_free(struct agent_kubepods_found *f, size_t n) {
  if (f == NULL)
    return;
  for (size_t i = 0; i < n; i++)
    free(f[i].cgroup);
  free(f);
}

void agent_kubepods_init(struct agent_kubepods *kp, const char *proc, const char *root) {
  memset(kp, 0, sizeof(*kp));
  kp->proc = xstrdup(proc ? proc : "");
  /* "/" and "" are the hierarchy's root; no trailing '/'. */
  kp->root = xstrdup(root ? root : "");
  size_t n = strlen(kp->root);
  while (n > 0 && kp->root[n - 1] == '/')
    kp->root[--n] = '\0';
  kp->ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  kp->since = AGENT_KP_RESCAN_WINDOWS; /* look for the tree at the first window */
}

static void forget_tree(struct agent_kubepods *kp) {
  free(kp->mount);
  free(kp->top);
  kp->mount = kp->top = NULL;
}

void agent_kubepods_release(struct agent_kubepods *kp) {
  forget_tree(kp);
  free(kp->proc);
  free(kp->root);
  free(kp->sandboxes);
  free(kp->starting);
  if (kp->ino_fd >= 0)
    close(kp->ino_fd);
  memset(kp, 0, sizeof(*kp));
  kp->ino_fd = -1;
}

static const char *const tops[] = {"kubepods", "kubepods.slice"};

/* Whether MOUNT has the tree (either layout, or both: a node that moved
 * from one driver to the other) under the kubelet's root: sets kp->top
 * to MOUNT + root, the directory both layouts are in. */
static bool use_mount(struct agent_kubepods *kp, const char *mount, bool v2) {
  for (size_t i = 0; i < IOB_ARRAY_SIZE(tops); i++) {
    cleanup_free char *top = xasprintf("%s%s/%s", mount, kp->root, tops[i]);
    struct stat sb;
    if (stat(top, &sb) == 0 && S_ISDIR(sb.st_mode)) {
      forget_tree(kp);
      kp->mount = xstrdup(mount);
      kp->top = xasprintf("%s%s", mount, kp->root);
      kp->v2 = v2;
      kp->dirty = true;
      return true;
    }
  }
  return false;
}

/* The hierarchy to walk: on a host with v1 hierarchies the first of
 * pids, memory, blkio and cpu that has the tree (the kubelet makes it in
 * every v1 hierarchy), else the cgroup2 mount. */
static void find_tree(struct agent_kubepods *kp) {
  static const char *const v1[] = {"pids", "memory", "blkio", "cpu"};
  struct cg2_mount m = {0};
  cleanup_error struct iob_error *err = NULL;
  bool have_v2 = cg2_mount_find(kp->proc, &m, &err) == 0;
  for (size_t i = 0; i < IOB_ARRAY_SIZE(v1) && (!have_v2 || m.hybrid); i++) {
    cleanup_free char *mnt = NULL;
    cleanup_error struct iob_error *e = NULL;
    if (cg2_v1_mount_find(kp->proc, v1[i], &mnt, &e) == 0) {
      cleanup_free char *p = cg2_join(kp->proc, mnt);
      if (use_mount(kp, p, false))
        break;
    }
  }
  if (kp->top == NULL && have_v2) {
    cleanup_free char *p = cg2_join(kp->proc, m.path);
    use_mount(kp, p, true);
  }
  cg2_mount_release(&m);
}

bool agent_kubepods_use(struct agent_kubepods *kp, const char *mount, bool v2) {
  return use_mount(kp, mount, v2);
}

/* Whether walks follow inotify events (else they are periodic). */
static bool on_events(const struct agent_kubepods *kp) {
  return kp->ino_fd >= 0 && !kp->ino_lost;
}

static void drain(struct agent_kubepods *kp) {
  char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
  for (;;) {
    ssize_t r = read(kp->ino_fd, buf, sizeof(buf));
    if (r <= 0)
      return;
    /* Any event: a pod or container came or went (or the queue
     * overflowed, IN_Q_OVERFLOW): walk. */
    kp->dirty = true;
  }
}

bool agent_kubepods_due(struct agent_kubepods *kp) {
  kp->since++;
  kp->windows++;
  if (kp->top == NULL) {
    if (kp->since < AGENT_KP_RESCAN_WINDOWS)
      return false;
    kp->since = 0;
    find_tree(kp);
    if (kp->top == NULL)
      return false;
  }
  if (kp->ino_fd >= 0 && !kp->ino_watched)
    drain(kp);
  if (!on_events(kp))
    return kp->dirty || kp->since >= AGENT_KP_RESCAN_WINDOWS;
  /* A container without a process is looked at again the next windows,
   * but not for ever: a cgroup left empty (a runtime that does not remove
   * it) waits for the next event or full walk. */
  bool again = kp->retry && kp->retries < AGENT_KP_RESCAN_WINDOWS;
  if (kp->dirty)
    kp->retries = 0;
  else if (again)
    kp->retries++;
  return kp->dirty || again || kp->since >= AGENT_KP_FULL_WINDOWS;
}

/* A directory's changes from now on mark the tree changed.  Out of
 * watches (fs.inotify.max_user_watches): periodic walks from now on. */
static void watch(struct agent_kubepods *kp, const char *dir) {
  if (!on_events(kp))
    return;
  /* The descriptor stays open: the owner's loop may be watching it. */
  if (inotify_add_watch(kp->ino_fd, dir,
                        IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ONLYDIR) < 0 &&
      errno != ENOENT)
    kp->ino_lost = true;
}

int agent_kubepods_fd(const struct agent_kubepods *kp) {
  return kp->ino_fd;
}

void agent_kubepods_events(struct agent_kubepods *kp) {
  if (kp->ino_fd >= 0)
    drain(kp);
}

/* The first pid of DIR/cgroup.procs, 0 none (empty, or gone). */
static pid_t first_pid(const char *dir) {
  cleanup_free char *path = xasprintf("%s/cgroup.procs", dir);
  cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC);
  char buf[32];
  if (fd < 0)
    return 0;
  ssize_t r = read(fd, buf, sizeof(buf) - 1);
  if (r <= 0)
    return 0;
  buf[r] = '\0';
  char *end = NULL;
  long v = strtol(buf, &end, 10);
  return end != buf && (*end == '\n' || *end == '\0') && v > 0 ? (pid_t)v : 0;
}

enum { PROC_CONTAINER = 0, PROC_PAUSE, PROC_STARTING, PROC_GONE };

/* The runtimes' own names for a container's first process before it
 * exec's the container's: runc's (libcontainer/nsenter/nsexec.c names its
 * stages) and crun's (it does not rename its child). */
static const char *const init_comms[] = {"runc", "runc:[0:PARENT]", "runc:[1:CHILD]",
                                         "runc:[2:INIT]", "crun"};

/* What PID's comm says: "pause" (a sandbox's, if the CRI agrees), the
 * runtime's init (starting), or the container's own process.  Only ever a
 * hint: the tenant names its processes. */
static int proc_kind(const struct agent_kubepods *kp, pid_t pid) {
  cleanup_free char *path = xasprintf("%s/proc/%d/comm", kp->proc, (int)pid);
  cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC);
  char buf[32];
  if (fd < 0)
    return PROC_GONE; /* exited meanwhile: the next walk sees */
  ssize_t r = read(fd, buf, sizeof(buf) - 1);
  if (r <= 0)
    return PROC_GONE;
  buf[r] = '\0';
  buf[strcspn(buf, "\n")] = '\0';
  if (strcmp(buf, "pause") == 0)
    return PROC_PAUSE;
  for (size_t i = 0; i < IOB_ARRAY_SIZE(init_comms); i++)
    if (strcmp(buf, init_comms[i]) == 0)
      return PROC_STARTING;
  return PROC_CONTAINER;
}

static enum agent_kubepods_cri cri_kind(const struct agent_kubepods *kp, const char *id) {
  return kp->cri_kind ? kp->cri_kind(id, kp->cri_user) : AGENT_KP_CRI_DOWN;
}

static bool known_sandbox(const struct agent_kubepods *kp, const char *id) {
  for (size_t i = 0; i < kp->n_sandboxes; i++)
    if (strcmp(kp->sandboxes[i], id) == 0)
      return true;
  return false;
}

struct walk {
  struct agent_kubepods *kp;
  size_t max;
  bool (*known)(const char *id, void *user);
  void *user;
  struct agent_kubepods_found *found;
  size_t n, cap;
  char (*sandboxes)[AGENT_KP_ID_MAX]; /* those seen in this walk */
  size_t n_sandboxes;
  struct agent_kubepods_starting *starting; /* those not taken yet in this walk */
  size_t n_starting;
  uint64_t dirs;
};

/* Whether ID may wait another window before it is taken as a container
 * (first seen waiting less than AGENT_KP_STARTING_WINDOWS ago). */
static bool may_wait(struct walk *w, const char *id) {
  const struct agent_kubepods *kp = w->kp;
  uint64_t since = kp->windows;
  for (size_t i = 0; i < kp->n_starting; i++)
    if (strcmp(kp->starting[i].id, id) == 0) {
      since = kp->starting[i].since;
      break;
    }
  if (kp->windows - since >= AGENT_KP_STARTING_WINDOWS || w->n_starting >= AGENT_KP_STARTING_MAX)
    return false;
  w->starting = xrealloc(w->starting, (w->n_starting + 1) * sizeof(w->starting[0]));
  struct agent_kubepods_starting *e = &w->starting[w->n_starting++];
  snprintf(e->id, sizeof(e->id), "%s", id);
  e->since = since;
  w->kp->retry = true;
  return true;
}

static void add_sandbox(struct walk *w, const char *id) {
  w->sandboxes = xrealloc(w->sandboxes, (w->n_sandboxes + 1) * sizeof(w->sandboxes[0]));
  snprintf(w->sandboxes[w->n_sandboxes++], AGENT_KP_ID_MAX, "%s", id);
}

static void container(struct walk *w, const char *dir, const char *rel,
                      const struct agent_kubepods_path *p) {
  /* The CRI's word first, even for an id known already (taken as a
   * container while the CRI had not listed it: leaving the walk's list
   * removes it). */
  enum agent_kubepods_cri cri = cri_kind(w->kp, p->id);
  if (known_sandbox(w->kp, p->id) || cri == AGENT_KP_CRI_SANDBOX) {
    add_sandbox(w, p->id);
    return;
  }
  /* Known already: listed, nothing read (pid 0). */
  bool known = w->known && w->known(p->id, w->user);
  pid_t pid = known ? 0 : first_pid(dir);
  if (pid == 0 && !known) {
    w->kp->retry = true; /* created, its process not in yet: look again next window */
    return;
  }
  int kind = pid ? proc_kind(w->kp, pid) : PROC_CONTAINER;
  if (kind == PROC_GONE) {
    w->kp->retry = true;
    return;
  }
  /* "pause" the CRI has not listed (yet): a sandbox made since the last
   * poll, or a tenant's process of that name; the CRI tells within the
   * bound.  A listed container is a container whatever it is called. */
  bool wait = kind == PROC_STARTING || (kind == PROC_PAUSE && cri != AGENT_KP_CRI_CONTAINER);
  if (wait && may_wait(w, p->id))
    return;
  if (w->n == w->max)
    return;
  if (w->n == w->cap) {
    w->cap = w->cap ? 2 * w->cap : 16;
    w->found = xrealloc(w->found, w->cap * sizeof(w->found[0]));
  }
  struct agent_kubepods_found *f = &w->found[w->n++];
  memset(f, 0, sizeof(*f));
  snprintf(f->id, sizeof(f->id), "%s", p->id);
  snprintf(f->qos, sizeof(f->qos), "%s", p->qos);
  snprintf(f->pod_uid, sizeof(f->pod_uid), "%s", p->pod_uid);
  f->pid = pid;
  f->cgroup = xasprintf("%s/%s", w->kp->root, rel);
}

/* DIR (REL under the kubelet's root) and below: the tree's levels. */
static int walk_dir(struct walk *w, const char *dir, const char *rel, struct iob_error **err) {
  watch(w->kp, dir); /* before reading: what comes after is an event */
  DIR *d = opendir(dir);
  if (d == NULL) {
    if (errno == ENOENT) /* went away under us: its rmdir is an event */
      return 0;
    return iob_error(err, errno, "cannot read '%s'", dir);
  }
  w->dirs++;
  int r = 0;
  for (struct dirent *e; r == 0 && (e = readdir(d)) != NULL;) {
    if (e->d_type != DT_DIR || e->d_name[0] == '.')
      continue;
    cleanup_free char *sub = xasprintf("%s/%s", dir, e->d_name);
    cleanup_free char *subrel = xasprintf("%s/%s", rel, e->d_name);
    struct agent_kubepods_path p;
    if (agent_kubepods_parse(subrel, &p) < 0)
      continue; /* not part of the layout (the kubelet's own cgroups, a typo) */
    if (p.level == AGENT_KP_QOS || p.level == AGENT_KP_POD)
      r = walk_dir(w, sub, subrel, err);
    else if (p.level == AGENT_KP_CONTAINER)
      container(w, sub, subrel, &p);
  }
  closedir(d);
  return r;
}

static uint64_t now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

int agent_kubepods_walk(struct agent_kubepods *kp, size_t max,
                        bool (*known)(const char *id, void *user), void *user,
                        struct agent_kubepods_found **out, size_t *n, struct iob_error **err) {
  *out = NULL;
  *n = 0;
  if (kp->top == NULL)
    return 0;
  uint64_t t0 = now_us();
  kp->dirty = kp->retry = false;
  kp->since = 0;
  struct walk w = {.kp = kp, .max = max, .known = known, .user = user};
  bool any = false;
  kp->systemd = false;
  for (size_t i = 0; i < IOB_ARRAY_SIZE(tops); i++) {
    cleanup_free char *dir = xasprintf("%s/%s", kp->top, tops[i]);
    struct stat sb;
    if (stat(dir, &sb) < 0)
      continue;
    any = true;
    kp->systemd |= i == 1;
    if (walk_dir(&w, dir, tops[i], err) < 0) {
      agent_kubepods_found_free(w.found, w.n);
      free(w.sandboxes);
      free(w.starting);
      return -1;
    }
  }
  if (!any)
    forget_tree(kp); /* the kubelet's tree is gone: look for it again */
  free(kp->sandboxes);
  kp->sandboxes = w.sandboxes;
  kp->n_sandboxes = w.n_sandboxes;
  free(kp->starting);
  kp->starting = w.starting;
  kp->n_starting = w.n_starting;
  kp->walks++;
  kp->last_walk_us = now_us() - t0;
  kp->last_dirs = w.dirs;
  kp->last_found = w.n;
  *out = w.found;
  *n = w.n;
  return 0;
}

char *agent_kubepods_describe(const struct agent_kubepods *kp) {
  if (kp->top == NULL)
    return xasprintf("no kubelet cgroup tree under '%s/' (looked for every %d windows)",
                     *kp->root ? kp->root : "", AGENT_KP_RESCAN_WINDOWS);
  char cri[200] = "";
  if (cri_kind(kp, NULL) == AGENT_KP_CRI_DOWN)
    snprintf(cri, sizeof(cri),
             "; no CRI reachable: pod sandboxes are not told apart (a process called 'pause' "
             "waits %d windows, then counts as a container)",
             AGENT_KP_STARTING_WINDOWS);
  return xasprintf(
      "%s tree '%s/kubepods%s' (%s): %llu containers, %zu sandboxes, %zu starting; %llu walks "
      "(%s), the last over %llu directories in %.2f ms%s",
      kp->systemd ? "systemd" : "cgroupfs", kp->top, kp->systemd ? ".slice" : "",
      kp->v2 ? "cgroup v2" : "cgroup v1", (unsigned long long)kp->last_found, kp->n_sandboxes,
      kp->n_starting, (unsigned long long)kp->walks,
      on_events(kp) ? "on inotify events" : "periodic", (unsigned long long)kp->last_dirs,
      (double)kp->last_walk_us / 1000.0, cri);
}
