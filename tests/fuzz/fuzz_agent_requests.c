/* libFuzzer: iobatchd's API (proto/iobatch/agent.proto).  The input is a
 * sequence of records: one byte picking the message, two bytes of length
 * (little endian), the protobuf payload.  Requests are decoded as the ttrpc
 * server decodes them and go through the agent's own validation and state
 * machine (agent_adm_register / _admit / _detach / _tick, the Plan checks
 * and agent_plan_solve) on one private agent_adm, without a socket.  Replies
 * (what libagentclient decodes) are unpacked and freed.
 *
 * The handlers in agent/server.c are static: what they do around these
 * calls (waiters, weights, profiles, Status) is not reached here. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/admission.h"
#include "agent/plan.h"
#include "batcher/batcher.h"
#include "common/cleanup.h"
#include "iobatch/agent.pb-c.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_RECORDS 32

static void admitted(struct agent_adm *adm, struct agent_ctr *ctr, void *user) {
  (void)adm;
  (void)ctr;
  (void)user;
}

static void drop(struct agent_adm *adm, const char *ns, const char *id, uint64_t now) {
  struct agent_ctr *c = agent_adm_find(adm, ns, id);
  if (c) {
    agent_adm_detach(adm, c, now);
    agent_ctr_free(c);
  }
}

static void on_register(struct agent_adm *adm, const Iobatch__Agent__V1__RegisterRequest *r,
                        uint64_t now) {
  cleanup_error struct iob_error *err = NULL;
  struct agent_ctr_info in = {.id = r->id,
                              .ns = r->namespace_,
                              .workload_key = r->workload_key,
                              .cgroup = r->cgroup,
                              .bundle = r->bundle,
                              .source = r->source,
                              .declared_class = r->declared_class,
                              .pid = r->pid,
                              .max_hold_ms = r->max_hold_ms,
                              .running = r->running};
  struct agent_ctr *c = NULL;
  agent_adm_register(adm, &in, now, &c, &err);
}

static void on_admit(struct agent_adm *adm, const Iobatch__Agent__V1__AdmitRequest *r,
                     uint64_t now) {
  cleanup_error struct iob_error *err = NULL;
  struct agent_ctr *c = agent_adm_find(adm, r->namespace_, r->id);
  if (c == NULL) {
    struct agent_ctr_info in = {.id = r->id,
                                .ns = r->namespace_,
                                .workload_key = r->workload_key,
                                .declared_class = r->declared_class,
                                .source = "admit",
                                .max_hold_ms = r->max_hold_ms};
    if (agent_adm_register(adm, &in, now, &c, &err) < 0)
      return;
  } else if (r->declared_class && *r->declared_class) {
    int cls = batch_class_from_name(r->declared_class);
    if (cls < 0)
      return;
    agent_adm_set_class(adm, c, (enum batch_class)cls, 1, AGENT_CLASS_DECLARED, now);
  }
  agent_adm_admit(adm, c, r->max_hold_ms, now + 30000, now);
}

static void on_plan(const struct batch_config *bcfg, const Iobatch__Agent__V1__PlanRequest *r) {
  struct batch_config cfg = *bcfg;
  if (r->cap > BATCH_MAX_BATCH)
    return;
  if (r->cap)
    cfg.max_batch = r->cap;
  if (r->alpha > 0 && r->alpha <= 1)
    cfg.alpha = r->alpha;
  else if (r->alpha != 0)
    return;
  /* Keep each input fast: the exact solver on many jobs is the solver
   * benchmark's business, not the decoder's. */
  if (r->n_jobs > 12)
    return;
  cleanup_error struct iob_error *err = NULL;
  Iobatch__Agent__V1__PlanResponse *resp = NULL;
  if (agent_plan_solve(&cfg, r->jobs, r->n_jobs, &resp, &err) == 0)
    agent_plan_response_free(resp);
}

static const ProtobufCMessageDescriptor *const replies[] = {
    &iobatch__agent__v1__register_response__descriptor,
    &iobatch__agent__v1__admit_response__descriptor,
    &iobatch__agent__v1__status_response__descriptor,
    &iobatch__agent__v1__plan_response__descriptor,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct batch_config bcfg;
  batch_config_default(&bcfg);
  static const struct agent_adm_ops ops = {.admitted = admitted};
  struct agent_adm adm;
  agent_adm_init(&adm, &bcfg, 100, 60000, &ops, NULL);
  uint64_t now = 1000;
  size_t off = 0;
  for (int rec = 0; rec < MAX_RECORDS && off + 3 <= size; rec++) {
    uint8_t which = data[off] % 10;
    size_t len = (size_t)data[off + 1] | (size_t)data[off + 2] << 8;
    off += 3;
    if (len > size - off)
      len = size - off;
    const uint8_t *p = data + off;
    off += len;
    now += 50 * (which + 1);
    switch (which) {
    case 0: {
      Iobatch__Agent__V1__RegisterRequest *r =
          iobatch__agent__v1__register_request__unpack(NULL, len, p);
      if (r)
        on_register(&adm, r, now);
      iobatch__agent__v1__register_request__free_unpacked(r, NULL);
      break;
    }
    case 1: {
      Iobatch__Agent__V1__AdmitRequest *r = iobatch__agent__v1__admit_request__unpack(NULL, len, p);
      if (r)
        on_admit(&adm, r, now);
      iobatch__agent__v1__admit_request__free_unpacked(r, NULL);
      break;
    }
    case 2: {
      Iobatch__Agent__V1__CancelRequest *r =
          iobatch__agent__v1__cancel_request__unpack(NULL, len, p);
      if (r)
        drop(&adm, r->namespace_, r->id, now);
      iobatch__agent__v1__cancel_request__free_unpacked(r, NULL);
      break;
    }
    case 3: {
      Iobatch__Agent__V1__ExitedRequest *r =
          iobatch__agent__v1__exited_request__unpack(NULL, len, p);
      if (r)
        drop(&adm, r->namespace_, r->id, now);
      iobatch__agent__v1__exited_request__free_unpacked(r, NULL);
      break;
    }
    case 4: {
      Iobatch__Agent__V1__StatusRequest *r =
          iobatch__agent__v1__status_request__unpack(NULL, len, p);
      iobatch__agent__v1__status_request__free_unpacked(r, NULL);
      break;
    }
    case 5: {
      Iobatch__Agent__V1__PlanRequest *r = iobatch__agent__v1__plan_request__unpack(NULL, len, p);
      if (r)
        on_plan(&bcfg, r);
      iobatch__agent__v1__plan_request__free_unpacked(r, NULL);
      break;
    }
    default: {
      const ProtobufCMessageDescriptor *d = replies[which - 6];
      ProtobufCMessage *m = protobuf_c_message_unpack(d, NULL, len, p);
      if (m)
        protobuf_c_message_free_unpacked(m, NULL);
      break;
    }
    }
    cleanup_error struct iob_error *err = NULL;
    agent_adm_tick(&adm, now, &err);
  }
  agent_adm_release(&adm);
  return 0;
}
