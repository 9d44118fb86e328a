// SPDX-License-Identifier: Apache-2.0
/* hdd: one 7200 rpm drive (hdd.h has the parameters and their sources,
 * README.md the model and its limits).  One actuator serves one command
 * at a time; the command it serves next is the queued one (among the
 * first HDD_NCQ) with the shortest positioning time, as NCQ firmware
 * does.  The whole emulated capacity is spread over the whole stroke, so
 * a jump across the device costs what a jump across the drive does. */
#include "simdisk/hdd.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "simdisk/model.h"

#define MAX_DIRTY 4096
#define MAX_EXTENT (4u << 20)
#define SCAN_DIRTY 64

struct seg {
  uint64_t lo, hi; /* cached bytes [lo, hi); hi grows while active */
  uint64_t lru;
  bool valid;
};

struct extent {
  uint64_t off, len;
  uint64_t seq;  /* the request that made it dirty (flush ordering) */
  int64_t ready; /* when its last byte was in the cache */
};

enum kind { K_NONE, K_HIT, K_CONT, K_CACHEW, K_MECH, K_DESTAGE, K_NOW };

struct hdd {
  struct sd_model m;
  uint64_t size;
  bool wc;
  struct sd_seek_curve k;
  uint64_t zone_start[HDD_ZONES + 1];
  double zone_rate[HDD_ZONES], track_bytes[HDD_ZONES];

  struct sd_req **q; /* host requests in arrival order */
  uint64_t *qseq;
  size_t nq, capq;
  uint64_t seq;

  int64_t busy_until;
  uint64_t head_cyl;
  int active; /* the segment being read ahead into, or -1 */
  uint64_t ra_off0;
  int64_t ra_t0;
  double ra_rate;
  struct seg seg[HDD_SEGMENTS];
  uint64_t lru_clock;

  struct extent *dirty;
  size_t ndirty;
  uint64_t dirty_bytes;

  struct sd_heap done;  /* answered, waiting for their time */
  int64_t iface_free;   /* the host link is busy until then */
  int64_t last_arrival; /* of a host command: idle time starts there */

  bool busy;
  struct sd_req *cur; /* NULL while destaging */
  struct extent cur_destage;
  int64_t cur_done;

  struct sd_hdd_stats st;
};

/* ---- the seek curve ---- */

static void curve_for(double x0, struct sd_seek_curve *k) {
  /* one-track and full-stroke anchors, value and slope continuous at x0 */
  double s = sqrt(x0), xm = sqrt(1.0 / HDD_CYLINDERS);
  k->x0 = x0;
  k->b = (HDD_FULL_MS - HDD_T2T_MS) / (s - xm + (1 - x0) / (2 * s));
  k->a = HDD_T2T_MS - k->b * xm;
  k->e = k->b / (2 * s);
  k->c = HDD_FULL_MS - k->e;
}

double sd_hdd_avg_seek_ms(const struct sd_seek_curve *k) {
  /* E[t(|X-Y|)] for X, Y uniform on [0,1]: the distance has density
   * 2(1-x); the integrals of both pieces in closed form */
  double x0 = k->x0, s = sqrt(x0);
  double lo = 2 * (k->a * (x0 - x0 * x0 / 2) + k->b * (2.0 / 3 * x0 * s - 2.0 / 5 * x0 * x0 * s));
  double hi =
      2 * (k->c * (0.5 - (x0 - x0 * x0 / 2)) + k->e * (1.0 / 6 - (x0 * x0 / 2 - x0 * x0 * x0 / 3)));
  return lo + hi;
}

void sd_hdd_fit_curve(struct sd_seek_curve *k) {
  /* the average grows with x0 (more of the stroke on the slow sqrt
   * piece): bisect for the data sheet's average */
  double lo = 1e-4, hi = 0.999;
  for (int i = 0; i < 100; i++) {
    double mid = (lo + hi) / 2;
    curve_for(mid, k);
    if (sd_hdd_avg_seek_ms(k) < HDD_AVG_SEEK_MS)
      lo = mid;
    else
      hi = mid;
  }
  curve_for((lo + hi) / 2, k);
}

double sd_hdd_seek_ms(const struct sd_seek_curve *k, uint64_t n, bool write) {
  if (n == 0)
    return 0;
  double x = (double)n / HDD_CYLINDERS;
  double t = x < k->x0 ? k->a + k->b * sqrt(x) : k->c + k->e * x;
  /* writes settle longer: the data sheet's write/read average ratio */
  return write ? t * (HDD_AVG_SEEK_WRITE_MS / HDD_AVG_SEEK_MS) : t;
}

double sd_hdd_zone_rate(unsigned z) {
  return HDD_OD_RATE - (HDD_OD_RATE - HDD_ID_RATE) * z / (HDD_ZONES - 1);
}

/* ---- geometry ---- */

static unsigned zone_of(const struct hdd *h, uint64_t off) {
  unsigned z = 0;
  while (z + 1 < HDD_ZONES && off >= h->zone_start[z + 1])
    z++;
  return z;
}

static uint64_t cyl_of(const struct hdd *h, uint64_t off) {
  unsigned z = zone_of(h, off);
  double frac =
      (double)(off - h->zone_start[z]) / (double)(h->zone_start[z + 1] - h->zone_start[z]);
  uint64_t c = (uint64_t)((z + frac) / HDD_ZONES * HDD_CYLINDERS);
  return c >= HDD_CYLINDERS ? HDD_CYLINDERS - 1 : c;
}

/* Where off passes under the head, as a fraction of a revolution. */
static double angle_of(const struct hdd *h, uint64_t off) {
  unsigned z = zone_of(h, off);
  double t = (double)(off - h->zone_start[z]) / h->track_bytes[z];
  return t - floor(t);
}

static int64_t rot_wait(int64_t t, double angle) {
  double head = (double)(t % HDD_REV_NS) / HDD_REV_NS;
  double d = angle - head;
  d -= floor(d);
  return (int64_t)(d * HDD_REV_NS);
}

static int64_t xfer_ns(const struct hdd *h, uint64_t off, uint64_t len) {
  return (int64_t)((double)len / h->zone_rate[zone_of(h, off)] * 1e9);
}

static int64_t position_ns(const struct hdd *h, int64_t ts, uint64_t off, bool write) {
  uint64_t c = cyl_of(h, off);
  uint64_t n = c > h->head_cyl ? c - h->head_cyl : h->head_cyl - c;
  int64_t seek = (int64_t)(sd_hdd_seek_ms(&h->k, n, write) * 1e6);
  return seek + rot_wait(ts + seek, angle_of(h, off));
}

/* ---- the read cache ---- */

static uint64_t ra_hi(const struct hdd *h, int64_t t) {
  const struct seg *s = &h->seg[h->active];
  uint64_t cap = s->lo + HDD_SEG_BYTES;
  if (cap > h->size)
    cap = h->size;
  if (t <= h->ra_t0)
    return s->hi;
  double pos = (double)h->ra_off0 + (double)(t - h->ra_t0) * h->ra_rate / 1e9;
  uint64_t p = pos >= (double)cap ? cap : (uint64_t)pos;
  return p > s->hi ? p : s->hi;
}

/* Stop reading ahead at ts: the head goes elsewhere. */
static void ra_freeze(struct hdd *h, int64_t ts) {
  if (h->active < 0)
    return;
  uint64_t hi = ra_hi(h, ts);
  h->seg[h->active].hi = hi;
  h->head_cyl = cyl_of(h, hi ? hi - 1 : 0);
  h->active = -1;
}

/* A read-ahead that filled its segment has stopped by itself. */
static void ra_refresh(struct hdd *h, int64_t ts) {
  if (h->active < 0)
    return;
  const struct seg *s = &h->seg[h->active];
  uint64_t hi = ra_hi(h, ts);
  if (hi >= s->lo + HDD_SEG_BYTES || hi >= h->size)
    ra_freeze(h, ts);
  else
    h->head_cyl = cyl_of(h, hi ? hi - 1 : 0);
}

static uint64_t seg_hi(const struct hdd *h, int i, int64_t ts) {
  return i == h->active ? ra_hi(h, ts) : h->seg[i].hi;
}

static void seg_invalidate(struct hdd *h, uint64_t off, uint64_t len, int64_t ts) {
  for (int i = 0; i < HDD_SEGMENTS; i++) {
    struct seg *s = &h->seg[i];
    if (!s->valid || off >= seg_hi(h, i, ts) || off + len <= s->lo)
      continue;
    if (i == h->active)
      ra_freeze(h, ts);
    s->valid = false;
  }
}

static int seg_victim(struct hdd *h) {
  int v = 0;
  for (int i = 0; i < HDD_SEGMENTS; i++) {
    if (!h->seg[i].valid)
      return i;
    if (h->seg[i].lru < h->seg[v].lru)
      v = i;
  }
  return v;
}

/* ---- the write cache ---- */

static void dirty_add(struct hdd *h, uint64_t off, uint64_t len, uint64_t seq, int64_t ready) {
  h->dirty_bytes += len;
  size_t lo = h->ndirty > SCAN_DIRTY ? h->ndirty - SCAN_DIRTY : 0;
  for (size_t i = h->ndirty; i-- > lo;) {
    struct extent *e = &h->dirty[i];
    if (e->off + e->len == off && e->len + len <= MAX_EXTENT) {
      e->len += len;
      e->seq = seq;
      e->ready = ready;
      return;
    }
  }
  h->dirty[h->ndirty++] = (struct extent){off, len, seq, ready};
}

static bool flush_pending_before(const struct hdd *h, uint64_t seq) {
  for (size_t i = 0; i < h->nq; i++)
    if (h->q[i]->op == SD_FLUSH && h->qseq[i] < seq)
      return true;
  return false;
}

static bool dirty_before(const struct hdd *h, uint64_t seq) {
  for (size_t i = 0; i < h->ndirty; i++)
    if (h->dirty[i].seq < seq)
      return true;
  return false;
}

/* ---- choosing and serving ---- */

/* How command i would be served at ts and its positioning cost; K_NONE
 * when it must wait (no room in the write cache, a flush before it). */
static enum kind classify(struct hdd *h, size_t i, int64_t ts, int64_t *cost) {
  const struct sd_req *r = h->q[i];
  *cost = 0;
  switch (r->op) {
  case SD_TRIM:
    return K_NOW;
  case SD_FLUSH:
    return dirty_before(h, h->qseq[i]) || (h->busy && h->cur == NULL) ? K_NONE : K_NOW;
  case SD_READ:
    for (int s = 0; s < HDD_SEGMENTS; s++)
      if (h->seg[s].valid && h->seg[s].lo <= r->off && r->off + r->len <= seg_hi(h, s, ts))
        return K_HIT;
    if (h->active >= 0) {
      uint64_t lo = h->seg[h->active].lo, hi = ra_hi(h, ts);
      if (r->off >= lo && r->off <= hi + HDD_SEG_BYTES) {
        *cost = r->off > hi ? xfer_ns(h, hi, r->off - hi) : 0;
        return K_CONT;
      }
    }
    *cost = position_ns(h, ts, r->off, false);
    return K_MECH;
  case SD_WRITE:
    if (h->wc && r->len <= HDD_WCACHE_BYTES) {
      if (h->dirty_bytes + r->len > HDD_WCACHE_BYTES || h->ndirty == MAX_DIRTY ||
          flush_pending_before(h, h->qseq[i]))
        return K_NONE;
      return K_CACHEW;
    }
    *cost = position_ns(h, ts, r->off, true);
    return K_MECH;
  }
  return K_NONE;
}

static void q_remove(struct hdd *h, size_t i) {
  memmove(&h->q[i], &h->q[i + 1], (h->nq - i - 1) * sizeof(*h->q));
  memmove(&h->qseq[i], &h->qseq[i + 1], (h->nq - i - 1) * sizeof(*h->qseq));
  h->nq--;
}

static void start_destage(struct hdd *h, int64_t ts) {
  size_t best = 0;
  int64_t best_cost = SD_NEVER;
  size_t n = h->ndirty < SCAN_DIRTY ? h->ndirty : SCAN_DIRTY;
  /* never write back what reaches the cache only later (the model may
   * decide with ts in the past) */
  int64_t first = SD_NEVER;
  for (size_t i = 0; i < n; i++)
    if (h->dirty[i].ready < first)
      first = h->dirty[i].ready;
  if (ts < first)
    ts = first;
  for (size_t i = 0; i < n; i++) {
    if (h->dirty[i].ready > ts)
      continue;
    int64_t c = position_ns(h, ts, h->dirty[i].off, true);
    if (c < best_cost) {
      best_cost = c;
      best = i;
    }
  }
  struct extent e = h->dirty[best];
  h->dirty[best] = h->dirty[--h->ndirty];
  ra_freeze(h, ts);
  h->busy = true;
  h->cur = NULL;
  h->cur_destage = e;
  h->cur_done = ts + best_cost + xfer_ns(h, e.off, e.len);
  h->head_cyl = cyl_of(h, e.off + e.len - 1);
  h->st.destaged_bytes += e.len;
}

static void start_host(struct hdd *h, size_t i, enum kind kd, int64_t ts, int64_t cost) {
  struct sd_req *r = h->q[i];
  uint64_t seq = h->qseq[i];
  q_remove(h, i);
  h->busy = true;
  h->cur = r;
  switch (kd) {
  case K_NOW:
    if (r->op == SD_TRIM)
      seg_invalidate(h, r->off, r->len, ts);
    h->cur_done = ts;
    break;
  case K_HIT:
    h->st.cache_hits++;
    h->cur_done = ts + (int64_t)((double)r->len / HDD_IFACE_RATE * 1e9);
    break;
  case K_CONT: {
    /* the head is reading ahead into this stream: done when it passes
     * the request's end; the window slides so the read-ahead goes on */
    h->st.continued++;
    struct seg *s = &h->seg[h->active];
    int64_t t = h->ra_t0 + (int64_t)((double)(r->off + r->len - h->ra_off0) / h->ra_rate * 1e9);
    h->cur_done = t > ts ? t : ts;
    if (r->off > s->lo)
      s->lo = r->off;
    s->lru = ++h->lru_clock;
    (void)cost;
    break;
  }
  case K_CACHEW:
    seg_invalidate(h, r->off, r->len, ts);
    h->cur_done = ts + (int64_t)((double)r->len / HDD_IFACE_RATE * 1e9);
    dirty_add(h, r->off, r->len, seq, h->cur_done);
    break;
  case K_MECH: {
    ra_freeze(h, ts);
    if (cyl_of(h, r->off) != h->head_cyl)
      h->st.seeks++;
    int64_t data = ts + cost;
    h->cur_done = data + xfer_ns(h, r->off, r->len);
    h->head_cyl = cyl_of(h, r->off + r->len - 1);
    if (r->op == SD_WRITE) {
      seg_invalidate(h, r->off, r->len, ts);
    } else {
      int v = seg_victim(h);
      h->seg[v] = (struct seg){r->off, r->off, ++h->lru_clock, true};
      h->active = v;
      h->ra_off0 = r->off;
      h->ra_t0 = data;
      h->ra_rate = h->zone_rate[zone_of(h, r->off)];
    }
    break;
  }
  default:
    break;
  }
}

/* Start the next command at ts, if there is one; false when idle. */
static bool start_next(struct hdd *h, int64_t ts) {
  ra_refresh(h, ts);
  size_t n = h->nq < HDD_NCQ ? h->nq : HDD_NCQ;
  size_t best = 0;
  enum kind best_kind = K_NONE;
  int64_t best_cost = SD_NEVER;
  bool blocked = false;
  for (size_t i = 0; i < n; i++) {
    if (h->q[i]->arrival > ts)
      break;
    int64_t c;
    enum kind kd = classify(h, i, ts, &c);
    if (kd == K_NONE) {
      blocked = true;
      continue;
    }
    /* the oldest command goes first once it has waited too long */
    if (i == 0 && ts - h->q[0]->arrival > HDD_AGE_NS) {
      best = 0, best_kind = kd, best_cost = c;
      break;
    }
    if (c < best_cost) {
      best = i, best_kind = kd, best_cost = c;
    }
  }
  /* destage now when a command waits for room or for a flush, or the
   * cache is half full; otherwise once the host has left the drive idle
   * (hdd_complete) */
  if (h->ndirty > 0 && (blocked || h->dirty_bytes >= HDD_WCACHE_BYTES / 2)) {
    start_destage(h, ts);
    return true;
  }
  if (best_kind == K_NONE)
    return false;
  start_host(h, best, best_kind, ts, best_cost);
  return true;
}

static void hdd_submit(struct sd_model *m, struct sd_req *r) {
  struct hdd *h = (struct hdd *)m;
  if (h->nq == h->capq) {
    h->capq = h->capq ? 2 * h->capq : 64;
    h->q = xrealloc(h->q, h->capq * sizeof(*h->q));
    h->qseq = xrealloc(h->qseq, h->capq * sizeof(*h->qseq));
  }
  h->q[h->nq] = r;
  h->qseq[h->nq++] = ++h->seq;
  if (r->arrival > h->last_arrival)
    h->last_arrival = r->arrival;
}

/* What the cache answers needs no mechanism: hits, writes into the write
 * cache, trims, flushes with nothing dirty before them go over the host
 * link as they arrive, also while the head is busy elsewhere. */
static bool serve_instant(struct hdd *h, int64_t now) {
  bool any = false;
  for (size_t i = 0; i < h->nq && i < HDD_NCQ;) {
    struct sd_req *r = h->q[i];
    if (r->arrival > now)
      break;
    int64_t t = r->arrival > h->iface_free ? r->arrival : h->iface_free, cost;
    enum kind kd = classify(h, i, t, &cost);
    if (kd != K_HIT && kd != K_CACHEW && kd != K_NOW) {
      i++;
      continue;
    }
    uint64_t seq = h->qseq[i];
    q_remove(h, i);
    r->done = t;
    if (kd == K_NOW && r->op == SD_TRIM)
      seg_invalidate(h, r->off, r->len, t);
    if (kd == K_HIT)
      h->st.cache_hits++;
    if (kd != K_NOW) {
      r->done = t + (int64_t)((double)r->len / HDD_IFACE_RATE * 1e9);
      h->iface_free = r->done;
    }
    if (kd == K_CACHEW) {
      seg_invalidate(h, r->off, r->len, t);
      dirty_add(h, r->off, r->len, seq, r->done);
    }
    sd_heap_push(&h->done, r);
    any = true;
  }
  return any;
}

static int64_t min64(int64_t a, int64_t b) {
  return a < b ? a : b;
}

static struct sd_req *hdd_complete(struct sd_model *m, int64_t now, int64_t *next) {
  struct hdd *h = (struct hdd *)m;
  for (;;) {
    int64_t hn;
    struct sd_req *r = sd_heap_pop_due(&h->done, now, &hn);
    if (r)
      return r;
    if (serve_instant(h, now))
      continue;
    if (h->busy) {
      if (h->cur_done > now) {
        *next = min64(hn, h->cur_done);
        return NULL;
      }
      h->busy = false;
      h->busy_until = h->cur_done;
      if (h->cur) {
        h->cur->done = h->cur_done;
        sd_heap_push(&h->done, h->cur);
        h->cur = NULL;
      } else {
        h->dirty_bytes -= h->cur_destage.len;
      }
      continue;
    }
    if (h->nq == 0) {
      if (h->ndirty == 0) {
        *next = hn;
        return NULL;
      }
      /* past the high-water mark destaging goes on back to back (the
       * next extent starts where the last ended: no rotation lost) */
      int64_t t = h->busy_until;
      if (h->dirty_bytes < HDD_WCACHE_BYTES / 2)
        t = (h->last_arrival > t ? h->last_arrival : t) + HDD_IDLE_NS;
      if (t > now) {
        *next = min64(hn, t);
        return NULL;
      }
      start_destage(h, t);
      continue;
    }
    int64_t ts = h->busy_until;
    if (h->q[0]->arrival > ts)
      ts = h->q[0]->arrival;
    if (ts > now) { /* a request that arrived "after now": wait for it */
      *next = min64(hn, ts);
      return NULL;
    }
    if (!start_next(h, ts)) {
      *next = hn;
      return NULL;
    }
  }
}

static void hdd_destroy(struct sd_model *m) {
  struct hdd *h = (struct hdd *)m;
  free(h->q);
  free(h->qseq);
  free(h->dirty);
  sd_heap_free(&h->done);
  free(h);
}

static const struct sd_model_ops hdd_ops = {hdd_submit, hdd_complete, hdd_destroy};

void sd_hdd_stats(struct sd_model *m, struct sd_hdd_stats *s) {
  *s = ((struct hdd *)m)->st;
}

int sd_hdd_new(uint64_t size, bool write_cache, struct sd_model **out, struct iob_error **err) {
  if (size < (uint64_t)HDD_ZONES << 20)
    return iob_error(err, 0, "size %llu is too small for the hdd model: at least %u MiB",
                     (unsigned long long)size, HDD_ZONES);
  struct hdd *h = xcalloc(1, sizeof(*h));
  h->m.ops = &hdd_ops;
  h->size = size;
  h->wc = write_cache;
  h->active = -1;
  h->dirty = xcalloc(MAX_DIRTY, sizeof(*h->dirty));
  sd_hdd_fit_curve(&h->k);
  /* a zone's share of the capacity is its share of the bytes passing
   * under the head per revolution (equal stroke widths) */
  double total = 0;
  for (unsigned z = 0; z < HDD_ZONES; z++) {
    h->zone_rate[z] = sd_hdd_zone_rate(z);
    h->track_bytes[z] = h->zone_rate[z] * HDD_REV_NS / 1e9;
    total += h->zone_rate[z];
  }
  double cum = 0;
  for (unsigned z = 0; z < HDD_ZONES; z++) {
    h->zone_start[z] = (uint64_t)(cum / total * (double)size) & ~4095ull;
    cum += h->zone_rate[z];
  }
  h->zone_start[HDD_ZONES] = size;
  *out = &h->m;
  return 0;
}
