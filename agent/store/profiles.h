// SPDX-License-Identifier: Apache-2.0
/* Learned workload profiles, kept by namespace and workload key
 * (annotation io.iobatch.workload, else the image name, else the command
 * line) so that the second run of a workload is classified before it
 * starts.  The namespace is the container's tenant (agent_ctr_tenant: its
 * pod's namespace, else its containerd namespace): one tenant's runs never
 * teach another's profile of the same key.
 *
 * Learned latency objectives are kept beside the profiles, in a top-level
 * "objectives" array that an older agent ignores:
 *   "objectives": [{"namespace": NS, "key": KEY, "lat_target": N, "approx": B}]
 *
 * Persisted as JSON in STATE_DIR/profiles.json with an atomic replace
 * (write a temporary file, fsync, rename, fsync the directory): a crash
 * leaves the old file or the new one, never half of one.  The daemon
 * encodes on its loop and leaves the write and its fsyncs to a thread
 * (agent/store/statesave.h). */
#ifndef IOB_AGENT_PROFILES_H
#define IOB_AGENT_PROFILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

#define AGENT_PROFILES_FILE "profiles.json"
#define AGENT_PROFILES_MAX 4096 /* profiles kept; the oldest go first */
/* Profiles kept per namespace (config profiles_per_namespace): a tenant
 * whose workload keys change every run (a date, a random suffix) evicts
 * its own oldest profiles, never another namespace's, so that one tenant cannot push out what the
 * agent learned of the others. */
#define AGENT_PROFILES_PER_NS_DEFAULT 512
#define AGENT_PROFILE_KEY_MAX 1024 /* bytes of a workload key */
#define AGENT_PROFILE_NS_MAX 255   /* bytes of a namespace (AGENT_ID_MAX - 1) */
#define AGENT_PROFILES_MAX_BYTES (8 * 1024 * 1024)

struct agent_profile {
  char *ns; /* "" for profiles of a file written before namespaces */
  char *key;
  char cls[16];      /* class name ("seq-write", ...) as the detector names it */
  double confidence; /* 0..1; 1 for a declared class */
  double solo_s;     /* learned solo duration, 0 = not known */
  double solo_bps;   /* learned solo throughput (read + write bytes/s), 0 = not known */
  unsigned runs;     /* how many runs taught this profile */
  /* The latency objective a protected container of this workload learned
   * (agent/protect/protect.h): a block I/O p99 in us, or with lat_approx
   * an io.pressure stall share; 0 none.  The next container of the
   * workload starts with it instead of learning again. */
  double lat_target;
  bool lat_approx;
  int64_t updated; /* wall clock seconds of the last update (eviction order) */
};

struct agent_profiles {
  char *path; /* STATE_DIR/profiles.json */
  struct agent_profile *v;
  size_t n, cap;
  /* At most this many profiles per namespace (0: AGENT_PROFILES_MAX).  A
   * new profile evicts the least recently updated of its own namespace
   * when that one is full; when the whole store is full, of the namespace
   * that holds the most. */
  size_t per_ns_max;
  /* Bumped whenever a profile's class or runtime may have changed (a
   * learn that changed them, a load, an eviction): a class's typical
   * runtime looked up at an older generation may be stale. */
  uint64_t gen;
};

/* Set the store up empty for STATE_DIR (created with 0700 if missing). */
int agent_profiles_init(struct agent_profiles *p, const char *state_dir, struct iob_error **err);
void agent_profiles_release(struct agent_profiles *p);

/* Load the file.  A missing file is an empty store.  A file that cannot be
 * parsed is renamed to "profiles.json.bad-<unix time>" so nothing is lost,
 * the store stays empty and usable, and an error that names both files is
 * returned: the caller logs it and goes on. */
int agent_profiles_load(struct agent_profiles *p, struct iob_error **err);

/* Parse the text of a profile file (name is for messages) into the store,
 * which is left empty on error. */
int agent_profiles_parse(struct agent_profiles *p, const char *name, const char *buf, size_t len,
                         struct iob_error **err);

/* Replace the file atomically with the current store.  The file never
 * exceeds AGENT_PROFILES_MAX_BYTES, which load accepts: when the store
 * would, the least recently updated profiles of the namespace holding the
 * most bytes are left out of it (they stay in memory). */
int agent_profiles_save(const struct agent_profiles *p, struct iob_error **err);
/* The text save writes (*TEXT NUL-terminated, *LEN bytes without the NUL;
 * the caller frees it): for a writer off the agent's loop
 * (agent/store/statesave.h). */
int agent_profiles_encode(const struct agent_profiles *p, char **text, size_t *len,
                          struct iob_error **err);

/* The profile of KEY in namespace NS (NULL taken as ""), or NULL. */
const struct agent_profile *agent_profiles_get(const struct agent_profiles *p, const char *ns,
                                               const char *key);

/* The typical runtime alone (s) of a job of class CLS (a class name) in
 * namespace NS (NULL taken as ""): the median solo_s of NS's profiles of
 * that class that know one, 0 when none does.  What a job of a workload
 * never seen is expected to take (agent/protect/budget.h).  By namespace, as the
 * profiles are: one tenant's runs do not set another's budget. */
double agent_profiles_class_typical(const struct agent_profiles *p, const char *ns,
                                    const char *cls);

/* What one run (or one confident sample) taught.  cls NULL or "" keeps the
 * class; solo_s/solo_bps 0 keep the old values; known ones are averaged
 * with the old (exponentially, so a workload that changes is followed). */
struct agent_profile_update {
  const char *cls;
  double confidence;
  double solo_s;
  double solo_bps;
  bool run_finished; /* count one more run */
};
int agent_profiles_learn(struct agent_profiles *p, const char *ns, const char *key,
                         const struct agent_profile_update *u, struct iob_error **err);

/* A protected container of KEY in NS learned TARGET (> 0 and finite; with
 * APPROX a stall share, at most 1): kept in its profile (made if missing),
 * replacing the one before. */
int agent_profiles_learn_objective(struct agent_profiles *p, const char *ns, const char *key,
                                   double target, bool approx, struct iob_error **err);

#endif
