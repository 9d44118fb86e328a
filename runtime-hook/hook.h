// SPDX-License-Identifier: Apache-2.0
/* iobatch-hook: OCI prestart / createRuntime hook, and poststop hook for
 * engines that run hooks from hooks.d (podman, CRI-O).  The runtime runs it
 * with the container state JSON on stdin (runtime-spec config.md,
 * "POSIX-platform Hooks"); a non-zero exit fails the create.
 *
 * Fail open: only a state JSON that is not one (malformed, missing or
 * mistyped fields) and an unknown declared class (io.iobatch.class, which
 * the shim refuses at Create too) exit 1.  Every other failure (no cgroup2 mount, an
 * annotation over 64 KiB, more than 4096 process.args, sampling, the
 * agent unreachable, silent or answering an error) prints one line on
 * stderr ending "(fail open)" and exits 0, unless --fail-closed (the
 * hook's counterpart of the shim's IobatchFailClosed: a setting of whoever
 * installs the hook, not of the workload, so a flag and not an
 * annotation) makes it exit 1 with that line. */
#ifndef IOB_HOOK_H
#define IOB_HOOK_H

#include <jansson.h>
#include <stddef.h>
#include <sys/types.h>

#include "cgroupv2/cg2.h"
#include "cgroupv2/sample.h"
#include "common/error.h"
#include "client/annotations.h" /* the io.iobatch.* keys: IOB_ANN_* */
#include "client/birth.h"
#include "common/oci.h"
#include "wcd/wcd.h"

#define HOOK_STATE_MAX (1024 * 1024) /* stdin */
#define HOOK_ID_MAX 1024
#define HOOK_ANNOTATIONS_MAX 4096 /* entries */
#define HOOK_ANNOTATION_VALUE_MAX (64 * 1024)
#define HOOK_ARGS_MAX 4096

#define HOOK_ANN_IMAGE "io.kubernetes.cri.image-name"

/* runc gives a hook no deadline unless the spec sets one; ours stays short
 * so a wedged agent cannot stall container creation (--timeout-ms). */
#define HOOK_DEFAULT_TIMEOUT_MS 2000

/* The container as the runtime describes it. */
struct hook_state {
  char *id;
  pid_t pid;
  char *bundle;
  char *status;         /* "creating", "created", "running", "stopped"; may be "" */
  json_t *annotations;  /* object of strings; never NULL after parse */
  int have_annotations; /* the state carried an "annotations" member */
  char **args;          /* process.args from config.json, NULL-terminated */
  size_t nargs;
};

/* Validate and take the state JSON (BUF, LEN bytes).  "pid" is required
 * unless "status" is "stopped" (runtime-spec runtime.md: only created and
 * running containers have one).  A state over a limit (HOOK_STATE_MAX, the
 * annotation bounds) fails with code IOB_CODE_RESOURCE_EXHAUSTED, one
 * that is not valid with another code. */
int hook_state_parse(const char *buf, size_t len, struct hook_state *st, struct iob_error **err);
/* Read <bundle>/config.json (common/oci.h): its annotations (when the
 * state had none) and process.args (for the workload key), within the
 * bounds above (RESOURCE_EXHAUSTED). */
int hook_state_load_bundle(struct hook_state *st, struct iob_error **err);
/* The same from a config already read. */
int hook_state_take_config(struct hook_state *st, const struct iob_oci_config *cfg,
                           struct iob_error **err);
void hook_state_release(struct hook_state *st);
/* Annotation value or NULL. */
const char *hook_annotation(const struct hook_state *st, const char *key);
/* The same, as an iob_ann_get_fn (ST is the hook_state). */
const char *hook_annotation_get(void *st, const char *key);

enum hook_stage {
  HOOK_STAGE_AUTO,     /* from the state's status: "stopped" is poststop */
  HOOK_STAGE_PRESTART, /* prestart, createRuntime */
  HOOK_STAGE_POSTSTOP,
};

struct hook_options {
  const char *root;       /* prefix for /proc and /sys (tests); NULL in production */
  const char *socket;     /* agent socket */
  const char *ns;         /* containerd namespace; NULL: from the bundle path */
  const char *record_dir; /* write <id>.json describing what was found; NULL: none */
  int debug;
  int timeout_ms;  /* connect and each call to the agent; 0: HOOK_DEFAULT_TIMEOUT_MS */
  int max_wait_ms; /* > 0: prestart also asks Admit and waits at most this long
                      (hooks.d engines, which have no shim to hold the start) */
  int fail_closed; /* internal errors exit 1 instead of 0 */
  enum hook_stage stage;
  /* Set by main for confinement (hook_confine); unset in unit tests. */
  int confined;             /* enter the Landlock domain once the baseline is taken */
  int landlock_abi;         /* what the kernel reports; 0: none */
  const char *cg_mount;     /* the cgroup2 mount, the only place written to (and the record) */
  struct hook_agent *agent; /* connected before confinement; NULL: connect on use */
};

/* The agent connection made before confinement (hook_agent_preconnect):
 * the client, or why there is none, for the first hook_register or
 * hook_exited to take. */
struct ttrpc_client;
struct hook_agent {
  struct ttrpc_client *c;
  struct iob_error *err;
};

/* The whole hook on one state JSON.  Returns 0 when everything was done,
 * 1 for an internal error (*err says what; the caller fails open unless
 * fail_closed), -1 when the state or the declared class is invalid (exit
 * 1). */
int hook_invoke(const struct hook_options *opt, const char *buf, size_t len,
                struct iob_error **err);

/* What the hook found and did, for the agent and the record file. */
struct hook_result {
  struct client_birth b; /* cgroup, baseline, weight (client/birth.h) */
  char *workload;        /* profile key, may be NULL */
  int declared;          /* class came from io.iobatch.class */
  enum batch_class cls;
  uint32_t lat_target_us; /* io.iobatch.latency-target; 0: none */
};

/* Resolve, sample, and for a declared class the weight to write and what
 * its files hold now (nothing is written: client_birth_weight_write does,
 * once the agent journalled it).  Fills RES (release with hook_result_release); on
 * failure RES holds nothing. */
int hook_run(const struct hook_options *opt, const struct hook_state *st, struct hook_result *res,
             struct iob_error **err);
/* hook_run in two steps, so that confinement can come between them: the
 * cgroup and the baseline, from the pid alone (Landlock would refuse
 * /proc/PID/io, see hook_landlock_apply); then the declaration, the
 * workload key and the weight.  On failure of hook_sample RES holds
 * nothing; of hook_classify, what the sample put there. */
int hook_sample(const struct hook_options *opt, const struct hook_state *st,
                struct hook_result *res, struct iob_error **err);
int hook_classify(const struct hook_options *opt, const struct hook_state *st,
                  struct hook_result *res, struct iob_error **err);
void hook_result_release(struct hook_result *res);
/* The record as JSON (new reference). */
json_t *hook_result_json(const struct hook_state *st, const struct hook_result *res);
int hook_record_write(const char *dir, const char *id, json_t *rec, struct iob_error **err);

/* Register the container with the agent at opt->socket (ttrpc Register,
 * source "hook", with the baseline), then, with opt->max_wait_ms, Admit it
 * and wait for the answer (at most max_wait_ms; the agent is asked to
 * admit by force a little before).  An agent that cannot be reached, stays
 * silent past opt->timeout_ms or answers with an error fails with code
 * IOB_CODE_UNAVAILABLE (the caller fails open); a socket path that cannot
 * be a unix socket address with IOB_CODE_INVALID_ARGUMENT. */
int hook_register(const struct hook_options *opt, const struct hook_state *st,
                  struct hook_result *res, struct iob_error **err);
/* poststop: tell the agent the container exited (Exited), so nothing stays
 * listed.  Errors as hook_register. */
int hook_exited(const struct hook_options *opt, const struct hook_state *st,
                struct iob_error **err);

/* True when this user may not even look at the agent's socket (EACCES or
 * EPERM on it: a rootless engine, whose user the root-only /run/iobatch
 * shuts out).  That agent is not this user's: the hook does nothing and
 * says nothing (hooks.d applies the same file to every user's containers). */
bool hook_agent_forbidden(const struct hook_options *opt);

/* Confinement, in this order: connect to the agent (hook_agent_preconnect);
 * keep only the capabilities the hook needs (hook_caps_drop: it reads
 * /proc/PID and cgroup files of other uids; everything else,
 * CAP_DAC_OVERRIDE, CAP_SYS_ADMIN and CAP_CHOWN among them, leaves the
 * effective, permitted, inheritable, ambient and bounding sets); seccomp
 * allows only the syscalls it makes, with no socket and no connect
 * (hook_seccomp_install), anything else kills it with SIGSYS (main.c).
 * Then, once the state is read and the baseline taken, Landlock denies
 * writes but beneath the cgroup mount and the record directory and reads
 * but beneath /proc, /sys, the cgroup mount, the bundle and the record
 * directory (hook_landlock_apply, run.c). */
void hook_agent_preconnect(const struct hook_options *opt, struct hook_agent *a);
void hook_agent_release(struct hook_agent *a);
int hook_caps_drop(struct iob_error **err);
/* The Landlock ABI the kernel reports, 0 when it has none. */
int hook_landlock_abi(void);
/* No-op with ABI 0. */
int hook_landlock_apply(const struct hook_options *opt, int abi, const char *bundle,
                        struct iob_error **err);
/* One line saying which confinement is in force (--debug). */
void hook_confinement_describe(const struct hook_options *opt, int abi, char *buf, size_t n);
int hook_seccomp_install(const struct hook_options *opt, struct iob_error **err);
/* CapEff after confinement, as /proc/self/status prints it. */
#define HOOK_CAPS_KEPT_HEX "0000000000080004"

#endif
