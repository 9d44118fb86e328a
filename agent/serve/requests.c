// SPDX-License-Identifier: Apache-2.0
/* The agent's requests, decoded (agent/serve/requests.h): validation and state
 * changes for each call of proto/iobatch/agent.proto, without ttrpc. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/serve/fdlimit.h"
#include "agent/kube/kube.h"
#include "agent/plan/learning.h"
#include "batcher/jobfile.h"
#include "agent/serve/requests.h"
#include "cgroupv2/sample.h"
#include "common/cleanup.h"
#include "common/log.h"
#include "common/xalloc.h"

/* Leave the caller this much of its own timeout to act on our answer: a
 * shim whose Start is about to hit containerd's deadline must still start
 * the container, not just learn that it may. */
#define CALLER_MARGIN_MS 1000

void agent_api_admit_reply(const struct agent_ctr *c, bool admitted, const char *reason,
                           uint64_t now, Iobatch__Agent__V1__AdmitResponse *out) {
  Iobatch__Agent__V1__AdmitResponse resp = IOBATCH__AGENT__V1__ADMIT_RESPONSE__INIT;
  resp.admitted = admitted;
  resp.reason = (char *)reason;
  resp.held_ms = c->plan.arrival_ms && now > c->plan.arrival_ms
                     ? (c->state == AGENT_RUNNING ? c->plan.admitted_ms : now) - c->plan.arrival_ms
                     : 0;
  resp.class_ = (char *)batch_class_name(c->cls);
  resp.io_weight = c->weights.weight_written;
  *out = resp;
}

/* KIND_SOURCE_RUNTIME only: an older client's kind (UNSPECIFIED), and any
 * value this agent does not know, count as io.iobatch.kind. */
static bool from_runtime(Iobatch__Agent__V1__KindSource s) {
  return s == IOBATCH__AGENT__V1__KIND_SOURCE__KIND_SOURCE_RUNTIME;
}

/* An untrusted io.iobatch.kind that was ignored (agent_ctr_set_kind): said
 * once per container. */
static void report_kind(struct agent_ctr *c) {
  if (!c->decl.kind_ignored || c->serve.kind_logged)
    return;
  c->serve.kind_logged = true;
  iob_info("'%s' declared kind %s (namespace '%s', not trusted by trust_declared): treated as "
           "a job",
           c->id, c->decl.declared_kind, agent_ctr_tenant(c));
}

/* An untrusted io.iobatch.max-hold-ms that was not used
 * (agent_adm_hold_ms): said once per container. */
static void report_hold(struct agent_ctr *c) {
  if (!c->decl.hold_ignored || c->serve.hold_logged)
    return;
  c->serve.hold_logged = true;
  iob_info("'%s' declared max-hold-ms %u (namespace '%s', not trusted by trust_declared): "
           "ignored, held at most the agent's max_hold",
           c->id, c->decl.max_hold_ms, agent_ctr_tenant(c));
}

/* io.iobatch.latency-target (US, 0: none): a trusted namespace's word is
 * the container's objective (agent/protect/protect.h); any other's is ignored,
 * said once, and the objective is learned. */
static void declare_lat_target(struct agent_api *a, struct agent_ctr *c, uint32_t us) {
  if (us == 0 || c->lat.target_declared_us == us)
    return;
  if (!agent_adm_trusted(a->adm, c)) {
    if (!c->lat.target_ignored)
      iob_info("'%s' declared a latency target of %u us (namespace '%s', not trusted by "
               "trust_declared): ignored, its objective is learned",
               c->id, us, c->ns);
    c->lat.target_ignored = true;
    return;
  }
  c->lat.target_declared_us = us;
  iob_info("'%s' declared a latency target of %u us", c->id, us);
}

/* The directory of C's registered v2 cgroup (NULL: none known, or the
 * root).  Freed by the caller. */
static char *v2_dir(struct agent_api *a, const struct agent_ctr *c) {
  if (!a->sampler->has_io || a->sampler->cgroup_root == NULL || c->cgroup == NULL ||
      c->cgroup[0] != '/' || c->cgroup[1] == '\0')
    return NULL;
  return xasprintf("%s%s", a->sampler->cgroup_root, c->cgroup);
}

/* The hook's first io.weight: journalled, so that the agent
 * puts it back, from a namespace trust_declared trusts only (an untrusted
 * declaration is a hint: the hook writes no weight for it).  True: the
 * hook may write it. */
static bool hook_weight(struct agent_api *a, struct agent_ctr *c,
                        const Iobatch__Agent__V1__RegisterRequest *req) {
  if (req->hook_weight == 0)
    return false;
  if (!agent_adm_trusted(a->adm, c)) {
    iob_info("'%s': no io.weight %u from the hook: namespace '%s' is not trusted to declare its "
             "class",
             c->id, req->hook_weight, agent_ctr_tenant(c));
    return false;
  }
  cleanup_free char *dir = v2_dir(a, c);
  cleanup_error struct iob_error *err = NULL;
  if (dir == NULL) {
    iob_info("'%s': no io.weight %u from the hook: no cgroup v2 directory with io known", c->id,
             req->hook_weight);
    return false;
  }
  if (agent_restore_hook_weight(
          a->restore, dir, req->hook_weight, req->hook_weight_was ? req->hook_weight_was : "",
          req->hook_bfq_weight_was ? req->hook_bfq_weight_was : "", req->cgroup_inode, &err) < 0) {
    iob_warn("'%s': no io.weight %u from the hook: %s", c->id, req->hook_weight, err->msg);
    return false;
  }
  iob_debug("'%s': the hook's io.weight %u journalled for '%s'", c->id, req->hook_weight, dir);
  return true;
}

void agent_api_forget_hook_weight(struct agent_api *a, const struct agent_ctr *c) {
  cleanup_free char *dir = v2_dir(a, c);
  if (dir)
    agent_restore_dir(a->restore, dir, AGENT_RESTORE_HOOK_WEIGHT);
}

int agent_api_register(struct agent_api *a, const Iobatch__Agent__V1__RegisterRequest *req,
                       uint64_t now, Iobatch__Agent__V1__RegisterResponse *out,
                       struct iob_error **err) {
  struct agent_ctr_info in = {
      .id = req->id,
      .ns = req->namespace_,
      .workload_key = req->workload_key,
      .cgroup = req->cgroup,
      .bundle = req->bundle,
      .source = req->source,
      .declared_class = req->declared_class,
      .kind = req->kind,
      .pod_name = req->pod_name,
      .pod_namespace = req->pod_namespace,
      .container_name = req->container_name,
      .pid = req->pid,
      .max_hold_ms = req->max_hold_ms,
      .running = req->running,
      .kind_from_runtime = from_runtime(req->kind_source),
  };
  /* Found under the kubelet's cgroup tree before its shim or hook
   * registered it (an agent restart) in another namespace: theirs is the
   * entry that counts (it can be held). */
  for (struct agent_ctr *o = a->adm->list; o; o = o->next)
    if (o->source && strcmp(o->source, "kubepods") == 0 && req->id && strcmp(o->id, req->id) == 0 &&
        req->namespace_ && strcmp(o->ns, req->namespace_) != 0) {
      a->ops->remove(o, "registered by its runtime", now, a->user);
      break;
    }
  bool fresh = agent_ctr_find(a->adm, req->namespace_, req->id) == NULL;
  struct agent_ctr *c = NULL;
  if (agent_adm_register(a->adm, &in, now, &c, err) < 0) {
    a->metrics->refused_register++;
    return -1;
  }
  a->metrics->registrations += fresh;
  report_kind(c);
  declare_lat_target(a, c, req->latency_target_us);
  agent_pidwatch_add(a->pidwatch, c);
  agent_protection_bind(a->protect, c);
  if (fresh || c->class_source == AGENT_CLASS_NONE)
    agent_learn_apply_profile(a->learn, c);
  agent_kube_pod_changed(a->kube, c); /* the pod rules, over the profile */
  struct cg2_sample base = {0};
  const Iobatch__Agent__V1__IOSample *b = req->baseline;
  int src = b && b->source && *b->source ? cg2_source_from_name(b->source) : CG2_SOURCE_NONE;
  if (b && src >= 0) /* a source the agent does not know is no baseline */
    base = (struct cg2_sample){
        .t_ns = b->monotonic_ns,
        .source = (enum cg2_source)src,
        .io = {.rbytes = b->rbytes, .wbytes = b->wbytes, .rios = b->rios, .wios = b->wios}};
  agent_sampler_add(a->sampler, c, &base);
  iob_info("registered '%s' (namespace '%s', from %s, class %s by %s%s)", c->id, c->ns,
           c->source && *c->source ? c->source : "?", batch_class_name(c->cls),
           agent_class_source_name(c->class_source), req->running ? ", already running" : "");
  Iobatch__Agent__V1__RegisterResponse resp = IOBATCH__AGENT__V1__REGISTER_RESPONSE__INIT;
  resp.class_ = (char *)batch_class_name(c->cls);
  resp.io_weight = c->weights.weight_written;
  resp.hook_weight_journalled = hook_weight(a, c, req);
  *out = resp;
  return 0;
}

int agent_api_admit(struct agent_api *a, const Iobatch__Agent__V1__AdmitRequest *req, uint64_t now,
                    uint64_t cap_ms, struct agent_ctr **ctr, struct iob_error **err) {
  struct agent_ctr *c = agent_ctr_find(a->adm, req->namespace_, req->id);
  if (c == NULL) {
    /* No hook registered it (an engine without our hook, or the agent
     * restarted in between): the Admit carries enough to go on. */
    struct agent_ctr_info in = {.id = req->id,
                                .ns = req->namespace_,
                                .workload_key = req->workload_key,
                                .declared_class = req->declared_class,
                                .kind = req->kind,
                                .kind_from_runtime = from_runtime(req->kind_source),
                                .source = "admit",
                                .max_hold_ms = req->max_hold_ms};
    if (agent_adm_register(a->adm, &in, now, &c, err) < 0) {
      iob_warn("admit '%s' refused: %s", req->id, (*err)->msg);
      a->metrics->refused_admit++;
      return -1;
    }
    a->metrics->registrations++;
    agent_learn_apply_profile(a->learn, c);
  } else if (req->kind && *req->kind && agent_kind_from_name(req->kind) < 0) {
    a->metrics->refused_admit++;
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "unknown kind '%s' (expected job, service or sandbox)", req->kind);
  } else if (req->declared_class && *req->declared_class) {
    enum batch_class cls;
    if (batch_class_parse(req->declared_class, &cls) < 0) {
      a->metrics->refused_admit++;
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "unknown class '%s'",
                            req->declared_class);
    }
    agent_adm_declare(a->adm, c, req->declared_class, agent_adm_trusted(a->adm, c), now);
  }
  /* checked above, or by agent_adm_register */
  agent_ctr_set_kind(c, req->kind, from_runtime(req->kind_source), agent_adm_trusted(a->adm, c));
  report_kind(c);
  declare_lat_target(a, c, req->latency_target_us);
  /* A retry (say, a shim that reconnected): the newest call is the one
   * somebody still waits on. */
  a->ops->supersede(c, a->user);
  if (cap_ms) {
    uint64_t margin = (cap_ms > now ? cap_ms - now : 0) / 10;
    cap_ms -= margin < CALLER_MARGIN_MS ? margin : CALLER_MARGIN_MS;
  }
  *ctr = c;
  int r = agent_adm_admit(a->adm, c, req->max_hold_ms, cap_ms, now);
  report_hold(c);
  return r == 1 ? 1 : 0;
}

bool agent_api_cancel(struct agent_api *a, const Iobatch__Agent__V1__CancelRequest *req,
                      uint64_t now) {
  struct agent_ctr *c = agent_ctr_find(a->adm, req->namespace_, req->id);
  /* Unknown is fine: cancelling twice, or after an agent restart, must not
   * make a Kill or Delete fail. */
  if (c == NULL)
    return false;
  iob_info("cancelled '%s' (%s)", c->id, agent_state_name(c->state));
  a->metrics->cancellations++;
  a->ops->remove(c, "cancelled", now, a->user);
  return true;
}

bool agent_api_exited(struct agent_api *a, const Iobatch__Agent__V1__ExitedRequest *req,
                      uint64_t now) {
  struct agent_ctr *c = agent_ctr_find(a->adm, req->namespace_, req->id);
  if (c == NULL)
    return false;
  iob_info("'%s' exited with status %u after %llu ms", c->id, req->exit_status,
           (unsigned long long)(c->plan.admitted_ms ? now - c->plan.admitted_ms : 0));
  a->ops->remove(c, "exited", now, a->user);
  return true;
}

void agent_api_status_release(Iobatch__Agent__V1__StatusResponse *r) {
  for (size_t i = 0; i < r->n_containers; i++) {
    if (r->containers[i] == NULL)
      continue;
    free(r->containers[i]->reason);
    if (r->containers[i]->waits_for != protobuf_c_empty_string)
      free(r->containers[i]->waits_for);
    if (r->containers[i]->rule != protobuf_c_empty_string)
      free(r->containers[i]->rule);
    free(r->containers[i]);
  }
  free(r->containers);
  for (size_t i = 0; i < r->n_penalties; i++)
    free(r->penalties[i]);
  free(r->penalties);
  if (r->io_pressure_reason != protobuf_c_empty_string)
    free(r->io_pressure_reason);
  if (r->kubepods != protobuf_c_empty_string)
    free(r->kubepods);
}

static char *describe_reason(const struct agent_ctr *c) {
  const char *r = c->plan.reason >= 0 ? batch_reason_name((enum batch_reason)c->plan.reason) : "";
  if (c->state == AGENT_CREATED)
    r = "not started";
  else if (c->state == AGENT_PENDING && c->plan.reason < 0)
    r = "batch window";
  else if (c->state == AGENT_RUNNING && c->kind == AGENT_KIND_SANDBOX)
    r = "admitted: a pod sandbox is never held";
  else if (c->state == AGENT_RUNNING && c->plan.reason < 0)
    r = "registered running";
  return xstrdup(r);
}

/* How status names a container a pending one waits for: its CRI names when
 * it has them (what a kubectl user knows), else its id.  A conflict is
 * recorded by id alone: the same namespace first, else any. */
static void ctr_label(const struct agent_api *a, const char *ns, const char *id, char *buf,
                      size_t n) {
  const struct agent_ctr *c = agent_ctr_find(a->adm, ns, id);
  for (const struct agent_ctr *o = a->adm->list; c == NULL && o; o = o->next)
    if (!strcmp(o->id, id))
      c = o;
  if (c && c->kube.pod_name && *c->kube.pod_name)
    snprintf(buf, n, "%s/%s%s%s ('%.12s')", c->kube.pod_namespace, c->kube.pod_name,
             c->kube.container_name && *c->kube.container_name ? "/" : "",
             c->kube.container_name ? c->kube.container_name : "", c->id);
  else
    snprintf(buf, n, "'%s'", id);
}

/* ContainerStatus.waits_for of a pending container: what would admit it
 * and why it is held, naming the container it conflicts with.  The latest
 * admission (its deadline) is admit_by_ms. */
static char *describe_wait(const struct agent_api *a, const struct agent_ctr *c, uint64_t now) {
  char who[AGENT_ID_MAX * 4 + 16], *s = NULL;
  if (c->state != AGENT_PENDING)
    return NULL;
  if (c->plan.conflict[0])
    ctr_label(a, c->ns, c->plan.conflict, who, sizeof(who));
  else
    snprintf(who, sizeof(who), "a running container");
  switch (c->plan.reason) {
  case BATCH_HOLD_FULL:
    s = xasprintf("a free slot (max concurrency %u reached)", a->bcfg->max_batch);
    break;
  case BATCH_HOLD_MAKESPAN:
    s = xasprintf("%s to finish: holding finishes the set sooner than running beside it", who);
    break;
  case BATCH_HOLD_FAIRNESS:
    s = xasprintf("%s to finish: running beside it would stretch a job beyond %gx its solo time",
                  who, a->bcfg->fairness);
    break;
  case BATCH_HOLD_STARVE:
    s = xasprintf("%s to finish: one of the two runs %gx slower or worse beside the other, and the "
                  "set finishes as soon either way",
                  who, a->bcfg->fairness);
    break;
  case BATCH_HOLD_PLAN:
    s = c->plan.conflict[0] ? xasprintf("a later batch of the plan (conflicts with %s)", who)
                            : xasprintf("a later batch of the plan");
    break;
  case BATCH_HOLD_BEHIND:
    s = c->plan.conflict[0]
            ? xasprintf("%s, held longer and in conflict with it, to start first", who)
            : xasprintf("an older held container it conflicts with to start first");
    break;
  case BATCH_HOLD_NEXT:
    s = xasprintf("the next plan (this one ran out of its forecast budget)");
    break;
  case BATCH_HOLD_MEASURE:
    s = xasprintf("%s to be measured alone: its workload's solo rate is not known, and this "
                  "disk's measured penalties show that mixing hurts",
                  who);
    break;
  case BATCH_HOLD_PROTECT:
    if (a->protect->ctl.objective)
      s = c->plan.conflict[0] ? xasprintf("the latency-sensitive %s to get back under its latency "
                                          "objective (the batch cap is at its floor)",
                                          who)
                              : xasprintf("a latency-sensitive container to get back under its "
                                          "latency objective");
    else
      s = c->plan.conflict[0]
              ? xasprintf("the latency-sensitive %s to get its rate back (it is short of it)", who)
              : xasprintf("a latency-sensitive container to get its rate back");
    break;
  default:
    if (now < a->adm->settle_ms)
      s = xasprintf("the agent's start-up (running containers register again first)");
    else if (c->plan.reason < 0)
      s = xasprintf("the batch window (%llu ms) to close",
                    (unsigned long long)a->cfg->batch_window_ms);
    else
      s = xasprintf("the next plan (last decision: %s)",
                    batch_reason_name((enum batch_reason)c->plan.reason));
  }
  return s;
}

/* C's pod labels into S when asked for and *BUDGET bytes allow. */
static void status_labels(const struct agent_ctr *c, bool asked, size_t *budget,
                          Iobatch__Agent__V1__ContainerStatus *s,
                          Iobatch__Agent__V1__StatusResponse *r) {
  if (!asked || c->kube.n_pod_labels == 0)
    return;
  size_t bytes = 0;
  for (size_t i = 0; i < c->kube.n_pod_labels; i++)
    bytes += strlen(c->kube.pod_labels[i]) + 4; /* tag, length and slack */
  if (bytes > *budget) {
    r->pod_labels_left_out++;
    return;
  }
  *budget -= bytes;
  s->pod_labels = c->kube.pod_labels;
  s->n_pod_labels = c->kube.n_pod_labels;
}

/* A batch job's protection debt and bound (agent/protect/budget.h); the rest of
 * the containers have none. */
static void status_budget(const struct agent_protection *p, const struct agent_ctr *c, uint64_t now,
                          Iobatch__Agent__V1__ContainerStatus *s) {
  s->protection_budget_s = -1;
  struct agent_protection_debt b;
  agent_protection_debt(p, c, now, &b);
  if (!b.batch)
    return;
  s->protection_debt_s = b.debt_s;
  s->protection_budget_s = isinf(b.bound_s) ? -1 : b.bound_s;
  s->budget_source = (char *)b.source;
  s->budget_spent = b.spent;
  s->protection_held_s = b.held_s;
  s->protection_capped_s = b.capped_s;
}

int agent_api_status(struct agent_api *a, const Iobatch__Agent__V1__StatusRequest *req,
                     uint64_t now, Iobatch__Agent__V1__StatusResponse *out,
                     struct iob_error **err) {
  (void)err; /* cannot fail (out of memory aborts); kept for its callers */
  Iobatch__Agent__V1__StatusResponse r = IOBATCH__AGENT__V1__STATUS_RESPONSE__INIT;
  bool labels = req && req->pod_labels;
  size_t label_budget = AGENT_STATUS_LABEL_BYTES;
  r.containers = xcalloc(a->adm->n + 1, sizeof(*r.containers));
  for (struct agent_ctr *c = a->adm->list; c; c = c->next) {
    Iobatch__Agent__V1__ContainerStatus *s = xcalloc(1, sizeof(*s));
    iobatch__agent__v1__container_status__init(s);
    r.containers[r.n_containers++] = s;
    s->id = c->id;
    s->namespace_ = c->ns;
    s->state = (char *)agent_state_name(c->state);
    s->class_ = (char *)batch_class_name(c->cls);
    s->class_source = (char *)agent_class_source_name(c->class_source);
    s->confidence = c->confidence;
    s->read_bps = c->sample.read_bps;
    s->write_bps = c->sample.write_bps;
    s->read_iops = c->sample.read_iops;
    s->write_iops = c->sample.write_iops;
    s->io_weight = c->state == AGENT_RUNNING ? c->plan.weight : 0;
    s->weight_effective = c->weights.weight_effective;
    s->weight_note = c->weights.weight_note;
    if (c->state == AGENT_PENDING)
      s->held_ms = now - c->plan.arrival_ms;
    else if (c->state == AGENT_RUNNING && c->plan.admitted_ms >= c->plan.arrival_ms)
      s->held_ms = c->plan.admitted_ms - c->plan.arrival_ms;
    s->age_ms = now - c->plan.registered_ms;
    s->workload_key = c->workload_key;
    s->pid = c->pid;
    s->reason = describe_reason(c);
    s->conflict = c->plan.conflict;
    s->kind = (char *)agent_kind_name(c->kind);
    s->protected_ = c->plan.protect;
    s->share = c->plan.protect ? c->protect.share : -1;
    s->io_lat_valid = c->lat.valid;
    s->io_lat_approx = c->lat.approx;
    s->io_lat_count = c->lat.count;
    s->io_lat_windows = c->lat.windows;
    s->io_lat_p50_us = c->lat.p50_us;
    s->io_lat_p99_us = c->lat.p99_us;
    s->io_stall_share = c->lat.valid && c->lat.approx ? c->lat.stall : -1;
    if (c->plan.protect) {
      s->lat_target = c->lat.target;
      s->lat_target_source = (char *)agent_lat_target_source_name(c->lat.target_source);
      s->lat_quiet_windows = c->lat.learn.seen;
    } else {
      s->lat_target_source = (char *)"";
    }
    s->cap_bps = (uint64_t)c->caps.bps;
    s->frozen = c->freeze.frozen;
    s->freezes = c->freeze.freezes;
    s->frozen_ms = c->freeze.frozen_ms +
                   (c->freeze.frozen && now > c->freeze.since_ms ? now - c->freeze.since_ms : 0);
    s->declared_class = c->decl.declared;
    s->declared_trusted = c->decl.declared[0] && !c->decl.declared_untrusted;
    s->declared_kind = c->decl.declared_kind;
    s->declared_kind_trusted = c->decl.declared_kind[0] && !c->decl.kind_untrusted;
    s->holdable = agent_ctr_holdable(c);
    s->rule = c->kube.rule_untrusted
                  ? xasprintf("%s (matched by label or QoS class in an untrusted namespace: no "
                              "protection granted)",
                              c->kube.rule)
                  : xstrdup(c->kube.rule);
    s->qos = c->kube.qos;
    s->pod_name = c->kube.pod_name;
    s->pod_namespace = c->kube.pod_namespace;
    s->container_name = c->kube.container_name;
    s->pod_uid = c->kube.pod_uid ? c->kube.pod_uid : (char *)"";
    status_labels(c, labels, &label_budget, s, &r);
    /* a uid alone is the kubelet tree's (agent/kube/kubepods.h), not the CRI's */
    s->pod_meta_source =
        c->kube.pod_uid && *c->kube.pod_uid && c->kube.pod_name && *c->kube.pod_name ? (char *)"cri"
        : c->kube.pod_name && *c->kube.pod_name ? (char *)"annotations"
                                                : (char *)"";
    status_budget(a->protect, c, now, s);
    if (c->state == AGENT_PENDING)
      s->admit_by_ms = c->plan.deadline_ms > now ? c->plan.deadline_ms - now : 0;
    s->waits_for = describe_wait(a, c, now);
    if (s->waits_for == NULL)
      s->waits_for = (char *)protobuf_c_empty_string;
    if (c->kind != AGENT_KIND_SANDBOX && c->state != AGENT_CREATED) {
      struct batch_job j;
      agent_adm_job(a->adm, c, now, &j);
      double left = batch_work_left(a->bcfg, &j, (double)now / 1000.0);
      s->open_ended = !isfinite(left);
      s->work_left_s = isfinite(left) && j.running ? left : 0;
    }
  }
  struct agent_protection_view pv;
  agent_protection_view(a->protect, &pv);
  r.protect_cap_bps = (uint64_t)pv.level_bps;
  r.protect_holding = pv.holding;
  r.protect_batch_io_limit = pv.io_limit;
  r.protect_freeze_batch = pv.batch_n;
  r.protect_frozen = pv.frozen;
  r.protect_ioprio = (char *)pv.ioprio;
  r.protect_ioprio_why = (char *)pv.ioprio_why;
  r.protect_ioprio_ctrs = pv.ioprio_ctrs;
  r.protect_ioprio_tasks = pv.ioprio_tasks;
  r.protect_help_ratio = pv.help_ratio;
  r.protect_released = pv.released;
  r.protect_released_why = (char *)pv.released_why;
  r.protect_objective = pv.objective;
  r.protect_lat_ratio = pv.worst_lat_ratio;
  r.protect_victim = (char *)pv.victim;
  r.io_pressure = pv.pressure;
  if (r.io_pressure)
    r.io_pressure_reason =
        pv.objective ? (pv.missed ? xasprintf("'%.64s' misses its latency objective (%.1fx)",
                                              pv.victim, pv.worst_lat_ratio)
                                  : xasprintf("'%.64s' recovering: %u of %d windows without a miss",
                                              pv.victim, pv.ok_windows, PROTECT_PRESSURE_OFF))
                     : xasprintf("'%.64s' is short of its rate alone", pv.victim);
  r.penalties = xcalloc(BATCH_NCLASS * BATCH_NCLASS + 1, sizeof(*r.penalties));
  for (int v = 0; v < BATCH_NCLASS; v++)
    for (int n = 0; n < BATCH_NCLASS; n++) {
      const struct agent_pen_stream *e =
          agent_penalties_stream(a->pen, (enum batch_class)v, (enum batch_class)n);
      if (e == NULL)
        continue;
      Iobatch__Agent__V1__PenaltyPair *pp = xcalloc(1, sizeof(*pp));
      iobatch__agent__v1__penalty_pair__init(pp);
      pp->victim = (char *)batch_class_name((enum batch_class)v);
      pp->neighbour = (char *)batch_class_name((enum batch_class)n);
      pp->slowdown = e->slowdown;
      pp->samples = e->samples;
      pp->coruns = e->coruns;
      pp->in_use = agent_penalties_in_use(a->pen, (enum batch_class)v, (enum batch_class)n);
      r.penalties[r.n_penalties++] = pp;
    }
  r.policy = (char *)batch_policy_name(a->bcfg->policy);
  r.matrix_source = (char *)a->matrix_source;
  /* 0: nothing is held for capacity (the predictive policy without
   * max_concurrency), as the startup log says */
  r.max_concurrency =
      a->bcfg->cap_running || a->bcfg->policy == BATCH_POLICY_PAPER ? a->bcfg->max_batch : 0;
  r.sampler = (char *)agent_sampler_name(a->sampler);
  r.latency_source = (char *)agent_lathist_mode_name(a->sampler->lat.mode);
  r.latency_note = a->sampler->lat.why ? a->sampler->lat.why : "";
  r.kubepods = a->kube->kubepods ? agent_kubepods_describe(a->kube->kubepods) : xstrdup("off");
  r.cri = (char *)agent_podmeta_note(a->podmeta);
  r.cri_polls = a->podmeta->polls;
  r.windows_idle = a->metrics->windows_idle;
  r.windows_full = a->metrics->windows_full;
  r.sampler_passes = a->sampler->round;
  r.sampler_samples = a->sampler->samples;
  r.plans = a->adm->plans;
  r.admissions = a->adm->admissions;
  r.forced_admissions = a->adm->forced_admissions;
  r.profiles = (uint32_t)a->learn->profiles->n;
  r.batch_window_ms = a->cfg->batch_window_ms;
  agent_fdlimit_usage(&r.open_fds, &r.fd_limit);
  *out = r;
  return 0;
}

void agent_api_plan_free(Iobatch__Agent__V1__PlanResponse *r) {
  if (r == NULL)
    return;
  for (size_t b = 0; b < r->n_batches; b++) {
    if (r->batches[b] == NULL)
      continue;
    free(r->batches[b]->names); /* the names belong to the request */
    free(r->batches[b]);
  }
  free(r->batches);
  free(r);
}

/* The plan as a PlanResponse; the names arrays move from p to it. */
static void plan_response(struct batch_jobfile_plan *p, Iobatch__Agent__V1__PlanResponse **out) {
  Iobatch__Agent__V1__PlanResponse *r = xcalloc(1, sizeof(*r));
  iobatch__agent__v1__plan_response__init(r);
  r->objective = p->objective;
  r->optimal = p->optimal;
  r->solver = (char *)p->solver;
  r->batches = xcalloc(p->n_batches + 1, sizeof(*r->batches));
  for (size_t b = 0; b < p->n_batches; b++) {
    Iobatch__Agent__V1__PlanBatch *pb = xcalloc(1, sizeof(*pb));
    iobatch__agent__v1__plan_batch__init(pb);
    r->batches[r->n_batches++] = pb;
    pb->names = p->batches[b].names;
    pb->n_names = p->batches[b].n_names;
    pb->penalty = p->batches[b].penalty;
    p->batches[b].names = NULL;
  }
  *out = r;
}

int agent_api_plan_check(struct agent_api *a, const Iobatch__Agent__V1__PlanRequest *req,
                         struct batch_config *cfg, struct iob_error **err) {
  *cfg = *a->bcfg;
  if (req->cap > BATCH_MAX_BATCH)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "cap %u out of range 1..%d", req->cap,
                          BATCH_MAX_BATCH);
  if (req->cap)
    cfg->max_batch = req->cap;
  /* proto3 cannot tell 0 from unset; 0 means "the agent's alpha". */
  if (req->alpha > 0 && req->alpha <= 1)
    cfg->alpha = req->alpha;
  else if (req->alpha != 0)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "alpha %g out of range (0, 1]",
                          req->alpha);
  return 0;
}

int agent_api_plan_solve(const struct batch_config *cfg, const Iobatch__Agent__V1__PlanRequest *req,
                         Iobatch__Agent__V1__PlanResponse **out, struct iob_error **err) {
  /* The count comes from the request: checked before the copy it sizes. */
  if (req->n_jobs > BATCH_JOBFILE_MAX_JOBS)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "too many jobs: %zu, at most %d",
                          req->n_jobs, BATCH_JOBFILE_MAX_JOBS);
  cleanup_free struct batch_jobfile_job *jobs = xcalloc(req->n_jobs + 1, sizeof(*jobs));
  for (size_t i = 0; i < req->n_jobs; i++)
    jobs[i] = (struct batch_jobfile_job){.name = req->jobs[i]->name,
                                         .cls = req->jobs[i]->class_,
                                         .solo_s = req->jobs[i]->solo_seconds};
  struct batch_jobfile_plan p;
  if (batch_jobfile_solve(cfg, jobs, req->n_jobs, &p, err) < 0)
    return -1;
  plan_response(&p, out);
  batch_jobfile_plan_release(&p);
  return 0;
}

int agent_api_plan(struct agent_api *a, const Iobatch__Agent__V1__PlanRequest *req,
                   Iobatch__Agent__V1__PlanResponse **out, struct iob_error **err) {
  struct batch_config cfg;
  if (agent_api_plan_check(a, req, &cfg, err) < 0)
    return -1;
  return agent_api_plan_solve(&cfg, req, out, err);
}
