// SPDX-License-Identifier: Apache-2.0
/* iobatchctl plan FILE: the offline batches for a list of jobs, computed
 * here with the batcher (no agent needed). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batcher/jobfile.h"
#include "iobatch/agent.pb-c.h"
#include "cli/cli.h"
#include "common/cleanup.h"
#include "common/file.h"
#include "common/xalloc.h"

static int read_input(const char *path, char **buf, size_t *len, struct iob_error **err) {
  cleanup_close int fd = strcmp(path, "-") == 0 ? dup(0) : open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return iob_error(err, errno, "cannot open '%s'", path);
  return iob_read_fd(fd, path, BATCH_JOBFILE_SIZE_MAX, buf, len, err);
}

static int load_matrix(struct batch_config *cfg, const char *path, struct iob_error **err) {
  cleanup_free char *buf = NULL;
  size_t len = 0;
  if (read_input(path, &buf, &len, err) < 0)
    return -1;
  return batch_config_parse(cfg, path, buf, len, err);
}

static void print_plan(const struct batch_jobfile_plan *r, const struct batch_jobfile *j) {
  double makespan = 0;
  bool all_solo = true;
  for (size_t b = 0; b < r->n_batches; b++) {
    const struct batch_jobfile_batch *pb = &r->batches[b];
    double longest = 0;
    printf("batch %zu:", b + 1);
    for (size_t k = 0; k < pb->n_names; k++) {
      for (size_t i = 0; i < j->n; i++)
        if (strcmp(j->v[i].name, pb->names[k]) == 0) {
          printf(" %s(%s)", pb->names[k], j->v[i].cls);
          if (j->v[i].solo_s <= 0)
            all_solo = false;
          if (j->v[i].solo_s > longest)
            longest = j->v[i].solo_s;
        }
    }
    makespan += longest;
    printf("  penalty %.2f\n", pb->penalty);
  }
  printf("objective %.4f, %zu batches, %s%s\n", r->objective, r->n_batches, r->solver,
         r->optimal ? " (proven optimal)" : "");
  if (all_solo)
    printf("batches one after another: %.1f s (longest solo job per batch, summed)\n", makespan);
}

static void print_json(const struct batch_jobfile_plan *r) {
  json_auto_t *batches = json_array();
  for (size_t b = 0; b < r->n_batches; b++) {
    json_t *names = json_array();
    for (size_t k = 0; k < r->batches[b].n_names; k++)
      json_array_append_new(names, json_string(r->batches[b].names[k]));
    json_array_append_new(
        batches, json_pack("{s:o, s:f}", "names", names, "penalty", r->batches[b].penalty));
  }
  json_auto_t *o = json_pack("{s:O, s:f, s:s, s:b}", "batches", batches, "objective", r->objective,
                             "solver", r->solver, "optimal", (int)r->optimal);
  char *text = o ? json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
  if (text)
    puts(text);
  free(text);
}

/* The agent's answer as a plan; its names stay in r. */
static void from_response(const Iobatch__Agent__V1__PlanResponse *r, struct batch_jobfile_plan *p) {
  memset(p, 0, sizeof(*p));
  p->batches = xcalloc(r->n_batches + 1, sizeof(*p->batches));
  for (size_t b = 0; b < r->n_batches; b++)
    p->batches[b] = (struct batch_jobfile_batch){.names = r->batches[b]->names,
                                                 .n_names = r->batches[b]->n_names,
                                                 .penalty = r->batches[b]->penalty};
  p->n_batches = r->n_batches;
  p->objective = r->objective;
  p->optimal = r->optimal;
  p->solver = r->solver;
}

/* The same question to the running agent: its matrix and settings. */
static int ask_agent(const struct batch_jobfile *j, unsigned cap, double alpha,
                     Iobatch__Agent__V1__PlanResponse **out, struct iob_error **err) {
  cleanup_free Iobatch__Agent__V1__PlanJob *pj = xcalloc(j->n + 1, sizeof(*pj));
  cleanup_free Iobatch__Agent__V1__PlanJob **pv = xcalloc(j->n + 1, sizeof(*pv));
  for (size_t i = 0; i < j->n; i++) {
    iobatch__agent__v1__plan_job__init(&pj[i]);
    pj[i].name = j->v[i].name;
    pj[i].class_ = j->v[i].cls;
    pj[i].solo_seconds = j->v[i].solo_s;
    pv[i] = &pj[i];
  }
  struct ttrpc_client *c = NULL;
  if (iobctl_connect(&c, err) < 0)
    return -1;
  Iobatch__Agent__V1__PlanRequest req = IOBATCH__AGENT__V1__PLAN_REQUEST__INIT;
  req.jobs = pv;
  req.n_jobs = j->n;
  req.cap = cap;
  req.alpha = alpha > 0 ? alpha : 0;
  ProtobufCMessage *resp = NULL;
  int r =
      ttrpc_client_call(c, AGENT_SERVICE, "Plan", &req.base,
                        &iobatch__agent__v1__plan_response__descriptor, &resp, 30000, NULL, 0, err);
  ttrpc_client_free(c);
  if (r < 0)
    return -1;
  *out = (Iobatch__Agent__V1__PlanResponse *)resp;
  return 0;
}

static void usage(FILE *f) {
  fprintf(f, "usage: iobatchctl plan FILE [--cap N] [--alpha A] [--matrix FILE] [--agent]\n"
             "                      [-o table|json]\n"
             "Batches for the jobs in FILE ('-': stdin): 'name class [solo_seconds]' per\n"
             "line, or JSON.  Computed here with the batcher; --agent asks iobatchd.\n"
             "      --cap N          at most N jobs per batch\n"
             "      --alpha A        the paper objective's weight of the penalty (0..1)\n"
             "      --matrix FILE    a batcher config / penalty matrix file\n"
             "      --agent          ask the agent (its matrix and settings)\n"
             "  -o, --output FORMAT  table (default) or json\n"
             "      --json           the same as -o json\n"
             "  -h, --help           this text\n");
}

/* Returns 0, 2 after a usage error (printed), 3 after --help, or < 0. */
static int run(int argc, char **argv, struct iob_error **err) {
  static const struct option opts[] = {
      {"cap", required_argument, NULL, 'c'},    {"alpha", required_argument, NULL, 'a'},
      {"matrix", required_argument, NULL, 'm'}, {"json", no_argument, NULL, 'j'},
      {"agent", no_argument, NULL, 'A'},        {"output", required_argument, NULL, 'o'},
      {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
  };
  enum iobctl_output out = IOBCTL_OUT_TABLE;
  struct batch_config cfg;
  batch_config_default(&cfg);
  const char *matrix = NULL;
  long cap = 0;
  double alpha = -1;
  bool json = false, agent = false;
  optind = 0;
  opterr = 0;
  int o;
  while ((o = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
    char *end = NULL;
    switch (o) {
    case 'c':
      cap = strtol(optarg, &end, 10);
      if (*end || cap < 1 || cap > BATCH_MAX_BATCH)
        return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid --cap '%s' (1..%d)", optarg,
                              BATCH_MAX_BATCH);
      break;
    case 'a':
      alpha = strtod(optarg, &end);
      if (*end || end == optarg || !(alpha >= 0 && alpha <= 1))
        return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid --alpha '%s' (0..1)",
                              optarg);
      break;
    case 'm':
      matrix = optarg;
      break;
    case 'j':
      out = IOBCTL_OUT_JSON;
      break;
    case 'o':
      if (iobctl_output_parse("plan", optarg, false, &out) < 0)
        return 2;
      break;
    case 'A':
      agent = true;
      break;
    case 'h':
      usage(stdout);
      return 3;
    default:
      return iobctl_usage_error("plan", o, argv);
    }
  }
  json = out == IOBCTL_OUT_JSON;
  if (optind == argc)
    return iobctl_usage_fail("plan", "expected one job file ('-': stdin)");
  if (optind < argc - 1)
    return iobctl_usage_fail("plan", "unexpected argument '%s'", argv[optind + 1]);
  const char *path = argv[optind];
  if (matrix && load_matrix(&cfg, matrix, err) < 0)
    return -1;
  if (cap)
    cfg.max_batch = (unsigned)cap;
  if (alpha >= 0)
    cfg.alpha = alpha;
  cleanup_free char *buf = NULL;
  size_t len = 0;
  if (read_input(path, &buf, &len, err) < 0)
    return -1;
  struct batch_jobfile j = {0};
  int r = batch_jobfile_parse(path, buf, len, &j, err);
  Iobatch__Agent__V1__PlanResponse *resp = NULL;
  struct batch_jobfile_plan plan = {0};
  if (r == 0 && agent) {
    r = ask_agent(&j, (unsigned)cap, alpha, &resp, err);
    if (r == 0)
      from_response(resp, &plan);
  } else if (r == 0) {
    r = batch_jobfile_solve(&cfg, j.v, j.n, &plan, err);
  }
  if (r == 0) {
    if (json)
      print_json(&plan);
    else
      print_plan(&plan, &j);
  }
  if (resp) {
    /* the names are the response's: only the arrays are ours */
    free(plan.batches);
    protobuf_c_message_free_unpacked(&resp->base, NULL);
  } else {
    batch_jobfile_plan_release(&plan);
  }
  batch_jobfile_release(&j);
  return r;
}

int iobctl_plan(int argc, char **argv) {
  cleanup_error struct iob_error *err = NULL;
  int r = run(argc, argv, &err);
  if (r == 2)
    return 2;
  if (r == 3)
    return 0;
  if (r < 0) {
    iob_error_print("iobatchctl plan", &err);
    return 1;
  }
  return 0;
}
