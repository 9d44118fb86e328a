// SPDX-License-Identifier: Apache-2.0
/* What the agent learns and keeps across restarts: a finished run's class,
 * solo duration and throughput, and the classes the sampler measures, go
 * into the profile store (agent/store/profiles.h); what a profile says is applied
 * to a container that registers; the profiles and the penalties measured
 * online (agent/plan/penalties.h) are written to STATE_DIR off the loop
 * (agent/store/statesave.h): soon after an exit or a learned objective, every
 * AGENT_LEARN_SAVE_PERIOD_MS otherwise, and at shutdown. */
#ifndef IOB_AGENT_LEARNING_H
#define IOB_AGENT_LEARNING_H

#include <stdbool.h>
#include <stdint.h>

#include "agent/plan/admission.h"
#include "agent/plan/penalties.h"
#include "agent/store/profiles.h"
#include "agent/store/statesave.h"
#include "common/loop.h"

/* Profiles learnt from samples are written at most this often; exits and
 * shutdown write at once. */
#define AGENT_LEARN_SAVE_PERIOD_MS 30000
/* A burst of exits (or learned objectives) is written once, this long
 * after the first. */
#define AGENT_LEARN_SAVE_DELAY_MS 500

struct agent_learn {
  struct agent_profiles *profiles; /* the owner's; learnt into, applied from */
  struct agent_penalties *pen;     /* the owner's; only saved here */
  struct agent_adm *adm;           /* a profile's class is set through it */
  struct iob_loop *loop;           /* NULL: no loop (headless), saves only when asked */
  struct agent_statesave statesave;
  bool dirty;                   /* profiles learnt since the last save */
  bool saves;                   /* the state directory's lock is held: files are written */
  bool stopping;                /* the loop ended: no timer is armed any more */
  struct iob_timer *save_timer; /* profiles learnt at an exit, written soon after */
  uint64_t last_save_ms;        /* profiles and penalties last saved by agent_learn_save_due */
};

/* Nothing saved until l->saves is set, no timer until l->loop is. */
void agent_learn_init(struct agent_learn *l, struct agent_profiles *profiles,
                      struct agent_penalties *pen, struct agent_adm *adm);
/* Apply what the profile of c's workload key says (class before any
 * sample, solo duration and throughput, learned latency objective). */
void agent_learn_apply_profile(struct agent_learn *l, struct agent_ctr *c);
/* c's run ended at NOW (detached, not freed yet): what it teaches goes into
 * its profile, written shortly after. */
void agent_learn_run_ended(struct agent_learn *l, const struct agent_ctr *c, uint64_t now);
/* The sampler measured c's class (agent_sampler_ops.learn). */
void agent_learn_sampled(struct agent_learn *l, const struct agent_ctr *c,
                         const struct agent_profile_update *u);
/* Something went into a profile behind our back (a learned objective,
 * agent_protection_ops.learned): written soon, as after an exit. */
void agent_learn_save_soon(struct agent_learn *l);
/* Each sampling window: profiles and penalties learnt since the last save,
 * a few times a minute at most. */
void agent_learn_save_due(struct agent_learn *l, uint64_t now);
/* Shutdown: what is left written, and waited for; the timer cancelled. */
void agent_learn_release(struct agent_learn *l);

#endif
