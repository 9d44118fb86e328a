// SPDX-License-Identifier: Apache-2.0
/* The hdd model's parameters and geometry (README.md: "hdd"), exposed for
 * the unit test that checks the curve against its anchors. */
#ifndef SD_HDD_H
#define SD_HDD_H

#include <stdbool.h>
#include <stdint.h>

/* Seagate Barracuda 7200.14 data sheet (ST2000DM001/ST1000DM003, DS1770):
 * 7200 rpm, average read seek 8.5 ms, average write seek 9.5 ms, maximum
 * sustained rate at the outer diameter 210 MB/s, 64 MB cache. */
#define HDD_REV_NS 8333333  /* 60 s / 7200 */
#define HDD_AVG_SEEK_MS 8.5 /* read */
#define HDD_AVG_SEEK_WRITE_MS 9.5
#define HDD_OD_RATE 210e6 /* bytes/s */
#define HDD_CACHE_BYTES (64u << 20)
/* Not in that data sheet; from Hitachi's 7200 rpm OEM specification
 * (Travelstar 7K320, tables 6 and 7): single-track seek 1.0 ms, full
 * stroke 20.0 ms, both "typical", read. */
#define HDD_T2T_MS 1.0
#define HDD_FULL_MS 20.0
/* Zoned recording: the inner diameter's rate is about half the outer's
 * (the ratio of the radii); 16 zones of equal stroke width. */
#define HDD_ID_RATE (HDD_OD_RATE / 2)
#define HDD_ZONES 16
/* Tracks across the stroke: only where the sqrt curve starts (a one-track
 * seek); the data sheet does not give it, a 2 TB drive has a few 100k. */
#define HDD_CYLINDERS 100000
/* NCQ: SATA's 32 tags (SATA 3.x). */
#define HDD_NCQ 32
/* The cache: read segments and the write cache share the 64 MB; the split
 * and the segment count are this model's choice (README.md). */
#define HDD_SEGMENTS 16
#define HDD_SEG_BYTES (2u << 20)
#define HDD_WCACHE_BYTES (32u << 20)
/* SATA 6 Gb/s after 8b/10b coding: what a cache hit moves at. */
#define HDD_IFACE_RATE 600e6
/* A command waits at most this long before it goes first: firmware
 * bounds SPTF's starvation; the bound is this model's choice. */
#define HDD_AGE_NS 500000000
/* The write cache destages when a command waits for room or a flush, or
 * after the host has left the drive idle this long (this model's choice:
 * firmware destages in idle time, the delay is not published). */
#define HDD_IDLE_NS 50000000

/* The fitted seek curve: t = a + b*sqrt(x) below x0, c + e*x above, x
 * the fraction of the stroke (Ruemmler & Wilkes 1994, section 3.2). */
struct sd_seek_curve {
  double a, b, c, e, x0;
};
void sd_hdd_fit_curve(struct sd_seek_curve *k);
/* Seek time in ms over n cylinders (0: none); writes settle longer. */
double sd_hdd_seek_ms(const struct sd_seek_curve *k, uint64_t n, bool write);
/* The curve's average over uniformly random start and end (the data
 * sheets' "weighted average of all possible seeks"). */
double sd_hdd_avg_seek_ms(const struct sd_seek_curve *k);
/* Media rate (bytes/s) of zone z (0: outermost). */
double sd_hdd_zone_rate(unsigned z);

/* Counters, for the unit test and --stats. */
struct sd_hdd_stats {
  uint64_t seeks, cache_hits, continued, destaged_bytes;
};
struct sd_model;
void sd_hdd_stats(struct sd_model *m, struct sd_hdd_stats *s);

#endif
