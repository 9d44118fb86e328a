// SPDX-License-Identifier: Apache-2.0
/* Stats: the init pid's cgroup read directly (no runc), packed as
 * containerd's io.containerd.cgroups.v1.Metrics or .v2.Metrics. */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "cgroups/v1/metrics.pb-c.h"
#include "cgroups/v2/metrics.pb-c.h"
#include "common/cleanup.h"
#include "common/xalloc.h"
#include "shim/stats.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif
#define CG_ROOT "/sys/fs/cgroup"
#define FILE_MAX 16384

struct field {
  const char *key;
  size_t off;
};

static char *slurp(const char *dir, const char *file) {
  char path[4200];
  snprintf(path, sizeof(path), "%s/%s", dir, file);
  cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return NULL;
  char *buf = xmalloc(FILE_MAX);
  ssize_t n = read(fd, buf, FILE_MAX - 1);
  if (n < 0) {
    free(buf);
    return NULL;
  }
  buf[n] = '\0';
  return buf;
}

static uint64_t read_u64(const char *dir, const char *file) {
  cleanup_free char *s = slurp(dir, file);
  if (s == NULL || !strncmp(s, "max", 3))
    return 0;
  return strtoull(s, NULL, 10);
}

/* "key value" lines into the fields of msg named in table. */
static void read_keyed(const char *dir, const char *file, void *msg, const struct field *t,
                       size_t n) {
  cleanup_free char *s = slurp(dir, file);
  if (s == NULL)
    return;
  char *save = NULL;
  for (char *line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    char *sp = strchr(line, ' ');
    if (sp == NULL)
      continue;
    *sp = '\0';
    for (size_t i = 0; i < n; i++)
      if (!strcmp(t[i].key, line))
        *(uint64_t *)((char *)msg + t[i].off) = strtoull(sp + 1, NULL, 10);
  }
}

/* The cgroup of pid: for v2 the "0::" line, for v1 the line naming the
 * controller. */
static char *cgroup_of(pid_t pid, const char *controller) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
  cleanup_file FILE *f = fopen(path, "re");
  if (f == NULL)
    return NULL;
  char line[4200];
  while (fgets(line, sizeof(line), f)) {
    line[strcspn(line, "\n")] = '\0';
    char *c1 = strchr(line, ':');
    char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (c2 == NULL)
      continue;
    *c2 = '\0';
    const char *ctrls = c1 + 1;
    bool match = controller == NULL ? *ctrls == '\0' : false;
    if (controller) {
      cleanup_free char *dup = xstrdup(ctrls);
      char *save = NULL;
      for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save))
        if (!strcmp(t, controller))
          match = true;
    }
    if (match) {
      char *out = NULL;
      if (asprintf(&out, "%s/%s%s", CG_ROOT, controller ? controller : "", c2 + 1) < 0)
        return NULL;
      return out;
    }
  }
  return NULL;
}

#define F1(k, m)                                                                                   \
  { k, offsetof(Io__Containerd__Cgroups__V1__MemoryStat, m) }
static const struct field mem_v1[] = {
    F1("cache", cache),
    F1("rss", rss),
    F1("rss_huge", rss_huge),
    F1("mapped_file", mapped_file),
    F1("dirty", dirty),
    F1("writeback", writeback),
    F1("pgpgin", pg_pg_in),
    F1("pgpgout", pg_pg_out),
    F1("pgfault", pg_fault),
    F1("pgmajfault", pg_maj_fault),
    F1("inactive_anon", inactive_anon),
    F1("active_anon", active_anon),
    F1("inactive_file", inactive_file),
    F1("active_file", active_file),
    F1("unevictable", unevictable),
    F1("hierarchical_memory_limit", hierarchical_memory_limit),
    F1("hierarchical_memsw_limit", hierarchical_swap_limit),
    F1("total_cache", total_cache),
    F1("total_rss", total_rss),
    F1("total_rss_huge", total_rss_huge),
    F1("total_mapped_file", total_mapped_file),
    F1("total_dirty", total_dirty),
    F1("total_writeback", total_writeback),
    F1("total_pgpgin", total_pg_pg_in),
    F1("total_pgpgout", total_pg_pg_out),
    F1("total_pgfault", total_pg_fault),
    F1("total_pgmajfault", total_pg_maj_fault),
    F1("total_inactive_anon", total_inactive_anon),
    F1("total_active_anon", total_active_anon),
    F1("total_inactive_file", total_inactive_file),
    F1("total_active_file", total_active_file),
    F1("total_unevictable", total_unevictable),
};

static void mem_entry_v1(const char *dir, const char *prefix,
                         Io__Containerd__Cgroups__V1__MemoryEntry *e) {
  char name[96];
  snprintf(name, sizeof(name), "%s.usage_in_bytes", prefix);
  e->usage = read_u64(dir, name);
  snprintf(name, sizeof(name), "%s.limit_in_bytes", prefix);
  e->limit = read_u64(dir, name);
  snprintf(name, sizeof(name), "%s.max_usage_in_bytes", prefix);
  e->max = read_u64(dir, name);
  snprintf(name, sizeof(name), "%s.failcnt", prefix);
  e->failcnt = read_u64(dir, name);
}

/* blkio.throttle.* lines: "MAJ:MIN Op value". */
static void blkio_v1(const char *dir, const char *file, size_t *n,
                     Io__Containerd__Cgroups__V1__BlkIOEntry ***out) {
  cleanup_free char *s = slurp(dir, file);
  if (s == NULL)
    return;
  char *save = NULL;
  for (char *line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    unsigned maj, min;
    char op[16];
    unsigned long long v;
    if (sscanf(line, "%u:%u %15s %llu", &maj, &min, op, &v) != 4 || *n >= 256)
      continue;
    Io__Containerd__Cgroups__V1__BlkIOEntry *e = xmalloc(sizeof(*e));
    Io__Containerd__Cgroups__V1__BlkIOEntry **a = xrealloc(*out, (*n + 1) * sizeof(*a));
    io__containerd__cgroups__v1__blk_ioentry__init(e);
    e->op = xstrdup(op);
    e->major = maj;
    e->minor = min;
    e->value = v;
    *out = a;
    a[(*n)++] = e;
  }
}

static void cpu_v1(pid_t pid, Io__Containerd__Cgroups__V1__CPUStat *cpu,
                   Io__Containerd__Cgroups__V1__CPUUsage *u,
                   Io__Containerd__Cgroups__V1__Throttle *t) {
  cleanup_free char *acct = cgroup_of(pid, "cpuacct");
  cleanup_free char *cpud = cgroup_of(pid, "cpu");
  if (acct) {
    u->total = read_u64(acct, "cpuacct.usage");
    u->user = read_u64(acct, "cpuacct.usage_user");
    u->kernel = read_u64(acct, "cpuacct.usage_sys");
    cleanup_free char *pc = slurp(acct, "cpuacct.usage_percpu");
    for (char *p = pc; p && *p && *p != '\n' && u->n_per_cpu < 1024;) {
      char *end;
      unsigned long long v = strtoull(p, &end, 10);
      if (end == p)
        break;
      uint64_t *a = xrealloc(u->per_cpu, (u->n_per_cpu + 1) * sizeof(*a));
      u->per_cpu = a;
      a[u->n_per_cpu++] = v;
      p = end;
      while (*p == ' ')
        p++;
    }
  }
  if (cpud) {
    static const struct field th[] = {
        {"nr_periods", offsetof(Io__Containerd__Cgroups__V1__Throttle, periods)},
        {"nr_throttled", offsetof(Io__Containerd__Cgroups__V1__Throttle, throttled_periods)},
        {"throttled_time", offsetof(Io__Containerd__Cgroups__V1__Throttle, throttled_time)},
    };
    read_keyed(cpud, "cpu.stat", t, th, IOB_ARRAY_SIZE(th));
  }
  cpu->usage = u;
  cpu->throttling = t;
}

static int pack(const ProtobufCMessage *m, char **type_url, uint8_t **value, size_t *len) {
  size_t n = protobuf_c_message_get_packed_size(m);
  *value = xmalloc(n);
  *type_url = xstrdup(m->descriptor->name);
  *len = protobuf_c_message_pack(m, *value);
  return 0;
}

static void free_entries(size_t n, Io__Containerd__Cgroups__V1__BlkIOEntry **e) {
  for (size_t i = 0; i < n; i++) {
    free(e[i]->op);
    free(e[i]);
  }
  free(e);
}

static int stats_v1(pid_t pid, char **type_url, uint8_t **value, size_t *len) {
  Io__Containerd__Cgroups__V1__Metrics m = IO__CONTAINERD__CGROUPS__V1__METRICS__INIT;
  Io__Containerd__Cgroups__V1__PidsStat pids = IO__CONTAINERD__CGROUPS__V1__PIDS_STAT__INIT;
  Io__Containerd__Cgroups__V1__CPUStat cpu = IO__CONTAINERD__CGROUPS__V1__CPUSTAT__INIT;
  Io__Containerd__Cgroups__V1__CPUUsage usage = IO__CONTAINERD__CGROUPS__V1__CPUUSAGE__INIT;
  Io__Containerd__Cgroups__V1__Throttle thr = IO__CONTAINERD__CGROUPS__V1__THROTTLE__INIT;
  Io__Containerd__Cgroups__V1__MemoryStat mem = IO__CONTAINERD__CGROUPS__V1__MEMORY_STAT__INIT;
  Io__Containerd__Cgroups__V1__MemoryEntry mu = IO__CONTAINERD__CGROUPS__V1__MEMORY_ENTRY__INIT,
                                           ms = IO__CONTAINERD__CGROUPS__V1__MEMORY_ENTRY__INIT,
                                           mk = IO__CONTAINERD__CGROUPS__V1__MEMORY_ENTRY__INIT;
  Io__Containerd__Cgroups__V1__BlkIOStat blk = IO__CONTAINERD__CGROUPS__V1__BLK_IOSTAT__INIT;
  cleanup_free char *pd = cgroup_of(pid, "pids");
  cleanup_free char *md = cgroup_of(pid, "memory");
  cleanup_free char *bd = cgroup_of(pid, "blkio");
  if (pd) {
    pids.current = read_u64(pd, "pids.current");
    pids.limit = read_u64(pd, "pids.max");
    m.pids = &pids;
  }
  cpu_v1(pid, &cpu, &usage, &thr);
  m.cpu = &cpu;
  if (md) {
    read_keyed(md, "memory.stat", &mem, mem_v1, IOB_ARRAY_SIZE(mem_v1));
    mem_entry_v1(md, "memory", &mu);
    mem_entry_v1(md, "memory.memsw", &ms);
    mem_entry_v1(md, "memory.kmem", &mk);
    mem.usage = &mu;
    mem.swap = &ms;
    mem.kernel = &mk;
    m.memory = &mem;
  }
  if (bd) {
    blkio_v1(bd, "blkio.throttle.io_service_bytes_recursive", &blk.n_io_service_bytes_recursive,
             &blk.io_service_bytes_recursive);
    blkio_v1(bd, "blkio.throttle.io_serviced_recursive", &blk.n_io_serviced_recursive,
             &blk.io_serviced_recursive);
    m.blkio = &blk;
  }
  pack(&m.base, type_url, value, len);
  free(usage.per_cpu);
  free_entries(blk.n_io_service_bytes_recursive, blk.io_service_bytes_recursive);
  free_entries(blk.n_io_serviced_recursive, blk.io_serviced_recursive);
  return 0;
}

#define F2(k)                                                                                      \
  { #k, offsetof(Io__Containerd__Cgroups__V2__MemoryStat, k) }
static const struct field mem_v2[] = {
    F2(anon),
    F2(file),
    F2(kernel_stack),
    F2(slab),
    F2(sock),
    F2(shmem),
    F2(file_mapped),
    F2(file_dirty),
    F2(file_writeback),
    F2(anon_thp),
    F2(inactive_anon),
    F2(active_anon),
    F2(inactive_file),
    F2(active_file),
    F2(unevictable),
    F2(slab_reclaimable),
    F2(slab_unreclaimable),
    F2(pgfault),
    F2(pgmajfault),
    F2(workingset_refault),
    F2(workingset_activate),
    F2(workingset_nodereclaim),
    F2(pgrefill),
    F2(pgscan),
    F2(pgsteal),
    F2(pgactivate),
    F2(pgdeactivate),
    F2(pglazyfree),
    F2(pglazyfreed),
    F2(thp_fault_alloc),
    F2(thp_collapse_alloc),
};

#define FE(k)                                                                                      \
  { #k, offsetof(Io__Containerd__Cgroups__V2__MemoryEvents, k) }
static const struct field events_v2[] = {FE(low), FE(high), FE(max), FE(oom), FE(oom_kill)};

#define FC(k)                                                                                      \
  { #k, offsetof(Io__Containerd__Cgroups__V2__CPUStat, k) }
static const struct field cpu_v2[] = {FC(usage_usec), FC(user_usec),    FC(system_usec),
                                      FC(nr_periods), FC(nr_throttled), FC(throttled_usec)};

/* io.stat: "MAJ:MIN rbytes=.. wbytes=.. rios=.. wios=.. ..." */
static void io_v2(const char *dir, Io__Containerd__Cgroups__V2__IOStat *io) {
  cleanup_free char *s = slurp(dir, "io.stat");
  if (s == NULL)
    return;
  char *save = NULL;
  for (char *line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    unsigned maj, min;
    if (sscanf(line, "%u:%u", &maj, &min) != 2 || io->n_usage >= 256)
      continue;
    Io__Containerd__Cgroups__V2__IOEntry *e = xmalloc(sizeof(*e));
    Io__Containerd__Cgroups__V2__IOEntry **a = xrealloc(io->usage, (io->n_usage + 1) * sizeof(*a));
    io__containerd__cgroups__v2__ioentry__init(e);
    e->major = maj;
    e->minor = min;
    char *p;
    if ((p = strstr(line, "rbytes=")))
      e->rbytes = strtoull(p + 7, NULL, 10);
    if ((p = strstr(line, "wbytes=")))
      e->wbytes = strtoull(p + 7, NULL, 10);
    if ((p = strstr(line, "rios=")))
      e->rios = strtoull(p + 5, NULL, 10);
    if ((p = strstr(line, "wios=")))
      e->wios = strtoull(p + 5, NULL, 10);
    io->usage = a;
    a[io->n_usage++] = e;
  }
}

static int stats_v2(pid_t pid, char **type_url, uint8_t **value, size_t *len,
                    struct iob_error **err) {
  cleanup_free char *dir = cgroup_of(pid, NULL);
  if (dir == NULL)
    return iob_error_code(err, IOB_CODE_NOT_FOUND, "cannot find the cgroup of pid %d", (int)pid);
  Io__Containerd__Cgroups__V2__Metrics m = IO__CONTAINERD__CGROUPS__V2__METRICS__INIT;
  Io__Containerd__Cgroups__V2__PidsStat pids = IO__CONTAINERD__CGROUPS__V2__PIDS_STAT__INIT;
  Io__Containerd__Cgroups__V2__CPUStat cpu = IO__CONTAINERD__CGROUPS__V2__CPUSTAT__INIT;
  Io__Containerd__Cgroups__V2__MemoryStat mem = IO__CONTAINERD__CGROUPS__V2__MEMORY_STAT__INIT;
  Io__Containerd__Cgroups__V2__MemoryEvents mev = IO__CONTAINERD__CGROUPS__V2__MEMORY_EVENTS__INIT;
  Io__Containerd__Cgroups__V2__IOStat io = IO__CONTAINERD__CGROUPS__V2__IOSTAT__INIT;
  pids.current = read_u64(dir, "pids.current");
  pids.limit = read_u64(dir, "pids.max");
  read_keyed(dir, "cpu.stat", &cpu, cpu_v2, IOB_ARRAY_SIZE(cpu_v2));
  read_keyed(dir, "memory.stat", &mem, mem_v2, IOB_ARRAY_SIZE(mem_v2));
  mem.usage = read_u64(dir, "memory.current");
  mem.usage_limit = read_u64(dir, "memory.max");
  mem.max_usage = read_u64(dir, "memory.peak");
  mem.swap_usage = read_u64(dir, "memory.swap.current");
  mem.swap_limit = read_u64(dir, "memory.swap.max");
  read_keyed(dir, "memory.events", &mev, events_v2, IOB_ARRAY_SIZE(events_v2));
  io_v2(dir, &io);
  m.pids = &pids;
  m.cpu = &cpu;
  m.memory = &mem;
  m.memory_events = &mev;
  m.io = &io;
  pack(&m.base, type_url, value, len);
  for (size_t i = 0; i < io.n_usage; i++)
    free(io.usage[i]);
  free(io.usage);
  return 0;
}

static bool unified(void) {
  struct statfs sf;
  return statfs(CG_ROOT, &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC;
}

int shim_stats_collect(pid_t pid, char **type_url, uint8_t **value, size_t *len,
                       struct iob_error **err) {
  if (pid <= 0)
    return iob_error_code(err, IOB_CODE_NOT_FOUND, "process has no pid");
  if (unified())
    return stats_v2(pid, type_url, value, len, err);
  return stats_v1(pid, type_url, value, len);
}
