// SPDX-License-Identifier: Apache-2.0
/* The real containers of bench/agent-overhead.sh and
 * bench/kubepods-overhead.sh: one process per container, in cgroups of its
 * own in every hierarchy the agent reads, reading 4 KiB with O_DIRECT every
 * INTERVAL milliseconds so that the block layer charges its cgroup (v1
 * blkio, or v2 with the io controller) and the agent's BPF map counts it.
 *
 *   iob-real-ctr [-i MS] SCRATCH_DIR < LIST
 *
 * LIST: one container a line, the absolute cgroup directories it goes in,
 * separated by spaces (each made if missing; its parent must exist).
 * SCRATCH_DIR: where the file they read is made (not tmpfs: the reads
 * must reach a disk); it is unlinked once open, so it cannot outlive us.
 * Prints each container's pid, one a line in LIST's order, then "ready",
 * and stays until SIGTERM, SIGINT or SIGHUP, or until its parent dies
 * (PR_SET_PDEATHSIG: a bench killed with -9 leaks nothing): then it kills
 * the containers, reaps them and removes the cgroup directories it made.
 *
 * One forked process per container and no exec: the children share the
 * parent's pages, each costs a task and a few pages, and between two reads
 * it sleeps in one system call.  A shell loop starting dd and sleep costs
 * two forks and execs per container and read, which at 1000 containers is
 * CPU the agent's measurement would share. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BLOCK 4096
#define FILE_BLOCKS 1024 /* a 4 MiB file: container K reads block K mod this */
#define MAX_CTRS 20000
#define MAX_DIRS 8 /* hierarchies per container */
#define TMPFS_MAGIC 0x01021994
#define RAMFS_MAGIC 0x858458f6

struct ctr {
  char *dirs[MAX_DIRS];
  bool made[MAX_DIRS];
  size_t ndirs;
  pid_t pid;
  bool reaped;
};

static struct ctr *ctrs;
static size_t nctrs;

/* "iob-real-ctr: WHAT 'ARG': <errno's message>", and exit. */
static void die(const char *what, const char *arg) {
  fprintf(stderr, "iob-real-ctr: %s '%s': %s\n", what, arg, strerror(errno));
  exit(1);
}

static void read_list(void) {
  char *line = NULL;
  size_t cap = 0;
  ctrs = calloc(MAX_CTRS, sizeof(*ctrs));
  if (ctrs == NULL)
    die("cannot allocate", "containers");
  while (getline(&line, &cap, stdin) > 0) {
    if (nctrs == MAX_CTRS) {
      errno = E2BIG;
      die("more containers than", "20000");
    }
    struct ctr *c = &ctrs[nctrs];
    for (char *save = NULL, *tok = strtok_r(line, " \t\n", &save); tok;
         tok = strtok_r(NULL, " \t\n", &save)) {
      if (c->ndirs == MAX_DIRS || tok[0] != '/') {
        errno = EINVAL;
        die("not an absolute path", tok);
      }
      c->dirs[c->ndirs++] = strdup(tok);
    }
    if (c->ndirs > 0)
      nctrs++;
  }
  free(line);
}

/* The file the containers read: real blocks on a disk (written, not
 * fallocated: an unwritten extent reads as zeros without any I/O). */
static int scratch_file(const char *dir) {
  struct statfs sf;
  if (statfs(dir, &sf) < 0)
    die("cannot stat", dir);
  if (sf.f_type == TMPFS_MAGIC || sf.f_type == RAMFS_MAGIC) {
    errno = EINVAL;
    die("reads reach no disk in tmpfs", dir);
  }
  char path[PATH_MAX];
  snprintf(path, sizeof(path), "%s/iob-real-ctr.XXXXXX", dir);
  int wfd = mkstemp(path);
  if (wfd < 0)
    die("cannot create a file in", dir);
  int fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
  int e = errno;
  unlink(path);
  errno = e;
  if (fd < 0)
    die("cannot open with O_DIRECT", path);
  /* malloc'd (mmap'd at this size) and freed: not a megabyte in each
   * forked container's RSS */
  size_t len = (size_t)FILE_BLOCKS * BLOCK;
  char *buf = malloc(len);
  if (buf == NULL)
    die("cannot allocate", "4 MiB");
  memset(buf, 0xa5, len);
  if (pwrite(wfd, buf, len, 0) != (ssize_t)len)
    die("cannot write", path);
  free(buf);
  if (fsync(wfd) < 0)
    die("cannot sync", path);
  (void)posix_fadvise(wfd, 0, 0, POSIX_FADV_DONTNEED);
  close(wfd);
  return fd;
}

static int join(const char *dir) {
  char path[PATH_MAX];
  snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  /* "0": the writer itself, in v1 and v2 alike */
  ssize_t r = write(fd, "0", 1);
  int e = errno;
  close(fd);
  errno = e;
  return r == 1 ? 0 : -1;
}

/* A container: join its cgroups, one read to show the reads work, report
 * (a status byte on ack), then a read every interval from a random phase. */
static void child(const struct ctr *c, size_t k, int fd, int ack, pid_t parent, long ms) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent)
    _exit(1);
  unsigned char st = 0;
  for (size_t i = 0; i < c->ndirs && st == 0; i++)
    if (join(c->dirs[i]) < 0) {
      fprintf(stderr, "iob-real-ctr: cannot join '%s': %s\n", c->dirs[i], strerror(errno));
      st = 1;
    }
  void *buf = NULL;
  off_t off = (off_t)(k % FILE_BLOCKS) * BLOCK;
  if (st == 0 && posix_memalign(&buf, BLOCK, BLOCK) != 0)
    st = 2;
  if (st == 0 && pread(fd, buf, BLOCK, off) != BLOCK) {
    fprintf(stderr, "iob-real-ctr: cannot read 4 KiB with O_DIRECT: %s\n", strerror(errno));
    st = 3;
  }
  if (write(ack, &st, 1) != 1 || st != 0)
    _exit(1);
  close(ack);
  srandom((unsigned)getpid());
  long phase = ms > 0 ? random() % ms : 0;
  struct timespec ts = {.tv_sec = phase / 1000, .tv_nsec = phase % 1000 * 1000000};
  for (;;) {
    nanosleep(&ts, NULL);
    ssize_t r = pread(fd, buf, BLOCK, off);
    (void)r; /* a failed read is a container that did no I/O this time */
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = ms % 1000 * 1000000;
  }
}

static void reap(bool block) {
  for (;;) {
    pid_t p = waitpid(-1, NULL, block ? 0 : WNOHANG);
    if (p <= 0)
      return;
    for (size_t k = 0; k < nctrs; k++)
      if (ctrs[k].pid == p)
        ctrs[k].reaped = true;
  }
}

/* Kill what is left (only pids not reaped yet: never a reused one), reap
 * all, remove the directories made, the deepest first. */
static int teardown(void) {
  for (size_t k = 0; k < nctrs; k++)
    if (ctrs[k].pid > 0 && !ctrs[k].reaped)
      kill(ctrs[k].pid, SIGKILL);
  reap(true);
  int left = 0;
  for (size_t k = nctrs; k-- > 0;)
    for (size_t i = 0; i < ctrs[k].ndirs; i++) {
      if (!ctrs[k].made[i])
        continue;
      int tries = 0;
      /* a cgroup whose last task just exited may be busy for a moment */
      while (rmdir(ctrs[k].dirs[i]) < 0 && errno == EBUSY && tries++ < 100)
        usleep(10000);
      if (access(ctrs[k].dirs[i], F_OK) == 0) {
        fprintf(stderr, "iob-real-ctr: cannot remove '%s': %s\n", ctrs[k].dirs[i],
                strerror(errno));
        left++;
      }
    }
  return left ? 1 : 0;
}

static int spawn(int fd, long ms) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) < 0)
    die("cannot make", "pipe");
  pid_t self = getpid();
  for (size_t k = 0; k < nctrs; k++) {
    struct ctr *c = &ctrs[k];
    for (size_t i = 0; i < c->ndirs; i++) {
      if (mkdir(c->dirs[i], 0755) == 0)
        c->made[i] = true;
      else if (errno != EEXIST) {
        fprintf(stderr, "iob-real-ctr: cannot make '%s': %s\n", c->dirs[i], strerror(errno));
        return -1;
      }
    }
    pid_t pid = fork();
    if (pid < 0) {
      fprintf(stderr, "iob-real-ctr: fork (container %zu): %s\n", k + 1, strerror(errno));
      return -1;
    }
    if (pid == 0) {
      close(p[0]);
      child(c, k, fd, p[1], self, ms);
    }
    c->pid = pid;
    unsigned char st = 1;
    /* one at a time: a failure stops the rest, and a burst of 1000
     * migrations at once would only queue on the kernel's cgroup lock;
     * a child that died without a word is waited for 30 s, not for ever
     * (we hold the pipe's write end too) */
    struct pollfd pfd = {.fd = p[0], .events = POLLIN};
    if (poll(&pfd, 1, 30000) != 1 || read(p[0], &st, 1) != 1 || st != 0) {
      fprintf(stderr, "iob-real-ctr: container %zu (pid %d) did not start\n", k + 1, (int)pid);
      return -1;
    }
  }
  close(p[0]);
  close(p[1]);
  return 0;
}

int main(int argc, char **argv) {
  long ms = 2000;
  int opt;
  while ((opt = getopt(argc, argv, "i:")) != -1) {
    if (opt != 'i')
      goto usage;
    ms = strtol(optarg, NULL, 10);
    if (ms < 1 || ms > 3600000)
      goto usage;
  }
  if (optind != argc - 1)
    goto usage;
  /* The signals that end us, taken by sigwaitinfo; the parent's death too. */
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  sigaddset(&set, SIGCHLD);
  sigprocmask(SIG_BLOCK, &set, NULL);
  pid_t parent = getppid();
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != parent)
    return 1;
  read_list();
  int fd = scratch_file(argv[optind]);
  if (spawn(fd, ms) < 0) {
    teardown();
    return 1;
  }
  for (size_t k = 0; k < nctrs; k++)
    printf("%d\n", (int)ctrs[k].pid);
  printf("ready\n");
  fflush(stdout);
  for (;;) {
    siginfo_t si;
    int sig = sigwaitinfo(&set, &si);
    if (sig == SIGCHLD) {
      reap(false); /* a container the bench killed (a pod emptied) */
      continue;
    }
    if (sig > 0)
      break;
  }
  return teardown();
usage:
  fprintf(stderr, "usage: iob-real-ctr [-i MS] SCRATCH_DIR < LIST\n");
  return 2;
}
