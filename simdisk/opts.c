// SPDX-License-Identifier: Apache-2.0
#include "simdisk/opts.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: simdisk [options] MOUNTPOINT\n"
    "Serve one RAM-backed file, MOUNTPOINT/disk, whose reads and writes\n"
    "complete when a disk model says (simdisk/README.md).\n"
    "  -m, --model=hdd|ssd|pass  the disk model (default hdd)\n"
    "  -s, --size=SIZE           bytes, K/M/G/T suffixes, a multiple of 1M (default 4G)\n"
    "  -w, --write-cache=on|off  the hdd's write cache (default on)\n"
    "  -x, --scale=FACTOR        every model time times FACTOR, 1 to 100 (default 1)\n"
    "  -f, --foreground          do not detach\n"
    "      --stats=FILE          write request counters to FILE at exit\n"
    "      --trace=FILE          a line per request: arrival, done and lateness (model\n"
    "                            ns), op (0 read, 1 write, 2 flush, 3 trim), offset, length\n";

const char *sd_model_name(enum sd_model_kind k) {
  switch (k) {
  case SD_MODEL_HDD:
    return "hdd";
  case SD_MODEL_SSD:
    return "ssd";
  case SD_MODEL_PASS:
    return "pass";
  }
  return "?";
}

int sd_parse_size(const char *s, uint64_t *out, struct iob_error **err) {
  if (s[0] < '0' || s[0] > '9')
    return iob_error(err, 0, "invalid size '%s': want digits and an optional K, M, G or T", s);
  errno = 0;
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno == ERANGE)
    return iob_error(err, 0, "invalid size '%s': too large", s);
  unsigned shift = 0;
  if (*end != '\0') {
    const char *units = "KMGT";
    const char *u = strchr(units, *end);
    if (u == NULL || end[1] != '\0')
      return iob_error(err, 0, "invalid size '%s': want digits and an optional K, M, G or T", s);
    shift = 10 * (unsigned)(u - units + 1);
  }
  if (v > (UINT64_MAX >> shift))
    return iob_error(err, 0, "invalid size '%s': too large", s);
  *out = (uint64_t)v << shift;
  return 0;
}

static int parse_model(const char *s, enum sd_model_kind *k, struct iob_error **err) {
  static const enum sd_model_kind all[] = {SD_MODEL_HDD, SD_MODEL_SSD, SD_MODEL_PASS};
  for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
    if (strcmp(s, sd_model_name(all[i])) == 0) {
      *k = all[i];
      return 0;
    }
  return iob_error(err, 0, "invalid model '%s': want hdd, ssd or pass", s);
}

static int parse_onoff(const char *s, bool *b, struct iob_error **err) {
  if (strcmp(s, "on") == 0)
    *b = true;
  else if (strcmp(s, "off") == 0)
    *b = false;
  else
    return iob_error(err, 0, "invalid write cache '%s': want on or off", s);
  return 0;
}

static int parse_scale(const char *s, double *d, struct iob_error **err) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  /* strtod takes "inf", "nan" and hex floats; a factor is plain decimal */
  if (end == s || *end != '\0' || errno != 0 || !isfinite(v) || strpbrk(s, "xXnNiI") != NULL ||
      s[0] == ' ')
    return iob_error(err, 0, "invalid scale '%s': want a number from 1 to %g", s, SD_SCALE_MAX);
  if (v < 1.0 || v > SD_SCALE_MAX)
    return iob_error(err, 0, "invalid scale '%s': want a number from 1 to %g", s, SD_SCALE_MAX);
  *d = v;
  return 0;
}

int sd_opts_parse(int argc, char **argv, struct sd_opts *o, struct iob_error **err) {
  static const struct option longopts[] = {
      {"model", required_argument, NULL, 'm'},
      {"size", required_argument, NULL, 's'},
      {"write-cache", required_argument, NULL, 'w'},
      {"scale", required_argument, NULL, 'x'},
      {"foreground", no_argument, NULL, 'f'},
      {"stats", required_argument, NULL, 'S'},
      {"trace", required_argument, NULL, 'T'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  *o = (struct sd_opts){
      .model = SD_MODEL_HDD, .size = SD_SIZE_DEFAULT, .write_cache = true, .scale = 1.0};
  optind = 0; /* a fresh scan, also when called twice (the unit test) */
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, ":m:s:w:x:fh", longopts, NULL)) != -1) {
    int r = 0;
    switch (c) {
    case 'm':
      r = parse_model(optarg, &o->model, err);
      break;
    case 's':
      r = sd_parse_size(optarg, &o->size, err);
      if (r == 0 && (o->size < SD_SIZE_MIN || o->size > SD_SIZE_MAX || o->size % (1u << 20)))
        r = iob_error(err, 0, "invalid size '%s': want a multiple of 1M from 64M to 64G", optarg);
      break;
    case 'w':
      r = parse_onoff(optarg, &o->write_cache, err);
      break;
    case 'x':
      r = parse_scale(optarg, &o->scale, err);
      break;
    case 'f':
      o->foreground = true;
      break;
    case 'S':
      if (optarg[0] == '\0')
        r = iob_error(err, 0, "invalid stats file '': want a path");
      o->stats = optarg;
      break;
    case 'T':
      if (optarg[0] == '\0')
        r = iob_error(err, 0, "invalid trace file '': want a path");
      o->trace = optarg;
      break;
    case 'h':
      fputs(usage, stdout);
      return 1;
    case ':':
      return iob_error(err, 0, "option '%s' needs a value", argv[optind - 1]);
    default:
      return iob_error(err, 0, "unknown option '%s'", argv[optind - 1]);
    }
    if (r < 0)
      return r;
  }
  if (optind != argc - 1)
    return iob_error(err, 0, "%s: want one MOUNTPOINT (simdisk --help)",
                     optind >= argc ? "missing mountpoint" : "too many arguments");
  o->mountpoint = argv[optind];
  return 0;
}
