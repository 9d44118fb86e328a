/* iobatchd: the node agent.  main only reads the command line and hands
 * over to daemon.c. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/config.h"
#include "agent/daemon.h"
#include "common/cleanup.h"
#include "common/log.h"

static void usage(FILE *f) {
  fprintf(f, "usage: iobatchd [-c CONFIG] [--socket PATH] [--state-dir DIR] [--debug]\n"
             "  -c, --config FILE    configuration (default %s; absent is fine)\n"
             "      --socket PATH    override 'socket'\n"
             "      --state-dir DIR  override 'state_dir'\n"
             "  -d, --debug          debug log lines\n",
          AGENT_DEFAULT_CONFIG);
}

/* Command line over config file: the file named by -c must exist, the
 * default one may be missing. */
static int parse_args(int argc, char **argv, struct agent_config *cfg, struct iob_error **err) {
  static const struct option opts[] = {
      {"config", required_argument, NULL, 'c'}, {"socket", required_argument, NULL, 's'},
      {"state-dir", required_argument, NULL, 'S'}, {"debug", no_argument, NULL, 'd'},
      {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0},
  };
  const char *config = NULL, *socket = NULL, *state = NULL;
  bool debug = false;
  int o;
  while ((o = getopt_long(argc, argv, "c:dh", opts, NULL)) != -1) {
    switch (o) {
    case 'c':
      config = optarg;
      break;
    case 's':
      socket = optarg;
      break;
    case 'S':
      state = optarg;
      break;
    case 'd':
      debug = true;
      break;
    case 'h':
      usage(stdout);
      exit(0);
    default:
      usage(stderr);
      exit(2);
    }
  }
  if (optind < argc)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "unexpected argument '%s'",
                          argv[optind]);
  if (agent_config_load(cfg, config ? config : AGENT_DEFAULT_CONFIG, config != NULL, err) < 0)
    return -1;
  if (socket && (free(cfg->socket_path), cfg->socket_path = strdup(socket)) == NULL)
    return iob_error_code(err, IOB_CODE_RESOURCE_EXHAUSTED, "out of memory");
  if (state && (free(cfg->state_dir), cfg->state_dir = strdup(state)) == NULL)
    return iob_error_code(err, IOB_CODE_RESOURCE_EXHAUSTED, "out of memory");
  cfg->debug = cfg->debug || debug;
  return 0;
}

int main(int argc, char **argv) {
  cleanup_error struct iob_error *err = NULL;
  struct agent_config cfg;
  agent_config_default(&cfg);
  iob_log_init("iobatchd", 0);
  if (parse_args(argc, argv, &cfg, &err) < 0) {
    iob_error_print("iobatchd", &err);
    agent_config_release(&cfg);
    return 2;
  }
  iob_log_init("iobatchd", cfg.debug);
  struct agent_daemon d;
  int r = agent_daemon_init(&d, &cfg, &err);
  agent_config_release(&cfg);
  if (r == 0)
    r = agent_daemon_run(&d, &err);
  agent_daemon_release(&d);
  if (r < 0) {
    iob_error_print("iobatchd", &err);
    return 1;
  }
  return 0;
}
