// SPDX-License-Identifier: Apache-2.0
#include "cgroupv2/cg2.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/xalloc.h"

/* mountinfo escapes space, tab, newline and backslash as \ooo (see
 * show_mountinfo -> seq_path_root with " \t\n\\"). */
static void unescape_octal(char *s) {
  char *w = s;
  for (char *r = s; *r;) {
    if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' && r[3] >= '0' &&
        r[3] <= '7') {
      *w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
      r += 4;
    } else {
      *w++ = *r++;
    }
  }
  *w = '\0';
}

static int mount_rank(const char *mnt) {
  if (strcmp(mnt, "/sys/fs/cgroup") == 0)
    return 3;
  if (strcmp(mnt, "/sys/fs/cgroup/unified") == 0)
    return 2;
  return 1;
}

static int has_token(const char *list, const char *tok) {
  size_t tl = strlen(tok);
  for (const char *p = list; *p;) {
    while (*p == ' ' || *p == '\n')
      p++;
    size_t n = strcspn(p, " \n");
    if (n == tl && memcmp(p, tok, tl) == 0)
      return 1;
    p += n;
  }
  return 0;
}

int cg2_mount_find(const char *root, struct cg2_mount *out, struct iob_error **err) {
  cleanup_free char *path = cg2_join(root, "/proc/self/mountinfo");
  cleanup_free char *buf = NULL;
  if (cg2_read_file(path, CG2_FILE_MAX, &buf, NULL, err) < 0)
    return -1;
  cleanup_free char *best = NULL;
  int best_rank = 0, v1 = 0;
  char *save = NULL;
  for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    /* id parent maj:min root mountpoint opts [optional...] - fstype source superopts */
    char *f[5] = {0};
    char *sp = NULL, *tok = strtok_r(line, " ", &sp);
    int i = 0;
    for (; tok && i < 5; i++, tok = strtok_r(NULL, " ", &sp))
      f[i] = tok;
    if (i < 5)
      continue;
    while (tok && strcmp(tok, "-") != 0)
      tok = strtok_r(NULL, " ", &sp);
    char *fstype = tok ? strtok_r(NULL, " ", &sp) : NULL;
    if (fstype == NULL)
      continue;
    if (strcmp(fstype, "cgroup") == 0)
      v1 = 1;
    /* A cgroup2 mount of a subtree (mount root not "/", as inside a
     * container with cgroupns) cannot name other cgroups by their full path. */
    if (strcmp(fstype, "cgroup2") != 0 || strcmp(f[3], "/") != 0)
      continue;
    unescape_octal(f[4]);
    int r = mount_rank(f[4]);
    if (r > best_rank) {
      free(best);
      best = xstrdup(f[4]);
      best_rank = r;
    }
  }
  if (best == NULL)
    return iob_error_code(err, IOB_CODE_NOT_FOUND, "no cgroup2 mount in '%s'", path);
  cleanup_free char *ctl_rel = xasprintf("%s/cgroup.controllers", best);
  cleanup_free char *ctl_path = cg2_join(root, ctl_rel);
  cleanup_free char *ctl = NULL;
  cleanup_error struct iob_error *ignored = NULL;
  /* Without a readable cgroup.controllers we cannot claim io is there. */
  int read = cg2_read_file(ctl_path, CG2_FILE_MAX, &ctl, NULL, &ignored) == 0;
  out->has_io = read && has_token(ctl, "io");
  out->has_memory = read && has_token(ctl, "memory");
  out->hybrid = v1;
  out->path = steal_ptr(&best);
  return 0;
}

int cg2_v1_mount_find(const char *root, const char *controller, char **out,
                      struct iob_error **err) {
  cleanup_free char *path = cg2_join(root, "/proc/self/mountinfo");
  cleanup_free char *buf = NULL;
  if (cg2_read_file(path, CG2_FILE_MAX, &buf, NULL, err) < 0)
    return -1;
  char *save = NULL;
  for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    char *f[5] = {0};
    char *sp = NULL, *tok = strtok_r(line, " ", &sp);
    int i = 0;
    for (; tok && i < 5; i++, tok = strtok_r(NULL, " ", &sp))
      f[i] = tok;
    if (i < 5)
      continue;
    while (tok && strcmp(tok, "-") != 0)
      tok = strtok_r(NULL, " ", &sp);
    char *fstype = tok ? strtok_r(NULL, " ", &sp) : NULL;
    char *source = fstype ? strtok_r(NULL, " ", &sp) : NULL;
    char *opts = source ? strtok_r(NULL, " ", &sp) : NULL;
    if (opts == NULL || strcmp(fstype, "cgroup") != 0 || strcmp(f[3], "/") != 0)
      continue;
    char *s2 = NULL;
    for (char *o = strtok_r(opts, ",", &s2); o; o = strtok_r(NULL, ",", &s2)) {
      if (strcmp(o, controller) == 0) {
        unescape_octal(f[4]);
        *out = xstrdup(f[4]);
        return 0;
      }
    }
  }
  return iob_error_code(err, IOB_CODE_NOT_FOUND, "no cgroup v1 mount with '%s' in '%s'", controller,
                        path);
}

void cg2_mount_release(struct cg2_mount *m) {
  free(m->path);
  m->path = NULL;
}

static int path_is_clean(const char *p) {
  if (p[0] != '/')
    return 0;
  for (const char *c = p; (c = strstr(c, "..")) != NULL; c += 2) {
    int start = c == p || c[-1] == '/';
    int end = c[2] == '\0' || c[2] == '/';
    if (start && end)
      return 0;
  }
  return 1;
}

/* Find the line of /proc/PID/cgroup whose hierarchy matches: v2 ("0::") when
 * controller is NULL, else the v1 line listing controller. */
static int pid_cgroup(const char *root, pid_t pid, const char *controller, char **out,
                      struct iob_error **err) {
  if (pid <= 0)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid pid %d", (int)pid);
  char rel[64];
  snprintf(rel, sizeof(rel), "/proc/%d/cgroup", (int)pid);
  cleanup_free char *path = cg2_join(root, rel);
  cleanup_free char *buf = NULL;
  if (cg2_read_file(path, CG2_FILE_MAX, &buf, NULL, err) < 0)
    return -1;
  char *save = NULL;
  for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    char *c1 = strchr(line, ':');
    char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (c2 == NULL)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "malformed line in '%s'", path);
    *c1 = *c2 = '\0';
    int match;
    if (controller == NULL) {
      match = strcmp(line, "0") == 0 && c1[1] == '\0';
    } else {
      match = 0;
      char *s2 = NULL;
      for (char *t = strtok_r(c1 + 1, ",", &s2); t; t = strtok_r(NULL, ",", &s2))
        match |= strcmp(t, controller) == 0;
    }
    if (!match)
      continue;
    const char *cg = c2 + 1;
    if (!path_is_clean(cg))
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "refusing cgroup path '%s' from '%s'",
                            cg, path);
    *out = xstrdup(cg);
    return 0;
  }
  return iob_error_code(err, IOB_CODE_NOT_FOUND, "no %s%s cgroup in '%s'",
                        controller ? "v1 " : "v2", controller ? controller : "", path);
}

int cg2_pid_cgroup(const char *root, pid_t pid, char **out, struct iob_error **err) {
  return pid_cgroup(root, pid, NULL, out, err);
}

int cg2_pid_cgroup_v1(const char *root, pid_t pid, const char *controller, char **out,
                      struct iob_error **err) {
  return pid_cgroup(root, pid, controller, out, err);
}

int cg2_procs_read(const char *cgdir, pid_t **pids, size_t *n, struct iob_error **err) {
  cleanup_free char *path = xasprintf("%s/cgroup.procs", cgdir);
  cleanup_free char *buf = NULL;
  size_t len = 0;
  if (cg2_read_file(path, CG2_FILE_MAX, &buf, &len, err) < 0)
    return -1;
  size_t cap = 0, cnt = 0;
  cleanup_free pid_t *v = NULL;
  for (const char *p = buf; p < buf + len;) {
    size_t l = strcspn(p, "\n");
    uint64_t x;
    if (l > 0) {
      if (cg2_parse_u64(p, l, &x) < 0 || x == 0 || x > INT_MAX)
        return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid pid '%.*s' in '%s'",
                              (int)(l > 32 ? 32 : l), p, path);
      if (cnt == CG2_PROCS_MAX)
        return iob_error_code(err, IOB_CODE_RESOURCE_EXHAUSTED, "more than %d pids in '%s'",
                              CG2_PROCS_MAX, path);
      if (cnt == cap) {
        cap = cap ? cap * 2 : 16;
        v = xrealloc(v, cap * sizeof(*v));
      }
      v[cnt++] = (pid_t)x;
    }
    p += l + 1;
  }
  *pids = steal_ptr(&v);
  *n = cnt;
  return 0;
}
