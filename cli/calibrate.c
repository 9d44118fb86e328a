// SPDX-License-Identifier: Apache-2.0
/* `iobatchctl calibrate`: the penalty matrix of this machine (calibrate.h). */
#include "cli/calibrate.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <jansson.h>
#include <linux/magic.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "batcher/batcher.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "common/xalloc.h"

#define PROG "iobatchctl calibrate"

/* The measured classes are the first four of enum batch_class. */
enum { NC = 4 };
_Static_assert(BATCH_SEQ_READ == 0 && BATCH_RAND_READ == 1 && BATCH_SEQ_WRITE == 2 &&
                   BATCH_RAND_WRITE == 3 && BATCH_MIXED == 4 && BATCH_IDLE == 5 &&
                   BATCH_UNKNOWN == 6 && BATCH_NCLASS == 7,
               "calibrate writes matrix rows in the batcher's class order");

struct fio_class {
  const char *rw, *bs, *iodepth;
  bool seq;
};
static const struct fio_class fio_classes[NC] = {
    {"read", "1M", "8", true},
    {"randread", "4k", "32", false},
    {"write", "1M", "8", true},
    {"randwrite", "4k", "32", false},
};

/* Bounds on what comes from the command line and from fio. */
#define MAX_REPEATS 20
#define MAX_SIZE_MIB (64u * 1024)
#define MAX_FIO_JSON (4 * 1024 * 1024)
#define NEIGHBOUR_RUNTIME_S 3600 /* stopped long before; only a bound */
#define NEIGHBOUR_RAMP_MS 500    /* let the neighbour reach its steady rate */
#define STOP_GRACE_MS 10000      /* SIGTERM -> SIGKILL */

struct opts {
  const char *parent, *output, *json, *fio;
  unsigned repeats, seq_mib, rand_mib;
  double max_factor, scale;
  bool quiet;
};

struct run {
  double rate; /* bytes per second over fio's runtime */
  double runtime_s;
  bool capped; /* stopped by the runtime cap before its size was done */
};

struct cal {
  struct opts o;
  char *dir;
  struct run solo[MAX_REPEATS][NC];
  struct run pair[MAX_REPEATS][NC][NC]; /* [victim][neighbour] */
  double d[NC][NC];                     /* measured slowdown - 1 */
  double seq_slowdown;
  char date[32], host[128];
  char fio_version[64];
};

/* ---- signals: stop children, then clean up ------------------------------ */

static volatile sig_atomic_t stop_signal;
static volatile pid_t children[2] = {-1, -1};

static void on_signal(int sig) {
  stop_signal = sig;
  for (int i = 0; i < 2; i++)
    if (children[i] > 0)
      kill(children[i], SIGTERM);
}

static void signals_set(bool on, struct sigaction old[3]) {
  static const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
  struct sigaction sa = {.sa_handler = on_signal};
  sigemptyset(&sa.sa_mask);
  for (int i = 0; i < 3; i++) {
    if (on)
      sigaction(sigs[i], &sa, &old[i]);
    else
      sigaction(sigs[i], &old[i], NULL);
  }
}

static int check_stop(struct iob_error **err) {
  if (stop_signal)
    return iob_error_code(err, IOB_CODE_CANCELED, "interrupted by signal %d", (int)stop_signal);
  return 0;
}

static void sleep_ms(unsigned ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) < 0 && errno == EINTR && !stop_signal)
    ;
}

/* ---- options ------------------------------------------------------------- */

static void usage(FILE *f) {
  fprintf(f,
          "usage: iobatchctl calibrate [options]\n"
          "Measure the penalty matrix of the disk holding DIR with fio and write it\n"
          "as a batcher config file (iobatchd.conf: matrix = FILE).\n"
          "  -d, --dir DIR          scratch files go in a new directory under DIR\n"
          "                         (default /var/tmp; must be the disk to calibrate)\n"
          "  -o, --output FILE      matrix file (default: standard output)\n"
          "  -j, --json FILE        every measurement as JSON\n"
          "  -r, --repeats N        repeats, medians reported (default 3, max %d)\n"
          "      --seq-size MIB     work of a sequential job (default 2048)\n"
          "      --rand-size MIB    work of a random job (default 256)\n"
          "      --max-factor X     stop a victim after X times its solo time + 2 s\n"
          "                         (its rate is still exact; default 5)\n"
          "      --slowdown-scale X the batcher's slowdown_scale (default 2)\n"
          "      --fio PATH         fio binary (default fio)\n"
          "  -q, --quiet            no progress on standard error\n",
          MAX_REPEATS);
}

static int parse_num(const char *name, const char *s, double lo, double hi, double *out,
                     struct iob_error **err) {
  char *end = NULL;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v) || v < lo || v > hi)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "invalid value for '%s': '%s' (want %g..%g)", name, s, lo, hi);
  *out = v;
  return 0;
}

static int parse_uint(const char *name, const char *s, unsigned lo, unsigned hi, unsigned *out,
                      struct iob_error **err) {
  double v;
  if (parse_num(name, s, lo, hi, &v, err) < 0)
    return -1;
  if (v != floor(v))
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "invalid value for '%s': '%s' (want an integer)", name, s);
  *out = (unsigned)v;
  return 0;
}

/* Returns 0 to run, 1 when help was printed, < 0 on a usage error. */
static int parse_args(int argc, char **argv, struct opts *o, struct iob_error **err) {
  enum { O_SEQ = 256, O_RAND, O_FACTOR, O_SCALE, O_FIO };
  static const struct option longopts[] = {
      {"dir", required_argument, NULL, 'd'},
      {"output", required_argument, NULL, 'o'},
      {"json", required_argument, NULL, 'j'},
      {"repeats", required_argument, NULL, 'r'},
      {"seq-size", required_argument, NULL, O_SEQ},
      {"rand-size", required_argument, NULL, O_RAND},
      {"max-factor", required_argument, NULL, O_FACTOR},
      {"slowdown-scale", required_argument, NULL, O_SCALE},
      {"fio", required_argument, NULL, O_FIO},
      {"quiet", no_argument, NULL, 'q'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  *o = (struct opts){.parent = "/var/tmp",
                     .fio = "fio",
                     .repeats = 3,
                     .seq_mib = 2048,
                     .rand_mib = 256,
                     .max_factor = 5,
                     .scale = 2};
  optind = 0; /* GNU: reinitialise; the caller may have used getopt */
  opterr = 0;
  int c, r = 0;
  while (r == 0 && (c = getopt_long(argc, argv, "+d:o:j:r:qh", longopts, NULL)) != -1) {
    switch (c) {
    case 'd':
      o->parent = optarg;
      break;
    case 'o':
      o->output = optarg;
      break;
    case 'j':
      o->json = optarg;
      break;
    case 'q':
      o->quiet = true;
      break;
    case 'h':
      usage(stdout);
      return 1;
    case 'r':
      r = parse_uint("--repeats", optarg, 1, MAX_REPEATS, &o->repeats, err);
      break;
    case O_SEQ:
      r = parse_uint("--seq-size", optarg, 1, MAX_SIZE_MIB, &o->seq_mib, err);
      break;
    case O_RAND:
      r = parse_uint("--rand-size", optarg, 1, MAX_SIZE_MIB, &o->rand_mib, err);
      break;
    case O_FACTOR:
      r = parse_num("--max-factor", optarg, 1.5, 1000, &o->max_factor, err);
      break;
    case O_SCALE:
      r = parse_num("--slowdown-scale", optarg, 0.01, 100, &o->scale, err);
      break;
    case O_FIO:
      o->fio = optarg;
      break;
    default:
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "unknown option '%s'",
                            argv[optind - 1]);
    }
  }
  if (r < 0)
    return -1;
  if (optind < argc)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "unexpected argument '%s'", argv[optind]);
  return 0;
}

static unsigned class_mib(const struct opts *o, int c) {
  return fio_classes[c].seq ? o->seq_mib : o->rand_mib;
}

/* ---- scratch directory ---------------------------------------------------- */

/* Victim and neighbour files of every class: a pair of one class needs two. */
static int scratch_create(struct cal *cal, struct iob_error **err) {
  const char *parent = cal->o.parent;
  struct statfs sf;
  if (statfs(parent, &sf) < 0)
    return iob_error(err, errno, "cannot stat '%s'", parent);
  if (sf.f_type == TMPFS_MAGIC || sf.f_type == RAMFS_MAGIC)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "'%s' is in memory (tmpfs); give --dir on the disk to calibrate", parent);
  struct statvfs sv;
  if (statvfs(parent, &sv) < 0)
    return iob_error(err, errno, "cannot stat '%s'", parent);
  unsigned long long need = 1024; /* MiB of margin for the filesystem */
  for (int c = 0; c < NC; c++)
    need += 2ull * class_mib(&cal->o, c);
  unsigned long long avail = (unsigned long long)sv.f_bavail * sv.f_frsize >> 20;
  if (avail < need)
    return iob_error_code(err, IOB_CODE_RESOURCE_EXHAUSTED,
                          "not enough space in '%s': need %llu MiB, have %llu MiB", parent, need,
                          avail);
  cal->dir = xasprintf("%s/iobatch-calibrate.XXXXXX", parent);
  if (mkdtemp(cal->dir) == NULL) {
    int e = errno;
    free(cal->dir);
    cal->dir = NULL;
    return iob_error(err, e, "cannot create a directory in '%s'", parent);
  }
  return 0;
}

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw) {
  (void)st;
  (void)ftw;
  if (type == FTW_DP)
    rmdir(path);
  else
    unlink(path);
  return 0;
}

/* Only ever the directory mkdtemp made for us. */
static void scratch_remove(struct cal *cal) {
  if (cal->dir)
    nftw(cal->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
  free(cal->dir);
  cal->dir = NULL;
}

/* ---- fio ------------------------------------------------------------------- */

enum role { ROLE_LAYOUT, ROLE_VICTIM, ROLE_NEIGHBOUR };

struct fio_job {
  int cls;
  enum role role;
  double cap_s; /* victim: runtime cap, 0 = none */
  char file[4096], out[4096], log[4096];
};

static void fio_job_init(struct fio_job *j, const struct cal *cal, int cls, enum role role,
                         const char *tag) {
  const char *side = role == ROLE_NEIGHBOUR ? "n" : "v";
  j->cls = cls;
  j->role = role;
  j->cap_s = 0;
  snprintf(j->file, sizeof(j->file), "%s/%s-%s.dat", cal->dir, batch_class_name(cls), side);
  snprintf(j->out, sizeof(j->out), "%s/%s.json", cal->dir, tag);
  snprintf(j->log, sizeof(j->log), "%s/%s.log", cal->dir, tag);
}

/* The last line fio wrote to its log, for error messages. */
static void log_tail(const char *path, char *buf, size_t size) {
  buf[0] = '\0';
  cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return;
  off_t len = lseek(fd, 0, SEEK_END);
  off_t from = len > (off_t)size - 1 ? len - (off_t)size + 1 : 0;
  ssize_t n = pread(fd, buf, size - 1, from);
  if (n <= 0)
    return;
  buf[n] = '\0';
  while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
    buf[--n] = '\0';
  char *nl = strrchr(buf, '\n');
  if (nl)
    memmove(buf, nl + 1, strlen(nl + 1) + 1);
}

static int fio_spawn(const struct cal *cal, const struct fio_job *j, pid_t *pid,
                     struct iob_error **err) {
  const struct fio_class *fc = &fio_classes[j->cls];
  char name[64], file[4200], rw[32], bs[16], depth[16], size[32], out[4200], rt[32];
  snprintf(name, sizeof(name), "--name=%s", batch_class_name(j->cls));
  snprintf(file, sizeof(file), "--filename=%s", j->file);
  snprintf(rw, sizeof(rw), "--rw=%s", j->role == ROLE_LAYOUT ? "write" : fc->rw);
  snprintf(bs, sizeof(bs), "--bs=%s", j->role == ROLE_LAYOUT ? "1M" : fc->bs);
  snprintf(depth, sizeof(depth), "--iodepth=%s", j->role == ROLE_LAYOUT ? "8" : fc->iodepth);
  snprintf(size, sizeof(size), "--size=%uM", class_mib(&cal->o, j->cls));
  snprintf(out, sizeof(out), "--output=%s", j->out);
  const char *argv[16] = {cal->o.fio, name, file,  "--direct=1", "--ioengine=libaio",
                          rw,         bs,   depth, size,         "--output-format=json",
                          out};
  int n = 11;
  if (j->role == ROLE_NEIGHBOUR) {
    snprintf(rt, sizeof(rt), "--runtime=%d", NEIGHBOUR_RUNTIME_S);
    argv[n++] = "--time_based";
    argv[n++] = rt;
  } else if (j->cap_s > 0) {
    snprintf(rt, sizeof(rt), "--runtime=%.0f", ceil(j->cap_s));
    argv[n++] = rt;
  }
  argv[n] = NULL;

  /* exec failures come back through a close-on-exec pipe */
  int p[2];
  if (pipe2(p, O_CLOEXEC) < 0)
    return iob_error(err, errno, "cannot create a pipe");
  pid_t child = fork();
  if (child < 0) {
    int e = errno;
    close(p[0]);
    close(p[1]);
    return iob_error(err, e, "cannot fork");
  }
  if (child == 0) {
    int fd = open(j->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd >= 0 && nul >= 0) {
      dup2(nul, 0);
      dup2(fd, 1);
      dup2(fd, 2);
      execvp(argv[0], (char *const *)argv);
    }
    int e = errno;
    if (write(p[1], &e, sizeof(e)) < 0)
      _exit(126);
    _exit(127);
  }
  close(p[1]);
  int e = 0;
  ssize_t r;
  while ((r = read(p[0], &e, sizeof(e))) < 0 && errno == EINTR)
    ;
  close(p[0]);
  if (r == (ssize_t)sizeof(e)) {
    waitpid(child, NULL, 0);
    return iob_error(err, e, "cannot run '%s'", cal->o.fio);
  }
  *pid = child;
  return 0;
}

static int fio_wait(const struct fio_job *j, pid_t pid, struct iob_error **err) {
  int status;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR)
      return iob_error(err, errno, "cannot wait for fio");
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return 0;
  if (check_stop(err) < 0)
    return -1;
  char tail[256];
  log_tail(j->log, tail, sizeof(tail));
  if (WIFSIGNALED(status))
    return iob_error_code(err, IOB_CODE_INTERNAL, "fio job '%s' killed by signal %d: %s",
                          batch_class_name(j->cls), WTERMSIG(status), tail);
  return iob_error_code(err, IOB_CODE_INTERNAL, "fio job '%s' failed (exit status %d): %s",
                        batch_class_name(j->cls), WEXITSTATUS(status), tail);
}

/* Stop a time-based neighbour: SIGTERM, then SIGKILL after a grace time. */
static void fio_stop(pid_t pid) {
  kill(pid, SIGTERM);
  for (unsigned waited = 0; waited < STOP_GRACE_MS; waited += 50) {
    pid_t r = waitpid(pid, NULL, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR))
      return;
    sleep_ms(50);
  }
  kill(pid, SIGKILL);
  while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
    ;
}

static int read_bounded(const char *path, char **buf, size_t *len, struct iob_error **err) {
  cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return iob_error(err, errno, "cannot open '%s'", path);
  struct stat st;
  if (fstat(fd, &st) < 0)
    return iob_error(err, errno, "cannot stat '%s'", path);
  if (st.st_size > MAX_FIO_JSON)
    return iob_error_code(err, IOB_CODE_RESOURCE_EXHAUSTED,
                          "fio output '%s' too large: %lld bytes (limit %d)", path,
                          (long long)st.st_size, MAX_FIO_JSON);
  cleanup_free char *b = xmalloc((size_t)st.st_size + 1);
  size_t got = 0;
  while (got < (size_t)st.st_size) {
    ssize_t n = read(fd, b + got, (size_t)st.st_size - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return iob_error(err, errno, "cannot read '%s'", path);
    if (n == 0)
      break;
    got += (size_t)n;
  }
  b[got] = '\0';
  *len = got;
  *buf = steal_ptr(&b);
  return 0;
}

static int json_int(json_t *o, const char *key, json_int_t *out) {
  json_t *v = json_object_get(o, key);
  if (!json_is_integer(v))
    return -1;
  *out = json_integer_value(v);
  return 0;
}

/* fio may print warnings before the JSON document in its output file. */
static int fio_result(struct cal *cal, const struct fio_job *j, struct run *run,
                      struct iob_error **err) {
  cleanup_free char *buf = NULL;
  size_t len = 0;
  if (read_bounded(j->out, &buf, &len, err) < 0)
    return -1;
  char *start = strchr(buf, '{');
  json_error_t jerr;
  json_t *root = start ? json_loadb(start, len - (size_t)(start - buf), 0, &jerr) : NULL;
  if (root == NULL)
    return iob_error_code(err, IOB_CODE_INTERNAL, "cannot parse fio output '%s': %s", j->out,
                          start ? jerr.text : "no JSON object");
  json_t *job = json_array_get(json_object_get(root, "jobs"), 0);
  json_int_t error = -1, runtime_ms = 0, rbytes = 0, wbytes = 0;
  int bad = json_int(job, "error", &error) | json_int(job, "job_runtime", &runtime_ms) |
            json_int(json_object_get(job, "read"), "io_bytes", &rbytes) |
            json_int(json_object_get(job, "write"), "io_bytes", &wbytes);
  json_t *ver = json_object_get(root, "fio version");
  if (json_is_string(ver))
    snprintf(cal->fio_version, sizeof(cal->fio_version), "%s", json_string_value(ver));
  json_decref(root);
  if (bad || error != 0 || runtime_ms <= 0 || rbytes + wbytes <= 0)
    return iob_error_code(err, IOB_CODE_INTERNAL,
                          "fio output '%s': missing or bad results (error %lld, runtime %lld ms, "
                          "%lld bytes)",
                          j->out, (long long)error, (long long)runtime_ms,
                          (long long)(rbytes + wbytes));
  double bytes = (double)(rbytes + wbytes);
  run->runtime_s = (double)runtime_ms / 1000.0;
  run->rate = bytes / run->runtime_s;
  run->capped = bytes < (double)class_mib(&cal->o, j->cls) * 1048576.0;
  return 0;
}

/* Run one job in the foreground. */
static int run_job(struct cal *cal, struct fio_job *j, struct run *run, struct iob_error **err) {
  pid_t pid;
  if (fio_spawn(cal, j, &pid, err) < 0)
    return -1;
  children[0] = pid;
  int r = fio_wait(j, pid, err);
  children[0] = -1;
  if (r < 0)
    return -1;
  return run ? fio_result(cal, j, run, err) : 0;
}

/* ---- the measurements ------------------------------------------------------ */

static void progress(const struct cal *cal, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void progress(const struct cal *cal, const char *fmt, ...) {
  if (cal->o.quiet)
    return;
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "calibrate: ");
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

/* Write every file once so reads find data and writes overwrite in place
 * (no run pays for block allocation). */
static int layout(struct cal *cal, struct iob_error **err) {
  for (int c = 0; c < NC; c++) {
    for (int side = 0; side < 2; side++) {
      struct fio_job j;
      fio_job_init(&j, cal, c, side ? ROLE_NEIGHBOUR : ROLE_VICTIM, "layout");
      j.role = ROLE_LAYOUT;
      progress(cal, "laying out '%s' (%u MiB)", j.file, class_mib(&cal->o, c));
      if (run_job(cal, &j, NULL, err) < 0 || check_stop(err) < 0)
        return -1;
    }
  }
  sync();
  return 0;
}

static int measure_solo(struct cal *cal, unsigned rep, int c, struct iob_error **err) {
  struct fio_job j;
  fio_job_init(&j, cal, c, ROLE_VICTIM, "solo");
  struct run *run = &cal->solo[rep][c];
  if (run_job(cal, &j, run, err) < 0)
    return iob_error_prefix(err, "solo '%s'", batch_class_name(c));
  progress(cal, "repeat %u: %-10s alone: %8.1f MiB/s in %.2f s", rep + 1, batch_class_name(c),
           run->rate / 1048576, run->runtime_s);
  return 0;
}

static int neighbour_alive(pid_t pid, const struct fio_job *n, struct iob_error **err) {
  int status;
  if (waitpid(pid, &status, WNOHANG) != pid)
    return 0;
  children[1] = -1;
  char tail[256];
  log_tail(n->log, tail, sizeof(tail));
  return iob_error_code(err, IOB_CODE_INTERNAL, "neighbour fio job '%s' ended early: %s",
                        batch_class_name(n->cls), tail);
}

static int measure_pair(struct cal *cal, unsigned rep, int v, int nb, struct iob_error **err) {
  struct fio_job jn, jv;
  fio_job_init(&jn, cal, nb, ROLE_NEIGHBOUR, "neighbour");
  fio_job_init(&jv, cal, v, ROLE_VICTIM, "victim");
  jv.cap_s = cal->o.max_factor * cal->solo[rep][v].runtime_s + 2;
  pid_t npid;
  if (fio_spawn(cal, &jn, &npid, err) < 0)
    return -1;
  children[1] = npid;
  sleep_ms(NEIGHBOUR_RAMP_MS);
  struct run *run = &cal->pair[rep][v][nb];
  int r = check_stop(err);
  if (r == 0)
    r = neighbour_alive(npid, &jn, err);
  if (r == 0)
    r = run_job(cal, &jv, run, err);
  if (r == 0)
    r = neighbour_alive(npid, &jn, err);
  if (children[1] > 0)
    fio_stop(npid);
  children[1] = -1;
  if (r < 0)
    return iob_error_prefix(err, "'%s' beside '%s'", batch_class_name(v), batch_class_name(nb));
  progress(cal, "repeat %u: %-10s beside %-10s: %8.1f MiB/s in %.2f s%s -> %.2fx slower", rep + 1,
           batch_class_name(v), batch_class_name(nb), run->rate / 1048576, run->runtime_s,
           run->capped ? " (capped)" : "", cal->solo[rep][v].rate / run->rate);
  return 0;
}

/* Solo runs first in each repeat, so every pair is compared with a solo run
 * of the same repeat (drift between repeats cancels). */
static int measure(struct cal *cal, struct iob_error **err) {
  for (unsigned rep = 0; rep < cal->o.repeats; rep++) {
    for (int c = 0; c < NC; c++)
      if (measure_solo(cal, rep, c, err) < 0 || check_stop(err) < 0)
        return -1;
    for (int v = 0; v < NC; v++)
      for (int nb = 0; nb < NC; nb++)
        if (measure_pair(cal, rep, v, nb, err) < 0 || check_stop(err) < 0)
          return -1;
  }
  return 0;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, unsigned n) {
  qsort(v, n, sizeof(*v), cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void compute(struct cal *cal) {
  double f[MAX_REPEATS], seq[NC * NC];
  unsigned nseq = 0;
  for (int v = 0; v < NC; v++) {
    for (int nb = 0; nb < NC; nb++) {
      for (unsigned r = 0; r < cal->o.repeats; r++)
        f[r] = cal->solo[r][v].rate / cal->pair[r][v][nb].rate;
      double factor = median(f, cal->o.repeats);
      cal->d[v][nb] = factor - 1;
      if (fio_classes[v].seq && fio_classes[nb].seq)
        seq[nseq++] = factor;
    }
  }
  cal->seq_slowdown = fmin(fmax(median(seq, nseq), 1.0), 100.0);
}

/* ---- output ------------------------------------------------------------------ */

static double clamp_pen(double x) {
  return fmin(fmax(x, 0.0), BATCH_PENALTY_MAX);
}

/* Measured rows and columns from d; mixed and unknown are the average
 * neighbour/victim (means of the measured rows and columns), idle is 0. */
static void penalties(const struct cal *cal, double s[BATCH_NCLASS][BATCH_NCLASS]) {
  memset(s, 0, sizeof(double) * BATCH_NCLASS * BATCH_NCLASS);
  double all = 0;
  for (int i = 0; i < NC; i++)
    for (int j = 0; j < NC; j++) {
      s[i][j] = clamp_pen(cal->d[i][j] / cal->o.scale);
      all += s[i][j];
    }
  for (int k = 0; k < NC; k++) {
    double row = 0, col = 0;
    for (int m = 0; m < NC; m++) {
      row += s[k][m];
      col += s[m][k];
    }
    s[k][BATCH_MIXED] = s[k][BATCH_UNKNOWN] = row / NC;
    s[BATCH_MIXED][k] = s[BATCH_UNKNOWN][k] = col / NC;
  }
  s[BATCH_MIXED][BATCH_MIXED] = s[BATCH_MIXED][BATCH_UNKNOWN] = all / (NC * NC);
  s[BATCH_UNKNOWN][BATCH_MIXED] = s[BATCH_UNKNOWN][BATCH_UNKNOWN] = all / (NC * NC);
}

static char *render(const struct cal *cal) {
  double s[BATCH_NCLASS][BATCH_NCLASS];
  penalties(cal, s);
  char *text = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&text, &size);
  if (f == NULL)
    iob_oom();
  fprintf(f,
          "# iobatch penalty matrix, measured by `iobatchctl calibrate` on %s at %s\n"
          "# %s, O_DIRECT libaio in '%s'; median of %u repeats.\n"
          "# Jobs: seq 1 MiB x iodepth 8, %u MiB; rand 4 KiB x iodepth 32, %u MiB.\n"
          "# Measured slowdown d = solo rate / rate beside the column's class - 1\n"
          "# (row = the job that suffers; the neighbour runs for its whole run):\n"
          "#             ",
          cal->host, cal->date, cal->fio_version, cal->o.parent, cal->o.repeats, cal->o.seq_mib,
          cal->o.rand_mib);
  for (int j = 0; j < NC; j++)
    fprintf(f, " %10s", batch_class_name(j));
  fputc('\n', f);
  for (int i = 0; i < NC; i++) {
    fprintf(f, "# %-11s", batch_class_name(i));
    for (int j = 0; j < NC; j++)
      fprintf(f, " %10.3f", cal->d[i][j]);
    fputc('\n', f);
  }
  fprintf(f,
          "# Penalties are s = d / slowdown_scale, so the predictive model's slowdown\n"
          "# 1 + slowdown_scale * s is the measured one; seq_slowdown is the median\n"
          "# factor of two sequential streams.  mixed and unknown: the means of the\n"
          "# measured rows and columns; idle: 0.  seq_pairs = matrix: the predictive\n"
          "# policy takes sequential pairs from the measured matrix too, not from\n"
          "# the single seq_slowdown median.  Columns in the order:\n"
          "#   seq-read rand-read seq-write rand-write mixed idle unknown\n"
          "slowdown_scale = %g\n"
          "seq_slowdown = %.3f\n"
          "seq_pairs = matrix\n",
          cal->o.scale, cal->seq_slowdown);
  for (int i = 0; i < BATCH_NCLASS; i++) {
    fprintf(f, "matrix.%s =", batch_class_name(i));
    for (int j = 0; j < BATCH_NCLASS; j++)
      fprintf(f, " %.3f", s[i][j]);
    fputc('\n', f);
  }
  fclose(f);
  return text;
}

/* Write PATH atomically (temp file + rename), or stdout for NULL / "-". */
static int write_text(const char *path, const char *text, struct iob_error **err) {
  if (path == NULL || strcmp(path, "-") == 0) {
    if (fputs(text, stdout) < 0 || fflush(stdout) != 0)
      return iob_error(err, errno, "cannot write the matrix to standard output");
    return 0;
  }
  cleanup_free char *tmp = xasprintf("%s.tmp.%d", path, (int)getpid());
  cleanup_file FILE *f = fopen(tmp, "we");
  if (f == NULL)
    return iob_error(err, errno, "cannot create '%s'", tmp);
  int bad = fputs(text, f) < 0 || fflush(f) != 0 || fsync(fileno(f)) < 0;
  int e = errno;
  if (fclose(steal_ptr(&f)) != 0 && !bad) {
    bad = 1;
    e = errno;
  }
  if (bad || rename(tmp, path) < 0) {
    if (!bad)
      e = errno;
    unlink(tmp);
    return iob_error(err, e, "cannot write '%s'", path);
  }
  return 0;
}

static json_t *run_json(const struct run *r) {
  return json_pack("{s:f, s:f, s:b}", "rate_bps", r->rate, "runtime_s", r->runtime_s, "capped",
                   r->capped);
}

static json_t *measurements_json(const struct cal *cal) {
  json_t *solo = json_object(), *pairs = json_array(), *d = json_object();
  for (int v = 0; v < NC; v++) {
    json_t *runs = json_array(), *row = json_object();
    for (unsigned r = 0; r < cal->o.repeats; r++)
      json_array_append_new(runs, run_json(&cal->solo[r][v]));
    json_object_set_new(solo, batch_class_name(v), runs);
    for (int nb = 0; nb < NC; nb++) {
      json_t *pr = json_array();
      for (unsigned r = 0; r < cal->o.repeats; r++)
        json_array_append_new(pr, run_json(&cal->pair[r][v][nb]));
      json_array_append_new(pairs, json_pack("{s:s, s:s, s:f, s:o}", "victim", batch_class_name(v),
                                             "neighbour", batch_class_name(nb), "slowdown",
                                             cal->d[v][nb], "runs", pr));
      json_object_set_new(row, batch_class_name(nb), json_real(cal->d[v][nb]));
    }
    json_object_set_new(d, batch_class_name(v), row);
  }
  return json_pack("{s:o, s:o, s:o}", "solo", solo, "pairs", pairs, "slowdown", d);
}

static int write_json(const struct cal *cal, const char *matrix_text, struct iob_error **err) {
  json_t *m = measurements_json(cal);
  json_t *root = json_pack("{s:s, s:s, s:s, s:s, s:i, s:i, s:i, s:f, s:f, s:f, s:s, s:o}", "date",
                           cal->date, "host", cal->host, "fio", cal->fio_version, "dir",
                           cal->o.parent, "repeats", (int)cal->o.repeats, "seq_mib",
                           (int)cal->o.seq_mib, "rand_mib", (int)cal->o.rand_mib, "max_factor",
                           cal->o.max_factor, "slowdown_scale", cal->o.scale, "seq_slowdown",
                           cal->seq_slowdown, "matrix_file", matrix_text, "measurements", m);
  if (root == NULL)
    return iob_error_code(err, IOB_CODE_INTERNAL, "cannot build the JSON results");
  char *s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
  json_decref(root);
  if (s == NULL)
    iob_oom();
  size_t n = strlen(s);
  char *withnl = xrealloc(s, n + 2);
  memcpy(withnl + n, "\n", 2);
  int r = write_text(cal->o.json, withnl, err);
  free(withnl);
  return r;
}

/* The agent must accept what we write: parse it with the batcher's parser. */
static int validate(const char *text, struct iob_error **err) {
  struct batch_config cfg;
  batch_config_default(&cfg);
  if (batch_config_parse(&cfg, "calibrated matrix", text, strlen(text), err) < 0)
    return iob_error_prefix(err, "internal error: the batcher rejects the matrix");
  return 0;
}

static void identify(struct cal *cal) {
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(cal->date, sizeof(cal->date), "%Y-%m-%dT%H:%M:%SZ", &tm);
  struct utsname u;
  snprintf(cal->host, sizeof(cal->host), "%s", uname(&u) == 0 ? u.nodename : "unknown");
  snprintf(cal->fio_version, sizeof(cal->fio_version), "fio");
}

static int calibrate(struct cal *cal, struct iob_error **err) {
  identify(cal);
  if (scratch_create(cal, err) < 0)
    return -1;
  progress(cal, "scratch directory '%s'", cal->dir);
  if (layout(cal, err) < 0 || measure(cal, err) < 0)
    return -1;
  compute(cal);
  cleanup_free char *text = render(cal);
  if (validate(text, err) < 0 || write_text(cal->o.output, text, err) < 0)
    return -1;
  if (cal->o.json && write_json(cal, text, err) < 0)
    return -1;
  return 0;
}

int iobctl_calibrate(int argc, char **argv) {
  cleanup_error struct iob_error *err = NULL;
  struct cal *cal = xcalloc(1, sizeof(*cal));
  int r = parse_args(argc, argv, &cal->o, &err);
  if (r != 0) {
    free(cal);
    if (r > 0)
      return 0;
    iob_error_print(PROG, &err);
    fprintf(stderr, "Run 'iobatchctl calibrate --help' for usage.\n");
    return 2;
  }
  struct sigaction old[3];
  stop_signal = 0;
  signals_set(true, old);
  r = calibrate(cal, &err);
  scratch_remove(cal);
  signals_set(false, old);
  free(cal);
  if (r < 0) {
    iob_error_print(PROG, &err);
    return 1;
  }
  return 0;
}
