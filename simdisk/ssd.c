// SPDX-License-Identifier: Apache-2.0
/* ssd: a page-mapped FTL over SSD_DIES dies on SSD_CHANNELS channels
 * (ssd.h has the parameters and their source, README.md the model and its
 * limits).  A host write lands in the DRAM buffer and completes at host
 * link speed while there is room; its pages are programmed on the dies
 * round-robin (channel first, as MQSim's CWDP allocation) as soon as each
 * die is free.  Each die runs one operation at a time in arrival order, so
 * a read waits behind the programs and erases queued on its die.  When a
 * die runs short of free blocks, greedy GC moves the valid units of the
 * block with the fewest and erases it, on that die's time. */
#include "simdisk/ssd.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "simdisk/model.h"

#define NONE UINT32_MAX
#define UNITS_PER_PAGE (SSD_PAGE_BYTES / SSD_UNIT_BYTES)
#define UNITS_PER_BLOCK (SSD_PAGES_PER_BLOCK * UNITS_PER_PAGE)
#define BUF_UNITS (SSD_BUFFER_BYTES / SSD_UNIT_BYTES)

enum bstate { B_USED, B_FREE, B_OPEN };

struct die {
  uint32_t *free; /* stack of free blocks */
  uint32_t nfree;
  uint32_t open, wp; /* the block being programmed, its next unit */
  int64_t busy;
};

struct ssd {
  struct sd_model m;
  uint32_t nunits; /* logical 4 KiB units */
  uint32_t bpd;    /* blocks per die */
  uint32_t gc_free;
  uint32_t *l2p, *p2l, *valid;
  uint8_t *state;
  int64_t *durable; /* when a unit's data left the buffer for flash */
  struct die die[SSD_DIES];
  int64_t ch_busy[SSD_CHANNELS];
  uint32_t rr;
  uint32_t half; /* a unit waiting for the other half of its page */
  int64_t last_prog;
  int64_t clock;
  int64_t *buf; /* min-heap: when each buffered unit's page is programmed */
  size_t nbuf;
  struct sd_heap done;
  struct sd_ssd_stats st;
};

static int64_t ns_for(double bytes, double rate) {
  return (int64_t)(bytes / rate * 1e9);
}

static int64_t max64(int64_t a, int64_t b) {
  return a > b ? a : b;
}

/* ---- the buffer's release times ---- */

static void buf_push(struct ssd *s, int64_t t) {
  size_t i = s->nbuf++;
  while (i > 0 && s->buf[(i - 1) / 2] > t) {
    s->buf[i] = s->buf[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  s->buf[i] = t;
}

static int64_t buf_pop(struct ssd *s) {
  int64_t top = s->buf[0], last = s->buf[--s->nbuf];
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= s->nbuf)
      break;
    if (c + 1 < s->nbuf && s->buf[c + 1] < s->buf[c])
      c++;
    if (s->buf[c] >= last)
      break;
    s->buf[i] = s->buf[c];
    i = c;
  }
  if (s->nbuf > 0)
    s->buf[i] = last;
  return top;
}

/* ---- mapping ---- */

static uint32_t die_of_block(const struct ssd *s, uint32_t b) {
  return b / s->bpd;
}

static void unmap(struct ssd *s, uint32_t lu) {
  uint32_t p = s->l2p[lu];
  if (p == NONE)
    return;
  s->p2l[p] = NONE;
  s->valid[p / UNITS_PER_BLOCK]--;
  s->l2p[lu] = NONE;
}

static void gc(struct ssd *s, uint32_t d, int64_t t);

/* The first unit of the next free page of die d. */
static uint32_t alloc_page(struct ssd *s, uint32_t d, int64_t t, bool in_gc) {
  struct die *di = &s->die[d];
  if (di->open == NONE || di->wp == UNITS_PER_BLOCK) {
    if (di->open != NONE)
      s->state[di->open] = B_USED;
    if (di->nfree == 0) {
      /* the spare blocks sd_ssd_new reserves make this unreachable */
      fputs("simdisk: ssd model: die without a free block\n", stderr);
      abort();
    }
    di->open = di->free[--di->nfree];
    s->state[di->open] = B_OPEN;
    di->wp = 0;
    if (!in_gc && di->nfree < s->gc_free)
      gc(s, d, t);
  }
  uint32_t p = di->open * UNITS_PER_BLOCK + di->wp;
  di->wp += UNITS_PER_PAGE;
  return p;
}

/* Program one page on die d holding lu[0..n) (n <= 2); data is on the
 * controller from t.  Returns when the program ends. */
static int64_t program(struct ssd *s, uint32_t d, const uint32_t *lu, int n, int64_t t,
                       bool in_gc) {
  uint32_t p = alloc_page(s, d, t, in_gc);
  for (int i = 0; i < n; i++) {
    unmap(s, lu[i]);
    s->l2p[lu[i]] = p + i;
    s->p2l[p + i] = lu[i];
    s->valid[(p + i) / UNITS_PER_BLOCK]++;
  }
  s->st.flash_units += n;
  struct die *di = &s->die[d];
  int64_t *ch = &s->ch_busy[d % SSD_CHANNELS];
  *ch = max64(t, *ch) + ns_for(SSD_PAGE_BYTES, SSD_CHANNEL_RATE);
  di->busy = max64(*ch, di->busy) + SSD_PROGRAM_NS;
  if (di->busy > s->last_prog)
    s->last_prog = di->busy;
  return di->busy;
}

/* Greedy GC on die d until it has gc_free free blocks again. */
static void gc(struct ssd *s, uint32_t d, int64_t t) {
  struct die *di = &s->die[d];
  while (di->nfree < s->gc_free) {
    uint32_t victim = NONE;
    for (uint32_t b = d * s->bpd; b < (d + 1) * s->bpd; b++)
      if (s->state[b] == B_USED && (victim == NONE || s->valid[b] < s->valid[victim]))
        victim = b;
    if (victim == NONE || s->valid[victim] == UNITS_PER_BLOCK)
      return; /* nothing to gain: cannot happen with spare blocks */
    uint32_t lu[UNITS_PER_PAGE];
    int n = 0;
    for (uint32_t u = 0; u < UNITS_PER_BLOCK; u++) {
      uint32_t l = s->p2l[victim * UNITS_PER_BLOCK + u];
      if (l == NONE)
        continue;
      lu[n++] = l;
      if (n == UNITS_PER_PAGE || s->valid[victim] == (uint32_t)n) {
        /* read the page and bring it over the channel (no copyback:
         * MQSim's Use_Copyback_for_GC is false), then program it */
        di->busy = max64(t, di->busy) + SSD_READ_NS;
        int64_t *ch = &s->ch_busy[d % SSD_CHANNELS];
        *ch = max64(di->busy, *ch) + ns_for(SSD_PAGE_BYTES, SSD_CHANNEL_RATE);
        s->st.gc_moved += n;
        program(s, d, lu, n, *ch, true);
        n = 0;
      }
    }
    di->busy = max64(t, di->busy) + SSD_ERASE_NS;
    s->st.erases++;
    s->state[victim] = B_FREE;
    di->free[di->nfree++] = victim;
  }
}

/* ---- requests ---- */

static int64_t page_out(struct ssd *s, uint32_t a, uint32_t b, int n, int64_t t) {
  uint32_t lu[2] = {a, b};
  uint32_t d = s->rr;
  s->rr = (s->rr + 1) % SSD_DIES;
  int64_t end = program(s, d, lu, n, t, false);
  for (int i = 0; i < n; i++) {
    s->durable[lu[i]] = end;
    buf_push(s, end);
  }
  return end;
}

static int64_t do_write(struct ssd *s, const struct sd_req *r, int64_t t) {
  uint32_t u0 = (uint32_t)(r->off / SSD_UNIT_BYTES);
  uint32_t u1 = (uint32_t)((r->off + r->len + SSD_UNIT_BYTES - 1) / SSD_UNIT_BYTES);
  uint32_t n = u1 - u0;
  s->st.host_units += n;
  /* room in the buffer: units whose pages are programmed by t leave it;
   * a write that does not fit waits for the earliest programs */
  while (s->nbuf > 0 && s->buf[0] <= t)
    buf_pop(s);
  int64_t in = t;
  while (s->nbuf + (s->half != NONE) + n > BUF_UNITS && s->nbuf > 0)
    in = max64(in, buf_pop(s));
  in += ns_for((double)r->len, SSD_HOST_RATE);
  for (uint32_t u = u0; u < u1; u++) {
    if (s->half == u)
      continue;
    if (s->half == NONE) {
      s->half = u;
      unmap(s, u); /* the old copy is stale from now on */
      s->durable[u] = SD_NEVER;
      continue;
    }
    page_out(s, s->half, u, 2, in);
    s->half = NONE;
  }
  return in;
}

static int64_t do_read(struct ssd *s, const struct sd_req *r, int64_t t) {
  uint32_t u0 = (uint32_t)(r->off / SSD_UNIT_BYTES);
  uint32_t u1 = (uint32_t)((r->off + r->len + SSD_UNIT_BYTES - 1) / SSD_UNIT_BYTES);
  int64_t done = t + ns_for((double)r->len, SSD_HOST_RATE);
  uint32_t last_page = NONE;
  for (uint32_t u = u0; u < u1; u++) {
    uint32_t p = s->l2p[u];
    if (p == NONE || s->durable[u] > t)
      continue; /* never written (zeros), or still in the buffer */
    if (p / UNITS_PER_PAGE == last_page)
      continue;
    last_page = p / UNITS_PER_PAGE;
    uint32_t d = die_of_block(s, p / UNITS_PER_BLOCK);
    struct die *di = &s->die[d];
    di->busy = max64(t, di->busy) + SSD_READ_NS;
    int64_t *ch = &s->ch_busy[d % SSD_CHANNELS];
    *ch = max64(di->busy, *ch) + ns_for(SSD_PAGE_BYTES, SSD_CHANNEL_RATE);
    done = max64(done, *ch);
  }
  return done;
}

static int64_t do_flush(struct ssd *s, int64_t t) {
  if (s->half != NONE) {
    page_out(s, s->half, 0, 1, t);
    s->half = NONE;
  }
  return max64(t, s->last_prog);
}

static void do_trim(struct ssd *s, const struct sd_req *r) {
  uint32_t u0 = (uint32_t)((r->off + SSD_UNIT_BYTES - 1) / SSD_UNIT_BYTES);
  uint32_t u1 = (uint32_t)((r->off + r->len) / SSD_UNIT_BYTES);
  for (uint32_t u = u0; u < u1; u++) {
    if (u == s->half)
      continue;
    unmap(s, u);
    s->durable[u] = 0;
  }
}

static void ssd_submit(struct sd_model *m, struct sd_req *r) {
  struct ssd *s = (struct ssd *)m;
  int64_t t = max64(r->arrival, s->clock);
  s->clock = t;
  bool inside = r->len > 0 && r->off + r->len <= (uint64_t)s->nunits * SSD_UNIT_BYTES;
  r->done = t; /* the daemon checks bounds; outside them nothing to model */
  switch (r->op) {
  case SD_WRITE:
    if (inside)
      r->done = do_write(s, r, t);
    break;
  case SD_READ:
    if (inside)
      r->done = do_read(s, r, t);
    break;
  case SD_FLUSH:
    r->done = do_flush(s, t);
    break;
  case SD_TRIM:
    if (inside)
      do_trim(s, r);
    break;
  }
  sd_heap_push(&s->done, r);
}

static struct sd_req *ssd_complete(struct sd_model *m, int64_t now, int64_t *next) {
  return sd_heap_pop_due(&((struct ssd *)m)->done, now, next);
}

static void ssd_destroy(struct sd_model *m) {
  struct ssd *s = (struct ssd *)m;
  for (unsigned d = 0; d < SSD_DIES; d++)
    free(s->die[d].free);
  free(s->l2p);
  free(s->p2l);
  free(s->valid);
  free(s->state);
  free(s->durable);
  free(s->buf);
  sd_heap_free(&s->done);
  free(s);
}

static const struct sd_model_ops ssd_ops = {ssd_submit, ssd_complete, ssd_destroy};

void sd_ssd_stats(struct sd_model *m, struct sd_ssd_stats *st) {
  *st = ((struct ssd *)m)->st;
}

int sd_ssd_new(uint64_t size, struct sd_model **out, struct iob_error **err) {
  uint64_t block_bytes = (uint64_t)UNITS_PER_BLOCK * SSD_UNIT_BYTES;
  uint64_t nunits = size / SSD_UNIT_BYTES;
  if (nunits >= NONE / 2)
    return iob_error(err, 0, "size %llu is too large for the ssd model", (unsigned long long)size);
  /* logical blocks per die, then the over-provisioned count; a small
   * device gets at least GC's reserve plus two spare blocks per die, so
   * GC always finds a victim with a stale unit (more than 7% OP then) */
  uint64_t lpd = (size + block_bytes * SSD_DIES - 1) / (block_bytes * SSD_DIES);
  uint64_t bpd = (uint64_t)((double)lpd / (1 - SSD_OP) + 0.999999);
  uint32_t gc_free = (uint32_t)(SSD_GC_THRESHOLD * (double)bpd);
  if (gc_free < 1)
    gc_free = 1;
  if (bpd < lpd + gc_free + 2)
    bpd = lpd + gc_free + 2;
  if (bpd < SSD_MIN_BLOCKS_PER_DIE)
    bpd = SSD_MIN_BLOCKS_PER_DIE;
  struct ssd *s = xcalloc(1, sizeof(*s));
  s->m.ops = &ssd_ops;
  s->nunits = (uint32_t)nunits;
  s->bpd = (uint32_t)bpd;
  s->gc_free = gc_free;
  uint64_t nblocks = bpd * SSD_DIES, npu = nblocks * UNITS_PER_BLOCK;
  s->l2p = xmalloc(nunits * sizeof(*s->l2p));
  memset(s->l2p, 0xff, nunits * sizeof(*s->l2p));
  s->p2l = xmalloc(npu * sizeof(*s->p2l));
  memset(s->p2l, 0xff, npu * sizeof(*s->p2l));
  s->valid = xcalloc(nblocks, sizeof(*s->valid));
  s->state = xcalloc(nblocks, 1);
  s->durable = xcalloc(nunits, sizeof(*s->durable));
  s->buf = xmalloc((BUF_UNITS + 2) * sizeof(*s->buf));
  s->half = NONE;
  for (uint32_t d = 0; d < SSD_DIES; d++) {
    struct die *di = &s->die[d];
    di->free = xmalloc(bpd * sizeof(*di->free));
    /* popped from the end: block d*bpd first */
    for (uint32_t i = 0; i < bpd; i++) {
      di->free[i] = d * s->bpd + (s->bpd - 1 - i);
      s->state[di->free[i]] = B_FREE;
    }
    di->nfree = s->bpd;
    di->open = NONE;
  }
  *out = &s->m;
  return 0;
}
