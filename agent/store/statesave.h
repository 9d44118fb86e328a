// SPDX-License-Identifier: Apache-2.0
/* The agent's state files (profiles.json, penalties.json) written off its
 * loop.  Such a file must survive a reboot, so it is written whole and
 * fsynced (iob_write_file_atomic); but an fsync waits behind every dirty
 * page of the disk, seconds behind the very writers a cap holds back, and
 * on the loop that wait would hold every admission and sample with it.
 * The loop encodes the text and hands it over; one thread of
 * agent_statesave writes it.  A newer text for a path still waiting
 * replaces the older one, so a burst of saves costs one write.  Failures
 * are logged by the thread ("WHAT not saved: ..."): nothing on the loop
 * waits for the answer. */
#ifndef IOB_AGENT_STATESAVE_H
#define IOB_AGENT_STATESAVE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#define AGENT_STATESAVE_SLOTS 4 /* distinct paths waiting at once */

struct agent_statesave_job {
  char *path; /* NULL: a free slot */
  char *what; /* "profiles", for the log */
  char *text;
  size_t len;
};

struct agent_statesave {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  pthread_t th;
  bool started, stop;
  struct agent_statesave_job q[AGENT_STATESAVE_SLOTS];
};

void agent_statesave_init(struct agent_statesave *s);

/* Write TEXT (LEN bytes, taken over: freed by the writer) to PATH, mode
 * 0600, on the writer's thread (started on first use).  When the thread
 * cannot be started, or every slot is taken by another path, the write
 * is made here, on the caller's thread: a file saved late beats one lost. */
void agent_statesave_put(struct agent_statesave *s, const char *path, const char *what, char *text,
                         size_t len);

/* Wait until everything handed over is written, then stop the thread. */
void agent_statesave_release(struct agent_statesave *s);

#endif
