/* bench/libcgroup.sh: what libcgroup (libcgroup-dev 2.0, a chosen
 * dependency) would cost against the direct cgroupfs code of cgroupv2/ for
 * the three jobs it could take over: finding the hierarchies (v2 mount and
 * the v1 blkio mount), finding a pid's blkio cgroup, and reading a
 * blkio.throttle.io_service_bytes for a sample.  CPU time per call
 * (CLOCK_PROCESS_CPUTIME_ID over ITER calls, median of REPS), both ways in
 * the same run; prints one JSON object.
 *   iob-libcgroup [ITER [REPS]]
 *   iob-libcgroup --idle-plain | --idle-libcgroup   sleep (for PSS), the
 *     second after cgroup_init() as a shim using it for discovery would */
#include <libcgroup.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cgroupv2/blkio.h"
#include "cgroupv2/cg2.h"
#include "common/error.h"

static double cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

typedef int (*op_fn)(void);

/* Median over REPS of the CPU ns per call of FN over ITER calls; -1 when a
 * call fails. */
static double measure(op_fn fn, int iter, int reps) {
  double v[32];
  for (int r = 0; r < reps; r++) {
    double t0 = cpu_ns();
    for (int i = 0; i < iter; i++)
      if (fn() < 0)
        return -1;
    v[r] = (cpu_ns() - t0) / iter;
  }
  qsort(v, (size_t)reps, sizeof(v[0]), cmp);
  return v[reps / 2];
}

static char *blkio_mount;

static int own_discover(void) {
  struct iob_error *err = NULL;
  struct cg2_mount m;
  char *v1 = NULL;
  int rc = cg2_mount_find(NULL, &m, &err);
  if (rc == 0) {
    cg2_mount_release(&m);
    rc = cg2_v1_mount_find(NULL, "blkio", &v1, &err);
  }
  free(v1);
  iob_error_release(&err);
  return rc;
}

static int lib_discover(void) {
  char *mp = NULL;
  if (cgroup_init() != 0 || cgroup_get_subsys_mount_point("blkio", &mp) != 0)
    return -1;
  free(mp);
  return 0;
}

static int own_pid(void) {
  struct iob_error *err = NULL;
  char *p = NULL;
  int rc = cg2_pid_cgroup_v1(NULL, getpid(), "blkio", &p, &err);
  free(p);
  iob_error_release(&err);
  return rc;
}

static int lib_pid(void) {
  char *p = NULL;
  int rc = cgroup_get_current_controller_path(getpid(), "blkio", &p);
  free(p);
  return rc == 0 ? 0 : -1;
}

/* One sample's read: the file into a buffer, then the same parser. */
static int own_read(void) {
  struct iob_error *err = NULL;
  char path[4096], *buf = NULL;
  size_t len;
  struct cg2_blkio b = {0};
  snprintf(path, sizeof(path), "%s/blkio.throttle.io_service_bytes", blkio_mount);
  int rc = cg2_read_file(path, CG2_FILE_MAX, &buf, &len, &err);
  if (rc == 0)
    rc = cg2_blkio_parse(buf, len, &b, &err);
  cg2_blkio_release(&b);
  free(buf);
  iob_error_release(&err);
  return rc;
}

static int lib_read(void) {
  struct iob_error *err = NULL;
  char line[CG_VALUE_MAX], name[] = "blkio.throttle.io_service_bytes";
  char *buf = NULL;
  size_t len = 0, cap = 0;
  void *h = NULL;
  int rc = cgroup_read_value_begin("blkio", "/", name, &h, line, sizeof(line));
  while (rc == 0) {
    size_t n = strlen(line);
    if (len + n + 2 > cap) {
      cap = (len + n + 2) * 2;
      buf = realloc(buf, cap);
      if (buf == NULL)
        abort();
    }
    memcpy(buf + len, line, n);
    len += n;
    if (n == 0 || line[n - 1] != '\n')
      buf[len++] = '\n';
    buf[len] = '\0';
    rc = cgroup_read_value_next(&h, line, sizeof(line));
  }
  cgroup_read_value_end(&h);
  if (rc != ECGEOF) {
    free(buf);
    return -1;
  }
  struct cg2_blkio b = {0};
  rc = cg2_blkio_parse(buf ? buf : "", len, &b, &err);
  cg2_blkio_release(&b);
  free(buf);
  iob_error_release(&err);
  return rc;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--idle-plain") == 0) {
    pause();
    return 0;
  }
  if (argc > 1 && strcmp(argv[1], "--idle-libcgroup") == 0) {
    if (cgroup_init() != 0)
      return 1;
    pause();
    return 0;
  }
  int iter = argc > 1 ? atoi(argv[1]) : 2000;
  int reps = argc > 2 ? atoi(argv[2]) : 5;
  if (iter < 1 || reps < 1 || reps > 32) {
    fprintf(stderr, "usage: iob-libcgroup [ITER [REPS<=32]]\n");
    return 2;
  }
  int rc = cgroup_init();
  if (rc != 0) {
    fprintf(stderr, "iob-libcgroup: cgroup_init: %s\n", cgroup_strerror(rc));
    return 1;
  }
  if (cgroup_get_subsys_mount_point("blkio", &blkio_mount) != 0) {
    fprintf(stderr, "iob-libcgroup: no v1 blkio hierarchy (this bench reads v1 blkio)\n");
    return 1;
  }
  struct {
    const char *name;
    op_fn own, lib;
  } ops[] = {{"discover", own_discover, lib_discover},
             {"pid_cgroup", own_pid, lib_pid},
             {"read_blkio", own_read, lib_read}};
  printf("{\"iterations\": %d, \"repeats\": %d, \"blkio_mount\": \"%s\", \"ns_per_call\": {", iter,
         reps, blkio_mount);
  for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
    double own = measure(ops[i].own, iter, reps), lib = measure(ops[i].lib, iter, reps);
    if (own < 0 || lib < 0) {
      fprintf(stderr, "iob-libcgroup: %s failed (own %s, libcgroup %s)\n", ops[i].name,
              own < 0 ? "failed" : "ok", lib < 0 ? "failed" : "ok");
      return 1;
    }
    printf("%s\"%s\": {\"cgroupv2\": %.0f, \"libcgroup\": %.0f, \"libcgroup_vs_cgroupv2\": %.2f}",
           i ? ", " : "", ops[i].name, own, lib, lib / own);
  }
  printf("}}\n");
  free(blkio_mount);
  return 0;
}
