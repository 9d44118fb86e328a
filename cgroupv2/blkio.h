// SPDX-License-Identifier: Apache-2.0
/* cgroup v1 blkio statistics: the block-layer sample source of v1/hybrid
 * hosts, where the cgroup2 mount has no io controller.
 *
 * blkio.throttle.io_service_bytes and blkio.throttle.io_serviced (block/
 * blk-cgroup-rwstat.c, __blkg_prfill_rwstat) print per device
 *
 *     MAJ:MIN Read N
 *     MAJ:MIN Write N
 *     MAJ:MIN Sync N
 *     MAJ:MIN Async N
 *     MAJ:MIN Discard N      (kernels >= 4.19)
 *     MAJ:MIN Total N        (Read + Write + Discard)
 *
 * and a last line "Total N" (the sum over devices).  Read and Write are
 * split by direction, Sync and Async split the same bios again, so only
 * Read, Write and Discard are summed.  Device numbers are whole disks.
 *
 * What v1 counts: bios as the submitting task's cgroup issues them: reads,
 * direct writes, writeback the container issues itself (fsync, sync).  Not
 * buffered writeback by the flusher threads: v1 charges that to the root.
 *
 * LINUX >= 6.10 counts nothing until blk-throttle is activated on the
 * disk's queue (block/blk-throttle.h, blk_should_throtl returns before the
 * accounting while q->td is NULL), which happens at the first write of any
 * blkio.throttle.*_device rule for that disk, "MAJ:MIN 0" included, and
 * lasts until the disk goes away.  cg2_blkio_activate does that write. */
#ifndef IOB_CG2_BLKIO_H
#define IOB_CG2_BLKIO_H

#include <stddef.h>
#include <stdint.h>

#include "cgroupv2/iostat.h"
#include "common/error.h"

#define CG2_BLKIO_BYTES "blkio.throttle.io_service_bytes"
#define CG2_BLKIO_IOS "blkio.throttle.io_serviced"

struct cg2_blkio_dev {
  unsigned major, minor;
  uint64_t read, write, sync, async, discard, total;
};

struct cg2_blkio {
  size_t n;
  struct cg2_blkio_dev *dev; /* in file order, no duplicates */
  uint64_t total;            /* the last "Total N" line (0 when absent) */
};

/* Parse one blkio.throttle.io_service_bytes / io_serviced text.  A device
 * given a key twice, a number that does not fit in 64 bits, a line that is
 * neither "MAJ:MIN KEY N" nor "Total N", or more than CG2_IOSTAT_MAX_DEVS
 * devices is an error; unknown keys with a valid number are skipped; keys
 * a kernel does not print (Discard before 4.19) read as 0. */
int cg2_blkio_parse(const char *buf, size_t len, struct cg2_blkio *out, struct iob_error **err);
void cg2_blkio_release(struct cg2_blkio *b);

/* Read both files of the v1 blkio cgroup CGDIR into per-device counters:
 * rbytes/wbytes/dbytes from io_service_bytes' Read/Write/Discard,
 * rios/wios/dios from io_serviced's, sorted by device. */
int cg2_blkio_read(const char *cgdir, struct cg2_iostat *out, struct iob_error **err);

/* Make sure the disk MAJ:MIN (whole disk) counts v1 blkio statistics: if
 * the blkio root's io_service_bytes (ROOT + MOUNT) has no line for it yet,
 * write "MAJ:MIN 0" (no cap) to the root's blkio.throttle.read_bps_device,
 * which activates blk-throttle on its queue.  A disk with a line is left
 * alone, so a rule someone set is never touched.  *done (may be NULL) gets 1
 * when this call activated it. */
int cg2_blkio_activate(const char *root, const char *mount, unsigned major, unsigned minor,
                       int *done, struct iob_error **err);

/* cg2_blkio_activate for every whole disk of non-zero size in
 * ROOT/sys/block.  *n_active gets how many disks count now; a disk that
 * refuses (some virtual ones) is skipped, not an error.  *added (may be
 * NULL) gets the disks this call activated, "NAME MAJ:MIN" joined by ", "
 * (a disk attached since the last call: a loop device, a hot-plugged
 * volume), or NULL when none; the caller frees it. */
int cg2_blkio_activate_all(const char *root, const char *mount, size_t *n_active, char **added,
                           struct iob_error **err);

#endif
