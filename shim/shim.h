// SPDX-License-Identifier: Apache-2.0
/* containerd-shim-iobatch-v2: the names and paths every part of the shim
 * shares.  Each file's interface is in its own header (process.h,
 * service.h, runc.h, io.h, ...).  Facts about the protocol:
 * docs/reference/shim-v2.md. */
#ifndef SHIM_SHIM_H
#define SHIM_SHIM_H

#include <stdint.h>
#include <time.h>

#define SHIM_NAME "containerd-shim-iobatch-v2"
#define SHIM_RUNTIME_NAME "io.containerd.iobatch.v2"
#define SHIM_DEFAULT_RUNC_ROOT "/run/containerd/runc"
#define SHIM_SOCKET_DIR "/run/containerd/s"

/* Wall-clock time as containerd's Timestamps carry it. */
struct shim_time {
  int64_t sec;
  int32_t nsec;
};

static inline struct shim_time shim_time_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (struct shim_time){ts.tv_sec, (int32_t)ts.tv_nsec};
}

#endif
