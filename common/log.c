#include "common/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static const char *log_component = "iobatch";
static int log_debug;

void iob_log_init(const char *component, int debug) {
  log_component = component;
  log_debug = debug;
}

void iob_log(int level, const char *fmt, ...) {
  static const char *const names[] = {"debug", "info", "warning", "error"};
  if (level == IOB_LOG_DEBUG && !log_debug)
    return;
  int saved = errno;
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  /* Quote the message the way logrus does, so one line stays one entry. */
  char quoted[4200];
  size_t o = 0;
  for (const char *p = msg; *p && o + 3 < sizeof(quoted); p++) {
    if (*p == '"' || *p == '\\') {
      quoted[o++] = '\\';
      quoted[o++] = *p;
    } else if (*p == '\n') {
      quoted[o++] = '\\';
      quoted[o++] = 'n';
    } else {
      quoted[o++] = *p;
    }
  }
  quoted[o] = '\0';
  struct timespec ts;
  struct tm tm;
  char when[64];
  clock_gettime(CLOCK_REALTIME, &ts);
  gmtime_r(&ts.tv_sec, &tm);
  strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
  fprintf(stderr, "time=\"%s.%09ldZ\" level=%s msg=\"%s\" component=%s\n", when,
          ts.tv_nsec, names[level < 0 || level > 3 ? 3 : level], quoted,
          log_component);
  fflush(stderr);
  errno = saved;
}
