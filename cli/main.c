/* iobatchctl: dispatch to the verb. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/calibrate.h"
#include "cli/cli.h"
#include "common/log.h"

const char *iobctl_socket;

static void usage(FILE *f) {
  fprintf(f,
          "usage: iobatchctl [--socket PATH] COMMAND [ARGS]\n"
          "\n"
          "  status [--json]          pending and running containers of the agent\n"
          "  plan FILE [--cap N] [--alpha A] [--matrix FILE] [--json] [--agent]\n"
          "                           offline batches for jobs 'name class [solo_seconds]'\n"
          "                           per line, or JSON (no agent needed; --agent asks it)\n"
          "  profiles [--state-dir DIR] [--json]   learned workload profiles\n"
          "  calibrate --dir DIR ...  measure the penalty matrix with fio (see --help)\n"
          "\n"
          "  register ID [--ns NS] [--class C] [--cgroup PATH] [--pid N] [--key K]\n"
          "           [--max-hold MS] [--running]\n"
          "  admit ID [--ns NS] [--class C] [--key K] [--max-hold MS] [--timeout MS]\n"
          "                           waits until admitted; exit 0 admitted, 1 not\n"
          "  cancel ID [--ns NS]      exited ID [--ns NS] [--status N]\n"
          "                           what a shim or hook tells the agent\n"
          "\n"
          "The agent's socket: --socket, else $IOBATCH_SOCKET, else %s.\n",
          AGENT_DEFAULT_SOCKET);
}

int main(int argc, char **argv) {
  static const struct {
    const char *name;
    int (*fn)(int, char **);
  } verbs[] = {
      {"status", iobctl_status},       {"plan", iobctl_plan},         {"profiles", iobctl_profiles},
      {"calibrate", iobctl_calibrate}, {"register", iobctl_register}, {"admit", iobctl_admit},
      {"cancel", iobctl_cancel},       {"exited", iobctl_exited},
  };
  iob_log_init("iobatchctl", 0);
  iobctl_socket = getenv("IOBATCH_SOCKET");
  int i = 1;
  for (; i < argc && argv[i][0] == '-'; i++) {
    if (strcmp(argv[i], "--socket") == 0 && i + 1 < argc) {
      iobctl_socket = argv[++i];
    } else if (strncmp(argv[i], "--socket=", 9) == 0) {
      iobctl_socket = argv[i] + 9;
    } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
      usage(stdout);
      return 0;
    } else {
      fprintf(stderr, "iobatchctl: unknown option '%s'\n", argv[i]);
      usage(stderr);
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
  fprintf(stderr, "iobatchctl: unknown command '%s'\n", argv[i]);
  usage(stderr);
  return 2;
}
