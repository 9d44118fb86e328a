// SPDX-License-Identifier: Apache-2.0
/* simdisk: a FUSE file system with one file, MOUNTPOINT/disk, kept in RAM,
 * whose reads and writes complete when a disk model says (model.h).  Put a
 * loop device with direct I/O on that file and the kernel has a block
 * device with the model's timing (simdisk.sh, README.md).
 *
 * The FUSE loop thread takes each request, copies a write's data into
 * the RAM file at once and hands the request to the device thread without
 * replying; the device thread feeds the model and replies to each request
 * when its completion time comes (absolute sleeps on CLOCK_MONOTONIC), so
 * as many requests are in flight as the kernel sends. */
#define FUSE_USE_VERSION 34
#include <fuse_lowlevel.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/error.h"
#include "common/xalloc.h"
#include "simdisk/hdd.h"
#include "simdisk/model.h"
#include "simdisk/opts.h"
#include "simdisk/ssd.h"

#define ROOT_INO FUSE_ROOT_ID
#define DISK_INO 2
#define DISK_NAME "disk"
/* What the kernel may put in one request: loop splits a bio no further
 * than this, and FUSE sends it whole (max_pages 256). */
#define MAX_IO (1u << 20)

struct pending {
  struct sd_req r;
  fuse_req_t req;
  struct pending *next;
};

struct dev {
  struct sd_opts o;
  char *mem;
  struct sd_model *model;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  struct pending *in_head, *in_tail; /* received, not yet given to the model */
  bool stop;
  int64_t t0; /* CLOCK_MONOTONIC ns at model time 0 */
  /* counters for --stats */
  uint64_t n[4], bytes[4];
  unsigned inflight[4], max_inflight[4];
  uint64_t late_ns_max; /* how far behind the model a reply went out */
  FILE *trace;
};

static int64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t model_now(const struct dev *d) {
  return (int64_t)((double)(mono_ns() - d->t0) / d->o.scale);
}

static int64_t real_of(const struct dev *d, int64_t model) {
  return d->t0 + (int64_t)((double)model * d->o.scale);
}

static void enqueue(struct dev *d, fuse_req_t req, enum sd_op op, uint64_t off, uint64_t len) {
  struct pending *p = xcalloc(1, sizeof(*p));
  p->req = req;
  p->r = (struct sd_req){.off = off, .len = len, .op = op, .cookie = p};
  pthread_mutex_lock(&d->mu);
  p->r.arrival = model_now(d);
  if (d->in_tail)
    d->in_tail->next = p;
  else
    d->in_head = p;
  d->in_tail = p;
  d->n[op]++;
  d->bytes[op] += len;
  if (++d->inflight[op] > d->max_inflight[op])
    d->max_inflight[op] = d->inflight[op];
  pthread_cond_signal(&d->cv);
  pthread_mutex_unlock(&d->mu);
}

static void reply(struct dev *d, struct pending *p) {
  switch (p->r.op) {
  case SD_READ:
    fuse_reply_buf(p->req, d->mem + p->r.off, p->r.len);
    break;
  case SD_WRITE:
    fuse_reply_write(p->req, p->r.len);
    break;
  case SD_FLUSH:
  case SD_TRIM:
    fuse_reply_err(p->req, 0);
    break;
  }
}

static void *device_thread(void *arg) {
  struct dev *d = arg;
  /* the default 50 us slack would blur completions a model spaces by
   * tens of microseconds */
  prctl(PR_SET_TIMERSLACK, 1UL);
  pthread_mutex_lock(&d->mu);
  while (!d->stop) {
    for (struct pending *p = d->in_head; p; p = p->next)
      sd_model_submit(d->model, &p->r);
    d->in_head = d->in_tail = NULL;
    int64_t next;
    struct sd_req *r = sd_model_complete(d->model, model_now(d), &next);
    if (r) {
      struct pending *p = r->cookie;
      d->inflight[r->op]--;
      int64_t late = mono_ns() - real_of(d, r->done);
      if (late > 0 && (uint64_t)late > d->late_ns_max)
        d->late_ns_max = (uint64_t)late;
      if (d->trace)
        fprintf(d->trace, "%" PRId64 " %" PRId64 " %" PRId64 " %d %" PRIu64 " %" PRIu64 "\n",
                r->arrival, r->done, late, (int)r->op, r->off, r->len);
      pthread_mutex_unlock(&d->mu);
      reply(d, p);
      free(p);
      pthread_mutex_lock(&d->mu);
      continue;
    }
    if (d->in_head)
      continue;
    if (next == SD_NEVER) {
      pthread_cond_wait(&d->cv, &d->mu);
    } else {
      int64_t t = real_of(d, next);
      struct timespec ts = {t / 1000000000, t % 1000000000};
      pthread_cond_timedwait(&d->cv, &d->mu, &ts);
    }
  }
  pthread_mutex_unlock(&d->mu);
  return NULL;
}

/* ---- the file system: a root directory with one file ---- */

static void fill_attr(const struct dev *d, fuse_ino_t ino, struct stat *st) {
  memset(st, 0, sizeof(*st));
  st->st_ino = ino;
  if (ino == ROOT_INO) {
    st->st_mode = S_IFDIR | 0755;
    st->st_nlink = 2;
  } else {
    st->st_mode = S_IFREG | 0600;
    st->st_nlink = 1;
    st->st_size = (off_t)d->o.size;
    st->st_blocks = (blkcnt_t)(d->o.size / 512);
  }
  st->st_blksize = 4096;
}

static void op_init(void *userdata, struct fuse_conn_info *conn) {
  (void)userdata;
  conn->max_write = MAX_IO;
  conn->max_read = MAX_IO; /* libfuse checks it against the mount option */
  /* async direct I/O goes as background requests, which the kernel caps
   * at max_background (12 by default): room for NCQ's 32 and more */
  conn->max_background = 256;
  conn->congestion_threshold = 192;
  if (conn->capable & FUSE_CAP_ASYNC_DIO)
    conn->want |= FUSE_CAP_ASYNC_DIO;
  conn->want &= ~(unsigned)FUSE_CAP_WRITEBACK_CACHE;
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name) {
  struct dev *d = fuse_req_userdata(req);
  if (parent != ROOT_INO || strcmp(name, DISK_NAME) != 0) {
    fuse_reply_err(req, ENOENT);
    return;
  }
  struct fuse_entry_param e = {.ino = DISK_INO, .attr_timeout = 3600, .entry_timeout = 3600};
  fill_attr(d, DISK_INO, &e.attr);
  fuse_reply_entry(req, &e);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  (void)fi;
  struct stat st;
  if (ino != ROOT_INO && ino != DISK_INO) {
    fuse_reply_err(req, ENOENT);
    return;
  }
  fill_attr(fuse_req_userdata(req), ino, &st);
  fuse_reply_attr(req, &st, 3600);
}

static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
                       struct fuse_file_info *fi) {
  (void)attr;
  /* the size is fixed: a truncate to it (O_TRUNC aside) is all we take */
  if (ino != DISK_INO || (to_set & FUSE_SET_ATTR_SIZE)) {
    fuse_reply_err(req, EPERM);
    return;
  }
  op_getattr(req, ino, fi);
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  if (ino != DISK_INO) {
    fuse_reply_err(req, EISDIR);
    return;
  }
  if (fi->flags & O_TRUNC) {
    fuse_reply_err(req, EPERM);
    return;
  }
  /* no page cache in the daemon's file: every access is a request the
   * model sees.  libfuse 3.14 has no field for FOPEN_PARALLEL_DIRECT_WRITES
   * (README.md: what that costs). */
  fi->direct_io = 1;
  fi->keep_cache = 0;
  fuse_reply_open(req, fi);
}

static bool in_range(const struct dev *d, off_t off, size_t len) {
  return off >= 0 && (uint64_t)off <= d->o.size && len <= d->o.size - (uint64_t)off;
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                    struct fuse_file_info *fi) {
  (void)fi;
  struct dev *d = fuse_req_userdata(req);
  if (ino != DISK_INO) {
    fuse_reply_err(req, EISDIR);
    return;
  }
  if (off < 0 || (uint64_t)off >= d->o.size) {
    fuse_reply_buf(req, NULL, 0);
    return;
  }
  if (size > d->o.size - (uint64_t)off)
    size = d->o.size - (uint64_t)off;
  enqueue(d, req, SD_READ, (uint64_t)off, size);
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
                     struct fuse_file_info *fi) {
  (void)fi;
  struct dev *d = fuse_req_userdata(req);
  if (ino != DISK_INO) {
    fuse_reply_err(req, EISDIR);
    return;
  }
  if (!in_range(d, off, size)) {
    fuse_reply_err(req, ENOSPC);
    return;
  }
  /* the data is in the file from now; the reply waits for the model */
  memcpy(d->mem + off, buf, size);
  enqueue(d, req, SD_WRITE, (uint64_t)off, size);
}

static void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  (void)ino, (void)fi;
  fuse_reply_err(req, 0); /* close(2), not a cache flush: fsync is */
}

static void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi) {
  (void)ino, (void)datasync, (void)fi;
  enqueue(fuse_req_userdata(req), req, SD_FLUSH, 0, 0);
}

static void zero(struct dev *d, uint64_t off, uint64_t len) {
  uint64_t ps = (uint64_t)sysconf(_SC_PAGESIZE);
  uint64_t a = (off + ps - 1) / ps * ps, b = (off + len) / ps * ps;
  if (a >= b) {
    memset(d->mem + off, 0, len);
    return;
  }
  memset(d->mem + off, 0, a - off);
  memset(d->mem + b, 0, off + len - b);
  /* private anonymous memory reads back as zeros and costs nothing */
  if (madvise(d->mem + a, b - a, MADV_DONTNEED) < 0)
    memset(d->mem + a, 0, b - a);
}

static void op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
                         struct fuse_file_info *fi) {
  (void)fi;
  struct dev *d = fuse_req_userdata(req);
  if (ino != DISK_INO) {
    fuse_reply_err(req, EISDIR);
    return;
  }
  if (len < 0 || !in_range(d, off, (size_t)len)) {
    fuse_reply_err(req, EINVAL);
    return;
  }
  int known = FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE;
  if (mode & ~known) {
    fuse_reply_err(req, EOPNOTSUPP);
    return;
  }
  if (!(mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE))) {
    fuse_reply_err(req, 0); /* every byte is there already */
    return;
  }
  /* the loop device's discard and write-zeroes */
  zero(d, (uint64_t)off, (uint64_t)len);
  enqueue(d, req, SD_TRIM, (uint64_t)off, (uint64_t)len);
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                       struct fuse_file_info *fi) {
  (void)fi;
  if (ino != ROOT_INO) {
    fuse_reply_err(req, ENOTDIR);
    return;
  }
  static const struct {
    const char *name;
    fuse_ino_t ino;
    mode_t mode;
  } ents[] = {{".", ROOT_INO, S_IFDIR}, {"..", ROOT_INO, S_IFDIR}, {DISK_NAME, DISK_INO, S_IFREG}};
  char buf[512];
  size_t used = 0;
  if (size > sizeof(buf))
    size = sizeof(buf);
  for (off_t i = off; i >= 0 && (size_t)i < sizeof(ents) / sizeof(ents[0]); i++) {
    struct stat st = {.st_ino = ents[i].ino, .st_mode = ents[i].mode};
    size_t n = fuse_add_direntry(req, buf + used, size - used, ents[i].name, &st, i + 1);
    if (n > size - used)
      break;
    used += n;
  }
  fuse_reply_buf(req, buf, used);
}

static const struct fuse_lowlevel_ops ops = {
    .init = op_init,
    .lookup = op_lookup,
    .getattr = op_getattr,
    .setattr = op_setattr,
    .open = op_open,
    .read = op_read,
    .write = op_write,
    .flush = op_flush,
    .fsync = op_fsync,
    .fallocate = op_fallocate,
    .readdir = op_readdir,
};

/* ---- main ---- */

static int write_stats(const struct dev *d, struct iob_error **err) {
  FILE *f = fopen(d->o.stats, "w");
  if (f == NULL)
    return iob_error(err, errno, "cannot open '%s'", d->o.stats);
  static const char *names[] = {"read", "write", "flush", "trim"};
  fprintf(f, "model %s\nscale %g\n", sd_model_name(d->o.model), d->o.scale);
  for (int i = 0; i < 4; i++)
    fprintf(f, "%s_requests %" PRIu64 "\n%s_bytes %" PRIu64 "\n%s_max_inflight %u\n", names[i],
            d->n[i], names[i], d->bytes[i], names[i], d->max_inflight[i]);
  fprintf(f, "late_ns_max %" PRIu64 "\n", d->late_ns_max);
  if (d->o.model == SD_MODEL_HDD) {
    struct sd_hdd_stats s;
    sd_hdd_stats(d->model, &s);
    fprintf(f,
            "hdd_seeks %" PRIu64 "\nhdd_cache_hits %" PRIu64 "\nhdd_continued %" PRIu64
            "\nhdd_destaged_bytes %" PRIu64 "\n",
            s.seeks, s.cache_hits, s.continued, s.destaged_bytes);
  } else if (d->o.model == SD_MODEL_SSD) {
    struct sd_ssd_stats s;
    sd_ssd_stats(d->model, &s);
    fprintf(f,
            "ssd_host_units %" PRIu64 "\nssd_flash_units %" PRIu64 "\nssd_erases %" PRIu64
            "\nssd_gc_moved %" PRIu64 "\n",
            s.host_units, s.flash_units, s.erases, s.gc_moved);
  }
  if (fclose(f) != 0)
    return iob_error(err, errno, "cannot write '%s'", d->o.stats);
  return 0;
}

static int serve(struct dev *d, struct iob_error **err) {
  char *fargv[] = {"simdisk", "-o", "fsname=simdisk,subtype=simdisk,max_read=1048576", NULL};
  struct fuse_args args = FUSE_ARGS_INIT(3, fargv);
  struct fuse_session *se = fuse_session_new(&args, &ops, sizeof(ops), d);
  if (se == NULL)
    return iob_error(err, 0, "cannot start a FUSE session");
  int rc = -1;
  if (fuse_set_signal_handlers(se) != 0) {
    iob_error(err, 0, "cannot set signal handlers");
    goto out_session;
  }
  if (fuse_session_mount(se, d->o.mountpoint) != 0) {
    iob_error(err, 0, "cannot mount '%s'", d->o.mountpoint);
    goto out_signals;
  }
  /* fork before the device thread exists: a fork keeps only its caller */
  if (fuse_daemonize(d->o.foreground) != 0) {
    iob_error(err, 0, "cannot detach");
    goto out_mount;
  }
  d->t0 = mono_ns();
  pthread_t th;
  int e = pthread_create(&th, NULL, device_thread, d);
  if (e != 0) {
    iob_error(err, e, "cannot start the device thread");
    goto out_mount;
  }
  int lr = fuse_session_loop(se);
  pthread_mutex_lock(&d->mu);
  d->stop = true;
  pthread_cond_signal(&d->cv);
  pthread_mutex_unlock(&d->mu);
  pthread_join(th, NULL);
  rc = 0;
  if (lr < 0)
    rc = iob_error(err, -lr, "FUSE session failed");
out_mount:
  fuse_session_unmount(se);
out_signals:
  fuse_remove_signal_handlers(se);
out_session:
  fuse_session_destroy(se);
  fuse_opt_free_args(&args);
  return rc;
}

int main(int argc, char **argv) {
  cleanup_error struct iob_error *err = NULL;
  struct dev d = {.mu = PTHREAD_MUTEX_INITIALIZER};
  int r = sd_opts_parse(argc, argv, &d.o, &err);
  if (r > 0)
    return 0;
  if (r < 0) {
    iob_error_print("simdisk", &err);
    return 2;
  }
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&d.cv, &ca);
  if (sd_model_new(&d.o, &d.model, &err) < 0) {
    iob_error_print("simdisk", &err);
    return 2;
  }
  /* untouched pages cost nothing; the file is as large as asked */
  d.mem = mmap(NULL, d.o.size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
               -1, 0);
  if (d.mem == MAP_FAILED) {
    iob_error(&err, errno, "cannot map %" PRIu64 " bytes", d.o.size);
    iob_error_print("simdisk", &err);
    return 1;
  }
  /* fuse_daemonize changes to "/", and the unmount at exit needs the path */
  cleanup_free char *mnt = realpath(d.o.mountpoint, NULL);
  if (mnt == NULL) {
    iob_error(&err, errno, "cannot open '%s'", d.o.mountpoint);
    iob_error_print("simdisk", &err);
    return 1;
  }
  d.o.mountpoint = mnt;
  if (d.o.trace) {
    d.trace = fopen(d.o.trace, "w");
    if (d.trace == NULL) {
      iob_error(&err, errno, "cannot open '%s'", d.o.trace);
      iob_error_print("simdisk", &err);
      return 1;
    }
  }
  r = serve(&d, &err);
  if (r == 0 && d.o.stats)
    r = write_stats(&d, &err);
  if (d.trace && fclose(d.trace) != 0 && r == 0)
    r = iob_error(&err, errno, "cannot write '%s'", d.o.trace);
  if (r < 0) {
    iob_error_print("simdisk", &err);
    return 1;
  }
  sd_model_free(d.model);
  return 0;
}
