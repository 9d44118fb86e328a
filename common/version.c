// SPDX-License-Identifier: Apache-2.0
#include "common/version.h"

#include <stdio.h>

/* Built by hand (not through the Makefile): say so rather than fail. */
#ifndef IOB_VERSION
#define IOB_VERSION "0.0.0"
#endif
#ifndef IOB_GIT_REV
#define IOB_GIT_REV "unknown"
#endif

const char iob_version[] = IOB_VERSION;
const char iob_git_rev[] = IOB_GIT_REV;

int iob_version_print(const char *prog) {
  if (printf("%s %s (git %s)\n", prog, iob_version, iob_git_rev) < 0 || fflush(stdout) != 0)
    return -1;
  return 0;
}
