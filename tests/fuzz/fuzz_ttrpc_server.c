// SPDX-License-Identifier: Apache-2.0
/* libFuzzer target: the ttrpc request dispatcher.  The input is what a
 * client sends on one connection (over a socketpair); the server has a few
 * methods registered, one of which answers later (deferred), and the
 * connection closes at the end of the input (EOF, maybe mid-frame). */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "containerd/events/task.pb-c.h"
#include "ttrpc/ttrpc.h"

#define SVC "iobatch.fuzz.v1.Fuzz"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct ttrpc_call *held;

static void h_echo(struct ttrpc_call *call, const ProtobufCMessage *req, void *user) {
  (void)user;
  const Containerd__Events__TaskStart *in = (const Containerd__Events__TaskStart *)req;
  Containerd__Events__TaskStart out = CONTAINERD__EVENTS__TASK_START__INIT;
  const char *ns = ttrpc_call_metadata(call, "containerd-namespace-ttrpc");
  out.container_id = (char *)(ns ? ns : in->container_id);
  out.pid = (uint32_t)ttrpc_call_deadline_ms(call);
  ttrpc_call_reply(call, &out.base);
}

static void h_fail(struct ttrpc_call *call, const ProtobufCMessage *req, void *user) {
  (void)req;
  (void)user;
  ttrpc_call_fail(call, IOB_CODE_NOT_FOUND, "'%s' not found", ttrpc_call_method(call));
}

static void on_cancel(struct ttrpc_call *call, void *data) {
  (void)data;
  if (call == held)
    held = NULL;
  ttrpc_call_fail(call, IOB_CODE_CANCELED, "cancelled");
}

/* Held until the next Defer, which answers the older one first. */
static void h_defer(struct ttrpc_call *call, const ProtobufCMessage *req, void *user) {
  (void)req;
  (void)user;
  ttrpc_call_on_cancel(call, on_cancel, NULL);
  if (held)
    ttrpc_call_reply(held, NULL);
  held = call;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct iob_loop *loop = NULL;
  struct ttrpc_server *s = NULL;
  if (iob_loop_new(&loop, NULL) < 0 || ttrpc_server_new(loop, &s, NULL) < 0)
    abort();
  const ProtobufCMessageDescriptor *d = &containerd__events__task_start__descriptor;
  ttrpc_server_register(s, SVC, "Echo", d, h_echo, NULL, NULL);
  ttrpc_server_register(s, SVC, "Fail", d, h_fail, NULL, NULL);
  ttrpc_server_register(s, SVC, "Defer", NULL, h_defer, NULL, NULL);
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0)
    abort();
  if (ttrpc_server_add_conn(s, sv[0], NULL) < 0)
    abort();
  size_t pos = 0;
  bool shut = false;
  for (int rounds = 0; ttrpc_server_connections(s) > 0; rounds++) {
    if (rounds > 100000)
      abort(); /* the server must make progress and close on EOF */
    if (pos < size) {
      ssize_t n = write(sv[1], data + pos, size - pos);
      if (n > 0)
        pos += (size_t)n;
    } else if (!shut) {
      shutdown(sv[1], SHUT_WR);
      shut = true;
    }
    iob_loop_run_once(loop, 0, NULL);
    uint8_t sink[65536];
    while (read(sv[1], sink, sizeof(sink)) > 0) {
    }
  }
  if (held)
    abort(); /* cancelled when the connection closed */
  close(sv[1]);
  ttrpc_server_free(s);
  iob_loop_free(loop);
  return 0;
}
