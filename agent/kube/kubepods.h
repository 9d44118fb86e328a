// SPDX-License-Identifier: Apache-2.0
/* Every container under the kubelet's cgroup tree, whatever
 * runtime started it.  The two layouts of the kubelet's cgroup drivers
 * (pkg/kubelet/cm/cgroup_manager_linux.go, qos_container_manager_linux.go):
 *
 *   cgroupfs: kubepods/pod<uid>/<id>                      Guaranteed
 *             kubepods/{burstable,besteffort}/pod<uid>/<id>
 *   systemd:  kubepods.slice/kubepods-pod<uid>.slice/<scope>          Guaranteed
 *             kubepods.slice/kubepods-<qos>.slice/kubepods-<qos>-pod<uid>.slice/<scope>
 *             <scope>: cri-containerd-<id>.scope, crio-<id>.scope, docker-<id>.scope;
 *             the uid's '-' are '_' there (systemd's slice separator is '-')
 *
 * under the kubelet's --cgroup-root ("/" by default) of every hierarchy:
 * the cgroup2 mount on a v2 host, each v1 hierarchy on a v1 or hybrid one
 * (this walks pids, else memory, blkio, cpu; the sampler then finds each
 * container's own blkio and v2 cgroups from its pid, agent/sample/sampler.c).
 *
 * Rescans: inotify on the tree's top, QoS and pod directories (cgroupfs
 * reports mkdir and rmdir as IN_CREATE / IN_DELETE, though it keeps no
 * directory mtime) marks the tree changed, and a window walks it only
 * then, when a container found last time had no process yet (for at most
 * AGENT_KP_RESCAN_WINDOWS windows after an event), and every
 * AGENT_KP_FULL_WINDOWS windows; without inotify (no watch left), every
 * AGENT_KP_RESCAN_WINDOWS windows.  A walk reads directories only, and
 * two small files (cgroup.procs, /proc/PID/comm) of a container not seen
 * before.  No file-level state: all of it is in struct agent_kubepods.
 *
 * Pod sandboxes are told by the node's CRI (its ListPodSandbox ids,
 * agent/kube/podmeta.h), never by what their process is called: a tenant names
 * its processes.  An id the CRI has not listed (not polled since it was
 * made, or no CRI reachable) whose process is called "pause" waits, as a
 * container still starting does, at most AGENT_KP_STARTING_WINDOWS
 * windows; then it is a container.  Starting means the runtime's init
 * has not exec'd the container's process yet: comm exactly runc's
 * ("runc", "runc:[0:PARENT]", "runc:[1:CHILD]", "runc:[2:INIT]") or
 * crun's ("crun"), within the same bound. */
#ifndef IOB_AGENT_KUBEPODS_H
#define IOB_AGENT_KUBEPODS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"

#define AGENT_KP_UID_MAX 65 /* a UUID (36) or a static pod's hash (32), with room */
#define AGENT_KP_ID_MAX 129 /* a CRI id is 64 hex digits */
#define AGENT_KP_RESCAN_WINDOWS 5
#define AGENT_KP_FULL_WINDOWS 60
#define AGENT_KP_STARTING_WINDOWS 30 /* beyond a cri_poll of 10 s at 250 ms windows */
#define AGENT_KP_STARTING_MAX 4096   /* ids remembered as starting */

/* What the node's CRI says an id is (agent_kubepods.cri_kind). */
enum agent_kubepods_cri {
  AGENT_KP_CRI_DOWN = 0,  /* no listing: no CRI reachable, or not polled yet */
  AGENT_KP_CRI_UNLISTED,  /* the last listing does not have it */
  AGENT_KP_CRI_SANDBOX,   /* a pod sandbox (ListPodSandbox) */
  AGENT_KP_CRI_CONTAINER, /* a container (ListContainers) */
};

enum agent_kubepods_level {
  AGENT_KP_ROOT = 0,  /* kubepods, kubepods.slice */
  AGENT_KP_QOS,       /* the burstable or besteffort level */
  AGENT_KP_POD,       /* a pod */
  AGENT_KP_CONTAINER, /* a container of a pod */
  AGENT_KP_OTHER,     /* something else in a pod (crio-conmon-<id>.scope): not a container */
};

enum agent_kubepods_driver {
  AGENT_KP_CGROUPFS = 0,
  AGENT_KP_SYSTEMD,
};

struct agent_kubepods_path {
  enum agent_kubepods_level level;
  enum agent_kubepods_driver driver;
  char qos[12];                   /* "guaranteed", "burstable", "besteffort"; "" at the root */
  char pod_uid[AGENT_KP_UID_MAX]; /* with '-' (systemd's '_' turned back) */
  char id[AGENT_KP_ID_MAX];
};

/* What REL ("kubepods/burstable/pod<uid>/<id>", relative to the kubelet's
 * cgroup root, no leading '/') is.  Returns < 0 when it is no part of
 * either layout. */
int agent_kubepods_parse(const char *rel, struct agent_kubepods_path *out);

/* A container found by a walk. */
struct agent_kubepods_found {
  char id[AGENT_KP_ID_MAX];
  char qos[12];
  char pod_uid[AGENT_KP_UID_MAX];
  pid_t pid;    /* one of its processes */
  char *cgroup; /* its path in the walked hierarchy ("/kubepods/..."); malloc'd */
};
void agent_kubepods_found_free(struct agent_kubepods_found *f, size_t n);

struct agent_kubepods {
  char *proc;       /* prefix of /proc and the mounts (tests); "" the real system */
  char *root;       /* the kubelet's --cgroup-root, "" for "/" */
  char *mount;      /* the hierarchy walked, NULL: no tree found yet */
  char *top;        /* mount + root: where kubepods/ and kubepods.slice/ are */
  bool v2;          /* mount is the cgroup2 one: found paths are v2 cgroups */
  bool systemd;     /* the last walk found kubepods.slice/ */
  int ino_fd;       /* -1: no inotify (periodic walks) */
  bool ino_lost;    /* out of inotify watches: periodic walks (ino_fd stays open) */
  bool ino_watched; /* the owner reads ino_fd's events (agent_kubepods_events) */
  bool dirty;       /* the tree changed since the last walk */
  bool retry;       /* the last walk found a container without a process yet */
  unsigned retries; /* walks for that alone since the last event */
  unsigned since;   /* windows since the last walk (or since the tree was looked for) */
  /* Pod sandboxes (by the CRI) seen: not containers to sample, and not
   * looked at again while they are there. */
  char (*sandboxes)[AGENT_KP_ID_MAX];
  size_t n_sandboxes;
  /* Ids not taken yet (starting, or "pause" the CRI has not listed) and
   * the window each was first seen in. */
  struct agent_kubepods_starting {
    char id[AGENT_KP_ID_MAX];
    uint64_t since;
  } * starting;
  size_t n_starting;
  uint64_t windows; /* agent_kubepods_due calls */
  /* What the CRI says of an id (NULL: whether there is a listing at all,
   * AGENT_KP_CRI_DOWN or not);
   * cri_kind NULL: no CRI, every id DOWN. */
  enum agent_kubepods_cri (*cri_kind)(const char *id, void *user);
  void *cri_user;
  /* For status: what walks cost. */
  uint64_t walks, last_walk_us, last_dirs, last_found;
};

/* Where to look: ROOT the kubelet's --cgroup-root (NULL: "/"), PROC a
 * prefix of /proc and the mounts (NULL: none).  Never fails: the tree is
 * looked for at each agent_kubepods_due until it exists. */
void agent_kubepods_init(struct agent_kubepods *kp, const char *proc, const char *root);
void agent_kubepods_release(struct agent_kubepods *kp);
/* Once per sampling window: whether the tree is there and a walk is due
 * (inotify events drained unless ino_watched, counters advanced). */
bool agent_kubepods_due(struct agent_kubepods *kp);
/* The inotify descriptor (-1: none), for an owner that sleeps until the
 * tree changes rather than reading it each window: it sets ino_watched
 * and calls agent_kubepods_events when the descriptor is readable (the
 * events mark the tree changed; the walk is still the next window's). */
int agent_kubepods_fd(const struct agent_kubepods *kp);
void agent_kubepods_events(struct agent_kubepods *kp);
/* Every container of the tree with a process, sandboxes left out; one
 * for which KNOWN(id) (may be NULL) says true is listed without reading
 * anything of it (pid 0).  *OUT is malloc'd (agent_kubepods_found_free).  At
 * most MAX are returned. */
int agent_kubepods_walk(struct agent_kubepods *kp, size_t max,
                        bool (*known)(const char *id, void *user), void *user,
                        struct agent_kubepods_found **out, size_t *n, struct iob_error **err);
/* Walk MOUNT (a hierarchy, or a fixture tree) if it has the tree under
 * the kubelet's root; V2: its paths are cgroup2 paths.  The agent finds
 * its hierarchy itself (agent_kubepods_due); tests name one. */
bool agent_kubepods_use(struct agent_kubepods *kp, const char *mount, bool v2);
/* "cgroupfs tree '/sys/fs/cgroup/pids/kubepods', inotify: 3 walks, last
 * 0.2 ms over 7 directories" (or why none), for status. */
char *agent_kubepods_describe(const struct agent_kubepods *kp);

#endif
