/* iobatch-hook: see hook.h.  Prints nothing but errors (one line on stderr),
 * plus debug lines with --debug; exit 0 lets the container start. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent/api.h"
#include "common/cleanup.h"
#include "common/log.h"
#include "runtime-hook/hook.h"

static const char prog[] = "iobatch-hook";

static void usage(FILE *f) {
  fprintf(f,
          "usage: %s [--debug] [--socket PATH] [--namespace NS] [--record-dir DIR] [--root DIR]\n"
          "OCI prestart/createRuntime hook: reads the container state on stdin.\n"
          "  --socket PATH      agent socket (default " AGENT_DEFAULT_SOCKET ")\n"
          "  --namespace NS     containerd namespace (default: from the bundle path)\n"
          "  --record-dir DIR   write DIR/<id>.json with what the hook found\n"
          "  --root DIR         prefix for /proc and /sys (tests)\n"
          "  --debug            debug lines on stderr\n",
          prog);
}

static int read_stdin(char **out, size_t *len, struct iob_error **err) {
  size_t cap = 4096, n = 0;
  cleanup_free char *b = malloc(cap);
  if (b == NULL)
    abort();
  for (;;) {
    if (n == cap) {
      if (cap > HOOK_STATE_MAX)
        return iob_error(err, EFBIG, "invalid state: larger than %d bytes", HOOK_STATE_MAX);
      cap *= 2;
      char *nb = realloc(b, cap);
      if (nb == NULL)
        abort();
      b = nb;
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

static int hook_main(const struct hook_options *opt, int selftest, struct iob_error **err) {
  if (hook_seccomp_install(err) < 0)
    return -1;
  if (selftest) {
    /* Test-only: a harmless syscall that is not on the list must kill us
     * with SIGSYS (tests/integration/hook-seccomp.sh). */
    syscall(SYS_unshare, 0);
    return iob_error(err, 0, "seccomp self-test: forbidden syscall was not stopped");
  }
  cleanup_free char *buf = NULL;
  size_t len = 0;
  if (read_stdin(&buf, &len, err) < 0)
    return -1;
  struct hook_state st;
  if (hook_state_parse(buf, len, &st, err) < 0)
    return -1;
  struct hook_result res;
  int rc = 0;
  /* config.json for the annotations the state may lack (runc < 1.0.0-rc95
   * and crun put none in the state) and for process.args, the workload key
   * of last resort. */
  if (!st.have_annotations ||
      (!hook_annotation(&st, HOOK_ANN_WORKLOAD) && !hook_annotation(&st, HOOK_ANN_IMAGE)))
    rc = hook_state_load_bundle(&st, err);
  if (rc == 0)
    rc = hook_run(opt, &st, &res, err);
  if (rc == 0) {
    if (opt->record_dir) {
      json_t *rec = hook_result_json(&st, &res);
      rc = rec ? hook_record_write(opt->record_dir, st.id, rec, err)
               : iob_error(err, ENOMEM, "cannot build the record of '%s'", st.id);
      json_decref(rec);
    }
    if (rc == 0)
      rc = hook_register(opt, &st, &res, err);
    hook_result_release(&res);
  }
  if (rc < 0)
    iob_error_prefix(err, "container '%s'", st.id);
  hook_state_release(&st);
  return rc;
}

int main(int argc, char **argv) {
  static const struct option longopts[] = {
      {"debug", no_argument, NULL, 'd'},
      {"socket", required_argument, NULL, 's'},
      {"namespace", required_argument, NULL, 'n'},
      {"record-dir", required_argument, NULL, 'r'},
      {"root", required_argument, NULL, 'R'},
      {"help", no_argument, NULL, 'h'},
      {"selftest-seccomp", no_argument, NULL, 'X'},
      {NULL, 0, NULL, 0},
  };
  struct hook_options opt = {.socket = AGENT_DEFAULT_SOCKET};
  int selftest = 0, c;
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
    case 'X':
      selftest = 1;
      break;
    case 'h':
      usage(stdout);
      return 0;
    default:
      usage(stderr);
      return 2;
    }
  }
  if (optind != argc) {
    fprintf(stderr, "%s: unexpected argument '%s'\n", prog, argv[optind]);
    return 2;
  }
  iob_log_init(prog, opt.debug);
  cleanup_error struct iob_error *err = NULL;
  if (hook_main(&opt, selftest, &err) < 0) {
    iob_error_print(prog, &err);
    return 1;
  }
  return 0;
}
