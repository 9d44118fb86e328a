// SPDX-License-Identifier: Apache-2.0
/* Where io.weight is written (agent/weights/weighttree.c): the container cgroups
 * under a flat parent, the pod cgroups between pods, both inside a pod. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/weights/weighttree.h"
#include "common/cleanup.h"

/* "dir=w dir=w ..." sorted, for comparing. */
static int cmp(const void *a, const void *b) {
  return strcmp(((const struct wt_target *)a)->dir, ((const struct wt_target *)b)->dir);
}

static char *targets(const struct wt_item *items, size_t n) {
  struct wt_target *t = NULL;
  size_t nt = 0;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_weighttree_targets(items, n, &t, &nt, &err), 0);
  if (nt > 0)
    qsort(t, nt, sizeof(*t), cmp);
  static char buf[4096];
  buf[0] = '\0';
  for (size_t i = 0; i < nt; i++) {
    char one[512];
    snprintf(one, sizeof(one), "%s%s=%u", i ? " " : "", t[i].dir, t[i].weight);
    strcat(buf, one);
  }
  agent_weighttree_targets_free(t, nt);
  return buf;
}

static void test_flat_parent(void **state) {
  (void)state;
  const struct wt_item it[] = {{"/sys/fs/cgroup/default/seq", 100},
                               {"/sys/fs/cgroup/default/rand", 250}};
  assert_string_equal(targets(it, 2),
                      "/sys/fs/cgroup/default/rand=250 /sys/fs/cgroup/default/seq=100");
}

static void test_pods(void **state) {
  (void)state;
  /* Two pods: they compete at the pod level, so the pods get the weights;
   * the containers' own cgroups have no sibling of ours and are left. */
  const struct wt_item two[] = {{"/cg/kubepods/burstable/podA/c1", 100},
                                {"/cg/kubepods/burstable/podB/c2", 400}};
  assert_string_equal(targets(two, 2),
                      "/cg/kubepods/burstable/podA=100 /cg/kubepods/burstable/podB=400");
  /* A second container in podA: podA carries the larger of its two, and
   * inside podA the containers get their own. */
  const struct wt_item three[] = {{"/cg/kubepods/burstable/podA/c1", 100},
                                  {"/cg/kubepods/burstable/podB/c2", 400},
                                  {"/cg/kubepods/burstable/podA/c3", 700}};
  assert_string_equal(targets(three, 3),
                      "/cg/kubepods/burstable/podA=700 /cg/kubepods/burstable/podA/c1=100 "
                      "/cg/kubepods/burstable/podA/c3=700 /cg/kubepods/burstable/podB=400");
  /* Different QoS classes meet at kubepods. */
  const struct wt_item qos[] = {{"/cg/kubepods/podG/c1", 300},
                                {"/cg/kubepods/burstable/podB/c2", 100}};
  assert_string_equal(targets(qos, 2), "/cg/kubepods/burstable=100 /cg/kubepods/podG=300");
}

static void test_edges(void **state) {
  (void)state;
  /* Alone: its own cgroup (enforces nothing, keeps Status honest). */
  const struct wt_item one[] = {{"/cg/ns/c1", 100}, {NULL, 900}};
  assert_string_equal(targets(one, 2), "/cg/ns/c1=100");
  assert_string_equal(targets(one + 1, 1), "");
  assert_string_equal(targets(one, 0), "");
  /* Prefixes of names are not ancestors: /cg/ns/c1 and /cg/ns/c10 are
   * siblings. */
  const struct wt_item pre[] = {{"/cg/ns/c1", 100}, {"/cg/ns/c10", 200}};
  assert_string_equal(targets(pre, 2), "/cg/ns/c1=100 /cg/ns/c10=200");
  /* Two in one cgroup cannot be told apart: nothing to write for them. */
  const struct wt_item same[] = {{"/cg/ns/c1", 100}, {"/cg/ns/c1", 200}};
  assert_string_equal(targets(same, 2), "");
  /* One cgroup inside another's (not a valid v2 layout, but no crash):
   * the inner one's branch below the outer gets the weight. */
  const struct wt_item nest[] = {{"/cg/a", 100}, {"/cg/a/b/c", 300}};
  assert_string_equal(targets(nest, 2), "/cg/a/b=300");
  /* Different roots meet at "/". */
  const struct wt_item root[] = {{"/x", 5}, {"/y/z", 6}};
  assert_string_equal(targets(root, 2), "/x=5 /y=6");
}

static void test_covers(void **state) {
  (void)state;
  assert_true(agent_weighttree_target_covers("/cg/p", "/cg/p/c"));
  assert_true(agent_weighttree_target_covers("/cg/p", "/cg/p"));
  assert_false(agent_weighttree_target_covers("/cg/p", "/cg/pp/c"));
  assert_false(agent_weighttree_target_covers("/cg/p/c", "/cg/p"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_flat_parent),
      cmocka_unit_test(test_pods),
      cmocka_unit_test(test_edges),
      cmocka_unit_test(test_covers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
