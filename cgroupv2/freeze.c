// SPDX-License-Identifier: Apache-2.0
#include "cgroupv2/freeze.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroupv2/cg2.h"
#include "common/cleanup.h"
#include "common/xalloc.h"

void cg2_freeze_target_release(struct cg2_freeze_target *t) {
  free(t->file);
  t->file = NULL;
  t->mech = CG2_FREEZE_NONE;
}

int cg2_freeze_target_resolve(const char *root, pid_t pid, struct cg2_freeze_target *t,
                              struct iob_error **err) {
  t->mech = CG2_FREEZE_NONE;
  t->file = NULL;
  cleanup_error struct iob_error *e = NULL;
  cleanup_free char *mnt = NULL, *cg1 = NULL;
  if (cg2_v1_mount_find(root, "freezer", &mnt, &e) == 0 &&
      cg2_pid_cgroup_v1(root, pid, "freezer", &cg1, &e) == 0) {
    t->file = cg2_file_in(root, mnt, cg1, "freezer.state");
    if (t->file) {
      t->mech = CG2_FREEZE_V1_STATE;
      return 0;
    }
  }
  iob_error_release(&e);
  struct cg2_mount m = {0};
  if (cg2_mount_find(root, &m, &e) < 0)
    return 0;
  cleanup_free char *cg = NULL;
  if (cg2_pid_cgroup(root, pid, &cg, err) < 0) {
    cg2_mount_release(&m);
    return -1;
  }
  t->file = cg2_file_in(root, m.path, cg, "cgroup.freeze");
  cg2_mount_release(&m);
  if (t->file)
    t->mech = CG2_FREEZE_V2_FREEZE;
  return 0;
}

const char *cg2_freeze_word(enum cg2_freeze_mech mech, bool frozen) {
  if (mech == CG2_FREEZE_V1_STATE)
    return frozen ? "FROZEN" : "THAWED";
  return frozen ? "1" : "0";
}

static bool is(const char *buf, size_t n, const char *word) {
  return n == strlen(word) && memcmp(buf, word, n) == 0;
}

int cg2_freeze_parse(enum cg2_freeze_mech mech, const char *name, const char *buf, size_t len,
                     bool *frozen, struct iob_error **err) {
  size_t n = len;
  if (n > 0 && buf[n - 1] == '\n')
    n--;
  bool v1 = mech == CG2_FREEZE_V1_STATE;
  if (mech != CG2_FREEZE_V1_STATE && mech != CG2_FREEZE_V2_FREEZE)
    return iob_error(err, EINVAL, "'%s': no freezer", name);
  if (v1 ? is(buf, n, "FROZEN") || is(buf, n, "FREEZING") : is(buf, n, "1"))
    *frozen = true;
  else if (v1 ? is(buf, n, "THAWED") : is(buf, n, "0"))
    *frozen = false;
  else
    return iob_error(err, EINVAL, "'%s': not a freezer state: '%.*s'", name, (int)(n > 32 ? 32 : n),
                     buf);
  return 0;
}

int cg2_freeze_get(const struct cg2_freeze_target *t, bool *frozen, struct iob_error **err) {
  if (t->mech == CG2_FREEZE_NONE)
    return iob_error(err, ENOTSUP, "no freezer");
  cleanup_free char *buf = NULL;
  size_t len = 0;
  if (cg2_read_file(t->file, 64, &buf, &len, err) < 0)
    return -1;
  return cg2_freeze_parse(t->mech, t->file, buf, len, frozen, err);
}

int cg2_freeze_set(const struct cg2_freeze_target *t, bool frozen, struct iob_error **err) {
  if (t->mech == CG2_FREEZE_NONE)
    return iob_error(err, ENOTSUP, "no freezer");
  return cg2_write_file(t->file, cg2_freeze_word(t->mech, frozen), err);
}

const char *cg2_freeze_mech_name(enum cg2_freeze_mech mech) {
  switch (mech) {
  case CG2_FREEZE_V1_STATE:
    return "freezer.state";
  case CG2_FREEZE_V2_FREEZE:
    return "cgroup.freeze";
  case CG2_FREEZE_NONE:
    break;
  }
  return "none";
}
