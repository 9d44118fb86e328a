// SPDX-License-Identifier: Apache-2.0
/* Penalties measured online: how much slower a container of one class ran
 * beside a neighbour of another than it runs alone.
 *
 * The sampler measures, for each running container with a measured solo
 * throughput that shares the disk with others doing I/O, slowdown = solo
 * rate / current rate, shares its excess among the neighbours (1 + excess
 * / neighbours each, the batcher's additive model), and files it under
 * the pairs (its class, each neighbour's class).  A pair seen in at least
 * AGENT_PEN_MIN_CORUNS distinct co-runs is evidence: before each plan it
 * replaces the matrix entry (agent_penalties_apply), so on a disk where
 * mixing does not hurt the agent stops holding after a few co-runs, and
 * where it hurts, it holds on measurements rather than on the built-in
 * guess.
 *
 * Persisted as STATE_DIR/penalties.json (atomic replace), e.g.
 *   {"version": 1, "pairs": [{"victim": "rand-write", "neighbour":
 *    "seq-write", "slowdown": 3.2, "samples": 41, "coruns": 4,
 *    "untrusted": {"slowdown": 2.9, "samples": 12, "coruns": 3,
 *                  "tenants": [1234567, 7654321]}}]}
 * ("untrusted" only when that stream has samples; "slowdown" 0 with
 * "samples" 0 when only it has). */
#ifndef IOB_AGENT_PENALTIES_H
#define IOB_AGENT_PENALTIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "batcher/batcher.h"
#include "common/error.h"

#define AGENT_PENALTIES_FILE "penalties.json"
#define AGENT_PENALTIES_MAX_BYTES (256 * 1024)
#define AGENT_PEN_MIN_CORUNS 3     /* co-runs before a pair is evidence */
#define AGENT_PEN_MAX_SLOWDOWN 100 /* a sample above is clamped */

struct agent_pen_stream {
  double slowdown; /* 1 / running average of shared rate / solo rate; 0: none */
  uint32_t samples, coruns;
};

/* Two streams per pair, so that no tenant poisons what others learn: t
 * from victims in namespaces whose declarations count (trust_declared),
 * u from the others, each beside a container of another tenant.  u is
 * evidence only when t is not, and only once two tenants taught it
 * (u_tenants: the first two heard from, by a hash of the name; 0 none):
 * one namespace alone never makes evidence against the rest. */
struct agent_pen_pair {
  struct agent_pen_stream t, u;
  uint32_t u_tenants[2];
};

struct agent_penalties {
  char *path; /* STATE_DIR/penalties.json; NULL: not persisted */
  struct agent_pen_pair p[BATCH_NCLASS][BATCH_NCLASS];
  bool dirty;
};

/* Empty store for STATE_DIR (NULL: in memory only). */
int agent_penalties_init(struct agent_penalties *pen, const char *state_dir,
                         struct iob_error **err);
void agent_penalties_release(struct agent_penalties *pen);

/* Parse a penalties file's text into pen (left empty on error). */
int agent_penalties_parse(struct agent_penalties *pen, const char *name, const char *buf,
                          size_t len, struct iob_error **err);
/* Load the file: missing is empty; unreadable is set aside as
 * "penalties.json.bad-<time>" and an error naming both is returned (the
 * store stays empty and usable). */
int agent_penalties_load(struct agent_penalties *pen, struct iob_error **err);
int agent_penalties_save(struct agent_penalties *pen, struct iob_error **err);
/* The text save writes, which the caller frees: for a writer off the
 * agent's loop (agent/store/statesave.h). */
char *agent_penalties_encode(const struct agent_penalties *pen);

/* One sample: `victim` ran at 1/slowdown of its solo rate beside one
 * `neighbour`; new_corun says these containers were not seen together
 * before.  untrusted_tenant: NULL when the victim's namespace is trusted,
 * else its name (the caller checked that another tenant's container was
 * beside it).  Classes that do no I/O and non-finite or non-positive
 * slowdowns are ignored. */
void agent_penalties_observe(struct agent_penalties *pen, enum batch_class victim,
                             enum batch_class neighbour, double slowdown, bool new_corun,
                             const char *untrusted_tenant);
/* The same, from a co-run beside several neighbours whose slowdown's
 * excess was shared among them: WEIGHT (0 to 1; 1/neighbours) is how much
 * the sample says of this pair, and how far it moves what was learned.  A
 * co-run of two measures the pair; one of eight, its eighth of a sum. */
void agent_penalties_observe_share(struct agent_penalties *pen, enum batch_class victim,
                                   enum batch_class neighbour, double slowdown, double weight,
                                   bool new_corun, const char *untrusted_tenant);

/* The stream a pair is shown and used by: the trusted one when it has
 * samples, else the other (NULL: the pair has none). */
const struct agent_pen_stream *agent_penalties_stream(const struct agent_penalties *pen,
                                                      enum batch_class victim,
                                                      enum batch_class neighbour);

/* True when the pair is evidence (enough co-runs; from two tenants at
 * least when none is trusted). */
bool agent_penalties_in_use(const struct agent_penalties *pen, enum batch_class victim,
                            enum batch_class neighbour);

/* Put the measured pairs that are evidence into cfg: s[v][n] =
 * (slowdown - 1) / slowdown_scale (at least 0), known and measured set.
 * An entry the administrator's matrix set is never lowered by a
 * measurement: only a larger penalty replaces it. */
void agent_penalties_apply(const struct agent_penalties *pen, struct batch_config *cfg);

#endif
