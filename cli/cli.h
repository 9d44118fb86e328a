// SPDX-License-Identifier: Apache-2.0
/* iobatchctl: one file per verb (status.c, plan_verb.c, profiles_verb.c,
 * calibrate.c, check.c, annotations_verb.c, ctl.c for the per-container calls);
 * main.c only dispatches, args.c has what the verbs share on the command
 * line.  Each verb takes (argc, argv)
 * with argv[0] the verb and returns the exit status: 0 ok, 1 failure,
 * 2 usage.  Every verb answers --help (usage on stdout, exit 0). */
#ifndef IOB_CLI_H
#define IOB_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "common/error.h"
#include "ttrpc/ttrpc.h"

#include "client/api.h"
/* The one variable every part reads for the agent's socket (the shim too). */
#define IOBCTL_SOCKET_ENV "IOBATCH_AGENT_SOCKET"

/* The agent's socket: --socket, else $IOBATCH_AGENT_SOCKET, else the
 * default. */
extern const char *iobctl_socket;

int iobctl_connect(struct ttrpc_client **out, struct iob_error **err);
/* The agent's Status, asked with a timeout of timeout_ms (status, check);
 * with the pods' labels when LABELS (left out otherwise: they can be
 * large, and the liveness probe asks for status every few seconds). */
struct Iobatch__Agent__V1__StatusResponse;
int iobctl_status_fetch(struct Iobatch__Agent__V1__StatusResponse **out, bool labels,
                        int timeout_ms, struct iob_error **err);

/* -o / --output: table (the default), wide (more columns) or json. */
enum iobctl_output { IOBCTL_OUT_TABLE, IOBCTL_OUT_WIDE, IOBCTL_OUT_JSON };
/* Parse an -o value; prints the error (naming the verb) and returns -1 on
 * an unknown one.  `wide` only where the verb has a table with more
 * columns (allow_wide). */
int iobctl_output_parse(const char *verb, const char *value, bool allow_wide,
                        enum iobctl_output *out);
/* The getopt_long entries every verb with a table takes: -o/--output and
 * --json (IOBCTL_OPT_JSON; a verb's own long-only options start above it). */
enum { IOBCTL_OPT_JSON = 256, IOBCTL_OPT_VERB };
#define IOBCTL_OUTPUT_OPTIONS                                                                      \
  {"output", required_argument, NULL, 'o'}, {                                                      \
    "json", no_argument, NULL, IOBCTL_OPT_JSON                                                     \
  }
/* One getopt_long result O (with OPTARG) if it is -o or --json: sets *OUT
 * and returns 1, or -1 (printed) on a bad -o value; 0 for any other. */
int iobctl_output_opt(const char *verb, int o, const char *arg, bool allow_wide,
                      enum iobctl_output *out);
/* After getopt_long returned '?' or ':' (optstring starting with ':'):
 * print "iobatchctl VERB: unknown argument '--x'" (or the missing value)
 * and the hint to --help on stderr; returns 2. */
int iobctl_usage_error(const char *verb, int opt, char **argv);
/* A usage error of our own (wrong count of operands, bad number): the
 * message, then the --help hint; returns 2. */
int iobctl_usage_fail(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

int iobctl_status(int argc, char **argv);
int iobctl_plan(int argc, char **argv);
int iobctl_profiles(int argc, char **argv);
int iobctl_register(int argc, char **argv);
int iobctl_admit(int argc, char **argv);
int iobctl_cancel(int argc, char **argv);
int iobctl_exited(int argc, char **argv);
int iobctl_check(int argc, char **argv);
int iobctl_annotations(int argc, char **argv);

#endif
