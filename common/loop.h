// SPDX-License-Identifier: Apache-2.0
/* One epoll event loop with fd watches and one-shot timers.  Everything a
 * process does (ttrpc server and client, signalfd, stdio copies) runs on it. */
#ifndef IOB_LOOP_H
#define IOB_LOOP_H

#include <stdint.h>

#include "common/error.h"

struct iob_loop;
struct iob_timer;

typedef void (*iob_loop_fn)(struct iob_loop *loop, int fd, uint32_t events, void *data);
typedef void (*iob_timer_fn)(struct iob_loop *loop, void *data);

int iob_loop_new(struct iob_loop **out, struct iob_error **err);
void iob_loop_free(struct iob_loop *loop);

/* events are EPOLLIN/EPOLLOUT/...; one watch per fd. */
int iob_loop_add(struct iob_loop *loop, int fd, uint32_t events, iob_loop_fn fn, void *data,
                 struct iob_error **err);
int iob_loop_mod(struct iob_loop *loop, int fd, uint32_t events, struct iob_error **err);
/* Safe to call from inside a callback, also for the fd being dispatched. */
void iob_loop_del(struct iob_loop *loop, int fd);

/* Run fn once after ms milliseconds (CLOCK_MONOTONIC).  Never NULL (out of
 * memory aborts, common/xalloc.h).  A timer is freed after it fires or when
 * cancelled. */
struct iob_timer *iob_loop_timer(struct iob_loop *loop, uint64_t ms, iob_timer_fn fn, void *data);
void iob_timer_cancel(struct iob_loop *loop, struct iob_timer *t);

/* Dispatch until iob_loop_stop() is called.  Returns < 0 on epoll failure. */
int iob_loop_run(struct iob_loop *loop, struct iob_error **err);
/* Wait at most timeout_ms (-1: until an event or timer) and dispatch once. */
int iob_loop_run_once(struct iob_loop *loop, int timeout_ms, struct iob_error **err);
void iob_loop_stop(struct iob_loop *loop);

uint64_t iob_now_ms(void); /* CLOCK_MONOTONIC in milliseconds */

#endif
