/* iobatch-hook: OCI prestart / createRuntime hook.  runc runs it with the
 * container state JSON on stdin (runtime-spec config.md, "POSIX-platform
 * Hooks"); a non-zero exit fails the create. */
#ifndef IOB_HOOK_H
#define IOB_HOOK_H

#include <jansson.h>
#include <stddef.h>
#include <sys/types.h>

#include "cgroupv2/sample.h"
#include "common/error.h"
#include "common/file.h" /* IOB_OCI_CONFIG_MAX */
#include "wcd/wcd.h"

#define HOOK_STATE_MAX (1024 * 1024) /* stdin */
#define HOOK_ID_MAX 1024
#define HOOK_ANNOTATIONS_MAX 4096 /* entries */
#define HOOK_ANNOTATION_VALUE_MAX (64 * 1024)
#define HOOK_ARGS_MAX 4096

#define HOOK_ANN_CLASS "io.iobatch.class"
#define HOOK_ANN_WORKLOAD "io.iobatch.workload"
#define HOOK_ANN_IMAGE "io.kubernetes.cri.image-name"

/* The container as the runtime describes it. */
struct hook_state {
  char *id;
  pid_t pid;
  char *bundle;
  json_t *annotations;  /* object of strings; never NULL after parse */
  int have_annotations; /* the state carried an "annotations" member */
  char **args;          /* process.args from config.json, NULL-terminated */
  size_t nargs;
};

/* Validate and take the state JSON (BUF, LEN bytes). */
int hook_state_parse(const char *buf, size_t len, struct hook_state *st, struct iob_error **err);
/* Read <bundle>/config.json: its annotations (when the state had none) and
 * process.args (for the workload key). */
int hook_state_load_bundle(struct hook_state *st, struct iob_error **err);
void hook_state_release(struct hook_state *st);
/* Annotation value or NULL. */
const char *hook_annotation(const struct hook_state *st, const char *key);

struct hook_options {
  const char *root;       /* prefix for /proc and /sys (tests); NULL in production */
  const char *socket;     /* agent socket */
  const char *ns;         /* containerd namespace; NULL: from the bundle path */
  const char *record_dir; /* write <id>.json describing what was found; NULL: none */
  int debug;
};

/* What the hook found and did, for the agent and the record file. */
struct hook_result {
  char *cgroup;   /* v2 path, "/a/b" */
  char *cgdir;    /* directory sampled */
  char *workload; /* profile key, may be NULL */
  int declared;   /* class came from io.iobatch.class */
  enum wcd_class cls;
  struct cg2_sample baseline;
  unsigned weight;      /* io.weight asked for the class; 0: none */
  unsigned weight_mech; /* CG2_MECH_* of the disks it was written for */
  int weight_applied;
};

/* Resolve, sample, weight.  Fills RES (release with hook_result_release);
 * on failure RES holds nothing. */
int hook_run(const struct hook_options *opt, const struct hook_state *st, struct hook_result *res,
             struct iob_error **err);
void hook_result_release(struct hook_result *res);
/* The record as JSON (new reference). */
json_t *hook_result_json(const struct hook_state *st, const struct hook_result *res);
int hook_record_write(const char *dir, const char *id, json_t *rec, struct iob_error **err);

/* Register the container with the agent at opt->socket (ttrpc Register,
 * source "hook", with the baseline).  An agent that cannot be reached or
 * answers with an error (no socket, a stale one, a timeout) is not an
 * error: the hook fails open and the agent re-learns containers from the
 * shim.  Only a socket path that cannot be a unix socket address is. */
int hook_register(const struct hook_options *opt, const struct hook_state *st,
                  const struct hook_result *res, struct iob_error **err);

/* Confine the process to the syscalls the hook needs; anything else kills
 * it with SIGSYS. */
int hook_seccomp_install(struct iob_error **err);

/* io.weight for a class at container birth (0: leave it alone). */
unsigned hook_class_weight(enum wcd_class c);

#endif
