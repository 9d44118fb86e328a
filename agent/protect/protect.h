// SPDX-License-Identifier: Apache-2.0
/* Protection of latency-sensitive containers.
 *
 * While a protected container runs (declared io.iobatch.class=latency, or
 * detected when `protect = detected`), batch containers that share the
 * disk run under a throughput cap, one level for all of them, moved by the
 * victims' measured slack once per sample (AIMD):
 *   - every victim within its target (its share at least min_share, its
 *     io.pressure stall at most max_stall_ratio of its stall alone, where
 *     known) and some share measured: the level grows by `raise`, and
 *     beyond cap_max_bps the cap is lifted (a victim alone, share unknown,
 *     leaves the level where it is);
 *   - a victim short of its target: the level is cut by `cut` (not below
 *     cap_floor_bps), and no new batch container is admitted until the
 *     victims have had slack for PROTECT_SLACK_WINDOWS windows in a row;
 *     with `hold_at_floor`, only while the level is at its floor (holding
 *     is the lever of last resort);
 * and everything is lifted when the last protected container is gone.
 * Which batch containers are capped and held is `scope`: all of them, or
 * (the default) only those that write or may write: the readers, which
 * harmed the service little on this project's disk (bench/service.sh),
 * run free.
 * No I/O here: the daemon measures and writes the caps. */
#ifndef IOB_AGENT_PROTECT_H
#define IOB_AGENT_PROTECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum agent_protect_scope {
  AGENT_PROTECT_WRITERS = 0, /* cap and hold batch containers that (may) write */
  AGENT_PROTECT_ALL = 1,     /* every batch container */
};
/* "writers", "all"; "invalid" otherwise. */
const char *agent_protect_scope_name(int scope);

struct agent_protect_cfg {
  double min_share;       /* 0.85 of its rate alone */
  double max_stall_ratio; /* 1.25 x its io.pressure stall alone */
  double cap_start_bps;   /* first level: 64 MiB/s */
  double cap_floor_bps;   /* lowest level: 16 MiB/s */
  double cap_max_bps;     /* above it the cap is lifted: 2 GiB/s */
  double raise, cut;      /* x1.25 with slack, x0.5 without */
  int scope;              /* enum agent_protect_scope */
  /* Hold new batch containers only once the cap is at its floor and a
   * victim is still short (holding as the last resort), rather than
   * whenever a victim is short (default: true). */
  bool hold_at_floor;
  /* protect_batch_budget: protection may add (batch_budget - 1) x a
   * batch job's expected runtime to its run, and unknown_delay_s
   * (protect_unknown_delay) to one of unknown runtime; past that it runs
   * free (agent_protect_budget_s; 1.5 and 60 s; budget 0: no bound). */
  double batch_budget;
  double unknown_delay_s;
  /* The concurrency lever (protect_freeze): see
   * PROTECT_FREEZE_AFTER below.  freeze_after: windows missing at the cap
   * floor before it acts (and between two further steps down). */
  bool freeze;
  unsigned freeze_after;
  /* protect_evidence: the levers are let go unless the victims' windows
   * show they help (PROTECT_EVIDENCE_PULLED below; default true). */
  bool evidence;
};
void agent_protect_cfg_default(struct agent_protect_cfg *cfg);

/* One protected container's last window. */
struct agent_protect_obs {
  const char *id;
  double share; /* rate / rate alone; < 0 unknown (no neighbours, no baseline) */
  double stall; /* io.pressure some % / that alone; < 0 unknown */
  /* The latency objective: the window's latency (the p99 of
   * its block I/O, or where BPF cannot load its io.pressure stall share)
   * against its target in the same unit; target <= 0: none (the share and
   * stall above decide), lat < 0: unknown.  idle: it did no I/O in the
   * window, which says nothing about its latency. */
  double lat, lat_target;
  bool idle;
};

/* How a protected container's share is measured (protect_signal). */
enum agent_protect_signal {
  AGENT_PROTECT_SIGNAL_AUTO = 0, /* pressure where known and telling, else rate */
  AGENT_PROTECT_SIGNAL_RATE,     /* its I/O rate / its rate alone */
  AGENT_PROTECT_SIGNAL_PRESSURE, /* its unstalled time / that alone (io.pressure) */
};
/* "auto", "rate", "pressure"; "invalid" otherwise. */
const char *agent_protect_signal_name(int signal);

/* A stall share alone above this counts as this (the pressure share's
 * denominator stays away from 0). */
#define PROTECT_STALL_ALONE_MAX 0.9
/* `auto` measures by pressure only a container whose rate alone is
 * unsteady (coefficient of variation above this: a database's writes swing
 * with its checkpoints) and that stalls on I/O at most
 * PROTECT_PRESSURE_AUTO_MAX of the time alone; a steady one (an fio-like
 * reader) by its rate, which also sees the CPU its neighbours take. */
#define PROTECT_RATE_CV_MAX 0.5
#define PROTECT_PRESSURE_AUTO_MAX 0.7

/* A protected container's share of its pace alone in a window, by SIGNAL:
 * RATE_SHARE (its I/O rate / its rate alone), or from its io.pressure
 * "some" stall share in the window and alone (running average),
 * (1 - STALL) / (1 - STALL_ALONE): the throughput a service keeps when only
 * its I/O waits grow; `auto` as above, with RATE_CV the coefficient of
 * variation of its rate alone (< 0 unknown: counts as steady).  Any input
 * < 0 is unknown; returns < 0 when the chosen signal's inputs are. */
double agent_protect_share(int signal, double rate_share, double rate_cv, double stall,
                           double stall_alone);

/* Windows in a row with slack before held batch containers may start. */
#define PROTECT_SLACK_WINDOWS 2

/* The objective controller (a protected container with a latency
 * target; agent_protect_update):
 *   - no protected container did I/O in the window: no limit (the level
 *     is lifted, nothing held);
 *   - no batch container did I/O in it (batch_io false): neither a miss
 *     nor slack, the level stays while a batch container is under the
 *     lever (batch_n), else it is lifted;
 *   - the worst latency / target r above 1: the level is cut by
 *     max(cut, min(PROTECT_OBJ_CUT_MAX, 1 / r)) (a small miss, a small
 *     cut), starting from batch_bps (the fastest capped batch container's
 *     rate in the window) when there is no cap yet, never below the floor;
 *     new batch containers are held while it misses at the floor;
 *   - r at most PROTECT_OBJ_SLACK: raised by `raise`, lifted beyond
 *     cap_max_bps; between the two the level stays.
 * There is no first cap: a batch container that starts beside a
 * protected container that meets its objective runs free. */
#define PROTECT_OBJ_CUT_MAX 0.9
#define PROTECT_PRESSURE_ON 3
#define PROTECT_PRESSURE_OFF 10
#define PROTECT_OBJ_SLACK 0.8

/* The concurrency lever: the number of batch containers doing I/O at once
 * (an objective controller only).  Once a protected container has missed
 * its objective with the cap at (or within PROTECT_FREEZE_NEAR x) its floor
 * cfg.freeze_after times (a leaky count: a window that meets it takes one
 * back), all but io_limit = batch_n - 1 of the batch_n batch containers
 * under the lever are frozen (cgroup freezer; agent/protect/freeze.c), and io_limit
 * is lowered by one after each further freeze_after misses, never below
 * PROTECT_FREEZE_MIN; after freeze_after windows with slack (ratio at most
 * PROTECT_OBJ_SLACK) without a miss it is raised by one, and once it
 * reaches batch_n nothing is frozen (io_limit 0).  The cap level rises only while nothing is
 * frozen: levers are released in the reverse order they were pulled.  No
 * protected container doing I/O for PROTECT_FREEZE_IDLE windows, none
 * left, or no batch container under the lever: io_limit 0.
 * Which ones are frozen: agent_protect_freeze_pick. */
#define PROTECT_FREEZE_AFTER 3
#define PROTECT_FREEZE_MIN 1
#define PROTECT_FREEZE_NEAR 2
/* No protected container doing I/O for this many windows in a row:
 * nothing frozen (one window without a completion may be a starved victim,
 * not an idle one). */
#define PROTECT_FREEZE_IDLE 3
/* A protected container stalled on I/O for at least this share of a
 * window with no request completed is starved, not idle: it counts as
 * busy, and as a miss (agent/protect/protection.c).  As the sampler's waiting
 * (agent/sample/sampler.c, STALL_WAITING). */
#define PROTECT_STARVED_STALL 0.5
/* Windows a frozen batch container waits before it may take the place of
 * one that has run as long (rotation: none starves). */
#define PROTECT_FREEZE_QUANTUM 5

/* Evidence that the levers help (an objective controller only).  A lever
 * slows the batch, which then stays beside the victim longer: it may lower
 * the victim's misses per second and still raise its misses in all.  The
 * batch's work is fixed, so the controller counts the victim's missed
 * windows per byte of batch I/O, over the busy windows with batch I/O,
 * apart for those that ran with a lever pulled (a cap, the freezer or a
 * hold; the I/O priority and the CPU weight go with them) and those that
 * ran free:
 *   - after `need` windows pulled (PROTECT_EVIDENCE_PULLED at first) with
 *     fewer than PROTECT_EVIDENCE_FREE free, every lever is released for
 *     the free windows missing (a probe);
 *   - with both, the levers help if the misses per byte pulled are at most
 *     PROTECT_EVIDENCE_HELP x those free.  If they do, the pulled windows
 *     are spent, the free ones halved (newer weigh more), and `need`
 *     doubles up to PROTECT_EVIDENCE_PULLED_MAX (fewer probes while they
 *     keep helping); if not, every lever is released for PROTECT_LET_GO
 *     windows (first, do no harm), and `need` starts again.
 * Released, a miss is still reported (status, io-pressure) but pulls no
 * lever.  Misses per byte: (misses + 1/2) / bytes, so that a state with
 * no miss still compares. */
#define PROTECT_EVIDENCE_PULLED 24
#define PROTECT_EVIDENCE_PULLED_MAX 192
#define PROTECT_EVIDENCE_FREE 8
#define PROTECT_EVIDENCE_HELP 0.8
#define PROTECT_LET_GO 240
struct agent_protect_evidence {
  /* [0] free, [1] pulled: busy windows with batch I/O, those the victim
   * missed, and the batch's bytes in them */
  double windows[2], misses[2], bytes[2];
  unsigned need;    /* pulled windows before the next judgement (0: PROTECT_EVIDENCE_PULLED) */
  unsigned release; /* windows left in which no lever acts */
  bool probing;     /* the release is a probe, not a let-go */
  double ratio;     /* the last judgement: misses per byte pulled / free; < 0 none */
  unsigned judged, let_go; /* judgements made, and those that let go */
};

struct agent_protect {
  struct agent_protect_cfg cfg;
  /* Set by the caller before each update: the batch containers under the
   * concurrency lever (running or frozen, not past their budget). */
  unsigned batch_n;
  unsigned io_limit;     /* batch containers that may do I/O at once; 0 no limit */
  unsigned floor_misses; /* misses near the floor (leaky) since the last step */
  unsigned freeze_slack; /* windows with slack since the last miss or step */
  unsigned idle_windows; /* windows in a row no protected container did I/O */
  /* Set by the caller before each update: the largest measured rate of a
   * capped batch container in the window (bytes/s, 0 unknown). */
  double batch_bps;
  /* Set by the caller before each update: a batch container did I/O in
   * the window.  Without that a miss is not the batch's doing: the
   * objective controller neither cuts nor raises on it. */
  bool batch_io;
  /* Set by the caller before each update: the bytes every batch
   * container moved in the window. */
  double batch_bytes;
  struct agent_protect_evidence ev;
  bool objective; /* the last update judged by a latency objective */
  /* I/O pressure, for node-problem-detector (iobatchctl check
   * io-pressure): a protected container missed its objective (or, by
   * share, was short) PROTECT_PRESSURE_ON windows in a row; it ends after
   * PROTECT_PRESSURE_OFF windows in a row without a miss. */
  bool missed, pressure;
  unsigned miss_windows, ok_windows;
  double worst_lat_ratio; /* its worst latency / target (objective); 0 none */
  bool active;            /* a protected container runs */
  bool short_;            /* a victim is short of its target: hold new batch containers */
  unsigned slack_windows; /* windows in a row in which every victim had slack */
  double level_bps;       /* cap per batch container; 0: no cap */
  double worst_share;
  char victim[256]; /* the victim furthest from its target, for status */
};

void agent_protect_init(struct agent_protect *p, const struct agent_protect_cfg *cfg);

/* Is protection limiting batch containers now?  By a latency objective
 * only while it caps or holds (an objective that is met costs the batch
 * nothing, its CPU weight included); by share while a victim runs. */
bool agent_protect_limiting(const struct agent_protect *p);

/* A learned latency objective: PROTECT_LEARN_FACTOR x the
 * PROTECT_LEARN_QUANTILE of the latencies of a container's quiet windows
 * (it did I/O, no batch container did), once it has PROTECT_LEARN_WINDOWS
 * of them; the last PROTECT_LEARN_KEEP count.  A high quantile, not the
 * median: a window's p99 is noisy, and an objective the container misses
 * alone in one window of three (PostgreSQL's WAL writes on a cloud disk,
 * with the median) caps the batch for misses it did not cause. */
#define PROTECT_LEARN_WINDOWS 10
#define PROTECT_LEARN_KEEP 32
#define PROTECT_LEARN_FACTOR 1.5
#define PROTECT_LEARN_QUANTILE 0.9
/* Where a protected container's latency objective comes from. */
enum agent_lat_target_source {
  AGENT_LAT_TARGET_NONE = 0, /* none yet: protection by its share */
  AGENT_LAT_TARGET_DECLARED, /* io.iobatch.latency-target */
  AGENT_LAT_TARGET_LEARNED,  /* from its quiet windows */
  AGENT_LAT_TARGET_PROFILE,  /* learned by an earlier container of its workload (profiles.json) */
};
/* Which objectives the agent uses (protect_objective). */
enum agent_protect_objective {
  AGENT_PROTECT_OBJECTIVE_AUTO = 0, /* declared, else learned */
  AGENT_PROTECT_OBJECTIVE_DECLARED, /* declared only */
  AGENT_PROTECT_OBJECTIVE_OFF,      /* none: protection by share alone */
};
/* "auto", "declared", "off"; "invalid" otherwise. */
const char *agent_protect_objective_name(int v);
/* "none", "declared", "learned", "profile". */
const char *agent_lat_target_source_name(int source);
/* A learned stall-share objective is at least this (a container that
 * never stalls alone would otherwise have an objective of 0). */
#define PROTECT_LEARN_STALL_MIN 0.02

struct agent_protect_learn {
  double lat[PROTECT_LEARN_KEEP];
  unsigned n;    /* windows kept (at most PROTECT_LEARN_KEEP) */
  unsigned next; /* ring position */
  unsigned seen; /* quiet windows seen in all */
};
/* One quiet window's latency (< 0 or not finite: ignored). */
void agent_protect_learn_add(struct agent_protect_learn *l, double lat);
/* The objective learned so far; 0 until PROTECT_LEARN_WINDOWS windows. */
double agent_protect_learn_target(const struct agent_protect_learn *l);

/* The batch's budget (protect_batch_budget, protect_unknown_delay): what
 * protection may add to a batch job's run, and when it has added that.
 *
 * A job's protection debt is the time protection alone added to it:
 *   - held: the time it was pending with a hold whose reason is protection
 *     (BATCH_HOLD_PROTECT: the batcher admitted it and protection held it
 *     back); a hold the batcher decides is batching, not protection;
 *   - frozen: the time the concurrency lever kept it frozen;
 *   - capped: for each sampling window in which its cap bound (its rate at
 *     least PROTECT_CAP_BINDS x the cap), window_len x (1 - rate / ref),
 *     ref being the rate it was getting before the cap: the running
 *     average of its rates in windows it did I/O uncapped (sharing the
 *     disk included), else its learned rate alone; with neither the whole
 *     window (agent_protect_cap_debt).  Where the disk does less than
 *     it was seen to do (its peak aggregate rate, decayed), ref is at
 *     least its rate plus its share of that spare: a reference taken
 *     beside neighbours that have left since would price the cap low.  In a window the cap did not
 * bind something else (its own pace, the disk it shares) set its rate, and the cap added nothing.
 * Sharing the disk alone adds nothing: an unprotected node would have run
 * the job as slowly.  The CPU weight protection lowers is not counted: it
 * takes only CPU the protected container uses, and a job at its bound
 * gets it back with the rest.
 *
 * Its bound: (budget - 1) x its expected runtime, the runtime alone of its
 * workload's profile, else the typical runtime of its class (the median of
 * its namespace's profiles of that class, agent/store/profiles.h); unknown,
 * (budget - 1) x the time it has run free so far, at most
 * protect_unknown_delay seconds (agent/protect/budget.c).  A job whose debt
 * reaches a bound that cannot grow any more runs free for good:
 * protection never caps, freezes, holds or lowers its CPU weight again
 * (agent/protect/budget.h keeps that once reached); one of unknown runtime under
 * its growing bound runs free until it has earned more. */
#define PROTECT_CAP_BINDS 0.9
/* protect_unknown_delay's default (s): the most protection adds to a job
 * of unknown runtime.  Long enough for the levers to act
 * on a miss: with 1 s windows a cut from the first cap reaches the floor
 * in two or three windows, and each step of the concurrency lever takes
 * protect_freeze_after (3) misses at the floor, so walking the whole ladder
 * and back takes some tens of seconds, as does a service's burst (a
 * checkpoint, a compaction).  Short enough that a job the agent knows
 * nothing of loses at most a minute to protection: what the default budget
 * (1.5) lets protection add to a two-minute job. */
#define PROTECT_UNKNOWN_DELAY_S 60.0
/* Its bound in seconds: BUDGET <= 0 (or not a number): none (INFINITY);
 * EXPECTED_S > 0: (BUDGET - 1) x EXPECTED_S, 0 for a budget at most 1
 * (protection may add nothing); else UNKNOWN_S. */
double agent_protect_budget_s(double budget, double expected_s, double unknown_s);
/* What one window of WINDOW_S seconds under a cap of CAP bytes/s (0: none)
 * added, the job moving RATE bytes/s in it, REF (<= 0: unknown) the rate
 * it was getting before the cap (see above). */
/* Whether a cap of CAP bytes/s bound a window's RATE (the rule above). */
bool agent_protect_cap_binds(double rate, double cap);
double agent_protect_cap_debt(double window_s, double rate, double cap, double ref);
/* Whether a debt of DEBT_S has reached a bound of BOUND_S. */
bool agent_protect_over_budget(double debt_s, double bound_s);
/* When a debt of DEBT_S at NOW_MS, growing one second a second (a hold or
 * a freeze), reaches BOUND_S: UINT64_MAX never. */
uint64_t agent_protect_budget_at(uint64_t now_ms, double debt_s, double bound_s);
/* One batch container under the concurrency lever. */
struct agent_freeze_cand {
  const char *id;
  uint64_t since_ms; /* when it started: the longest-running is frozen last */
  bool frozen;       /* in: frozen now; out: frozen from now on */
  unsigned windows;  /* in/out: windows in a row in its present state */
};
/* Which of the N candidates are frozen so that at most LIMIT do I/O (0: no
 * limit, none frozen):
 *   - rotation first: a candidate frozen for PROTECT_FREEZE_QUANTUM windows
 *     or more (the longest first) takes the place of a running one that
 *     has run as long (the most recently started first);
 *   - then more than LIMIT running: the most recently started are frozen;
 *     fewer: the longest frozen are thawed.
 * windows restarts at 1 for a candidate whose state changes and grows by
 * one otherwise.  Returns how many are frozen. */
size_t agent_protect_freeze_pick(struct agent_freeze_cand *c, size_t n, unsigned limit);

/* A new sample of the n protected containers that run (n = 0: none).
 * Returns true when the cap level changed (the caller rewrites the caps). */
bool agent_protect_update(struct agent_protect *p, const struct agent_protect_obs *obs, size_t n);

#endif
