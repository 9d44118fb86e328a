// SPDX-License-Identifier: Apache-2.0
/* iobatchd's file descriptors: how many it may need, the soft limit raised
 * to fit at start, and how many are open now (status, metrics). */
#ifndef IOB_AGENT_FDLIMIT_H
#define IOB_AGENT_FDLIMIT_H

#include <stdbool.h>
#include <stdint.h>

#include "agent/plan/admission.h"
#include "common/error.h"

/* Each container holds a pidfd (agent/serve/pidwatch.c) and its shim a
 * connection (agent/serve/server.c); the spare covers the listeners, the
 * metrics server and its clients, inotify, BPF maps, the state files and
 * the cgroup files open for a moment while a window is sampled or a cap
 * written.  packaging/systemd/iobatchd.service sets LimitNOFILE= above it. */
#define AGENT_FDS_PER_CTR 2
#define AGENT_FDS_SPARE 256
#define AGENT_FDS_NEEDED (AGENT_MAX_CONTAINERS * AGENT_FDS_PER_CTR + AGENT_FDS_SPARE)

struct agent_fdlimit {
  uint64_t soft, hard; /* RLIMIT_NOFILE after agent_fdlimit_raise */
  uint64_t was;        /* the soft limit it found */
  bool short_;         /* hard < AGENT_FDS_NEEDED: accepts may fail near the maximum */
};

/* Raise the soft RLIMIT_NOFILE to the hard one.  The soft default (1024)
 * is kept low for programs that use select(2), whose fd_set holds no fd
 * above 1023; the agent waits with epoll only, and nothing it starts
 * inherits the raised limit (it starts nothing). */
int agent_fdlimit_raise(struct agent_fdlimit *out, struct iob_error **err);

/* File descriptors open in this process now (entries of /proc/self/fd,
 * less the one reading it). */
int agent_fdlimit_count(uint64_t *n, struct iob_error **err);

/* What status and the metrics show: the fds open now and the soft
 * RLIMIT_NOFILE; both 0 when either cannot be read. */
void agent_fdlimit_usage(uint64_t *open, uint64_t *limit);

#endif
