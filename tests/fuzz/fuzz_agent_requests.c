// SPDX-License-Identifier: Apache-2.0
/* libFuzzer: iobatchd's API (proto/iobatch/agent.proto).  The input is a
 * sequence of records: one byte picking the message, two bytes of length
 * (little endian), the protobuf payload.  Requests are decoded as the ttrpc
 * server decodes them and go through the agent's own steps
 * (agent/serve/requests.h: agent_api_register, _admit, _cancel, _exited, _status,
 * _plan), the very functions agent/serve/server.c calls, on a daemon from
 * agent_daemon_init_headless (no socket, no loop, no cgroup read; profiles
 * and penalties in a private directory).  Replies (what libagentclient
 * decodes) are unpacked and freed.
 *
 * Not reached: the ttrpc glue itself (waiters and their cancellation; see
 * fuzz_ttrpc_server for the server). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/config.h"
#include "agent/daemon.h"
#include "agent/serve/requests.h"
#include "common/cleanup.h"
#include "iobatch/agent.pb-c.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_RECORDS 32

/* One private state directory for the process: profiles and penalties are
 * looked for there at each input's start; a headless daemon writes none. */
static char dir[64];

static void remove_dir(void) {
  rmdir(dir);
}

static const char *state_dir(void) {
  if (dir[0] == '\0') {
    snprintf(dir, sizeof(dir), "/tmp/fuzz-agent-requests.XXXXXX");
    if (mkdtemp(dir) == NULL)
      abort();
    atexit(remove_dir);
  }
  return dir;
}

static void on_plan(struct agent_daemon *d, const Iobatch__Agent__V1__PlanRequest *r) {
  /* Keep each input fast: the exact solver on many jobs is the solver
   * benchmark's business, not the decoder's. */
  if (r->n_jobs > 12)
    return;
  cleanup_error struct iob_error *err = NULL;
  Iobatch__Agent__V1__PlanResponse *resp = NULL;
  if (agent_api_plan(&d->api, r, &resp, &err) == 0)
    agent_api_plan_free(resp);
}

static void on_status(struct agent_daemon *d, const Iobatch__Agent__V1__StatusRequest *req,
                      uint64_t now) {
  cleanup_error struct iob_error *err = NULL;
  Iobatch__Agent__V1__StatusResponse r;
  if (agent_api_status(&d->api, req, now, &r, &err) < 0)
    return;
  /* What the server does with it: pack it. */
  size_t n = protobuf_c_message_get_packed_size(&r.base);
  uint8_t *buf = malloc(n ? n : 1);
  if (buf)
    protobuf_c_message_pack(&r.base, buf);
  free(buf);
  agent_api_status_release(&r);
}

static const ProtobufCMessageDescriptor *const replies[] = {
    &iobatch__agent__v1__register_response__descriptor,
    &iobatch__agent__v1__admit_response__descriptor,
    &iobatch__agent__v1__status_response__descriptor,
    &iobatch__agent__v1__plan_response__descriptor,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct agent_config cfg;
  agent_config_default(&cfg);
  cfg.state_dir = (char *)state_dir();
  cfg.batch_window_ms = 100;
  cfg.max_hold_ms = 60000;
  /* trust_declared = kube-system: untrusted declarations (hints, ignored
   * kinds) are reached too. */
  cfg.trust_declared = (char *)",kube-system,";
  struct agent_daemon d;
  cleanup_error struct iob_error *ierr = NULL;
  if (agent_daemon_init_headless(&d, &cfg, &ierr) < 0)
    abort();
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
      cleanup_error struct iob_error *err = NULL;
      Iobatch__Agent__V1__RegisterResponse resp;
      if (r)
        agent_api_register(&d.api, r, now, &resp, &err);
      iobatch__agent__v1__register_request__free_unpacked(r, NULL);
      break;
    }
    case 1: {
      Iobatch__Agent__V1__AdmitRequest *r = iobatch__agent__v1__admit_request__unpack(NULL, len, p);
      cleanup_error struct iob_error *err = NULL;
      struct agent_ctr *c = NULL;
      if (r)
        agent_api_admit(&d.api, r, now, now + 30000, &c, &err);
      iobatch__agent__v1__admit_request__free_unpacked(r, NULL);
      break;
    }
    case 2: {
      Iobatch__Agent__V1__CancelRequest *r =
          iobatch__agent__v1__cancel_request__unpack(NULL, len, p);
      if (r)
        agent_api_cancel(&d.api, r, now);
      iobatch__agent__v1__cancel_request__free_unpacked(r, NULL);
      break;
    }
    case 3: {
      Iobatch__Agent__V1__ExitedRequest *r =
          iobatch__agent__v1__exited_request__unpack(NULL, len, p);
      if (r)
        agent_api_exited(&d.api, r, now);
      iobatch__agent__v1__exited_request__free_unpacked(r, NULL);
      break;
    }
    case 4: {
      Iobatch__Agent__V1__StatusRequest *r =
          iobatch__agent__v1__status_request__unpack(NULL, len, p);
      if (r)
        on_status(&d, r, now);
      iobatch__agent__v1__status_request__free_unpacked(r, NULL);
      break;
    }
    case 5: {
      Iobatch__Agent__V1__PlanRequest *r = iobatch__agent__v1__plan_request__unpack(NULL, len, p);
      if (r)
        on_plan(&d, r);
      iobatch__agent__v1__plan_request__free_unpacked(r, NULL);
      break;
    }
    default: {
      const ProtobufCMessageDescriptor *desc = replies[which - 6];
      ProtobufCMessage *m = protobuf_c_message_unpack(desc, NULL, len, p);
      if (m)
        protobuf_c_message_free_unpacked(m, NULL);
      break;
    }
    }
    cleanup_error struct iob_error *err = NULL;
    agent_adm_tick(&d.adm, now, &err);
  }
  agent_daemon_release(&d);
  return 0;
}
