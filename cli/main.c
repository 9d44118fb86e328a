// SPDX-License-Identifier: Apache-2.0
/* iobatchctl: the global options, then dispatch to the verb. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/calibrate.h"
#include "cli/cli.h"
#include "common/log.h"
#include "common/version.h"

static int help(int argc, char **argv);

/* `iobatchctl --help` prints this table between "Commands:" and the next
 * blank line, one command per line, its name first: shell completion reads
 * the names from there. */
static const struct {
  const char *name;
  int (*fn)(int, char **);
  const char *summary;
} verbs[] = {
    {"status", iobctl_status, "pending and running containers of the agent, or one in detail"},
    {"plan", iobctl_plan, "offline batches for a job file (no agent needed)"},
    {"profiles", iobctl_profiles, "learned workload profiles"},
    {"calibrate", iobctl_calibrate, "measure this machine's penalty matrix with fio"},
    {"register", iobctl_register, "tell the agent about a container (as a shim or hook does)"},
    {"admit", iobctl_admit, "ask the agent to start a container; waits until admitted"},
    {"cancel", iobctl_cancel, "withdraw a container's pending admission"},
    {"exited", iobctl_exited, "tell the agent a container exited"},
    {"check", iobctl_check, "node-problem-detector plugin: check io-pressure"},
    {"annotations", iobctl_annotations, "the io.iobatch.* annotations and their trust rules"},
    {"help", help, "this text, or a command's usage: help COMMAND"},
};

static void usage(FILE *f) {
  fprintf(f, "usage: iobatchctl [--socket PATH] COMMAND [ARGS]\n"
             "\n"
             "Commands:\n");
  for (size_t v = 0; v < sizeof(verbs) / sizeof(verbs[0]); v++)
    fprintf(f, "  %-11s %s\n", verbs[v].name, verbs[v].summary);
  fprintf(f, "\n"
             "Options:\n"
             "  --socket PATH  the agent's socket; default $" IOBCTL_SOCKET_ENV " (what the shim\n"
             "                 reads too), else " AGENT_DEFAULT_SOCKET "\n"
             "  --version      print the version and exit\n"
             "  -h, --help     this text\n"
             "\n"
             "Run 'iobatchctl COMMAND --help' for a command's options.\n");
}

static int help(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
    usage(stdout);
    return 0;
  }
  char *sub[] = {argv[1], (char *)"--help", NULL};
  for (size_t v = 0; v < sizeof(verbs) / sizeof(verbs[0]); v++)
    if (strcmp(argv[1], verbs[v].name) == 0 && verbs[v].fn != help)
      return verbs[v].fn(2, sub);
  fprintf(stderr, "iobatchctl help: unknown command '%s'\n", argv[1]);
  return 2;
}

static const char *socket_from_env(void) {
  const char *s = getenv(IOBCTL_SOCKET_ENV);
  if (s && *s)
    return s;
  return NULL;
}

int main(int argc, char **argv) {
  iob_log_init("iobatchctl", 0);
  iobctl_socket = socket_from_env();
  int i = 1;
  for (; i < argc && argv[i][0] == '-'; i++) {
    if (strcmp(argv[i], "--socket") == 0 && i + 1 < argc) {
      iobctl_socket = argv[++i];
    } else if (strncmp(argv[i], "--socket=", 9) == 0) {
      iobctl_socket = argv[i] + 9;
    } else if (strcmp(argv[i], "--version") == 0) {
      return iob_version_print("iobatchctl") < 0 ? 1 : 0;
    } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
      usage(stdout);
      return 0;
    } else {
      fprintf(stderr, "iobatchctl: unknown option '%s'\nRun 'iobatchctl --help' for usage.\n",
              argv[i]);
      return 2;
    }
  }
  if (iobctl_socket == NULL || *iobctl_socket == '\0')
    iobctl_socket = AGENT_DEFAULT_SOCKET;
  if (i >= argc) {
    usage(stderr);
    return 2;
  }
  for (size_t v = 0; v < sizeof(verbs) / sizeof(verbs[0]); v++)
    if (strcmp(argv[i], verbs[v].name) == 0)
      return verbs[v].fn(argc - i, argv + i);
  fprintf(stderr, "iobatchctl: unknown command '%s'\nRun 'iobatchctl --help' for usage.\n",
          argv[i]);
  return 2;
}
