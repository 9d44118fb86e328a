// SPDX-License-Identifier: Apache-2.0
/* Pod rules (agent/kube/podrules.c): the `pod_rule` parser and its errors, the
 * matcher (first match decides, selectors by namespace, QoS and label,
 * trust by label against by namespace), and their application
 * (agent_kube_pod_changed on a headless daemon): order,
 * a tenant's labels and QoS class never shadowing a rule by namespace. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/daemon.h"
#include "agent/kube/podrules.h"
#include "agent/serve/requests.h"
#include "common/cleanup.h"
#include "common/xalloc.h"

/* Rules: parse, and errors. */
static void rule_ok(const char *text, struct agent_pod_rule *r) {
  char why[256];
  if (agent_pod_rule_parse(text, r, why, sizeof(why)) < 0)
    fail_msg("'%s': %s", text, why);
}

static void rule_bad(const char *text, const char *want) {
  struct agent_pod_rule r;
  char why[256] = "";
  assert_int_equal(agent_pod_rule_parse(text, &r, why, sizeof(why)), -1);
  if (strcmp(why, want) != 0)
    fail_msg("'%s': got '%s', want '%s'", text, why, want);
}

static void test_rule_parse(void **state) {
  (void)state;
  struct agent_pod_rule r;
  rule_ok("db: namespace=db label:tier=db qos=Burstable -> kind=service class=latency "
          "latency-target=5ms",
          &r);
  assert_string_equal(r.name, "db");
  assert_string_equal(r.ns, "db");
  assert_string_equal(r.qos, "burstable");
  assert_int_equal(r.n_labels, 1);
  assert_string_equal(r.labels[0], "tier=db");
  assert_string_equal(r.kind, "service");
  assert_string_equal(r.cls, "latency");
  assert_int_equal(r.lat_target_us, 5000);
  assert_true(agent_pod_rule_by_label(&r));
  assert_true(agent_pod_rule_protects(&r));
  rule_ok("be:qos=besteffort->class=seq-write", &r);
  assert_string_equal(r.qos, "besteffort");
  assert_string_equal(r.cls, "seq-write");
  assert_false(agent_pod_rule_protects(&r));
  rule_ok("all: -> kind=job", &r); /* no selector: every pod */
  rule_ok("l: label:app.kubernetes.io/name=pg label:x= -> latency-target=250us", &r);
  assert_int_equal(r.n_labels, 2);
  assert_int_equal(r.lat_target_us, 250);
  rule_bad("db namespace=db -> class=latency", "expected 'NAME: SELECTORS -> EFFECTS'");
  rule_bad("db: namespace=db", "expected 'NAME: SELECTORS -> EFFECTS'");
  rule_bad("db -> x: namespace=db", "expected 'NAME: SELECTORS -> EFFECTS'");
  rule_bad(": qos=burstable -> kind=job", "bad rule name: 1 to 63 of a-z, A-Z, 0-9, '.', '_', '-'");
  rule_bad("a b: qos=burstable -> kind=job",
           "bad rule name: 1 to 63 of a-z, A-Z, 0-9, '.', '_', '-'");
  rule_bad("x: qos=burstable ->", "no effect: kind=, class= or latency-target=");
  rule_bad("x: qos=gold -> kind=job", "bad qos 'gold': guaranteed, burstable or besteffort");
  rule_bad("x: qos=burstable qos=besteffort -> kind=job", "qos given twice");
  rule_bad("x: namespace=a namespace=b -> kind=job", "namespace given twice");
  rule_bad("x: namespace=a/b -> kind=job", "bad namespace 'a/b'");
  rule_bad("x: namespace= -> kind=job", "bad namespace ''");
  rule_bad("x: pod=a -> kind=job", "unknown selector 'pod=a': namespace=, qos= or label:");
  rule_bad("x: label:tier -> kind=job", "bad label selector 'tier': label:KEY=VALUE");
  rule_bad("x: label:=db -> kind=job", "bad label selector '=db': label:KEY=VALUE");
  rule_bad("x: label:a/=db -> kind=job", "bad label selector 'a/=db': label:KEY=VALUE");
  rule_bad("x: label:t=a,b -> kind=job", "bad label selector 't=a,b': label:KEY=VALUE");
  rule_bad("x: -> kind=sandbox", "bad kind 'sandbox': job or service");
  rule_bad("x: -> class=fast", "bad class 'fast'");
  rule_bad("x: -> class=idle class=idle", "class given twice");
  rule_bad("x: -> latency-target=5", "bad latency-target '5': 1us to 10s (e.g. 5ms)");
  rule_bad("x: -> latency-target=11s", "bad latency-target '11s': 1us to 10s (e.g. 5ms)");
  rule_bad("x: -> latency-target=0ms", "bad latency-target '0ms': 1us to 10s (e.g. 5ms)");
  rule_bad("x: -> latency-target=-1ms", "bad latency-target '-1ms': 1us to 10s (e.g. 5ms)");
  rule_bad("x: -> priority=1", "unknown effect 'priority=1': kind=, class= or latency-target=");
  rule_bad("x: -> kind=job -> class=idle", "'->' given twice");
  rule_bad("x: label:a=1 label:a=2 label:a=3 label:a=4 label:a=5 label:a=6 label:a=7 label:a=8 "
           "label:a=9 -> kind=job",
           "more than 8 labels");
}

/* Order, QoS, labels. */
static void test_rule_match(void **state) {
  (void)state;
  struct agent_pod_rule rs[4];
  rule_ok("db: namespace=db label:tier=db -> class=latency", &rs[0]);
  rule_ok("db-any: namespace=db -> class=rand-read", &rs[1]);
  rule_ok("be: qos=besteffort -> class=seq-write", &rs[2]);
  rule_ok("rest: -> kind=job", &rs[3]);
  char *labels[] = {(char *)"app=pg", (char *)"tier=db"};
  struct agent_pod_view v = {.ns = "db", .qos = "besteffort", .labels = labels, .n_labels = 2};
  assert_int_equal(agent_pod_rules_match(rs, 4, &v), 0); /* first match decides */
  v.n_labels = 1;
  assert_int_equal(agent_pod_rules_match(rs, 4, &v), 1);
  v.ns = "web";
  assert_int_equal(agent_pod_rules_match(rs, 4, &v), 2);
  v.qos = "burstable";
  assert_int_equal(agent_pod_rules_match(rs, 4, &v), 3);
  assert_int_equal(agent_pod_rules_match(rs, 3, &v), -1);
  v.ns = NULL; /* not known yet (no CRI): only rules without a namespace */
  v.qos = "besteffort";
  assert_int_equal(agent_pod_rules_match(rs, 4, &v), 2);
  v.qos = "";
  assert_int_equal(agent_pod_rules_match(rs, 3, &v), -1);
  /* trust: by namespace alone, always; by label or QoS, only when trusted */
  assert_true(agent_pod_rule_trusted(&rs[1], false));
  assert_false(agent_pod_rule_trusted(&rs[2], false));
  assert_false(agent_pod_rule_trusted(&rs[0], false));
  assert_true(agent_pod_rule_trusted(&rs[0], true));
}

/* The rules as the daemon applies them (agent_kube_pod_changed),
 * on a headless daemon with trust_declared = db. */
struct rig {
  char dir[32];
  struct agent_daemon d;
};

static void rig_up(struct rig *g, const char *rules) {
  snprintf(g->dir, sizeof(g->dir), "/tmp/kp-rules.XXXXXX");
  assert_non_null(mkdtemp(g->dir));
  struct agent_config cfg;
  agent_config_default(&cfg);
  cleanup_error struct iob_error *err = NULL;
  if (agent_config_parse(&cfg, "t.conf", rules, strlen(rules), &err) < 0)
    fail_msg("%s", err->msg);
  cfg.state_dir = xstrdup(g->dir);
  assert_int_equal(agent_daemon_init_headless(&g->d, &cfg, &err), 0);
  agent_config_release(&cfg);
}

static void rig_down(struct rig *g) {
  agent_daemon_release(&g->d);
  char cmd[64];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g->dir);
  assert_int_equal(system(cmd), 0);
}

/* A container of pod namespace NS registered by a shim, then the CRI
 * helper's labels and the QoS from its cgroup. */
static struct agent_ctr *pod(struct rig *g, const char *id, const char *ns, const char *qos,
                             const char *label) {
  Iobatch__Agent__V1__RegisterRequest r = IOBATCH__AGENT__V1__REGISTER_REQUEST__INIT;
  r.id = (char *)id;
  r.namespace_ = (char *)"k8s.io";
  r.pod_namespace = (char *)ns;
  r.source = (char *)"shim";
  Iobatch__Agent__V1__RegisterResponse resp;
  cleanup_error struct iob_error *err = NULL;
  if (agent_api_register(&g->d.api, &r, 1000, &resp, &err) < 0)
    fail_msg("register %s: %s", id, err->msg);
  struct agent_ctr *c = agent_ctr_find(&g->d.adm, "k8s.io", id);
  assert_non_null(c);
  snprintf(c->kube.qos, sizeof(c->kube.qos), "%s", qos);
  if (label) {
    c->kube.pod_labels = xcalloc(1, sizeof(char *));
    c->kube.pod_labels[0] = xstrdup(label);
    c->kube.n_pod_labels = 1;
  }
  agent_kube_pod_changed(&g->d.kube, c);
  return c;
}

/* What a tenant sets (its labels, its QoS class) must not take its pod
 * out of a rule the administrator wrote by namespace: in a namespace not
 * trusted, a rule by namespace alone that matches wins over an earlier
 * rule by label or QoS; and a QoS rule grants no protection there. */
static void test_rule_tenant_cannot_shadow(void **state) {
  (void)state;
  struct rig g;
  rig_up(&g, "trust_declared = db\n"
             "pod_rule = quiet: label:app=quiet -> class=idle\n"
             "pod_rule = gold: qos=guaranteed -> class=latency\n"
             "pod_rule = team: namespace=team-a -> class=seq-write\n");
  struct agent_ctr *c = pod(&g, "w1", "team-a", "burstable", "app=quiet");
  assert_string_equal(c->kube.rule, "team");
  assert_int_equal(c->cls, BATCH_SEQ_WRITE);
  assert_int_equal(c->class_source, AGENT_CLASS_DECLARED);
  c = pod(&g, "w2", "team-a", "guaranteed", NULL);
  assert_string_equal(c->kube.rule, "team");
  assert_false(c->plan.protect);
  /* no admin rule matches: the tenant's rule decides, granting nothing */
  c = pod(&g, "w3", "team-b", "guaranteed", NULL);
  assert_string_equal(c->kube.rule, "gold");
  assert_false(c->plan.protect);
  assert_true(c->kube.rule_untrusted);
  /* trusted: first match, as written */
  c = pod(&g, "d1", "db", "guaranteed", "app=quiet");
  assert_string_equal(c->kube.rule, "quiet");
  c = pod(&g, "d2", "db", "guaranteed", NULL);
  assert_string_equal(c->kube.rule, "gold");
  assert_true(c->plan.protect);
  rig_down(&g);
}

static void test_rule_apply(void **state) {
  (void)state;
  struct rig g;
  rig_up(&g, "trust_declared = db\n"
             "pod_rule = db: label:tier=db -> class=latency latency-target=5ms kind=service\n"
             "pod_rule = kube: namespace=kube-system -> class=latency\n"
             "pod_rule = be: qos=besteffort -> class=seq-write\n");
  /* by label, in a trusted namespace: protected, its target, a service */
  struct agent_ctr *c = pod(&g, "pg", "db", "burstable", "tier=db");
  assert_string_equal(c->kube.rule, "db");
  assert_true(c->plan.protect);
  assert_int_equal(c->lat.target_declared_us, 5000);
  assert_int_equal(c->kind, AGENT_KIND_SERVICE);
  assert_false(c->kube.rule_untrusted);
  /* the same label in a namespace not trusted: the rule decides (first
   * match) but grants nothing */
  c = pod(&g, "fake", "team-a", "besteffort", "tier=db");
  assert_string_equal(c->kube.rule, "db");
  assert_false(c->plan.protect);
  assert_int_equal(c->lat.target_declared_us, 0);
  assert_int_equal(c->kind, AGENT_KIND_JOB);
  assert_true(c->kube.rule_untrusted);
  assert_int_equal(c->class_source, AGENT_CLASS_NONE); /* "latency" is no class hint */
  /* by namespace: trust is the namespace's own, not trust_declared's */
  c = pod(&g, "dns", "kube-system", "guaranteed", NULL);
  assert_string_equal(c->kube.rule, "kube");
  assert_true(c->plan.protect);
  assert_false(c->kube.rule_untrusted);
  /* by QoS: the tenant sets its QoS class (requests = limits), so in a
   * namespace not trusted the rule's class is a hint, as by label */
  c = pod(&g, "batch", "team-a", "besteffort", NULL);
  assert_string_equal(c->kube.rule, "be");
  assert_int_equal(c->cls, BATCH_SEQ_WRITE);
  assert_int_equal(c->class_source, AGENT_CLASS_HINT);
  c = pod(&g, "batch2", "db", "besteffort", NULL);
  assert_int_equal(c->class_source, AGENT_CLASS_DECLARED);
  /* none matches */
  c = pod(&g, "web", "team-a", "burstable", NULL);
  assert_string_equal(c->kube.rule, "");
  /* the Status reply names the rule and says what can be held */
  Iobatch__Agent__V1__StatusResponse st;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_api_status(&g.d.api, NULL, 2000, &st, &err), 0);
  size_t seen = 0;
  for (size_t i = 0; i < st.n_containers; i++) {
    const Iobatch__Agent__V1__ContainerStatus *s = st.containers[i];
    assert_true(s->holdable); /* all registered by a shim */
    if (strcmp(s->id, "pg") == 0)
      seen += strcmp(s->rule, "db") == 0 && strcmp(s->qos, "burstable") == 0;
    if (strcmp(s->id, "fake") == 0)
      seen +=
          strstr(s->rule, "db (matched by label or QoS class in an untrusted namespace") == s->rule;
  }
  assert_int_equal(seen, 2);
  assert_string_equal(st.kubepods, "off"); /* headless: no tree walked */
  agent_api_status_release(&st);
  rig_down(&g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rule_parse),
      cmocka_unit_test(test_rule_match),
      cmocka_unit_test(test_rule_apply),
      cmocka_unit_test(test_rule_tenant_cannot_shadow),
  };
  return cmocka_run_group_tests_name("agent_podrules", tests, NULL, NULL);
}
