// SPDX-License-Identifier: Apache-2.0
#include "client/birth.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cgroupv2/weight.h"
#include "common/cleanup.h"
#include "common/log.h"
#include "common/xalloc.h"

/* Initial weights by class, before the agent knows better.  Small random
 * I/O is the victim next to large sequential streams (docs/DESIGN.md: a 4 KiB
 * random writer fell from 62k to under 1k IOPS beside a 1 MiB sequential
 * writer), so random classes start above the default and sequential ones
 * below it; the agent retunes them from measurements. */
unsigned client_class_weight(enum batch_class c) {
  switch (c) {
  case BATCH_RAND_READ:
  case BATCH_RAND_WRITE:
    return 400;
  case BATCH_SEQ_READ:
  case BATCH_SEQ_WRITE:
    return 50;
  case BATCH_MIXED:
  case BATCH_IDLE:
    return 100;
  default:
    return 0;
  }
}

/* The directory to sample and the source: cg2_source_pick by the host, the
 * rule the agent follows too (io.stat in the v2 cgroup; else the v1 blkio
 * cgroup's statistics; else procfs over a cgroup of the container's own,
 * never the v2 root that runc may leave it in on a hybrid host). */
static int resolve(const char *root, pid_t pid, struct client_birth *b, enum cg2_source *src,
                   struct iob_error **err) {
  if (cg2_pid_cgroup(root, pid, &b->cgroup, err) < 0)
    return iob_error_prefix(err, "cannot resolve the cgroup of pid %d", (int)pid);
  struct cg2_pick pick = {.root = root, .m = &b->mount, .source = CG2_SOURCE_NONE, .pid = pid};
  return cg2_source_pick(&pick, src, &b->cgdir, err);
}

int client_birth_sample(const char *root, pid_t pid, struct client_birth *b,
                        struct iob_error **err) {
  memset(b, 0, sizeof(*b));
  if (cg2_mount_find(root, &b->mount, err) < 0)
    return -1;
  enum cg2_source src = CG2_SOURCE_NONE;
  int rc = resolve(root, pid, b, &src, err);
  if (rc < 0 && (*err)->code == IOB_CODE_NOT_FOUND && b->cgroup) {
    /* No cgroup of its own (a process in the v2 root on a pure v2 host,
     * say): nothing to take a baseline from, but the agent still hears of
     * it (it samples nothing it cannot attribute). */
    iob_debug("pid %d: %s; registered without a baseline", (int)pid, (*err)->msg);
    iob_error_release(err);
    free(b->cgdir);
    b->cgdir = xstrdup("");
    return 0;
  }
  if (rc == 0)
    rc = cg2_sample_take(root, b->cgdir, src, &b->baseline, err);
  if (rc < 0) {
    client_birth_release(b);
    return -1;
  }
  b->sampled = 1;
  iob_debug("pid %d: cgroup '%s', sampling '%s' from %s%s", (int)pid, b->cgroup, b->cgdir,
            cg2_source_name(src), cg2_source_ops(src)->lower_fidelity ? " (lower fidelity)" : "");
  return 0;
}

/* The class's weight, for where some disk can enforce it: io.weight when
 * iocost runs on a disk, io.bfq.weight (systemd's mapping) when bfq does;
 * and what the "default" line of each holds now, for the agent's journal.
 * Never report a weight as applied when nothing enforces it. */
int client_birth_plan_weight(const char *root, enum batch_class cls, struct client_birth *b,
                             struct iob_error **err) {
  const struct cg2_mount *m = &b->mount;
  if (!b->sampled)
    return 0; /* no cgroup of its own: nothing to weigh */
  b->weight = client_class_weight(cls);
  if (b->weight == 0)
    return 0;
  if (!m->has_io) {
    iob_debug("weight %u for '%s' not applied: the io controller is not in the cgroup v2 "
              "hierarchy at '%s'",
              b->weight, batch_class_name(cls), m->path);
    return 0;
  }
  cleanup_free struct cg2_disk *disks = NULL;
  size_t n = 0;
  if (cg2_weight_disks(root, m->path, &disks, &n, err) < 0)
    return -1;
  unsigned mech = 0;
  for (size_t i = 0; i < n; i++) {
    mech |= disks[i].mech;
    if (disks[i].mech == 0)
      iob_debug("disk %u:%u: no iocost and no bfq, weights have no effect there", disks[i].major,
                disks[i].minor);
  }
  if (mech == 0) {
    iob_debug("weight %u for '%s' not applied: no disk has iocost enabled or bfq as scheduler",
              b->weight, batch_class_name(cls));
    return 0;
  }
  const struct {
    unsigned mech;
    enum cg2_weight_kind kind;
    char *was;
  } f[] = {{CG2_MECH_IOCOST, CG2_IO_WEIGHT, b->weight_was},
           {CG2_MECH_BFQ, CG2_BFQ_WEIGHT, b->bfq_weight_was}};
  for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
    if (!(mech & f[i].mech))
      continue;
    struct cg2_weight cur = {0};
    if (cg2_weight_read(b->cgdir, f[i].kind, &cur, err) < 0)
      return -1;
    snprintf(f[i].was, sizeof(b->weight_was), "%u", cur.dflt);
    cg2_weight_release(&cur);
  }
  struct stat sb;
  if (stat(b->cgdir, &sb) < 0)
    return iob_error(err, errno, "cannot stat '%s'", b->cgdir);
  b->cgdir_ino = (unsigned long long)sb.st_ino;
  b->weight_mech = mech;
  return 0;
}

int client_birth_weight_write(struct client_birth *b, struct iob_error **err) {
  if (!b->weight_journalled || b->weight == 0 || b->weight_mech == 0)
    return 0;
  unsigned mech = b->weight_mech;
  if ((mech & CG2_MECH_IOCOST) &&
      cg2_weight_write_default(b->cgdir, CG2_IO_WEIGHT, b->weight, err) < 0)
    return -1;
  if ((mech & CG2_MECH_BFQ) &&
      cg2_weight_write_default(b->cgdir, CG2_BFQ_WEIGHT, cg2_weight_io_to_bfq(b->weight), err) < 0)
    return -1;
  b->weight_applied = 1;
  iob_debug("weight %u written to '%s' (%s%s)", b->weight, b->cgdir,
            mech & CG2_MECH_IOCOST ? "iocost " : "", mech & CG2_MECH_BFQ ? "bfq" : "");
  return 0;
}

void client_birth_release(struct client_birth *b) {
  free(b->cgroup);
  free(b->cgdir);
  cg2_mount_release(&b->mount);
  memset(b, 0, sizeof(*b));
}

void client_birth_request(const struct client_birth *b, Iobatch__Agent__V1__IOSample *base,
                          Iobatch__Agent__V1__RegisterRequest *req) {
  Iobatch__Agent__V1__IOSample s = IOBATCH__AGENT__V1__IOSAMPLE__INIT;
  s.rbytes = b->baseline.io.rbytes;
  s.wbytes = b->baseline.io.wbytes;
  s.rios = b->baseline.io.rios;
  s.wios = b->baseline.io.wios;
  s.monotonic_ns = b->baseline.t_ns;
  s.source = b->baseline.t_ns ? (char *)cg2_source_name(b->baseline.source) : "";
  *base = s;
  req->baseline = base;
  if (b->weight && b->weight_mech) {
    /* The agent journals it (or refuses: an untrusted namespace) before
     * it is written: client_birth_weight_write. */
    req->hook_weight = b->weight;
    req->hook_weight_was = (char *)b->weight_was;
    req->hook_bfq_weight_was = (char *)b->bfq_weight_was;
    req->cgroup_inode = b->cgdir_ino;
  }
}
