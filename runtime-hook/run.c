// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroupv2/cg2.h"
#include "cgroupv2/weight.h"
#include "common/cleanup.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "runtime-hook/hook.h"
#include "wcd/kind.h"

/* Initial weights by class, before the agent knows better.  Small random
 * I/O is the victim next to large sequential streams (docs/DESIGN.md: a 4 KiB
 * random writer fell from 62k to under 1k IOPS beside a 1 MiB sequential
 * writer), so random classes start above the default and sequential ones
 * below it; the agent retunes them from measurements. */
unsigned hook_class_weight(enum batch_class c) {
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
static int resolve(const struct hook_options *opt, const struct hook_state *st,
                   const struct cg2_mount *m, struct hook_result *res, enum cg2_source *src,
                   struct iob_error **err) {
  if (cg2_pid_cgroup(opt->root, st->pid, &res->cgroup, err) < 0)
    return iob_error_prefix(err, "cannot resolve the cgroup of pid %d", (int)st->pid);
  struct cg2_pick pick = {.root = opt->root, .m = m, .source = CG2_SOURCE_NONE, .pid = st->pid};
  return cg2_source_pick(&pick, src, &res->cgdir, err);
}

/* The class's weight, for where some disk can enforce it: io.weight when
 * iocost runs on a disk, io.bfq.weight (systemd's mapping) when bfq does;
 * and what the "default" line of each holds now, for the agent's journal.
 * Never report a weight as applied when nothing enforces it. */
static int plan_weight(const struct hook_options *opt, const struct cg2_mount *m,
                       struct hook_result *res, struct iob_error **err) {
  res->weight = hook_class_weight(res->cls);
  if (res->weight == 0)
    return 0;
  if (!m->has_io) {
    iob_debug("weight %u for '%s' not applied: the io controller is not in the cgroup v2 "
              "hierarchy at '%s'",
              res->weight, batch_class_name(res->cls), m->path);
    return 0;
  }
  cleanup_free struct cg2_disk *disks = NULL;
  size_t n = 0;
  if (cg2_weight_disks(opt->root, m->path, &disks, &n, err) < 0)
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
              res->weight, batch_class_name(res->cls));
    return 0;
  }
  const struct {
    unsigned mech;
    enum cg2_weight_kind kind;
    char *was;
  } f[] = {{CG2_MECH_IOCOST, CG2_IO_WEIGHT, res->weight_was},
           {CG2_MECH_BFQ, CG2_BFQ_WEIGHT, res->bfq_weight_was}};
  for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
    if (!(mech & f[i].mech))
      continue;
    struct cg2_weight cur = {0};
    if (cg2_weight_read(res->cgdir, f[i].kind, &cur, err) < 0)
      return -1;
    snprintf(f[i].was, sizeof(res->weight_was), "%u", cur.dflt);
    cg2_weight_release(&cur);
  }
  struct stat sb;
  if (stat(res->cgdir, &sb) < 0)
    return iob_error(err, errno, "cannot stat '%s'", res->cgdir);
  res->cgdir_ino = (unsigned long long)sb.st_ino;
  res->weight_mech = mech;
  return 0;
}

int hook_weight_write(struct hook_result *res, struct iob_error **err) {
  if (!res->weight_journalled || res->weight == 0 || res->weight_mech == 0)
    return 0;
  unsigned mech = res->weight_mech;
  if ((mech & CG2_MECH_IOCOST) &&
      cg2_weight_write_default(res->cgdir, CG2_IO_WEIGHT, res->weight, err) < 0)
    return -1;
  if ((mech & CG2_MECH_BFQ) && cg2_weight_write_default(res->cgdir, CG2_BFQ_WEIGHT,
                                                        cg2_weight_io_to_bfq(res->weight), err) < 0)
    return -1;
  res->weight_applied = 1;
  iob_debug("weight %u for '%s' written (%s%s)", res->weight, batch_class_name(res->cls),
            mech & CG2_MECH_IOCOST ? "iocost " : "", mech & CG2_MECH_BFQ ? "bfq" : "");
  return 0;
}

int hook_sample(const struct hook_options *opt, const struct hook_state *st,
                struct hook_result *res, struct iob_error **err) {
  memset(res, 0, sizeof(*res));
  if (cg2_mount_find(opt->root, &res->mount, err) < 0)
    return -1;
  enum cg2_source src = CG2_SOURCE_NONE;
  int rc = resolve(opt, st, &res->mount, res, &src, err);
  if (rc < 0 && (*err)->code == IOB_CODE_NOT_FOUND && res->cgroup) {
    /* No cgroup of its own (a process in the v2 root on a pure v2 host,
     * say): nothing to take a baseline from, but the agent still hears of
     * it (it samples nothing it cannot attribute). */
    iob_debug("container '%s': %s; registered without a baseline", st->id, (*err)->msg);
    iob_error_release(err);
    free(res->cgdir);
    res->cgdir = xstrdup("");
    return 0;
  }
  if (rc == 0)
    rc = cg2_sample_take(opt->root, res->cgdir, src, &res->baseline, err);
  if (rc < 0) {
    hook_result_release(res);
    return -1;
  }
  res->sampled = 1;
  iob_debug("container '%s' pid %d: cgroup '%s', sampling '%s' from %s%s", st->id, (int)st->pid,
            res->cgroup, res->cgdir, cg2_source_name(src),
            cg2_source_ops(src)->lower_fidelity ? " (lower fidelity)" : "");
  return 0;
}

int hook_classify(const struct hook_options *opt, const struct hook_state *st,
                  struct hook_result *res, struct iob_error **err) {
  struct iob_ann ann;
  if (iob_ann_parse(hook_annotation_get, (void *)st, IOB_ANN_BY_HOOK, &ann, err) < 0)
    return -1;
  /* No samples yet: only a declared class can be known at birth (a
   * declared "unknown" declares nothing). */
  struct wcd_result decl;
  res->declared = ann.cls_value != BATCH_UNKNOWN;
  if (wcd_resolve(NULL, res->declared ? ann.cls : NULL, NULL, 0, &decl, err) < 0)
    return -1;
  res->cls = decl.cls;
  res->lat_target_us = ann.lat_target_us;
  cleanup_error struct iob_error *kerr = NULL;
  if (wcd_workload_key(ann.workload, hook_annotation(st, HOOK_ANN_IMAGE),
                       (const char *const *)st->args, st->nargs, &res->workload, &kerr) < 0) {
    if (kerr->code != IOB_CODE_NOT_FOUND)
      return iob_error_code(err, kerr->code, "%s", kerr->msg);
    iob_debug("container '%s' has no workload key: %s", st->id, kerr->msg);
  }
  if (res->sampled && res->declared)
    return plan_weight(opt, &res->mount, res, err);
  return 0;
}

int hook_run(const struct hook_options *opt, const struct hook_state *st, struct hook_result *res,
             struct iob_error **err) {
  /* An invalid declaration is refused before anything is looked at. */
  struct iob_ann ann;
  memset(res, 0, sizeof(*res));
  if (iob_ann_parse(hook_annotation_get, (void *)st, IOB_ANN_BY_HOOK, &ann, err) < 0)
    return -1;
  if (hook_sample(opt, st, res, err) < 0)
    return -1;
  if (hook_classify(opt, st, res, err) < 0) {
    hook_result_release(res);
    return -1;
  }
  return 0;
}

void hook_result_release(struct hook_result *res) {
  free(res->cgroup);
  free(res->cgdir);
  free(res->workload);
  cg2_mount_release(&res->mount);
  memset(res, 0, sizeof(*res));
}

json_t *hook_result_json(const struct hook_state *st, const struct hook_result *res) {
  const struct cg2_io_counters *c = &res->baseline.io;
  json_t *base = json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "source",
                           cg2_source_name(res->baseline.source), "rbytes", (json_int_t)c->rbytes,
                           "wbytes", (json_int_t)c->wbytes, "rios", (json_int_t)c->rios, "wios",
                           (json_int_t)c->wios, "dbytes", (json_int_t)c->dbytes, "dios",
                           (json_int_t)c->dios, "npids", (json_int_t)res->baseline.npids);
  const struct cg2_source_ops *ops = cg2_source_ops(res->baseline.source);
  json_object_set_new(base, "lower_fidelity", json_boolean(ops && ops->lower_fidelity));
  if (res->baseline.has_pressure)
    json_object_set_new(base, "pressure_some_total",
                        json_integer((json_int_t)res->baseline.pressure.some.total));
  return json_pack("{s:s, s:i, s:s, s:s, s:s, s:o, s:s?, s:b, s:s, s:{s:i, s:b, s:b, s:b}}", "id",
                   st->id, "pid", (int)st->pid, "bundle", st->bundle, "cgroup", res->cgroup,
                   "cgdir", res->cgdir, "baseline", base, "workload", res->workload, "declared",
                   res->declared, "class", batch_class_name(res->cls), "weight", "value",
                   (int)res->weight, "applied", res->weight_applied, "iocost",
                   !!(res->weight_mech & CG2_MECH_IOCOST), "bfq",
                   !!(res->weight_mech & CG2_MECH_BFQ));
}

int hook_record_write(const char *dir, const char *id, json_t *rec, struct iob_error **err) {
  cleanup_free char *tmp = xasprintf("%s/.%s.tmp", dir, id);
  cleanup_free char *dst = xasprintf("%s/%s.json", dir, id);
  cleanup_free char *text = json_dumps(rec, JSON_COMPACT | JSON_SORT_KEYS);
  if (text == NULL)
    iob_oom();
  cleanup_close int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0)
    return iob_error(err, errno, "cannot create '%s'", tmp);
  size_t len = strlen(text);
  /* Written whole and renamed, so a reader never sees half a record. */
  if (write(fd, text, len) != (ssize_t)len || write(fd, "\n", 1) != 1) {
    int e = errno ? errno : EIO;
    unlink(tmp);
    return iob_error(err, e, "cannot write '%s'", tmp);
  }
  if (rename(tmp, dst) < 0) {
    int e = errno;
    unlink(tmp);
    return iob_error(err, e, "cannot rename '%s' to '%s'", tmp, dst);
  }
  return 0;
}
