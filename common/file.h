// SPDX-License-Identifier: Apache-2.0
#ifndef IOB_FILE_H
#define IOB_FILE_H

#include <stddef.h>

#include "common/error.h"

/* Read all of fd (called NAME in errors) into a NUL-terminated buffer the
 * caller frees.  More than MAX bytes is an EFBIG error: nothing from
 * outside is trusted to be small.  Reads until EOF rather than trusting
 * st_size (procfs and cgroupfs report 0), growing the buffer in steps. */
int iob_read_fd(int fd, const char *name, size_t max, char **buf, size_t *len,
                struct iob_error **err);
/* The same for a path (opened O_RDONLY | O_CLOEXEC). */
int iob_read_file(const char *path, size_t max, char **buf, size_t *len, struct iob_error **err);

/* Replace PATH with TEXT atomically: write a new PATH.tmp (O_EXCL |
 * O_NOFOLLOW after removing whatever is there, MODE),
 * fsync, rename over PATH, fsync the directory.  A crash leaves the old
 * file or the new one, never half of one; on error PATH is untouched. */
int iob_write_file_atomic(const char *path, const char *text, size_t len, int mode,
                          struct iob_error **err);

/* The same without the fsyncs: atomic against the writer's death (a
 * rename is), not against the machine's.  For state that means nothing
 * after a reboot anyway (agent/store/restore.h), written where an fsync would
 * stall the caller behind the very I/O it manages. */
int iob_write_file_replace(const char *path, const char *text, size_t len, int mode,
                           struct iob_error **err);

/* A state file the agent keeps (profiles, penalties, the restore journal)
 * that does not parse: renamed to "PATH.bad-<time>" for a human to look
 * at, so that the next save does not overwrite it.  Always returns -1 with
 * "CAUSE; kept aside as 'ASIDE', THEN" (IOB_CODE_DATA_LOSS), or the rename's
 * error. */
int iob_state_set_aside(const char *path, const char *cause, const char *then,
                        struct iob_error **err);

/* The JSON text of state file NAME, at most MAX bytes, duplicate keys
 * refused; NULL with an IOB_CODE_DATA_LOSS error naming NAME.  The caller
 * owns the result (json_decref). */
struct json_t;
struct json_t *iob_state_json(const char *name, const char *buf, size_t len, size_t max,
                              struct iob_error **err);

/* DIR (called WHAT in errors) must be a directory, not a symlink, owned
 * by our euid and closed to everybody else (mode & 077 == 0): where root
 * puts a socket or a file another user must not replace.  Otherwise an
 * error saying what is wrong and what it must be. */
int iob_dir_check_private(const char *dir, const char *what, struct iob_error **err);

/* The same rule, but DIR is made so where that is safe: created 0700 when
 * missing (its parent must exist); a directory of ours that others can
 * read or search but not write (0755, 0750, 0711: what systemd's
 * RuntimeDirectoryMode or a kubelet's hostPath DirectoryOrCreate make) is
 * changed to 0700 through an O_NOFOLLOW descriptor.  Still refused: a
 * symlink, not a directory, another owner, group or other write (whoever
 * could write it may already have put something in it).  Returns 0 when
 * nothing was changed, 1 when DIR was made or its mode changed (*OLD_MODE:
 * the mode it had, 0 when it was created), -1 with an error. */
int iob_dir_make_private(const char *dir, const char *what, unsigned *old_mode,
                         struct iob_error **err);

#endif
