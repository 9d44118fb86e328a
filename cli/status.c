// SPDX-License-Identifier: Apache-2.0
/* iobatchctl status [ID]: the agent's view of pending and running
 * containers, or of one of them.  Tables follow kubectl and crictl: a
 * header row in capitals, columns as wide as their widest cell, three
 * spaces apart; IDs are printed whole unless the table would not fit the
 * terminal (then cut to crictl's 13 characters and an ellipsis;
 * --no-trunc keeps them whole).  `-o json` is always complete. */
#include <getopt.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "agent/protect/protect.h"
#include "cli/cli.h"
#include "common/cleanup.h"
#include "common/escape.h"
#include "common/xalloc.h"
#include "iobatch/agent.pb-c.h"

typedef Iobatch__Agent__V1__ContainerStatus ctr_status;
typedef Iobatch__Agent__V1__StatusResponse status_resp;

#define ID_CUT 13 /* crictl's short id */

static void usage(FILE *f) {
  fprintf(f, "usage: iobatchctl status [ID] [-o table|wide|json] [--no-trunc]\n"
             "Pending and running containers as the agent sees them; with ID (a\n"
             "container id, a unique prefix of one, or NAMESPACE/ID) that one in detail.\n"
             "  -o, --output FORMAT  table (default), wide (more columns) or json\n"
             "      --json           the same as -o json\n"
             "      --no-trunc       never cut IDs (they are cut only when the table\n"
             "                       is wider than the terminal)\n"
             "  -h, --help           this text\n"
             "Columns: NAMESPACE and POD are the Kubernetes pod's (else the containerd\n"
             "namespace and '-'), CONTAINER its container name (else the id); HELD is\n"
             "how long it has waited (running: how long it waited before it started);\n"
             "ADMIT-BY is when it starts at the latest (its max hold); REASON says what\n"
             "a pending container waits for, or why a running one was admitted.\n");
}

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
  unsigned long long s = ms / 1000;
  if (ms < 1000)
    snprintf(buf, n, "%llums", (unsigned long long)ms);
  else if (ms < 120000)
    snprintf(buf, n, "%.1fs", (double)ms / 1000);
  else if (s < 3600)
    snprintf(buf, n, "%llum%02llus", s / 60, s % 60);
  else if (s < 48 * 3600)
    snprintf(buf, n, "%lluh%02llum", s / 3600, s / 60 % 60);
  else
    snprintf(buf, n, "%llud%02lluh", s / 86400, s / 3600 % 24);
}

static const char *or_dash(const char *s) {
  return s && *s ? s : "-";
}

static const char *ctr_namespace(const ctr_status *c) {
  return c->pod_namespace && *c->pod_namespace ? c->pod_namespace : c->namespace_;
}

static const char *ctr_name(const ctr_status *c) {
  return c->container_name && *c->container_name ? c->container_name : c->id;
}

/* ---- a kubectl-style table ---------------------------------------------- */

#define MAX_COLS 20

struct table {
  size_t ncols, nrows, cap;
  char **cells; /* nrows * ncols, row 0 the header */
  int id_col;   /* the column cut when too wide, -1 none */
};

/* Terminal columns of a UTF-8 string (every code point one column: ours
 * are ASCII but for the ellipsis). */
static size_t text_width(const char *s) {
  size_t w = 0;
  for (; *s; s++)
    w += ((unsigned char)*s & 0xc0) != 0x80;
  return w;
}

static void table_row(struct table *t, ...) {
  if (t->nrows == t->cap) {
    t->cap = t->cap ? t->cap * 2 : 16;
    t->cells = xrealloc(t->cells, t->cap * t->ncols * sizeof(*t->cells));
  }
  va_list ap;
  va_start(ap, t);
  for (size_t c = 0; c < t->ncols; c++) {
    const char *s = va_arg(ap, const char *);
    t->cells[t->nrows * t->ncols + c] = xstrdup(s ? s : "");
  }
  va_end(ap);
  t->nrows++;
}

static size_t table_widths(const struct table *t, size_t *w) {
  size_t total = 0;
  for (size_t c = 0; c < t->ncols; c++) {
    w[c] = 0;
    for (size_t r = 0; r < t->nrows; r++) {
      size_t x = text_width(t->cells[r * t->ncols + c]);
      if (x > w[c])
        w[c] = x;
    }
    total += w[c] + (c + 1 < t->ncols ? 3 : 0);
  }
  return total;
}

static size_t terminal_columns(void) {
  struct winsize ws;
  if (!isatty(STDOUT_FILENO) || ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) < 0 || ws.ws_col == 0)
    return 0; /* not a terminal: never cut */
  return ws.ws_col;
}

static void table_print(struct table *t, bool no_trunc) {
  size_t w[MAX_COLS];
  size_t cols = no_trunc ? 0 : terminal_columns();
  if (cols && t->id_col >= 0 && table_widths(t, w) > cols) {
    for (size_t r = 1; r < t->nrows; r++) {
      char *s = t->cells[r * t->ncols + (size_t)t->id_col];
      if (strlen(s) > ID_CUT + 2)
        strcpy(s + ID_CUT, "\u2026"); /* 3 bytes: the cell had room */
    }
  }
  table_widths(t, w);
  for (size_t r = 0; r < t->nrows; r++) {
    for (size_t c = 0; c < t->ncols; c++) {
      const char *s = t->cells[r * t->ncols + c];
      if (c + 1 == t->ncols)
        printf("%s\n", s);
      else
        printf("%s%*s", s, (int)(w[c] - text_width(s) + 3), "");
    }
  }
}

static void table_free(struct table *t) {
  for (size_t i = 0; i < t->nrows * t->ncols; i++)
    free(t->cells[i]);
  free(t->cells);
}

/* What the REASON column and the detail say about a container. */
static void why(const ctr_status *c, char *buf, size_t n) {
  if (!strcmp(c->state, "pending") && c->waits_for && *c->waits_for)
    snprintf(buf, n, "waits for %s", c->waits_for);
  else
    snprintf(buf, n, "%s%s%s", c->reason, c->conflict[0] ? ", conflicts with " : "", c->conflict);
}

static void print_summary(const status_resp *r) {
  char cap[48] = "no concurrency cap";
  if (r->max_concurrency)
    snprintf(cap, sizeof(cap), "max concurrency %u", r->max_concurrency);
  printf("policy %s, %s, batch window %llu ms, matrix %s, sampler %s\n", r->policy, cap,
         (unsigned long long)r->batch_window_ms, r->matrix_source, r->sampler);
  printf("plans %llu, admissions %llu (%llu at their deadline), %u learned profiles\n",
         (unsigned long long)r->plans, (unsigned long long)r->admissions,
         (unsigned long long)r->forced_admissions, r->profiles);
  if (r->fd_limit)
    printf("open fds %llu of %llu\n", (unsigned long long)r->open_fds,
           (unsigned long long)r->fd_limit);
  if (r->latency_source && !strcmp(r->latency_source, "bpf"))
    printf("block I/O latency from BPF\n\n");
  else if (r->latency_source && !strcmp(r->latency_source, "pressure"))
    printf("block I/O latency approximate, from io.pressure (%s)\n\n", or_dash(r->latency_note));
  else
    printf("no block I/O latency (%s)\n\n", or_dash(r->latency_note));
  if (r->kubepods && *r->kubepods && strcmp(r->kubepods, "off") != 0)
    printf("kubepods: %s\n\n", r->kubepods);
}

/* A latency in microseconds as "850us", "12.3ms" or "1.20s"; "~" before
 * an approximate one (io.pressure). */
static void human_us(double us, bool approx, char *buf, size_t n) {
  const char *a = approx ? "~" : "";
  if (us < 1000)
    snprintf(buf, n, "%s%.0fus", a, us);
  else if (us < 1000000)
    snprintf(buf, n, "%s%.1fms", a, us / 1000);
  else
    snprintf(buf, n, "%s%.2fs", a, us / 1000000);
}

/* C's protection debt against its bound (agent/protect/protect.h), in words. */
static void budget_text(const ctr_status *c, char *buf, size_t n) {
  if (c->protection_budget_s < 0)
    snprintf(buf, n, "%.1f s added by protection (no bound: protect_batch_budget = 0)",
             c->protection_debt_s);
  else if (c->budget_spent)
    snprintf(buf, n, "%.1f s added by protection of %.1f s (runtime: %s): spent, runs free",
             c->protection_debt_s, c->protection_budget_s, or_dash(c->budget_source));
  else {
    double left = c->protection_budget_s - c->protection_debt_s;
    /* A job of unknown runtime earns its bound by running free. */
    bool grows = c->budget_source && strcmp(c->budget_source, "unknown") == 0;
    snprintf(buf, n, "%.1f s added by protection of %.1f s (runtime: %s), %.1f s left%s",
             c->protection_debt_s, c->protection_budget_s, or_dash(c->budget_source),
             left > 0 ? left : 0, grows ? " (grows as it runs free)" : "");
  }
}

/* The batch jobs protection has added time to, and what it may still add. */
/* The I/O priority lever: on or off, and why a batch container
 * protection limits is not held (its disk's scheduler ignores priority). */
static void print_ioprio(const status_resp *r) {
  if (r->protect_ioprio == NULL || r->protect_ioprio[0] == '\0')
    return; /* an agent without the lever */
  bool off = strcmp(r->protect_ioprio, "off") == 0;
  printf("\nI/O priority lever: %s", r->protect_ioprio);
  if (off) {
    printf(" (%s)\n", or_dash(r->protect_ioprio_why));
    return;
  }
  if (r->protect_ioprio_ctrs)
    printf(" (%u batch containers held at the low class, %u threads one by one)",
           r->protect_ioprio_ctrs, r->protect_ioprio_tasks);
  if (r->protect_ioprio_why && r->protect_ioprio_why[0])
    printf("; not held: %s", r->protect_ioprio_why);
  printf("\n");
}

static void print_budgets(const status_resp *r) {
  bool head = false;
  for (size_t i = 0; i < r->n_containers; i++) {
    const ctr_status *c = r->containers[i];
    if (c->budget_source == NULL || c->budget_source[0] == '\0' ||
        (c->protection_debt_s <= 0 && !c->budget_spent))
      continue;
    if (!head)
      printf("\nprotection's budget (time it added to batch jobs, and what it may add):\n");
    head = true;
    char b[256];
    budget_text(c, b, sizeof(b));
    printf("  %s: %s\n", ctr_name(c), b);
  }
}

static void print_table(const status_resp *r, bool wide, bool no_trunc) {
  print_summary(r);
  struct table t = {.ncols = wide ? 18 : 12, .id_col = 3};
  if (wide)
    table_row(&t, "NAMESPACE", "POD", "CONTAINER", "ID", "STATE", "CLASS", "HELD", "ADMIT-BY",
              "READ/s", "WRITE/s", "WEIGHT", "KIND", "CONF", "R-IOPS", "W-IOPS", "LAT-P99", "PID",
              "REASON");
  else
    table_row(&t, "NAMESPACE", "POD", "CONTAINER", "ID", "STATE", "CLASS", "HELD", "ADMIT-BY",
              "READ/s", "WRITE/s", "WEIGHT", "REASON");
  bool note = false;
  for (size_t i = 0; i < r->n_containers; i++) {
    const ctr_status *c = r->containers[i];
    char cls[64], rd[48], wr[48], held[48], by[48], weight[32], reason[1024];
    char conf[16], riops[32], wiops[32], pid[16], p99[32] = "-";
    snprintf(cls, sizeof(cls), "%s (%s)", c->class_, c->class_source);
    human_rate(c->read_bps, rd, sizeof(rd));
    human_rate(c->write_bps, wr, sizeof(wr));
    bool pending = !strcmp(c->state, "pending");
    if (!c->holdable)
      snprintf(held, sizeof(held), "never"); /* cannot be held: found, not started by us */
    else if (pending || !strcmp(c->state, "running"))
      human_ms(c->held_ms, held, sizeof(held));
    else
      snprintf(held, sizeof(held), "-");
    snprintf(by, sizeof(by), "-");
    if (pending) {
      char d[40];
      human_ms(c->admit_by_ms, d, sizeof(d));
      snprintf(by, sizeof(by), "in %s", d);
    }
    if (c->io_weight == 0)
      snprintf(weight, sizeof(weight), "-");
    else
      snprintf(weight, sizeof(weight), "%u%s", c->io_weight, c->weight_effective ? "" : "*");
    note |= c->io_weight && !c->weight_effective;
    why(c, reason, sizeof(reason));
    if (wide) {
      snprintf(conf, sizeof(conf), "%.2f", c->confidence);
      snprintf(riops, sizeof(riops), "%.0f", c->read_iops);
      snprintf(wiops, sizeof(wiops), "%.0f", c->write_iops);
      snprintf(pid, sizeof(pid), "%u", c->pid);
      if (c->io_lat_valid && c->io_lat_count)
        human_us(c->io_lat_p99_us, c->io_lat_approx, p99, sizeof(p99));
      table_row(&t, ctr_namespace(c), or_dash(c->pod_name), ctr_name(c), c->id, c->state, cls, held,
                by, rd, wr, weight, or_dash(c->kind), conf, riops, wiops, p99, c->pid ? pid : "-",
                reason);
    } else {
      table_row(&t, ctr_namespace(c), or_dash(c->pod_name), ctr_name(c), c->id, c->state, cls, held,
                by, rd, wr, weight, reason);
    }
  }
  table_print(&t, no_trunc);
  table_free(&t);
  for (size_t i = 0; note && i < r->n_containers; i++) {
    const ctr_status *c = r->containers[i];
    if (c->io_weight && !c->weight_effective) {
      printf("\n* weight not in effect: %s\n", c->weight_note[0] ? c->weight_note : "unknown");
      break;
    }
  }
  if (r->protect_objective && r->protect_lat_ratio > 0)
    printf("\nprotecting '%s' by its latency objective: at %.2f x it in the last window%s\n",
           or_dash(r->protect_victim), r->protect_lat_ratio,
           r->protect_cap_bps ? "" : "; batch uncapped");
  if (r->protect_cap_bps || r->protect_holding)
    printf("\nprotecting latency-sensitive containers: batch capped at %.1f MiB/s%s\n",
           (double)r->protect_cap_bps / (1024 * 1024),
           r->protect_holding ? ", new batch containers held" : "");
  if (r->protect_batch_io_limit || r->protect_frozen)
    printf("\nbatch containers doing I/O at once: at most %u of %u (%u frozen)\n",
           r->protect_batch_io_limit, r->protect_freeze_batch, r->protect_frozen);
  if (r->protect_released)
    printf("\nevery lever released for %u more windows with batch I/O (%s)\n", r->protect_released,
           r->protect_released_why && strcmp(r->protect_released_why, "probe") == 0
               ? "to measure the protected container without them"
               : "they did not lower its misses per byte of batch I/O");
  if (r->protect_help_ratio >= 0)
    printf("\nwith the levers pulled it missed %.2f x as often per byte of batch I/O as "
           "without (last judged)\n",
           r->protect_help_ratio);
  print_ioprio(r);
  print_budgets(r);
  if (r->n_penalties)
    printf("\nmeasured penalties (victim beside neighbour: slowdown; evidence from %d co-runs):\n",
           3);
  for (size_t i = 0; i < r->n_penalties; i++) {
    const Iobatch__Agent__V1__PenaltyPair *p = r->penalties[i];
    printf("  %-10s beside %-10s %6.2fx  %u samples, %u co-runs%s\n", p->victim, p->neighbour,
           p->slowdown, p->samples, p->coruns, p->in_use ? ", in use" : "");
  }
}

static void print_detail(const ctr_status *c) {
  char buf[1024], t1[48], t2[48];
#define ROW(k, ...)                                                                                \
  do {                                                                                             \
    snprintf(buf, sizeof(buf), __VA_ARGS__);                                                       \
    printf("%-16s%s\n", k ":", buf);                                                               \
  } while (0)
  ROW("ID", "%s", c->id);
  ROW("Namespace", "%s", c->namespace_);
  if (c->pod_name && *c->pod_name)
    ROW("Pod", "%s/%s", or_dash(c->pod_namespace), c->pod_name);
  ROW("Container", "%s", ctr_name(c));
  if (c->declared_kind && c->declared_kind[0] && !c->declared_kind_trusted &&
      strcmp(c->declared_kind, or_dash(c->kind)) != 0)
    ROW("Kind", "%s (declared kind %s (untrusted): ignored)", or_dash(c->kind), c->declared_kind);
  else
    ROW("Kind", "%s", or_dash(c->kind));
  ROW("State", "%s", c->state);
  if (c->holdable)
    ROW("Holdable", "yes (it asks to start: the shim or the hooks.d hook)");
  else
    ROW("Holdable", "no: never held (only containers started through the shim or the hooks.d "
                    "hook can be); capped and weighted");
  if (c->qos && *c->qos)
    ROW("QoS", "%s%s%s", c->qos, c->pod_uid && *c->pod_uid ? ", pod uid " : "",
        c->pod_uid ? c->pod_uid : "");
  if (c->rule && *c->rule)
    ROW("Rule", "%s", c->rule);
  bool pending = !strcmp(c->state, "pending");
  human_ms(c->held_ms, t1, sizeof(t1));
  if (pending) {
    ROW("Held", "%s so far", t1);
    human_ms(c->admit_by_ms, t2, sizeof(t2));
    time_t at = time(NULL) + (time_t)(c->admit_by_ms / 1000);
    struct tm tm;
    char clock[32];
    strftime(clock, sizeof(clock), "%H:%M:%S", localtime_r(&at, &tm));
    ROW("Admit by", "%s (in %s) at the latest", clock, t2);
    ROW("Waits for", "%s", or_dash(c->waits_for));
  } else if (!strcmp(c->state, "running")) {
    ROW("Held", "%s before it started", t1);
    ROW("Admitted", "%s", c->reason);
  } else {
    ROW("Reason", "%s", c->reason);
  }
  if (c->conflict[0])
    ROW("Conflicts with", "%s", c->conflict);
  ROW("Class", "%s (%s, confidence %.2f)", c->class_, c->class_source, c->confidence);
  if (c->declared_class && c->declared_class[0] && !c->declared_trusted)
    ROW("Declared", "%s (untrusted: a hint until measured), measured %s", c->declared_class,
        strcmp(c->class_source, "detected") == 0 || strcmp(c->class_source, "profile") == 0
            ? c->class_
            : "not yet");
  else if (c->declared_class && c->declared_class[0])
    ROW("Declared", "%s (trusted)", c->declared_class);
  human_rate(c->read_bps, t1, sizeof(t1));
  human_rate(c->write_bps, t2, sizeof(t2));
  ROW("I/O", "read %s/s %.0f IOPS, write %s/s %.0f IOPS", t1, c->read_iops, t2, c->write_iops);
  if (c->io_lat_valid && c->io_lat_approx) {
    human_us(c->io_lat_p99_us, true, t1, sizeof(t1));
    ROW("I/O latency",
        "%s per request (approximate, from io.pressure: stalled %.0f%% of the "
        "window), %llu requests",
        t1, c->io_stall_share >= 0 ? c->io_stall_share * 100 : 0,
        (unsigned long long)c->io_lat_count);
  } else if (c->io_lat_valid) {
    human_us(c->io_lat_p50_us, false, t1, sizeof(t1));
    human_us(c->io_lat_p99_us, false, t2, sizeof(t2));
    ROW("I/O latency", "p50 %s, p99 %s, %llu requests (last window)", t1, t2,
        (unsigned long long)c->io_lat_count);
  }
  if (c->io_weight)
    ROW("Weight", "%u%s%s", c->io_weight, c->weight_effective ? "" : ", not in effect: ",
        c->weight_effective ? "" : or_dash(c->weight_note));
  else
    ROW("Weight", "-");
  if (c->protected_ && c->lat_target > 0 && c->io_lat_approx)
    ROW("Protected", "yes, objective an I/O stall share of %.3f (%s, approximate)", c->lat_target,
        or_dash(c->lat_target_source));
  else if (c->protected_ && c->lat_target > 0) {
    human_us(c->lat_target, false, t1, sizeof(t1));
    ROW("Protected", "yes, objective p99 %s (%s)", t1, or_dash(c->lat_target_source));
  } else if (c->protected_ && c->share >= 0)
    ROW("Protected",
        "yes, at %.2f of its rate alone (no latency objective yet: %u of %d quiet "
        "windows)",
        c->share, c->lat_quiet_windows, PROTECT_LEARN_WINDOWS);
  else if (c->protected_)
    ROW("Protected", "yes");
  if (c->frozen || c->frozen_ms)
    ROW("Frozen", "%s (%u times, %.1f s in all, by the concurrency lever)",
        c->frozen ? "yes" : "no", c->freezes, (double)c->frozen_ms / 1000);
  if (c->budget_source && c->budget_source[0]) {
    char bt[256];
    budget_text(c, bt, sizeof(bt));
    ROW("Protection", "%s", bt);
    if (c->protection_debt_s > 0)
      ROW("Its debt", "held %.1f s, frozen %.1f s, capped %.1f s", c->protection_held_s,
          (double)c->frozen_ms / 1000, c->protection_capped_s);
  }
  if (c->cap_bps)
    ROW("Capped at", "%.1f MiB/s (protecting a latency-sensitive container)",
        (double)c->cap_bps / (1024 * 1024));
  if (c->work_left_s > 0)
    ROW("Work left", "%.1f s (solo, predicted)", c->work_left_s);
  if (c->open_ended)
    ROW("Open-ended", "yes (never expected to finish)");
  ROW("Workload", "%s", or_dash(c->workload_key));
  if (c->pid)
    ROW("PID", "%u", c->pid);
  human_ms(c->age_ms, t1, sizeof(t1));
  ROW("Registered", "%s ago", t1);
#undef ROW
}

static json_t *ctr_json(const ctr_status *c) {
  json_t *o = json_pack(
      "{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:f, s:f, s:f, s:f, s:f, s:i, "
      "s:b, s:s, s:I, s:I, s:I, s:s, s:b, s:f, s:s, s:i, s:s, s:s}",
      "id", c->id, "namespace", c->namespace_, "pod_namespace", c->pod_namespace, "pod_name",
      c->pod_name, "container_name", c->container_name, "kind", c->kind, "state", c->state, "class",
      c->class_, "class_source", c->class_source, "confidence", c->confidence, "read_bps",
      c->read_bps, "write_bps", c->write_bps, "read_iops", c->read_iops, "write_iops",
      c->write_iops, "io_weight", (int)c->io_weight, "weight_effective", (int)c->weight_effective,
      "weight_note", c->weight_note, "held_ms", (json_int_t)c->held_ms, "admit_by_ms",
      (json_int_t)c->admit_by_ms, "age_ms", (json_int_t)c->age_ms, "waits_for", c->waits_for,
      "open_ended", (int)c->open_ended, "work_left_s", c->work_left_s, "workload_key",
      c->workload_key, "pid", (int)c->pid, "reason", c->reason, "conflict", c->conflict);
  if (o) { /* what protection does to it */
    json_object_set_new(o, "protected", json_boolean(c->protected_));
    json_object_set_new(o, "share", json_real(c->share));
    json_object_set_new(o, "cap_bps", json_integer((json_int_t)c->cap_bps));
    json_object_set_new(o, "declared_class",
                        json_string(c->declared_class ? c->declared_class : ""));
    json_object_set_new(o, "declared_trusted", json_boolean(c->declared_trusted));
    json_object_set_new(o, "declared_kind", json_string(c->declared_kind ? c->declared_kind : ""));
    json_object_set_new(o, "declared_kind_trusted", json_boolean(c->declared_kind_trusted));
    /* block I/O latency of the last window */
    json_object_set_new(o, "io_lat_valid", json_boolean(c->io_lat_valid));
    json_object_set_new(o, "io_lat_approx", json_boolean(c->io_lat_approx));
    json_object_set_new(o, "io_lat_count", json_integer((json_int_t)c->io_lat_count));
    json_object_set_new(o, "io_lat_windows", json_integer((json_int_t)c->io_lat_windows));
    json_object_set_new(o, "io_lat_p50_us", json_real(c->io_lat_p50_us));
    json_object_set_new(o, "io_lat_p99_us", json_real(c->io_lat_p99_us));
    json_object_set_new(o, "io_stall_share", json_real(c->io_stall_share));
    json_object_set_new(o, "lat_target", json_real(c->lat_target));
    json_object_set_new(o, "lat_target_source", json_string(or_dash(c->lat_target_source)));
    json_object_set_new(o, "lat_quiet_windows", json_integer(c->lat_quiet_windows));
    /* pod rules and the concurrency lever (freezing) */
    json_object_set_new(o, "holdable", json_boolean(c->holdable));
    json_object_set_new(o, "rule", json_string(c->rule ? c->rule : ""));
    json_object_set_new(o, "qos", json_string(c->qos ? c->qos : ""));
    json_object_set_new(o, "frozen", json_boolean(c->frozen));
    json_object_set_new(o, "frozen_ms", json_integer((json_int_t)c->frozen_ms));
    json_object_set_new(o, "freezes", json_integer(c->freezes));
    /* the batch's budget (agent/protect/protect.h); budget_s -1: no bound */
    json_object_set_new(o, "protection_debt_s", json_real(c->protection_debt_s));
    json_object_set_new(o, "protection_budget_s", json_real(c->protection_budget_s));
    json_object_set_new(o, "protection_left_s",
                        json_real(c->protection_budget_s < 0 ? -1
                                  : c->protection_budget_s > c->protection_debt_s
                                      ? c->protection_budget_s - c->protection_debt_s
                                      : 0));
    json_object_set_new(o, "protection_held_s", json_real(c->protection_held_s));
    json_object_set_new(o, "protection_capped_s", json_real(c->protection_capped_s));
    json_object_set_new(o, "budget_source", json_string(c->budget_source ? c->budget_source : ""));
    json_object_set_new(o, "budget_spent", json_boolean(c->budget_spent));
    /* Kubernetes' view from the node's CRI */
    json_object_set_new(o, "pod_uid", json_string(c->pod_uid ? c->pod_uid : ""));
    json_t *labels = json_array();
    for (size_t i = 0; i < c->n_pod_labels; i++)
      json_array_append_new(labels, json_string(c->pod_labels[i]));
    json_object_set_new(o, "pod_labels", labels);
    json_object_set_new(o, "pod_meta_source",
                        json_string(c->pod_meta_source ? c->pod_meta_source : ""));
  }
  return o;
}

static json_t *to_json(const status_resp *r) {
  json_t *arr = json_array(), *pen = json_array();
  for (size_t i = 0; i < r->n_containers; i++)
    json_array_append_new(arr, ctr_json(r->containers[i]));
  for (size_t i = 0; i < r->n_penalties; i++) {
    const Iobatch__Agent__V1__PenaltyPair *p = r->penalties[i];
    json_array_append_new(pen, json_pack("{s:s, s:s, s:f, s:I, s:I, s:b}", "victim", p->victim,
                                         "neighbour", p->neighbour, "slowdown", p->slowdown,
                                         "samples", (json_int_t)p->samples, "coruns",
                                         (json_int_t)p->coruns, "in_use", (int)p->in_use));
  }
  json_t *o = json_pack(
      "{s:s, s:s, s:i, s:I, s:s, s:I, s:I, s:I, s:i, s:o, s:o, s:I, s:b, s:s, s:s, "
      "s:b, s:f, s:s}",
      "policy", r->policy, "matrix", r->matrix_source, "max_concurrency", (int)r->max_concurrency,
      "batch_window_ms", (json_int_t)r->batch_window_ms, "sampler", r->sampler, "plans",
      (json_int_t)r->plans, "admissions", (json_int_t)r->admissions, "forced_admissions",
      (json_int_t)r->forced_admissions, "profiles", (int)r->profiles, "containers", arr,
      "penalties", pen, "protect_cap_bps", (json_int_t)r->protect_cap_bps, "protect_holding",
      (int)r->protect_holding, "latency_source", or_dash(r->latency_source), "latency_note",
      r->latency_note ? r->latency_note : "", "protect_objective", (int)r->protect_objective,
      "protect_lat_ratio", r->protect_lat_ratio, "protect_victim", or_dash(r->protect_victim));
  if (o) { /* the concurrency lever */
    json_object_set_new(o, "protect_batch_io_limit", json_integer(r->protect_batch_io_limit));
    json_object_set_new(o, "protect_frozen", json_integer(r->protect_frozen));
    json_object_set_new(o, "protect_freeze_batch", json_integer(r->protect_freeze_batch));
    json_object_set_new(o, "protect_ioprio", json_string(or_dash(r->protect_ioprio)));
    json_object_set_new(o, "protect_ioprio_why",
                        json_string(r->protect_ioprio_why ? r->protect_ioprio_why : ""));
    json_object_set_new(o, "protect_ioprio_ctrs", json_integer(r->protect_ioprio_ctrs));
    json_object_set_new(o, "protect_ioprio_tasks", json_integer(r->protect_ioprio_tasks));
    /* whether the levers help (null: not judged yet) */
    json_object_set_new(o, "protect_help_ratio",
                        r->protect_help_ratio >= 0 ? json_real(r->protect_help_ratio)
                                                   : json_null());
    json_object_set_new(o, "protect_released", json_integer(r->protect_released));
    json_object_set_new(o, "protect_released_why",
                        json_string(r->protect_released_why ? r->protect_released_why : ""));
    /* where pod names come from */
    json_object_set_new(o, "cri", json_string(r->cri ? r->cri : ""));
    json_object_set_new(o, "cri_polls", json_integer((json_int_t)r->cri_polls));
    json_object_set_new(o, "windows_idle", json_integer((json_int_t)r->windows_idle));
    json_object_set_new(o, "windows_full", json_integer((json_int_t)r->windows_full));
    json_object_set_new(o, "sampler_passes", json_integer((json_int_t)r->sampler_passes));
    json_object_set_new(o, "sampler_samples", json_integer((json_int_t)r->sampler_samples));
    json_object_set_new(o, "kubepods", json_string(r->kubepods ? r->kubepods : ""));
    json_object_set_new(o, "open_fds", json_integer((json_int_t)r->open_fds));
    json_object_set_new(o, "fd_limit", json_integer((json_int_t)r->fd_limit));
    json_object_set_new(o, "pod_labels_left_out", json_integer(r->pod_labels_left_out));
  }
  return o;
}

static int print_json(json_t *j) {
  char *text = j ? json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
  json_decref(j);
  if (text == NULL) {
    fprintf(stderr, "iobatchctl status: cannot format the answer as JSON\n");
    return 1;
  }
  puts(text);
  free(text);
  return 0;
}

/* ID, NS/ID or a unique prefix of an ID (a cut one from the table too:
 * its ellipsis is dropped).  Prints why not and returns NULL when none or
 * several match. */
static const ctr_status *find(const status_resp *r, const char *arg) {
  char want[1024];
  snprintf(want, sizeof(want), "%s", arg);
  size_t n = strlen(want);
  if (n >= 3 && !strcmp(want + n - 3, "\u2026"))
    want[n -= 3] = '\0';
  else if (n >= 3 && !strcmp(want + n - 3, "..."))
    want[n -= 3] = '\0';
  const char *ns = NULL, *id = want;
  char *slash = strchr(want, '/');
  if (slash) {
    *slash = '\0';
    ns = want;
    id = slash + 1;
  }
  const ctr_status *exact = NULL, *prefix = NULL;
  size_t n_exact = 0, n_prefix = 0;
  for (size_t i = 0; i < r->n_containers; i++) {
    const ctr_status *c = r->containers[i];
    if (ns && strcmp(c->namespace_, ns))
      continue;
    if (!strcmp(c->id, id)) {
      exact = c;
      n_exact++;
    } else if (*id && !strncmp(c->id, id, strlen(id))) {
      prefix = c;
      n_prefix++;
    }
  }
  if (n_exact == 1)
    return exact;
  if (n_exact == 0 && n_prefix == 1)
    return prefix;
  if (n_exact + n_prefix == 0) {
    fprintf(stderr, "iobatchctl status: no container '%s'\n", arg);
    return NULL;
  }
  fprintf(stderr, "iobatchctl status: '%s' matches %zu containers:", arg,
          n_exact ? n_exact : n_prefix);
  for (size_t i = 0; i < r->n_containers; i++) {
    const ctr_status *c = r->containers[i];
    if ((!ns || !strcmp(c->namespace_, ns)) &&
        (n_exact ? !strcmp(c->id, id) : !strncmp(c->id, id, strlen(id))))
      fprintf(stderr, " %s/%s", c->namespace_, c->id);
  }
  fprintf(stderr, " (give more of the id, or NAMESPACE/ID)\n");
  return NULL;
}

static int fetch(status_resp **out, bool labels) {
  cleanup_error struct iob_error *err = NULL;
  if (iobctl_status_fetch(out, labels, 10000, &err) < 0) {
    iob_error_print("iobatchctl status", &err);
    return -1;
  }
  return 0;
}

/* Every string of M and of the messages in it, escaped in place
 * (common/escape.h): workload keys, pod, container and namespace names and
 * ids are the tenants' choice and pass through the agent unchanged.  For a
 * terminal (CONTROLS) no control character or escape sequence is printed
 * raw; for JSON only what is not UTF-8 is escaped (jansson escapes the
 * control characters itself and refuses invalid UTF-8).  The strings are
 * protobuf-c's, from its default allocator (malloc), as are ours. */
static void escape_strings(ProtobufCMessage *m, bool controls) {
  const ProtobufCMessageDescriptor *d = m->descriptor;
  for (unsigned i = 0; i < d->n_fields; i++) {
    const ProtobufCFieldDescriptor *f = &d->fields[i];
    char *base = (char *)m;
    size_t n = 1;
    void **v = (void **)(base + f->offset);
    if (f->label == PROTOBUF_C_LABEL_REPEATED) {
      n = *(size_t *)(base + f->quantifier_offset);
      v = *(void ***)v;
    }
    for (size_t k = 0; v && k < n; k++) {
      if (f->type == PROTOBUF_C_TYPE_STRING && v[k] && iob_text_needs_escape(v[k], controls)) {
        char *e = iob_escape_text(v[k], controls);
        free(v[k]);
        v[k] = e;
      } else if (f->type == PROTOBUF_C_TYPE_MESSAGE && v[k]) {
        escape_strings(v[k], controls);
      }
    }
  }
}

int iobctl_status(int argc, char **argv) {
  enum { O_NOTRUNC = IOBCTL_OPT_VERB };
  static const struct option opts[] = {
      IOBCTL_OUTPUT_OPTIONS,
      {"no-trunc", no_argument, NULL, O_NOTRUNC},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  enum iobctl_output out = IOBCTL_OUT_TABLE;
  bool no_trunc = false;
  optind = 0;
  opterr = 0;
  int o;
  while ((o = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
    int r = iobctl_output_opt("status", o, optarg, true, &out);
    if (r != 0) {
      if (r < 0)
        return 2;
      continue;
    }
    switch (o) {
    case O_NOTRUNC:
      no_trunc = true;
      break;
    case 'h':
      usage(stdout);
      return 0;
    default:
      return iobctl_usage_error("status", o, argv);
    }
  }
  if (argc - optind > 1)
    return iobctl_usage_fail("status", "unexpected argument '%s'", argv[optind + 1]);
  const char *id = optind < argc ? argv[optind] : NULL;
  status_resp *s = NULL;
  /* Labels only where they are shown (JSON): the table is what the
   * DaemonSet's probes ask for, every few seconds. */
  if (fetch(&s, out == IOBCTL_OUT_JSON) < 0)
    return 1;
  escape_strings(&s->base, out != IOBCTL_OUT_JSON);
  int rc = 0;
  if (id) {
    const ctr_status *c = find(s, id);
    if (c == NULL)
      rc = 1;
    else if (out == IOBCTL_OUT_JSON)
      rc = print_json(ctr_json(c));
    else
      print_detail(c);
  } else if (out == IOBCTL_OUT_JSON) {
    rc = print_json(to_json(s));
  } else {
    print_table(s, out == IOBCTL_OUT_WIDE, no_trunc);
  }
  protobuf_c_message_free_unpacked(&s->base, NULL);
  return rc;
}
