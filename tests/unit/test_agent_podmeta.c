// SPDX-License-Identifier: Apache-2.0
/* agent/kube/podmeta.c on a fixed CRI listing (no socket): which containers
 * get which names, uid and labels; a name registered from annotations
 * that the CRI contradicts is replaced; nothing changes twice.  Labels:
 * only those the pod rules name, within their bounds (cri/cri.h), also
 * from malformed entries; Status carries them only when asked, within
 * its budget, and stays far under the ttrpc frame limit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/daemon.h"
#include "agent/kube/podmeta.h"
#include "agent/serve/requests.h"
#include "common/cleanup.h"
#include "common/xalloc.h"
#include "ttrpc/ttrpc.h"

static struct agent_ctr *ctr(const char *id, const char *pod_name) {
  struct agent_ctr *c = xcalloc(1, sizeof(*c));
  c->id = xstrdup(id);
  c->kube.pod_name = xstrdup(pod_name);
  c->kube.pod_namespace = xstrdup("");
  c->kube.container_name = xstrdup("");
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
  static const char *const keys[] = {"tier"};
  const struct cri_label_keys keep = {.v = keys, .n = 1};
  cri_meta_list_build(&pr, &cr, &keep, l);
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
  assert_string_equal(known->kube.pod_name, "pg-0"); /* the CRI's word replaces the old one */
  assert_string_equal(known->kube.pod_namespace, "db");
  assert_string_equal(known->kube.container_name, "postgres");
  assert_string_equal(known->kube.pod_uid, "u-1");
  assert_int_equal(known->kube.n_pod_labels, 1);
  assert_string_equal(known->kube.pod_labels[0], "tier=db");
  assert_string_equal(sb->kube.pod_name, "pg-0");
  assert_string_equal(sb->kube.container_name, ""); /* a sandbox has no container name */
  assert_string_equal(plain->kube.pod_name, "");
  assert_null(plain->kube.pod_uid);
  /* the same listing again: nothing changes, nobody is told */
  assert_false(agent_podmeta_fill(&pm, known));
  agent_podmeta_fill_new(&pm);
  assert_int_equal(changes, 2);
  /* a label changes: told once */
  free(known->kube.pod_labels[0]);
  known->kube.pod_labels[0] = xstrdup("tier=web");
  assert_true(agent_podmeta_fill(&pm, known));
  assert_string_equal(known->kube.pod_labels[0], "tier=db");
  assert_string_equal(agent_podmeta_note(&pm), "off");
  agent_ctr_free(known);
  agent_ctr_free(sb);
  agent_ctr_free(plain);
  agent_podmeta_release(&pm);
}

/* A pod of BIG_LABELS labels of about BIG_LABEL bytes each (1.4 MB in
 * all), keyed big-0000.., and three containers c0..c2 in it. */
#define BIG_LABELS 2000
#define BIG_LABEL 700
#define BIG_CTRS 3

struct big_listing {
  Runtime__V1__PodSandbox__LabelsEntry le[BIG_LABELS];
  Runtime__V1__PodSandbox__LabelsEntry *les[BIG_LABELS];
  char keys[BIG_LABELS][16];
  char value[BIG_LABEL];
};

static void big_listing(const struct cri_label_keys *keep, struct cri_meta_list *l) {
  struct big_listing *b = xcalloc(1, sizeof(*b));
  memset(b->value, 'v', sizeof(b->value) - 1);
  for (size_t i = 0; i < BIG_LABELS; i++) {
    snprintf(b->keys[i], sizeof(b->keys[i]), "big-%04zu", i);
    b->le[i] = (Runtime__V1__PodSandbox__LabelsEntry)RUNTIME__V1__POD_SANDBOX__LABELS_ENTRY__INIT;
    b->le[i].key = b->keys[i];
    b->le[i].value = b->value;
    b->les[i] = &b->le[i];
  }
  b->le[7].key = (char *)"tier"; /* what a rule names */
  b->le[7].value = (char *)"db";
  Runtime__V1__PodSandboxMetadata md = RUNTIME__V1__POD_SANDBOX_METADATA__INIT;
  md.name = (char *)"fat";
  md.namespace_ = (char *)"t";
  md.uid = (char *)"u-fat";
  Runtime__V1__PodSandbox p = RUNTIME__V1__POD_SANDBOX__INIT;
  p.id = (char *)"sbfat";
  p.metadata = &md;
  p.labels = b->les;
  p.n_labels = BIG_LABELS;
  Runtime__V1__PodSandbox *ps[] = {&p};
  Runtime__V1__ListPodSandboxResponse pr = RUNTIME__V1__LIST_POD_SANDBOX_RESPONSE__INIT;
  pr.items = ps;
  pr.n_items = 1;
  Runtime__V1__ContainerMetadata cm = RUNTIME__V1__CONTAINER_METADATA__INIT;
  cm.name = (char *)"app";
  Runtime__V1__Container c[BIG_CTRS];
  Runtime__V1__Container *cs[BIG_CTRS];
  char ids[BIG_CTRS][8];
  for (size_t i = 0; i < BIG_CTRS; i++) {
    snprintf(ids[i], sizeof(ids[i]), "c%zu", i);
    c[i] = (Runtime__V1__Container)RUNTIME__V1__CONTAINER__INIT;
    c[i].id = ids[i];
    c[i].pod_sandbox_id = (char *)"sbfat";
    c[i].metadata = &cm;
    cs[i] = &c[i];
  }
  Runtime__V1__ListContainersResponse cr = RUNTIME__V1__LIST_CONTAINERS_RESPONSE__INIT;
  cr.containers = cs;
  cr.n_containers = BIG_CTRS;
  cri_meta_list_build(&pr, &cr, keep, l);
  free(b);
}

/* Three containers of a pod with 1.4 MB of labels: the Status reply (what
 * the DaemonSet's liveness probe asks for) stays far under the frame
 * limit, and the rule's label is still there for the rules. */
static void test_status_size(void **state) {
  (void)state;
  char dir[] = "/tmp/iob-pm.XXXXXX";
  assert_non_null(mkdtemp(dir));
  struct agent_config cfg;
  agent_config_default(&cfg);
  cfg.state_dir = dir;
  struct agent_daemon d;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_daemon_init_headless(&d, &cfg, &err), 0);
  agent_podmeta_release(&d.podmeta); /* what the daemon's init configured */
  agent_podmeta_init(&d.podmeta, NULL, &d.adm, NULL, NULL);
  static const char rules[] = "pod_rule = db: label:tier=db -> class=latency\n";
  struct agent_config rcfg;
  agent_config_default(&rcfg);
  assert_int_equal(agent_config_parse(&rcfg, "test", rules, sizeof(rules) - 1, &err), 0);
  agent_podmeta_configure(&d.podmeta, &rcfg);
  agent_config_release(&rcfg);
  const struct cri_label_keys keep = {.v = (const char *const *)d.podmeta.label_keys,
                                      .n = d.podmeta.n_label_keys};
  big_listing(&keep, &d.podmeta.meta);
  for (size_t i = 0; i < BIG_CTRS; i++) {
    char id[8];
    snprintf(id, sizeof(id), "c%zu", i);
    Iobatch__Agent__V1__RegisterRequest r = IOBATCH__AGENT__V1__REGISTER_REQUEST__INIT;
    r.id = id;
    r.namespace_ = (char *)"k8s.io";
    r.source = (char *)"shim";
    Iobatch__Agent__V1__RegisterResponse resp;
    assert_int_equal(agent_api_register(&d.api, &r, 1000, &resp, &err), 0);
  }
  agent_podmeta_fill_new(&d.podmeta);
  Iobatch__Agent__V1__StatusResponse st;
  assert_int_equal(agent_api_status(&d.api, NULL, 2000, &st, &err), 0);
  size_t packed = iobatch__agent__v1__status_response__get_packed_size(&st);
  assert_int_equal(st.n_containers, BIG_CTRS);
  assert_int_equal(st.containers[0]->n_pod_labels, 0); /* not asked for */
  agent_api_status_release(&st);
  assert_true(packed < TTRPC_MAX_PAYLOAD / 64);
  Iobatch__Agent__V1__StatusRequest ask = IOBATCH__AGENT__V1__STATUS_REQUEST__INIT;
  ask.pod_labels = true;
  assert_int_equal(agent_api_status(&d.api, &ask, 2000, &st, &err), 0);
  packed = iobatch__agent__v1__status_response__get_packed_size(&st);
  assert_int_equal(st.containers[0]->n_pod_labels, 1);
  assert_string_equal(st.containers[0]->pod_labels[0], "tier=db");
  agent_api_status_release(&st);
  assert_true(packed < TTRPC_MAX_PAYLOAD / 64);
  for (struct agent_ctr *c = d.adm.list; c; c = c->next) {
    assert_string_equal(c->kube.pod_name, "fat");
    assert_int_equal(c->kube.n_pod_labels, 1); /* the one a rule names */
  }
  agent_daemon_release(&d);
  char cmd[64];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

/* Labels from the CRI as they may come: only keys KEEP names, at most
 * CRI_META_LABELS_MAX by key order, none of CRI_META_LABEL_MAX bytes or
 * more, none without a key; NULL KEEP: any key, the same bounds. */
static void test_label_bounds(void **state) {
  (void)state;
  enum { N = 40 };
  Runtime__V1__PodSandbox__LabelsEntry le[N + 4], *les[N + 4];
  char keys[N][16], big[CRI_META_LABEL_MAX + 8];
  memset(big, 'x', sizeof(big) - 1);
  big[sizeof(big) - 1] = '\0';
  for (size_t i = 0; i < N; i++) {
    snprintf(keys[i], sizeof(keys[i]), "k%02zu", N - 1 - i); /* listed in reverse */
    le[i] = (Runtime__V1__PodSandbox__LabelsEntry)RUNTIME__V1__POD_SANDBOX__LABELS_ENTRY__INIT;
    le[i].key = keys[i];
    le[i].value = (char *)"v";
  }
  for (size_t i = N; i < N + 4; i++)
    le[i] = (Runtime__V1__PodSandbox__LabelsEntry)RUNTIME__V1__POD_SANDBOX__LABELS_ENTRY__INIT;
  le[N].key = (char *)"aa-big"; /* too long: dropped */
  le[N].value = big;
  le[N + 1].key = NULL; /* malformed: no key */
  le[N + 1].value = (char *)"v";
  le[N + 2].key = (char *)"";    /* empty key */
  le[N + 3].key = (char *)"k00"; /* a key repeated on the wire, no value */
  le[N + 3].value = NULL;
  for (size_t i = 0; i < N + 4; i++)
    les[i] = &le[i];
  Runtime__V1__PodSandbox p = RUNTIME__V1__POD_SANDBOX__INIT;
  p.id = (char *)"sb";
  p.labels = les;
  p.n_labels = N + 4; /* no metadata: names are "" */
  Runtime__V1__PodSandbox *ps[] = {&p};
  Runtime__V1__ListPodSandboxResponse pr = RUNTIME__V1__LIST_POD_SANDBOX_RESPONSE__INIT;
  pr.items = ps;
  pr.n_items = 1;
  struct cri_meta_list l = {0};
  cri_meta_list_build(&pr, NULL, NULL, &l);
  assert_int_equal(l.n, 1);
  assert_string_equal(l.v[0].pod_name, "");
  assert_int_equal(l.v[0].n_labels, CRI_META_LABELS_MAX);
  assert_string_equal(l.v[0].labels[0], "k00=");
  assert_string_equal(l.v[0].labels[1], "k00=v");
  assert_string_equal(l.v[0].labels[CRI_META_LABELS_MAX - 1], "k14=v");
  cri_meta_list_release(&l);
  static const char *const named[] = {"aa-big", "k07", "k33", "nope"};
  const struct cri_label_keys keep = {.v = named, .n = 4};
  cri_meta_list_build(&pr, NULL, &keep, &l);
  assert_int_equal(l.v[0].n_labels, 2);
  assert_string_equal(l.v[0].labels[0], "k07=v");
  assert_string_equal(l.v[0].labels[1], "k33=v");
  cri_meta_list_release(&l);
  const struct cri_label_keys none = {.v = NULL, .n = 0};
  cri_meta_list_build(&pr, NULL, &none, &l);
  assert_int_equal(l.v[0].n_labels, 0);
  cri_meta_list_release(&l);
}

/* The label keys the pod rules name: sorted, each once. */
static void test_rule_keys(void **state) {
  (void)state;
  static const char rules[] = "pod_rule = a: label:tier=db label:app=pg -> class=latency\n"
                              "pod_rule = b: namespace=x -> kind=service\n"
                              "pod_rule = c: label:tier=web -> kind=job\n";
  struct agent_config cfg;
  agent_config_default(&cfg);
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_config_parse(&cfg, "test", rules, sizeof(rules) - 1, &err), 0);
  struct agent_adm adm;
  memset(&adm, 0, sizeof(adm));
  struct agent_podmeta pm;
  agent_podmeta_init(&pm, NULL, &adm, NULL, NULL);
  agent_podmeta_configure(&pm, &cfg);
  assert_int_equal(pm.n_label_keys, 2);
  assert_string_equal(pm.label_keys[0], "app");
  assert_string_equal(pm.label_keys[1], "tier");
  agent_config_release(&cfg);
  agent_config_default(&cfg); /* a reload without rules: no labels kept */
  agent_podmeta_configure(&pm, &cfg);
  assert_int_equal(pm.n_label_keys, 0);
  agent_config_release(&cfg);
  agent_podmeta_release(&pm);
}

/* Many containers with as many labels as they may keep, asked for: the
 * reply stops adding labels at its budget, says for how many, and fits a
 * frame. */
static void test_status_label_budget(void **state) {
  (void)state;
  enum { NCTR = 400 };
  char dir[] = "/tmp/iob-pmb.XXXXXX";
  assert_non_null(mkdtemp(dir));
  struct agent_config cfg;
  agent_config_default(&cfg);
  cfg.state_dir = dir;
  struct agent_daemon d;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_daemon_init_headless(&d, &cfg, &err), 0);
  for (size_t i = 0; i < NCTR; i++) {
    char id[16];
    snprintf(id, sizeof(id), "c%zu", i);
    Iobatch__Agent__V1__RegisterRequest r = IOBATCH__AGENT__V1__REGISTER_REQUEST__INIT;
    r.id = id;
    r.namespace_ = (char *)"k8s.io";
    r.source = (char *)"shim";
    Iobatch__Agent__V1__RegisterResponse resp;
    assert_int_equal(agent_api_register(&d.api, &r, 1000, &resp, &err), 0);
  }
  for (struct agent_ctr *c = d.adm.list; c; c = c->next) {
    c->kube.pod_labels = xcalloc(CRI_META_LABELS_MAX + 1, sizeof(*c->kube.pod_labels));
    for (size_t k = 0; k < CRI_META_LABELS_MAX; k++)
      c->kube.pod_labels[c->kube.n_pod_labels++] = xasprintf("k%02zu=%0*d", k, CRI_META_LABEL_MAX - 6, 0);
  }
  Iobatch__Agent__V1__StatusRequest ask = IOBATCH__AGENT__V1__STATUS_REQUEST__INIT;
  ask.pod_labels = true;
  Iobatch__Agent__V1__StatusResponse st;
  assert_int_equal(agent_api_status(&d.api, &ask, 2000, &st, &err), 0);
  size_t packed = iobatch__agent__v1__status_response__get_packed_size(&st), with = 0;
  for (size_t i = 0; i < st.n_containers; i++)
    with += st.containers[i]->n_pod_labels > 0;
  assert_true(st.pod_labels_left_out > 0);
  assert_int_equal(with + st.pod_labels_left_out, NCTR);
  agent_api_status_release(&st);
  assert_true(packed < AGENT_STATUS_LABEL_BYTES + NCTR * 1024);
  assert_true(packed < TTRPC_MAX_PAYLOAD);
  agent_daemon_release(&d);
  char cmd[64];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fill),
      cmocka_unit_test(test_label_bounds),
      cmocka_unit_test(test_rule_keys),
      cmocka_unit_test(test_status_size),
      cmocka_unit_test(test_status_label_budget),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
