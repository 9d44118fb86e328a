// SPDX-License-Identifier: Apache-2.0
/* iobatch-hook: see hook.h.  Prints nothing but failures (one line on
 * stderr), plus debug lines with --debug; exit 0 lets the container start. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "client/api.h"
#include "cgroupv2/cg2.h"
#include "common/cleanup.h"
#include "common/log.h"
#include "common/version.h"
#include "common/xalloc.h"
#include "runtime-hook/hook.h"

static const char prog[] = "iobatch-hook";

static void usage(FILE *f) {
  fprintf(f,
          "usage: %s [OPTIONS] [prestart|createRuntime|poststop]\n"
          "OCI hook: reads the container state on stdin.  The stage defaults to the\n"
          "state's status: \"stopped\" is poststop (tell the agent it exited), anything\n"
          "else prestart (sample, register; with --max-wait-ms also wait for admission).\n"
          "  --socket PATH       agent socket (default " AGENT_DEFAULT_SOCKET ")\n"
          "  --timeout-ms N      bound on connecting to the agent and on each call\n"
          "                      (default %d)\n"
          "  --max-wait-ms N     prestart: ask the agent to admit and wait at most N ms\n"
          "                      (hooks.d engines; keep it below the hook's timeout)\n"
          "  --fail-closed       exit 1 on any failure (default: only on an invalid state;\n"
          "                      anything else prints one line and exits 0, fail open)\n"
          "  --namespace NS      containerd namespace (default: from the bundle path)\n"
          "  --record-dir DIR    write DIR/<id>.json with what the hook found\n"
          "  --root DIR          prefix for /proc and /sys (tests)\n"
          "  --debug             debug lines on stderr\n"
          "  --version           print the version and exit\n",
          prog, HOOK_DEFAULT_TIMEOUT_MS);
}

static int parse_ms(const char *opt, const char *s, int *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (*s < '0' || *s > '9' || *end || errno || v > INT_MAX) {
    fprintf(stderr, "%s: --%s needs a number of milliseconds, not '%s'\n", prog, opt, s);
    return -1;
  }
  *out = (int)v;
  return 0;
}

static int read_stdin(char **out, size_t *len, struct iob_error **err) {
  size_t cap = 4096, n = 0;
  cleanup_free char *b = xmalloc(cap);
  for (;;) {
    if (n == cap) {
      if (cap > HOOK_STATE_MAX)
        return iob_error(err, EFBIG, "invalid state: larger than %d bytes", HOOK_STATE_MAX);
      cap *= 2;
      b = xrealloc(b, cap);
    }
    ssize_t r = read(STDIN_FILENO, b + n, cap - n);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      return iob_error(err, errno, "cannot read the state from stdin");
    if (r == 0)
      break;
    n += (size_t)r;
  }
  if (n > HOOK_STATE_MAX)
    return iob_error(err, EFBIG, "invalid state: larger than %d bytes", HOOK_STATE_MAX);
  if (n == 0)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid state: stdin is empty");
  *out = steal_ptr(&b);
  *len = n;
  return 0;
}

/* hook.h "Confinement": what is opened before, then what narrows. */
static int hook_confine(struct hook_options *opt, struct hook_agent *agent,
                        struct iob_error **err) {
  hook_agent_preconnect(opt, agent);
  opt->agent = agent;
  struct cg2_mount m = {0};
  cleanup_error struct iob_error *merr = NULL;
  /* No cgroup2 mount: nothing may be written but the record, and hook_run
   * says why later. */
  if (cg2_mount_find(opt->root, &m, &merr) == 0)
    opt->cg_mount = steal_ptr(&m.path);
  cg2_mount_release(&m);
  opt->landlock_abi = hook_landlock_abi();
  opt->confined = 1;
  if (hook_caps_drop(err) < 0)
    return -1;
  /* Explicit, though libseccomp sets it too: Landlock needs it later. */
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return iob_error(err, errno, "cannot set no_new_privs");
  if (hook_seccomp_install(opt, err) < 0)
    return -1;
  char what[512];
  hook_confinement_describe(opt, opt->landlock_abi, what, sizeof(what));
  iob_debug("confinement: %s; seccomp allow-list without socket or connect (the agent's socket "
            "connected before); capabilities kept: dac_read_search, sys_ptrace",
            what);
  return 0;
}

/* Test-only (tests/integration/hook/hook-confine.sh): after the real work,
 * what a parser bug could try next.  Prints how each attempt ended. */
static void selftest_escape(const char *path) {
  int w = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
  int we = errno;
  int r = open(path, O_RDONLY | O_CLOEXEC);
  int re = errno;
  fprintf(stderr, "%s: selftest: open '%s' for writing: %s; for reading: %s\n", prog, path,
          w < 0 ? strerror(we) : "allowed", r < 0 ? strerror(re) : "allowed");
}

/* ... and a connection to another unix socket (containerd's, say): no
 * socket() at all is allowed, so SIGSYS. */
static void selftest_connect(const char *path) {
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int r = fd < 0 ? -1 : connect(fd, (struct sockaddr *)&sa, sizeof(sa));
  fprintf(stderr, "%s: selftest: connect to '%s': %s\n", prog, path,
          r < 0 ? strerror(errno) : "allowed");
}

static int hook_main_confined(const struct hook_options *opt, int selftest, const char *escape) {
  cleanup_error struct iob_error *err = NULL;
  if (selftest == 1) {
    /* Test-only: a harmless syscall that is not on the list must kill us
     * with SIGSYS (tests/integration/hook/hook-seccomp.sh). */
    syscall(SYS_unshare, 0);
    fprintf(stderr, "%s: seccomp self-test: forbidden syscall was not stopped\n", prog);
    return 1;
  }
  if (selftest == 2) {
    /* ... and so must a socket other than a unix one. */
    syscall(SYS_socket, AF_INET, SOCK_STREAM, 0);
    fprintf(stderr, "%s: seccomp self-test: an AF_INET socket was not stopped\n", prog);
    return 1;
  }
  if (selftest == 3) {
    /* ... the capabilities left: /proc/self/status's CapEff and CapBnd. */
    char st[8192];
    int fd = openat(AT_FDCWD, "/proc/self/status", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd < 0 ? -1 : read(fd, st, sizeof(st) - 1);
    if (n < 0)
      return 1;
    st[n] = '\0';
    for (char *l = strtok(st, "\n"); l; l = strtok(NULL, "\n"))
      if (!strncmp(l, "CapEff:", 7) || !strncmp(l, "CapBnd:", 7) || !strncmp(l, "CapPrm:", 7))
        printf("%s\n", l);
    return 0;
  }
  cleanup_free char *buf = NULL;
  size_t len = 0;
  int rc;
  if (read_stdin(&buf, &len, &err) < 0)
    rc = err->errno_ == EFBIG ? 1 : -1;
  else
    rc = hook_invoke(opt, buf, len, &err);
  if (escape && selftest == 4)
    selftest_connect(escape);
  else if (escape)
    selftest_escape(escape);
  if (rc == 0)
    return 0;
  if (rc < 0 || opt->fail_closed) {
    fprintf(stderr, "%s: %s%s\n", prog, err->msg, rc < 0 ? "" : " (fail closed)");
    return 1;
  }
  fprintf(stderr, "%s: %s; the container goes on without iobatch (fail open)\n", prog, err->msg);
  return 0;
}

/* Returns the exit status. */
static int hook_main(struct hook_options *opt, int selftest, const char *escape) {
  cleanup_error struct iob_error *err = NULL;
  struct hook_agent agent = {0};
  int ret = hook_confine(opt, &agent, &err);
  if (ret < 0) {
    /* Our own failure: the container goes on without iobatch, as for any
     * other of them, unless told to fail closed. */
    fprintf(stderr, "%s: %s; the container goes on without iobatch (%s)\n", prog, err->msg,
            opt->fail_closed ? "fail closed" : "fail open");
    ret = opt->fail_closed ? 1 : 0;
  } else {
    ret = hook_main_confined(opt, selftest, escape);
  }
  hook_agent_release(&agent);
  free((char *)opt->cg_mount);
  return ret;
}

int main(int argc, char **argv) {
  static const struct option longopts[] = {
      {"debug", no_argument, NULL, 'd'},
      {"socket", required_argument, NULL, 's'},
      {"namespace", required_argument, NULL, 'n'},
      {"record-dir", required_argument, NULL, 'r'},
      {"root", required_argument, NULL, 'R'},
      {"timeout-ms", required_argument, NULL, 't'},
      {"max-wait-ms", required_argument, NULL, 'w'},
      {"fail-closed", no_argument, NULL, 'F'},
      {"help", no_argument, NULL, 'h'},
      {"version", no_argument, NULL, 'V'},
      {"selftest-seccomp", no_argument, NULL, 'X'},
      {"selftest-socket", no_argument, NULL, 'Y'},
      {"selftest-caps", no_argument, NULL, 'Z'},
      {"selftest-escape", required_argument, NULL, 'E'},
      {"selftest-connect", required_argument, NULL, 'C'},
      {NULL, 0, NULL, 0},
  };
  struct hook_options opt = {.socket = AGENT_DEFAULT_SOCKET};
  int selftest = 0, c;
  const char *escape = NULL;
  while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
    switch (c) {
    case 'd':
      opt.debug = 1;
      break;
    case 's':
      opt.socket = optarg;
      break;
    case 'n':
      opt.ns = optarg;
      break;
    case 'r':
      opt.record_dir = optarg;
      break;
    case 'R':
      opt.root = optarg;
      break;
    case 't':
      if (parse_ms("timeout-ms", optarg, &opt.timeout_ms) < 0)
        return 2;
      break;
    case 'w':
      if (parse_ms("max-wait-ms", optarg, &opt.max_wait_ms) < 0)
        return 2;
      break;
    case 'F':
      opt.fail_closed = 1;
      break;
    case 'X':
      selftest = 1;
      break;
    case 'Y':
      selftest = 2;
      break;
    case 'Z':
      selftest = 3;
      break;
    case 'E':
      escape = optarg;
      break;
    case 'C':
      escape = optarg;
      selftest = 4;
      break;
    case 'h':
      usage(stdout);
      return 0;
    case 'V':
      return iob_version_print(prog) < 0 ? 1 : 0;
    default:
      usage(stderr);
      return 2;
    }
  }
  if (optind < argc) {
    const char *st = argv[optind++];
    if (!strcmp(st, "prestart") || !strcmp(st, "createRuntime"))
      opt.stage = HOOK_STAGE_PRESTART;
    else if (!strcmp(st, "poststop"))
      opt.stage = HOOK_STAGE_POSTSTOP;
    else {
      fprintf(stderr, "%s: unknown stage '%s' (prestart, createRuntime or poststop)\n", prog, st);
      return 2;
    }
  }
  if (optind != argc) {
    fprintf(stderr, "%s: unexpected argument '%s'\n", prog, argv[optind]);
    return 2;
  }
  if (strlen(opt.socket) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
    fprintf(stderr, "%s: invalid agent socket '%s': longer than a unix socket address\n", prog,
            opt.socket);
    return 2;
  }
  iob_log_init(prog, opt.debug);
  return hook_main(&opt, selftest, escape);
}
