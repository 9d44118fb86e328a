// SPDX-License-Identifier: Apache-2.0
#include "agent/restore.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroupv2/cg2.h"
#include "common/cleanup.h"
#include "common/file.h"
#include "common/log.h"
#include "common/xalloc.h"

#define cleanup_json __attribute__((cleanup(json_decrefp)))

/* The files the agent writes (agent/weights.c, agent/caps.c,
 * agent/cpushare.c): nothing else is ever written back from a journal. */
static const char *const files[] = {
    "io.weight",
    "io.bfq.weight",
    "io.max",
    "blkio.weight_device",
    "blkio.bfq.weight_device",
    "blkio.throttle.read_bps_device",
    "blkio.throttle.write_bps_device",
    "blkio.throttle.read_iops_device",
    "blkio.throttle.write_iops_device",
    "cpu.weight",
    "cpu.shares",
    "cgroup.freeze", /* agent/freeze.c */
    "freezer.state",
};

/* A file with one value for the whole cgroup, not a line per device: its
 * entry's device is 0:0 and the value is written back alone. */
static bool is_freeze(const char *file) {
  const char *base = strrchr(file, '/') + 1;
  return strcmp(base, "cgroup.freeze") == 0 || strcmp(base, "freezer.state") == 0;
}

static bool whole_cgroup(const char *file) {
  const char *base = strrchr(file, '/') + 1;
  return strcmp(base, "cpu.weight") == 0 || strcmp(base, "cpu.shares") == 0 || is_freeze(file);
}

static bool boot_id_ok(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n >= sizeof(((struct agent_restore *)0)->boot_id))
    return false;
  for (size_t i = 0; i < n; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') || s[i] == '-'))
      return false;
  return true;
}

int agent_restore_init(struct agent_restore *r, const char *state_dir, const char *boot_id_file,
                       struct iob_error **err) {
  (void)err; /* cannot fail (out of memory aborts); kept for its callers */
  memset(r, 0, sizeof(*r));
  cleanup_free char *id = NULL;
  size_t len = 0;
  cleanup_error struct iob_error *e = NULL;
  if (iob_read_file(boot_id_file ? boot_id_file : AGENT_RESTORE_BOOT_ID, 64, &id, &len, &e) == 0) {
    while (len > 0 && (id[len - 1] == '\n' || id[len - 1] == ' '))
      id[--len] = '\0';
    if (boot_id_ok(id))
      snprintf(r->boot_id, sizeof(r->boot_id), "%s", id);
  }
  if (state_dir != NULL)
    r->path = xasprintf("%s/%s", state_dir, AGENT_RESTORE_FILE);
  return 0;
}

static void clear(struct agent_restore *r) {
  for (size_t i = 0; i < r->n; i++)
    free(r->v[i].file);
  free(r->v);
  r->v = NULL;
  r->n = r->cap = 0;
}

void agent_restore_release(struct agent_restore *r) {
  clear(r);
  free(r->path);
  r->path = NULL;
}

static bool file_ok(const char *f) {
  size_t n = strlen(f);
  if (n == 0 || n >= AGENT_RESTORE_PATH_MAX || f[0] != '/' || strstr(f, "/../") ||
      strstr(f, "/./") || strstr(f, "//"))
    return false;
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)f[i] < 0x20 || f[i] == 0x7f)
      return false;
  const char *base = strrchr(f, '/') + 1;
  for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
    if (strcmp(base, files[i]) == 0)
      return true;
  return false;
}

/* What the kernel prints back and accepts: "default", numbers, "max",
 * "key=value" words, "THAWED". */
static bool value_ok(const char *v) {
  size_t n = strlen(v);
  if (n == 0 || n >= AGENT_RESTORE_VALUE_MAX)
    return false;
  for (size_t i = 0; i < n; i++)
    if (!((v[i] >= 'a' && v[i] <= 'z') || (v[i] >= 'A' && v[i] <= 'Z') ||
          (v[i] >= '0' && v[i] <= '9') || v[i] == '=' || v[i] == ' ' || v[i] == '.'))
      return false;
  return true;
}

static struct agent_restore_entry *find(const struct agent_restore *r, const char *file,
                                        unsigned major, unsigned minor) {
  for (size_t i = 0; i < r->n; i++)
    if (r->v[i].major == major && r->v[i].minor == minor && strcmp(r->v[i].file, file) == 0)
      return &r->v[i];
  return NULL;
}

bool agent_restore_has(const struct agent_restore *r, const char *file, unsigned major,
                       unsigned minor) {
  return find(r, file, major, minor) != NULL;
}

static int add(struct agent_restore *r, const char *file, unsigned major, unsigned minor,
               const char *value, struct iob_error **err) {
  if (r->n >= AGENT_RESTORE_MAX)
    return iob_error_code(err, IOB_CODE_RESOURCE_EXHAUSTED,
                          "cannot remember '%s': %d values remembered already", file,
                          AGENT_RESTORE_MAX);
  if (r->n == r->cap) {
    r->cap = r->cap ? r->cap * 2 : 16;
    r->v = xrealloc(r->v, r->cap * sizeof(*r->v));
  }
  struct agent_restore_entry *e = &r->v[r->n];
  memset(e, 0, sizeof(*e));
  e->file = xstrdup(file);
  e->major = major;
  e->minor = minor;
  snprintf(e->value, sizeof(e->value), "%s", value);
  r->n++;
  return 0;
}

/* ---- the journal ---- */

static int from_json(struct agent_restore *r, json_t *root, const char *name,
                     struct iob_error **err) {
  if (!json_is_object(root))
    return iob_error_code(err, IOB_CODE_DATA_LOSS, "'%s': top level is not an object", name);
  json_t *ver = json_object_get(root, "version");
  if (!json_is_integer(ver) || json_integer_value(ver) != 1)
    return iob_error_code(err, IOB_CODE_DATA_LOSS, "'%s': missing or unsupported 'version'", name);
  json_t *boot = json_object_get(root, "boot_id");
  if (boot && (!json_is_string(boot) || !boot_id_ok(json_string_value(boot))))
    return iob_error_code(err, IOB_CODE_DATA_LOSS, "'%s': invalid 'boot_id'", name);
  snprintf(r->boot_id, sizeof(r->boot_id), "%s", boot ? json_string_value(boot) : "");
  json_t *ents = json_object_get(root, "entries");
  if (!json_is_array(ents))
    return iob_error_code(err, IOB_CODE_DATA_LOSS, "'%s': 'entries' is not an array", name);
  if (json_array_size(ents) > AGENT_RESTORE_MAX)
    return iob_error_code(err, IOB_CODE_DATA_LOSS, "'%s': %zu entries, at most %d", name,
                          json_array_size(ents), AGENT_RESTORE_MAX);
  size_t i;
  json_t *v;
  json_array_foreach(ents, i, v) {
    const char *file = NULL, *dev = NULL, *value = NULL;
    json_error_t je;
    unsigned maj, min;
    if (json_unpack_ex(v, &je, JSON_STRICT, "{s:s, s:s, s:s}", "file", &file, "dev", &dev, "value",
                       &value) < 0)
      return iob_error_code(err, IOB_CODE_DATA_LOSS, "'%s': entry %zu: %s", name, i, je.text);
    if (!file_ok(file))
      return iob_error_code(err, IOB_CODE_DATA_LOSS,
                            "'%s': entry %zu: '%.200s' is not a cgroup file the agent writes", name,
                            i, file);
    if (cg2_parse_devno(dev, strlen(dev), &maj, &min) < 0)
      return iob_error_code(err, IOB_CODE_DATA_LOSS, "'%s': entry %zu: invalid device '%.32s'",
                            name, i, dev);
    if (!value_ok(value))
      return iob_error_code(err, IOB_CODE_DATA_LOSS, "'%s': entry %zu: invalid value '%.100s'",
                            name, i, value);
    if (find(r, file, maj, min))
      return iob_error_code(err, IOB_CODE_DATA_LOSS, "'%s': entry %zu: '%s' %u:%u twice", name, i,
                            file, maj, min);
    if (add(r, file, maj, min, value, err) < 0)
      return -1;
  }
  return 0;
}

int agent_restore_parse(struct agent_restore *r, const char *name, const char *buf, size_t len,
                        struct iob_error **err) {
  clear(r);
  cleanup_json json_t *root = iob_state_json(name, buf, len, AGENT_RESTORE_MAX_BYTES, err);
  if (root == NULL)
    return -1;
  if (from_json(r, root, name, err) < 0) {
    clear(r);
    return -1;
  }
  return 0;
}

static int save(const struct agent_restore *r, struct iob_error **err) {
  if (r->path == NULL)
    return 0;
  if (r->n == 0) {
    if (unlink(r->path) < 0 && errno != ENOENT)
      return iob_error(err, errno, "cannot remove '%s'", r->path);
    return 0;
  }
  cleanup_json json_t *ents = json_array();
  if (ents == NULL)
    iob_oom();
  for (size_t i = 0; i < r->n; i++) {
    char dev[32];
    snprintf(dev, sizeof(dev), "%u:%u", r->v[i].major, r->v[i].minor);
    /* Not out of memory alone: a cgroup directory's name need not be
     * UTF-8, which jansson requires. */
    json_error_t je;
    json_t *o = json_pack_ex(&je, 0, "{s:s, s:s, s:s}", "file", r->v[i].file, "dev", dev, "value",
                             r->v[i].value);
    if (o == NULL)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "cannot encode '%s' into '%s': %s",
                            r->v[i].file, r->path, je.text);
    if (json_array_append_new(ents, o) < 0)
      iob_oom();
  }
  cleanup_json json_t *root = json_pack("{s:i, s:O}", "version", 1, "entries", ents);
  if (root == NULL ||
      (r->boot_id[0] && json_object_set_new(root, "boot_id", json_string(r->boot_id)) < 0))
    iob_oom();
  cleanup_free char *text = json_dumps(root, JSON_INDENT(1));
  if (text == NULL)
    iob_oom();
  return iob_write_file_replace(r->path, text, strlen(text), 0600, err);
}

static void drop_from(struct agent_restore *r, size_t n) {
  while (r->n > n)
    free(r->v[--r->n].file);
}

int agent_restore_remember_n(struct agent_restore *r, const struct agent_restore_entry *v, size_t n,
                             struct iob_error **err) {
  size_t before = r->n;
  for (size_t i = 0; i < n; i++) {
    const struct agent_restore_entry *e = &v[i];
    if (find(r, e->file, e->major, e->minor))
      continue;
    if (!file_ok(e->file)) {
      drop_from(r, before);
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "'%s' is not a cgroup file to restore",
                            e->file);
    }
    if (!value_ok(e->value)) {
      drop_from(r, before);
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "cannot remember '%.100s' of '%s'",
                            e->value, e->file);
    }
    if (add(r, e->file, e->major, e->minor, e->value, err) < 0) {
      drop_from(r, before);
      return -1;
    }
  }
  /* One journal write (and fsync) for them all. */
  if (r->n > before && save(r, err) < 0) {
    drop_from(r, before);
    return -1;
  }
  return 0;
}

int agent_restore_remember(struct agent_restore *r, const char *file, unsigned major,
                           unsigned minor, const char *value, struct iob_error **err) {
  struct agent_restore_entry e = {.file = (char *)file, .major = major, .minor = minor};
  if (strlen(value) >= sizeof(e.value))
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "cannot remember '%.100s' of '%s'", value,
                          file);
  snprintf(e.value, sizeof(e.value), "%s", value);
  return agent_restore_remember_n(r, &e, 1, err);
}

/* Write "MAJ:MIN value" (or the value alone for a whole-cgroup file) to
 * the file: never through a symbolic link, never creating it (a missing
 * file is a vanished cgroup). */
static int put_back(const struct agent_restore_entry *e, struct iob_error **err) {
  char line[AGENT_RESTORE_VALUE_MAX + 32];
  int n = whole_cgroup(e->file)
              ? snprintf(line, sizeof(line), "%s", e->value)
              : snprintf(line, sizeof(line), "%u:%u %s", e->major, e->minor, e->value);
  cleanup_close int fd = open(e->file, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return iob_error(err, errno, "cannot open '%s'", e->file);
  ssize_t w;
  do
    w = write(fd, line, (size_t)n);
  while (w < 0 && errno == EINTR);
  if (w < 0)
    return iob_error(err, errno, "cannot write '%s' to '%s'", line, e->file);
  return 0;
}

static bool is_which(const char *file, enum agent_restore_files which) {
  const char *base = strrchr(file, '/') + 1;
  bool cap = strcmp(base, "io.max") == 0 || strncmp(base, "blkio.throttle.", 15) == 0;
  bool freeze = is_freeze(file);
  bool cpu = whole_cgroup(file) && !freeze;
  switch (which) {
  case AGENT_RESTORE_ALL:
    return true;
  case AGENT_RESTORE_CAPS:
    return cap;
  case AGENT_RESTORE_CPU:
    return cpu;
  case AGENT_RESTORE_FREEZE:
    return freeze;
  case AGENT_RESTORE_WEIGHTS:
    break;
  }
  return !cap && !cpu && !freeze;
}

static bool in_dir(const char *file, const char *dir) {
  size_t n = strlen(dir);
  while (n > 1 && dir[n - 1] == '/')
    n--;
  return strncmp(file, dir, n) == 0 && file[n] == '/' && strchr(file + n + 1, '/') == NULL;
}

/* Put E back; 1 written, 0 gone, -1 failed (logged). */
static int restore_one(const struct agent_restore_entry *e, bool replay) {
  cleanup_error struct iob_error *err = NULL;
  if (put_back(e, &err) < 0) {
    if (err->errno_ == ENOENT)
      return 0;
    iob_warn("cannot restore '%s' %u:%u to '%s': %s", e->file, e->major, e->minor, e->value,
             err->msg);
    return -1;
  }
  if (replay)
    iob_info("restored '%s' %u:%u to '%s' (left by an agent that did not stop)", e->file, e->major,
             e->minor, e->value);
  else
    iob_debug("restored '%s' %u:%u to '%s'", e->file, e->major, e->minor, e->value);
  return 1;
}

static size_t restore_where(struct agent_restore *r, const char *dir,
                            enum agent_restore_files which, bool replay) {
  size_t done = 0, k = 0, before = r->n;
  for (size_t i = 0; i < r->n; i++) {
    struct agent_restore_entry *e = &r->v[i];
    if ((dir && !in_dir(e->file, dir)) || !is_which(e->file, which)) {
      r->v[k++] = *e;
      continue;
    }
    done += restore_one(e, replay) > 0;
    free(e->file);
  }
  r->n = k;
  if (r->n != before) {
    cleanup_error struct iob_error *err = NULL;
    if (save(r, &err) < 0)
      iob_warn("%s", err->msg);
  }
  return done;
}

size_t agent_restore_dir(struct agent_restore *r, const char *dir, enum agent_restore_files which) {
  return restore_where(r, dir, which, false);
}

static int set_aside(const char *path, struct iob_error **cause, struct iob_error **err) {
  return iob_state_set_aside(path, (*cause)->msg, "nothing restored from it", err);
}

int agent_restore_replay(struct agent_restore *r, struct iob_error **err) {
  clear(r);
  if (r->path == NULL)
    return 0;
  char boot[sizeof(r->boot_id)];
  snprintf(boot, sizeof(boot), "%s", r->boot_id);
  cleanup_close int fd = open(r->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT)
      return 0;
    return iob_error(err, errno, "cannot open '%s'", r->path);
  }
  cleanup_free char *buf = NULL;
  size_t len = 0;
  cleanup_error struct iob_error *cause = NULL;
  int bad = iob_read_fd(fd, r->path, AGENT_RESTORE_MAX_BYTES, &buf, &len, &cause) < 0 ||
            agent_restore_parse(r, r->path, buf, len, &cause) < 0;
  char then[sizeof(r->boot_id)];
  snprintf(then, sizeof(then), "%s", r->boot_id);
  snprintf(r->boot_id, sizeof(r->boot_id), "%s", boot); /* what this agent writes */
  if (bad)
    return set_aside(r->path, &cause, err);
  if (then[0] && boot[0] && strcmp(then, boot) != 0) {
    /* cgroups start anew at boot: its values are nobody's now */
    iob_info("'%s' is from another boot (%s): %zu values not restored, the journal removed",
             r->path, then, r->n);
    clear(r);
    return save(r, err) < 0 ? -1 : 0;
  }
  size_t n = r->n;
  size_t done = restore_where(r, NULL, AGENT_RESTORE_ALL, true);
  if (save(r, err) < 0) /* an empty journal: removed */
    return -1;
  if (n > done)
    iob_info("'%s': %zu of %zu values not restored: their cgroups are gone or the writes failed",
             r->path, n - done, n);
  return (int)done;
}
