/* iobatchctl status: the agent's view of pending and running containers. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "common/cleanup.h"
#include "iobatch/agent.pb-c.h"

static void human_rate(double v, char *buf, size_t n) {
  static const char *const unit[] = {"B", "K", "M", "G", "T"};
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    u++;
  }
  snprintf(buf, n, u ? "%.1f%s" : "%.0f%s", v, unit[u]);
}

static void human_ms(uint64_t ms, char *buf, size_t n) {
  if (ms < 1000)
    snprintf(buf, n, "%llums", (unsigned long long)ms);
  else if (ms < 120000)
    snprintf(buf, n, "%.1fs", (double)ms / 1000);
  else
    snprintf(buf, n, "%llum%02llus", (unsigned long long)(ms / 60000),
             (unsigned long long)(ms / 1000 % 60));
}

static void print_table(const Iobatch__Agent__V1__StatusResponse *r) {
  printf("policy %s, max concurrency %u, batch window %llu ms, matrix %s, sampler %s\n", r->policy,
         r->max_concurrency, (unsigned long long)r->batch_window_ms, r->matrix_source, r->sampler);
  printf("plans %llu, admissions %llu (%llu at their deadline), %u learned profiles\n\n",
         (unsigned long long)r->plans, (unsigned long long)r->admissions,
         (unsigned long long)r->forced_admissions, r->profiles);
  printf("%-20s %-8s %-20s %5s %8s %8s %7s %7s %7s %8s  %s\n", "ID", "STATE", "CLASS", "CONF",
         "READ/s", "WRITE/s", "R-IOPS", "W-IOPS", "WEIGHT", "HELD", "REASON");
  for (size_t i = 0; i < r->n_containers; i++) {
    const Iobatch__Agent__V1__ContainerStatus *c = r->containers[i];
    char cls[64], rd[48], wr[48], held[48], weight[32], reason[512];
    snprintf(cls, sizeof(cls), "%s (%s)", c->class_, c->class_source);
    human_rate(c->read_bps, rd, sizeof(rd));
    human_rate(c->write_bps, wr, sizeof(wr));
    human_ms(c->held_ms, held, sizeof(held));
    if (c->io_weight == 0)
      snprintf(weight, sizeof(weight), "-");
    else
      snprintf(weight, sizeof(weight), "%u%s", c->io_weight, c->weight_effective ? "" : "*");
    snprintf(reason, sizeof(reason), "%s%s%s", c->reason, c->conflict[0] ? ", conflicts with " : "",
             c->conflict);
    printf("%-20.20s %-8s %-20s %5.2f %8s %8s %7.0f %7.0f %7s %8s  %s\n", c->id, c->state, cls,
           c->confidence, rd, wr, c->read_iops, c->write_iops, weight, held, reason);
  }
  for (size_t i = 0; i < r->n_containers; i++) {
    const Iobatch__Agent__V1__ContainerStatus *c = r->containers[i];
    if (c->io_weight && !c->weight_effective) {
      printf("\n* weight not in effect: %s\n", c->weight_note[0] ? c->weight_note : "unknown");
      break;
    }
  }
  if (r->protect_cap_bps || r->protect_holding)
    printf("\nprotecting latency-sensitive containers: batch capped at %.1f MiB/s%s\n",
           (double)r->protect_cap_bps / (1024 * 1024),
           r->protect_holding ? ", new batch containers held" : "");
  if (r->n_penalties)
    printf("\nmeasured penalties (victim beside neighbour: slowdown; evidence from %d co-runs):\n",
           3);
  for (size_t i = 0; i < r->n_penalties; i++) {
    const Iobatch__Agent__V1__PenaltyPair *p = r->penalties[i];
    printf("  %-10s beside %-10s %6.2fx  %u samples, %u co-runs%s\n", p->victim, p->neighbour,
           p->slowdown, p->samples, p->coruns, p->in_use ? ", in use" : "");
  }
}

static json_t *to_json(const Iobatch__Agent__V1__StatusResponse *r) {
  json_t *arr = json_array();
  for (size_t i = 0; i < r->n_containers; i++) {
    const Iobatch__Agent__V1__ContainerStatus *c = r->containers[i];
    json_array_append_new(
        arr, json_pack("{s:s, s:s, s:s, s:s, s:s, s:f, s:f, s:f, s:f, s:f, s:i, s:b, s:s, s:I, "
                       "s:I, s:s, s:i, s:s, s:s}",
                       "id", c->id, "namespace", c->namespace_, "state", c->state, "class",
                       c->class_, "class_source", c->class_source, "confidence", c->confidence,
                       "read_bps", c->read_bps, "write_bps", c->write_bps, "read_iops",
                       c->read_iops, "write_iops", c->write_iops, "io_weight", (int)c->io_weight,
                       "weight_effective", (int)c->weight_effective, "weight_note", c->weight_note,
                       "held_ms", (json_int_t)c->held_ms, "age_ms", (json_int_t)c->age_ms,
                       "workload_key", c->workload_key, "pid", (int)c->pid, "reason", c->reason,
                       "conflict", c->conflict));
    json_t *o = json_array_get(arr, json_array_size(arr) - 1);
    json_object_set_new(o, "kind", json_string(c->kind ? c->kind : ""));
    json_object_set_new(o, "open_ended", json_boolean(c->open_ended));
    json_object_set_new(o, "work_left_s", json_real(c->work_left_s));
    json_object_set_new(o, "protected", json_boolean(c->protected_));
    json_object_set_new(o, "share", json_real(c->share));
    json_object_set_new(o, "cap_bps", json_integer((json_int_t)c->cap_bps));
    json_object_set_new(o, "pod_name", json_string(c->pod_name ? c->pod_name : ""));
    json_object_set_new(o, "pod_namespace", json_string(c->pod_namespace ? c->pod_namespace : ""));
    json_object_set_new(o, "container_name",
                        json_string(c->container_name ? c->container_name : ""));
  }
  json_t *pen = json_array();
  for (size_t i = 0; i < r->n_penalties; i++) {
    const Iobatch__Agent__V1__PenaltyPair *p = r->penalties[i];
    json_array_append_new(pen, json_pack("{s:s, s:s, s:f, s:I, s:I, s:b}", "victim", p->victim,
                                         "neighbour", p->neighbour, "slowdown", p->slowdown,
                                         "samples", (json_int_t)p->samples, "coruns",
                                         (json_int_t)p->coruns, "in_use", (int)p->in_use));
  }
  return json_pack("{s:s, s:s, s:i, s:I, s:s, s:I, s:I, s:I, s:i, s:o, s:o, s:I, s:b}", "policy",
                   r->policy,
                   "matrix", r->matrix_source, "max_concurrency", (int)r->max_concurrency,
                   "batch_window_ms", (json_int_t)r->batch_window_ms, "sampler", r->sampler,
                   "plans", (json_int_t)r->plans, "admissions", (json_int_t)r->admissions,
                   "forced_admissions", (json_int_t)r->forced_admissions, "profiles",
                   (int)r->profiles, "containers", arr, "penalties", pen, "protect_cap_bps",
                   (json_int_t)r->protect_cap_bps, "protect_holding", (int)r->protect_holding);
}

int iobctl_status(int argc, char **argv) {
  bool json = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0) {
      json = true;
    } else {
      fprintf(stderr, "iobatchctl status: unknown argument '%s'\n", argv[i]);
      return 2;
    }
  }
  cleanup_error struct iob_error *err = NULL;
  struct ttrpc_client *c = NULL;
  if (iobctl_connect(&c, &err) < 0) {
    iob_error_print("iobatchctl status", &err);
    return 1;
  }
  Iobatch__Agent__V1__StatusRequest req = IOBATCH__AGENT__V1__STATUS_REQUEST__INIT;
  ProtobufCMessage *resp = NULL;
  int r = ttrpc_client_call(c, AGENT_SERVICE, "Status", &req.base,
                            &iobatch__agent__v1__status_response__descriptor, &resp, 10000, NULL, 0,
                            &err);
  ttrpc_client_free(c);
  if (r < 0) {
    iob_error_print("iobatchctl status", &err);
    return 1;
  }
  const Iobatch__Agent__V1__StatusResponse *s = (const void *)resp;
  if (json) {
    json_t *j = to_json(s);
    char *text = j ? json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    if (text)
      puts(text);
    free(text);
    json_decref(j);
  } else {
    print_table(s);
  }
  protobuf_c_message_free_unpacked(resp, NULL);
  return 0;
}
