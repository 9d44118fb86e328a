// SPDX-License-Identifier: Apache-2.0
#include "agent/plan/admission.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/plan/penalties.h"
#include "agent/protect/protection.h"
#include "client/annotations.h"
#include "common/cleanup.h"
#include "common/xalloc.h"

const char *agent_state_name(enum agent_state s) {
  switch (s) {
  case AGENT_CREATED:
    return "created";
  case AGENT_PENDING:
    return "pending";
  case AGENT_RUNNING:
    return "running";
  }
  return "invalid";
}

const char *agent_class_source_name(enum agent_class_source s) {
  switch (s) {
  case AGENT_CLASS_NONE:
    return "none";
  case AGENT_CLASS_DECLARED:
    return "declared";
  case AGENT_CLASS_PROFILE:
    return "profile";
  case AGENT_CLASS_DETECTED:
    return "detected";
  case AGENT_CLASS_HINT:
    return "hint";
  }
  return "invalid";
}

const char *agent_kind_name(enum agent_kind k) {
  return batch_kind_name((enum batch_kind)k);
}

int agent_kind_from_name(const char *name) {
  enum batch_kind k;
  if (name == NULL || *name == '\0')
    return AGENT_KIND_JOB;
  return batch_kind_parse(name, &k) < 0 ? -1 : (int)k;
}

void agent_adm_init(struct agent_adm *adm, const struct batch_config *bcfg,
                    uint64_t batch_window_ms, uint64_t default_hold_ms,
                    const struct agent_adm_ops *ops, void *user) {
  memset(adm, 0, sizeof(*adm));
  adm->bcfg = *bcfg;
  adm->batch_window_ms = batch_window_ms;
  adm->default_hold_ms = default_hold_ms;
  adm->ops = ops;
  adm->user = user;
  adm->next_handle = 1;
  adm->plan_due_ms = UINT64_MAX;
  adm->wake_ms = UINT64_MAX;
  adm->measure_ms = AGENT_MEASURE_MS;
  adm->measure_wait_ms = AGENT_MEASURE_WAIT_MS;
}

static bool disk_punishes(const struct agent_adm *adm);

static const char *nz(const char *s) {
  return s ? s : "";
}

static void schedule_plan(struct agent_adm *adm, uint64_t at) {
  if (at < adm->settle_ms)
    at = adm->settle_ms;
  if (at < adm->plan_due_ms)
    adm->plan_due_ms = at;
}

/* Whether S is UTF-8, as a protobuf string must be (protobuf-c does not
 * check): no overlong forms, no surrogates, nothing past U+10FFFF. */
static bool utf8_ok(const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  while (*p) {
    unsigned c = *p;
    size_t n = c < 0x80                 ? 0
               : c >= 0xc2 && c <= 0xdf ? 1
               : c >= 0xe0 && c <= 0xef ? 2
               : c >= 0xf0 && c <= 0xf4 ? 3
                                        : 9;
    if (n == 9)
      return false;
    unsigned cp = n == 0 ? c : c & (0x3f >> n);
    for (size_t i = 1; i <= n; i++) {
      if ((p[i] & 0xc0) != 0x80)
        return false;
      cp = cp << 6 | (p[i] & 0x3f);
    }
    if ((n == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
        (n == 3 && (cp < 0x10000 || cp > 0x10ffff)))
      return false;
    p += n + 1;
  }
  return true;
}

static int check_text(const char *what, const char *s, size_t max, struct iob_error **err) {
  if (s && strlen(s) > max)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "%s too long: %zu bytes, at most %zu",
                          what, strlen(s), max);
  /* Saved as JSON keys and values (profiles.json), which must be UTF-8:
   * one such name would make every save of the profiles fail. */
  if (s && !utf8_ok(s))
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "%s is not UTF-8", what);
  return 0;
}

static int check_info(const struct agent_ctr_info *in, struct iob_error **err) {
  if (in->id == NULL || *in->id == '\0')
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "container id is empty");
  if (check_text("container id", in->id, AGENT_ID_MAX - 1, err) < 0 ||
      check_text("namespace", in->ns, AGENT_ID_MAX - 1, err) < 0 ||
      check_text("workload key", in->workload_key, AGENT_TEXT_MAX, err) < 0 ||
      check_text("cgroup path", in->cgroup, AGENT_TEXT_MAX, err) < 0 ||
      check_text("bundle path", in->bundle, AGENT_TEXT_MAX, err) < 0 ||
      check_text("source", in->source, AGENT_ID_MAX, err) < 0 ||
      check_text("pod name", in->pod_name, AGENT_ID_MAX - 1, err) < 0 ||
      check_text("pod namespace", in->pod_namespace, AGENT_ID_MAX - 1, err) < 0 ||
      check_text("container name", in->container_name, AGENT_ID_MAX - 1, err) < 0)
    return -1;
  if (agent_kind_from_name(in->kind) < 0)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "unknown kind '%s' (expected job, service or sandbox)", in->kind);
  if (in->cgroup && *in->cgroup && (in->cgroup[0] != '/' || strstr(in->cgroup, "..")))
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "invalid cgroup path '%s': must be absolute, without '..'", in->cgroup);
  enum batch_class declared; /* io.iobatch.class, as the shim and the hook parse it */
  if (in->declared_class && *in->declared_class &&
      iob_ann_class_parse(in->declared_class, &declared, err) < 0)
    return -1;
  return 0;
}

/* Replace *dst with src when src says something (an empty field in a second
 * registration means "not known to this caller", not "forget it"). */
static void update_str(char **dst, const char *src) {
  if (*dst && (src == NULL || *src == '\0'))
    return;
  free(*dst);
  *dst = xstrdup(nz(src));
}

/* An arrival or an admission at NOW: the batch window runs from it. */
static void open_window(struct agent_adm *adm, uint64_t now) {
  if (now + adm->batch_window_ms > adm->window_end_ms)
    adm->window_end_ms = now + adm->batch_window_ms;
}

static void mark_running(struct agent_adm *adm, struct agent_ctr *c, uint64_t now) {
  c->state = AGENT_RUNNING;
  c->plan.admitted_ms = now;
  if (c->plan.arrival_ms == 0)
    c->plan.arrival_ms = now;
  adm->admissions++;
  if (adm->ops && adm->ops->admitted)
    adm->ops->admitted(adm, c, adm->user);
}

int agent_adm_register(struct agent_adm *adm, const struct agent_ctr_info *in, uint64_t now,
                       struct agent_ctr **out, struct iob_error **err) {
  if (check_info(in, err) < 0)
    return -1;
  struct agent_ctr *c = agent_ctr_find(adm, in->ns, in->id);
  bool fresh = c == NULL;
  if (fresh) {
    if (adm->n >= AGENT_MAX_CONTAINERS)
      return iob_error_code(err, IOB_CODE_RESOURCE_EXHAUSTED, "too many containers: %d registered",
                            AGENT_MAX_CONTAINERS);
    c = agent_ctr_new(adm, now);
  }
  update_str(&c->id, in->id);
  update_str(&c->ns, in->ns);
  update_str(&c->workload_key, in->workload_key);
  update_str(&c->cgroup, in->cgroup);
  update_str(&c->bundle, in->bundle);
  update_str(&c->source, in->source);
  update_str(&c->kube.pod_name, in->pod_name);
  update_str(&c->kube.pod_namespace, in->pod_namespace);
  update_str(&c->kube.container_name, in->container_name);
  if (in->pid)
    c->pid = in->pid;
  if (in->max_hold_ms)
    c->decl.max_hold_ms = in->max_hold_ms;
  if (fresh)
    agent_ctr_append(adm, c);
  /* After the names are merged: they decide the tenant. */
  bool trusted = agent_adm_trusted(adm, c);
  agent_ctr_set_kind(c, in->kind, in->kind_from_runtime, trusted);
  agent_adm_declare(adm, c, in->declared_class, trusted, now);
  if (in->running && c->state != AGENT_RUNNING) {
    /* Started while the agent was away (soft state): it runs, whatever a
     * plan would have said; the next plan takes it into account. */
    mark_running(adm, c, now);
    schedule_plan(adm, now);
  }
  if (out)
    *out = c;
  return 0;
}

int agent_adm_admit(struct agent_adm *adm, struct agent_ctr *c, uint32_t max_hold_ms,
                    uint64_t cap_ms, uint64_t now) {
  if (c->state == AGENT_RUNNING)
    return 1;
  if (c->kind == AGENT_KIND_SANDBOX) {
    /* A pod's sandbox does no I/O of its own and every container of the
     * pod waits for it: it is never held and never planned. */
    c->plan.arrival_ms = now;
    mark_running(adm, c, now);
    return 1;
  }
  if (max_hold_ms)
    c->decl.max_hold_ms = max_hold_ms;
  bool trusted = agent_adm_trusted(adm, c);
  c->decl.hold_ignored = c->decl.max_hold_ms && !trusted;
  uint64_t hold = agent_adm_hold_ms(adm, c->decl.max_hold_ms, trusted);
  if (c->state != AGENT_PENDING) {
    c->state = AGENT_PENDING;
    c->plan.arrival_ms = now;
  }
  c->plan.deadline_ms = c->plan.arrival_ms + hold;
  if (cap_ms && cap_ms < c->plan.deadline_ms)
    c->plan.deadline_ms = cap_ms < now ? now : cap_ms;
  /* The batch window gathers arrivals that come together, so that the plan
   * chooses among them.  An arrival with nothing else pending, starting or
   * arrived within the window has nobody to be chosen against (what runs
   * stays pinned either way): planned at once, it starts at once on an
   * idle node or beside containers it does not conflict with.  One that
   * comes within the window of another's arrival or admission is planned
   * when that window ends, with whatever else came in it; arrivals while
   * others wait gather in the window.  On a disk whose measured penalties
   * show harm a first arrival gathers too: which of a burst starts first
   * matters there, and one whose rate is unknown is measured alone. */
  uint64_t at = now;
  if (agent_ctr_count(adm, AGENT_PENDING) > 1 || (adm->measure_ms && disk_punishes(adm)))
    at = now + adm->batch_window_ms;
  else if (now < adm->window_end_ms)
    at = adm->window_end_ms;
  open_window(adm, now);
  schedule_plan(adm, at);
  if (c->plan.deadline_ms < adm->plan_due_ms)
    adm->plan_due_ms = c->plan.deadline_ms; /* even while settling */
  return 0;
}

uint64_t agent_adm_hold_ms(const struct agent_adm *adm, uint32_t declared, bool trusted) {
  if (declared == 0 || !trusted)
    return adm->default_hold_ms;
  uint64_t floor =
      adm->batch_window_ms > AGENT_MIN_HOLD_MS ? adm->batch_window_ms : AGENT_MIN_HOLD_MS;
  if (floor > adm->default_hold_ms)
    floor = adm->default_hold_ms;
  return declared < floor ? floor : declared;
}

bool agent_adm_observe_start(struct agent_adm *adm, double s) {
  if (!(s >= 0) || s > AGENT_START_MAX_S)
    return false;
  adm->start_s = adm->start_n ? adm->start_s + 0.3 * (s - adm->start_s) : s;
  adm->start_n++;
  return adm->start_n == AGENT_START_MIN_SAMPLES;
}

void agent_adm_settle(struct agent_adm *adm, uint64_t until) {
  adm->settle_ms = until; /* plans already due stay due */
}

void agent_adm_detach(struct agent_adm *adm, struct agent_ctr *c, uint64_t now) {
  agent_ctr_unlink(adm, c);
  /* Re-plan even with nothing pending: the weights of the rest change. */
  if (adm->n > 0)
    schedule_plan(adm, now);
}

bool agent_ctr_holdable(const struct agent_ctr *c) {
  static const char *const waits[] = {"shim", "hook", "admit", "iobatchctl"};
  for (size_t i = 0; c->source && i < sizeof(waits) / sizeof(waits[0]); i++)
    if (strcmp(c->source, waits[i]) == 0)
      return true;
  return false;
}

bool agent_adm_trusted(const struct agent_adm *adm, const struct agent_ctr *c) {
  if (adm->ops == NULL || adm->ops->trusts == NULL)
    return true;
  return adm->ops->trusts(agent_ctr_tenant(c), adm->user);
}

void agent_ctr_set_kind(struct agent_ctr *c, const char *kind, bool from_runtime, bool trusted) {
  int k = agent_kind_from_name(kind);
  if (kind == NULL || *kind == '\0' || k < 0)
    return;
  /* The runtime only ever says "sandbox" (wcd/kind.c); anything else
   * with that source is read as the annotation it must have been. */
  if (from_runtime && k == AGENT_KIND_SANDBOX) {
    c->decl.declared_kind[0] = '\0';
    c->decl.kind_untrusted = c->decl.kind_ignored = false;
    c->kind = (enum agent_kind)k;
    return;
  }
  snprintf(c->decl.declared_kind, sizeof(c->decl.declared_kind), "%s", kind);
  c->decl.kind_untrusted = !trusted;
  c->decl.kind_ignored = !trusted && k != AGENT_KIND_JOB;
  c->kind = c->decl.kind_ignored ? AGENT_KIND_JOB : (enum agent_kind)k;
}

/* A hint's confidence: below anything measured with confidence. */
#define HINT_CONFIDENCE 0.5

void agent_adm_declare(struct agent_adm *adm, struct agent_ctr *c, const char *declared,
                       bool trusted, uint64_t now) {
  if (declared == NULL || *declared == '\0')
    return;
  snprintf(c->decl.declared, sizeof(c->decl.declared), "%s", declared);
  c->decl.declared_untrusted = !trusted;
  if (batch_class_names_latency(declared)) {
    /* Latency-sensitive: protected; its I/O class is still detected. */
    if (trusted)
      c->plan.protect = c->plan.protect_declared = true;
    return;
  }
  int cls = batch_class_from_name(declared);
  if (cls < 0)
    return;
  if (trusted)
    agent_adm_set_class(adm, c, (enum batch_class)cls, 1, AGENT_CLASS_DECLARED, now);
  else if (c->class_source == AGENT_CLASS_NONE || c->class_source == AGENT_CLASS_HINT)
    agent_adm_set_class(adm, c, (enum batch_class)cls, HINT_CONFIDENCE, AGENT_CLASS_HINT, now);
}

unsigned agent_adm_measured(struct agent_adm *adm, struct agent_ctr *c, enum batch_class cls,
                            double confidence, bool latency_like, bool protect_detected,
                            uint64_t now) {
  unsigned what = 0;
  bool latency_hint = c->decl.declared_untrusted && batch_class_names_latency(c->decl.declared);
  /* Protection by measurement is the admin's choice (protect = detected),
   * never a tenant's: an untrusted declaration of latency does not raise
   * it (a tenant would otherwise cap its neighbours).  And it lasts only
   * while it is earned: re-checked at every measurement, it is dropped
   * once the container does I/O that no longer looks latency-sensitive
   * (an idle window says nothing).  A trusted declaration's protection
   * stands. */
  if (latency_like && !c->plan.protect && protect_detected && c->kind == AGENT_KIND_JOB) {
    c->plan.protect = true;
    what |= AGENT_MEASURED_PROTECTED;
  } else if (c->plan.protect && !c->plan.protect_declared && !latency_like &&
             batch_class_does_io(cls)) {
    c->plan.protect = false;
    what |= AGENT_MEASURED_UNPROTECTED;
    schedule_plan(adm, now); /* a service no more: planned, capped, held */
  }
  /* An untrusted declaration is a hint: the first measurement that
   * disagrees wins, and is reported once; a declared latency never
   * protects, so the first measurement overrules it unless protection was
   * earned anyway. */
  int dcl = c->decl.declared_untrusted ? batch_class_from_name(c->decl.declared) : -1;
  if (!c->decl.overruled && ((dcl >= 0 && dcl != (int)cls) || (latency_hint && !c->plan.protect))) {
    c->decl.overruled = true;
    what |= AGENT_MEASURED_OVERRULED;
  }
  agent_adm_set_class(adm, c, cls, confidence, AGENT_CLASS_DETECTED, now);
  return what;
}

void agent_adm_set_class(struct agent_adm *adm, struct agent_ctr *c, enum batch_class cls,
                         double confidence, enum agent_class_source src, uint64_t now) {
  if (c->class_source == AGENT_CLASS_DECLARED && src != AGENT_CLASS_DECLARED)
    return;
  bool changed = c->cls != cls;
  c->cls = cls;
  c->confidence = confidence;
  c->class_source = src;
  if (src == AGENT_CLASS_PROFILE)
    c->decl.profile_untrusted = !agent_adm_trusted(adm, c);
  if (changed && c->state != AGENT_CREATED)
    schedule_plan(adm, now);
}

void agent_adm_schedule(struct agent_adm *adm, uint64_t at) {
  schedule_plan(adm, at);
}

uint64_t agent_adm_next_wake(const struct agent_adm *adm) {
  return adm->plan_due_ms < adm->wake_ms ? adm->plan_due_ms : adm->wake_ms;
}

int agent_adm_tick(struct agent_adm *adm, uint64_t now, struct iob_error **err) {
  if (now < agent_adm_next_wake(adm))
    return 0;
  if (agent_adm_plan(adm, now, err) < 0)
    return -1;
  return 1;
}

void agent_adm_job(const struct agent_adm *adm, const struct agent_ctr *c, uint64_t now,
                   struct batch_job *j) {
  memset(j, 0, sizeof(*j));
  j->id = c->handle;
  j->cls = agent_ctr_plan_class(c);
  j->running = c->state == AGENT_RUNNING;
  j->arrival = (double)c->plan.arrival_ms / 1000.0;
  j->start = (double)c->plan.admitted_ms / 1000.0;
  j->deadline = (double)c->plan.deadline_ms / 1000.0;
  j->solo_s = c->profile.solo_s;
  j->solo_bps = c->profile.solo_bps;
  j->observed_bps = c->sample.read_bps + c->sample.write_bps;
  /* A protected container is planned as a service: never held, no slot,
   * open-ended; protection (not the forecast) looks after it. */
  j->service = c->kind == AGENT_KIND_SERVICE || c->plan.protect;
  if (!j->running || j->service || c->profile.solo_s <= 0 || c->profile.solo_bps <= 0)
    return; /* the batcher estimates from time, or treats it as open-ended */
  /* Progress: bytes done against the bytes a whole run moves. */
  double total = c->profile.solo_bps * c->profile.solo_s;
  if (c->sample.bytes_run > adm->bcfg.open_ended_factor * total &&
      (double)(now - c->plan.admitted_ms) / 1000.0 > c->profile.solo_s) {
    /* Far past anything learned: open-ended after all.  Measured, so it
     * holds for a job whose untrusted kind service was ignored too. */
    j->service = true;
    return;
  }
  double left = (total - c->sample.bytes_run) / c->profile.solo_bps;
  /* Past its learned bytes it is still running: expect a little more. */
  j->remaining_s = left > 0.05 * c->profile.solo_s ? left : 0.05 * c->profile.solo_s;
}

static void compute_weights(struct agent_adm *adm, struct agent_ctr **v, struct batch_job *jobs,
                            size_t n) {
  cleanup_free unsigned *w = xcalloc(n + 1, sizeof(unsigned));
  for (size_t i = 0; i < n; i++)
    jobs[i].running = v[i]->state == AGENT_RUNNING;
  /* Errors here only come from invalid jobs, which batch_plan just accepted;
   * keeping the old weights is the safe answer anyway. */
  if (batch_weights(&adm->bcfg, jobs, n, w, NULL) < 0)
    return;
  bool any_protected = false;
  for (size_t i = 0; i < n; i++)
    any_protected = any_protected || (v[i]->plan.protect && v[i]->state == AGENT_RUNNING);
  for (size_t i = 0; i < n; i++) {
    v[i]->plan.weight = w[i];
    /* Where weights are enforced, the protected get the device first. */
    if (any_protected && v[i]->state == AGENT_RUNNING)
      v[i]->plan.weight = v[i]->plan.protect ? 10000 : (w[i] < 100 ? w[i] : 100);
  }
}

/* Whether a measured pair in use says this disk punishes mixing. */
static bool disk_punishes(const struct agent_adm *adm) {
  for (int v = 0; adm->pen && v < BATCH_NCLASS; v++)
    for (int n = 0; n < BATCH_NCLASS; n++) {
      enum batch_class a = (enum batch_class)v, b = (enum batch_class)n;
      if (agent_penalties_in_use(adm->pen, a, b) &&
          agent_penalties_stream(adm->pen, a, b)->slowdown > AGENT_MEASURE_HARM)
        return true;
    }
  return false;
}

/* A pending job whose workload's solo rate is not known: nothing it
 * suffers beside others can be measured.  A class that does no I/O needs
 * only its solo time (else a job that does no I/O would be measured on
 * every run).  Never a tenant the admin does not trust: a fresh workload
 * key per run would hold the others every time. */
static bool rate_unknown(const struct agent_adm *adm, const struct agent_ctr *c) {
  return c->state == AGENT_PENDING && c->kind == AGENT_KIND_JOB && !c->plan.protect &&
         c->workload_key && *c->workload_key && c->profile.solo_bps <= 0 &&
         (batch_class_does_io(agent_ctr_plan_class(c)) || c->profile.solo_s <= 0) &&
         agent_adm_trusted(adm, c);
}

/* Which is measured first: readers before writers, and sequential
 * writers before the rest.  A disk's write cache writes back what a
 * writer wrote after it exited, unseen, and whatever runs next pays for
 * it: a reader measured after a writer would be measured beside its
 * write-back.  Random writes take the longest to write back. */
static int measure_rank(const struct agent_ctr *c) {
  switch (agent_ctr_plan_class(c)) {
  case BATCH_SEQ_READ:
  case BATCH_RAND_READ:
    return 0;
  case BATCH_SEQ_WRITE:
    return 1;
  default:
    return 2;
  }
}

static bool measure_before(const struct agent_ctr *a, const struct agent_ctr *b) {
  return measure_rank(a) < measure_rank(b);
}

/* Measuring alone (struct agent_adm): starts the first pending container
 * of unknown rate (measure_before, then the oldest) alone, or keeps the one that is alone so, by
 * turning the other admissions of decisions D into holds.  A forced admission (max hold, fairness
 * wait) stands.  Returns when to plan again (UINT64_MAX: nothing to wait for). */
static uint64_t measure_alone(struct agent_adm *adm, struct agent_ctr **v, struct batch_decision *d,
                              size_t n, uint64_t now) {
  struct agent_ctr *alone = NULL;
  size_t at = n;
  bool others = false;
  for (size_t i = 0; i < n; i++)
    if (v[i]->state == AGENT_RUNNING) {
      if (v[i]->handle == adm->measuring)
        alone = v[at = i];
      else
        others = true;
    }
  if (alone && (others || now >= adm->measure_until_ms)) {
    alone = NULL; /* measured long enough, or no longer alone: it runs on */
    others = true;
  }
  adm->measuring = alone ? alone->handle : 0;
  if (alone == NULL) {
    if (others || adm->measure_ms == 0 || !disk_punishes(adm))
      return UINT64_MAX;
    size_t first = n;
    for (size_t i = 0; i < n; i++)
      if (rate_unknown(adm, v[i]) &&
          (first == n || measure_before(v[i], v[first]) ||
           (!measure_before(v[first], v[i]) && v[i]->plan.arrival_ms < v[first]->plan.arrival_ms)))
        first = i;
    if (first == n)
      return UINT64_MAX;
    alone = v[at = first];
    if (!d[first].admit || d[first].reason != BATCH_ADMIT_DEADLINE) {
      d[first].admit = true;
      d[first].reason = BATCH_ADMIT_MEASURE;
    }
    adm->measuring = alone->handle;
    adm->measure_until_ms = now + adm->measure_ms;
    adm->measured_alone++;
  }
  uint64_t wake = adm->measure_until_ms;
  for (size_t i = 0; i < n; i++) {
    struct agent_ctr *c = v[i];
    if (c == alone || c->state != AGENT_PENDING || !d[i].admit ||
        d[i].reason == BATCH_ADMIT_DEADLINE || d[i].reason == BATCH_ADMIT_WAITED)
      continue;
    uint64_t until = c->plan.arrival_ms + adm->measure_wait_ms;
    if (now >= until)
      continue;
    d[i].admit = false;
    d[i].reason = BATCH_HOLD_MEASURE;
    d[i].conflict = (long)at; /* what status names it waiting for */
    if (until < wake)
      wake = until;
  }
  return wake;
}

int agent_adm_plan(struct agent_adm *adm, uint64_t now, struct iob_error **err) {
  adm->plan_due_ms = UINT64_MAX;
  size_t n = 0;
  for (struct agent_ctr *c = adm->list; c; c = c->next)
    n += (c->state == AGENT_PENDING || c->state == AGENT_RUNNING) && c->kind != AGENT_KIND_SANDBOX;
  cleanup_free struct agent_ctr **v = xcalloc(n + 1, sizeof(*v));
  cleanup_free struct batch_job *jobs = xcalloc(n + 1, sizeof(*jobs));
  cleanup_free struct batch_decision *d = xcalloc(n + 1, sizeof(*d));
  size_t k = 0;
  for (struct agent_ctr *c = adm->list; c; c = c->next)
    if ((c->state == AGENT_PENDING || c->state == AGENT_RUNNING) && c->kind != AGENT_KIND_SANDBOX) {
      v[k] = c;
      agent_adm_job(adm, c, now, &jobs[k]);
      k++;
    }
  /* Measured pairs replace the matrix where there is enough of them. */
  struct batch_config cfg = adm->bcfg;
  if (adm->pen)
    agent_penalties_apply(adm->pen, &cfg);
  if (adm->start_n >= AGENT_START_MIN_SAMPLES && adm->start_s > cfg.start_s)
    cfg.start_s = adm->start_s;
  double wake_at;
  if (batch_plan(&cfg, jobs, n, (double)now / 1000.0, d, &wake_at, err) < 0)
    return -1;
  adm->plans++;
  adm->wake_ms = UINT64_MAX;
  uint64_t measure_wake = measure_alone(adm, v, d, n, now);
  uint64_t protect_wake = UINT64_MAX; /* the earliest end of a protection hold */
  cleanup_free struct agent_protect_q *q = xcalloc(n + 1, sizeof(*q));
  size_t nq = 0;
  for (size_t i = 0; i < n; i++)
    if (v[i]->state == AGENT_PENDING)
      q[nq++] = (struct agent_protect_q){.c = v[i],
                                         .admit = d[i].admit,
                                         .forced = d[i].reason == BATCH_ADMIT_DEADLINE ||
                                                   d[i].reason == BATCH_ADMIT_WAITED};
  /* Protection may hold what the batcher would start (a victim short of
   * its target, or batch containers started one at a time). */
  const char *victim = adm->protection ? agent_protection_ask(adm->protection, q, nq, now) : "";
  for (size_t i = 0, j = 0; i < n; i++) {
    struct agent_ctr *c = v[i];
    if (c->state == AGENT_RUNNING)
      continue;
    const struct agent_protect_q *a = &q[j++];
    if (a->hold) {
      d[i].admit = false;
      d[i].reason = BATCH_HOLD_PROTECT;
      if (a->until_ms < protect_wake)
        protect_wake = a->until_ms;
    }
    c->plan.reason = (int)d[i].reason;
    c->plan.makespan_admit = d[i].makespan_admit;
    c->plan.makespan_hold = d[i].makespan_hold;
    c->plan.conflict[0] = '\0';
    if (d[i].conflict >= 0 && (size_t)d[i].conflict < n)
      snprintf(c->plan.conflict, sizeof(c->plan.conflict), "%s", v[d[i].conflict]->id);
    if (d[i].reason == BATCH_HOLD_PROTECT)
      snprintf(c->plan.conflict, sizeof(c->plan.conflict), "%s", victim);
    if (d[i].admit) {
      c->plan.forced = d[i].reason == BATCH_ADMIT_DEADLINE;
      adm->forced_admissions += c->plan.forced;
      mark_running(adm, c, now);
      open_window(adm, now); /* starting: a new arrival may be planned with it */
    }
  }
  /* The batcher's wake (the earliest spread max hold or fairness bound of
   * a held job, or the next plan when a burst ran past its forecast
   * budget), rounded up to whole milliseconds so that the plan then finds
   * it due rather than a hair early, over and over. */
  if (isfinite(wake_at) && wake_at > 0) {
    double ms = ceil(wake_at * 1000.0);
    adm->wake_ms = ms < (double)UINT64_MAX ? (uint64_t)ms : UINT64_MAX;
    if (adm->wake_ms <= now)
      adm->wake_ms = now + 1;
  }
  if (protect_wake < adm->wake_ms)
    adm->wake_ms = protect_wake > now ? protect_wake : now + 1;
  if (measure_wake < adm->wake_ms)
    adm->wake_ms = measure_wake > now ? measure_wake : now + 1;
  compute_weights(adm, v, jobs, n);
  return 0;
}
