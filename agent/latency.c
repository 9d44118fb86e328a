/* Loading agent/bpf/blklat.bpf.c and reading its map (agent/latency.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "agent/latency.h"
#include "agent/bpf/blklat.skel.h" /* generated in $(B) (agent/module.mk) */
#include "common/cleanup.h"
#include "common/log.h"
#include "common/xalloc.h"

#define KERNEL_BTF "/sys/kernel/btf/vmlinux"

/* libbpf's warnings and notes (a failed load's verifier log, relocation
 * failures) at debug level: the one line that matters is the error we
 * return. */
__attribute__((format(printf, 2, 0))) static int libbpf_log(enum libbpf_print_level level,
                                                            const char *fmt, va_list ap) {
  if (level == LIBBPF_DEBUG)
    return 0; /* every relocation and section: noise even at debug */
  cleanup_free char *buf = NULL;
  if (vasprintf(&buf, fmt, ap) < 0)
    return 0;
  /* the verifier's log comes as one message of many lines */
  for (char *line = buf, *nl; *line; line = nl + 1) {
    nl = strchrnul(line, '\n');
    if (nl > line)
      iob_debug("libbpf: %.*s", (int)(nl - line), line);
    if (*nl == '\0')
      break;
  }
  return 0;
}

static char *why_errno(const char *what, int e) {
  if (e == EPERM || e == EACCES)
    return xasprintf("%s: %s (needs CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN on kernels "
                     "before 5.8)",
                     what, strerror(e));
  return xasprintf("%s: %s", what, strerror(e));
}

/* Load and attach the program; NULL when it runs, else why not. */
static char *try_bpf(struct agent_latency *l) {
  /* CO-RE needs the running kernel's BTF; without it libbpf would fail
   * with a less helpful message. */
  if (access(KERNEL_BTF, R_OK) != 0)
    return xasprintf("no kernel BTF at '%s' (%s)", KERNEL_BTF, strerror(errno));
  libbpf_set_print(libbpf_log);
  struct blklat *skel = blklat__open();
  if (skel == NULL)
    return why_errno("cannot open the BPF program", errno);
  int r = blklat__load(skel);
  if (r < 0) {
    char *why = why_errno("cannot load the BPF program", -r);
    blklat__destroy(skel);
    return why;
  }
  r = blklat__attach(skel);
  if (r < 0) {
    char *why = why_errno("cannot attach to block_rq_issue/block_rq_complete", -r);
    blklat__destroy(skel);
    return why;
  }
  l->skel = skel;
  l->map_fd = bpf_map__fd(skel->maps.lat);
  return NULL;
}

int agent_latency_open(struct agent_latency *l, int pref, struct iob_error **err) {
  memset(l, 0, sizeof(*l));
  l->map_fd = -1;
  char *bpf_error = NULL;
  if (agent_lat_wants_bpf(pref))
    bpf_error = try_bpf(l);
  int r = agent_lat_decide(pref, bpf_error, &l->mode, &l->why, err);
  free(bpf_error);
  if (r < 0 || l->mode != AGENT_LAT_MODE_BPF)
    agent_latency_close(l);
  return r;
}

void agent_latency_close(struct agent_latency *l) {
  if (l->skel)
    blklat__destroy(l->skel);
  l->skel = NULL;
  l->map_fd = -1;
}

int agent_latency_read(const struct agent_latency *l, uint64_t cgid, struct blklat_val *out,
                       struct iob_error **err) {
  memset(out, 0, sizeof(*out));
  if (l->map_fd < 0)
    return 0;
  if (bpf_map_lookup_elem(l->map_fd, &cgid, out) == 0)
    return 1;
  if (errno == ENOENT)
    return 0;
  return iob_error(err, errno, "cannot read the latency of cgroup %llu", (unsigned long long)cgid);
}

void agent_latency_forget(const struct agent_latency *l, uint64_t cgid) {
  if (l->map_fd >= 0)
    (void)bpf_map_delete_elem(l->map_fd, &cgid);
}
