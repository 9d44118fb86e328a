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
 * after a reboot anyway (agent/restore.h), written where an fsync would
 * stall the caller behind the very I/O it manages. */
int iob_write_file_replace(const char *path, const char *text, size_t len, int mode,
                           struct iob_error **err);

/* DIR (called WHAT in errors) must be a directory, not a symlink, owned
 * by our euid and closed to everybody else (mode & 077 == 0): where root
 * puts a socket or a file another user must not replace.  Otherwise an
 * error saying what is wrong and what it must be. */
int iob_dir_check_private(const char *dir, const char *what, struct iob_error **err);

#endif
