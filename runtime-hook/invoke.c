// SPDX-License-Identifier: Apache-2.0
/* The hook from its state JSON to its outcome (hook.h): which failures are
 * the runtime's (an invalid state: exit 1) and which are ours (fail open). */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/log.h"
#include "runtime-hook/hook.h"
#include "wcd/kind.h"

static enum hook_stage stage_of(const struct hook_options *opt, const struct hook_state *st) {
  if (opt->stage != HOOK_STAGE_AUTO)
    return opt->stage;
  return strcmp(st->status, "stopped") == 0 ? HOOK_STAGE_POSTSTOP : HOOK_STAGE_PRESTART;
}

/* prestart once confined: RES holds the sample, or *SERR says why there
 * is none. */
static int prestart_confined(const struct hook_options *opt, struct hook_state *st,
                             struct hook_result *res, struct iob_error **serr,
                             struct iob_error **err) {
  /* config.json for the annotations the state may lack (runc < 1.0.0-rc95
   * and crun put none in the state) and for process.args, the workload key
   * of last resort. */
  if ((!st->have_annotations ||
       (!hook_annotation(st, IOB_ANN_WORKLOAD) && !hook_annotation(st, HOOK_ANN_IMAGE))) &&
      hook_state_load_bundle(st, err) < 0)
    return 1;
  /* A malformed io.iobatch.* annotation (a class we do not know, a latency
   * target that is none) is refused, as the shim refuses it at Create: the
   * user asked for something that cannot be had. */
  struct iob_ann ann;
  if (iob_ann_parse(hook_annotation_get, st, IOB_ANN_BY_HOOK, &ann, err) < 0)
    return -1;
  if (serr) {
    *err = steal_ptr(serr);
    return 1;
  }
  if (hook_classify(opt, st, res, err) < 0)
    return 1;
  /* The weight only once the agent journalled it
   * (client_birth_weight_write). */
  int rc = hook_register(opt, st, res, err);
  if (rc == 0)
    rc = client_birth_weight_write(&res->b, err);
  if (opt->record_dir) {
    cleanup_error struct iob_error *rerr = NULL;
    json_t *rec = hook_result_json(st, res);
    int r =
        rec ? hook_record_write(opt->record_dir, st->id, rec, &rerr)
            : iob_error_code(&rerr, IOB_CODE_INTERNAL, "cannot build the record of '%s'", st->id);
    json_decref(rec);
    if (r < 0 && rc == 0) {
      *err = rerr;
      rerr = NULL;
      rc = -1;
    }
  }
  return rc < 0 ? 1 : 0;
}

/* hook.h "Confinement": the Landlock domain (main set up the rest). */
static int confine(const struct hook_options *opt, const struct hook_state *st,
                   struct iob_error **err) {
  if (!opt->confined)
    return 0;
  return hook_landlock_apply(opt, opt->landlock_abi, st->bundle, err);
}

/* Returns 0, 1 (ours: fail open) or -1 (the container's spec is invalid). */
static int prestart(const struct hook_options *opt, struct hook_state *st, struct iob_error **err) {
  /* The baseline first: from the pid alone, and outside the Landlock
   * domain, which may not read /proc/PID/io of a process outside it. */
  struct hook_result res;
  cleanup_error struct iob_error *serr = NULL;
  int sampled = hook_sample(opt, st, &res, &serr);
  if (confine(opt, st, err) < 0) {
    hook_result_release(&res);
    return 1;
  }
  int rc = prestart_confined(opt, st, &res, sampled < 0 ? &serr : NULL, err);
  hook_result_release(&res);
  return rc;
}

int hook_invoke(const struct hook_options *opt, const char *buf, size_t len,
                struct iob_error **err) {
  struct hook_state st;
  if (hook_state_parse(buf, len, &st, err) < 0) {
    /* Over a limit is ours to tolerate; not a state at all is the
     * runtime's error. */
    bool limit = (*err)->code == IOB_CODE_RESOURCE_EXHAUSTED || (*err)->errno_ == EFBIG;
    return limit ? 1 : -1;
  }
  if (hook_agent_forbidden(opt)) {
    iob_debug("container '%s': agent socket '%s' is not reachable for this user; nothing to do",
              st.id, opt->socket);
    hook_state_release(&st);
    return 0;
  }
  int rc;
  if (stage_of(opt, &st) == HOOK_STAGE_PRESTART)
    rc = prestart(opt, &st, err);
  else if (confine(opt, &st, err) < 0)
    rc = 1;
  else
    rc = hook_exited(opt, &st, err) < 0 ? 1 : 0;
  if (rc != 0)
    iob_error_prefix(err, "container '%s'", st.id);
  hook_state_release(&st);
  return rc;
}
