// SPDX-License-Identifier: Apache-2.0
#include "common/loop.h"
#include "common/xalloc.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

struct watch {
  int fd;
  bool dead;
  iob_loop_fn fn;
  void *data;
  struct watch *next;
};

struct iob_timer {
  uint64_t due;
  iob_timer_fn fn;
  void *data;
  struct iob_timer *next;
};

struct iob_loop {
  int epfd;
  bool stop;
  struct watch *watches;    /* live ones */
  struct watch *graveyard;  /* deleted during a dispatch, freed after it */
  struct iob_timer *timers; /* sorted by due */
};

uint64_t iob_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int iob_loop_new(struct iob_loop **out, struct iob_error **err) {
  struct iob_loop *l = xcalloc(1, sizeof(*l));
  l->epfd = epoll_create1(EPOLL_CLOEXEC);
  if (l->epfd < 0) {
    int e = errno;
    free(l);
    return iob_error(err, e, "epoll_create1");
  }
  *out = l;
  return 0;
}

static void free_list(struct watch *w) {
  while (w) {
    struct watch *n = w->next;
    free(w);
    w = n;
  }
}

void iob_loop_free(struct iob_loop *l) {
  if (l == NULL)
    return;
  free_list(l->watches);
  free_list(l->graveyard);
  while (l->timers) {
    struct iob_timer *n = l->timers->next;
    free(l->timers);
    l->timers = n;
  }
  close(l->epfd);
  free(l);
}

static struct watch *find(struct iob_loop *l, int fd) {
  for (struct watch *w = l->watches; w; w = w->next)
    if (w->fd == fd)
      return w;
  return NULL;
}

int iob_loop_add(struct iob_loop *l, int fd, uint32_t events, iob_loop_fn fn, void *data,
                 struct iob_error **err) {
  struct watch *w = xcalloc(1, sizeof(*w));
  w->fd = fd;
  w->fn = fn;
  w->data = data;
  struct epoll_event ev = {.events = events, .data.ptr = w};
  if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
    int e = errno;
    free(w);
    return iob_error(err, e, "epoll_ctl add fd %d", fd);
  }
  w->next = l->watches;
  l->watches = w;
  return 0;
}

int iob_loop_mod(struct iob_loop *l, int fd, uint32_t events, struct iob_error **err) {
  struct watch *w = find(l, fd);
  if (w == NULL)
    return iob_error(err, ENOENT, "fd %d is not watched", fd);
  struct epoll_event ev = {.events = events, .data.ptr = w};
  if (epoll_ctl(l->epfd, EPOLL_CTL_MOD, fd, &ev) < 0)
    return iob_error(err, errno, "epoll_ctl mod fd %d", fd);
  return 0;
}

void iob_loop_del(struct iob_loop *l, int fd) {
  for (struct watch **pp = &l->watches; *pp; pp = &(*pp)->next) {
    struct watch *w = *pp;
    if (w->fd != fd)
      continue;
    epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
    *pp = w->next;
    w->dead = true;
    w->next = l->graveyard;
    l->graveyard = w;
    return;
  }
}

struct iob_timer *iob_loop_timer(struct iob_loop *l, uint64_t ms, iob_timer_fn fn, void *data) {
  struct iob_timer *t = xcalloc(1, sizeof(*t));
  t->due = iob_now_ms() + ms;
  t->fn = fn;
  t->data = data;
  struct iob_timer **pp = &l->timers;
  while (*pp && (*pp)->due <= t->due)
    pp = &(*pp)->next;
  t->next = *pp;
  *pp = t;
  return t;
}

void iob_timer_cancel(struct iob_loop *l, struct iob_timer *t) {
  for (struct iob_timer **pp = &l->timers; *pp; pp = &(*pp)->next) {
    if (*pp == t) {
      *pp = t->next;
      free(t);
      return;
    }
  }
}

static void run_timers(struct iob_loop *l) {
  uint64_t now = iob_now_ms();
  while (l->timers && l->timers->due <= now) {
    struct iob_timer *t = l->timers;
    l->timers = t->next;
    iob_timer_fn fn = t->fn;
    void *data = t->data;
    free(t);
    fn(l, data);
  }
}

int iob_loop_run_once(struct iob_loop *l, int timeout_ms, struct iob_error **err) {
  struct epoll_event evs[64];
  if (l->timers) {
    uint64_t now = iob_now_ms();
    int until = l->timers->due <= now ? 0 : (int)(l->timers->due - now);
    if (timeout_ms < 0 || until < timeout_ms)
      timeout_ms = until;
  }
  int n = epoll_wait(l->epfd, evs, (int)(sizeof(evs) / sizeof(evs[0])), timeout_ms);
  if (n < 0) {
    if (errno == EINTR)
      return 0;
    return iob_error(err, errno, "epoll_wait");
  }
  for (int i = 0; i < n; i++) {
    struct watch *w = evs[i].data.ptr;
    if (w->dead)
      continue;
    w->fn(l, w->fd, evs[i].events, w->data);
  }
  free_list(l->graveyard);
  l->graveyard = NULL;
  run_timers(l);
  return 0;
}

int iob_loop_run(struct iob_loop *l, struct iob_error **err) {
  l->stop = false;
  while (!l->stop) {
    if (iob_loop_run_once(l, -1, err) < 0)
      return -1;
  }
  return 0;
}

void iob_loop_stop(struct iob_loop *l) {
  l->stop = true;
}
