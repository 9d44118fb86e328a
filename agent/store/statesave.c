// SPDX-License-Identifier: Apache-2.0
#include "agent/store/statesave.h"

#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/file.h"
#include "common/log.h"
#include "common/xalloc.h"

static void job_free(struct agent_statesave_job *j) {
  free(j->path);
  free(j->what);
  free(j->text);
  *j = (struct agent_statesave_job){0};
}

static void job_write(struct agent_statesave_job *j) {
  cleanup_error struct iob_error *err = NULL;
  if (iob_write_file_atomic(j->path, j->text, j->len, 0600, &err) < 0)
    iob_warn("%s not saved: %s", j->what, err->msg);
}

/* The next job waiting, or -1. */
static int next_job(const struct agent_statesave *s) {
  for (int i = 0; i < AGENT_STATESAVE_SLOTS; i++)
    if (s->q[i].path != NULL)
      return i;
  return -1;
}

static void *writer_main(void *arg) {
  struct agent_statesave *s = arg;
  pthread_mutex_lock(&s->mu);
  for (;;) {
    int i = next_job(s);
    if (i < 0 && s->stop)
      break;
    if (i < 0) {
      pthread_cond_wait(&s->cv, &s->mu);
      continue;
    }
    struct agent_statesave_job j = s->q[i];
    s->q[i] = (struct agent_statesave_job){0};
    pthread_mutex_unlock(&s->mu);
    job_write(&j);
    job_free(&j);
    pthread_mutex_lock(&s->mu);
  }
  pthread_mutex_unlock(&s->mu);
  return NULL;
}

void agent_statesave_init(struct agent_statesave *s) {
  *s = (struct agent_statesave){0};
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->cv, NULL);
}

/* The slot for PATH: the one already waiting for it, else a free one;
 * -1 when neither. */
static int slot_for(const struct agent_statesave *s, const char *path) {
  int free_slot = -1;
  for (int i = 0; i < AGENT_STATESAVE_SLOTS; i++) {
    if (s->q[i].path != NULL && strcmp(s->q[i].path, path) == 0)
      return i;
    if (s->q[i].path == NULL && free_slot < 0)
      free_slot = i;
  }
  return free_slot;
}

void agent_statesave_put(struct agent_statesave *s, const char *path, const char *what, char *text,
                         size_t len) {
  struct agent_statesave_job j = {
      .path = xstrdup(path), .what = xstrdup(what), .text = text, .len = len};
  pthread_mutex_lock(&s->mu);
  if (!s->started && !s->stop) {
    int e = pthread_create(&s->th, NULL, writer_main, s);
    if (e == 0)
      s->started = true;
    else
      iob_warn("cannot start the state writer thread: %s; saving on the main loop", strerror(e));
  }
  int i = s->started ? slot_for(s, path) : -1;
  if (i >= 0) {
    job_free(&s->q[i]); /* an older text of the same file, not written yet */
    s->q[i] = j;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return;
  }
  pthread_mutex_unlock(&s->mu);
  job_write(&j);
  job_free(&j);
}

void agent_statesave_release(struct agent_statesave *s) {
  pthread_mutex_lock(&s->mu);
  s->stop = true;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  if (s->started)
    pthread_join(s->th, NULL);
  s->started = false;
  for (int i = 0; i < AGENT_STATESAVE_SLOTS; i++)
    job_free(&s->q[i]);
  pthread_mutex_destroy(&s->mu);
  pthread_cond_destroy(&s->cv);
}
