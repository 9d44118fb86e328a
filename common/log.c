// SPDX-License-Identifier: Apache-2.0
#include "common/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *log_component = "iobatch";
static int log_debug;
static int log_journal = -1; /* -1: not looked at yet */

static bool parse_u64(const char *s, const char *end, uint64_t *out) {
  if (s == end || end - s > 20)
    return false;
  uint64_t v = 0;
  for (; s < end; s++) {
    if (*s < '0' || *s > '9')
      return false;
    unsigned d = (unsigned)(*s - '0');
    if (v > (UINT64_MAX - d) / 10)
      return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

bool iob_log_journal_stream_is(const char *env, uint64_t dev, uint64_t ino) {
  if (env == NULL)
    return false;
  const char *colon = strchr(env, ':');
  uint64_t d, i;
  return colon && parse_u64(env, colon, &d) && parse_u64(colon + 1, colon + strlen(colon), &i) &&
         d == dev && i == ino;
}

static bool to_journal(void) {
  if (log_journal < 0) {
    struct stat st;
    log_journal = fstat(STDERR_FILENO, &st) == 0 &&
                  iob_log_journal_stream_is(getenv("JOURNAL_STREAM"), (uint64_t)st.st_dev,
                                            (uint64_t)st.st_ino);
  }
  return log_journal;
}

const char *iob_log_prefix(int level) {
  static const char *const prio[] = {"<7>", "<6>", "<4>", "<3>"};
  if (!to_journal())
    return "";
  return prio[level < 0 || level > 3 ? 3 : level];
}

void iob_log_init(const char *component, int debug) {
  log_component = component;
  log_debug = debug;
  log_journal = -1;
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
  const char *name = names[level < 0 || level > 3 ? 3 : level];
  if (to_journal()) {
    fprintf(stderr, "%slevel=%s msg=\"%s\" component=%s\n", iob_log_prefix(level), name, quoted,
            log_component);
  } else {
    struct timespec ts;
    struct tm tm;
    char when[64];
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
    fprintf(stderr, "time=\"%s.%09ldZ\" level=%s msg=\"%s\" component=%s\n", when, ts.tv_nsec, name,
            quoted, log_component);
  }
  fflush(stderr);
  errno = saved;
}
