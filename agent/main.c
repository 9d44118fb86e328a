// SPDX-License-Identifier: Apache-2.0
/* iobatchd: the node agent.  main only reads the command line and hands
 * over to daemon.c. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/config.h"
#include "agent/daemon.h"
#include "agent/serve/fdlimit.h"
#include "agent/store/restore.h"
#include "common/cleanup.h"
#include "common/log.h"
#include "common/sdnotify.h"
#include "common/version.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: iobatchd [-c CONFIG] [--socket PATH] [--state-dir DIR] [--debug] "
          "[--restore-only]\n"
          "  -c, --config FILE    configuration (default %s; absent is fine)\n"
          "      --socket PATH    override 'socket'\n"
          "      --state-dir DIR  override 'state_dir'\n"
          "  -d, --debug          debug log lines\n"
          "      --restore-only   put back what the restore journal holds (caps, weights,\n"
          "                       freezes) and exit: 0 nothing left, 1 values kept in it\n"
          "      --version        print the version and exit\n",
          AGENT_DEFAULT_CONFIG);
}

static bool restore_only;

static int parse_args(int argc, char **argv, struct agent_options *o, struct iob_error **err) {
  static const struct option opts[] = {
      {"config", required_argument, NULL, 'c'},
      {"socket", required_argument, NULL, 's'},
      {"state-dir", required_argument, NULL, 'S'},
      {"debug", no_argument, NULL, 'd'},
      {"help", no_argument, NULL, 'h'},
      {"version", no_argument, NULL, 'V'},
      {"restore-only", no_argument, NULL, 'R'},
      {NULL, 0, NULL, 0},
  };
  int opt;
  while ((opt = getopt_long(argc, argv, "c:dh", opts, NULL)) != -1) {
    switch (opt) {
    case 'c':
      o->config_path = optarg;
      break;
    case 's':
      o->socket_path = optarg;
      break;
    case 'S':
      o->state_dir = optarg;
      break;
    case 'd':
      o->debug = true;
      break;
    case 'h':
      usage(stdout);
      exit(0);
    case 'R':
      restore_only = true;
      break;
    case 'V':
      exit(iob_version_print("iobatchd") < 0 ? 1 : 0);
    default:
      usage(stderr);
      exit(2);
    }
  }
  if (optind < argc)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "unexpected argument '%s'", argv[optind]);
  return 0;
}

/* systemd Type=notify (packaging/systemd/iobatchd.service): READY once the
 * API socket listens, so units ordered after us (containerd) start only
 * then.  A failed notification is logged, not fatal: systemd itself times
 * the unit out if READY never arrives. */
static void notify(const char *state) {
  cleanup_error struct iob_error *err = NULL;
  if (iob_sd_notify(state, &err) < 0)
    iob_warn("%s", err->msg);
}

/* Before anything is opened: a container costs the agent file descriptors
 * (agent/serve/fdlimit.h), and the default soft limit of 1024 runs out long
 * before AGENT_MAX_CONTAINERS.  A hard limit below the need is run with,
 * and said. */
static void raise_fd_limit(void) {
  cleanup_error struct iob_error *err = NULL;
  struct agent_fdlimit l;
  if (agent_fdlimit_raise(&l, &err) < 0) {
    iob_warn("%s", err->msg);
    return;
  }
  if (l.short_)
    iob_warn("open file limit %llu is below the %d that %d containers need: registrations "
             "fail from about %llu containers on (raise LimitNOFILE= or the runtime's "
             "RLIMIT_NOFILE)",
             (unsigned long long)l.hard, AGENT_FDS_NEEDED, AGENT_MAX_CONTAINERS,
             (unsigned long long)(l.hard > AGENT_FDS_SPARE
                                      ? (l.hard - AGENT_FDS_SPARE) / AGENT_FDS_PER_CTR
                                      : 0));
  else if (l.soft != l.was)
    iob_info("open file limit raised from %llu to %llu", (unsigned long long)l.was,
             (unsigned long long)l.soft);
}

/* iobatchd --restore-only, run by uninstall (install.sh, the package's
 * prerm) once no agent runs: an agent that did not stop (OOM, a crash
 * loop) leaves caps, cpu.weight 1 and frozen cgroups that nothing else
 * would ever put back.  Retries wait 200 ms, then twice as long, five
 * times: a cgroup being torn down or thawed by another writer settles in
 * that time.  Exit 0 only when the journal is gone. */
static int run_restore_only(const struct agent_config *cfg) {
  cleanup_error struct iob_error *err = NULL;
  size_t restored = 0;
  int left = agent_restore_only(cfg->state_dir, NULL, 5, 200, &restored, &err);
  if (left < 0) {
    iob_error_print("iobatchd", &err);
    return 1;
  }
  if (left > 0) {
    iob_warn("restore-only: %zu values put back, %d not: kept in '%s/%s'", restored, left,
             cfg->state_dir, AGENT_RESTORE_FILE);
    return 1;
  }
  iob_info("restore-only: %zu values put back, nothing left to restore", restored);
  return 0;
}

int main(int argc, char **argv) {
  cleanup_error struct iob_error *err = NULL;
  struct agent_config cfg;
  struct agent_options opts = {0};
  int r;
  agent_config_default(&cfg);
  iob_log_init("iobatchd", 0);
  if (parse_args(argc, argv, &opts, &err) < 0 || agent_config_from_options(&cfg, &opts, &err) < 0) {
    iob_error_print("iobatchd", &err);
    agent_config_release(&cfg);
    return 2;
  }
  iob_log_init("iobatchd", cfg.debug);
  const char *trust_notice = agent_config_trust_notice(&cfg);
  if (trust_notice && !restore_only)
    iob_warn("%s", trust_notice);
  if (restore_only) {
    r = run_restore_only(&cfg);
    agent_config_release(&cfg);
    return r;
  }
  raise_fd_limit();
  struct agent_daemon d;
  r = agent_daemon_init(&d, &cfg, &opts, &err);
  agent_config_release(&cfg);
  if (r == 0) {
    char status[4200];
    snprintf(status, sizeof(status), "READY=1\nSTATUS=listening on %s", d.cfg.socket_path);
    notify(status);
    r = agent_daemon_run(&d, &err);
    notify("STOPPING=1");
  }
  agent_daemon_release(&d);
  if (r < 0) {
    iob_error_print("iobatchd", &err);
    return 1;
  }
  return 0;
}
