#include "cgroupv2/sample.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "cgroupv2/procio.h"
#include "common/cleanup.h"

const char *cg2_source_name(enum cg2_source source) {
  switch (source) {
  case CG2_SOURCE_IOSTAT:
    return "io.stat";
  case CG2_SOURCE_PROCIO:
    return "procfs";
  }
  return "unknown";
}

int cg2_sample_take(const char *root, const char *cgdir, enum cg2_source source,
                    struct cg2_sample *out, struct iob_error **err) {
  struct cg2_sample s;
  struct timespec ts;
  memset(&s, 0, sizeof(s));
  s.source = source;
  if (source == CG2_SOURCE_IOSTAT) {
    struct cg2_iostat st;
    if (cg2_iostat_read(cgdir, &st, err) < 0)
      return -1;
    cg2_iostat_sum(&st, &s.io);
    cg2_iostat_release(&st);
  } else if (source == CG2_SOURCE_PROCIO) {
    struct cg2_procio p;
    size_t n = 0;
    if (cg2_procio_sample(root, cgdir, &p, &n, NULL, err) < 0)
      return -1;
    s.io.rbytes = p.read_bytes;
    s.io.wbytes = p.write_bytes;
    s.io.rios = p.syscr;
    s.io.wios = p.syscw;
    s.npids = n;
    s.rchar = p.rchar;
    s.wchar = p.wchar;
  } else {
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "unknown sample source %d", (int)source);
  }
  /* io.pressure is optional: v1 directories and kernels without PSI lack it
   * (and PSI can be disabled with psi=0, which makes the file fail to open
   * with EOPNOTSUPP). */
  cleanup_error struct iob_error *perr = NULL;
  s.has_pressure = cg2_pressure_read(cgdir, &s.pressure, &perr) == 0;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  s.t_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
  *out = s;
  return 0;
}
