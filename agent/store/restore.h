// SPDX-License-Identifier: Apache-2.0
/* What the agent changed in cgroup files, and how to put it back (a
 * stopped or crashed agent leaves no weight or cap behind).
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
 * cgroup files live in memory: a reboot resets them, so the journal
 * carries the boot it was written in and another boot's is not replayed,
 * and it is written without fsync (iob_write_file_replace: an fsync here
 * waited seconds behind the very writers a cap holds back).
 *
 * Version 2: an entry also carries the inode of the cgroup
 * directory (stat(2); on v1 that of the file's own hierarchy) and the
 * value the agent wrote (and the one before it: a crash between the
 * journal and the write leaves either in the file).  A value is put back
 * only when the directory is still that inode (a reused cgroup path, ctr
 * and nerdctl reuse ids, gets nothing) and the file still holds what the
 * agent wrote (a value changed since, by runc update or the kubelet, is
 * left alone).  A put-back that failed for another reason than a gone
 * cgroup is kept and retried (agent_restore_retry), AGENT_RESTORE_TRIES
 * times in all, across restarts ("tries"); a thaw is never given up, only
 * tried less often.  A version-1 journal (no
 * inode, no written value) left by an older agent is replayed once as that
 * agent would have, and the journal is rewritten as version 2.
 *
 *   {"version": 2, "boot_id": "<kernel.random.boot_id>",
 *    "entries": [{"file": "/sys/fs/cgroup/x/io.max", "dev": "8:0",
 *                 "value": "rbps=max wbps=max riops=max wiops=max",
 *                 "ino": 4242, "written": "rbps=1048576 wbps=1048576 riops=max wiops=max",
 *                 "prev": "rbps=2097152 wbps=2097152 riops=max wiops=max", "tries": 1}]}
 *
 * I/O priority (agent/protect/ioprio.c): io.prio.class / blkio.prio.class are
 * one value per cgroup like cpu.weight.  Where the kernel has neither,
 * the class of each task is set with ioprio_set(2), and one entry keyed
 * by the cgroup's task list (cgroup.threads on v2, tasks on v1; device
 * 0:0; that file is read, never written) holds the class the tasks had
 * and the one the agent gave, in common/ioprio.h's words ("none",
 * "idle", "be7"): putting it back gives every task listed then that
 * still has the agent's class the old one.
 *
 * "prev" and "tries" are optional.  io.weight and io.bfq.weight with device
 * 0:0 are the "default W" line (the hook's first weight, runtime-hook/run.c,
 * journalled by the agent at Register). */
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

#define AGENT_RESTORE_TRIES 5 /* put-backs tried before an entry is given up */
/* A thaw is never given up (a frozen container left frozen is down for
 * good): after AGENT_RESTORE_TRIES it is tried on fewer windows, the wait
 * doubling up to AGENT_RESTORE_BACKOFF_MAX windows; its count of tries
 * stops at AGENT_RESTORE_TRIES_MAX. */
#define AGENT_RESTORE_BACKOFF_MAX 64
#define AGENT_RESTORE_TRIES_MAX 1000000

struct agent_restore_entry {
  char *file; /* absolute path of the cgroup file */
  unsigned major, minor;
  char value[AGENT_RESTORE_VALUE_MAX];   /* what follows "MAJ:MIN " to put it back */
  char written[AGENT_RESTORE_VALUE_MAX]; /* what the agent wrote last, in the file's words */
  char prev[AGENT_RESTORE_VALUE_MAX];    /* what it wrote before that ("": nothing) */
  unsigned long long ino;                /* the cgroup directory's inode (0: a version-1 entry) */
  unsigned tries;                        /* put-backs that failed so far */
  unsigned wait; /* retries to let pass before the next (a thaw's backoff; not journalled) */
};

#define AGENT_RESTORE_BOOT_ID "/proc/sys/kernel/random/boot_id"

struct agent_restore {
  char *path; /* STATE_DIR/restore.json; NULL: no journal (tests) */
  /* This boot's id (written into the journal); a parsed journal's ("":
   * none said). */
  char boot_id[40];
  struct agent_restore_entry *v;
  size_t n, cap;
  /* Nothing is given up: a put-back that keeps failing stays in the
   * journal (iobatchd --restore-only, which must not lose what it could
   * not put back). */
  bool keep_failed;
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
/* Whether FILE for MAJ:MIN is remembered for a cgroup directory that is
 * another inode now (recreated at the same path): such an entry is
 * nobody's any more and is dropped (true).  A directory that cannot be
 * looked at keeps it (false). */
bool agent_restore_stale(struct agent_restore *r, const char *file, unsigned major, unsigned minor);

/* Before each write of WRITTEN to FILE for MAJ:MIN: the first time,
 * remember VALUE (what it holds now) and the inode of FILE's directory
 * (INO; 0: stat it now); every time, remember WRITTEN (in the words the
 * kernel prints back) and write the journal when anything changed.  The
 * first write wins: VALUE and INO of a remembered entry stay.  On error
 * nothing changes, and the caller must not write: what it wrote could not
 * be put back after a crash. */
int agent_restore_remember(struct agent_restore *r, const char *file, unsigned major,
                           unsigned minor, const char *value, const char *written,
                           unsigned long long ino, struct iob_error **err);

/* Which files: weights.c's and caps.c's may be in one directory (a
 * container's v2 cgroup), and each puts back only its own. */
enum agent_restore_files {
  AGENT_RESTORE_ALL = 0,
  AGENT_RESTORE_WEIGHTS,     /* io.weight, io.bfq.weight, blkio.*weight_device */
  AGENT_RESTORE_CAPS,        /* io.max, blkio.throttle.* */
  AGENT_RESTORE_CPU,         /* cpu.weight, cpu.shares (device 0:0: one value) */
  AGENT_RESTORE_HOOK_WEIGHT, /* io.weight, io.bfq.weight "default" (device 0:0) */
  AGENT_RESTORE_FREEZE,      /* cgroup.freeze, freezer.state (0:0; agent/protect/freeze.c) */
  AGENT_RESTORE_IOPRIO,      /* io.prio.class, blkio.prio.class, and the class of each task
                                listed in cgroup.threads or tasks (0:0; agent/protect/ioprio.c) */
};

/* The same for N entries at once (each with its file, device, value,
 * written and ino), with one journal write: all of them, or none. */
int agent_restore_remember_n(struct agent_restore *r, const struct agent_restore_entry *v, size_t n,
                             struct iob_error **err);

/* Put back every entry of WHICH files in directory DIR (NULL: any), drop
 * them and rewrite (or remove) the journal.  A file that is gone (its
 * cgroup vanished) needs nothing; a directory that is another inode now
 * and a file that no longer holds what the agent wrote are left alone (one
 * log line); other failures are logged and the entry is kept for
 * agent_restore_retry, until AGENT_RESTORE_TRIES.  Returns how many files
 * were written. */
size_t agent_restore_dir(struct agent_restore *r, const char *dir, enum agent_restore_files which);

/* Try again the entries whose put-back failed (every sample period).
 * Returns how many files were written. */
size_t agent_restore_retry(struct agent_restore *r);

/* At start, before anything is written: load the journal an agent that did
 * not stop left, put back each value whose cgroup still exists (one log
 * line each), and remove it.  A journal of another boot is removed with
 * one log line and nothing written.  A journal that cannot be parsed is kept
 * aside as restore.json.bad-<time> (nothing is lost) and an error naming
 * both is returned; the caller logs it and goes on.  Returns the number
 * of files written. */
int agent_restore_replay(struct agent_restore *r, struct iob_error **err);

/* iobatchd --restore-only: with no agent running on STATE_DIR (its lock
 * is taken; a running agent is an error naming its pid), replay the
 * journal as agent_restore_replay does, then try what failed again up to
 * PASSES more times, waiting FIRST_WAIT_MS and twice as long each time,
 * and give nothing up: what could not be put back stays in the journal,
 * one log line each.  No STATE_DIR or no journal: nothing to do.  Returns
 * the number of values still journalled (0: the journal is gone), or -1
 * and *err when the journal cannot be read (a malformed one is set aside,
 * agent_restore_replay) or the directory cannot be locked.  *RESTORED (if
 * not NULL) gets the number of files written. */
int agent_restore_only(const char *state_dir, const char *boot_id_file, unsigned passes,
                       unsigned first_wait_ms, size_t *restored, struct iob_error **err);

/* The hook's first weight (runtime-hook/run.c), before the hook writes
 * it: "default WEIGHT" in DIR's io.weight (when WAS, its default line
 * before, is not "") and systemd's mapping of it in io.bfq.weight (when
 * BFQ_WAS is not ""), journalled with DIR's inode, which must be INO (the
 * directory the hook saw).  Errors: a weight out of range, no file, odd
 * values (INVALID_ARGUMENT), another directory (FAILED_PRECONDITION),
 * the journal.  The caller decides whom to trust. */
int agent_restore_hook_weight(struct agent_restore *r, const char *dir, unsigned weight,
                              const char *was, const char *bfq_was, unsigned long long ino,
                              struct iob_error **err);

/* The inode of FILE's directory (0 and *err when it cannot be had). */
unsigned long long agent_restore_dir_ino(const char *file, struct iob_error **err);

#endif
