// SPDX-License-Identifier: Apache-2.0
/* What the agent changed in cgroup files, and how to put it back (issue
 * #14: a stopped or crashed agent leaves no weight or cap behind).
 *
 * The agent writes per-device lines: io.weight / io.bfq.weight
 * ("MAJ:MIN W"), io.max ("MAJ:MIN rbps=.. wbps=.. riops=.. wiops=..") and
 * v1 blkio.throttle.*_device ("MAJ:MIN N"); and one value per cgroup in
 * cpu.weight / cpu.shares and the freezer's cgroup.freeze / freezer.state
 * (entries with device 0:0, written back alone: a crashed agent's frozen
 * batch containers are thawed by the next one).  Before the first write of
 * a file for a device, the writer reads what is there and remembers it as an entry (file, device,
 * value): writing "MAJ:MIN value" back restores it. The first write wins: later writes do not
 * change what is remembered.
 *
 * Every new entry is written to the journal STATE_DIR/restore.json
 * (atomic replace) before the cgroup file is written, so an agent killed
 * with caps in place leaves a journal that the next one replays at start.
 * Entries are dropped when restored, and the journal is removed when none
 * is left.  cgroup files live in memory: a reboot resets them, so the
 * journal carries the boot it was written in and another boot's is not
 * replayed, and it is written without fsync (iob_write_file_replace: an
 * fsync here waited seconds behind the very writers a cap holds back).
 *
 *   {"version": 1, "boot_id": "<kernel.random.boot_id>",
 *    "entries": [{"file": "/sys/fs/cgroup/blkio/x/blkio.throttle.write_bps_device",
 *                 "dev": "8:0", "value": "0"}]} */
#ifndef IOB_AGENT_RESTORE_H
#define IOB_AGENT_RESTORE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/error.h"

#define AGENT_RESTORE_FILE "restore.json"
#define AGENT_RESTORE_MAX 4096      /* entries (files x devices) kept */
#define AGENT_RESTORE_VALUE_MAX 128 /* bytes of a value, NUL included */
#define AGENT_RESTORE_PATH_MAX 4200 /* bytes of a file's path, NUL included */
#define AGENT_RESTORE_MAX_BYTES (4u << 20)

struct agent_restore_entry {
  char *file; /* absolute path of the cgroup file */
  unsigned major, minor;
  char value[AGENT_RESTORE_VALUE_MAX]; /* what follows "MAJ:MIN " to put it back */
};

#define AGENT_RESTORE_BOOT_ID "/proc/sys/kernel/random/boot_id"

struct agent_restore {
  char *path; /* STATE_DIR/restore.json; NULL: no journal (tests) */
  /* This boot's id (written into the journal); a parsed journal's ("":
   * none said). */
  char boot_id[40];
  struct agent_restore_entry *v;
  size_t n, cap;
};

/* Empty, with the journal in STATE_DIR (NULL: none), for the boot whose
 * id BOOT_ID_FILE holds (NULL: AGENT_RESTORE_BOOT_ID; not readable: no
 * id, and every journal is replayed).  Returns 0 (out of memory aborts,
 * common/xalloc.h). */
int agent_restore_init(struct agent_restore *r, const char *state_dir, const char *boot_id_file,
                       struct iob_error **err);
void agent_restore_release(struct agent_restore *r);

/* Parse a journal's text (NAME for messages) into R, which is left empty
 * on error.  Only the files the agent writes are accepted, by absolute
 * path without "..", so that a damaged journal cannot make root write
 * anything else. */
int agent_restore_parse(struct agent_restore *r, const char *name, const char *buf, size_t len,
                        struct iob_error **err);

/* Whether FILE is remembered for MAJ:MIN. */
bool agent_restore_has(const struct agent_restore *r, const char *file, unsigned major,
                       unsigned minor);
/* Before the first write of FILE for MAJ:MIN: remember VALUE (what it
 * holds now) and write the journal.  Nothing when it is remembered already
 * (the first write wins).  On error nothing is remembered, and the caller
 * must not write: what it wrote could not be put back after a crash. */
int agent_restore_remember(struct agent_restore *r, const char *file, unsigned major,
                           unsigned minor, const char *value, struct iob_error **err);

/* Which files: weights.c's and caps.c's may be in one directory (a
 * container's v2 cgroup), and each puts back only its own. */
enum agent_restore_files {
  AGENT_RESTORE_ALL = 0,
  AGENT_RESTORE_WEIGHTS, /* io.weight, io.bfq.weight, blkio.*weight_device */
  AGENT_RESTORE_CAPS,    /* io.max, blkio.throttle.* */
  AGENT_RESTORE_CPU,     /* cpu.weight, cpu.shares (device 0:0: one value) */
  AGENT_RESTORE_FREEZE,  /* cgroup.freeze, freezer.state (0:0; agent/freeze.c) */
};

/* The same for N entries at once, with one journal write: all of them are
 * remembered, or none. */
int agent_restore_remember_n(struct agent_restore *r, const struct agent_restore_entry *v, size_t n,
                             struct iob_error **err);

/* Put back every entry of WHICH files in directory DIR (NULL: any), drop
 * them and rewrite (or remove) the journal.  A file that is gone (its
 * cgroup vanished) needs nothing; other failures are logged and the entry
 * is dropped all the same (the log names the value).  Returns how many
 * files were written. */
size_t agent_restore_dir(struct agent_restore *r, const char *dir, enum agent_restore_files which);

/* At start, before anything is written: load the journal an agent that did
 * not stop left, put back each value whose cgroup still exists (one log
 * line each), and remove it.  A journal of another boot is removed with
 * one log line and nothing written.  A journal that cannot be parsed is kept
 * aside as restore.json.bad-<time> (nothing is lost) and an error naming
 * both is returned; the caller logs it and goes on.  Returns the number
 * of files written. */
int agent_restore_replay(struct agent_restore *r, struct iob_error **err);

#endif
