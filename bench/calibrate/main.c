// SPDX-License-Identifier: Apache-2.0
/* Standalone driver for `iobatchctl calibrate` until the CLI dispatches to
 * it: bench/iobctl-calibrate [options] == iobatchctl calibrate [options]. */
#include "cli/calibrate.h"

int main(int argc, char **argv) {
  static char name[] = "calibrate";
  argv[0] = name;
  return iobctl_calibrate(argc, argv);
}
