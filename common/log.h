#ifndef IOB_LOG_H
#define IOB_LOG_H

enum iob_log_level { IOB_LOG_DEBUG, IOB_LOG_INFO, IOB_LOG_WARN, IOB_LOG_ERROR };

/* Messages go to stderr as logrus-style text lines (what containerd shows
 * when it copies a shim's log FIFO); debug lines only when enabled. */
void iob_log_init(const char *component, int debug);
void iob_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define iob_debug(...) iob_log(IOB_LOG_DEBUG, __VA_ARGS__)
#define iob_info(...) iob_log(IOB_LOG_INFO, __VA_ARGS__)
#define iob_warn(...) iob_log(IOB_LOG_WARN, __VA_ARGS__)
#define iob_err(...) iob_log(IOB_LOG_ERROR, __VA_ARGS__)

#endif
