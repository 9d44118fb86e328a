// SPDX-License-Identifier: Apache-2.0
/* What a shim or a hook tells the agent, from the command line: for tests,
 * for engines without our shim, and for a human poking at the agent. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client.h"
#include "cli/cli.h"
#include "common/cleanup.h"
#include "google/protobuf/empty.pb-c.h"
#include "iobatch/agent.pb-c.h"

#define CALL_TIMEOUT_MS 10000

int iobctl_connect(struct ttrpc_client **out, struct iob_error **err) {
  cleanup_error struct iob_error *cause = NULL;
  if (ttrpc_client_connect(iobctl_socket, out, &cause) < 0)
    return iob_error_code(err, cause->code, "%s (is iobatchd running?)", cause->msg);
  return 0;
}

int iobctl_status_fetch(Iobatch__Agent__V1__StatusResponse **out, bool labels, int timeout_ms,
                        struct iob_error **err) {
  struct ttrpc_client *c = NULL;
  if (iobctl_connect(&c, err) < 0)
    return -1;
  Iobatch__Agent__V1__StatusRequest req = IOBATCH__AGENT__V1__STATUS_REQUEST__INIT;
  req.pod_labels = labels;
  ProtobufCMessage *resp = NULL;
  int r = ttrpc_client_call(c, AGENT_SERVICE, "Status", &req.base,
                            &iobatch__agent__v1__status_response__descriptor, &resp, timeout_ms,
                            NULL, 0, err);
  ttrpc_client_free(c);
  if (r < 0)
    return -1;
  *out = (Iobatch__Agent__V1__StatusResponse *)resp;
  return 0;
}

struct ctl_args {
  const char *id, *ns, *cls, *cgroup, *key, *bundle, *kind, *pod, *pod_ns, *name, *source;
  unsigned long pid, max_hold, timeout, status;
  int running;
};

static int parse_num(const char *s, unsigned long max, unsigned long *out) {
  char *end = NULL;
  if (*s < '0' || *s > '9')
    return -1;
  unsigned long v = strtoul(s, &end, 10);
  if (*end != '\0' || v > max)
    return -1;
  *out = v;
  return 0;
}

static void usage(FILE *f, const char *verb) {
  static const struct {
    const char *verb, *args, *what;
  } u[] = {
      {"register",
       "[--ns NS] [--class C] [--cgroup PATH] [--pid N] [--key K] [--max-hold MS]\n"
       "           [--bundle DIR] [--kind job|service|sandbox] [--pod NAME] [--pod-ns NS]\n"
       "           [--name NAME] [--running] [--as shim|hook]",
       "Tell the agent about a container, as a shim or the hook does.  --running: it\n"
       "runs already (what a shim says after an agent restart).  --pod, --pod-ns,\n"
       "--name: its Kubernetes pod and container names.  --as: the source to name\n"
       "(default iobatchctl; tests)."},
      {"admit", "[--ns NS] [--class C] [--key K] [--max-hold MS] [--kind K] [--timeout MS]",
       "Ask the agent to start the container and wait until it is admitted (or\n"
       "--timeout passes).  Exit 0 admitted, 1 not."},
      {"cancel", "[--ns NS]", "Withdraw the container's pending admission."},
      {"exited", "[--ns NS] [--status N]", "Tell the agent the container exited."},
  };
  for (size_t i = 0; i < sizeof(u) / sizeof(u[0]); i++)
    if (!strcmp(u[i].verb, verb))
      fprintf(f,
              "usage: iobatchctl %s ID %s\n%s\n"
              "  --ns NS    containerd namespace (default 'default')\n"
              "  -h, --help this text\n",
              verb, u[i].args, u[i].what);
}

/* Returns 0, 2 after a usage error, 3 after --help (both printed). */
static int parse_ctl(int argc, char **argv, struct ctl_args *a) {
  enum { O_KIND = 256, O_POD, O_PODNS, O_NAME, O_AS };
  static const struct option opts[] = {
      {"kind", required_argument, NULL, O_KIND},
      {"pod", required_argument, NULL, O_POD},
      {"pod-ns", required_argument, NULL, O_PODNS},
      {"name", required_argument, NULL, O_NAME},
      {"as", required_argument, NULL, O_AS},
      {"help", no_argument, NULL, 'h'},
      {"ns", required_argument, NULL, 'n'},
      {"class", required_argument, NULL, 'c'},
      {"cgroup", required_argument, NULL, 'g'},
      {"pid", required_argument, NULL, 'p'},
      {"key", required_argument, NULL, 'k'},
      {"max-hold", required_argument, NULL, 'm'},
      {"timeout", required_argument, NULL, 't'},
      {"status", required_argument, NULL, 's'},
      {"bundle", required_argument, NULL, 'b'},
      {"running", no_argument, NULL, 'r'},
      {NULL, 0, NULL, 0},
  };
  memset(a, 0, sizeof(*a));
  a->ns = "default";
  optind = 0;
  opterr = 0;
  int o;
  while ((o = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    int bad = 0;
    switch (o) {
    case 'h':
      usage(stdout, argv[0]);
      return 3;
    case O_KIND:
      a->kind = optarg;
      break;
    case O_POD:
      a->pod = optarg;
      break;
    case O_PODNS:
      a->pod_ns = optarg;
      break;
    case O_NAME:
      a->name = optarg;
      break;
    case O_AS:
      a->source = optarg;
      break;
    case 'n':
      a->ns = optarg;
      break;
    case 'c':
      a->cls = optarg;
      break;
    case 'g':
      a->cgroup = optarg;
      break;
    case 'k':
      a->key = optarg;
      break;
    case 'b':
      a->bundle = optarg;
      break;
    case 'r':
      a->running = 1;
      break;
    case 'p':
      bad = parse_num(optarg, 0x7fffffff, &a->pid);
      break;
    case 'm':
      bad = parse_num(optarg, 0xffffffffu, &a->max_hold);
      break;
    case 't':
      bad = parse_num(optarg, 0x7fffffff, &a->timeout);
      break;
    case 's':
      bad = parse_num(optarg, 0xffffffffu, &a->status);
      break;
    default:
      return iobctl_usage_error(argv[0], o, argv);
    }
    if (bad)
      return iobctl_usage_fail(argv[0], "invalid number '%s'", optarg);
  }
  if (optind == argc)
    return iobctl_usage_fail(argv[0], "expected one container id");
  if (optind < argc - 1)
    return iobctl_usage_fail(argv[0], "unexpected argument '%s'", argv[optind + 1]);
  a->id = argv[optind];
  return 0;
}

/* One blocking call; prints the error once. */
static int call(const char *verb, const char *method, const ProtobufCMessage *req,
                const ProtobufCMessageDescriptor *desc, ProtobufCMessage **resp, int timeout_ms) {
  cleanup_error struct iob_error *err = NULL;
  struct ttrpc_client *c = NULL;
  char prog[64];
  snprintf(prog, sizeof(prog), "iobatchctl %s", verb);
  if (iobctl_connect(&c, &err) < 0) {
    iob_error_print(prog, &err);
    return -1;
  }
  int r = ttrpc_client_call(c, AGENT_SERVICE, method, req, desc, resp, timeout_ms, NULL, 0, &err);
  ttrpc_client_free(c);
  if (r < 0) {
    iob_error_print(prog, &err);
    return -1;
  }
  return 0;
}

int iobctl_register(int argc, char **argv) {
  struct ctl_args a;
  int pr = parse_ctl(argc, argv, &a);
  if (pr)
    return pr == 3 ? 0 : pr;
  struct client_container ctr = {.id = a.id,
                                 .ns = a.ns,
                                 .pid = (uint32_t)a.pid,
                                 .cgroup = a.cgroup,
                                 .bundle = a.bundle,
                                 .declared_class = a.cls,
                                 .workload_key = a.key,
                                 .kind = a.kind,
                                 .pod_name = a.pod,
                                 .pod_namespace = a.pod_ns,
                                 .container_name = a.name,
                                 .max_hold_ms = (uint32_t)a.max_hold,
                                 .running = a.running};
  Iobatch__Agent__V1__RegisterRequest m;
  client_register_request(&ctr, a.source ? a.source : "iobatchctl", &m);
  ProtobufCMessage *resp = NULL;
  if (call("register", "Register", &m.base, &iobatch__agent__v1__register_response__descriptor,
           &resp, CALL_TIMEOUT_MS) < 0)
    return 1;
  const Iobatch__Agent__V1__RegisterResponse *r = (const void *)resp;
  printf("registered %s: class %s\n", a.id, r->class_);
  protobuf_c_message_free_unpacked(resp, NULL);
  return 0;
}

int iobctl_admit(int argc, char **argv) {
  struct ctl_args a;
  int pr = parse_ctl(argc, argv, &a);
  if (pr)
    return pr == 3 ? 0 : pr;
  Iobatch__Agent__V1__AdmitRequest m = IOBATCH__AGENT__V1__ADMIT_REQUEST__INIT;
  m.id = (char *)a.id;
  m.namespace_ = (char *)a.ns;
  m.declared_class = (char *)(a.cls ? a.cls : "");
  m.workload_key = (char *)(a.key ? a.key : "");
  m.max_hold_ms = (uint32_t)a.max_hold;
  m.kind = (char *)(a.kind ? a.kind : "");
  ProtobufCMessage *resp = NULL;
  /* No timeout unless asked: Admit waits as long as the agent holds. */
  if (call("admit", "Admit", &m.base, &iobatch__agent__v1__admit_response__descriptor, &resp,
           (int)a.timeout) < 0)
    return 1;
  const Iobatch__Agent__V1__AdmitResponse *r = (const void *)resp;
  printf("%s %s after %llu ms: %s (class %s)\n", a.id, r->admitted ? "admitted" : "not admitted",
         (unsigned long long)r->held_ms, r->reason, r->class_);
  int rc = r->admitted ? 0 : 1;
  protobuf_c_message_free_unpacked(resp, NULL);
  return rc;
}

int iobctl_cancel(int argc, char **argv) {
  struct ctl_args a;
  int pr = parse_ctl(argc, argv, &a);
  if (pr)
    return pr == 3 ? 0 : pr;
  Iobatch__Agent__V1__CancelRequest m = IOBATCH__AGENT__V1__CANCEL_REQUEST__INIT;
  m.id = (char *)a.id;
  m.namespace_ = (char *)a.ns;
  ProtobufCMessage *resp = NULL;
  if (call("cancel", "Cancel", &m.base, &google__protobuf__empty__descriptor, &resp,
           CALL_TIMEOUT_MS) < 0)
    return 1;
  if (resp)
    protobuf_c_message_free_unpacked(resp, NULL);
  return 0;
}

int iobctl_exited(int argc, char **argv) {
  struct ctl_args a;
  int pr = parse_ctl(argc, argv, &a);
  if (pr)
    return pr == 3 ? 0 : pr;
  Iobatch__Agent__V1__ExitedRequest m = IOBATCH__AGENT__V1__EXITED_REQUEST__INIT;
  m.id = (char *)a.id;
  m.namespace_ = (char *)a.ns;
  m.exit_status = (uint32_t)a.status;
  ProtobufCMessage *resp = NULL;
  if (call("exited", "Exited", &m.base, &google__protobuf__empty__descriptor, &resp,
           CALL_TIMEOUT_MS) < 0)
    return 1;
  if (resp)
    protobuf_c_message_free_unpacked(resp, NULL);
  return 0;
}
