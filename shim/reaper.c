// SPDX-License-Identifier: Apache-2.0
/* One reaper for the whole shim: the shim is a child subreaper, so container
 * processes and detached execs are re-parented to it.  Every exit goes to
 * the waiter registered for its pid; an exit that arrives before anyone
 * asked (a container that dies before its pid file was read) waits in a
 * small cache, as conmon does. */
#include <errno.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "common/xalloc.h"
#include "shim/reaper.h"

#define CACHE_MAX 256

struct waiter {
  pid_t pid;
  shim_reap_fn fn;
  void *data;
  struct waiter *next;
};

struct early_exit {
  pid_t pid;
  int status;
  struct shim_time at;
  struct early_exit *next;
};

static struct waiter *waiters;
static struct early_exit *cache;
static size_t cache_len;

static struct early_exit *cache_take(pid_t pid) {
  for (struct early_exit **pp = &cache; *pp; pp = &(*pp)->next) {
    if ((*pp)->pid == pid) {
      struct early_exit *e = *pp;
      *pp = e->next;
      cache_len--;
      return e;
    }
  }
  return NULL;
}

static void cache_put(pid_t pid, int status, struct shim_time at) {
  struct early_exit *e = xmalloc(sizeof(*e));
  *e = (struct early_exit){pid, status, at, cache};
  cache = e;
  /* Exits nobody claims (hook helpers, orphans of the container) must not
   * pile up: drop the oldest. */
  if (++cache_len > CACHE_MAX) {
    struct early_exit **pp = &cache;
    while ((*pp)->next)
      pp = &(*pp)->next;
    free(*pp);
    *pp = NULL;
    cache_len--;
  }
}

int shim_reaper_watch(pid_t pid, shim_reap_fn fn, void *data, struct iob_error **err) {
  (void)err; /* cannot fail (out of memory aborts); kept for its callers */
  struct early_exit *e = cache_take(pid);
  if (e) {
    fn(pid, e->status, e->at, data);
    free(e);
    return 0;
  }
  struct waiter *w = xcalloc(1, sizeof(*w));
  *w = (struct waiter){pid, fn, data, waiters};
  waiters = w;
  return 0;
}

int shim_reaper_watch_child(pid_t pid, shim_reap_fn fn, void *data, struct iob_error **err) {
  free(cache_take(pid));
  return shim_reaper_watch(pid, fn, data, err);
}

void shim_reaper_unwatch(pid_t pid) {
  for (struct waiter **pp = &waiters; *pp; pp = &(*pp)->next) {
    if ((*pp)->pid == pid) {
      struct waiter *w = *pp;
      *pp = w->next;
      free(w);
      return;
    }
  }
}

void shim_reaper_dispatch(pid_t pid, int status, struct shim_time at) {
  for (struct waiter **pp = &waiters; *pp; pp = &(*pp)->next) {
    if ((*pp)->pid == pid) {
      struct waiter *w = *pp;
      *pp = w->next;
      w->fn(pid, status, at, w->data);
      free(w);
      return;
    }
  }
  cache_put(pid, status, at);
}

void shim_reaper_reap(void) {
  for (;;) {
    int status;
    pid_t pid = wait4(-1, &status, WNOHANG, NULL);
    if (pid <= 0) {
      if (pid < 0 && errno == EINTR)
        continue;
      return;
    }
    shim_reaper_dispatch(pid, status, shim_time_now());
  }
}

void shim_reaper_reset(void) {
  while (waiters) {
    struct waiter *w = waiters;
    waiters = w->next;
    free(w);
  }
  while (cache) {
    struct early_exit *e = cache;
    cache = e->next;
    free(e);
  }
  cache_len = 0;
}
