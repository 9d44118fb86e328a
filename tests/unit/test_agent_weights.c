// SPDX-License-Identifier: Apache-2.0
/* agent/weights/weights.c over fixture cgroups (a scratch cgroup2 root with
 * io.cost.qos, io.stat and io.weight files; the disk is one of this
 * host's whole disks whose scheduler is not bfq, found in /sys/dev/block):
 *  - iocost enabled for the disk: io.weight written for it, the original
 *    journalled first, the container's weight in effect; the same weight
 *    again writes nothing; another weight is written; release puts back;
 *  - iocost disabled for it: nothing written, "neither iocost nor bfq";
 *  - no I/O yet, a device that does not exist, a malformed io.cost.qos
 *    line, no io controller, a cgroup without io.stat, an unknown cgroup:
 *    never in effect, each saying why; a container not running is not
 *    looked at. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/weights/weights.h"
#include "common/cleanup.h"
#include "common/file.h"
#include "cg2_fixture.h"

struct env {
  char root[32];  /* the cgroup2 mount */
  char state[32]; /* the agent's state directory (restore.json) */
  struct agent_config cfg;
  struct agent_sampler s;
  struct agent_restore r;
  struct agent_metrics m;
  struct agent_weights w;
  unsigned maj, min; /* a whole disk of this host without bfq */
};

/* The first whole disk (no "partition") whose scheduler is not bfq:
 * weights.c reads the scheduler from the real /sys. */
static int find_disk(unsigned *maj, unsigned *min) {
  DIR *d = opendir("/sys/dev/block");
  if (d == NULL)
    return -1;
  struct dirent *e;
  int found = -1;
  while (found < 0 && (e = readdir(d)) != NULL) {
    unsigned a, b;
    if (sscanf(e->d_name, "%u:%u", &a, &b) != 2)
      continue;
    char p[320];
    snprintf(p, sizeof(p), "/sys/dev/block/%s/partition", e->d_name);
    if (access(p, F_OK) == 0)
      continue;
    snprintf(p, sizeof(p), "/sys/dev/block/%s/queue/scheduler", e->d_name);
    char *txt = NULL;
    size_t len = 0;
    struct iob_error *err = NULL;
    if (iob_read_file(p, 4096, &txt, &len, &err) == 0 && strstr(txt, "[bfq]") == NULL) {
      *maj = a;
      *min = b;
      found = 0;
    }
    iob_error_release(&err);
    free(txt);
  }
  closedir(d);
  return found;
}

static char *file_text(const struct env *e, const char *rel) {
  char path[256];
  snprintf(path, sizeof(path), "%s%s", e->root, rel);
  char *buf = NULL;
  size_t len = 0;
  struct iob_error *err = NULL;
  if (iob_read_file(path, 4096, &buf, &len, &err) < 0) {
    iob_error_release(&err);
    return strdup("");
  }
  return buf;
}

static void put(const struct env *e, const char *rel, const char *text) {
  put_text(e->root, rel, text);
}

static int setup(void **state) {
  struct env *e = calloc(1, sizeof(*e));
  assert_non_null(e);
  if (find_disk(&e->maj, &e->min) < 0)
    fail_msg("no whole disk without bfq in /sys/dev/block: this test needs one");
  snprintf(e->root, sizeof(e->root), "/tmp/iob-wt.XXXXXX");
  snprintf(e->state, sizeof(e->state), "/tmp/iob-wtst.XXXXXX");
  assert_non_null(mkdtemp(e->root));
  assert_non_null(mkdtemp(e->state));
  put(e, "/io.cost.qos", "");
  put(e, "/k/a/io.weight", "default 100\n");
  put(e, "/k/a/io.stat", "");
  agent_config_default(&e->cfg);
  cleanup_error struct iob_error *err = NULL;
  const struct agent_sampler_env env = {0};
  agent_sampler_init_headless(&e->s, &e->cfg, &env);
  e->s.has_io = true;
  e->s.source = CG2_SOURCE_IOSTAT;
  e->s.cgroup_root = strdup(e->root);
  assert_int_equal(agent_restore_init(&e->r, e->state, NULL, &err), 0);
  agent_weights_init(&e->w, &e->s, &e->r, &e->m);
  *state = e;
  return 0;
}

static int teardown(void **state) {
  struct env *e = *state;
  agent_weights_release(&e->w);
  agent_restore_release(&e->r);
  agent_sampler_release(&e->s);
  agent_config_release(&e->cfg);
  char cmd[128];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", e->root, e->state);
  assert_int_equal(system(cmd), 0);
  free(e);
  return 0;
}

static struct agent_ctr ctr(const char *cgroup, unsigned weight) {
  return (struct agent_ctr){.id = (char *)"a",
                            .ns = (char *)"default",
                            .cgroup = (char *)cgroup,
                            .state = AGENT_RUNNING,
                            .plan.weight = weight};
}

static void io_on(struct env *e, unsigned maj, unsigned min) {
  char line[128];
  snprintf(line, sizeof(line), "%u:%u rbytes=4096 wbytes=1048576 rios=1 wios=8 dbytes=0 dios=0\n",
           maj, min);
  put(e, "/k/a/io.stat", line);
}

static void iocost(struct env *e, bool on) {
  char line[160];
  snprintf(line, sizeof(line),
           "%u:%u enable=%d ctrl=auto rpct=0.00 rlat=250000 wpct=0.00 "
           "wlat=250000 min=1.00 max=10000.00\n",
           e->maj, e->min, on ? 1 : 0);
  put(e, "/io.cost.qos", line);
}

/* What a write leaves in a fixture file is the written line at offset 0
 * over the old text; the kernel's io.weight then shows the default and
 * the disk's line. */
static void kernel_view(struct env *e, unsigned weight) {
  char text[96];
  snprintf(text, sizeof(text), "default 100\n%u:%u %u\n", e->maj, e->min, weight);
  put(e, "/k/a/io.weight", text);
}

static bool written(struct env *e, unsigned weight) {
  char want[64];
  snprintf(want, sizeof(want), "%u:%u %u", e->maj, e->min, weight);
  cleanup_free char *w = file_text(e, "/k/a/io.weight");
  return strncmp(w, want, strlen(want)) == 0;
}

static void test_iocost_written_and_put_back(void **state) {
  struct env *e = *state;
  iocost(e, true);
  io_on(e, e->maj, e->min);
  struct agent_ctr c = ctr("/k/a", 300);
  agent_weights_apply_all(&e->w, &c);
  assert_true(c.weights.weight_effective);
  assert_string_equal(c.weights.weight_note, "");
  assert_true(written(e, 300));
  assert_int_equal(e->m.weight_writes[AGENT_WEIGHT_WRITTEN], 1);
  /* journalled before the write: what the file held for the disk */
  char file[128];
  snprintf(file, sizeof(file), "%s/k/a/io.weight", e->root);
  assert_true(agent_restore_has(&e->r, file, e->maj, e->min));
  kernel_view(e, 300);

  /* the same weight again: nothing written */
  agent_weights_apply_all(&e->w, &c);
  assert_int_equal(e->m.weight_writes[AGENT_WEIGHT_WRITTEN], 1);
  assert_false(written(e, 300));
  assert_true(c.weights.weight_effective);

  /* another weight: written */
  c.plan.weight = 50;
  agent_weights_apply_all(&e->w, &c);
  assert_int_equal(e->m.weight_writes[AGENT_WEIGHT_WRITTEN], 2);
  assert_true(written(e, 50));
  kernel_view(e, 50);

  /* not a target now (not running): what was there is put back */
  c.state = AGENT_PENDING;
  agent_weights_apply_all(&e->w, &c);
  assert_false(agent_restore_has(&e->r, file, e->maj, e->min));
  char want[64];
  snprintf(want, sizeof(want), "%u:%u default", e->maj, e->min);
  cleanup_free char *w = file_text(e, "/k/a/io.weight");
  if (strncmp(w, want, strlen(want)) != 0)
    fail_msg("io.weight after put back: '%s', want '%s' first", w, want);
  agent_sampler_forget(&c);
}

static void test_not_enforced(void **state) {
  struct env *e = *state;
  iocost(e, false);
  io_on(e, e->maj, e->min);
  struct agent_ctr c = ctr("/k/a", 300);
  agent_weights_apply_all(&e->w, &c);
  assert_false(c.weights.weight_effective);
  assert_string_equal(c.weights.weight_note, "neither iocost nor bfq on its devices");
  assert_int_equal(e->m.weight_writes[AGENT_WEIGHT_NOT_ENFORCED], 1);
  cleanup_free char *w = file_text(e, "/k/a/io.weight");
  assert_string_equal(w, "default 100\n");
  agent_sampler_forget(&c);
}

static void test_no_io_yet(void **state) {
  struct env *e = *state;
  iocost(e, true);
  struct agent_ctr c = ctr("/k/a", 300);
  agent_weights_apply_all(&e->w, &c);
  assert_false(c.weights.weight_effective);
  assert_string_equal(c.weights.weight_note, "no I/O seen yet");
  for (int k = 0; k < AGENT_WEIGHT_N; k++)
    assert_int_equal(e->m.weight_writes[k], 0);
  agent_sampler_forget(&c);
}

/* I/O on a device the host does not have, and a malformed io.cost.qos
 * line for the disk: the write fails, said, counted, nothing written. */
static void test_write_fails(void **state) {
  struct env *e = *state;
  iocost(e, true);
  io_on(e, 4095, 1048575);
  struct agent_ctr c = ctr("/k/a", 300);
  agent_weights_apply_all(&e->w, &c);
  assert_false(c.weights.weight_effective);
  assert_string_equal(c.weights.weight_note, "write failed");
  assert_int_equal(e->m.weight_writes[AGENT_WEIGHT_ERROR], 1);
  cleanup_free char *w = file_text(e, "/k/a/io.weight");
  assert_string_equal(w, "default 100\n");

  char line[64];
  snprintf(line, sizeof(line), "%u:%u enable=maybe\n", e->maj, e->min);
  put(e, "/io.cost.qos", line);
  io_on(e, e->maj, e->min);
  agent_weights_apply_all(&e->w, &c);
  assert_false(c.weights.weight_effective);
  assert_string_equal(c.weights.weight_note, "write failed");
  assert_int_equal(e->m.weight_writes[AGENT_WEIGHT_ERROR], 2);
  agent_sampler_forget(&c);
}

/* Nothing written, each saying why: no io controller; a cgroup the
 * sampler cannot find; a container that is not running is not looked at. */
static void test_not_applicable(void **state) {
  struct env *e = *state;
  iocost(e, true);
  io_on(e, e->maj, e->min);
  struct agent_ctr c = ctr("/k/a", 300);
  e->s.has_io = false;
  agent_weights_apply_all(&e->w, &c);
  assert_false(c.weights.weight_effective);
  assert_string_equal(c.weights.weight_note, "no io controller in cgroup v2 on this host");
  e->s.has_io = true;

  struct agent_ctr gone = ctr("/k/none", 300);
  agent_weights_apply_all(&e->w, &gone);
  assert_false(gone.weights.weight_effective);
  assert_ptr_equal(strstr(gone.weights.weight_note, "cannot read io.stat of "), gone.weights.weight_note);

  struct agent_ctr unknown = ctr(NULL, 300);
  agent_weights_apply_all(&e->w, &unknown);
  assert_false(unknown.weights.weight_effective);
  assert_string_equal(unknown.weights.weight_note, "cgroup not known");

  struct agent_ctr pending = ctr("/k/a", 300);
  pending.state = AGENT_PENDING;
  snprintf(pending.weights.weight_note, sizeof(pending.weights.weight_note), "untouched");
  agent_weights_apply_all(&e->w, &pending);
  assert_string_equal(pending.weights.weight_note, "untouched");
  assert_int_equal(e->m.weight_writes[AGENT_WEIGHT_WRITTEN], 0);
  assert_int_equal(e->m.weight_writes[AGENT_WEIGHT_NOT_ENFORCED], 0);
  agent_sampler_forget(&c);
  agent_sampler_forget(&gone);
  agent_sampler_forget(&unknown);
  agent_sampler_forget(&pending);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_iocost_written_and_put_back, setup, teardown),
      cmocka_unit_test_setup_teardown(test_not_enforced, setup, teardown),
      cmocka_unit_test_setup_teardown(test_no_io_yet, setup, teardown),
      cmocka_unit_test_setup_teardown(test_write_fails, setup, teardown),
      cmocka_unit_test_setup_teardown(test_not_applicable, setup, teardown),
  };
  return cmocka_run_group_tests_name("agent_weights", tests, NULL, NULL);
}
