// SPDX-License-Identifier: Apache-2.0
#include "agent/kube/podmeta.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/log.h"
#include "common/xalloc.h"

/* One poll, owned by its thread until `done`, then by the loop (or, when
 * abandoned at shutdown, freed by the thread itself). */
struct podmeta_run {
  pthread_mutex_t mu;
  bool done, abandoned;
  int efd;
  pthread_t th;
  char *endpoint; /* NULL: auto */
  unsigned timeout_ms;
  char **label_keys; /* a copy of the podmeta's */
  size_t n_label_keys;
  /* results */
  bool none; /* auto found no socket: nothing to say */
  char *in_use;
  struct cri_meta_list meta;
  struct iob_error *err;
};

static const char *const auto_paths[] = {CRI_CONTAINERD_SOCKET, CRI_CRIO_SOCKET};

static void free_keys(char **v, size_t n) {
  for (size_t i = 0; i < n; i++)
    free(v[i]);
  free(v);
}

static void run_free(struct podmeta_run *r) {
  if (r->efd >= 0)
    close(r->efd);
  pthread_mutex_destroy(&r->mu);
  free(r->endpoint);
  free_keys(r->label_keys, r->n_label_keys);
  free(r->in_use);
  cri_meta_list_release(&r->meta);
  iob_error_release(&r->err);
  free(r);
}

/* Version (which also picks the API version), then the two listings, on
 * one connection. */
static int poll_endpoint(struct podmeta_run *r, const char *path, struct iob_error **err) {
  struct cri_client *c = NULL;
  Runtime__V1__VersionResponse *v = NULL;
  if (cri_client_open(path, r->timeout_ms, &c, err) < 0)
    return -1;
  int rc = cri_client_version(c, &v, err);
  struct cri_label_keys keep = {.v = (const char *const *)r->label_keys, .n = r->n_label_keys};
  if (rc == 0)
    rc = cri_meta_list_read(c, &keep, &r->meta, err);
  if (rc == 0)
    r->in_use = xasprintf("unix://%s (%.64s %.64s, %s)", path, v->runtime_name, v->runtime_version,
                          cri_client_api(c));
  if (v)
    protobuf_c_message_free_unpacked(&v->base, NULL);
  cri_client_free(c);
  return rc;
}

static void poll_auto(struct podmeta_run *r) {
  r->none = true;
  for (size_t i = 0; i < sizeof(auto_paths) / sizeof(auto_paths[0]); i++) {
    if (access(auto_paths[i], F_OK) < 0)
      continue;
    r->none = false;
    iob_error_release(&r->err);
    if (poll_endpoint(r, auto_paths[i], &r->err) == 0)
      return;
  }
}

static void *run_main(void *arg) {
  struct podmeta_run *r = arg;
  if (r->endpoint)
    (void)poll_endpoint(r, r->endpoint, &r->err);
  else
    poll_auto(r);
  pthread_mutex_lock(&r->mu);
  bool abandoned = r->abandoned;
  r->done = true;
  if (!abandoned) {
    uint64_t one = 1;
    while (write(r->efd, &one, sizeof(one)) < 0 && errno == EINTR)
      ;
  }
  pthread_mutex_unlock(&r->mu);
  if (abandoned)
    run_free(r);
  return NULL;
}

static bool set_str(char **dst, const char *v) {
  if (*dst && strcmp(*dst, v) == 0)
    return false;
  free(*dst);
  *dst = xstrdup(v);
  return true;
}

/* A name the CRI gives.  The shim's names came from the CRI's annotations
 * and should agree; where they do not, the CRI's listing is the newer
 * word, and the change is said. */
static bool set_name(struct agent_ctr *c, char **dst, const char *v, const char *what) {
  if (v == NULL || *v == '\0')
    return false;
  if (*dst && **dst && strcmp(*dst, v) != 0)
    iob_warn("'%s': the CRI names its %s '%s', not '%s' as registered: taking the CRI's", c->id,
             what, v, *dst);
  return set_str(dst, v);
}

static bool set_labels(struct agent_ctr *c, const struct cri_meta *m) {
  bool same = c->kube.n_pod_labels == m->n_labels;
  for (size_t i = 0; same && i < m->n_labels; i++)
    same = strcmp(c->kube.pod_labels[i], m->labels[i]) == 0;
  if (same)
    return false;
  for (size_t i = 0; i < c->kube.n_pod_labels; i++)
    free(c->kube.pod_labels[i]);
  free(c->kube.pod_labels);
  c->kube.pod_labels = xcalloc(m->n_labels + 1, sizeof(*c->kube.pod_labels));
  for (size_t i = 0; i < m->n_labels; i++)
    c->kube.pod_labels[i] = xstrdup(m->labels[i]);
  c->kube.n_pod_labels = m->n_labels;
  return true;
}

static bool apply(struct agent_ctr *c, const struct cri_meta *m) {
  bool ch = set_name(c, &c->kube.pod_namespace, m->pod_namespace, "pod's namespace");
  ch |= set_name(c, &c->kube.pod_name, m->pod_name, "pod");
  if (m->container_name)
    ch |= set_name(c, &c->kube.container_name, m->container_name, "container");
  if (*m->pod_uid)
    ch |= set_str(&c->kube.pod_uid, m->pod_uid);
  ch |= set_labels(c, m);
  return ch;
}

bool agent_podmeta_fill(struct agent_podmeta *pm, struct agent_ctr *c) {
  const struct cri_meta *m = c->id ? cri_meta_find(&pm->meta, c->id) : NULL;
  return m && apply(c, m);
}

static void apply_all(struct agent_podmeta *pm) {
  for (struct agent_ctr *c = pm->adm->list; c; c = c->next)
    if (agent_podmeta_fill(pm, c) && pm->changed)
      pm->changed(c, pm->user);
}

void agent_podmeta_fill_new(struct agent_podmeta *pm) {
  if (pm->meta.n == 0 || pm->adm == NULL)
    return;
  for (struct agent_ctr *c = pm->adm->list; c; c = c->next)
    /* (a container found under the kubelet's tree has its uid from its
     * cgroup path, agent/kube/kubepods.h, and no names yet) */
    if ((c->kube.pod_uid == NULL || *c->kube.pod_uid == '\0' || c->kube.pod_name == NULL ||
         *c->kube.pod_name == '\0') &&
        agent_podmeta_fill(pm, c) && pm->changed)
      pm->changed(c, pm->user);
}

static void on_timer(struct iob_loop *loop, void *data);

static void arm(struct agent_podmeta *pm, uint64_t ms) {
  if (pm->timer)
    iob_timer_cancel(pm->loop, pm->timer);
  pm->timer = NULL;
  if (pm->endpoint && *pm->endpoint == '\0')
    return; /* off */
  pm->timer = iob_loop_timer(pm->loop, ms, on_timer, pm);
}

/* What a finished poll says, in as few log lines as possible. */
static void report(struct agent_podmeta *pm, struct podmeta_run *r) {
  if (r->err) {
    pm->failures++;
    if (pm->last_err == NULL || strcmp(pm->last_err, r->err->msg) != 0)
      iob_warn("no pod names from the CRI: %s (said once; polled again every %llu ms)", r->err->msg,
               (unsigned long long)pm->poll_ms);
    free(pm->last_err);
    pm->last_err = xstrdup(r->err->msg);
    free(pm->in_use);
    pm->in_use = NULL;
    return;
  }
  free(pm->last_err);
  pm->last_err = NULL;
  if (r->none) {
    if (pm->in_use)
      iob_info("the CRI at %s is gone: pod names stay as they are", pm->in_use);
    free(pm->in_use);
    pm->in_use = NULL;
    return;
  }
  if (pm->in_use == NULL || strcmp(pm->in_use, r->in_use) != 0)
    iob_info("pod names from the CRI at %s: %zu pods and containers", r->in_use, r->meta.n);
  free(pm->in_use);
  pm->in_use = r->in_use;
  r->in_use = NULL;
  cri_meta_list_release(&pm->meta);
  pm->meta = r->meta;
  r->meta = (struct cri_meta_list){0};
  apply_all(pm);
}

static void on_done(struct iob_loop *loop, int fd, uint32_t events, void *data) {
  (void)events;
  struct agent_podmeta *pm = data;
  struct podmeta_run *r = pm->run;
  uint64_t v;
  if (read(fd, &v, sizeof(v)) < 0 && errno == EAGAIN)
    return;
  pthread_join(r->th, NULL);
  iob_loop_del(loop, fd);
  pm->run = NULL;
  pm->polls++;
  report(pm, r);
  run_free(r);
  arm(pm, pm->poll_ms);
}

static void start(struct agent_podmeta *pm) {
  struct podmeta_run *r = xcalloc(1, sizeof(*r));
  pthread_mutex_init(&r->mu, NULL);
  r->endpoint = pm->endpoint ? xstrdup(pm->endpoint) : NULL;
  r->timeout_ms = (unsigned)pm->timeout_ms;
  r->label_keys = xcalloc(pm->n_label_keys + 1, sizeof(*r->label_keys));
  for (size_t i = 0; i < pm->n_label_keys; i++)
    r->label_keys[r->n_label_keys++] = xstrdup(pm->label_keys[i]);
  r->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  cleanup_error struct iob_error *err = NULL;
  if (r->efd < 0 || iob_loop_add(pm->loop, r->efd, EPOLLIN, on_done, pm, &err) < 0) {
    iob_warn("no CRI poll: %s", err ? err->msg : strerror(errno));
    run_free(r);
    arm(pm, pm->poll_ms);
    return;
  }
  int e = pthread_create(&r->th, NULL, run_main, r);
  if (e != 0) {
    iob_warn("no CRI poll: cannot start its thread: %s", strerror(e));
    iob_loop_del(pm->loop, r->efd);
    run_free(r);
    arm(pm, pm->poll_ms);
    return;
  }
  pm->run = r;
}

static void on_timer(struct iob_loop *loop, void *data) {
  (void)loop;
  struct agent_podmeta *pm = data;
  pm->timer = NULL;
  if (pm->run == NULL)
    start(pm); /* re-armed when it is done */
}

void agent_podmeta_init(struct agent_podmeta *pm, struct iob_loop *loop, struct agent_adm *adm,
                        void (*changed)(struct agent_ctr *c, void *user), void *user) {
  memset(pm, 0, sizeof(*pm));
  pm->loop = loop;
  pm->adm = adm;
  pm->changed = changed;
  pm->user = user;
  pm->endpoint = xstrdup(""); /* off until configured */
}

static int cmp_key(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The keys of the labels CFG's pod rules name ("key=value" each). */
static void rule_keys(struct agent_podmeta *pm, const struct agent_config *cfg) {
  free_keys(pm->label_keys, pm->n_label_keys);
  size_t max = cfg->pod_rules.n * AGENT_POD_RULE_LABELS;
  pm->label_keys = xcalloc(max + 1, sizeof(*pm->label_keys));
  pm->n_label_keys = 0;
  for (size_t i = 0; i < cfg->pod_rules.n; i++) {
    const struct agent_pod_rule *r = &cfg->pod_rules.v[i];
    for (size_t k = 0; k < r->n_labels && k < AGENT_POD_RULE_LABELS; k++) {
      const char *eq = strchr(r->labels[k], '=');
      size_t len = eq ? (size_t)(eq - r->labels[k]) : strlen(r->labels[k]);
      pm->label_keys[pm->n_label_keys++] = xstrndup(r->labels[k], len);
    }
  }
  qsort(pm->label_keys, pm->n_label_keys, sizeof(*pm->label_keys), cmp_key);
  size_t n = 0;
  for (size_t i = 0; i < pm->n_label_keys; i++) {
    if (n > 0 && strcmp(pm->label_keys[n - 1], pm->label_keys[i]) == 0)
      free(pm->label_keys[i]);
    else
      pm->label_keys[n++] = pm->label_keys[i];
  }
  pm->n_label_keys = n;
}

void agent_podmeta_configure(struct agent_podmeta *pm, const struct agent_config *cfg) {
  bool was_off = pm->endpoint && *pm->endpoint == '\0';
  rule_keys(pm, cfg);
  free(pm->endpoint);
  pm->endpoint = cfg->cri_endpoint ? xstrdup(cfg->cri_endpoint) : NULL;
  pm->poll_ms = cfg->cri_poll_ms;
  pm->timeout_ms = cfg->cri_timeout_ms;
  if (pm->endpoint && *pm->endpoint == '\0' && !was_off)
    iob_info("pod names from the CRI: off (cri_endpoint)");
  free(pm->last_err); /* a new setting may fail anew: say it */
  pm->last_err = NULL;
  if (pm->loop && pm->run == NULL)
    arm(pm, 0);
}

enum agent_kubepods_cri agent_podmeta_kp_kind(const char *id, void *user) {
  const struct agent_podmeta *pm = user;
  const struct cri_meta *m = id ? cri_meta_find(&pm->meta, id) : NULL;
  if (m)
    return m->container_name ? AGENT_KP_CRI_CONTAINER : AGENT_KP_CRI_SANDBOX;
  return pm->in_use ? AGENT_KP_CRI_UNLISTED : AGENT_KP_CRI_DOWN;
}

const char *agent_podmeta_note(const struct agent_podmeta *pm) {
  if (pm->endpoint && *pm->endpoint == '\0')
    return "off";
  if (pm->in_use)
    return pm->in_use;
  if (pm->last_err)
    return pm->last_err;
  return pm->polls ? "no CRI endpoint found" : "not polled yet";
}

void agent_podmeta_release(struct agent_podmeta *pm) {
  if (pm->timer && pm->loop)
    iob_timer_cancel(pm->loop, pm->timer);
  pm->timer = NULL;
  struct podmeta_run *r = pm->run;
  if (r) {
    if (pm->loop)
      iob_loop_del(pm->loop, r->efd);
    pthread_mutex_lock(&r->mu);
    bool done = r->done;
    r->abandoned = !done;
    pthread_mutex_unlock(&r->mu);
    if (done) {
      pthread_join(r->th, NULL);
      run_free(r);
    } else {
      pthread_detach(r->th); /* it frees itself when its calls end */
    }
    pm->run = NULL;
  }
  free(pm->endpoint);
  free(pm->in_use);
  free(pm->last_err);
  cri_meta_list_release(&pm->meta);
  free_keys(pm->label_keys, pm->n_label_keys);
  pm->label_keys = NULL;
  pm->n_label_keys = 0;
  pm->endpoint = pm->in_use = pm->last_err = NULL;
}
