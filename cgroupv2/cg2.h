// SPDX-License-Identifier: Apache-2.0
/* libcg2 (cgroupv2/): cgroup v2 first, and v1 and hybrid hosts too (v1
 * blkio, throttle, cpu and freezer files beside v2's); every name is cg2_.
 *
 * This header: where the hierarchy is mounted, which cgroup a pid is in, which
 * pids a cgroup holds.
 *
 * Every reader takes a `root` prefix that is put in front of the absolute
 * system paths it opens (/proc/..., /sys/...); NULL or "" means the real
 * system.  Unit tests point it at a fixture tree.  Functions that read a
 * cgroup's own files take the cgroup directory itself, which already carries
 * any prefix. */
#ifndef IOB_CG2_H
#define IOB_CG2_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"

/* Bounds on what is read from the kernel (or a fixture pretending to be it). */
#define CG2_FILE_MAX (1024 * 1024) /* any single cgroup/proc file */
#define CG2_PROCS_MAX 65536        /* pids listed from one cgroup.procs */

struct cg2_mount {
  char *path; /* mount point as the caller's mount namespace sees it */
  int hybrid; /* 1 when cgroup v1 hierarchies are mounted as well */
  int has_io; /* 1 when "io" is in the root's cgroup.controllers */
  /* 1 when "memory" is too: with both, the kernel charges buffered
   * writeback to the cgroup that dirtied the pages (cgroup writeback),
   * not to the root as under v1. */
  int has_memory;
};

/* Find the cgroup2 mount in ROOT/proc/self/mountinfo.  On a hybrid host the
 * cgroup2 mount is /sys/fs/cgroup/unified next to the v1 hierarchies.
 * ENOENT-coded error when there is none. */
int cg2_mount_find(const char *root, struct cg2_mount *out, struct iob_error **err);
void cg2_mount_release(struct cg2_mount *m);

/* The v2 cgroup of PID ("0::/a/b" line of ROOT/proc/PID/cgroup), returned as
 * "/a/b".  Paths with ".." components are refused. */
int cg2_pid_cgroup(const char *root, pid_t pid, char **out, struct iob_error **err);

/* The v1 cgroup of PID in the hierarchy that has CONTROLLER (e.g. "blkio",
 * "pids", "name=systemd"), for the fallback sampler on v1/hybrid hosts. */
int cg2_pid_cgroup_v1(const char *root, pid_t pid, const char *controller, char **out,
                      struct iob_error **err);

/* Mount point of the v1 hierarchy that has CONTROLLER (from the superblock
 * options of a "cgroup" mount in ROOT/proc/self/mountinfo). */
int cg2_v1_mount_find(const char *root, const char *controller, char **out, struct iob_error **err);

/* The pids in CGDIR/cgroup.procs (v1 or v2), at most CG2_PROCS_MAX. */
int cg2_procs_read(const char *cgdir, pid_t **pids, size_t *n, struct iob_error **err);

/* Helpers shared by the library and its users. */

/* Read a whole file of at most MAX bytes into a NUL-terminated buffer.  A file
 * larger than MAX is an EFBIG error: nothing from outside is trusted to be
 * small. */
int cg2_read_file(const char *path, size_t max, char **buf, size_t *len, struct iob_error **err);

/* Write BUF to an existing file in one write(2), as cgroup files require. */
int cg2_write_file(const char *path, const char *buf, struct iob_error **err);

/* ROOT + MOUNT + CG + "/" + NAME when CG is not the hierarchy's root and
 * the file exists, else NULL (a container's own file in one hierarchy). */
char *cg2_file_in(const char *root, const char *mount, const char *cg, const char *name);
/* "ROOT" + "PATH" (PATH absolute); ROOT may be NULL or "". */
char *cg2_join(const char *root, const char *path);

/* Strict decimal uint64: digits only, no sign, overflow is an error. */
int cg2_parse_u64(const char *s, size_t len, uint64_t *out);
/* "MAJ:MIN" (S, LEN bytes) with both parts < 2^32 (dev_t's major is 12
 * bits, minor 20, but the text is what is checked).  Returns < 0 if not. */
int cg2_parse_devno(const char *s, size_t len, unsigned *maj, unsigned *min);

#endif
