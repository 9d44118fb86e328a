// SPDX-License-Identifier: Apache-2.0
/* Kubernetes' names for the containers the agent knows: every
 * cri_poll the node's CRI is listed (cri/cri.h: ListPodSandbox
 * and ListContainers; containerd 1.6's CRI has no container events), and
 * each container (or pod sandbox) whose id the CRI knows gets its pod's
 * namespace, name, uid and labels and its container name; the owner is
 * told (the `changed` callback: agent_kube_cri_changed) when they change.
 *
 * The calls run on a thread, one poll at a time, and hand their result to
 * the loop through an eventfd, as plan_async.c does: the client stays a
 * plain blocking one (each call bounded by cri_timeout), and a CRI that
 * hangs delays only the next poll, never the loop.  The thread touches
 * only its own copies; a poll still running at shutdown is left to finish
 * and free itself, so the agent never waits for the CRI.
 *
 * Off Kubernetes nothing changes: cri_endpoint = auto finds no socket and
 * says nothing; an endpoint that fails is said once per distinct error,
 * and once when it answers again.
 *
 * Labels: only those whose key a pod_rule names are kept (the rules are
 * all that reads them), at most CRI_META_LABELS_MAX per pod and each
 * shorter than CRI_META_LABEL_MAX (cri/cri.h): a pod's labels are the
 * tenant's to write, and each of its containers keeps a copy. */
#ifndef IOB_AGENT_PODMETA_H
#define IOB_AGENT_PODMETA_H

#include <stdint.h>

#include "agent/plan/admission.h"
#include "agent/config.h"
#include "agent/kube/kubepods.h"
#include "common/loop.h"
#include "cri/cri.h"

struct podmeta_run;

struct agent_podmeta {
  struct iob_loop *loop;
  struct agent_adm *adm; /* whose containers are filled */
  void (*changed)(struct agent_ctr *c, void *user);
  void *user;
  char *endpoint; /* NULL auto, "" off, else the socket's path (agent_config) */
  uint64_t poll_ms, timeout_ms;
  struct iob_timer *timer;
  struct podmeta_run *run;   /* in flight, NULL none */
  char *in_use;              /* "unix:///path (containerd 1.6.20, runtime.v1)"; NULL none */
  char *last_err;            /* the failure said last (said once) */
  struct cri_meta_list meta; /* the last listing, for containers that come later */
  char **label_keys;         /* the label keys the pod rules name, sorted, unique */
  size_t n_label_keys;
  uint64_t polls, failures;
};

void agent_podmeta_init(struct agent_podmeta *pm, struct iob_loop *loop, struct agent_adm *adm,
                        void (*changed)(struct agent_ctr *c, void *user), void *user);
/* Take cri_endpoint, cri_poll, cri_timeout and the label keys of the pod
 * rules from cfg (at start and on SIGHUP) and poll soon. */
void agent_podmeta_configure(struct agent_podmeta *pm, const struct agent_config *cfg);
/* Fill ctr from the last listing (a container registered between polls);
 * true when anything changed. */
bool agent_podmeta_fill(struct agent_podmeta *pm, struct agent_ctr *ctr);
/* The same for every container not filled yet (each sampling period:
 * cheap, a lookup each). */
void agent_podmeta_fill_new(struct agent_podmeta *pm);
/* What the CRI's listings say ID is, for agent_kubepods.cri_kind (USER:
 * the struct agent_podmeta).  An id listed once keeps its kind (a sandbox
 * id is never a container's) while the CRI is not reachable; without a
 * listing, or with none since the last poll failed, AGENT_KP_CRI_DOWN. */
enum agent_kubepods_cri agent_podmeta_kp_kind(const char *id, void *user);
/* "off", "none found", the endpoint in use, or its last error. */
const char *agent_podmeta_note(const struct agent_podmeta *pm);
void agent_podmeta_release(struct agent_podmeta *pm);

#endif
