/* The admission hold: Start of an init process asks iobatchd (through
 * libagentclient, agent/client.h) before `runc start`; the reply to Start
 * waits while the agent keeps the container pending.  One client per shim
 * daemon, made on first use, connecting only when there is something to
 * say; everything runs on the shim's loop (no threads).
 *
 * Fail open: an agent that cannot be asked admits at once (the client logs
 * one warning naming the socket and why).  Fail closed (IobatchFailClosed
 * in the runtime options): Start fails with that reason instead and the
 * task stays CREATED. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "agent/client.h"
#include "batcher/class.h"
#include "cgroupv2/cg2.h"
#include "common/cleanup.h"
#include "common/file.h"
#include "common/log.h"
#include "shim/admission.h"
#include "shim/options.h"
#include "wcd/kind.h"
#include "wcd/wcd.h"

#define ARGS_MAX 4096
#define ANN_CLASS "io.iobatch.class"
#define ANN_WORKLOAD "io.iobatch.workload"
#define ANN_IMAGE "io.kubernetes.cri.image-name"
#define ANN_MAX_HOLD "io.iobatch.max-hold-ms"
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

static struct agent_client *agent;
static bool fail_closed; /* IobatchFailClosed of the runtime options */
static struct held *helds;

/* Made on first use with the first container's runtime options (a shim
 * serves one runtime, so every bundle it gets has the same ones): the
 * socket from IobatchAgentSocket, else $IOBATCH_AGENT_SOCKET, else the
 * default; IobatchFailClosed turns fail open into fail closed. */
static struct agent_client *client(struct iob_loop *loop, const char *bundle) {
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
  if (agent_client_new(loop, path && *path ? path : NULL, fail_closed, &agent, &err) < 0) {
    iob_warn("no agent client: %s", err->msg);
  } else {
    agent_client_set_timeout(agent, o.agent_timeout_ms);
    iob_info("agent at '%s'%s", path && *path ? path : AGENT_DEFAULT_SOCKET,
             fail_closed ? ", fail closed" : "");
  }
  shim_options_release(&o);
  return agent;
}

static const char *annotation(json_t *ann, const char *key) {
  const char *v = json_string_value(json_object_get(ann, key));
  return v && *v ? v : NULL;
}

static const char *annotation_fn(void *ann, const char *key) {
  return annotation(ann, key);
}

static int parse_max_hold(const char *s, uint32_t *out, struct iob_error **err) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (*s < '0' || *s > '9' || *end || errno || v > UINT32_MAX)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "invalid annotation '%s': '%s' is not a number of milliseconds",
                          ANN_MAX_HOLD, s);
  *out = (uint32_t)v;
  return 0;
}

static int workload_key(json_t *cfg, json_t *ann, char **out) {
  json_t *args = json_object_get(json_object_get(cfg, "process"), "args");
  size_t n = json_is_array(args) ? json_array_size(args) : 0;
  if (n > ARGS_MAX)
    n = ARGS_MAX;
  cleanup_free const char **argv = calloc(n + 1, sizeof(*argv));
  if (argv == NULL)
    return -1;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    const char *a = json_string_value(json_array_get(args, i));
    if (a)
      argv[k++] = a;
  }
  cleanup_error struct iob_error *err = NULL;
  if (wcd_workload_key(annotation(ann, ANN_WORKLOAD), annotation(ann, ANN_IMAGE), argv, k, out,
                       &err) < 0)
    *out = NULL; /* no key: the agent learns nothing about it, that is all */
  return 0;
}

static int dup_or_null(const char *s, char **out) {
  *out = NULL;
  return s && (*out = strdup(s)) == NULL ? -1 : 0;
}

/* Kind and CRI names (wcd/kind.c says which keys each manager sets). */
static int kind_load(json_t *ann, struct shim_ctr_info *out, struct iob_error **err) {
  struct wcd_kind k;
  if (wcd_kind_from_annotations(annotation_fn, ann, &k, err) < 0)
    return -1;
  if (dup_or_null(k.kind, &out->kind) < 0 || dup_or_null(k.pod_name, &out->pod_name) < 0 ||
      dup_or_null(k.pod_namespace, &out->pod_namespace) < 0 ||
      dup_or_null(k.container_name, &out->container_name) < 0)
    return iob_error(err, ENOMEM, "cannot allocate");
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

int shim_ctr_info_parse(const char *json, size_t len, struct shim_ctr_info *out,
                        struct iob_error **err) {
  memset(out, 0, sizeof(*out));
  json_error_t je;
  json_t *cfg = json_loadb(json, len, 0, &je);
  if (!json_is_object(cfg)) {
    json_decref(cfg);
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid 'config.json': %s",
                          cfg ? "not an object" : je.text);
  }
  json_t *ann = json_object_get(cfg, "annotations");
  const char *cls = annotation(ann, ANN_CLASS);
  const char *hold = annotation(ann, ANN_MAX_HOLD);
  int r = 0;
  enum batch_class wc;
  /* The agent refuses a Register with an unknown class: say so at Create. */
  if (cls && batch_class_parse(cls, &wc) < 0)
    r = iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                       "invalid annotation '%s': unknown class '%s' (expected seq-read, "
                       "rand-read, seq-write, rand-write, mixed, idle or unknown)",
                       ANN_CLASS, cls);
  else if (cls && (out->cls = strdup(cls)) == NULL)
    r = iob_error(err, ENOMEM, "cannot allocate");
  if (r == 0 && hold)
    r = parse_max_hold(hold, &out->max_hold_ms, err);
  if (r == 0)
    r = kind_load(ann, out, err);
  if (r == 0 && workload_key(cfg, ann, &out->key) < 0)
    r = iob_error(err, ENOMEM, "cannot allocate");
  json_decref(cfg);
  if (r < 0)
    shim_ctr_info_release(out);
  return r;
}

static int info_load(const char *bundle, struct shim_ctr_info *out, struct iob_error **err) {
  memset(out, 0, sizeof(*out));
  cleanup_free char *path = NULL;
  if (asprintf(&path, "%s/config.json", bundle) < 0)
    return iob_error(err, ENOMEM, "cannot allocate");
  struct stat sb;
  if (stat(path, &sb) < 0)
    return iob_error(err, errno, "cannot stat '%s'", path);
  if (sb.st_size > (off_t)IOB_OCI_CONFIG_MAX)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "'%s' is larger than %u bytes", path,
                          IOB_OCI_CONFIG_MAX);
  cleanup_free char *buf = NULL;
  size_t len;
  if (iob_read_file(path, IOB_OCI_CONFIG_MAX, &buf, &len, err) < 0)
    return -1;
  return shim_ctr_info_parse(buf, len, out, err);
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

int shim_admission_check(const char *bundle, struct iob_error **err) {
  struct shim_ctr_info in;
  if (info_load(bundle, &in, err) < 0)
    return -1;
  shim_ctr_info_release(&in);
  return 0;
}

static void on_registered(void *user, const struct iob_error *err) {
  char *id = user;
  if (err)
    iob_debug("agent did not take the registration of '%s': %s", id, err->msg);
  free(id);
}

static struct agent_container ctr_of(const struct shim_admission_req *req,
                                     const struct shim_ctr_info *in) {
  return (struct agent_container){.id = req->id,
                                  .ns = req->ns,
                                  .pid = (uint32_t)req->pid,
                                  .bundle = req->bundle,
                                  .declared_class = in->cls,
                                  .workload_key = in->key,
                                  .kind = in->kind,
                                  .pod_name = in->pod_name,
                                  .pod_namespace = in->pod_namespace,
                                  .container_name = in->container_name,
                                  .max_hold_ms = in->max_hold_ms};
}

/* In the background: nothing waits for the agent's answer. */
static void register_ctr(struct iob_loop *loop, const struct shim_admission_req *req,
                         const struct shim_ctr_info *in, bool running) {
  cleanup_error struct iob_error *err = NULL;
  struct agent_client *ac = client(loop, req->bundle);
  cleanup_free char *cg = pid_cgroup(req->pid);
  struct agent_container c = ctr_of(req, in);
  c.cgroup = cg;
  c.running = running;
  char *id = strdup(req->id);
  /* No agent here is the Admit's business (it warns once); Register just
   * gives the agent a head start. */
  if (ac && id && agent_client_register(ac, &c, on_registered, id, &err) < 0) {
    iob_debug("'%s' not registered with the agent: %s", req->id, err->msg);
    free(id);
  } else if (ac == NULL || id == NULL) {
    free(id);
  }
}

void shim_admission_register(struct iob_loop *loop, const struct shim_admission_req *req) {
  cleanup_error struct iob_error *err = NULL;
  struct shim_ctr_info in;
  if (info_load(req->bundle, &in, &err) < 0) {
    iob_warn("'%s' not registered with the agent: %s", req->id, err->msg);
    return;
  }
  register_ctr(loop, req, &in, false);
  shim_ctr_info_release(&in);
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

static void on_admit(void *user, const struct agent_admission *a) {
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
  else if (!a->admitted)
    iob_error_code(&err, IOB_CODE_FAILED_PRECONDITION, "the agent did not admit '%s': %s", h->id,
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
  struct shim_ctr_info in;
  if (info_load(req->bundle, &in, &err) < 0) {
    iob_error_prefix(&err, "cannot ask the agent about '%s'", req->id);
    fn(data, 0, err);
    return;
  }
  if (in.kind && strcmp(in.kind, "sandbox") == 0) {
    /* A pod's sandbox holds only namespaces and every container of the
     * pod waits for it: it starts now, fail closed or not, with no agent
     * round trip on the pod's way up.  The agent hears that it runs
     * afterwards (and again after a restart of the agent). */
    fn(data, 1, NULL);
    register_ctr(loop, req, &in, true);
    shim_ctr_info_release(&in);
    return;
  }
  struct agent_client *ac = client(loop, req->bundle);
  struct held *h = calloc(1, sizeof(*h));
  if (ac == NULL || h == NULL || (h->ns = strdup(req->ns)) == NULL ||
      (h->id = strdup(req->id)) == NULL) {
    if (h)
      held_free(h);
    shim_ctr_info_release(&in);
    without_agent(req, "out of memory", fn, data);
    return;
  }
  h->fn = fn;
  h->data = data;
  struct agent_container c = ctr_of(req, &in);
  int r = agent_client_admit(ac, &c, timeout_of(req), on_admit, h, &err);
  shim_ctr_info_release(&in);
  if (r < 0) {
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
  if (agent_client_cancel(agent, ns, id, NULL, NULL, &err) < 0)
    iob_debug("agent not told that '%s' was cancelled: %s", id, err->msg);
}

void shim_admission_exited(const char *ns, const char *id, uint32_t status) {
  shim_admission_cancel(ns, id);
  if (agent == NULL)
    return;
  cleanup_error struct iob_error *err = NULL;
  if (agent_client_exited(agent, ns, id, status, NULL, NULL, &err) < 0)
    iob_debug("agent not told that '%s' exited: %s", id, err->msg);
}
