// SPDX-License-Identifier: Apache-2.0
/* The sampler in its own context (agent/sample/sampler.h), without a daemon: a
 * real admission state, a cgroup tree of io.stat files in a scratch
 * directory, and an ops table that records what the sampler asks of its
 * owner. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/sample/sampler.h"
#include "common/cleanup.h"

struct owner {
  struct agent_adm adm;
  struct agent_penalties pen;
  int gone;
  char gone_id[64], gone_why[64];
  int learnt;
};

/* What the daemon does with a vanished container, minus learning. */
static void on_gone(struct agent_ctr *c, const char *why, uint64_t now, void *user) {
  struct owner *o = user;
  o->gone++;
  snprintf(o->gone_id, sizeof(o->gone_id), "%s", c->id);
  snprintf(o->gone_why, sizeof(o->gone_why), "%s", why);
  agent_adm_detach(&o->adm, c, now);
  agent_sampler_forget(c);
  agent_ctr_free(c);
}

static void on_learn(const struct agent_ctr *c, const struct agent_profile_update *u, void *user) {
  (void)c;
  (void)u;
  struct owner *o = user;
  o->learnt++;
}

static const struct agent_sampler_ops ops = {.gone = on_gone, .learn = on_learn};

static char root[64];

static void iostat(const char *ctr, unsigned long long rbytes) {
  char path[256];
  snprintf(path, sizeof(path), "%s/%s/io.stat", root, ctr);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fprintf(f, "8:0 rbytes=%llu wbytes=0 rios=%llu wios=0 dbytes=0 dios=0\n", rbytes, rbytes / 4096);
  fclose(f);
}

/* Its io.pressure: stalled for TOTAL_US microseconds so far. */
static void iopressure(const char *ctr, unsigned long long total_us) {
  char path[256];
  snprintf(path, sizeof(path), "%s/%s/io.pressure", root, ctr);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fprintf(f, "some avg10=0.00 avg60=0.00 avg300=0.00 total=%llu\n", total_us);
  fprintf(f, "full avg10=0.00 avg60=0.00 avg300=0.00 total=%llu\n", total_us);
  fclose(f);
}

static void mkctr(const char *ctr) {
  char path[256];
  snprintf(path, sizeof(path), "%s/%s", root, ctr);
  assert_int_equal(mkdir(path, 0700), 0);
  iostat(ctr, 0);
}

static void rmctr(const char *ctr) {
  char path[256];
  snprintf(path, sizeof(path), "%s/%s/io.pressure", root, ctr);
  (void)unlink(path);
  snprintf(path, sizeof(path), "%s/%s/io.stat", root, ctr);
  assert_int_equal(unlink(path), 0);
  snprintf(path, sizeof(path), "%s/%s", root, ctr);
  assert_int_equal(rmdir(path), 0);
}

static struct agent_ctr *reg(struct owner *o, const char *id, const char *cgroup) {
  cleanup_error struct iob_error *err = NULL;
  struct agent_ctr_info in = {.id = id, .ns = "default", .cgroup = cgroup, .source = "test"};
  struct agent_ctr *c = NULL;
  if (agent_adm_register(&o->adm, &in, 0, &c, &err) < 0)
    fail_msg("register %s: %s", id, err->msg);
  return c;
}

static void setup_owner(struct owner *o, struct agent_sampler *s, bool headless) {
  memset(o, 0, sizeof(*o));
  struct batch_config bcfg;
  batch_config_default(&bcfg);
  agent_adm_init(&o->adm, &bcfg, 100, 60000, NULL, NULL);
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_penalties_init(&o->pen, NULL, &err), 0);
  struct agent_config cfg;
  agent_config_default(&cfg);
  cfg.cgroup_root = root;
  cfg.sampler = AGENT_SAMPLER_IOSTAT;
  const struct agent_sampler_env env = {.adm = &o->adm, .pen = &o->pen, .ops = &ops, .user = o};
  if (headless)
    agent_sampler_init_headless(s, &cfg, &env);
  else if (agent_sampler_init(s, &cfg, &env, &err) < 0)
    fail_msg("sampler: %s", err->msg);
}

static void release_owner(struct owner *o, struct agent_sampler *s) {
  for (struct agent_ctr *c = o->adm.list; c; c = c->next)
    agent_sampler_forget(c);
  agent_sampler_release(s);
  agent_ctr_free_all(&o->adm);
  agent_penalties_release(&o->pen);
}

static int make_root(void **state) {
  (void)state;
  snprintf(root, sizeof(root), "/tmp/iob-sampler.XXXXXX");
  return mkdtemp(root) ? 0 : -1;
}

/* Also after a failed test, which leaves its directories behind. */
static int remove_root(void **state) {
  (void)state;
  char path[256];
  for (const char *const *c = (const char *const[]){"a", "b", "c", "d", NULL}; *c; c++) {
    snprintf(path, sizeof(path), "%s/%s/io.stat", root, *c);
    (void)unlink(path);
    snprintf(path, sizeof(path), "%s/%s/io.pressure", root, *c);
    (void)unlink(path);
    snprintf(path, sizeof(path), "%s/%s", root, *c);
    (void)rmdir(path);
  }
  return rmdir(root);
}

/* A cgroup that was there and vanished ends its container through
 * ops->gone; one that was never there (registered before runc made it)
 * does not, nor does one that is still there. */
static void test_vanished_cgroup_is_gone(void **state) {
  (void)state;
  struct owner o;
  struct agent_sampler s;
  mkctr("a");
  mkctr("b");
  setup_owner(&o, &s, false);
  struct agent_ctr *a = reg(&o, "a", "/a");
  struct agent_ctr *b = reg(&o, "b", "/b");
  reg(&o, "later", "/later");
  char want[128];
  snprintf(want, sizeof(want), "%s/b", root);
  assert_string_equal(agent_sampler_cgdir(&s, b), want);
  const struct cg2_sample none = {0};
  agent_sampler_add(&s, a, &none);
  agent_sampler_add(&s, b, &none);
  agent_sampler_run(&s);
  assert_int_equal(o.gone, 0);
  assert_int_equal(o.adm.n, 3);

  rmctr("a");
  iostat("b", 1 << 20);
  agent_sampler_run(&s);
  assert_int_equal(o.gone, 1);
  assert_string_equal(o.gone_id, "a");
  assert_string_equal(o.gone_why, "cgroup vanished");
  assert_int_equal(o.adm.n, 2);
  assert_null(agent_ctr_find(&o.adm, "default", "a"));
  /* b's window moved 1 MiB */
  assert_true(b->sample.read_bps > 0);
  assert_true(b->sample.io_now);
  assert_int_equal(o.learnt, 0); /* b is created, not running: not classified */

  release_owner(&o, &s);
  rmctr("b");
}

/* The totals the metrics' counters show, from real io.stat files: each
 * window's increase is added, a window whose counters went down (the
 * cgroup made anew) adds nothing, and the node's totals keep what a
 * container did after it is gone. */
static void test_totals_never_go_down(void **state) {
  (void)state;
  struct owner o;
  struct agent_sampler s;
  mkctr("a");
  mkctr("b");
  setup_owner(&o, &s, false);
  struct agent_ctr *a = reg(&o, "a", "/a");
  struct agent_ctr *b = reg(&o, "b", "/b");
  const struct cg2_sample none = {0};
  agent_sampler_add(&s, a, &none);
  agent_sampler_add(&s, b, &none);
  static const unsigned long long reads[] = {1 << 20, 3 << 20, 1 << 12, 1 << 20};
  uint64_t last = 0;
  for (size_t w = 0; w < sizeof(reads) / sizeof(reads[0]); w++) {
    iostat("a", reads[w]);
    if (w == 0)
      iostat("b", 2 << 20);
    if (w == 1)
      rmctr("b");
    agent_sampler_run(&s);
    assert_true(a->sample.io_total.rbytes >= last);
    last = a->sample.io_total.rbytes;
  }
  assert_int_equal(o.gone, 1);
  /* 1 MiB, 2 MiB, nothing (went down), 1 MiB - 4 KiB; in requests of 4 KiB */
  assert_int_equal(a->sample.io_total.rbytes, (4u << 20) - 4096);
  assert_int_equal(a->sample.io_total.rios, 1023);
  assert_int_equal(a->sample.io_total.wbytes, 0);
  assert_int_equal(s.node_io.rbytes, a->sample.io_total.rbytes + (2u << 20));
  release_owner(&o, &s);
  rmctr("a");
}

/* Headless (the fuzzer's daemon): no container's cgroup is known, nothing
 * is read and nothing ends. */
static void test_headless_reads_nothing(void **state) {
  (void)state;
  struct owner o;
  struct agent_sampler s;
  setup_owner(&o, &s, true);
  struct agent_ctr *a = reg(&o, "a", "/a");
  assert_null(agent_sampler_cgdir(&s, a));
  agent_sampler_run(&s);
  assert_int_equal(o.gone, 0);
  assert_int_equal(o.adm.n, 1);
  release_owner(&o, &s);
}

/* sampler = auto picks the BPF map only where cgroup v2 charges
 * writeback to the writer and the program is loaded; it says why in every
 * case. */
static void test_auto_picks_bpf_on_cgroup_v2(void **state) {
  (void)state;
  struct {
    bool v2, fixture;
    int mode;
    const char *lat_why;
    bool dirty;
    const char *dirty_why;
    bool bpf;
    const char *why;
  } cases[] = {
      {true, false, AGENT_LATHIST_MODE_BPF, NULL, false, NULL, true,
       "cgroup v2 charges buffered writeback"},
      {false, false, AGENT_LATHIST_MODE_BPF, NULL, false, "no writeback_dirty_folio", false,
       "charges buffered writeback to the root cgroup, not the writer's), and the program does "
       "not count dirtied pages: no writeback_dirty_folio"},
      /* hybrid, the program counting dirtied pages: the map sees every write */
      {false, false, AGENT_LATHIST_MODE_BPF, NULL, true, NULL, true,
       "counts the pages each container dirties"},
      {true, false, AGENT_LATHIST_MODE_PRESSURE, "latency_source = pressure", false, NULL, false,
       "the BPF program is not loaded: latency_source = pressure"},
      {true, false, AGENT_LATHIST_MODE_OFF, NULL, false, NULL, false, "not loaded: unknown"},
      {true, true, AGENT_LATHIST_MODE_BPF, NULL, false, NULL, false, "cgroup_root is set"},
      {false, true, AGENT_LATHIST_MODE_BPF, NULL, true, NULL, false, "cgroup_root is set"},
      {false, false, AGENT_LATHIST_MODE_PRESSURE, "no kernel BTF", false, NULL, false,
       "not loaded: no kernel BTF"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    cleanup_free char *why = NULL;
    bool bpf = agent_sampler_auto_bpf(cases[i].v2, cases[i].fixture, cases[i].mode,
                                      cases[i].lat_why, cases[i].dirty, cases[i].dirty_why, &why);
    if (bpf != cases[i].bpf || why == NULL || strstr(why, cases[i].why) == NULL)
      fail_msg("case %zu: %s, '%s'", i, bpf ? "bpf" : "files", why ? why : "(null)");
  }
}

/* Learning in windows: up to four containers reading; window() gives
 * each its MiB so far, sleeps a little and samples. */
static const char *const names[] = {"a", "b", "c", "d"};

static bool trusts_kube_system(const char *ns, void *user) {
  (void)user;
  return strcmp(ns, "kube-system") == 0;
}

static const struct agent_adm_ops trust_ops = {.trusts = trusts_kube_system};

static void window(struct agent_sampler *s, const unsigned long long *mib, size_t n) {
  for (size_t i = 0; i < n; i++)
    iostat(names[i], mib[i] << 20);
  (void)usleep(20000);
  agent_sampler_run(s);
}

/* The first N of the four, registered in namespaces NS, running, seq-read
 * as declared, their baselines taken: in c[]. */
static void readers(struct owner *o, struct agent_sampler *s, const char *const *ns,
                    struct agent_ctr **c, size_t n) {
  for (size_t i = 0; i < n; i++) {
    mkctr(names[i]);
    cleanup_error struct iob_error *err = NULL;
    char cg[8];
    snprintf(cg, sizeof(cg), "/%s", names[i]);
    struct agent_ctr_info in = {.id = names[i], .ns = ns[i], .cgroup = cg, .source = "test"};
    if (agent_adm_register(&o->adm, &in, 0, &c[i], &err) < 0)
      fail_msg("register %s: %s", names[i], err->msg);
    c[i]->state = AGENT_RUNNING;
    c[i]->cls = BATCH_SEQ_READ;
    c[i]->class_source = AGENT_CLASS_DECLARED;
    const struct cg2_sample none = {0};
    agent_sampler_add(s, c[i], &none);
  }
}

/* The owner and the sampler released, and the first N readers' cgroups
 * removed. */
static void release_readers(struct owner *o, struct agent_sampler *s, size_t n) {
  release_owner(o, s);
  for (size_t i = 0; i < n; i++)
    rmctr(names[i]);
}

/* A co-run teaches when it ends: a container with a measured solo rate
 * beside three others teaches the pairs its excess shared among them,
 * from the co-run's windows but its first and its last; one alone, from
 * the window after its neighbours left, measures its solo rate, each
 * window once the next shows it was not its last. */
static void test_learns_beside_many_and_alone(void **state) {
  (void)state;
  struct owner o;
  struct agent_sampler s;
  setup_owner(&o, &s, false);
  struct agent_ctr *c[4];
  readers(&o, &s, (const char *const[]){"default", "default", "default", "default"}, c, 4);
  unsigned long long mib[4] = {0, 0, 0, 0};
  double r[5] = {0};
  for (int w = 1; w <= 4; w++) {
    for (int i = 0; i < 4; i++)
      mib[i] += 1;
    window(&s, mib, 4);
    r[w] = c[0]->sample.read_bps;
    if (w == 1)
      c[0]->profile.solo_bps = 4 * r[1];
  }
  assert_null(agent_penalties_stream(&o.pen, c[0]->cls, c[1]->cls)); /* not ended yet */
  /* c and d leave: the co-run of four ends */
  c[2]->state = c[3]->state = AGENT_CREATED;
  mib[0] += 1, mib[1] += 1;
  window(&s, mib, 4);
  const struct agent_pen_stream *e = agent_penalties_stream(&o.pen, c[0]->cls, c[1]->cls);
  assert_non_null(e);
  assert_int_equal(e->samples, 1);
  /* windows 2 and 3, 1 MiB each: the harmonic mean of their rates */
  double rate = 2 / (1 / r[2] + 1 / r[3]), sd = c[0]->profile.solo_bps / rate;
  assert_true(fabs(e->slowdown - (1 + (sd - 1) / 3)) < 1e-6 * e->slowdown);
  /* a leaves too: b alone */
  c[0]->state = AGENT_CREATED;
  for (int w = 6; w <= 9; w++) {
    mib[1] += 1;
    window(&s, mib, 4);
    assert_true((c[1]->sample.alone_s > 0) == (w >= 8));
  }
  assert_true(fabs(c[1]->sample.alone_bytes - (2u << 20)) < 1e-3 * (1 << 20));
  release_readers(&o, &s, 4);
}

/* Two fresh readers (no solo rate) side by side for five windows, 1 MiB
 * a window each (a's rates in r[1..5]), then b leaves and a moves 1 MiB
 * more: a's co-run has ended. */
struct fresh_pair {
  struct owner o;
  struct agent_sampler s;
  struct agent_ctr *c[2];
  unsigned long long mib[2];
  double r[6]; /* a's rate in windows 1 to 5, beside b */
};

static void fresh_pair_then_alone(struct fresh_pair *p) {
  memset(p, 0, sizeof(*p));
  setup_owner(&p->o, &p->s, false);
  readers(&p->o, &p->s, (const char *const[]){"default", "default"}, p->c, 2);
  for (int w = 1; w <= 5; w++) {
    p->mib[0] += 1, p->mib[1] += 1;
    window(&p->s, p->mib, 2);
    p->r[w] = p->c[0]->sample.read_bps;
  }
  p->c[1]->state = AGENT_CREATED;
  p->mib[0] += 1;
  window(&p->s, p->mib, 2);
}

/* The pair's co-run as a's penalty against b: taught, and once. */
static const struct agent_pen_stream *taught_once(const struct fresh_pair *p) {
  const struct agent_pen_stream *e = agent_penalties_stream(&p->o.pen, p->c[0]->cls, p->c[1]->cls);
  assert_non_null(e);
  assert_int_equal(e->samples, 1);
  return e;
}

/* A fresh node: two readers start together, neither with a solo rate.
 * Their co-run teaches nothing when it ends, and is kept: once the
 * survivor has run a full window alone, its solo rate is known and the
 * co-run teaches what it cost, as if the rate had been known all along. */
static void test_corun_taught_once_alone(void **state) {
  (void)state;
  struct fresh_pair p;
  fresh_pair_then_alone(&p);
  assert_null(agent_penalties_stream(&p.o.pen, p.c[0]->cls, p.c[1]->cls));
  double solo = 0;
  for (int w = 7; w <= 9; w++) { /* a alone, 4 MiB a window */
    p.mib[0] += 4;
    window(&p.s, p.mib, 2);
    if (w == 8)
      solo = p.c[0]->sample.alone_bytes / p.c[0]->sample.alone_s;
    /* window 7 is known full (not its last) at window 8 */
    assert_true((agent_penalties_stream(&p.o.pen, p.c[0]->cls, p.c[1]->cls) != NULL) == (w >= 8));
  }
  assert_true(p.c[0]->sample.alone_s > 0);
  const struct agent_pen_stream *e = taught_once(&p);
  /* the co-run's windows 2 to 4 (its first and last left out) against
   * the rate of its first full window alone */
  double sd = solo / (3 / (1 / p.r[2] + 1 / p.r[3] + 1 / p.r[4]));
  assert_true(fabs(e->slowdown - sd) < 1e-6 * sd);
  /* taught once: the exit adds nothing */
  agent_sampler_finish(&p.s, p.c[0]);
  assert_int_equal(agent_penalties_stream(&p.o.pen, p.c[0]->cls, p.c[1]->cls)->samples, 1);
  release_readers(&p.o, &p.s, 2);
}

/* The last job of a mix alone for one full window before it exits: its
 * exit shows that window was not its last, so it is its solo rate, and
 * the co-run it had beside the others teaches. */
static void test_exit_ends_the_tail_alone(void **state) {
  (void)state;
  struct fresh_pair p;
  fresh_pair_then_alone(&p);
  p.mib[0] += 4; /* a alone: one full window, then it exits */
  window(&p.s, p.mib, 2);
  double solo = p.c[0]->sample.read_bps;
  assert_true(p.c[0]->sample.alone_s == 0);
  assert_null(agent_penalties_stream(&p.o.pen, p.c[0]->cls, p.c[1]->cls));
  agent_sampler_finish(&p.s, p.c[0]);
  assert_true(fabs(p.c[0]->sample.alone_bytes / p.c[0]->sample.alone_s - solo) < 1e-6 * solo);
  (void)taught_once(&p);
  release_readers(&p.o, &p.s, 2);
}

/* The last job of a mix alone for less than two windows: the window with
 * its neighbour's exit in it does not count, and no full window follows.
 * The window its own exit cuts short was alone throughout: its exit takes
 * one last sample, and that window is its solo rate. */
static void test_exit_window_is_alone(void **state) {
  (void)state;
  struct fresh_pair p;
  fresh_pair_then_alone(&p);
  assert_true(p.c[0]->sample.alone_s == 0);
  p.mib[0] += 4; /* a alone, then it exits before the next window */
  iostat(names[0], p.mib[0] << 20);
  (void)usleep(40000);
  agent_sampler_finish(&p.s, p.c[0]);
  assert_true(p.c[0]->sample.alone_s > 0);
  double solo = p.c[0]->sample.alone_bytes / p.c[0]->sample.alone_s;
  assert_true(fabs(solo * p.c[0]->sample.alone_s - (4 << 20)) < 1e-6 * solo);
  (void)taught_once(&p);
  release_readers(&p.o, &p.s, 2);
}

/* A container the disk starves beside a busy neighbour (no bytes in a
 * window while it is busy) made no progress in that window: only its
 * windows alone, or idle of its own accord, count at solo speed. */
static void test_starved_window_no_progress(void **state) {
  (void)state;
  struct owner o;
  struct agent_sampler s;
  setup_owner(&o, &s, false);
  struct agent_ctr *c[2];
  readers(&o, &s, (const char *const[]){"default", "default"}, c, 2);
  unsigned long long mib[2] = {0, 0};
  for (int w = 1; w <= 3; w++) { /* both move */
    mib[0] += 1, mib[1] += 1;
    window(&s, mib, 2);
  }
  double before = c[0]->sample.solo_equiv_s;
  for (int w = 4; w <= 5; w++) { /* a starved, b moves */
    mib[1] += 1;
    window(&s, mib, 2);
  }
  assert_true(c[0]->sample.shared);
  assert_true(c[0]->sample.solo_equiv_s == before);
  release_readers(&o, &s, 2);
}

/* Two containers read side by side for four windows, then the second
 * leaves; the first's solo rate was trained high. */
static void tenant_pair(struct owner *o, struct agent_sampler *s, const char *ns0, const char *ns1,
                        struct agent_ctr **c) {
  setup_owner(o, s, false);
  o->adm.ops = &trust_ops;
  readers(o, s, (const char *const[]){ns0, ns1}, c, 2);
  c[0]->profile.solo_bps = c[1]->profile.solo_bps = 1e15;
  unsigned long long mib[2] = {0, 0};
  for (int w = 1; w <= 4; w++) {
    mib[0] += 1, mib[1] += 1;
    window(s, mib, 2);
  }
  c[1]->state = AGENT_CREATED;
  mib[0] += 1;
  window(s, mib, 2);
}

/* A tenant whose declarations do not count teaches nothing from its own
 * containers side by side, however it trained their solo rates; beside
 * another tenant's container it does (as a note, agent/plan/penalties.h). */
static void test_one_tenant_teaches_nothing(void **state) {
  (void)state;
  struct owner o;
  struct agent_sampler s;
  struct agent_ctr *c[2];
  tenant_pair(&o, &s, "mallory", "mallory", c);
  for (int v = 0; v < BATCH_NCLASS; v++)
    for (int n = 0; n < BATCH_NCLASS; n++)
      assert_null(agent_penalties_stream(&o.pen, (enum batch_class)v, (enum batch_class)n));
  release_readers(&o, &s, 2);

  tenant_pair(&o, &s, "mallory", "alice", c);
  const struct agent_pen_stream *e = agent_penalties_stream(&o.pen, c[0]->cls, c[1]->cls);
  assert_non_null(e);
  assert_true(e == &o.pen.p[c[0]->cls][c[1]->cls].u);
  assert_false(agent_penalties_in_use(&o.pen, c[0]->cls, c[1]->cls));
  release_readers(&o, &s, 2);
}

/* Reader a starved beside n - 1 others that move for three windows, then
 * leave: the slowdown its co-run taught against b. */
static double starved_beside(size_t n) {
  struct owner o;
  struct agent_sampler s;
  setup_owner(&o, &s, false);
  struct agent_ctr *c[3];
  readers(&o, &s, (const char *const[]){"default", "default", "default"}, c, n);
  unsigned long long mib[3] = {1, 1, 1};
  window(&s, mib, n);
  c[0]->profile.solo_bps = 100 * c[0]->sample.read_bps;
  for (int w = 2; w <= 4; w++) {
    for (size_t i = 1; i < n; i++)
      mib[i] += 1;
    window(&s, mib, n);
  }
  for (size_t i = 1; i < n; i++)
    c[i]->state = AGENT_CREATED;
  window(&s, mib, n);
  const struct agent_pen_stream *e = agent_penalties_stream(&o.pen, c[0]->cls, c[1]->cls);
  double slowdown = e ? e->slowdown : 0;
  release_readers(&o, &s, n);
  return slowdown;
}

/* A busy container that moves nothing in a whole co-run was starved: the
 * largest slowdown a sample may have. */
static void test_starved_is_slowest(void **state) {
  (void)state;
  assert_true(starved_beside(2) == AGENT_PEN_MAX_SLOWDOWN);
}

/* Starved beside two neighbours: each pair gets the largest slowdown, as
 * it would had the victim moved a byte; shared out, starvation would teach
 * less than a crawl. */
static void test_starved_beside_many_is_slowest(void **state) {
  (void)state;
  assert_true(starved_beside(3) == AGENT_PEN_MAX_SLOWDOWN);
}

/* Two readers move for two windows; then A moves nothing for eight while
 * B goes on.  Its io.pressure says whether it waits for the disk
 * (stalled the whole window) or stopped of its own accord (no stall). */
static void stall_pair(struct owner *o, struct agent_sampler *s, struct agent_ctr **c,
                       bool waits, double *b_alone_s, double *a_equiv_s) {
  setup_owner(o, s, false);
  readers(o, s, (const char *const[]){"default", "default"}, c, 2);
  unsigned long long mib[2] = {1, 1}, stall_us = 0;
  iopressure("a", stall_us);
  for (int w = 1; w <= 2; w++) {
    mib[0] += 1, mib[1] += 1;
    window(s, mib, 2);
  }
  c[0]->profile.solo_bps = 2 * c[0]->sample.read_bps; /* twice slower beside B while it moved */
  *a_equiv_s = c[0]->sample.solo_equiv_s;
  for (int w = 3; w <= 10; w++) {
    mib[1] += 1;
    if (waits)
      stall_us += 1000000; /* more than the window: stalled throughout */
    iopressure("a", stall_us);
    window(s, mib, 2);
    b_alone_s[w] = c[1]->sample.alone_s;
  }
}

/* A reader the disk starves stays busy for as long as it waits, however
 * long that is: its neighbour is never measured as alone beside it, and
 * it makes no solo-speed progress. */
static void test_waiting_reader_stays_busy(void **state) {
  (void)state;
  struct owner o;
  struct agent_sampler s;
  struct agent_ctr *c[2];
  double b_alone[11] = {0}, a_equiv;
  stall_pair(&o, &s, c, true, b_alone, &a_equiv);
  assert_true(c[0]->sample.solo_equiv_s == a_equiv);
  assert_true(b_alone[10] == 0);
  assert_true(c[0]->sample.shared);
  /* B leaves: A's co-run, one window moving and seven starved, teaches
   * far more than the moving window's 2 */
  c[1]->state = AGENT_CREATED;
  window(&s, (unsigned long long[]){3, 11}, 2);
  const struct agent_pen_stream *e = agent_penalties_stream(&o.pen, c[0]->cls, c[1]->cls);
  assert_non_null(e);
  assert_true(e->slowdown > 5);
  release_readers(&o, &s, 2);
}

/* A reader that stops with no stall is idle at once: its neighbour is
 * measured alone from the next windows, and its quiet windows are not
 * taken for starvation (by bytes alone they were, for five windows). */
static void test_idle_reader_leaves_at_once(void **state) {
  (void)state;
  struct owner o;
  struct agent_sampler s;
  struct agent_ctr *c[2];
  double b_alone[11] = {0}, a_equiv;
  stall_pair(&o, &s, c, false, b_alone, &a_equiv);
  assert_true(b_alone[7] > 0); /* by bytes alone, not before window 8 */
  const struct agent_pen_stream *e = agent_penalties_stream(&o.pen, c[0]->cls, c[1]->cls);
  assert_true(e == NULL || e->slowdown < 5); /* the moving window's 2 */
  release_readers(&o, &s, 2);
}

/* A reader admitted into a crowd may move nothing from its first window
 * on: waiting for the disk, it is busy all the same, and its neighbour is
 * not measured alone beside it. */
static void test_starved_from_the_start(void **state) {
  (void)state;
  struct owner o;
  struct agent_sampler s;
  setup_owner(&o, &s, false);
  struct agent_ctr *c[2];
  readers(&o, &s, (const char *const[]){"default", "default"}, c, 2);
  unsigned long long mib[2] = {0, 0}, stall_us = 0;
  for (int w = 1; w <= 8; w++) {
    mib[1] += 1;
    stall_us += 1000000;
    iopressure("a", stall_us);
    window(&s, mib, 2);
  }
  assert_true(c[1]->sample.alone_s == 0);
  assert_true(c[1]->sample.shared);
  release_readers(&o, &s, 2);
}

/* A container's stall is watched (its io.pressure read each window) only
 * while another moves: new readers on a quiet node cost no read, and the
 * watch starts when a neighbour moves and ends when it stops. */
static void test_stall_watched_beside_busy_only(void **state) {
  (void)state;
  struct owner o;
  struct agent_sampler s;
  setup_owner(&o, &s, false);
  struct agent_ctr *c[2];
  readers(&o, &s, (const char *const[]){"default", "default"}, c, 2);
  unsigned long long mib[2] = {0, 0};
  for (int w = 1; w <= 3; w++) {
    window(&s, mib, 2);
    assert_false(agent_sampler_watches_stall(c[0]));
    assert_false(agent_sampler_watches_stall(c[1]));
  }
  mib[1] += 1; /* b moves: a, new and not seen doing I/O, is watched */
  window(&s, mib, 2);
  assert_true(agent_sampler_watches_stall(c[0]));
  assert_false(agent_sampler_watches_stall(c[1]));
  window(&s, mib, 2); /* b stops */
  assert_false(agent_sampler_watches_stall(c[0]));
  release_readers(&o, &s, 2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_vanished_cgroup_is_gone),
      cmocka_unit_test(test_totals_never_go_down),
      cmocka_unit_test(test_headless_reads_nothing),
      cmocka_unit_test(test_auto_picks_bpf_on_cgroup_v2),
      cmocka_unit_test(test_learns_beside_many_and_alone),
      cmocka_unit_test(test_corun_taught_once_alone),
      cmocka_unit_test(test_exit_ends_the_tail_alone),
      cmocka_unit_test(test_exit_window_is_alone),
      cmocka_unit_test(test_starved_window_no_progress),
      cmocka_unit_test(test_one_tenant_teaches_nothing),
      cmocka_unit_test(test_starved_is_slowest),
      cmocka_unit_test(test_starved_beside_many_is_slowest),
      cmocka_unit_test(test_waiting_reader_stays_busy),
      cmocka_unit_test(test_idle_reader_leaves_at_once),
      cmocka_unit_test(test_starved_from_the_start),
      cmocka_unit_test(test_stall_watched_beside_busy_only),
  };
  return cmocka_run_group_tests(tests, make_root, remove_root);
}
