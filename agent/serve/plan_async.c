// SPDX-License-Identifier: Apache-2.0
/* The Plan RPC off the agent's loop: an offline plan
 * of thousands of jobs can take seconds (the heuristic) and must not stall
 * admissions.  The request is copied, solved on a thread of its own, and
 * the reply sent from the loop when an eventfd says it is done.  One plan
 * at a time; a second one gets UNAVAILABLE and is retried by the caller. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "agent/serve/plan_async.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "iobatch/agent.pb-c.h"
#include "ttrpc/ttrpc.h"

struct plan_run {
  struct agent_plan_async *pa;
  struct ttrpc_call *call; /* NULL once the caller went away */
  struct batch_config cfg;
  Iobatch__Agent__V1__PlanRequest *req; /* our copy */
  Iobatch__Agent__V1__PlanResponse *resp;
  struct iob_error *err;
  int efd;
  pthread_t th;
};

static void *solve_thread(void *arg) {
  struct plan_run *r = arg;
  (void)r->pa->solve(&r->cfg, r->req, &r->resp, &r->err);
  uint64_t one = 1;
  while (write(r->efd, &one, sizeof(one)) < 0 && errno == EINTR)
    ;
  return NULL;
}

static void run_free(struct plan_run *r) {
  if (r->req)
    protobuf_c_message_free_unpacked(&r->req->base, NULL);
  if (r->resp)
    r->pa->free_resp(r->resp);
  iob_error_release(&r->err);
  if (r->efd >= 0)
    close(r->efd);
  free(r);
}

static void on_cancel(struct ttrpc_call *call, void *data) {
  struct plan_run *r = data;
  r->call = NULL;
  ttrpc_call_fail(call, IOB_CODE_CANCELED, "caller went away");
}

static void on_done(struct iob_loop *loop, int fd, uint32_t events, void *data) {
  (void)events;
  struct plan_run *r = data;
  uint64_t v;
  if (read(fd, &v, sizeof(v)) < 0 && errno == EAGAIN)
    return;
  pthread_join(r->th, NULL);
  iob_loop_del(loop, fd);
  if (r->call) {
    ttrpc_call_on_cancel(r->call, NULL, NULL);
    if (r->resp)
      ttrpc_call_reply(r->call, &r->resp->base);
    else if (r->err)
      ttrpc_call_fail_error(r->call, &r->err);
    else
      ttrpc_call_fail(r->call, IOB_CODE_INTERNAL, "plan failed");
  }
  r->pa->running = NULL;
  run_free(r);
}

void agent_plan_async_init(struct agent_plan_async *pa, struct iob_loop *loop,
                           agent_plan_solve_fn solve, agent_plan_free_fn free_resp) {
  *pa = (struct agent_plan_async){.loop = loop, .solve = solve, .free_resp = free_resp};
}

int agent_plan_async_start(struct agent_plan_async *pa, struct ttrpc_call *call,
                           const struct batch_config *cfg,
                           const Iobatch__Agent__V1__PlanRequest *req, struct iob_error **err) {
  if (pa->running)
    return iob_error_code(err, IOB_CODE_UNAVAILABLE,
                          "another plan is being computed; try again when it is done");
  struct plan_run *r = xcalloc(1, sizeof(*r));
  r->efd = -1;
  r->pa = pa;
  r->cfg = *cfg;
  size_t len = protobuf_c_message_get_packed_size(&req->base);
  uint8_t *buf = xmalloc(len + 1);
  protobuf_c_message_pack(&req->base, buf);
  r->req = iobatch__agent__v1__plan_request__unpack(NULL, len, buf);
  free(buf);
  /* req was unpacked from the wire once already: unpacking its own packing
   * fails only when out of memory. */
  if (r->req == NULL)
    iob_oom();
  r->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (r->efd < 0) {
    int e = errno;
    run_free(r);
    return iob_error(err, e, "cannot start the plan: eventfd");
  }
  if (iob_loop_add(pa->loop, r->efd, EPOLLIN, on_done, r, err) < 0) {
    run_free(r);
    return -1;
  }
  int e = pthread_create(&r->th, NULL, solve_thread, r);
  if (e != 0) {
    iob_loop_del(pa->loop, r->efd);
    run_free(r);
    return iob_error(err, e, "cannot start the plan's thread");
  }
  r->call = call;
  ttrpc_call_on_cancel(call, on_cancel, r);
  pa->running = r;
  return 0;
}
