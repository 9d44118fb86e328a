// SPDX-License-Identifier: Apache-2.0
/* Where to write io.weight (weighttree.h): the children of every pair's
 * lowest common ancestor.  O(n^2) path comparisons plus a search of the
 * target list per distinct prefix; the agent runs it on every plan while
 * containers share the disk (about once per sample period). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/weights/weighttree.h"
#include "common/xalloc.h"

/* Distinct ancestors per path gathered on the stack. */
#define MAX_DEPTH 64

/* Length of the longest common prefix of a and b that ends at a path
 * component boundary ("/a/b" and "/a/bc" share "/a"). */
static size_t common_dir(const char *a, const char *b) {
  size_t i = 0, last = 0;
  while (a[i] && a[i] == b[i]) {
    if (a[i] == '/')
      last = i;
    i++;
  }
  if ((a[i] == '\0' || a[i] == '/') && (b[i] == '\0' || b[i] == '/'))
    last = i;
  return last;
}

/* The length of the child of the ancestor (prefix of length lca) on p's
 * path: up to the next '/' after it, or all of p; 0 when p is the
 * ancestor itself. */
static size_t child_len(const char *p, size_t lca) {
  if (p[lca] == '\0')
    return 0;
  const char *slash = strchr(p + lca + 1, '/');
  return slash ? (size_t)(slash - p) : strlen(p);
}

int agent_weighttree_target_covers(const char *dir, const char *cgdir) {
  size_t n = strlen(dir);
  return strncmp(dir, cgdir, n) == 0 && (cgdir[n] == '\0' || cgdir[n] == '/');
}

static void add(struct wt_target **t, size_t *n, size_t *cap, const char *p, size_t len,
                unsigned w) {
  for (size_t i = 0; i < *n; i++) {
    if (strlen((*t)[i].dir) == len && strncmp((*t)[i].dir, p, len) == 0) {
      if (w > (*t)[i].weight)
        (*t)[i].weight = w;
      return;
    }
  }
  if (*n == *cap) {
    *cap = *cap ? *cap * 2 : 8;
    *t = xrealloc(*t, *cap * sizeof(**t));
  }
  (*t)[(*n)++] = (struct wt_target){.dir = xstrndup(p, len), .weight = w};
}

int agent_weighttree_targets(const struct wt_item *items, size_t n, struct wt_target **out,
                             size_t *n_out, struct iob_error **err) {
  (void)err; /* cannot fail (out of memory aborts); kept for its callers */
  struct wt_target *t = NULL;
  size_t nt = 0, cap = 0, known = 0;
  for (size_t i = 0; i < n; i++)
    known += items[i].cgdir != NULL;
  for (size_t i = 0; i < n; i++) {
    const char *a = items[i].cgdir;
    if (a == NULL)
      continue;
    if (known == 1)
      add(&t, &nt, &cap, a, strlen(a), items[i].weight);
    /* The targets on a's path are a few prefixes of it (one per distinct
     * ancestor it shares with the others): gather their lengths first, so
     * the global list is searched once per prefix, not once per pair. */
    size_t lens[MAX_DEPTH], nl = 0;
    for (size_t j = 0; j < n; j++) {
      const char *b = items[j].cgdir;
      if (j == i || b == NULL)
        continue;
      size_t l = child_len(a, common_dir(a, b)), k = 0;
      while (k < nl && lens[k] != l)
        k++;
      if (l == 0 || k < nl)
        continue;
      if (nl < MAX_DEPTH)
        lens[nl++] = l;
      else
        add(&t, &nt, &cap, a, l, 0); /* deeper than any real tree */
    }
    for (size_t k = 0; k < nl; k++)
      add(&t, &nt, &cap, a, lens[k], 0);
  }
  /* Each target carries the largest weight of the items under it. */
  for (size_t k = 0; k < nt; k++)
    for (size_t i = 0; i < n; i++)
      if (items[i].cgdir && agent_weighttree_target_covers(t[k].dir, items[i].cgdir) &&
          items[i].weight > t[k].weight)
        t[k].weight = items[i].weight;
  *out = t;
  *n_out = nt;
  return 0;
}

void agent_weighttree_targets_free(struct wt_target *t, size_t n) {
  for (size_t i = 0; i < n; i++)
    free(t[i].dir);
  free(t);
}
