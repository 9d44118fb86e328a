// SPDX-License-Identifier: Apache-2.0
/* The admission hold: Start of an init process asks iobatchd (through
 * libagentclient, client/client.h) before `runc start`; the reply to Start
 * waits while the agent keeps the container pending.  One client per shim
 * daemon, made on first use, connecting only when there is something to
 * say; everything runs on the shim's loop (no threads).
 *
 * Fail open: an agent that cannot be asked admits at once (the client logs
 * one warning naming the socket and why), and so does an agent's "not
 * admitted" that this shim did not ask for.  Fail closed
 * (IobatchFailClosed in the runtime options): Start fails with that reason
 * instead and the task stays CREATED. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "batcher/class.h"
#include "batcher/kind.h"
#include "cgroupv2/cg2.h"
#include "client/annotations.h"
#include "client/client.h"
#include "common/cleanup.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "shim/admission.h"
#include "shim/options.h"
#include "wcd/kind.h"
#include "wcd/wcd.h"

/* The io.iobatch.* keys, their parsers and what each does, trusted or
 * not, are in client/annotations.h; this one is the CRI's. */
#define ANN_IMAGE "io.kubernetes.cri.image-name"
#define HOOK_NAME "iobatch-hook"
/* Left of a Start's own deadline for `runc start` and the reply. */
#define START_MARGIN_MS 2000

/* A Start whose reply waits for the agent. */
struct held {
  struct held *next;
  char *ns, *id;
  shim_admission_fn fn;
  void *data;
  bool cancelled; /* Kill or Delete came first */
};

static struct client *agent;
static bool fail_closed; /* IobatchFailClosed of the runtime options */
static struct held *helds;

/* Made on first use with the first container's runtime options (a shim
 * serves one runtime, so every bundle it gets has the same ones): the
 * socket from IobatchAgentSocket, else $IOBATCH_AGENT_SOCKET, else the
 * default; IobatchFailClosed turns fail open into fail closed. */
static struct client *client(struct iob_loop *loop, const char *bundle) {
  if (agent)
    return agent;
  cleanup_error struct iob_error *err = NULL;
  struct shim_options o;
  if (shim_options_read(bundle, &o, &err) < 0) {
    /* process.c has already refused a bad options.json at Create */
    iob_warn("agent options of '%s' not read: %s", bundle, err->msg);
    iob_error_release(&err);
    memset(&o, 0, sizeof(o));
  }
  const char *path = o.agent_socket;
  if (path == NULL || *path == '\0')
    path = getenv("IOBATCH_AGENT_SOCKET");
  fail_closed = o.fail_closed;
  if (client_new(loop, path && *path ? path : NULL, fail_closed, &agent, &err) < 0) {
    iob_warn("no agent client: %s", err->msg);
  } else {
    client_set_timeout(agent, o.agent_timeout_ms);
    iob_info("agent at '%s'%s", path && *path ? path : AGENT_DEFAULT_SOCKET,
             fail_closed ? ", fail closed" : "");
  }
  shim_options_release(&o);
  return agent;
}

static const char *annotation_fn(void *cfg, const char *key) {
  return iob_oci_annotation(cfg, key);
}

static char *workload_key(const struct iob_oci_config *cfg, const char *workload) {
  char *key = NULL;
  cleanup_error struct iob_error *err = NULL;
  if (wcd_workload_key(workload, iob_oci_annotation(cfg, ANN_IMAGE), cfg->args, cfg->nargs, &key,
                       &err) < 0)
    return NULL; /* no key: the agent learns nothing about it, that is all */
  return key;
}

static char *dup_or_null(const char *s) {
  return s ? xstrdup(s) : NULL;
}

/* Kind and CRI names (wcd/kind.c says which keys each manager sets). */
static int kind_load(const struct iob_oci_config *cfg, struct shim_ctr_info *out,
                     struct iob_error **err) {
  struct wcd_kind k;
  if (wcd_kind_from_annotations(annotation_fn, (void *)cfg, &k, err) < 0)
    return -1;
  out->kind = dup_or_null(k.kind);
  out->kind_from_runtime = k.runtime;
  out->pod_name = dup_or_null(k.pod_name);
  out->pod_namespace = dup_or_null(k.pod_namespace);
  out->container_name = dup_or_null(k.container_name);
  return 0;
}

void shim_ctr_info_release(struct shim_ctr_info *in) {
  free(in->cls);
  free(in->key);
  free(in->kind);
  free(in->pod_name);
  free(in->pod_namespace);
  free(in->container_name);
  memset(in, 0, sizeof(*in));
}

/* By its file name, wherever it is installed: under runc, prestart and
 * createRuntime run at the same point with the same state (runtime-spec
 * config.md), which is when the hook registers. */
static bool hook_in_spec(const struct iob_oci_config *cfg) {
  static const char *const kinds[] = {"prestart", "createRuntime"};
  for (size_t k = 0; cfg->hooks && k < IOB_ARRAY_SIZE(kinds); k++) {
    json_t *list = json_object_get(cfg->hooks, kinds[k]);
    for (size_t i = 0; i < json_array_size(list); i++) {
      const char *p = json_string_value(json_object_get(json_array_get(list, i), "path"));
      const char *base = p ? strrchr(p, '/') : NULL;
      if (p && strcmp(base ? base + 1 : p, HOOK_NAME) == 0)
        return true;
    }
  }
  return false;
}

int shim_ctr_info_of(const struct iob_oci_config *cfg, struct shim_ctr_info *out,
                     struct iob_error **err) {
  memset(out, 0, sizeof(*out));
  /* A malformed io.iobatch.* annotation fails Create: the agent would
   * refuse it, or the user asked for something that cannot be had. */
  struct iob_ann ann;
  if (iob_ann_parse(annotation_fn, (void *)cfg, IOB_ANN_BY_SHIM, &ann, err) < 0 ||
      kind_load(cfg, out, err) < 0) {
    shim_ctr_info_release(out);
    return -1;
  }
  out->max_hold_ms = ann.max_hold_ms;
  out->lat_target_us = ann.lat_target_us;
  out->cls = dup_or_null(ann.cls);
  out->key = workload_key(cfg, ann.workload);
  out->hook_in_spec = hook_in_spec(cfg);
  return 0;
}

int shim_ctr_info_parse(const char *json, size_t len, struct shim_ctr_info *out,
                        struct iob_error **err) {
  struct iob_oci_config cfg;
  memset(out, 0, sizeof(*out));
  if (iob_oci_config_parse(json, len, "config.json", &cfg, err) < 0)
    return -1;
  int r = shim_ctr_info_of(&cfg, out, err);
  iob_oci_config_release(&cfg);
  return r;
}

/* The container's v2 cgroup; NULL when it has none of its own (the agent
 * then finds it from the pid, or samples /proc). */
static char *pid_cgroup(pid_t pid) {
  char *cg = NULL;
  cleanup_error struct iob_error *err = NULL;
  if (pid <= 0 || cg2_pid_cgroup(NULL, pid, &cg, &err) < 0)
    return NULL;
  if (strcmp(cg, "/") == 0) {
    free(cg);
    return NULL;
  }
  return cg;
}

static struct client_container ctr_of(const struct shim_admission_req *req) {
  const struct shim_ctr_info *in = req->info;
  return (struct client_container){.id = req->id,
                                   .ns = req->ns,
                                   .pid = (uint32_t)req->pid,
                                   .bundle = req->bundle,
                                   .declared_class = in->cls,
                                   .workload_key = in->key,
                                   .kind = in->kind,
                                   .kind_from_runtime = in->kind_from_runtime,
                                   .pod_name = in->pod_name,
                                   .pod_namespace = in->pod_namespace,
                                   .container_name = in->container_name,
                                   .max_hold_ms = in->max_hold_ms,
                                   .lat_target_us = in->lat_target_us};
}

static void on_registered(void *user, const struct iob_error *err) {
  char *id = user;
  if (err)
    iob_debug("agent did not take the registration of '%s': %s", id, err->msg);
  free(id);
}

/* In the background: nothing waits for the agent's answer. */
static void register_running(struct iob_loop *loop, const struct shim_admission_req *req) {
  cleanup_error struct iob_error *err = NULL;
  struct client *ac = client(loop, req->bundle);
  /* No agent here is the Admit's business (it warns once). */
  if (ac == NULL)
    return;
  cleanup_free char *cg = pid_cgroup(req->pid);
  struct client_container c = ctr_of(req);
  c.cgroup = cg;
  c.running = true;
  char *id = xstrdup(req->id);
  if (client_register(ac, &c, on_registered, id, &err) < 0) {
    iob_debug("'%s' not registered with the agent: %s", req->id, err->msg);
    free(id);
  }
}

/* A Create waiting for the agent's answer to its Register. */
struct birth_wait {
  char *id;
  struct client_birth b;
  shim_registered_fn fn;
  void *data;
};

static void birth_done(struct birth_wait *w) {
  shim_registered_fn fn = w->fn;
  void *data = w->data;
  client_birth_release(&w->b);
  free(w->id);
  free(w);
  fn(data);
}

static void on_born(void *user, bool journalled, const struct iob_error *err) {
  struct birth_wait *w = user;
  cleanup_error struct iob_error *werr = NULL;
  if (err) {
    iob_info("'%s' created without the agent's word: %s (fail open)", w->id, err->msg);
  } else {
    w->b.weight_journalled = journalled;
    if (client_birth_weight_write(&w->b, &werr) < 0)
      iob_warn("'%s': its first io.weight not written: %s", w->id, werr->msg);
  }
  birth_done(w);
}

/* The cgroup and baseline of the init, and the weight of its declared
 * class; without a baseline (its cgroup is gone, an unreadable source) it
 * is registered all the same, from its pid. */
static void birth_take(const struct shim_admission_req *req, struct client_birth *b) {
  cleanup_error struct iob_error *err = NULL;
  enum batch_class cls;
  if (client_birth_sample(NULL, req->pid, b, &err) < 0) {
    iob_debug("'%s': no baseline: %s", req->id, err->msg);
    b->cgroup = pid_cgroup(req->pid);
    return;
  }
  if (req->info->cls && batch_class_parse(req->info->cls, &cls) == 0 &&
      client_birth_plan_weight(NULL, cls, b, &err) < 0) {
    iob_debug("'%s': no first io.weight: %s", req->id, err->msg);
    b->weight = 0;
  }
  if (b->cgroup && strcmp(b->cgroup, "/") == 0) {
    free(b->cgroup); /* no cgroup of its own: the agent finds it from the pid */
    b->cgroup = NULL;
  }
}

void shim_admission_register(struct iob_loop *loop, const struct shim_admission_req *req,
                             shim_registered_fn fn, void *data) {
  if (req->info->hook_in_spec) {
    iob_debug("'%s': iobatch-hook in its config.json registers it", req->id);
    fn(data);
    return;
  }
  struct client *ac = client(loop, req->bundle);
  if (ac == NULL) {
    fn(data);
    return;
  }
  cleanup_error struct iob_error *err = NULL;
  struct birth_wait *w = xcalloc(1, sizeof(*w));
  w->id = xstrdup(req->id);
  w->fn = fn;
  w->data = data;
  birth_take(req, &w->b);
  struct client_container c = ctr_of(req);
  c.cgroup = w->b.cgroup;
  if (client_register_birth(ac, &c, &w->b, on_born, w, &err) < 0) {
    iob_info("'%s' created without telling the agent: %s (fail open)", req->id, err->msg);
    birth_done(w);
  }
}

static void held_free(struct held *h) {
  free(h->ns);
  free(h->id);
  free(h);
}

static void held_unlink(struct held *h) {
  for (struct held **pp = &helds; *pp; pp = &(*pp)->next) {
    if (*pp == h) {
      *pp = h->next;
      return;
    }
  }
}

static struct held *held_find(const char *ns, const char *id) {
  for (struct held *h = helds; h; h = h->next)
    if (!strcmp(h->id, id) && !strcmp(h->ns, ns))
      return h;
  return NULL;
}

static void on_admit(void *user, const struct client_admission *a) {
  struct held *h = user;
  held_unlink(h);
  cleanup_error struct iob_error *err = NULL;
  if (h->cancelled)
    iob_error_code(&err, IOB_CODE_CANCELED,
                   "start of '%s' cancelled: the task was killed or deleted while the agent "
                   "held it",
                   h->id);
  else if (!a->admitted && a->no_agent)
    iob_error_code(&err, IOB_CODE_UNAVAILABLE, "'%s' not started: %s", h->id, a->reason);
  else if (!a->admitted && !fail_closed)
    /* The agent holds, it never refuses: a "no" this shim did not cause
     * (its own Kill or Delete is h->cancelled) came from another caller,
     * a Cancel or a newer Admit for this id.  Fail open means that such a
     * word cannot keep a container from starting; only fail closed
     * trusts it. */
    iob_warn("'%s' starts although the agent did not admit it: %s (fail open)", h->id,
             a->reason ? a->reason : "refused");
  else if (!a->admitted)
    iob_error_code(&err, IOB_CODE_FAILED_PRECONDITION,
                   "the agent did not admit '%s': %s (fail closed)", h->id,
                   a->reason ? a->reason : "refused");
  shim_admission_fn fn = h->fn;
  void *data = h->data;
  held_free(h);
  fn(data, err == NULL, err);
}

static int timeout_of(const struct shim_admission_req *req) {
  if (req->deadline_ms == 0)
    return 0;
  uint64_t now = iob_now_ms();
  if (req->deadline_ms <= now + 1)
    return 1; /* too late to ask: the client gives up at once */
  if (req->deadline_ms <= now + START_MARGIN_MS)
    /* A short deadline: half of it for the agent, which admits by force
     * before its end (a healthy agent is still asked, even fail closed). */
    return (int)((req->deadline_ms - now) / 2);
  uint64_t left = req->deadline_ms - now - START_MARGIN_MS;
  return left > INT_MAX ? INT_MAX : (int)left;
}

/* The agent could not even be asked (the client reports everything past
 * this point itself, fail open or closed). */
static void without_agent(const struct shim_admission_req *req, const char *why,
                          shim_admission_fn fn, void *data) {
  cleanup_error struct iob_error *err = NULL;
  if (!fail_closed) {
    iob_warn("'%s' starts without asking the agent: %s (fail open)", req->id, why);
    fn(data, 1, NULL);
    return;
  }
  iob_err("'%s' not started: the agent was not asked: %s (fail closed)", req->id, why);
  iob_error_code(&err, IOB_CODE_UNAVAILABLE, "the agent was not asked about '%s': %s (fail closed)",
                 req->id, why);
  fn(data, 0, err);
}

void shim_admission_wait(struct iob_loop *loop, const struct shim_admission_req *req,
                         shim_admission_fn fn, void *data) {
  cleanup_error struct iob_error *err = NULL;
  const struct shim_ctr_info *in = req->info;
  enum batch_kind kind;
  if (batch_kind_parse(in->kind, &kind) == 0 && kind == BATCH_KIND_SANDBOX &&
      in->kind_from_runtime) {
    /* A pod's sandbox holds only namespaces and every container of the
     * pod waits for it: it starts now, fail closed or not, with no agent
     * round trip on the pod's way up.  The agent hears that it runs
     * afterwards (and again after a restart of the agent).  Only on the
     * CRI's word: io.iobatch.kind=sandbox is anybody's to write, and the
     * agent decides whether it counts (trust_declared). */
    fn(data, 1, NULL);
    register_running(loop, req);
    return;
  }
  struct client *ac = client(loop, req->bundle);
  if (ac == NULL) {
    without_agent(req, "no agent client", fn, data);
    return;
  }
  struct held *h = xcalloc(1, sizeof(*h));
  h->ns = xstrdup(req->ns);
  h->id = xstrdup(req->id);
  h->fn = fn;
  h->data = data;
  struct client_container c = ctr_of(req);
  if (client_admit(ac, &c, timeout_of(req), on_admit, h, &err) < 0) {
    held_free(h);
    without_agent(req, err->msg, fn, data);
    return;
  }
  h->next = helds;
  helds = h;
}

void shim_admission_cancel(const char *ns, const char *id) {
  struct held *h = held_find(ns, id);
  if (h == NULL || agent == NULL)
    return;
  h->cancelled = true;
  cleanup_error struct iob_error *err = NULL;
  /* Completes the held Start (on_admit) before it returns; the agent is
   * told in the background. */
  if (client_cancel(agent, ns, id, NULL, NULL, &err) < 0)
    iob_debug("agent not told that '%s' was cancelled: %s", id, err->msg);
}

void shim_admission_exited(const char *ns, const char *id, uint32_t status) {
  shim_admission_cancel(ns, id);
  if (agent == NULL)
    return;
  cleanup_error struct iob_error *err = NULL;
  if (client_exited(agent, ns, id, status, NULL, NULL, &err) < 0)
    iob_debug("agent not told that '%s' exited: %s", id, err->msg);
}
