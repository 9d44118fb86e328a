// SPDX-License-Identifier: Apache-2.0
#ifndef IOB_VERSION_H
#define IOB_VERSION_H

/* The release (the file VERSION) and the git revision the programs were
 * built from (`git describe --always --dirty`, "unknown" outside a git
 * tree), passed by the Makefile as IOB_VERSION and IOB_GIT_REV. */
extern const char iob_version[];
extern const char iob_git_rev[];

/* "PROG 0.1.0 (git abc1234)" and a newline on stdout: what every program
 * prints for --version.  Returns 0, or -1 when stdout cannot be written. */
int iob_version_print(const char *prog);

#endif
