// SPDX-License-Identifier: Apache-2.0
/* `iobatchctl calibrate`: measure the penalty matrix of this machine's disk.
 *
 * For the four measured classes (seq-read, rand-read, seq-write, rand-write)
 * it runs fio (O_DIRECT, libaio) on files in a scratch directory on the disk
 * to calibrate: each class alone, then for every ordered pair (victim i,
 * neighbour j) the victim's fixed amount of work while a class-j job runs
 * beside it for the victim's whole run.  The slowdown of i beside j is
 *   d[i][j] = solo rate / paired rate - 1      (rate = bytes / fio runtime)
 * as a median of same-repeat ratios.  With fixed work on both sides the
 * shorter job would finish early and leave the other alone, so the
 * neighbour is time-based and stopped when the victim is done.
 *
 * The output is a batcher config file (batch_config_parse, batcher.h):
 * matrix.<class> rows in the enum order with s = d / slowdown_scale, so the
 * predictive model's 1 + slowdown_scale * s reproduces the measured
 * slowdown; seq_slowdown is the measured median factor of two sequential
 * streams.  The text is parsed back with batch_config_parse before it is
 * written, so a file this writes is always accepted by the agent.
 *
 * Wiring (cli/ is the CLI's): dispatch argv[1] == "calibrate" to
 *   return iobctl_calibrate(argc - 1, argv + 1);
 * (argv[0] of the call is "calibrate"), and add cli/calibrate.c to the
 * iobatchctl sources; it needs libbatch, libcommon and jansson.
 */
#ifndef IOB_CLI_CALIBRATE_H
#define IOB_CLI_CALIBRATE_H

/* Runs the whole calibration; prints errors once ("iobatchctl calibrate:
 * ...") and returns the process exit status (0 ok, 1 failure, 2 usage). */
int iobctl_calibrate(int argc, char **argv);

#endif
