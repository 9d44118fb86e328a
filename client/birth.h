// SPDX-License-Identifier: Apache-2.0
/* A container's birth, as the agent hears of it at Register: its cgroup,
 * the baseline of its I/O counters taken before the workload runs, and the
 * first io.weight of a declared class.  Taken after the runtime made the
 * container and before its init execs: by the shim once `runc create` has
 * returned, by iobatch-hook under an engine that runs hooks.d (podman,
 * CRI-O).  Both fill the same RegisterRequest fields from it
 * (client_birth_request), so the agent cannot tell them apart but by the
 * request's source. */
#ifndef IOB_CLIENT_BIRTH_H
#define IOB_CLIENT_BIRTH_H

#include <stdbool.h>
#include <sys/types.h>

#include "batcher/class.h"
#include "cgroupv2/cg2.h"
#include "cgroupv2/sample.h"
#include "common/error.h"
#include "iobatch/agent.pb-c.h"

struct client_birth {
  char *cgroup; /* v2 path, "/a/b" */
  char *cgdir;  /* directory sampled; "" when it has no cgroup of its own */
  struct cg2_sample baseline;
  struct cg2_mount mount; /* the cgroup2 mount found */
  int sampled;            /* a baseline was taken (not: no cgroup of its own) */
  unsigned weight;        /* io.weight asked for the class; 0: none */
  unsigned weight_mech;   /* CG2_MECH_* of the disks it is (to be) written for */
  int weight_applied;
  /* What the "default" lines said before (for the agent's journal; "":
   * that file is not to be written) and the inode of cgdir. */
  char weight_was[16], bfq_weight_was[16];
  unsigned long long cgdir_ino;
  int weight_journalled; /* the agent journalled it: it may be written */
};

/* io.weight for a class at container birth (0: leave it alone). */
unsigned client_class_weight(enum batch_class c);

/* The cgroup of PID (under ROOT, a prefix for /proc and /sys in tests;
 * NULL in production) and its baseline.  A process with no cgroup of its
 * own still gets its cgroup, an empty cgdir and no baseline (0).  On
 * failure B holds nothing. */
int client_birth_sample(const char *root, pid_t pid, struct client_birth *b,
                        struct iob_error **err);
/* For a declared class CLS of a sampled container: the weight to write,
 * where some disk can enforce it, and what its files hold now (nothing is
 * written: client_birth_weight_write does, once the agent journalled it). */
int client_birth_plan_weight(const char *root, enum batch_class cls, struct client_birth *b,
                             struct iob_error **err);
/* Write B's weight only after the agent answered Register with
 * hook_weight_journalled, which it does for a class declared in a
 * namespace it trusts, having journalled what the files held, so that it
 * can put them back.  Without the agent's word (no agent, an untrusted
 * namespace), nothing: what the agent cannot undo is not written, and an
 * untrusted declaration is a hint only. */
int client_birth_weight_write(struct client_birth *b, struct iob_error **err);
void client_birth_release(struct client_birth *b);

/* Put B's baseline (in BASE, which must live as long as REQ) and weight
 * into REQ. */
void client_birth_request(const struct client_birth *b, Iobatch__Agent__V1__IOSample *base,
                          Iobatch__Agent__V1__RegisterRequest *req);

#endif
