// SPDX-License-Identifier: Apache-2.0
#include "agent/store/profiles.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/file.h"
#include "common/xalloc.h"

/* Weight of a new observation in the running average: recent runs count
 * more, one odd run does not erase the history. */
#define LEARN_RATE 0.3

/* jansson's own scope cleanup (json_auto_t) */
#define cleanup_json __attribute__((cleanup(json_decrefp)))

int agent_profiles_init(struct agent_profiles *p, const char *state_dir, struct iob_error **err) {
  memset(p, 0, sizeof(*p));
  if (mkdir(state_dir, 0700) < 0 && errno != EEXIST)
    return iob_error(err, errno, "cannot create state directory '%s'", state_dir);
  p->path = xasprintf("%s/%s", state_dir, AGENT_PROFILES_FILE);
  return 0;
}

static void clear(struct agent_profiles *p) {
  for (size_t i = 0; i < p->n; i++) {
    free(p->v[i].ns);
    free(p->v[i].key);
  }
  free(p->v);
  p->v = NULL;
  p->n = p->cap = 0;
  p->gen++;
}

void agent_profiles_release(struct agent_profiles *p) {
  clear(p);
  free(p->path);
  p->path = NULL;
}

static const char *nz(const char *s) {
  return s ? s : "";
}

static struct agent_profile *find(const struct agent_profiles *p, const char *ns, const char *key) {
  for (size_t i = 0; i < p->n; i++)
    if (strcmp(p->v[i].key, key) == 0 && strcmp(p->v[i].ns, nz(ns)) == 0)
      return &p->v[i];
  return NULL;
}

const struct agent_profile *agent_profiles_get(const struct agent_profiles *p, const char *ns,
                                               const char *key) {
  if (key == NULL || *key == '\0')
    return NULL;
  return find(p, ns, key);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double agent_profiles_class_typical(const struct agent_profiles *p, const char *ns,
                                    const char *cls) {
  cleanup_free double *v = xcalloc(p->n + 1, sizeof(*v));
  size_t k = 0;
  for (size_t i = 0; i < p->n; i++)
    if (p->v[i].solo_s > 0 && strcmp(p->v[i].cls, cls) == 0 && strcmp(p->v[i].ns, nz(ns)) == 0)
      v[k++] = p->v[i].solo_s;
  if (k == 0)
    return 0;
  qsort(v, k, sizeof(*v), cmp_double);
  return k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
}

static size_t count_ns(const struct agent_profiles *p, const char *ns) {
  size_t k = 0;
  for (size_t i = 0; i < p->n; i++)
    k += strcmp(p->v[i].ns, ns) == 0;
  return k;
}

/* The least recently updated profile of namespace NS. */
static void evict_oldest(struct agent_profiles *p, const char *ns) {
  size_t old = SIZE_MAX;
  for (size_t i = 0; i < p->n; i++)
    if (strcmp(p->v[i].ns, ns) == 0 && (old == SIZE_MAX || p->v[i].updated < p->v[old].updated))
      old = i;
  if (old == SIZE_MAX)
    return;
  free(p->v[old].ns);
  free(p->v[old].key);
  p->v[old] = p->v[--p->n];
  p->gen++;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A copy of the name of the namespace holding the most profiles (sorted
 * names, the longest run: O(n log n) over a full store). */
static char *largest_ns(const struct agent_profiles *p) {
  const char **names = xmalloc(p->n * sizeof(*names));
  for (size_t i = 0; i < p->n; i++)
    names[i] = p->v[i].ns;
  qsort(names, p->n, sizeof(*names), cmp_str);
  size_t best = 0, best_n = 0;
  for (size_t i = 0, run = 0; i < p->n; i++) {
    run = i > 0 && strcmp(names[i], names[i - 1]) == 0 ? run + 1 : 1;
    if (run > best_n)
      best = i, best_n = run;
  }
  char *out = xstrdup(names[best]);
  free(names);
  return out;
}

/* Make room for one more, evicting when the namespace or the store is full
 * (bounded memory and file size whatever the keys are, and one namespace's
 * keys never push out another's while that one is within its share). */
static struct agent_profile *add(struct agent_profiles *p, const char *ns, const char *key) {
  size_t per_ns = p->per_ns_max ? p->per_ns_max : AGENT_PROFILES_MAX;
  if (count_ns(p, nz(ns)) >= per_ns) {
    evict_oldest(p, nz(ns));
  } else if (p->n >= AGENT_PROFILES_MAX) {
    char *victim = largest_ns(p);
    evict_oldest(p, victim);
    free(victim);
  }
  if (p->n == p->cap) {
    p->cap = p->cap ? p->cap * 2 : 16;
    p->v = xrealloc(p->v, p->cap * sizeof(*p->v));
  }
  struct agent_profile *e = &p->v[p->n];
  memset(e, 0, sizeof(*e));
  /* A run can teach a duration before any class: the file must still say
   * something the next load accepts. */
  snprintf(e->cls, sizeof(e->cls), "unknown");
  e->key = xstrdup(key);
  e->ns = xstrdup(nz(ns));
  p->n++;
  return e;
}

static bool valid_class_name(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n >= sizeof(((struct agent_profile *)0)->cls))
    return false;
  for (size_t i = 0; i < n; i++)
    if (!((s[i] >= 'a' && s[i] <= 'z') || s[i] == '-'))
      return false;
  return true;
}

static double avg(double old, double now) {
  if (now <= 0 || !isfinite(now))
    return old;
  if (old <= 0)
    return now;
  return old + LEARN_RATE * (now - old);
}

int agent_profiles_learn(struct agent_profiles *p, const char *ns, const char *key,
                         const struct agent_profile_update *u, struct iob_error **err) {
  if (key == NULL || *key == '\0')
    return 0; /* nothing names this workload: nothing to learn into */
  if (strlen(key) > AGENT_PROFILE_KEY_MAX)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "workload key too long: %zu bytes, at most %d", strlen(key),
                          AGENT_PROFILE_KEY_MAX);
  if (strlen(nz(ns)) > AGENT_PROFILE_NS_MAX)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "namespace too long: %zu bytes, at most %d", strlen(ns),
                          AGENT_PROFILE_NS_MAX);
  if (u->cls && *u->cls && !valid_class_name(u->cls))
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid class name '%s'", u->cls);
  struct agent_profile *e = find(p, ns, key);
  if (e == NULL)
    e = add(p, ns, key);
  double was_s = e->solo_s;
  if (u->cls && *u->cls) {
    p->gen += strcmp(e->cls, u->cls) != 0;
    snprintf(e->cls, sizeof(e->cls), "%s", u->cls);
    e->confidence = u->confidence;
  }
  e->solo_s = avg(e->solo_s, u->solo_s);
  p->gen += e->solo_s != was_s;
  e->solo_bps = avg(e->solo_bps, u->solo_bps);
  if (u->run_finished)
    e->runs++;
  e->updated = (int64_t)time(NULL);
  return 0;
}

/* ---- file format ----
 * {"version": 1,
 *  "profiles": {"KEY": {"class": "seq-write", "confidence": 1, "solo_s": 12.5,
 *               "solo_bps": 1.2e8, "runs": 3, "updated": 1700000000}},
 *  "namespaces": {"NS": {"KEY": {...as above...}}}}
 * "profiles" holds namespace "" (every profile of a file written before
 * namespaces, which loads as it is); "namespaces" the others.  An older
 * agent reads "profiles" and ignores "namespaces". */

static int check_key(const char *ns, const char *key, struct iob_error **err) {
  if (key == NULL || *key == '\0')
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "no workload key");
  if (strlen(key) > AGENT_PROFILE_KEY_MAX)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "workload key too long: %zu bytes, at most %d", strlen(key),
                          AGENT_PROFILE_KEY_MAX);
  if (strlen(nz(ns)) > AGENT_PROFILE_NS_MAX)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "namespace too long: %zu bytes, at most %d", strlen(ns),
                          AGENT_PROFILE_NS_MAX);
  return 0;
}

static bool objective_ok(double target, bool approx) {
  return target > 0 && isfinite(target) && (!approx || target <= 1);
}

int agent_profiles_learn_objective(struct agent_profiles *p, const char *ns, const char *key,
                                   double target, bool approx, struct iob_error **err) {
  if (check_key(ns, key, err) < 0)
    return -1;
  if (!objective_ok(target, approx))
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid latency objective %g", target);
  struct agent_profile *e = find(p, ns, key);
  if (e == NULL)
    e = add(p, ns, key);
  e->lat_target = target;
  e->lat_approx = approx;
  e->updated = (int64_t)time(NULL);
  return 0;
}

/* The "objectives" array (profiles.h): each into its profile. */
static int objectives_from_json(struct agent_profiles *p, json_t *objs, const char *path,
                                struct iob_error **err) {
  if (!json_is_array(objs))
    return iob_error_code(err, IOB_CODE_DATA_LOSS, "'%s': 'objectives' is not an array", path);
  if (json_array_size(objs) > AGENT_PROFILES_MAX)
    return iob_error_code(err, IOB_CODE_DATA_LOSS, "'%s': more than %d objectives", path,
                          AGENT_PROFILES_MAX);
  size_t i;
  json_t *v;
  json_array_foreach(objs, i, v) {
    const char *ns = NULL, *key = NULL;
    double target = 0;
    int approx = 0;
    json_error_t je;
    cleanup_error struct iob_error *e = NULL;
    if (json_unpack_ex(v, &je, JSON_STRICT, "{s:s, s:s, s:F, s:b}", "namespace", &ns, "key", &key,
                       "lat_target", &target, "approx", &approx) < 0)
      return iob_error_code(err, IOB_CODE_DATA_LOSS, "'%s': objective %zu: %s", path, i, je.text);
    if (p->n >= AGENT_PROFILES_MAX && find(p, ns, key) == NULL)
      return iob_error_code(err, IOB_CODE_DATA_LOSS, "'%s': more than %d profiles", path,
                            AGENT_PROFILES_MAX);
    if (agent_profiles_learn_objective(p, ns, key, target, approx, &e) < 0)
      return iob_error_code(err, IOB_CODE_DATA_LOSS, "'%s': objective %zu: %s", path, i, e->msg);
  }
  return 0;
}

static int profiles_from_json(struct agent_profiles *p, const char *ns, json_t *profs,
                              const char *path, struct iob_error **err) {
  const char *key;
  json_t *v;
  json_object_foreach(profs, key, v) {
    const char *cls = NULL;
    double conf = 0, solo_s = 0, solo_bps = 0;
    json_int_t runs = 0, updated = 0;
    json_error_t je;
    if (json_unpack_ex(v, &je, JSON_STRICT, "{s:s, s:F, s:F, s:F, s:I, s:I}", "class", &cls,
                       "confidence", &conf, "solo_s", &solo_s, "solo_bps", &solo_bps, "runs", &runs,
                       "updated", &updated) < 0)
      return iob_error_code(err, IOB_CODE_DATA_LOSS, "'%s': profile '%s': %s", path, key, je.text);
    if (strlen(key) == 0 || strlen(key) > AGENT_PROFILE_KEY_MAX || !valid_class_name(cls) ||
        !(conf >= 0 && conf <= 1) || !(solo_s >= 0 && isfinite(solo_s)) ||
        !(solo_bps >= 0 && isfinite(solo_bps)) || runs < 0 || runs > (json_int_t)UINT32_MAX)
      return iob_error_code(err, IOB_CODE_DATA_LOSS, "'%s': profile '%s' has invalid values", path,
                            key);
    if (p->n >= AGENT_PROFILES_MAX)
      return iob_error_code(err, IOB_CODE_DATA_LOSS, "'%s': more than %d profiles", path,
                            AGENT_PROFILES_MAX);
    struct agent_profile *e = add(p, ns, key);
    snprintf(e->cls, sizeof(e->cls), "%s", cls);
    e->confidence = conf;
    e->solo_s = solo_s;
    e->solo_bps = solo_bps;
    e->runs = (unsigned)runs;
    e->updated = (int64_t)updated;
  }
  return 0;
}

static int profiles_part(struct agent_profiles *p, json_t *root, const char *path,
                         struct iob_error **err) {
  if (!json_is_object(root))
    return iob_error_code(err, IOB_CODE_DATA_LOSS, "'%s': top level is not an object", path);
  json_t *ver = json_object_get(root, "version");
  if (!json_is_integer(ver) || json_integer_value(ver) != 1)
    return iob_error_code(err, IOB_CODE_DATA_LOSS, "'%s': missing or unsupported 'version'", path);
  json_t *profs = json_object_get(root, "profiles");
  if (!json_is_object(profs))
    return iob_error_code(err, IOB_CODE_DATA_LOSS, "'%s': 'profiles' is not an object", path);
  if (json_object_size(profs) > AGENT_PROFILES_MAX)
    return iob_error_code(err, IOB_CODE_DATA_LOSS, "'%s': %zu profiles, at most %d", path,
                          json_object_size(profs), AGENT_PROFILES_MAX);
  if (profiles_from_json(p, "", profs, path, err) < 0)
    return -1;
  json_t *nss = json_object_get(root, "namespaces");
  if (nss == NULL)
    return 0;
  if (!json_is_object(nss))
    return iob_error_code(err, IOB_CODE_DATA_LOSS, "'%s': 'namespaces' is not an object", path);
  const char *ns;
  json_t *v;
  json_object_foreach(nss, ns, v) {
    if (*ns == '\0' || strlen(ns) > AGENT_PROFILE_NS_MAX || !json_is_object(v))
      return iob_error_code(err, IOB_CODE_DATA_LOSS, "'%s': namespace '%.64s' is invalid", path,
                            ns);
    if (profiles_from_json(p, ns, v, path, err) < 0)
      return -1;
  }
  return 0;
}

static int from_json(struct agent_profiles *p, json_t *root, const char *path,
                     struct iob_error **err) {
  if (profiles_part(p, root, path, err) < 0)
    return -1;
  json_t *objs = json_object_get(root, "objectives");
  return objs ? objectives_from_json(p, objs, path, err) : 0;
}

/* Keep an unreadable file for a human to look at; the next save would
 * otherwise overwrite what may be months of learning. */
static int set_aside(const char *path, struct iob_error **cause, struct iob_error **err) {
  return iob_state_set_aside(path, (*cause)->msg, "starting with no profiles", err);
}

int agent_profiles_parse(struct agent_profiles *p, const char *name, const char *buf, size_t len,
                         struct iob_error **err) {
  clear(p);
  cleanup_json json_t *root = iob_state_json(name, buf, len, AGENT_PROFILES_MAX_BYTES, err);
  if (root == NULL)
    return -1;
  if (from_json(p, root, name, err) < 0) {
    clear(p);
    return -1;
  }
  return 0;
}

int agent_profiles_load(struct agent_profiles *p, struct iob_error **err) {
  clear(p);
  cleanup_close int fd = open(p->path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT)
      return 0;
    return iob_error(err, errno, "cannot open '%s'", p->path);
  }
  /* One byte more than allowed tells "too large" from "just fits". */
  cleanup_free char *buf = xmalloc(AGENT_PROFILES_MAX_BYTES + 1);
  size_t len = 0;
  for (;;) {
    ssize_t r = read(fd, buf + len, AGENT_PROFILES_MAX_BYTES + 1 - len);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      return iob_error(err, errno, "cannot read '%s'", p->path);
    if (r == 0 || (len += (size_t)r) > AGENT_PROFILES_MAX_BYTES)
      break;
  }
  cleanup_error struct iob_error *cause = NULL;
  if (agent_profiles_parse(p, p->path, buf, len, &cause) < 0)
    return set_aside(p->path, &cause, err);
  return 0;
}

/* ---- a file the next load accepts ----
 * Load refuses more than AGENT_PROFILES_MAX_BYTES, and what a save writes
 * grows with the keys as jansson escapes them (a control character as
 * \u00XX: 6 bytes), a key with an objective twice: 3 namespaces of 512
 * keys of 1024 control characters are 9.7 MB without objectives.  So a
 * save counts an upper bound of each profile's bytes and, when the sum is
 * over the limit, leaves profiles out of the file (not out of memory). */
#define ENTRY_FIXED 512 /* a profile's and its objective's names, numbers, indentation */
#define FILE_FIXED 256  /* version, the top-level names and braces */

/* A string as JSON: quoted, escaped. */
static size_t json_len(const char *s) {
  size_t n = 2;
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    n += c < 0x20 ? 6 : (c == '"' || c == '\\') ? 2 : 1;
  }
  return n;
}

/* The namespace is counted with each of its profiles: an upper bound. */
static size_t entry_bytes(const struct agent_profile *e) {
  size_t n = ENTRY_FIXED + json_len(e->key) + json_len(e->ns);
  if (e->lat_target > 0)
    n += json_len(e->key) + json_len(e->ns);
  return n;
}

static int cmp_ns_updated(const void *a, const void *b) {
  const struct agent_profile *x = *(const struct agent_profile *const *)a;
  const struct agent_profile *y = *(const struct agent_profile *const *)b;
  int c = strcmp(x->ns, y->ns);
  if (c != 0)
    return c;
  return (x->updated > y->updated) - (x->updated < y->updated);
}

struct ns_bytes {
  size_t next, end; /* into the sorted profiles: the oldest not left out yet */
  size_t bytes;
};

/* Which profiles a save leaves out (NULL: none): while the file would be
 * over the limit, the least recently updated profile of the namespace
 * that holds the most bytes, as add() evicts (one namespace's long keys
 * never push another's profiles out while that one holds fewer bytes). */
static bool *left_out(const struct agent_profiles *p) {
  size_t total = FILE_FIXED;
  for (size_t i = 0; i < p->n; i++)
    total += entry_bytes(&p->v[i]);
  if (total <= AGENT_PROFILES_MAX_BYTES)
    return NULL;
  const struct agent_profile **by = xmalloc(p->n * sizeof(*by));
  for (size_t i = 0; i < p->n; i++)
    by[i] = &p->v[i];
  qsort(by, p->n, sizeof(*by), cmp_ns_updated);
  struct ns_bytes *g = xmalloc(p->n * sizeof(*g));
  size_t ng = 0;
  for (size_t i = 0; i < p->n; i++) {
    if (i == 0 || strcmp(by[i]->ns, by[i - 1]->ns) != 0)
      g[ng++] = (struct ns_bytes){.next = i, .end = i, .bytes = 0};
    g[ng - 1].end = i + 1;
    g[ng - 1].bytes += entry_bytes(by[i]);
  }
  bool *out = xcalloc(p->n, sizeof(*out));
  while (total > AGENT_PROFILES_MAX_BYTES) {
    size_t big = 0;
    for (size_t k = 1; k < ng; k++)
      if (g[k].bytes > g[big].bytes)
        big = k;
    const struct agent_profile *e = by[g[big].next++];
    size_t b = entry_bytes(e);
    out[e - p->v] = true;
    g[big].bytes -= b;
    total -= b;
  }
  free(g);
  free(by);
  return out;
}

/* The "objectives" array into ROOT, when any is learned. */
static int objectives_to_json(const struct agent_profiles *p, const bool *skip, json_t *root) {
  cleanup_json json_t *objs = json_array();
  if (objs == NULL)
    return -1;
  for (size_t i = 0; i < p->n; i++) {
    const struct agent_profile *e = &p->v[i];
    if (!(e->lat_target > 0) || (skip && skip[i]))
      continue;
    json_t *o = json_pack("{s:s, s:s, s:f, s:b}", "namespace", e->ns, "key", e->key, "lat_target",
                          e->lat_target, "approx", (int)e->lat_approx);
    if (o == NULL || json_array_append_new(objs, o) < 0)
      return -1;
  }
  if (json_array_size(objs) == 0)
    return 0;
  return json_object_set(root, "objectives", objs);
}

/* The store as the file's JSON, but for the profiles SKIP (NULL: none) names. */
static json_t *to_json(const struct agent_profiles *p, const bool *skip) {
  cleanup_json json_t *profs = json_object();
  cleanup_json json_t *nss = json_object();
  if (profs == NULL || nss == NULL)
    return NULL;
  for (size_t i = 0; i < p->n; i++) {
    const struct agent_profile *e = &p->v[i];
    json_t *into = profs;
    if (skip && skip[i])
      continue;
    if (*e->ns) {
      into = json_object_get(nss, e->ns);
      if (into == NULL && (json_object_set_new(nss, e->ns, json_object()) < 0 ||
                           (into = json_object_get(nss, e->ns)) == NULL))
        return NULL;
    }
    json_t *o = json_pack("{s:s, s:f, s:f, s:f, s:I, s:I}", "class", e->cls, "confidence",
                          e->confidence, "solo_s", e->solo_s, "solo_bps", e->solo_bps, "runs",
                          (json_int_t)e->runs, "updated", (json_int_t)e->updated);
    if (o == NULL || json_object_set_new(into, e->key, o) < 0)
      return NULL;
  }
  json_t *root =
      json_object_size(nss) == 0
          ? json_pack("{s:i, s:O}", "version", 1, "profiles", profs)
          : json_pack("{s:i, s:O, s:O}", "version", 1, "profiles", profs, "namespaces", nss);
  if (root == NULL || objectives_to_json(p, skip, root) < 0) {
    json_decref(root);
    return NULL;
  }
  return root;
}

int agent_profiles_encode(const struct agent_profiles *p, char **text, size_t *len,
                          struct iob_error **err) {
  cleanup_free bool *skip = left_out(p);
  cleanup_json json_t *root = to_json(p, skip);
  /* Not out of memory alone: jansson refuses a key that is not UTF-8, and
   * namespaces and workload keys come from requests (protobuf-c does not
   * check the strings it decodes). */
  if (root == NULL)
    return iob_error_code(err, IOB_CODE_INTERNAL,
                          "cannot encode profiles: a namespace or workload key is not UTF-8, "
                          "or out of memory");
  cleanup_free char *dump = json_dumps(root, JSON_INDENT(1) | JSON_SORT_KEYS);
  if (dump == NULL)
    iob_oom();
  /* The text ends with a newline, as the file always has. */
  size_t n = strlen(dump);
  char *buf = xmalloc(n + 2);
  memcpy(buf, dump, n);
  buf[n] = '\n';
  buf[n + 1] = '\0';
  *text = buf;
  *len = n + 1;
  return 0;
}

int agent_profiles_save(const struct agent_profiles *p, struct iob_error **err) {
  cleanup_free char *text = NULL;
  size_t len;
  if (agent_profiles_encode(p, &text, &len, err) < 0)
    return -1;
  return iob_write_file_atomic(p->path, text, len, 0600, err);
}
