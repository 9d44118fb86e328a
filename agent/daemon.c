// SPDX-License-Identifier: Apache-2.0
#include "agent/daemon.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "agent/serve/fdlimit.h"
#include "agent/store/lock.h"
#include "agent/serve/metrics_server.h"
#include "agent/serve/requests.h"
#include "common/cleanup.h"
#include "common/log.h"
#include "common/xalloc.h"

/* A registered container that never asks to start is dropped after this
 * (see expire_created). */
#define AGENT_CREATED_TTL_MS (10 * 60 * 1000)

static void on_plan_timer(struct iob_loop *loop, void *data);
static void reload(struct agent_daemon *d);

static void on_admitted(struct agent_adm *adm, struct agent_ctr *c, void *user) {
  (void)adm;
  struct agent_daemon *d = user;
  const char *why = c->kind == AGENT_KIND_SANDBOX ? "admitted: a pod sandbox is never held"
                    : c->plan.reason >= 0 ? batch_reason_name((enum batch_reason)c->plan.reason)
                                          : "running";
  uint64_t held = c->plan.admitted_ms - c->plan.arrival_ms;
  if (c->plan.forced)
    iob_warn("admitted '%s' (%s) by force after %llu ms: its deadline came%s%s", c->id,
             batch_class_name(c->cls), (unsigned long long)held,
             c->plan.conflict[0] ? "; it conflicts with " : "", c->plan.conflict);
  else
    iob_info("admitted '%s' (%s) after %llu ms: %s", c->id, batch_class_name(c->cls),
             (unsigned long long)held, why);
  /* What a decision to admit beside others rested on: its own solo time
   * and the two forecasts of the set's finish (batch_plan). */
  if (c->plan.makespan_admit > 0 || c->plan.makespan_hold > 0)
    iob_debug("'%s': solo %.2f s; the set finishes in %.2f s admitted now, %.2f s held", c->id,
              c->profile.solo_s, c->plan.makespan_admit, c->plan.makespan_hold);
  agent_metrics_admitted(&d->metrics, c, held);
  agent_server_answer(c, true, why);
  agent_protection_admitted(&d->protect, c);
}

static bool trusts(const char *ns, void *user) {
  struct agent_daemon *d = user;
  return agent_config_trusts(&d->cfg, ns);
}

static const struct agent_adm_ops adm_ops = {.admitted = on_admitted, .trusts = trusts};

/* The ops the daemon gives its parts (sampler, server, kube): they reach the
 * daemon only through these, so that none of them calls into daemon.c. */
static void remove_ctr(struct agent_ctr *c, const char *why, uint64_t now, void *user) {
  agent_daemon_remove(user, c, why, now);
}

static void state_changed(void *user) {
  agent_daemon_changed(user);
}

static const struct agent_server_ops server_ops = {.changed = state_changed, .remove = remove_ctr};

/* A watched pid ended with no exit reported (agent/serve/pidwatch.h). */
static void pid_ended(void *user, struct agent_ctr *c) {
  agent_daemon_remove(user, c, "exited", iob_now_ms());
  agent_daemon_changed(user);
}

static const struct agent_pidwatch_ops pidwatch_ops = {.ended = pid_ended};

static const struct agent_kube_ops kube_ops = {.remove = remove_ctr};

static void supersede(struct agent_ctr *c, void *user) {
  (void)user;
  agent_server_supersede(c);
}

/* What the request steps (agent/serve/requests.c) ask of the daemon and the
 * server. */
static const struct agent_api_ops api_ops = {.remove = remove_ctr, .supersede = supersede};

static void sampler_learn(const struct agent_ctr *c, const struct agent_profile_update *u,
                          void *user) {
  struct agent_daemon *d = user;
  agent_learn_sampled(&d->learn, c, u);
}

static const struct agent_sampler_ops sampler_ops = {.gone = remove_ctr, .learn = sampler_learn};

/* What the sampler is given of the daemon. */
static struct agent_sampler_env sampler_env(struct agent_daemon *d) {
  return (struct agent_sampler_env){
      .adm = &d->adm, .pen = &d->penalties, .ops = &sampler_ops, .user = d};
}

/* A protected container's learned objective went into its profile:
 * written soon, as after an exit. */
static void objective_learned(void *user) {
  struct agent_daemon *d = user;
  agent_learn_save_soon(&d->learn);
}

static const struct agent_protection_ops protection_ops = {.learned = objective_learned};

void agent_daemon_remove(struct agent_daemon *d, struct agent_ctr *c, const char *why,
                         uint64_t now) {
  agent_sampler_finish(&d->sampler, c); /* its last co-run teaches, before its run does */
  agent_adm_detach(&d->adm, c, now);
  agent_learn_run_ended(&d->learn, c, now);
  agent_server_answer(c, false, why);
  agent_sampler_forget(c);
  agent_protection_forget(&d->protect, c);
  agent_api_forget_hook_weight(&d->api, c);
  agent_pidwatch_forget(&d->pidwatch, c);
  agent_ctr_free(c);
  /* The last one leaves no plan behind (nothing to plan), and so no
   * weights pass: put back what was written for it now. */
  if (agent_ctr_count(&d->adm, AGENT_RUNNING) == 0 && !d->headless)
    agent_weights_apply_all(&d->weights, d->adm.list);
}

static void arm_plan_timer(struct agent_daemon *d) {
  uint64_t at = agent_adm_next_wake(&d->adm);
  if (d->plan_timer && d->plan_timer_at == at)
    return;
  if (d->plan_timer) {
    iob_timer_cancel(d->loop, d->plan_timer);
    d->plan_timer = NULL;
  }
  if (at == UINT64_MAX || d->stopping || d->loop == NULL)
    return;
  uint64_t now = iob_now_ms();
  d->plan_timer = iob_loop_timer(d->loop, at > now ? at - now : 0, on_plan_timer, d);
  d->plan_timer_at = at;
}

static void apply_weights(struct agent_daemon *d) {
  agent_weights_apply_all(&d->weights, d->adm.list);
}

void agent_daemon_changed(struct agent_daemon *d) {
  cleanup_error struct iob_error *err = NULL;
  uint64_t t0 = agent_metrics_now_ns();
  int r = agent_adm_tick(&d->adm, iob_now_ms(), &err);
  if (r > 0)
    agent_metrics_planned(&d->metrics, agent_metrics_now_ns() - t0);
  if (r < 0)
    /* The batcher refused this state (it should not); admitting nothing
     * now is safe: deadlines still force admission on the next tick. */
    iob_err("planning failed: %s", err->msg);
  if (r > 0)
    apply_weights(d);
  arm_plan_timer(d);
}

static void on_plan_timer(struct iob_loop *loop, void *data) {
  (void)loop;
  struct agent_daemon *d = data;
  d->plan_timer = NULL; /* fired timers are freed by the loop */
  agent_daemon_changed(d);
}

/* Registered but never asked to start (a failed create, a container
 * created and left): after AGENT_CREATED_TTL_MS it is dropped, so the
 * table cannot fill with them.  An Admit that comes later registers it
 * again from what the Admit carries. */
static void expire_created(struct agent_daemon *d, uint64_t now) {
  struct agent_ctr *next;
  for (struct agent_ctr *c = d->adm.list; c; c = next) {
    next = c->next;
    if (c->state == AGENT_CREATED && now - c->plan.registered_ms >= AGENT_CREATED_TTL_MS) {
      iob_info("'%s' dropped: registered %llu ms ago and never asked to start", c->id,
               (unsigned long long)(now - c->plan.registered_ms));
      agent_daemon_remove(d, c, "never started", now);
    }
  }
}

/* More than one running container did I/O in the last window. */
static bool sharing_disk(const struct agent_adm *adm) {
  unsigned n = 0;
  for (const struct agent_ctr *c = adm->list; c && n < 2; c = c->next)
    n += c->state == AGENT_RUNNING && c->sample.io_now;
  return n > 1;
}

/* A window with no container registered or found: nothing to sample,
 * classify, weigh or plan, and a registration or an Admit plans by
 * itself (agent_daemon_changed).  The first such window after a full one
 * (or the first of all) still takes the node's gauges to what an empty
 * node shows (headroom, protection: each converges in one window with
 * nobody there and stays); later ones only count, and the headroom's
 * decay over them is taken at the next full window. */
static void idle_window(struct agent_daemon *d, uint64_t now) {
  double win = (double)d->cfg.sample_period_ms / 1000.0;
  d->metrics.windows_idle++;
  agent_sampler_idle(&d->sampler);
  if (!d->idle_settled) {
    agent_headroom_window(&d->headroom, NULL, win);
    agent_protection_window(&d->protect, now, win);
    d->idle_settled = true;
  } else {
    d->idle_s += win;
  }
  /* Put-backs of containers that left may still wait (agent/store/restore.h). */
  agent_restore_retry(&d->restore);
  agent_learn_save_due(&d->learn, now);
}

static void full_window(struct agent_daemon *d) {
  double win = (double)d->cfg.sample_period_ms / 1000.0;
  d->metrics.windows_full++;
  agent_podmeta_fill_new(&d->podmeta); /* registered since the last CRI poll */
  agent_sampler_run(&d->sampler);
  agent_headroom_window(&d->headroom, d->adm.list, win + d->idle_s);
  d->idle_s = 0;
  d->idle_settled = false;
  if (agent_protection_window(&d->protect, iob_now_ms(), win))
    agent_adm_schedule(&d->adm, iob_now_ms());
  uint64_t now = iob_now_ms();
  /* New rates move the weights (measured slowdowns close the loop) and the
   * forecasts of the predictive policy: plan again while containers share
   * the disk (more than one doing I/O; weights act only between those) or
   * wait, unless a plan is already due (the batch window of an arrival
   * must not be cut short).  Not every window for a thousand idle ones:
   * that plan was most of the agent's CPU (bench/agent-overhead.sh). */
  if ((sharing_disk(&d->adm) || agent_ctr_count(&d->adm, AGENT_PENDING) > 0) &&
      d->adm.plan_due_ms == UINT64_MAX)
    agent_adm_schedule(&d->adm, now);
  expire_created(d, now);
  /* Put-backs that failed for a passing reason (agent/store/restore.h). */
  agent_restore_retry(&d->restore);
  agent_learn_save_due(&d->learn, now);
  agent_daemon_changed(d);
}

static void on_sample_timer(struct iob_loop *loop, void *data) {
  struct agent_daemon *d = data;
  uint64_t now = iob_now_ms();
  agent_kube_sync(&d->kube, now); /* what it finds makes the window a full one */
  if (d->adm.list == NULL)
    idle_window(d, now);
  else
    full_window(d);
  d->sample_timer = iob_loop_timer(loop, d->cfg.sample_period_ms, on_sample_timer, d);
}

/* The kubelet's tree changed: drained here, walked at the next window. */
static void on_kubepods_event(struct iob_loop *loop, int fd, uint32_t events, void *data) {
  (void)loop;
  (void)fd;
  (void)events;
  struct agent_daemon *d = data;
  agent_kubepods_events(&d->kubepods);
}

static void on_signal(struct iob_loop *loop, int fd, uint32_t events, void *data) {
  (void)events;
  struct agent_daemon *d = data;
  struct signalfd_siginfo si;
  while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
    if (si.ssi_signo == SIGHUP) {
      iob_info("signal %u: reloading the configuration", si.ssi_signo);
      reload(d);
    } else if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT) {
      iob_info("signal %u: shutting down", si.ssi_signo);
      d->exit_signal = (int)si.ssi_signo;
      iob_loop_stop(loop);
    }
  }
}

static int setup_signals(struct agent_daemon *d, struct iob_error **err) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  sigaddset(&set, SIGPIPE); /* a peer that went away is an EPIPE, not a death */
  if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
    return iob_error(err, errno, "sigprocmask");
  sigdelset(&set, SIGPIPE);
  d->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
  if (d->sigfd < 0)
    return iob_error(err, errno, "signalfd");
  return iob_loop_add(d->loop, d->sigfd, EPOLLIN, on_signal, d, err);
}

/* What caps concurrency: the predictive policy caps only when
 * max_concurrency is set; the paper policy's batches always have max_batch. */
static const char *concurrency_note(const struct batch_config *b, char *buf, size_t len) {
  if (b->cap_running || b->policy == BATCH_POLICY_PAPER)
    snprintf(buf, len, "max concurrency %u", b->max_batch);
  else
    snprintf(buf, len, "no concurrency cap");
  return buf;
}

/* A scrape: the gauges as they are now, the counters since the start. */
static int render_metrics(void *user, char **out, size_t *len, struct iob_error **err) {
  struct agent_daemon *d = user;
  struct agent_metrics_view v = {.policy = batch_policy_name(d->bcfg.policy),
                                 .matrix = d->matrix_source,
                                 .sampler = agent_sampler_name(&d->sampler),
                                 .latency_source = agent_lathist_mode_name(d->sampler.lat.mode),
                                 .prot = &d->protect,
                                 .headroom = &d->headroom,
                                 .node_io = &d->sampler.node_io};
  agent_fdlimit_usage(&v.open_fds, &v.fd_limit);
  v.sampler_passes = d->sampler.round;
  v.sampler_samples = d->sampler.samples;
  v.sampler_pressure_reads = d->sampler.pressure_reads;
  agent_metrics_view_count(&v, d->adm.list, iob_now_ms());
  return agent_metrics_render(&d->metrics, &v, out, len, err);
}

/* SIGHUP with a changed 'metrics' (agent_metrics_server_replace): a
 * failure fails the whole reload, like any other bad value. */
static int reload_metrics(struct agent_daemon *d, const char *spec, unsigned group,
                          struct iob_error **err) {
  const char *old = d->cfg.metrics;
  if (((old == NULL && spec == NULL) || (old && spec && strcmp(old, spec) == 0)) &&
      group == d->cfg.metrics_group)
    return 0;
  if (agent_metrics_server_replace(&d->metrics_server, d->loop, spec, group, d->cfg.socket_path,
                                   render_metrics, d, err) < 0)
    return -1;
  iob_info("metrics endpoint %s%s", spec ? "now on " : "closed", spec ? spec : "");
  return 0;
}

/* The configuration in force (d->cfg, and the batcher settings d->bcfg
 * read with it from matrix_source) given to each part that takes some of
 * it: at start (agent_daemon_init, _init_headless) and at each reload
 * alike, so that a value reloaded acts as it does from the start.  W: the
 * detector's thresholds read with it (NULL: what the sampler read at its
 * init).  Nothing here can fail: what can was done before. */
static void apply_config(struct agent_daemon *d, const struct wcd_config *w) {
  d->adm.bcfg = d->bcfg;
  d->adm.batch_window_ms = d->cfg.batch_window_ms;
  d->adm.default_hold_ms = d->cfg.max_hold_ms;
  /* a lower cap evicts as profiles are next learned */
  d->profiles.per_ns_max = d->cfg.profiles_per_namespace;
  agent_protection_configure(&d->protect, &d->cfg);
  if (w)
    d->sampler.wcd = *w;
  d->sampler.protect_detected = d->cfg.protect_detected;
  d->sampler.protect_signal = d->cfg.protect_signal;
  agent_podmeta_configure(&d->podmeta, &d->cfg);
  if (!d->headless)
    iob_log_init("iobatchd", d->cfg.debug);
  /* Pod rules: applied again to every container; what was declared keeps
   * its standing (trust_declared is for declarations from now on). */
  for (struct agent_ctr *c = d->adm.list; c; c = c->next)
    agent_kube_pod_changed(&d->kube, c);
}

/* SIGHUP: read the configuration again.  Everything is parsed before
 * anything is applied, so a broken file leaves the daemon as it was. */
int agent_daemon_reload(struct agent_daemon *d, struct iob_error **err) {
  struct agent_config nc;
  struct batch_config nb;
  struct wcd_config nw;
  char source[sizeof(d->matrix_source)];
  agent_config_default(&nc);
  wcd_config_default(&nw);
  if (agent_config_from_options(&nc, &d->opts, err) < 0 ||
      agent_config_batch(&nc, &nb, source, sizeof(source), err) < 0 ||
      (nc.detector_file && wcd_config_load(nc.detector_file, &nw, err) < 0) ||
      reload_metrics(d, nc.metrics, nc.metrics_group, err) < 0) {
    agent_config_release(&nc);
    return -1;
  }
  agent_config_keep_restart_only(&nc, &d->cfg);
  agent_config_release(&d->cfg);
  d->cfg = nc; /* its strings move */
  d->bcfg = nb;
  snprintf(d->matrix_source, sizeof(d->matrix_source), "%s", source);
  apply_config(d, &nw);
  char cap[64];
  iob_info("configuration reloaded: policy %s, %s, matrix %s", batch_policy_name(d->bcfg.policy),
           concurrency_note(&d->bcfg, cap, sizeof(cap)), d->matrix_source);
  /* What was held under the old settings may start under the new ones. */
  agent_adm_schedule(&d->adm, iob_now_ms());
  agent_daemon_changed(d);
  return 0;
}

static void reload(struct agent_daemon *d) {
  cleanup_error struct iob_error *err = NULL;
  if (agent_daemon_reload(d, &err) < 0)
    iob_err("reload failed, the running configuration stays: %s", err->msg);
}

/* Everything but the loop, sockets, signals and sampler. */
static int init_state(struct agent_daemon *d, const struct agent_config *cfg, bool lock,
                      struct iob_error **err) {
  memset(d, 0, sizeof(*d));
  /* First: agent_daemon_release lifts caps and thaws through these, even
   * after an init that failed here (a second agent on the state dir). */
  agent_protection_init(&d->protect, &d->adm, &d->restore, &d->profiles, NULL, &protection_ops, d);
  agent_learn_init(&d->learn, &d->profiles, &d->penalties, &d->adm);
  d->kube = (struct agent_kube){.adm = &d->adm,
                                .rules = &d->cfg.pod_rules,
                                .protect = &d->protect,
                                .sampler = &d->sampler,
                                .metrics = &d->metrics,
                                .ops = &kube_ops,
                                .user = d};
  d->api = (struct agent_api){.adm = &d->adm,
                              .sampler = &d->sampler,
                              .pidwatch = &d->pidwatch,
                              .protect = &d->protect,
                              .restore = &d->restore,
                              .learn = &d->learn,
                              .kube = &d->kube,
                              .metrics = &d->metrics,
                              .pen = &d->penalties,
                              .podmeta = &d->podmeta,
                              .cfg = &d->cfg,
                              .bcfg = &d->bcfg,
                              .matrix_source = d->matrix_source,
                              .ops = &api_ops,
                              .user = d};
  d->sigfd = -1;
  d->lock_fd = -1;
  agent_headroom_init(&d->headroom);
  agent_config_copy(&d->cfg, cfg);
  if (d->cfg.socket_path == NULL)
    d->cfg.socket_path = xstrdup(AGENT_DEFAULT_SOCKET);
  if (d->cfg.state_dir == NULL)
    d->cfg.state_dir = xstrdup(AGENT_DEFAULT_STATE_DIR);
  /* Before anything is loaded from the state directory, and before the
   * socket: a second agent on the same state directory stops here, even
   * one on another socket. */
  if (lock && agent_lock_state_dir(d->cfg.state_dir, &d->lock_fd, err) < 0)
    return -1;
  d->learn.saves = d->lock_fd >= 0;
  if (agent_config_batch(&d->cfg, &d->bcfg, d->matrix_source, sizeof(d->matrix_source), err) < 0)
    return -1;
  agent_adm_init(&d->adm, &d->bcfg, d->cfg.batch_window_ms, d->cfg.max_hold_ms, &adm_ops, d);
  /* Alone for five sampling windows and a start (admission.h). */
  d->adm.measure_ms = 5 * d->cfg.sample_period_ms + 1000;
  d->adm.measure_wait_ms = 3 * d->adm.measure_ms;
  if (agent_profiles_init(&d->profiles, d->cfg.state_dir, err) < 0)
    return -1;
  d->profiles.per_ns_max = d->cfg.profiles_per_namespace;
  if (agent_penalties_init(&d->penalties, d->cfg.state_dir, err) < 0)
    return -1;
  d->adm.pen = &d->penalties;
  d->adm.protection = &d->protect; /* the plan asks it before each start */
  agent_weights_init(&d->weights, &d->sampler, &d->restore, &d->metrics);
  cleanup_error struct iob_error *penerr = NULL;
  if (agent_penalties_load(&d->penalties, &penerr) < 0)
    iob_warn("%s", penerr->msg); /* measured again from the next co-runs */
  cleanup_error struct iob_error *perr = NULL;
  if (agent_profiles_load(&d->profiles, &perr) < 0)
    /* Losing learnt profiles costs some wrong first guesses, not
     * correctness: the agent runs without them (the file is kept). */
    iob_warn("%s", perr->msg);
  return 0;
}

int agent_daemon_init_headless(struct agent_daemon *d, const struct agent_config *cfg,
                               struct iob_error **err) {
  if (init_state(d, cfg, false, err) < 0)
    return -1;
  d->headless = true;
  const struct agent_sampler_env env = sampler_env(d);
  agent_sampler_init_headless(&d->sampler, &d->cfg, &env);
  apply_config(d, NULL);
  return 0;
}

int agent_daemon_init(struct agent_daemon *d, const struct agent_config *cfg,
                      const struct agent_options *opts, struct iob_error **err) {
  if (init_state(d, cfg, true, err) < 0)
    return -1;
  d->opts = *opts; /* argv strings: they live as long as the process */
  const struct agent_sampler_env env = sampler_env(d);
  if (agent_sampler_init(&d->sampler, &d->cfg, &env, err) < 0)
    return -1;
  if (!d->cfg.kubepods_off) {
    agent_kubepods_init(&d->kubepods, NULL, d->cfg.kubepods_root);
    d->kubepods.cri_kind = agent_podmeta_kp_kind; /* sandboxes by the CRI's ids */
    d->kubepods.cri_user = &d->podmeta;
    d->kubepods_on = true;
    d->kube.kubepods = &d->kubepods; /* walked each window it is due */
  }
  if (iob_loop_new(&d->loop, err) < 0)
    return -1;
  d->learn.loop = d->loop;
  /* The tree's events wake the loop, rather than every window reading
   * them. */
  int kfd = d->kubepods_on ? agent_kubepods_fd(&d->kubepods) : -1;
  if (kfd >= 0 && iob_loop_add(d->loop, kfd, EPOLLIN, on_kubepods_event, d, err) < 0)
    return -1;
  d->kubepods.ino_watched = kfd >= 0;
  agent_pidwatch_init(&d->pidwatch, d->loop, &pidwatch_ops, d);
  if (setup_signals(d, err) < 0)
    return -1;
  if (agent_server_setup(&d->server, d->loop, d->cfg.socket_path, &d->api, &server_ops, d, err) < 0)
    return -1;
  /* Once the socket is ours (a second agent stops above, and must not put
   * back what the running one wrote), and before the loop runs anything
   * that writes: what an agent that was killed left in cgroup files goes
   * back first, so that what this one remembers as "what was there" is
   * what was there before any agent. */
  if (agent_restore_init(&d->restore, d->cfg.state_dir, NULL, err) < 0)
    return -1;
  cleanup_error struct iob_error *rerr = NULL;
  if (agent_restore_replay(&d->restore, &rerr) < 0)
    iob_warn("%s", rerr->msg);
  d->live_mark = xasprintf("%s.live", d->cfg.socket_path);
  if (agent_lock_mark_live(d->live_mark))
    agent_adm_settle(&d->adm, iob_now_ms() + AGENT_SETTLE_MS);
  if (agent_metrics_server_open_beside(d->loop, d->cfg.metrics, d->cfg.metrics_group,
                                       d->cfg.socket_path, render_metrics, d, &d->metrics_server,
                                       err) < 0)
    return -1;
  d->sample_timer = iob_loop_timer(d->loop, d->cfg.sample_period_ms, on_sample_timer, d);
  agent_podmeta_init(&d->podmeta, d->loop, &d->adm, agent_kube_cri_changed, &d->kube);
  apply_config(d, NULL);
  char cap[64];
  iob_info("listening on '%s'; policy %s, %s, matrix %s, sampler %s, "
           "%zu profiles from '%s'%s%s",
           d->cfg.socket_path, batch_policy_name(d->bcfg.policy),
           concurrency_note(&d->bcfg, cap, sizeof(cap)), d->matrix_source,
           agent_sampler_name(&d->sampler), d->profiles.n, d->profiles.path,
           d->cfg.metrics ? "; metrics on " : "", d->cfg.metrics ? d->cfg.metrics : "");
  return 0;
}

int agent_daemon_run(struct agent_daemon *d, struct iob_error **err) {
  int r = iob_loop_run(d->loop, err);
  d->stopping = true;
  d->learn.stopping = true;
  /* Nothing registered: nobody to wait for when the next agent starts. */
  if (r == 0 && d->adm.n == 0 && d->live_mark)
    agent_lock_unmark_live(d->live_mark);
  return r;
}

void agent_daemon_release(struct agent_daemon *d) {
  d->stopping = true;
  /* Pending callers get an answer, not a reset connection: UNAVAILABLE
   * tells a shim to re-register with the next agent or fail open. */
  for (struct agent_ctr *c = d->adm.list; c; c = c->next) {
    agent_server_abort(c, "agent stopping");
    agent_pidwatch_forget(&d->pidwatch, c);
  }
  agent_learn_release(&d->learn); /* written before the lock goes */
  agent_protection_release(&d->protect);
  agent_weights_release(&d->weights);
  agent_restore_dir(&d->restore, NULL,
                    AGENT_RESTORE_ALL); /* anything left: a stopped agent leaves nothing */
  agent_restore_release(&d->restore);
  agent_metrics_server_free(d->metrics_server); /* unlinks a unix socket */
  d->metrics_server = NULL;
  agent_server_release(&d->server);   /* unlinks the socket */
  agent_podmeta_release(&d->podmeta); /* a poll in flight is left to end alone */
  if (d->loop) {
    if (d->plan_timer)
      iob_timer_cancel(d->loop, d->plan_timer);
    if (d->sample_timer)
      iob_timer_cancel(d->loop, d->sample_timer);
    iob_loop_free(d->loop);
  }
  for (struct agent_ctr *c = d->adm.list; c; c = c->next)
    agent_sampler_forget(c);
  agent_ctr_free_all(&d->adm);
  agent_profiles_release(&d->profiles);
  agent_penalties_release(&d->penalties);
  agent_sampler_release(&d->sampler);
  if (d->kubepods_on)
    agent_kubepods_release(&d->kubepods);
  if (d->sigfd >= 0)
    close(d->sigfd);
  agent_config_release(&d->cfg);
  free(d->live_mark);
  if (d->lock_fd >= 0)
    close(d->lock_fd); /* last: everything is saved and put back */
}
