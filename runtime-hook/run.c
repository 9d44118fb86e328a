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

int hook_sample(const struct hook_options *opt, const struct hook_state *st,
                struct hook_result *res, struct iob_error **err) {
  memset(res, 0, sizeof(*res));
  return client_birth_sample(opt->root, st->pid, &res->b, err);
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
  if (res->declared)
    return client_birth_plan_weight(opt->root, res->cls, &res->b, err);
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
  client_birth_release(&res->b);
  free(res->workload);
  memset(res, 0, sizeof(*res));
}

json_t *hook_result_json(const struct hook_state *st, const struct hook_result *res) {
  const struct cg2_io_counters *c = &res->b.baseline.io;
  json_t *base = json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "source",
                           cg2_source_name(res->b.baseline.source), "rbytes", (json_int_t)c->rbytes,
                           "wbytes", (json_int_t)c->wbytes, "rios", (json_int_t)c->rios, "wios",
                           (json_int_t)c->wios, "dbytes", (json_int_t)c->dbytes, "dios",
                           (json_int_t)c->dios, "npids", (json_int_t)res->b.baseline.npids);
  const struct cg2_source_ops *ops = cg2_source_ops(res->b.baseline.source);
  json_object_set_new(base, "lower_fidelity", json_boolean(ops && ops->lower_fidelity));
  if (res->b.baseline.has_pressure)
    json_object_set_new(base, "pressure_some_total",
                        json_integer((json_int_t)res->b.baseline.pressure.some.total));
  return json_pack("{s:s, s:i, s:s, s:s, s:s, s:o, s:s?, s:b, s:s, s:{s:i, s:b, s:b, s:b}}", "id",
                   st->id, "pid", (int)st->pid, "bundle", st->bundle, "cgroup", res->b.cgroup,
                   "cgdir", res->b.cgdir, "baseline", base, "workload", res->workload, "declared",
                   res->declared, "class", batch_class_name(res->cls), "weight", "value",
                   (int)res->b.weight, "applied", res->b.weight_applied, "iocost",
                   !!(res->b.weight_mech & CG2_MECH_IOCOST), "bfq",
                   !!(res->b.weight_mech & CG2_MECH_BFQ));
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
