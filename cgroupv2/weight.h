// SPDX-License-Identifier: Apache-2.0
/* io.weight (iocost, 1..10000) and io.bfq.weight (BFQ, 1..1000): a default
 * line plus per-device overrides, and whether a weight can take effect on a
 * device at all.  Without iocost enabled for the device or BFQ as its
 * scheduler, writes to io.weight succeed and do nothing. */
#ifndef IOB_CG2_WEIGHT_H
#define IOB_CG2_WEIGHT_H

#include <stddef.h>

#include "common/error.h"

#define CG2_WEIGHT_MAX_DEVS 4096

enum cg2_weight_kind {
  CG2_IO_WEIGHT,  /* io.weight, 1..10000, default 100 */
  CG2_BFQ_WEIGHT, /* io.bfq.weight, 1..1000, default 100 */
};

struct cg2_weight_dev {
  unsigned major, minor, weight;
};

struct cg2_weight {
  unsigned dflt;
  size_t n;
  struct cg2_weight_dev *dev;
};

/* Parse "default W\nMAJ:MIN W\n..." (and the bare "W" that BFQ printed
 * before 5.4).  Weights outside the kind's range are an error. */
int cg2_weight_parse(enum cg2_weight_kind kind, const char *buf, size_t len, struct cg2_weight *out,
                     struct iob_error **err);
int cg2_weight_read(const char *cgdir, enum cg2_weight_kind kind, struct cg2_weight *out,
                    struct iob_error **err);
void cg2_weight_release(struct cg2_weight *w);
/* The weight that applies to a device: its override or the default. */
unsigned cg2_weight_for(const struct cg2_weight *w, unsigned major, unsigned minor);

/* Writers; errors name the file and carry errno. */
int cg2_weight_write_default(const char *cgdir, enum cg2_weight_kind kind, unsigned weight,
                             struct iob_error **err);
/* weight 0 removes the override ("MAJ:MIN default"). */
int cg2_weight_write_dev(const char *cgdir, enum cg2_weight_kind kind, unsigned major,
                         unsigned minor, unsigned weight, struct iob_error **err);

unsigned cg2_weight_min(enum cg2_weight_kind kind);
unsigned cg2_weight_max(enum cg2_weight_kind kind);
const char *cg2_weight_file(enum cg2_weight_kind kind);

/* systemd's mapping (src/core/cgroup.c, BFQ_WEIGHT): linear on each side of
 * the common default 100, so 1 -> 1, 100 -> 100, 10000 -> 1000. */
unsigned cg2_weight_io_to_bfq(unsigned io_weight);
unsigned cg2_weight_bfq_to_io(unsigned bfq_weight);

/* What can enforce weights on a device. */
enum {
  CG2_MECH_IOCOST = 1 << 0, /* iocost enabled in the root's io.cost.qos */
  CG2_MECH_BFQ = 1 << 1,    /* bfq is the disk's active scheduler */
};

/* For device MAJ:MIN (a partition is mapped to its whole disk, the level at
 * which iocost and the scheduler work), set *mech to a CG2_MECH_* mask (0:
 * nothing enforces weights) and *disk_major, *disk_minor to the whole disk.
 * MOUNT is the cgroup2 mount (cg2_mount_find), ROOT the usual prefix for
 * /sys paths and the mount. */
int cg2_weight_mechanism(const char *root, const char *mount, unsigned major, unsigned minor,
                         unsigned *mech, unsigned *disk_major, unsigned *disk_minor,
                         struct iob_error **err);

/* The whole disk of block device MAJ:MIN (itself when it is not a
 * partition), from ROOT/sys/dev/block. */
int cg2_whole_disk(const char *root, unsigned major, unsigned minor, unsigned *disk_major,
                   unsigned *disk_minor, struct iob_error **err);

struct cg2_disk {
  unsigned major, minor, mech; /* mech: CG2_MECH_* mask */
};

/* Every whole disk in ROOT/sys/dev/block with what enforces weights on it
 * (at most CG2_WEIGHT_MAX_DEVS; partitions skipped, they follow their disk). */
int cg2_weight_disks(const char *root, const char *mount, struct cg2_disk **out, size_t *n,
                     struct iob_error **err);

/* Parse the active scheduler from a queue/scheduler text ("none [bfq]"):
 * copies the bracketed name into NAME; < 0 when there is none. */
int cg2_scheduler_active(const char *text, char *name, size_t size);

/* 1 when io.cost.qos text enables iocost for MAJ:MIN, 0 when not, < 0 when
 * the line for that device is malformed. */
int cg2_iocost_enabled(const char *qos, size_t len, unsigned major, unsigned minor);

#endif
