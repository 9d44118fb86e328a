// SPDX-License-Identifier: Apache-2.0
/* What the verbs of iobatchctl share on the command line. */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

/* Set by main.c from --socket or the environment; read by every verb that
 * talks to the agent (ctl.c). */
const char *iobctl_socket;

int iobctl_output_parse(const char *verb, const char *value, bool allow_wide,
                        enum iobctl_output *out) {
  if (strcmp(value, "table") == 0)
    *out = IOBCTL_OUT_TABLE;
  else if (strcmp(value, "json") == 0)
    *out = IOBCTL_OUT_JSON;
  else if (allow_wide && strcmp(value, "wide") == 0)
    *out = IOBCTL_OUT_WIDE;
  else {
    iobctl_usage_fail(verb, "unknown output format '%s' (want %s)", value,
                      allow_wide ? "table, wide or json" : "table or json");
    return -1;
  }
  return 0;
}

int iobctl_output_opt(const char *verb, int o, const char *arg, bool allow_wide,
                      enum iobctl_output *out) {
  if (o == IOBCTL_OPT_JSON) {
    *out = IOBCTL_OUT_JSON;
    return 1;
  }
  if (o != 'o')
    return 0;
  return iobctl_output_parse(verb, arg, allow_wide, out) < 0 ? -1 : 1;
}

int iobctl_usage_fail(const char *verb, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "iobatchctl %s: ", verb);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\nRun 'iobatchctl %s --help' for usage.\n", verb);
  return 2;
}

int iobctl_usage_error(const char *verb, int opt, char **argv) {
  /* getopt_long has moved optind past what it could not use. */
  const char *arg = optind > 0 ? argv[optind - 1] : "?";
  if (opt == ':')
    return iobctl_usage_fail(verb, "'%s' needs a value", arg);
  if (optopt && arg[0] == '-' && arg[1] != '-') {
    char s[3] = {'-', (char)optopt, '\0'};
    return iobctl_usage_fail(verb, "unknown argument '%s'", s);
  }
  return iobctl_usage_fail(verb, "unknown argument '%s'", arg);
}
