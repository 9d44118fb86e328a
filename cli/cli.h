/* iobatchctl: one file per verb (status.c, plan.c, calibrate.c, ctl.c for
 * the per-container calls, profiles.c); main.c only dispatches.  Each verb
 * takes (argc, argv) with argv[0] the verb and returns the exit status:
 * 0 ok, 1 failure, 2 usage. */
#ifndef IOB_CLI_H
#define IOB_CLI_H

#include "common/error.h"
#include "ttrpc/ttrpc.h"

#include "agent/api.h"

/* The agent's socket: --socket, else $IOBATCH_SOCKET, else the default. */
extern const char *iobctl_socket;

int iobctl_connect(struct ttrpc_client **out, struct iob_error **err);

int iobctl_status(int argc, char **argv);
int iobctl_plan(int argc, char **argv);
int iobctl_profiles(int argc, char **argv);
int iobctl_register(int argc, char **argv);
int iobctl_admit(int argc, char **argv);
int iobctl_cancel(int argc, char **argv);
int iobctl_exited(int argc, char **argv);

#endif
