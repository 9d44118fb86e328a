// SPDX-License-Identifier: Apache-2.0
/* agent/podmeta.c on a fixed CRI listing (no socket): which containers
 * get which names, uid and labels; a name registered from annotations
 * that the CRI contradicts is replaced; nothing changes twice. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/podmeta.h"
#include "common/xalloc.h"

static struct agent_ctr *ctr(const char *id, const char *pod_name) {
  struct agent_ctr *c = xcalloc(1, sizeof(*c));
  c->id = xstrdup(id);
  c->pod_name = xstrdup(pod_name);
  c->pod_namespace = xstrdup("");
  c->container_name = xstrdup("");
  return c;
}

static void listing(struct cri_meta_list *l) {
  Runtime__V1__PodSandboxMetadata md = RUNTIME__V1__POD_SANDBOX_METADATA__INIT;
  md.name = (char *)"pg-0";
  md.namespace_ = (char *)"db";
  md.uid = (char *)"u-1";
  Runtime__V1__PodSandbox__LabelsEntry le = RUNTIME__V1__POD_SANDBOX__LABELS_ENTRY__INIT;
  le.key = (char *)"tier";
  le.value = (char *)"db";
  Runtime__V1__PodSandbox__LabelsEntry *les[] = {&le};
  Runtime__V1__PodSandbox p = RUNTIME__V1__POD_SANDBOX__INIT;
  p.id = (char *)"sb1";
  p.metadata = &md;
  p.labels = les;
  p.n_labels = 1;
  Runtime__V1__PodSandbox *ps[] = {&p};
  Runtime__V1__ListPodSandboxResponse pr = RUNTIME__V1__LIST_POD_SANDBOX_RESPONSE__INIT;
  pr.items = ps;
  pr.n_items = 1;
  Runtime__V1__ContainerMetadata cm = RUNTIME__V1__CONTAINER_METADATA__INIT;
  cm.name = (char *)"postgres";
  Runtime__V1__Container c = RUNTIME__V1__CONTAINER__INIT;
  c.id = (char *)"c1";
  c.pod_sandbox_id = (char *)"sb1";
  c.metadata = &cm;
  Runtime__V1__Container *cs[] = {&c};
  Runtime__V1__ListContainersResponse cr = RUNTIME__V1__LIST_CONTAINERS_RESPONSE__INIT;
  cr.containers = cs;
  cr.n_containers = 1;
  cri_meta_list_build(&pr, &cr, l);
}

static int changes;
static void changed(struct agent_ctr *c, void *user) {
  (void)c;
  (void)user;
  changes++;
}

static void test_fill(void **state) {
  (void)state;
  struct agent_adm adm;
  memset(&adm, 0, sizeof(adm));
  struct agent_podmeta pm;
  agent_podmeta_init(&pm, NULL, &adm, changed, NULL);
  listing(&pm.meta);
  struct agent_ctr *known = ctr("c1", "old-name"), *sb = ctr("sb1", ""), *plain = ctr("p1", "");
  known->next = sb;
  sb->next = plain;
  adm.list = known;
  changes = 0;
  agent_podmeta_fill_new(&pm);
  assert_int_equal(changes, 2);
  assert_string_equal(known->pod_name, "pg-0"); /* the CRI's word replaces the old one */
  assert_string_equal(known->pod_namespace, "db");
  assert_string_equal(known->container_name, "postgres");
  assert_string_equal(known->pod_uid, "u-1");
  assert_int_equal(known->n_pod_labels, 1);
  assert_string_equal(known->pod_labels[0], "tier=db");
  assert_string_equal(sb->pod_name, "pg-0");
  assert_string_equal(sb->container_name, ""); /* a sandbox has no container name */
  assert_string_equal(plain->pod_name, "");
  assert_null(plain->pod_uid);
  /* the same listing again: nothing changes, nobody is told */
  assert_false(agent_podmeta_fill(&pm, known));
  agent_podmeta_fill_new(&pm);
  assert_int_equal(changes, 2);
  /* a label changes: told once */
  free(known->pod_labels[0]);
  known->pod_labels[0] = xstrdup("tier=web");
  assert_true(agent_podmeta_fill(&pm, known));
  assert_string_equal(known->pod_labels[0], "tier=db");
  assert_string_equal(agent_podmeta_note(&pm), "off");
  agent_ctr_free(known);
  agent_ctr_free(sb);
  agent_ctr_free(plain);
  agent_podmeta_release(&pm);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_fill)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
