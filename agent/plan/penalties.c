// SPDX-License-Identifier: Apache-2.0
#include "agent/plan/penalties.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/cleanup.h"
#include "common/file.h"
#include "common/xalloc.h"

/* Weight of a new sample in the running average. */
#define PEN_LEARN_RATE 0.2
#define PEN_MAX_SAMPLES 1000000000u

#define cleanup_json __attribute__((cleanup(json_decrefp)))

int agent_penalties_init(struct agent_penalties *pen, const char *state_dir,
                         struct iob_error **err) {
  memset(pen, 0, sizeof(*pen));
  if (state_dir == NULL)
    return 0;
  if (mkdir(state_dir, 0700) < 0 && errno != EEXIST)
    return iob_error(err, errno, "cannot create state directory '%s'", state_dir);
  pen->path = xasprintf("%s/%s", state_dir, AGENT_PENALTIES_FILE);
  return 0;
}

void agent_penalties_release(struct agent_penalties *pen) {
  free(pen->path);
  pen->path = NULL;
}

static void clear(struct agent_penalties *pen) {
  memset(pen->p, 0, sizeof(pen->p));
}

/* A tenant's name as the pair keeps it: FNV-1a, never 0 (0 is "none"). */
static uint32_t tenant_hash(const char *t) {
  uint32_t h = 2166136261u;
  for (const unsigned char *p = (const unsigned char *)t; *p; p++)
    h = (h ^ *p) * 16777619u;
  return h ? h : 1;
}

static void learn(struct agent_pen_stream *e, double slowdown, double weight, bool new_corun) {
  /* Averaged as the share of its solo rate the victim got (1/slowdown),
   * not as slowdowns: what decides a makespan is the bytes it moved over
   * the co-run.  A disk that serves the two by turns (an HDD's queue
   * drained stream by stream) gives windows of 1x and 100x; the pair
   * then took as long as one after the other (a slowdown of 2 each),
   * which the mean of the ratios (about 50) would call a large penalty. */
  if (e->samples == 0)
    e->slowdown = slowdown;
  else {
    double share = 1 / e->slowdown;
    share += PEN_LEARN_RATE * weight * (1 / slowdown - share);
    e->slowdown = 1 / share;
  }
  if (e->samples < PEN_MAX_SAMPLES)
    e->samples++;
  if (new_corun && e->coruns < PEN_MAX_SAMPLES)
    e->coruns++;
}

void agent_penalties_observe(struct agent_penalties *pen, enum batch_class victim,
                             enum batch_class neighbour, double slowdown, bool new_corun,
                             const char *untrusted_tenant) {
  agent_penalties_observe_share(pen, victim, neighbour, slowdown, 1, new_corun, untrusted_tenant);
}

void agent_penalties_observe_share(struct agent_penalties *pen, enum batch_class victim,
                                   enum batch_class neighbour, double slowdown, double weight,
                                   bool new_corun, const char *untrusted_tenant) {
  if (!batch_class_does_io(victim) || !batch_class_does_io(neighbour) || !isfinite(slowdown) ||
      slowdown <= 0 || !(weight > 0))
    return;
  if (weight > 1)
    weight = 1;
  if (slowdown > AGENT_PEN_MAX_SLOWDOWN)
    slowdown = AGENT_PEN_MAX_SLOWDOWN;
  struct agent_pen_pair *e = &pen->p[victim][neighbour];
  if (untrusted_tenant == NULL)
    learn(&e->t, slowdown, weight, new_corun);
  else {
    uint32_t h = tenant_hash(untrusted_tenant);
    if (e->u_tenants[0] == 0)
      e->u_tenants[0] = h;
    else if (e->u_tenants[1] == 0 && e->u_tenants[0] != h)
      e->u_tenants[1] = h;
    learn(&e->u, slowdown, weight, new_corun);
  }
  pen->dirty = true;
}

const struct agent_pen_stream *agent_penalties_stream(const struct agent_penalties *pen,
                                                      enum batch_class v, enum batch_class n) {
  if ((unsigned)v >= BATCH_NCLASS || (unsigned)n >= BATCH_NCLASS)
    return NULL;
  const struct agent_pen_pair *e = &pen->p[v][n];
  return e->t.samples ? &e->t : e->u.samples ? &e->u : NULL;
}

bool agent_penalties_in_use(const struct agent_penalties *pen, enum batch_class v,
                            enum batch_class n) {
  const struct agent_pen_stream *s = agent_penalties_stream(pen, v, n);
  if (s == NULL || s->coruns < AGENT_PEN_MIN_CORUNS || !(s->slowdown > 0))
    return false;
  return s == &pen->p[v][n].t || pen->p[v][n].u_tenants[1] != 0;
}

void agent_penalties_apply(const struct agent_penalties *pen, struct batch_config *cfg) {
  for (int v = 0; v < BATCH_NCLASS; v++)
    for (int n = 0; n < BATCH_NCLASS; n++) {
      if (!agent_penalties_in_use(pen, (enum batch_class)v, (enum batch_class)n))
        continue;
      double extra =
          agent_penalties_stream(pen, (enum batch_class)v, (enum batch_class)n)->slowdown - 1;
      double s = cfg->slowdown_scale > 0 ? extra / cfg->slowdown_scale : 0;
      s = s > 0 ? (s < BATCH_PENALTY_MAX ? s : BATCH_PENALTY_MAX) : 0;
      /* known without measured: the administrator's matrix said it */
      bool admin = cfg->known[v][n] && !cfg->measured[v][n];
      if (admin && s < cfg->s[v][n])
        continue;
      cfg->s[v][n] = s;
      cfg->known[v][n] = true;
      cfg->measured[v][n] = true;
    }
}

static int stream_from(struct agent_pen_stream *e, double sd, json_int_t samples,
                       json_int_t coruns) {
  if (samples < 0 || samples > (json_int_t)PEN_MAX_SAMPLES || coruns < 0 || coruns > samples ||
      (samples == 0 ? sd != 0 : !(sd > 0 && sd <= AGENT_PEN_MAX_SLOWDOWN)))
    return -1;
  e->slowdown = sd;
  e->samples = (uint32_t)samples;
  e->coruns = (uint32_t)coruns;
  return 0;
}

static int from_json(struct agent_penalties *pen, json_t *root, const char *name,
                     struct iob_error **err) {
  if (!json_is_object(root))
    return iob_error_code(err, IOB_CODE_DATA_LOSS, "'%s': top level is not an object", name);
  json_t *ver = json_object_get(root, "version");
  if (!json_is_integer(ver) || json_integer_value(ver) != 1)
    return iob_error_code(err, IOB_CODE_DATA_LOSS, "'%s': missing or unsupported 'version'", name);
  json_t *pairs = json_object_get(root, "pairs");
  if (!json_is_array(pairs))
    return iob_error_code(err, IOB_CODE_DATA_LOSS, "'%s': 'pairs' is not an array", name);
  size_t i;
  json_t *v;
  json_array_foreach(pairs, i, v) {
    const char *vc = NULL, *nc = NULL;
    double sd = 0, usd = 0;
    json_int_t samples = 0, coruns = 0, usamples = 0, ucoruns = 0, t0 = 0, t1 = 0;
    json_t *u = NULL;
    json_error_t je;
    if (json_unpack_ex(v, &je, JSON_STRICT, "{s:s, s:s, s:F, s:I, s:I, s?o}", "victim", &vc,
                       "neighbour", &nc, "slowdown", &sd, "samples", &samples, "coruns", &coruns,
                       "untrusted", &u) < 0)
      return iob_error_code(err, IOB_CODE_DATA_LOSS, "'%s': pair %zu: %s", name, i, je.text);
    if (u && json_unpack_ex(u, &je, JSON_STRICT, "{s:F, s:I, s:I, s:[I, I]}", "slowdown", &usd,
                            "samples", &usamples, "coruns", &ucoruns, "tenants", &t0, &t1) < 0)
      return iob_error_code(err, IOB_CODE_DATA_LOSS, "'%s': pair %zu: untrusted: %s", name, i,
                            je.text);
    int a = batch_class_from_name(vc), b = batch_class_from_name(nc);
    if (a < 0 || b < 0 || !batch_class_does_io((enum batch_class)a) ||
        !batch_class_does_io((enum batch_class)b))
      return iob_error_code(err, IOB_CODE_DATA_LOSS,
                            "'%s': pair %zu: '%.40s' / '%.40s' is not a pair of I/O classes", name,
                            i, vc, nc);
    struct agent_pen_pair *e = &pen->p[a][b];
    if (e->t.samples || e->u.samples)
      return iob_error_code(err, IOB_CODE_DATA_LOSS, "'%s': pair (%s, %s) given twice", name, vc,
                            nc);
    if (stream_from(&e->t, sd, samples, coruns) < 0 ||
        (u && (stream_from(&e->u, usd, usamples, ucoruns) < 0 || usamples == 0 || t0 <= 0 ||
               t0 > (json_int_t)UINT32_MAX || t1 < 0 || t1 > (json_int_t)UINT32_MAX || t1 == t0)) ||
        (samples == 0 && !u))
      return iob_error_code(err, IOB_CODE_DATA_LOSS, "'%s': pair %zu (%s, %s) has invalid values",
                            name, i, vc, nc);
    e->u_tenants[0] = (uint32_t)t0;
    e->u_tenants[1] = (uint32_t)t1;
  }
  return 0;
}

int agent_penalties_parse(struct agent_penalties *pen, const char *name, const char *buf,
                          size_t len, struct iob_error **err) {
  clear(pen);
  cleanup_json json_t *root = iob_state_json(name, buf, len, AGENT_PENALTIES_MAX_BYTES, err);
  if (root == NULL)
    return -1;
  if (from_json(pen, root, name, err) < 0) {
    clear(pen);
    return -1;
  }
  return 0;
}

int agent_penalties_load(struct agent_penalties *pen, struct iob_error **err) {
  clear(pen);
  if (pen->path == NULL)
    return 0;
  cleanup_free char *buf = NULL;
  size_t len = 0;
  cleanup_error struct iob_error *cause = NULL;
  if (iob_read_file(pen->path, AGENT_PENALTIES_MAX_BYTES, &buf, &len, &cause) < 0) {
    if (cause->errno_ == ENOENT)
      return 0;
    return iob_error(err, cause->errno_, "%s", cause->msg);
  }
  if (agent_penalties_parse(pen, pen->path, buf, len, &cause) == 0)
    return 0;
  /* Keep an unreadable file for a human to look at. */
  return iob_state_set_aside(pen->path, cause->msg, "starting with no measured penalties", err);
}

char *agent_penalties_encode(const struct agent_penalties *pen) {
  /* Class names and finite slowdowns (agent_penalties_observe, from_json):
   * jansson fails here only when out of memory. */
  cleanup_json json_t *pairs = json_array();
  if (pairs == NULL)
    iob_oom();
  for (int v = 0; v < BATCH_NCLASS; v++)
    for (int n = 0; n < BATCH_NCLASS; n++) {
      const struct agent_pen_pair *e = &pen->p[v][n];
      if (e->t.samples == 0 && e->u.samples == 0)
        continue;
      json_t *o =
          json_pack("{s:s, s:s, s:f, s:I, s:I}", "victim", batch_class_name((enum batch_class)v),
                    "neighbour", batch_class_name((enum batch_class)n), "slowdown", e->t.slowdown,
                    "samples", (json_int_t)e->t.samples, "coruns", (json_int_t)e->t.coruns);
      if (o == NULL)
        iob_oom();
      if (e->u.samples) {
        json_t *u = json_pack("{s:f, s:I, s:I, s:[I, I]}", "slowdown", e->u.slowdown, "samples",
                              (json_int_t)e->u.samples, "coruns", (json_int_t)e->u.coruns,
                              "tenants", (json_int_t)e->u_tenants[0], (json_int_t)e->u_tenants[1]);
        if (u == NULL || json_object_set_new(o, "untrusted", u) < 0)
          iob_oom();
      }
      if (json_array_append_new(pairs, o) < 0)
        iob_oom();
    }
  cleanup_json json_t *root = json_pack("{s:i, s:O}", "version", 1, "pairs", pairs);
  if (root == NULL)
    iob_oom();
  char *text = json_dumps(root, JSON_INDENT(1));
  if (text == NULL)
    iob_oom();
  return text;
}

int agent_penalties_save(struct agent_penalties *pen, struct iob_error **err) {
  if (pen->path == NULL || !pen->dirty)
    return 0;
  cleanup_free char *text = agent_penalties_encode(pen);
  if (iob_write_file_atomic(pen->path, text, strlen(text), 0600, err) < 0)
    return -1;
  pen->dirty = false;
  return 0;
}
