// SPDX-License-Identifier: Apache-2.0
/* Events to containerd: Events/Forward over ttrpc to TTRPC_ADDRESS, one at
 * a time from a FIFO queue so the order the service publishes in is the
 * order containerd sees (create < start < exit < delete).  A failed event
 * is retried, reconnecting, with a growing delay; containerd may be
 * restarting. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "containerd/services/events/events.pb-c.h"
#include "containerd/types/event.pb-c.h"
#include "google/protobuf/any.pb-c.h"
#include "google/protobuf/empty.pb-c.h"
#include "google/protobuf/timestamp.pb-c.h"
#include "shim/events.h"
#include "shim/shim.h"
#include "ttrpc/ttrpc.h"

#define FORWARD_TIMEOUT_MS 5000
#define MAX_ATTEMPTS 12
#define MAX_QUEUE 4096

struct event {
  char *topic;
  const char *type_url;
  uint8_t *value;
  size_t len;
  struct shim_time ts;
  int attempts;
  struct event *next;
};

static struct {
  struct iob_loop *loop;
  char *address;
  char *ns;
  struct ttrpc_client *client;
  bool broken; /* the client failed; replace it before the next call */
  struct event *head, *tail;
  size_t n;
  bool inflight;
  struct iob_timer *timer;
} ev;

static void kick(void);

int shim_events_init(struct iob_loop *loop, const char *address, const char *ns,
                     struct iob_error **err) {
  ev.loop = loop;
  if (address == NULL || *address == '\0')
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "no events address (TTRPC_ADDRESS)");
  ev.address = xstrdup(address);
  ev.ns = xstrdup(ns);
  return 0;
}

static void event_free(struct event *e) {
  free(e->topic);
  free(e->value);
  free(e);
}

static void pop(void) {
  struct event *e = ev.head;
  ev.head = e->next;
  if (ev.head == NULL)
    ev.tail = NULL;
  ev.n--;
  event_free(e);
}

void shim_events_publish(const char *topic, const struct ProtobufCMessage *msg) {
  if (ev.address == NULL)
    return;
  if (ev.n >= MAX_QUEUE) {
    iob_warn("event queue full, dropping '%s'", topic);
    return;
  }
  struct event *e = xcalloc(1, sizeof(*e));
  size_t len = protobuf_c_message_get_packed_size((const ProtobufCMessage *)msg);
  e->value = xmalloc(len);
  e->topic = xstrdup(topic);
  protobuf_c_message_pack((const ProtobufCMessage *)msg, e->value);
  e->len = len;
  /* typeurl writes the bare full name (containerd.events.TaskExit). */
  e->type_url = ((const ProtobufCMessage *)msg)->descriptor->name;
  e->ts = shim_time_now();
  if (ev.tail)
    ev.tail->next = e;
  else
    ev.head = e;
  ev.tail = e;
  ev.n++;
  kick();
}

static void on_timer(struct iob_loop *loop, void *data) {
  (void)loop;
  (void)data;
  ev.timer = NULL;
  kick();
}

static void retry_later(void) {
  struct event *e = ev.head;
  if (e && ++e->attempts >= MAX_ATTEMPTS) {
    iob_warn("dropping event '%s' after %d attempts", e->topic, e->attempts);
    pop();
  }
  if (ev.head == NULL || ev.timer)
    return;
  int delay = ev.head->attempts < 5 ? ev.head->attempts : 5;
  ev.timer = iob_loop_timer(ev.loop, (uint64_t)(delay ? delay : 1) * 1000, on_timer, NULL);
}

static void on_done(void *user, ProtobufCMessage *resp, struct iob_error *err) {
  (void)user;
  ev.inflight = false;
  if (resp)
    protobuf_c_message_free_unpacked(resp, NULL);
  if (err) {
    iob_debug("forward '%s' failed: %s", ev.head ? ev.head->topic : "?", err->msg);
    /* A rejected event is not retried forever; a lost connection is. */
    ev.broken = true;
    retry_later();
    return;
  }
  if (ev.head)
    pop();
  /* Do not recurse from inside the client's callback. */
  if (ev.head && ev.timer == NULL)
    ev.timer = iob_loop_timer(ev.loop, 0, on_timer, NULL);
}

static int ensure_client(struct iob_error **err) {
  if (ev.client && (ev.broken || ttrpc_client_closed(ev.client))) {
    ttrpc_client_free(ev.client);
    ev.client = NULL;
  }
  ev.broken = false;
  if (ev.client)
    return 0;
  struct ttrpc_client *c;
  if (ttrpc_client_connect(ev.address, &c, err) < 0)
    return -1;
  if (ttrpc_client_attach(c, ev.loop, err) < 0) {
    ttrpc_client_free(c);
    return -1;
  }
  ev.client = c;
  return 0;
}

static int send_head(struct iob_error **err) {
  struct event *e = ev.head;
  Google__Protobuf__Timestamp ts = GOOGLE__PROTOBUF__TIMESTAMP__INIT;
  ts.seconds = e->ts.sec;
  ts.nanos = e->ts.nsec;
  Google__Protobuf__Any any = GOOGLE__PROTOBUF__ANY__INIT;
  any.type_url = (char *)e->type_url;
  any.value.data = e->value;
  any.value.len = e->len;
  Containerd__Types__Envelope env = CONTAINERD__TYPES__ENVELOPE__INIT;
  env.timestamp = &ts;
  env.namespace_ = ev.ns;
  env.topic = e->topic;
  env.event = &any;
  Containerd__Services__Events__Ttrpc__V1__ForwardRequest req =
      CONTAINERD__SERVICES__EVENTS__TTRPC__V1__FORWARD_REQUEST__INIT;
  req.envelope = &env;
  struct ttrpc_kv md = {"containerd-namespace-ttrpc", ev.ns};
  return ttrpc_client_call_async(ev.client, "containerd.services.events.ttrpc.v1.Events", "Forward",
                                 &req.base, &google__protobuf__empty__descriptor,
                                 FORWARD_TIMEOUT_MS, &md, 1, on_done, NULL, err);
}

static void kick(void) {
  if (ev.inflight || ev.timer || ev.head == NULL)
    return;
  cleanup_error struct iob_error *err = NULL;
  if (ensure_client(&err) < 0 || send_head(&err) < 0) {
    iob_debug("cannot forward '%s': %s", ev.head->topic, err ? err->msg : "?");
    ev.broken = true;
    retry_later();
    return;
  }
  ev.inflight = true;
}

void shim_events_drain(struct iob_loop *loop, int timeout_ms) {
  uint64_t end = iob_now_ms() + (uint64_t)timeout_ms;
  while (ev.head) {
    uint64_t now = iob_now_ms();
    if (now >= end)
      break;
    if (iob_loop_run_once(loop, (int)(end - now), NULL) < 0)
      break;
  }
}
