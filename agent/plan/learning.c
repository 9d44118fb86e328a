// SPDX-License-Identifier: Apache-2.0
/* What the agent learns and keeps (agent/plan/learning.h). */
#include "agent/plan/learning.h"

#include <string.h>

#include "common/cleanup.h"
#include "common/log.h"

void agent_learn_init(struct agent_learn *l, struct agent_profiles *profiles,
                      struct agent_penalties *pen, struct agent_adm *adm) {
  memset(l, 0, sizeof(*l));
  l->profiles = profiles;
  l->pen = pen;
  l->adm = adm;
  agent_statesave_init(&l->statesave);
}

void agent_learn_apply_profile(struct agent_learn *l, struct agent_ctr *c) {
  const struct agent_profile *p =
      agent_profiles_get(l->profiles, agent_ctr_tenant(c), c->workload_key);
  if (p == NULL)
    return;
  c->profile.solo_s = p->solo_s;
  c->profile.solo_bps = p->solo_bps;
  c->lat.profile_target = p->lat_target;
  c->lat.profile_approx = p->lat_approx;
  int cls = batch_class_from_name(p->cls);
  if (cls >= 0 && c->class_source != AGENT_CLASS_DECLARED)
    agent_adm_set_class(l->adm, c, (enum batch_class)cls, p->confidence, AGENT_CLASS_PROFILE,
                        iob_now_ms());
}

/* Encoded here, written and fsynced by the state writer's thread
 * (agent/store/statesave.h), which also logs a failed write. */
static void save_profiles(struct agent_learn *l) {
  cleanup_error struct iob_error *err = NULL;
  if (!l->dirty || !l->saves)
    return;
  char *text;
  size_t len;
  if (agent_profiles_encode(l->profiles, &text, &len, &err) < 0) {
    iob_warn("profiles not saved: %s", err->msg);
    return;
  }
  agent_statesave_put(&l->statesave, l->profiles->path, "profiles", text, len);
  l->dirty = false;
}

static void save_penalties(struct agent_learn *l) {
  struct agent_penalties *pen = l->pen;
  if (!l->saves || pen->path == NULL || !pen->dirty)
    return;
  char *text = agent_penalties_encode(pen);
  agent_statesave_put(&l->statesave, pen->path, "measured penalties", text, strlen(text));
  pen->dirty = false;
}

static void on_save_timer(struct iob_loop *loop, void *data) {
  (void)loop;
  struct agent_learn *l = data;
  l->save_timer = NULL;
  save_profiles(l);
  save_penalties(l); /* what the run that just ended measured, too */
}

void agent_learn_save_soon(struct agent_learn *l) {
  l->dirty = true;
  if (l->save_timer == NULL && !l->stopping && l->loop)
    l->save_timer = iob_loop_timer(l->loop, AGENT_LEARN_SAVE_DELAY_MS, on_save_timer, l);
}

void agent_learn_save_due(struct agent_learn *l, uint64_t now) {
  if (now - l->last_save_ms >= AGENT_LEARN_SAVE_PERIOD_MS) {
    save_profiles(l);
    save_penalties(l);
    l->last_save_ms = now;
  }
}

void agent_learn_sampled(struct agent_learn *l, const struct agent_ctr *c,
                         const struct agent_profile_update *u) {
  cleanup_error struct iob_error *err = NULL;
  if (agent_profiles_learn(l->profiles, agent_ctr_tenant(c), c->workload_key, u, &err) == 0)
    l->dirty = true;
}

/* What a finished run teaches: its class, its solo duration and its solo
 * throughput.  A run that shared the disk with others doing I/O teaches
 * the rate of its windows alone when it had one (the sampler counts a
 * window alone only once the next shows it was full), else its
 * solo-equivalent seconds (the sampler divided each window by the
 * slowdown measured or predicted in it), so busy nodes learn too; idle
 * neighbours do not count as sharing.  One window is enough: a node
 * that starts its jobs all at once sees a job alone only in the tail
 * of the last one, which on an HDD lasted under two windows, and
 * profiles average what runs teach.  A throughput from predicted
 * slowdowns is not taught: it is the matrix's guess, and penalties
 * measured against it would measure the guess. */

void agent_learn_run_ended(struct agent_learn *l, const struct agent_ctr *c, uint64_t now) {
  if (c->workload_key == NULL || *c->workload_key == '\0' || c->state != AGENT_RUNNING)
    return;
  struct agent_profile_update u = {.run_finished = true};
  if (c->class_source == AGENT_CLASS_DECLARED) {
    u.cls = batch_class_name(c->cls);
    u.confidence = c->confidence;
  } else if (c->sample.run_cls >= 0) {
    u.cls = batch_class_name((enum batch_class)c->sample.run_cls);
    u.confidence = c->sample.run_confidence;
  }
  double secs = (double)(now - c->plan.admitted_ms) / 1000.0;
  bool rate_known = !c->sample.shared;
  if (c->sample.shared && c->sample.alone_s > 0 && c->sample.alone_bytes > 0 &&
      c->sample.bytes_run > 0) {
    double alone = c->sample.bytes_run / (c->sample.alone_bytes / c->sample.alone_s);
    if (alone < secs)
      secs = alone;
    rate_known = true;
  } else if (c->sample.shared && c->sample.solo_equiv_s > 0 && c->sample.solo_equiv_s < secs) {
    secs = c->sample.solo_equiv_s;
    rate_known = !c->sample.equiv_guessed;
  }
  if (c->kind == AGENT_KIND_JOB && secs > 0) {
    u.solo_s = secs;
    if (c->sample.bytes_run > 0 && rate_known)
      u.solo_bps = c->sample.bytes_run / secs;
  }
  cleanup_error struct iob_error *err = NULL;
  if (agent_profiles_learn(l->profiles, agent_ctr_tenant(c), c->workload_key, &u, &err) < 0) {
    iob_warn("nothing learnt from '%s': %s", c->id, err->msg);
    return;
  }
  /* Those of its workload that wait to start are planned with what it
   * taught (they registered before it was known). */
  for (struct agent_ctr *o = l->adm ? l->adm->list : NULL; o; o = o->next)
    if (o != c && o->state != AGENT_RUNNING && o->workload_key &&
        !strcmp(o->workload_key, c->workload_key) &&
        !strcmp(agent_ctr_tenant(o), agent_ctr_tenant(c)))
      agent_learn_apply_profile(l, o);
  /* Not now: an fsync here would delay the admissions this exit allows.
   * One write shortly after covers a burst of exits. */
  agent_learn_save_soon(l);
}

void agent_learn_release(struct agent_learn *l) {
  l->stopping = true;
  save_profiles(l);
  save_penalties(l);
  agent_statesave_release(&l->statesave); /* written before the owner's lock goes */
  if (l->save_timer && l->loop)
    iob_timer_cancel(l->loop, l->save_timer);
  l->save_timer = NULL;
}
