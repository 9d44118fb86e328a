// SPDX-License-Identifier: Apache-2.0
/* The rootfs mounts containerd hands to Create (overlay, bind), mounted onto
 * <bundle>/rootfs with mount(2); options as containerd's mount package reads
 * them. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/xalloc.h"
#include "shim/rootfs.h"

struct opt {
  const char *name;
  bool clear;
  unsigned long flag;
};

static const struct opt opts[] = {
    {"async", true, MS_SYNCHRONOUS},
    {"atime", true, MS_NOATIME},
    {"bind", false, MS_BIND},
    {"defaults", false, 0},
    {"dev", true, MS_NODEV},
    {"diratime", true, MS_NODIRATIME},
    {"dirsync", false, MS_DIRSYNC},
    {"exec", true, MS_NOEXEC},
    {"mand", false, MS_MANDLOCK},
    {"noatime", false, MS_NOATIME},
    {"nodev", false, MS_NODEV},
    {"nodiratime", false, MS_NODIRATIME},
    {"noexec", false, MS_NOEXEC},
    {"nomand", true, MS_MANDLOCK},
    {"norelatime", true, MS_RELATIME},
    {"nostrictatime", true, MS_STRICTATIME},
    {"nosuid", false, MS_NOSUID},
    {"rbind", false, MS_BIND | MS_REC},
    {"relatime", false, MS_RELATIME},
    {"remount", false, MS_REMOUNT},
    {"ro", false, MS_RDONLY},
    {"rw", true, MS_RDONLY},
    {"strictatime", false, MS_STRICTATIME},
    {"suid", true, MS_NOSUID},
    {"sync", false, MS_SYNCHRONOUS},
};

static const struct opt prop[] = {
    {"private", false, MS_PRIVATE},       {"rprivate", false, MS_PRIVATE | MS_REC},
    {"shared", false, MS_SHARED},         {"rshared", false, MS_SHARED | MS_REC},
    {"slave", false, MS_SLAVE},           {"rslave", false, MS_SLAVE | MS_REC},
    {"unbindable", false, MS_UNBINDABLE}, {"runbindable", false, MS_UNBINDABLE | MS_REC},
};

static const struct opt *lookup(const struct opt *t, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(t[i].name, name))
      return &t[i];
  return NULL;
}

static int append(char **data, size_t *len, const char *s, struct iob_error **err) {
  size_t n = strlen(s);
  /* The kernel takes one page of mount data. */
  if (*len + n + 2 > 4096)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "mount options longer than a page");
  char *nd = xrealloc(*data, *len + n + 2);
  if (*len)
    nd[(*len)++] = ',';
  memcpy(nd + *len, s, n + 1);
  *len += n;
  *data = nd;
  return 0;
}

int shim_mount_parse_options(const char *const *o, size_t n, unsigned long *flags,
                             unsigned long *propagation, char **data, struct iob_error **err) {
  *flags = 0;
  *propagation = 0;
  *data = NULL;
  size_t len = 0;
  for (size_t i = 0; i < n; i++) {
    if (o[i] == NULL || strchr(o[i], '\n')) {
      free(*data);
      *data = NULL;
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid mount option");
    }
    const struct opt *f = lookup(opts, IOB_ARRAY_SIZE(opts), o[i]);
    const struct opt *p = lookup(prop, IOB_ARRAY_SIZE(prop), o[i]);
    if (f && f->clear)
      *flags &= ~f->flag;
    else if (f)
      *flags |= f->flag;
    else if (p)
      *propagation |= p->flag;
    else if (append(data, &len, o[i], err) < 0) {
      free(*data);
      *data = NULL;
      return -1;
    }
  }
  return 0;
}

static int mount_one(const struct shim_mount *m, const char *target, struct iob_error **err) {
  if (m->type == NULL || m->source == NULL || strchr(m->type, ','))
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid rootfs mount");
  unsigned long flags, propagation;
  cleanup_free char *data = NULL;
  if (shim_mount_parse_options(m->options, m->n_options, &flags, &propagation, &data, err) < 0)
    return -1;
  const char *type = m->type;
  if (flags & MS_BIND)
    type = NULL;
  /* A read-only bind needs a second, remounting call. */
  unsigned long first = (flags & MS_BIND) ? flags & ~MS_RDONLY : flags;
  if (mount(m->source, target, type, first, data) < 0)
    return iob_error(err, errno, "cannot mount '%s' (%s) on '%s'", m->source, m->type, target);
  if ((flags & MS_BIND) && (flags & MS_RDONLY) &&
      mount("", target, NULL, flags | MS_REMOUNT, NULL) < 0) {
    int e = errno;
    umount2(target, MNT_DETACH);
    return iob_error(err, e, "cannot remount '%s' read-only", target);
  }
  if (propagation && mount("", target, NULL, propagation, NULL) < 0) {
    int e = errno;
    umount2(target, MNT_DETACH);
    return iob_error(err, e, "cannot change propagation of '%s'", target);
  }
  return 0;
}

int shim_mount_all(const struct shim_mount *m, size_t n, const char *target,
                   struct iob_error **err) {
  for (size_t i = 0; i < n; i++) {
    if (mount_one(&m[i], target, err) < 0) {
      shim_unmount_all(target);
      return -1;
    }
  }
  return 0;
}

void shim_unmount_all(const char *target) {
  /* Several mounts may be stacked on the target; stop at the first that is
   * not a mount point (EINVAL) or does not exist. */
  for (int i = 0; i < 64; i++) {
    if (umount2(target, MNT_DETACH) < 0)
      return;
  }
}
