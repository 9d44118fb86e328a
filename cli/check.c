// SPDX-License-Identifier: Apache-2.0
/* iobatchctl check io-pressure: node-problem-detector's custom plugin
 * protocol (its pkg/custompluginmonitor/types: exit 0 OK, 1 NonOK,
 * 2 Unknown; one line on stdout, the condition's message, which it cuts
 * at max_output_length, 80 by default).  NonOK while a protected container
 * misses its latency objective (the agent's io_pressure, with its
 * hysteresis: agent/protect/protect.h) or while a container has been held longer
 * than --max-held; Unknown when the agent cannot be asked.
 * packaging/kubernetes/iobatch-npd.json turns it into the node condition
 * IobatchIOPressure: prefixed, because the kubelet names its own
 * conditions *Pressure (MemoryPressure, DiskPressure, PIDPressure) and a
 * kubelet PSI proposal (KEP-4205) plans more of that shape. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/cleanup.h"
#include "iobatch/agent.pb-c.h"

#define CHECK_OK 0
#define CHECK_NONOK 1
#define CHECK_UNKNOWN 2
#define CHECK_MAX_HELD_S 120 /* the kubelet's runtime request timeout */

static void usage(FILE *f) {
  fprintf(f,
          "usage: iobatchctl check io-pressure [--max-held SECONDS]\n"
          "\n"
          "A node-problem-detector custom plugin: prints one line and exits 0 when the\n"
          "node's block I/O is fine, 1 while a protected container misses its latency\n"
          "objective or a container has been held longer than --max-held (default %d,\n"
          "the kubelet's runtime request timeout), 2 when the agent cannot be asked.\n",
          CHECK_MAX_HELD_S);
}

static int io_pressure(unsigned max_held_s) {
  cleanup_error struct iob_error *err = NULL;
  Iobatch__Agent__V1__StatusResponse *st = NULL;
  if (iobctl_status_fetch(&st, false, 5000, &err) < 0) {
    printf("unknown: %.70s\n", err->msg);
    return CHECK_UNKNOWN;
  }
  int rc = CHECK_OK;
  if (st->io_pressure) {
    printf("%.80s\n", st->io_pressure_reason);
    rc = CHECK_NONOK;
  } else {
    const Iobatch__Agent__V1__ContainerStatus *old = NULL;
    size_t pending = 0;
    for (size_t i = 0; i < st->n_containers; i++) {
      const Iobatch__Agent__V1__ContainerStatus *x = st->containers[i];
      if (strcmp(x->state, "pending") != 0)
        continue;
      pending++;
      if (old == NULL || x->held_ms > old->held_ms)
        old = x;
    }
    if (old && old->held_ms >= (uint64_t)max_held_s * 1000) {
      printf("'%.40s' held %llu s (over %u s)\n", old->id,
             (unsigned long long)(old->held_ms / 1000), max_held_s);
      rc = CHECK_NONOK;
    } else {
      printf("no I/O pressure (%zu held, none over %u s)\n", pending, max_held_s);
    }
  }
  protobuf_c_message_free_unpacked(&st->base, NULL);
  return rc;
}

int iobctl_check(int argc, char **argv) {
  static const struct option opts[] = {
      {"max-held", required_argument, NULL, 'm'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  unsigned max_held = CHECK_MAX_HELD_S;
  optind = 0;
  opterr = 0;
  int o;
  while ((o = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (o) {
    case 'h':
      usage(stdout);
      return 0;
    case 'm': {
      char *end;
      unsigned long v = strtoul(optarg, &end, 10);
      if (*optarg < '0' || *optarg > '9' || *end || v == 0 || v > 86400)
        return iobctl_usage_fail("check",
                                 "--max-held: '%s' is not a number of seconds from 1 "
                                 "to 86400",
                                 optarg);
      max_held = (unsigned)v;
      break;
    }
    default:
      return iobctl_usage_error("check", o, argv);
    }
  }
  if (optind + 1 != argc || strcmp(argv[optind], "io-pressure") != 0)
    return iobctl_usage_fail("check", "expected one check: io-pressure");
  return io_pressure(max_held);
}
