// SPDX-License-Identifier: Apache-2.0
/* libFuzzer target: the ttrpc client's response handling (bytes from the
 * server it connects to, containerd or another shim).  Three async calls
 * (stream ids 1, 3, 5) are outstanding; the input is what the server sends
 * back before closing.  Every call must complete exactly once. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "containerd/events/task.pb-c.h"
#include "ttrpc/ttrpc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int listen_fd = -1;
static char addr[64];

static void on_done(void *user, ProtobufCMessage *resp, struct iob_error *err) {
  int *n = user;
  (*n)++;
  if (resp && err)
    abort(); /* a response or an error, never both */
  if (resp)
    protobuf_c_message_free_unpacked(resp, NULL);
}

static void listen_once(void) {
  if (listen_fd >= 0)
    return;
  snprintf(addr, sizeof(addr), "@iob-fuzz-ttrpc-client-%d", (int)getpid());
  struct iob_loop *l = NULL;
  struct ttrpc_server *s = NULL;
  /* Only to bind the abstract name; the accepting side is done by hand. */
  if (iob_loop_new(&l, NULL) < 0 || ttrpc_server_new(l, &s, NULL) < 0)
    abort();
  int fd = ttrpc_server_listen(s, addr, NULL);
  if (fd < 0)
    abort();
  listen_fd = dup(fd);
  ttrpc_server_free(s);
  iob_loop_free(l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  listen_once();
  struct iob_loop *loop = NULL;
  struct ttrpc_client *c = NULL;
  if (iob_loop_new(&loop, NULL) < 0 || ttrpc_client_connect(addr, &c, NULL) < 0)
    abort();
  int peer = -1;
  while (peer < 0)
    peer = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (ttrpc_client_attach(c, loop, NULL) < 0)
    abort();
  int done = 0;
  const ProtobufCMessageDescriptor *d = &containerd__events__task_start__descriptor;
  for (int i = 0; i < 3; i++)
    if (ttrpc_client_call_async(c, "svc", "M", NULL, i == 2 ? NULL : d, 0, NULL, 0, on_done, &done,
                                NULL) < 0)
      abort();
  size_t pos = 0;
  /* done is bumped by on_done, from inside iob_loop_run_once. */
  for (int rounds = 0; *(volatile int *)&done < 3; rounds++) {
    if (rounds > 100000)
      abort();
    if (pos < size) {
      ssize_t n = write(peer, data + pos, size - pos);
      if (n > 0)
        pos += (size_t)n;
    } else if (peer >= 0) {
      close(peer);
      peer = -1;
    }
    uint8_t sink[4096];
    if (peer >= 0)
      while (read(peer, sink, sizeof(sink)) > 0) {
      }
    iob_loop_run_once(loop, 0, NULL);
  }
  if (peer >= 0)
    close(peer);
  ttrpc_client_free(c);
  iob_loop_free(loop);
  return 0;
}
