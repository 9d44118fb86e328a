// SPDX-License-Identifier: Apache-2.0
#ifndef IOB_LOG_H
#define IOB_LOG_H

#include <stdbool.h>
#include <stdint.h>

enum iob_log_level { IOB_LOG_DEBUG, IOB_LOG_INFO, IOB_LOG_WARN, IOB_LOG_ERROR };

/* Messages go to stderr as logrus-style text lines (what containerd shows
 * when it copies a shim's log FIFO); debug lines only when enabled.  When
 * stderr is the systemd journal's stream, each line starts with its
 * sd-daemon(3) priority ("<3>" error, "<4>" warning, "<6>" info, "<7>"
 * debug) and has no timestamp of ours: the journal stamps it. */
void iob_log_init(const char *component, int debug);
void iob_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define iob_debug(...) iob_log(IOB_LOG_DEBUG, __VA_ARGS__)
#define iob_info(...) iob_log(IOB_LOG_INFO, __VA_ARGS__)
#define iob_warn(...) iob_log(IOB_LOG_WARN, __VA_ARGS__)
#define iob_err(...) iob_log(IOB_LOG_ERROR, __VA_ARGS__)

/* "<N>" for the level when stderr is the journal, else "" (for the lines
 * written to stderr outside iob_log, such as iob_error_print's). */
const char *iob_log_prefix(int level);

/* JOURNAL_STREAM is "DEV:INO" (decimal) of the stream systemd connected to
 * the journal; children inherit the variable even when their stderr goes
 * elsewhere (a shim's goes to containerd's log FIFO), so it counts only
 * when it names stderr's own device and inode (systemd.exec(5)).  False for
 * NULL or anything malformed. */
bool iob_log_journal_stream_is(const char *env, uint64_t dev, uint64_t ino);

#endif
