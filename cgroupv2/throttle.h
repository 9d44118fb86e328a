// SPDX-License-Identifier: Apache-2.0
/* Per-device bandwidth / IOPS caps on a container's cgroup: cgroup v2
 * io.max, or cgroup v1 blkio.throttle.* on hybrid and v1 hosts (where the
 * cgroup2 mount has no io controller).
 *
 *   v2: CGDIR/io.max          "MAJ:MIN rbps=N wbps=N riops=N wiops=N" ("max": none)
 *   v1: CGDIR/blkio.throttle.{read,write}_{bps,iops}_device   "MAJ:MIN N" (0: none)
 *
 * Caps work on whole disks (a partition is mapped to its disk; the kernel
 * refuses partitions).  A cap of 0 in this API means "no cap" for that key,
 * as in v1.  In v1 a cap holds direct I/O and reads but not buffered
 * writeback (the flusher runs in the root cgroup); io.max with v2's
 * writeback accounting holds both.
 *
 * Typical use (the agent's protection logic):
 *
 *   struct cg2_throttle_target t;
 *   if (cg2_throttle_target_resolve(NULL, pid, bundle, &t, &err) == 0 &&
 *       t.mech != CG2_THROTTLE_NONE) {
 *     cg2_throttle_set(&t, 0, 50 << 20, 0, 0, &err);  // 50 MiB/s of writes
 *     ...
 *     cg2_throttle_clear(&t, &err);
 *   }
 *   cg2_throttle_target_release(&t);
 */
#ifndef IOB_CG_THROTTLE_H
#define IOB_CG_THROTTLE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"

#define CG2_THROTTLE_MAX_DEVS 16 /* disks one target caps */

enum cg2_throttle_mech {
  CG2_THROTTLE_NONE = 0,     /* nothing can cap this container here */
  CG2_THROTTLE_V2_IOMAX = 1, /* io.max in its cgroup v2 directory */
  CG2_THROTTLE_V1_BLKIO = 2, /* blkio.throttle.* in its cgroup v1 blkio directory */
};

struct cg2_throttle_dev {
  unsigned major, minor; /* a whole disk */
};

struct cg2_throttle_target {
  enum cg2_throttle_mech mech;
  char *cgdir; /* the directory holding the files (with the root prefix), owned */
  size_t ndev;
  struct cg2_throttle_dev dev[CG2_THROTTLE_MAX_DEVS];
};

/* Which mechanism can cap the container of PID here, and in which
 * directory (*cgdir, malloc'd; NULL with CG2_THROTTLE_NONE):
 *  - V2_IOMAX when the cgroup2 mount offers "io", PID's v2 cgroup is not the
 *    root and has an io.max file;
 *  - else V1_BLKIO when a v1 blkio hierarchy is mounted, PID's blkio cgroup
 *    is not its root and has blkio.throttle.write_bps_device;
 *  - else NONE (returns 0: not an error).
 * Never the root of either hierarchy: a cap there would hold every process.
 * ROOT prefixes /proc and the mounts (NULL on a real system). */
int cg2_throttle_mechanism(const char *root, pid_t pid, enum cg2_throttle_mech *mech, char **cgdir,
                           struct iob_error **err);

/* Fill T for the container of PID: the mechanism and directory as above,
 * and the whole disks its I/O goes to: the disk under its root filesystem
 * (ROOT/proc/PID/root, or the upperdir of an overlay root), the disk under
 * BUNDLE/rootfs when BUNDLE is not NULL, and every disk with non-zero
 * counters in its io.stat / blkio.throttle.io_service_bytes.  T is
 * released by the caller even on error. */
int cg2_throttle_target_resolve(const char *root, pid_t pid, const char *bundle,
                                struct cg2_throttle_target *t, struct iob_error **err);
/* Add a whole disk (MAJ:MIN of a partition is mapped to its disk through
 * ROOT/sys/dev/block) unless T has it already. */
int cg2_throttle_target_add_dev(const char *root, struct cg2_throttle_target *t, unsigned major,
                                unsigned minor, struct iob_error **err);
void cg2_throttle_target_release(struct cg2_throttle_target *t);

/* Cap every disk of T: bytes/s and IOs/s per direction, 0 = no cap for
 * that key.  Each disk's caps are replaced as a whole (a key given as 0
 * clears a cap set earlier).  Errors name the file and carry errno. */
int cg2_throttle_set(const struct cg2_throttle_target *t, uint64_t rbps, uint64_t wbps,
                     uint64_t riops, uint64_t wiops, struct iob_error **err);
/* Remove every cap of T's disks. */
int cg2_throttle_clear(const struct cg2_throttle_target *t, struct iob_error **err);

struct cg2_throttle_limits {
  uint64_t rbps, wbps, riops, wiops; /* 0: no cap */
};
/* The caps in force on MAJ:MIN (a whole disk) of T's cgroup, read back from
 * its files. */
int cg2_throttle_get(const struct cg2_throttle_target *t, unsigned major, unsigned minor,
                     struct cg2_throttle_limits *out, struct iob_error **err);

/* Parsers of the kernel's files, for tests and fuzzing: the line of
 * MAJ:MIN in io.max text, or in one blkio.throttle.*_device text (its value
 * into *v).  A device without a line has no cap (all 0); a malformed line
 * is an error. */
int cg2_throttle_parse_iomax(const char *buf, size_t len, unsigned major, unsigned minor,
                             struct cg2_throttle_limits *out, struct iob_error **err);
int cg2_throttle_parse_v1(const char *buf, size_t len, unsigned major, unsigned minor, uint64_t *v,
                          struct iob_error **err);

const char *cg2_throttle_mech_name(enum cg2_throttle_mech mech);

#endif
