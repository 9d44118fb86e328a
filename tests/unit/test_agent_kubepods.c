// SPDX-License-Identifier: Apache-2.0
/* The kubelet's cgroup tree (agent/kube/kubepods.c): the path parser of both
 * drivers, malformed paths, a walk over a fixture tree; sandboxes by the
 * CRI's ids, not by a process's name; starting by the runtimes' exact
 * init names, for a bounded time.  The pod rules are test_agent_podrules'. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/daemon.h"
#include "agent/kube/kubepods.h"
#include "agent/serve/requests.h"
#include "common/cleanup.h"
#include "common/xalloc.h"

#define UID "6d2f6f3e-1111-4c2b-9c55-0a1b2c3d4e5f"
#define UID_ "6d2f6f3e_1111_4c2b_9c55_0a1b2c3d4e5f"
#define CID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void parses(const char *rel, enum agent_kubepods_level level, enum agent_kubepods_driver driver,
                   const char *qos, const char *uid, const char *id) {
  struct agent_kubepods_path p;
  if (agent_kubepods_parse(rel, &p) < 0)
    fail_msg("'%s' refused", rel);
  if (p.level != level || p.driver != driver || strcmp(p.qos, qos) != 0 ||
      strcmp(p.pod_uid, uid) != 0 || strcmp(p.id, id) != 0)
    fail_msg("'%s': level %d driver %d qos '%s' uid '%s' id '%s'", rel, p.level, p.driver, p.qos,
             p.pod_uid, p.id);
}

static void refused(const char *rel) {
  struct agent_kubepods_path p;
  if (agent_kubepods_parse(rel, &p) == 0)
    fail_msg("'%s' parsed (level %d)", rel, p.level);
}

static void test_parse_cgroupfs(void **state) {
  (void)state;
  parses("kubepods", AGENT_KP_ROOT, AGENT_KP_CGROUPFS, "", "", "");
  parses("kubepods/burstable", AGENT_KP_QOS, AGENT_KP_CGROUPFS, "burstable", "", "");
  parses("kubepods/besteffort", AGENT_KP_QOS, AGENT_KP_CGROUPFS, "besteffort", "", "");
  parses("kubepods/burstable/pod" UID, AGENT_KP_POD, AGENT_KP_CGROUPFS, "burstable", UID, "");
  parses("kubepods/burstable/pod" UID "/" CID, AGENT_KP_CONTAINER, AGENT_KP_CGROUPFS, "burstable",
         UID, CID);
  parses("kubepods/besteffort/pod" UID "/" CID, AGENT_KP_CONTAINER, AGENT_KP_CGROUPFS, "besteffort",
         UID, CID);
  /* Guaranteed pods sit right under kubepods */
  parses("kubepods/pod" UID, AGENT_KP_POD, AGENT_KP_CGROUPFS, "guaranteed", UID, "");
  parses("kubepods/pod" UID "/" CID, AGENT_KP_CONTAINER, AGENT_KP_CGROUPFS, "guaranteed", UID, CID);
  /* a static pod's uid is a hash; runc ids may be names */
  parses("kubepods/podf1e2d3c4b5a697887766554433221100/web-1", AGENT_KP_CONTAINER,
         AGENT_KP_CGROUPFS, "guaranteed", "f1e2d3c4b5a697887766554433221100", "web-1");
}

static void test_parse_systemd(void **state) {
  (void)state;
  parses("kubepods.slice", AGENT_KP_ROOT, AGENT_KP_SYSTEMD, "", "", "");
  parses("kubepods.slice/kubepods-burstable.slice", AGENT_KP_QOS, AGENT_KP_SYSTEMD, "burstable", "",
         "");
  parses("kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_ ".slice",
         AGENT_KP_POD, AGENT_KP_SYSTEMD, "besteffort", UID, "");
  parses("kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
         ".slice/cri-containerd-" CID ".scope",
         AGENT_KP_CONTAINER, AGENT_KP_SYSTEMD, "burstable", UID, CID);
  parses("kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_ ".slice/crio-" CID
         ".scope",
         AGENT_KP_CONTAINER, AGENT_KP_SYSTEMD, "besteffort", UID, CID);
  parses("kubepods.slice/kubepods-pod" UID_ ".slice", AGENT_KP_POD, AGENT_KP_SYSTEMD, "guaranteed",
         UID, "");
  parses("kubepods.slice/kubepods-pod" UID_ ".slice/docker-" CID ".scope", AGENT_KP_CONTAINER,
         AGENT_KP_SYSTEMD, "guaranteed", UID, CID);
  /* CRI-O's monitor has a scope of its own in the pod: not a container */
  parses("kubepods.slice/kubepods-pod" UID_ ".slice/crio-conmon-" CID ".scope", AGENT_KP_OTHER,
         AGENT_KP_SYSTEMD, "guaranteed", UID, "");
}

static void test_parse_malformed(void **state) {
  (void)state;
  static const char *const bad[] = {
      "",
      "/kubepods",
      "kubepods/",
      "kubepods//pod" UID,
      "Kubepods",
      "kubepods-x",
      "system.slice",
      "kubepods/guaranteed",             /* no such QoS level in cgroupfs */
      "kubepods/burstable/" UID,         /* no "pod" */
      "kubepods/burstable/pod",          /* no uid */
      "kubepods/burstable/pod-abc",      /* uid starts with '-' */
      "kubepods/burstable/pod" UID "/.", /* not an id */
      "kubepods/burstable/pod" UID "/..",
      "kubepods/burstable/pod" UID "/-x",
      "kubepods/burstable/pod" UID "/a b",
      "kubepods/burstable/pod" UID "/" CID "/sub",
      "kubepods/pod" UID "/" CID "/sub",
      "kubepods/pod" UID_,                          /* '_' is systemd's spelling */
      "kubepods/burstable/pod" UID "/" CID CID "x", /* id too long */
      "kubepods.slice/kubepods-pod" UID ".slice",   /* '-' in a systemd uid */
      "kubepods.slice/kubepods-burstable.slice/kubepods-besteffort-pod" UID_ ".slice",
      "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod.slice",
      "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_,
      "kubepods.slice/kubepods-guaranteed.slice",
      "kubepods.slice/kubepods-pod" UID_ ".slice/" CID,
      "kubepods.slice/kubepods-pod" UID_ ".slice/cri-containerd-.scope",
      "kubepods.slice/kubepods-pod" UID_ ".slice/cri-containerd-" CID,
      "kubepods.slice/kubepods-pod" UID_ ".slice/runc-" CID ".scope",
      "kubepods.slice/kubepods-pod" UID_ ".slice/crio-" CID ".scope/x",
      "kubepods.slice/kubepods-pod" UID_ ".slice/.scope",
      "kubepods/a/b/c/d/e/f",
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    refused(bad[i]);
  char big[2048];
  memset(big, 'a', sizeof(big) - 1);
  big[sizeof(big) - 1] = '\0';
  memcpy(big, "kubepods/", 9);
  refused(big);
}

/* A fixture tree: MOUNT/r/kubepods... with cgroup.procs files, and a
 * /proc of PROC with each pid's comm. */
static void mkfile(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static void mkctr(const char *base, const char *proc, const char *rel, int pid, const char *comm) {
  char path[1024], cmd[1200];
  snprintf(cmd, sizeof(cmd), "mkdir -p '%s/%s'", base, rel);
  assert_int_equal(system(cmd), 0);
  snprintf(path, sizeof(path), "%s/%s/cgroup.procs", base, rel);
  char pids[32] = "";
  if (pid)
    snprintf(pids, sizeof(pids), "%d\n%d\n", pid, pid + 1);
  mkfile(path, pids);
  if (comm) {
    snprintf(cmd, sizeof(cmd), "mkdir -p '%s/proc/%d'", proc, pid);
    assert_int_equal(system(cmd), 0);
    snprintf(path, sizeof(path), "%s/proc/%d/comm", proc, pid);
    mkfile(path, comm);
  }
}

static const struct agent_kubepods_found *find(const struct agent_kubepods_found *f, size_t n, const char *id) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(f[i].id, id) == 0)
      return &f[i];
  return NULL;
}

static bool known_k1(const char *id, void *user) {
  (void)user;
  return strcmp(id, "k1") == 0;
}

/* The CRI of the fixtures: "sandbox" and "psb" are pod sandboxes, ids
 * starting with "n" it has not listed, the rest containers; none at all
 * (DOWN) while cri_down. */
static bool cri_down;
static enum agent_kubepods_cri fixture_cri(const char *id, void *user) {
  (void)user;
  if (cri_down)
    return AGENT_KP_CRI_DOWN;
  if (id == NULL || id[0] == 'n')
    return AGENT_KP_CRI_UNLISTED;
  if (strcmp(id, "sandbox") == 0 || strcmp(id, "psb") == 0)
    return AGENT_KP_CRI_SANDBOX;
  return AGENT_KP_CRI_CONTAINER;
}

static void test_walk(void **state) {
  (void)state;
  char dir[] = "/tmp/kp-walk.XXXXXX";
  assert_non_null(mkdtemp(dir));
  char mount[256], proc[256], base[300];
  snprintf(mount, sizeof(mount), "%s/mnt", dir);
  snprintf(proc, sizeof(proc), "%s/p", dir);
  snprintf(base, sizeof(base), "%s/r", mount);
  mkctr(base, proc, "kubepods/pod" UID "/g1", 100, "fio\n");
  mkctr(base, proc, "kubepods/burstable/pod" UID "/b1", 200, "postgres\n");
  mkctr(base, proc, "kubepods/burstable/pod" UID "/sandbox", 300, "pause\n");
  mkctr(base, proc, "kubepods/burstable/pod" UID "/starting", 400, "runc:[2:INIT]\n");
  mkctr(base, proc, "kubepods/besteffort/pod" UID "/empty", 0, NULL);
  mkctr(base, proc, "kubepods/besteffort/pod" UID "/k1", 500, "dd\n");
  mkctr(base, proc, "kubepods/besteffort/notapod/x1", 600, "dd\n");
  mkctr(base, proc,
        "kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_
        ".slice/cri-containerd-s1.scope",
        700, "dd\n");
  mkctr(base, proc, "kubepods.slice/kubepods-pod" UID_ ".slice/crio-conmon-c1.scope", 800,
        "conmon\n");

  struct agent_kubepods kp;
  agent_kubepods_init(&kp, proc, "/r/");
  kp.cri_kind = fixture_cri;
  assert_false(agent_kubepods_use(&kp, dir, false)); /* no tree right under it */
  assert_true(agent_kubepods_use(&kp, mount, false));
  assert_true(agent_kubepods_due(&kp)); /* a tree found is walked at once */
  cleanup_error struct iob_error *err = NULL;
  struct agent_kubepods_found *f = NULL;
  size_t n = 0;
  assert_int_equal(agent_kubepods_walk(&kp, 100, known_k1, NULL, &f, &n, &err), 0);
  assert_int_equal(n, 4);
  const struct agent_kubepods_found *g1 = find(f, n, "g1"), *b1 = find(f, n, "b1"),
                              *k1 = find(f, n, "k1"), *s1 = find(f, n, "s1");
  assert_non_null(g1);
  assert_non_null(b1);
  assert_non_null(k1);
  assert_non_null(s1);
  assert_string_equal(g1->qos, "guaranteed");
  assert_string_equal(g1->pod_uid, UID);
  assert_int_equal(g1->pid, 100);
  assert_string_equal(g1->cgroup, "/r/kubepods/pod" UID "/g1");
  assert_string_equal(b1->qos, "burstable");
  assert_int_equal(b1->pid, 200);
  assert_int_equal(k1->pid, 0); /* known: nothing read */
  assert_string_equal(s1->qos, "besteffort");
  assert_string_equal(s1->pod_uid, UID);
  assert_int_equal(s1->pid, 700);
  assert_int_equal(kp.n_sandboxes, 1);
  /* a container without a process yet, or still runc's init: the next
   * window walks again */
  assert_true(kp.retry);
  assert_true(agent_kubepods_due(&kp));
  agent_kubepods_found_free(f, n);
  /* ... but not for ever: a cgroup left empty waits for an event */
  for (int i = 1; i < AGENT_KP_RESCAN_WINDOWS; i++) {
    assert_int_equal(agent_kubepods_walk(&kp, 100, NULL, NULL, &f, &n, &err), 0);
    agent_kubepods_found_free(f, n);
    assert_true(agent_kubepods_due(&kp));
  }
  assert_int_equal(agent_kubepods_walk(&kp, 100, NULL, NULL, &f, &n, &err), 0);
  agent_kubepods_found_free(f, n);
  assert_false(agent_kubepods_due(&kp));
  cleanup_free char *desc = agent_kubepods_describe(&kp);
  assert_non_null(strstr(desc, "4 containers, 1 sandboxes, 1 starting"));
  assert_null(strstr(desc, "no CRI"));

  /* the empty one gets its process; the sandbox leaves */
  mkctr(base, proc, "kubepods/besteffort/pod" UID "/empty", 900, "sh\n");
  char cmd[600];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s/kubepods/burstable/pod" UID "/sandbox'", base);
  assert_int_equal(system(cmd), 0);
  assert_int_equal(agent_kubepods_walk(&kp, 100, NULL, NULL, &f, &n, &err), 0);
  assert_non_null(find(f, n, "empty"));
  assert_int_equal(kp.n_sandboxes, 0);
  agent_kubepods_found_free(f, n);
  /* at most MAX */
  assert_int_equal(agent_kubepods_walk(&kp, 2, NULL, NULL, &f, &n, &err), 0);
  assert_int_equal(n, 2);
  agent_kubepods_found_free(f, n);
  /* the tree goes: looked for again */
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
  assert_int_equal(system(cmd), 0);
  assert_int_equal(agent_kubepods_walk(&kp, 100, NULL, NULL, &f, &n, &err), 0);
  assert_int_equal(n, 0);
  assert_null(kp.top);
  agent_kubepods_release(&kp);
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

/* A fixture tree of one pod under DIR with the given containers (id,
 * pid, comm), walked once as the agent's first window does. */
struct kp_env {
  char dir[32], mount[64], proc[64], base[80];
  struct agent_kubepods kp;
  char taken[8][AGENT_KP_ID_MAX]; /* found by a walk: the daemon knows them */
  size_t n_taken;
};

static bool env_known(const char *id, void *user) {
  const struct kp_env *e = user;
  for (size_t i = 0; i < e->n_taken; i++)
    if (strcmp(e->taken[i], id) == 0)
      return true;
  return false;
}

static void kp_env(struct kp_env *e) {
  memset(e, 0, sizeof(*e));
  snprintf(e->dir, sizeof(e->dir), "/tmp/kp-tn.XXXXXX");
  assert_non_null(mkdtemp(e->dir));
  snprintf(e->mount, sizeof(e->mount), "%s/mnt", e->dir);
  snprintf(e->proc, sizeof(e->proc), "%s/p", e->dir);
  snprintf(e->base, sizeof(e->base), "%s/r", e->mount);
  mkctr(e->base, e->proc, "kubepods/besteffort/pod" UID "/psb", 100, "pause\n");
  agent_kubepods_init(&e->kp, e->proc, "/r/");
  e->kp.cri_kind = fixture_cri;
  assert_true(agent_kubepods_use(&e->kp, e->mount, false));
}

static void kp_env_done(struct kp_env *e) {
  agent_kubepods_release(&e->kp);
  char cmd[64];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", e->dir);
  assert_int_equal(system(cmd), 0);
}

/* Walk after WINDOWS more windows; whether ID was found. */
static bool found_after(struct kp_env *e, int windows, const char *id) {
  for (int i = 0; i < windows; i++)
    (void)agent_kubepods_due(&e->kp);
  cleanup_error struct iob_error *err = NULL;
  struct agent_kubepods_found *f = NULL;
  size_t n = 0;
  assert_int_equal(agent_kubepods_walk(&e->kp, 100, env_known, e, &f, &n, &err), 0);
  bool there = find(f, n, id) != NULL;
  for (size_t i = 0; i < n; i++)
    if (!env_known(f[i].id, e) && e->n_taken < 8)
      snprintf(e->taken[e->n_taken++], AGENT_KP_ID_MAX, "%s", f[i].id);
  agent_kubepods_found_free(f, n);
  return there;
}

/* A tenant names its process "pause": its container is a container (the
 * CRI lists it so), sampled at once; the pod's real sandbox (the CRI's
 * ListPodSandbox id) is not, whatever runs in it. */
static void test_pause_not_sandbox(void **state) {
  (void)state;
  cri_down = false;
  struct kp_env e;
  kp_env(&e);
  mkctr(e.base, e.proc, "kubepods/besteffort/pod" UID "/job", 200, "pause\n");
  assert_true(found_after(&e, 1, "job"));
  assert_false(found_after(&e, 0, "psb"));
  assert_int_equal(e.kp.n_sandboxes, 1);
  /* a sandbox whose process is not called pause is still a sandbox */
  mkctr(e.base, e.proc, "kubepods/besteffort/pod" UID "/psb", 300, "sleep\n");
  assert_false(found_after(&e, 0, "psb"));
  /* one the CRI has not listed waits, but not for ever */
  mkctr(e.base, e.proc, "kubepods/besteffort/pod" UID "/new", 400, "pause\n");
  assert_false(found_after(&e, 1, "new"));
  assert_true(e.kp.retry);
  assert_false(found_after(&e, AGENT_KP_STARTING_WINDOWS - 1, "new"));
  assert_true(found_after(&e, 1, "new"));
  kp_env_done(&e);
}

/* Without a CRI nothing is a sandbox by its name alone, and status says
 * why sandboxes are not told apart. */
static void test_no_cri(void **state) {
  (void)state;
  cri_down = true;
  struct kp_env e;
  kp_env(&e);
  assert_false(found_after(&e, 1, "psb"));
  assert_int_equal(e.kp.n_sandboxes, 0);
  assert_true(found_after(&e, AGENT_KP_STARTING_WINDOWS, "psb"));
  cleanup_free char *desc = agent_kubepods_describe(&e.kp);
  assert_non_null(strstr(desc, "no CRI reachable: pod sandboxes are not told apart"));
  cri_down = false;
  kp_env_done(&e);
}

/* Starting is the runtimes' init by its exact name, for a bounded time:
 * "crunch" or "runc:x" is a container at once; "runc:[2:INIT]" waits
 * AGENT_KP_STARTING_WINDOWS windows at most (a tenant can name its process
 * that too), and a walk is due each window meanwhile only for the rescan
 * bound. */
static void test_starting_bounded(void **state) {
  (void)state;
  cri_down = false;
  struct kp_env e;
  kp_env(&e);
  mkctr(e.base, e.proc, "kubepods/besteffort/pod" UID "/crunch", 200, "crunch\n");
  mkctr(e.base, e.proc, "kubepods/besteffort/pod" UID "/runcx", 300, "runc:x\n");
  mkctr(e.base, e.proc, "kubepods/besteffort/pod" UID "/init", 400, "runc:[2:INIT]\n");
  mkctr(e.base, e.proc, "kubepods/besteffort/pod" UID "/crun", 500, "crun\n");
  assert_true(found_after(&e, 1, "crunch"));
  assert_true(found_after(&e, 0, "runcx"));
  assert_false(found_after(&e, 0, "init"));
  assert_false(found_after(&e, 0, "crun"));
  assert_true(e.kp.retry);
  assert_false(found_after(&e, AGENT_KP_STARTING_WINDOWS - 1, "init"));
  assert_true(found_after(&e, 1, "init"));
  assert_true(found_after(&e, 0, "crun"));
  assert_false(e.kp.retry); /* nothing left waiting: no walk forced */
  kp_env_done(&e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse_cgroupfs),    cmocka_unit_test(test_parse_systemd),
      cmocka_unit_test(test_parse_malformed),   cmocka_unit_test(test_walk),
      cmocka_unit_test(test_pause_not_sandbox), cmocka_unit_test(test_no_cri),
      cmocka_unit_test(test_starting_bounded),
  };
  return cmocka_run_group_tests_name("agent_kubepods", tests, NULL, NULL);
}
