/* Protection of latency-sensitive containers (issue #12).
 *
 * While a protected container runs (declared io.iobatch.class=latency, or
 * detected when `protect = detected`), batch containers that share the
 * disk run under a throughput cap, one level for all of them, moved by the
 * victims' measured slack once per sample (AIMD):
 *   - every victim within its target (its rate at least min_share of its
 *     rate alone, its io.pressure stall at most max_stall_ratio of its
 *     stall alone, where known): the level grows by `raise`, and beyond
 *     cap_max_bps the cap is lifted;
 *   - a victim short of its target: the level is cut by `cut` (not below
 *     cap_floor_bps), and no new batch container is admitted until the
 *     victims have had slack for PROTECT_SLACK_WINDOWS windows in a row
 *     (holding is the lever of last resort);
 * and everything is lifted when the last protected container is gone.
 * No I/O here: the daemon measures and writes the caps. */
#ifndef IOB_AGENT_PROTECT_H
#define IOB_AGENT_PROTECT_H

#include <stdbool.h>
#include <stddef.h>

struct agent_protect_cfg {
  double min_share;       /* 0.85 of its rate alone */
  double max_stall_ratio; /* 1.25 x its io.pressure stall alone */
  double cap_start_bps;   /* first level: 64 MiB/s */
  double cap_floor_bps;   /* lowest level: 2 MiB/s */
  double cap_max_bps;     /* above it the cap is lifted: 2 GiB/s */
  double raise, cut;      /* x1.25 with slack, x0.5 without */
};
void agent_protect_cfg_default(struct agent_protect_cfg *cfg);

/* One protected container's last window. */
struct agent_protect_obs {
  const char *id;
  double share; /* rate / rate alone; < 0 unknown (no neighbours, no baseline) */
  double stall; /* io.pressure some % / that alone; < 0 unknown */
};

/* Windows in a row with slack before held batch containers may start. */
#define PROTECT_SLACK_WINDOWS 2

struct agent_protect {
  struct agent_protect_cfg cfg;
  bool active;            /* a protected container runs */
  bool short_;            /* a victim is short of its target: hold new batch containers */
  unsigned slack_windows; /* windows in a row in which every victim had slack */
  double level_bps;       /* cap per batch container; 0: no cap */
  double worst_share;
  char victim[256]; /* the victim furthest from its target, for status */
};

void agent_protect_init(struct agent_protect *p, const struct agent_protect_cfg *cfg);
/* A new sample of the n protected containers that run (n = 0: none).
 * Returns true when the cap level changed (the caller rewrites the caps). */
bool agent_protect_update(struct agent_protect *p, const struct agent_protect_obs *obs, size_t n);

#endif
