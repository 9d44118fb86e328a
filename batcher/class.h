// SPDX-License-Identifier: Apache-2.0
/* The workload classes: the one vocabulary of the detector (wcd_classify
 * gives one), the batcher (its penalty matrix is indexed by them), the
 * agent, the hook, the shim and the CLI (docs/DESIGN.md, "Workload
 * characters").
 *
 * The names are what travels and what is stored: io.iobatch.class, the
 * agent's protocol (RegisterRequest.declared_class, the replies' class),
 * profiles.json, penalties.json, the matrix.<class> rows of a batcher
 * config.  The numbers are the column order of a matrix row in a config
 * file, so the planned classes keep this order. */
#ifndef IOB_BATCH_CLASS_H
#define IOB_BATCH_CLASS_H

#include <stdbool.h>

enum batch_class {
  BATCH_SEQ_READ = 0,
  BATCH_RAND_READ,
  BATCH_SEQ_WRITE,
  BATCH_RAND_WRITE,
  BATCH_MIXED,
  BATCH_IDLE,
  /* Before enough samples, samples that disagree, or bytes without a
   * request count (procfs + async I/O). */
  BATCH_UNKNOWN,
  /* Latency-sensitive (a database, a queue-depth-1 reader or sync writer):
   * only ever declared (io.iobatch.class=latency), never planned.  The
   * agent protects such a container and plans it by its detected I/O
   * class; detection reports it as wcd_result.latency beside the I/O
   * class. */
  BATCH_LATENCY,
};
/* The number of planned classes (those before it: rows and columns of the
 * penalty matrix, the class of a job, a profile or a measured pair), and
 * of all classes, latency included.  Counts, not classes. */
#define BATCH_NCLASS (BATCH_UNKNOWN + 1)
#define BATCH_NCLASS_ALL (BATCH_LATENCY + 1)

/* "seq-read", "rand-read", "seq-write", "rand-write", "mixed", "idle",
 * "unknown", "latency"; "invalid" for out-of-range values. */
const char *batch_class_name(enum batch_class c);
/* A planned class (a matrix row, a job's, a profile's or a pair's class)
 * for a name (exact, lower case), or -1; "latency" is not one. */
int batch_class_from_name(const char *name);
/* Any class, latency included (a declared class: io.iobatch.class,
 * RegisterRequest.declared_class): 0 and *OUT, or -1. */
int batch_class_parse(const char *name, enum batch_class *out);
/* True when NAME parses to BATCH_LATENCY (a declared class: a container's,
 * a pod rule's); false for NULL. */
bool batch_class_names_latency(const char *name);
/* True for seq-read and seq-write: streams that share bandwidth. */
bool batch_class_is_seq(enum batch_class c);
/* True for the classes that do I/O (seq/rand read/write, mixed): only
 * these take a batch slot and slow anyone in a forecast. */
bool batch_class_does_io(enum batch_class c);

#endif
