// SPDX-License-Identifier: Apache-2.0
/* Pod rules (agent/kube/podrules.h). */
#include "agent/kube/podrules.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batcher/batcher.h"
#include "batcher/kind.h"

#define WHY(...) (snprintf(why, why_len, __VA_ARGS__), -1)

static bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

static bool all_name_chars(const char *s, size_t n, const char *extra) {
  for (size_t i = 0; i < n; i++)
    if (!name_char(s[i]) && (extra == NULL || strchr(extra, s[i]) == NULL || s[i] == '\0'))
      return false;
  return true;
}

/* A label "key=value" as Kubernetes allows it: an optional DNS prefix and
 * '/', a name of at most 63; a value of at most 63 (may be empty). */
static bool label_ok(const char *s) {
  const char *eq = strchr(s, '=');
  if (eq == NULL || eq == s)
    return false;
  size_t klen = (size_t)(eq - s), vlen = strlen(eq + 1);
  const char *slash = memchr(s, '/', klen);
  size_t nlen = slash ? klen - (size_t)(slash - s) - 1 : klen;
  if (nlen == 0 || nlen > 63 || (slash && (slash == s || slash - s > 253)) || vlen > 63)
    return false;
  return all_name_chars(s, klen, "/") && all_name_chars(eq + 1, vlen, NULL);
}

static int qos_of(const char *v, char *out, size_t len) {
  static const char *const names[] = {"guaranteed", "burstable", "besteffort"};
  for (size_t i = 0; i < 3; i++)
    if (strcasecmp(v, names[i]) == 0) {
      snprintf(out, len, "%s", names[i]);
      return 0;
    }
  return -1;
}

/* "5ms", "500us", "0.2s" -> microseconds, 1 to AGENT_POD_LAT_MAX_US. */
static int parse_lat_us(const char *s, uint32_t *us) {
  if (*s < '0' || *s > '9')
    return -1;
  char *end = NULL;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || !isfinite(v))
    return -1;
  double mul;
  if (strcmp(end, "us") == 0)
    mul = 1;
  else if (strcmp(end, "ms") == 0)
    mul = 1000;
  else if (strcmp(end, "s") == 0)
    mul = 1e6;
  else
    return -1;
  v *= mul;
  if (v < 1 || v > AGENT_POD_LAT_MAX_US)
    return -1;
  *us = (uint32_t)llround(v);
  return 0;
}

static int selector(const char *tok, struct agent_pod_rule *r, char *why, size_t why_len) {
  if (strncmp(tok, "namespace=", 10) == 0) {
    const char *v = tok + 10;
    if (r->ns[0])
      return WHY("namespace given twice");
    if (*v == '\0' || strlen(v) >= sizeof(r->ns) || !all_name_chars(v, strlen(v), NULL))
      return WHY("bad namespace '%s'", v);
    snprintf(r->ns, sizeof(r->ns), "%s", v);
    return 0;
  }
  if (strncmp(tok, "qos=", 4) == 0) {
    if (r->qos[0])
      return WHY("qos given twice");
    if (qos_of(tok + 4, r->qos, sizeof(r->qos)) < 0)
      return WHY("bad qos '%s': guaranteed, burstable or besteffort", tok + 4);
    return 0;
  }
  if (strncmp(tok, "label:", 6) == 0) {
    const char *v = tok + 6;
    if (r->n_labels == AGENT_POD_RULE_LABELS)
      return WHY("more than %d labels", AGENT_POD_RULE_LABELS);
    if (strlen(v) >= AGENT_POD_LABEL_MAX || !label_ok(v))
      return WHY("bad label selector '%s': label:KEY=VALUE", v);
    snprintf(r->labels[r->n_labels++], AGENT_POD_LABEL_MAX, "%s", v);
    return 0;
  }
  return WHY("unknown selector '%s': namespace=, qos= or label:", tok);
}

static int effect(const char *tok, struct agent_pod_rule *r, char *why, size_t why_len) {
  if (strncmp(tok, "kind=", 5) == 0) {
    const char *v = tok + 5;
    if (r->kind[0])
      return WHY("kind given twice");
    enum batch_kind k;
    if (batch_kind_parse(v, &k) < 0 || k == BATCH_KIND_SANDBOX)
      return WHY("bad kind '%s': job or service", v);
    snprintf(r->kind, sizeof(r->kind), "%s", v);
    return 0;
  }
  if (strncmp(tok, "class=", 6) == 0) {
    const char *v = tok + 6;
    if (r->cls[0])
      return WHY("class given twice");
    if (!batch_class_names_latency(v) && batch_class_from_name(v) < 0)
      return WHY("bad class '%s'", v);
    snprintf(r->cls, sizeof(r->cls), "%s", v);
    return 0;
  }
  if (strncmp(tok, "latency-target=", 15) == 0) {
    if (r->lat_target_us)
      return WHY("latency-target given twice");
    if (parse_lat_us(tok + 15, &r->lat_target_us) < 0)
      return WHY("bad latency-target '%s': 1us to 10s (e.g. 5ms)", tok + 15);
    return 0;
  }
  return WHY("unknown effect '%s': kind=, class= or latency-target=", tok);
}

/* The tokens of S (blank-separated), each through FN. */
static int each_token(char *s, int (*fn)(const char *, struct agent_pod_rule *, char *, size_t),
                      struct agent_pod_rule *r, char *why, size_t why_len, size_t *n) {
  *n = 0;
  for (char *save = NULL, *t = strtok_r(s, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
    if (fn(t, r, why, why_len) < 0)
      return -1;
    (*n)++;
  }
  return 0;
}

int agent_pod_rule_parse(const char *value, struct agent_pod_rule *out, char *why, size_t why_len) {
  struct agent_pod_rule r;
  memset(&r, 0, sizeof(r));
  char buf[1024];
  if (strlen(value) >= sizeof(buf))
    return WHY("rule too long");
  snprintf(buf, sizeof(buf), "%s", value);
  char *colon = strchr(buf, ':');
  char *arrow = strstr(buf, "->");
  if (colon == NULL || arrow == NULL || arrow < colon)
    return WHY("expected 'NAME: SELECTORS -> EFFECTS'");
  size_t nlen = (size_t)(colon - buf);
  while (nlen > 0 && (buf[nlen - 1] == ' ' || buf[nlen - 1] == '\t'))
    nlen--;
  if (nlen == 0 || nlen >= sizeof(r.name) || !all_name_chars(buf, nlen, NULL))
    return WHY("bad rule name: 1 to %d of a-z, A-Z, 0-9, '.', '_', '-'",
               AGENT_POD_RULE_NAME_MAX - 1);
  memcpy(r.name, buf, nlen);
  *arrow = '\0';
  size_t nsel = 0, neff = 0;
  if (strstr(arrow + 2, "->") != NULL)
    return WHY("'->' given twice");
  if (each_token(colon + 1, selector, &r, why, why_len, &nsel) < 0 ||
      each_token(arrow + 2, effect, &r, why, why_len, &neff) < 0)
    return -1;
  if (neff == 0)
    return WHY("no effect: kind=, class= or latency-target=");
  *out = r;
  return 0;
}

static bool has_label(const struct agent_pod_view *v, const char *kv) {
  for (size_t i = 0; i < v->n_labels; i++)
    if (v->labels[i] && strcmp(v->labels[i], kv) == 0)
      return true;
  return false;
}

static bool matches(const struct agent_pod_rule *r, const struct agent_pod_view *v) {
  if (r->ns[0] && (v->ns == NULL || strcmp(r->ns, v->ns) != 0))
    return false;
  if (r->qos[0] && (v->qos == NULL || strcmp(r->qos, v->qos) != 0))
    return false;
  for (size_t i = 0; i < r->n_labels; i++)
    if (!has_label(v, r->labels[i]))
      return false;
  return true;
}

int agent_pod_rules_match(const struct agent_pod_rule *rules, size_t n,
                          const struct agent_pod_view *view) {
  return agent_pod_rules_match_trust(rules, n, view, true);
}

int agent_pod_rules_match_trust(const struct agent_pod_rule *rules, size_t n,
                                const struct agent_pod_view *view, bool ns_trusted) {
  int first = -1;
  for (size_t i = 0; i < n; i++) {
    if (!matches(&rules[i], view))
      continue;
    if (ns_trusted || !agent_pod_rule_tenant_selected(&rules[i]))
      return (int)i;
    if (first < 0)
      first = (int)i;
  }
  return first;
}

bool agent_pod_rule_by_label(const struct agent_pod_rule *r) {
  return r->n_labels > 0;
}

bool agent_pod_rule_protects(const struct agent_pod_rule *r) {
  enum batch_kind k;
  bool service = batch_kind_parse(r->kind, &k) == 0 && k == BATCH_KIND_SERVICE;
  return batch_class_names_latency(r->cls) || service || r->lat_target_us > 0;
}

bool agent_pod_rule_tenant_selected(const struct agent_pod_rule *r) {
  return agent_pod_rule_by_label(r) || r->qos[0] != '\0';
}

bool agent_pod_rule_trusted(const struct agent_pod_rule *r, bool ns_trusted) {
  return !agent_pod_rule_tenant_selected(r) || ns_trusted;
}
