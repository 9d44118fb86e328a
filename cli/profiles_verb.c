// SPDX-License-Identifier: Apache-2.0
/* iobatchctl profiles: what the agent learned, read from its state dir
 * (no agent needed). */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "agent/config.h"
#include "agent/store/profiles.h"
#include "cli/cli.h"
#include "common/cleanup.h"

static void usage(FILE *f) {
  fprintf(f, "usage: iobatchctl profiles [--state-dir DIR] [-o table|json]\n"
             "The workload profiles the agent learned, read from its state directory\n"
             "(no agent needed).\n"
             "      --state-dir DIR  the agent's state_dir (default " AGENT_DEFAULT_STATE_DIR ")\n"
             "  -o, --output FORMAT  table (default) or json\n"
             "      --json           the same as -o json\n"
             "  -h, --help           this text\n");
}

/* One namespace's profiles ("-": those of no namespace, and every one of
 * a file written before namespaces). */
static void print_profiles(const char *ns, json_t *profs) {
  const char *key;
  json_t *v;
  json_object_foreach(profs, key, v) {
    printf("%-20.20s %-40.40s %-11s %5.2f %8.1fs %10.0f %5lld\n", ns, key,
           json_string_value(json_object_get(v, "class")),
           json_real_value(json_object_get(v, "confidence")),
           json_real_value(json_object_get(v, "solo_s")),
           json_real_value(json_object_get(v, "solo_bps")),
           (long long)json_integer_value(json_object_get(v, "runs")));
  }
}

int iobctl_profiles(int argc, char **argv) {
  enum { O_DIR = IOBCTL_OPT_VERB };
  static const struct option opts[] = {
      IOBCTL_OUTPUT_OPTIONS,
      {"state-dir", required_argument, NULL, O_DIR},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  const char *dir = AGENT_DEFAULT_STATE_DIR;
  enum iobctl_output out = IOBCTL_OUT_TABLE;
  optind = 0;
  opterr = 0;
  int o;
  while ((o = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
    int r = iobctl_output_opt("profiles", o, optarg, false, &out);
    if (r != 0) {
      if (r < 0)
        return 2;
      continue;
    }
    switch (o) {
    case O_DIR:
      dir = optarg;
      break;
    case 'h':
      usage(stdout);
      return 0;
    default:
      return iobctl_usage_error("profiles", o, argv);
    }
  }
  if (optind < argc)
    return iobctl_usage_fail("profiles", "unexpected argument '%s'", argv[optind]);
  bool json = out == IOBCTL_OUT_JSON;
  cleanup_error struct iob_error *err = NULL;
  struct agent_profiles p;
  memset(&p, 0, sizeof(p));
  if (asprintf(&p.path, "%s/%s", dir, AGENT_PROFILES_FILE) < 0)
    return 1;
  /* Read-only: a corrupt file is the agent's to set aside, not ours. */
  FILE *f = fopen(p.path, "r");
  if (f == NULL) {
    iob_error(&err, errno, "cannot open '%s'", p.path);
    iob_error_print("iobatchctl profiles", &err);
    agent_profiles_release(&p);
    return 1;
  }
  fclose(f);
  json_error_t je;
  json_auto_t *root = json_load_file(p.path, JSON_REJECT_DUPLICATES, &je);
  if (root == NULL) {
    fprintf(stderr, "iobatchctl profiles: cannot parse '%s': line %d: %s\n", p.path, je.line,
            je.text);
    agent_profiles_release(&p);
    return 1;
  }
  if (json) {
    char *text = json_dumps(root, JSON_INDENT(2) | JSON_SORT_KEYS);
    if (text)
      puts(text);
    free(text);
    agent_profiles_release(&p);
    return 0;
  }
  printf("%-20s %-40s %-11s %5s %9s %10s %5s\n", "NAMESPACE", "WORKLOAD", "CLASS", "CONF", "SOLO",
         "SOLO-BPS", "RUNS");
  print_profiles("-", json_object_get(root, "profiles"));
  const char *ns;
  json_t *v;
  json_object_foreach(json_object_get(root, "namespaces"), ns, v) print_profiles(ns, v);
  agent_profiles_release(&p);
  return 0;
}
