// SPDX-License-Identifier: Apache-2.0
#include "agent/store/restore.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/store/lock.h"
#include "cgroupv2/cg2.h"
#include "cgroupv2/weight.h"
#include "common/cleanup.h"
#include "common/file.h"
#include "common/ioprio.h"
#include "common/log.h"
#include "common/xalloc.h"

#define cleanup_json __attribute__((cleanup(json_decrefp)))

/* The files the agent writes (agent/weights/weights.c, agent/protect/caps.c
 * with the CPU weight too): nothing else is ever written back from a
 * journal. */
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
    "cgroup.freeze", /* agent/protect/freeze.c */
    "freezer.state",
    "io.prio.class", /* agent/protect/ioprio.c: blk-ioprio's class for the cgroup */
    "blkio.prio.class",
    /* agent/protect/ioprio.c's classes of each task: read for the cgroup's threads
     * and never written (a write would move a task) */
    "cgroup.threads",
    "tasks",
};

/* A file with one value for the whole cgroup, not a line per device: its
 * entry's device is 0:0 and the value is written back alone. */
static bool is_freeze(const char *file) {
  const char *base = strrchr(file, '/') + 1;
  return strcmp(base, "cgroup.freeze") == 0 || strcmp(base, "freezer.state") == 0;
}

static bool prio_file(const char *file) {
  const char *base = strrchr(file, '/') + 1;
  return strcmp(base, "io.prio.class") == 0 || strcmp(base, "blkio.prio.class") == 0;
}

/* An entry for the I/O priority of every task of a cgroup (device 0:0):
 * its value is the class the tasks had, its written value the one the
 * agent gave them (common/ioprio.h's words). */
static bool tasks_file(const char *file) {
  const char *base = strrchr(file, '/') + 1;
  return strcmp(base, "cgroup.threads") == 0 || strcmp(base, "tasks") == 0;
}

static bool whole_cgroup(const char *file) {
  const char *base = strrchr(file, '/') + 1;
  return strcmp(base, "cpu.weight") == 0 || strcmp(base, "cpu.shares") == 0 || is_freeze(file) ||
         prio_file(file);
}

/* io.weight or io.bfq.weight: with device 0:0, the "default W" line. */
static bool weight_file(const char *file) {
  const char *base = strrchr(file, '/') + 1;
  return strcmp(base, "io.weight") == 0 || strcmp(base, "io.bfq.weight") == 0;
}

static bool default_line(const struct agent_restore_entry *e) {
  return e->major == 0 && e->minor == 0 && weight_file(e->file);
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
 * "key=value" words, "THAWED", blk-ioprio's "no-change". */
static bool value_ok(const char *v) {
  size_t n = strlen(v);
  if (n == 0 || n >= AGENT_RESTORE_VALUE_MAX)
    return false;
  for (size_t i = 0; i < n; i++)
    if (!((v[i] >= 'a' && v[i] <= 'z') || (v[i] >= 'A' && v[i] <= 'Z') ||
          (v[i] >= '0' && v[i] <= '9') || v[i] == '=' || v[i] == ' ' || v[i] == '.' || v[i] == '-'))
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
               const char *value, const char *written, const char *prev, unsigned long long ino,
               unsigned tries, struct iob_error **err) {
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
  snprintf(e->written, sizeof(e->written), "%s", written);
  snprintf(e->prev, sizeof(e->prev), "%s", prev);
  e->ino = ino;
  e->tries = tries;
  r->n++;
  return 0;
}

/* ---- the journal ---- */

static int from_json(struct agent_restore *r, json_t *root, const char *name,
                     struct iob_error **err) {
  if (!json_is_object(root))
    return iob_error_code(err, IOB_CODE_DATA_LOSS, "'%s': top level is not an object", name);
  json_t *ver = json_object_get(root, "version");
  if (!json_is_integer(ver) || (json_integer_value(ver) != 1 && json_integer_value(ver) != 2))
    return iob_error_code(err, IOB_CODE_DATA_LOSS, "'%s': missing or unsupported 'version'", name);
  bool v2 = json_integer_value(ver) == 2;
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
    const char *file = NULL, *dev = NULL, *value = NULL, *written = "", *prev = "";
    json_int_t ino = 0, tries = 0;
    json_error_t je;
    unsigned maj, min;
    int rc = v2 ? json_unpack_ex(v, &je, JSON_STRICT, "{s:s, s:s, s:s, s:I, s:s, s?s, s?I}", "file",
                                 &file, "dev", &dev, "value", &value, "ino", &ino, "written",
                                 &written, "prev", &prev, "tries", &tries)
                : json_unpack_ex(v, &je, JSON_STRICT, "{s:s, s:s, s:s}", "file", &file, "dev", &dev,
                                 "value", &value);
    if (rc < 0)
      return iob_error_code(err, IOB_CODE_DATA_LOSS, "'%s': entry %zu: %s", name, i, je.text);
    if (v2 && ino <= 0)
      return iob_error_code(err, IOB_CODE_DATA_LOSS, "'%s': entry %zu: invalid 'ino'", name, i);
    if (v2 && (!value_ok(written) || (*prev && !value_ok(prev))))
      return iob_error_code(err, IOB_CODE_DATA_LOSS, "'%s': entry %zu: invalid written value", name,
                            i);
    if (tries < 0 || tries > AGENT_RESTORE_TRIES_MAX ||
        (tries >= AGENT_RESTORE_TRIES && !(file_ok(file) && is_freeze(file))))
      return iob_error_code(err, IOB_CODE_DATA_LOSS, "'%s': entry %zu: invalid 'tries'", name, i);
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
    int prio;
    if (tasks_file(file) && (maj || min || iob_ioprio_parse(value, &prio) < 0 ||
                             (v2 && iob_ioprio_parse(written, &prio) < 0) ||
                             (*prev && iob_ioprio_parse(prev, &prio) < 0)))
      return iob_error_code(err, IOB_CODE_DATA_LOSS,
                            "'%s': entry %zu: invalid I/O priority entry for '%.200s'", name, i,
                            file);
    if (find(r, file, maj, min))
      return iob_error_code(err, IOB_CODE_DATA_LOSS, "'%s': entry %zu: '%s' %u:%u twice", name, i,
                            file, maj, min);
    if (add(r, file, maj, min, value, written, prev, (unsigned long long)ino, (unsigned)tries,
            err) < 0)
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
    const struct agent_restore_entry *e = &r->v[i];
    if (e->ino == 0)
      continue; /* a version-1 entry being replayed: not this agent's to keep */
    char dev[32];
    snprintf(dev, sizeof(dev), "%u:%u", e->major, e->minor);
    /* Not out of memory alone: a cgroup directory's name need not be
     * UTF-8, which jansson requires. */
    json_error_t je;
    json_t *o = json_pack_ex(&je, 0, "{s:s, s:s, s:s, s:I, s:s}", "file", e->file, "dev", dev,
                             "value", e->value, "ino", (json_int_t)e->ino, "written", e->written);
    if (o == NULL)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "cannot encode '%s' into '%s': %s",
                            e->file, r->path, je.text);
    if ((e->prev[0] && json_object_set_new(o, "prev", json_string(e->prev)) < 0) ||
        (e->tries && json_object_set_new(o, "tries", json_integer(e->tries)) < 0) ||
        json_array_append_new(ents, o) < 0)
      iob_oom();
  }
  if (json_array_size(ents) == 0) {
    if (unlink(r->path) < 0 && errno != ENOENT)
      return iob_error(err, errno, "cannot remove '%s'", r->path);
    return 0;
  }
  cleanup_json json_t *root = json_pack("{s:i, s:O}", "version", 2, "entries", ents);
  if (root == NULL ||
      (r->boot_id[0] && json_object_set_new(root, "boot_id", json_string(r->boot_id)) < 0))
    iob_oom();
  cleanup_free char *text = json_dumps(root, JSON_INDENT(1));
  if (text == NULL)
    iob_oom();
  return iob_write_file_replace(r->path, text, strlen(text), 0600, err);
}

bool agent_restore_stale(struct agent_restore *r, const char *file, unsigned major,
                         unsigned minor) {
  struct agent_restore_entry *e = find(r, file, major, minor);
  if (e == NULL || e->ino == 0)
    return false;
  cleanup_error struct iob_error *err = NULL;
  unsigned long long ino = agent_restore_dir_ino(file, &err);
  if (ino == 0 || ino == e->ino)
    return false;
  iob_info("'%s' %u:%u: its cgroup is another one now (inode %llu, was %llu): what it held "
           "before is forgotten",
           file, major, minor, ino, e->ino);
  free(e->file);
  *e = r->v[--r->n];
  cleanup_error struct iob_error *serr = NULL;
  if (save(r, &serr) < 0)
    iob_warn("%s", serr->msg);
  return true;
}

unsigned long long agent_restore_dir_ino(const char *file, struct iob_error **err) {
  char dir[AGENT_RESTORE_PATH_MAX];
  const char *slash = strrchr(file, '/');
  snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - file) : 0, file);
  struct stat sb;
  if (stat(dir[0] ? dir : "/", &sb) < 0) {
    iob_error(err, errno, "cannot stat '%s'", dir);
    return 0;
  }
  return (unsigned long long)sb.st_ino;
}

/* What remember_n changed, undone when the journal cannot be written. */
struct undo {
  size_t n; /* entries before */
  size_t k; /* updated ones */
  struct {
    size_t i; /* index in r->v (pointers move when r->v grows) */
    char written[AGENT_RESTORE_VALUE_MAX], prev[AGENT_RESTORE_VALUE_MAX];
  } * v;
};

static void undo(struct agent_restore *r, const struct undo *u) {
  while (r->n > u->n)
    free(r->v[--r->n].file);
  for (size_t i = 0; i < u->k; i++) {
    memcpy(r->v[u->v[i].i].written, u->v[i].written, sizeof(u->v[i].written));
    memcpy(r->v[u->v[i].i].prev, u->v[i].prev, sizeof(u->v[i].prev));
  }
}

static int check_new(const struct agent_restore_entry *e, struct iob_error **err) {
  int prio;
  if (!file_ok(e->file))
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "'%s' is not a cgroup file to restore",
                          e->file);
  if (tasks_file(e->file) && (e->major || e->minor || iob_ioprio_parse(e->value, &prio) < 0 ||
                              iob_ioprio_parse(e->written, &prio) < 0))
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "cannot remember I/O priorities '%.20s' and '%.20s' for '%s'", e->value,
                          e->written, e->file);
  if (!value_ok(e->value) || !value_ok(e->written))
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "cannot remember '%.100s' of '%s'",
                          value_ok(e->value) ? e->written : e->value, e->file);
  return 0;
}

int agent_restore_remember_n(struct agent_restore *r, const struct agent_restore_entry *v, size_t n,
                             struct iob_error **err) {
  struct undo u = {.n = r->n, .v = xcalloc(n + 1, sizeof(*u.v))};
  bool changed = false;
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++) {
    struct agent_restore_entry *old = find(r, v[i].file, v[i].major, v[i].minor);
    if (old == NULL || strcmp(old->written, v[i].written) == 0)
      continue;
    if (!value_ok(v[i].written)) {
      rc = iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "cannot remember '%.100s' of '%s'",
                          v[i].written, v[i].file);
      break;
    }
    u.v[u.k].i = (size_t)(old - r->v);
    memcpy(u.v[u.k].written, old->written, sizeof(old->written));
    memcpy(u.v[u.k].prev, old->prev, sizeof(old->prev));
    u.k++;
    /* A crash between the journal and the write leaves either value. */
    memcpy(old->prev, old->written, sizeof(old->prev));
    snprintf(old->written, sizeof(old->written), "%s", v[i].written);
    changed = true;
  }
  for (size_t i = 0; i < n && rc == 0; i++) {
    const struct agent_restore_entry *e = &v[i];
    if (find(r, e->file, e->major, e->minor))
      continue;
    unsigned long long ino = e->ino;
    if ((rc = check_new(e, err)) < 0 ||
        (ino == 0 && (ino = agent_restore_dir_ino(e->file, err)) == 0))
      rc = -1;
    else if ((rc = add(r, e->file, e->major, e->minor, e->value, e->written, "", ino, 0, err)) == 0)
      changed = true;
  }
  /* One journal write for them all. */
  if (rc == 0 && changed && save(r, err) < 0)
    rc = -1;
  if (rc < 0)
    undo(r, &u);
  free(u.v);
  return rc;
}

int agent_restore_remember(struct agent_restore *r, const char *file, unsigned major,
                           unsigned minor, const char *value, const char *written,
                           unsigned long long ino, struct iob_error **err) {
  struct agent_restore_entry e = {.file = (char *)file, .major = major, .minor = minor, .ino = ino};
  if (strlen(value) >= sizeof(e.value) || strlen(written) >= sizeof(e.written))
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "cannot remember '%.100s' of '%s'", value,
                          file);
  snprintf(e.value, sizeof(e.value), "%s", value);
  snprintf(e.written, sizeof(e.written), "%s", written);
  return agent_restore_remember_n(r, &e, 1, err);
}

int agent_restore_hook_weight(struct agent_restore *r, const char *dir, unsigned weight,
                              const char *was, const char *bfq_was, unsigned long long ino,
                              struct iob_error **err) {
  if (weight < 1 || weight > 10000)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "io.weight %u is out of range", weight);
  if ((*was && !value_ok(was)) || (*bfq_was && !value_ok(bfq_was)) || (!*was && !*bfq_was))
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "invalid weights before the hook's ('%.20s', '%.20s')", was, bfq_was);
  struct agent_restore_entry e[2];
  char path[2][AGENT_RESTORE_PATH_MAX];
  size_t n = 0;
  if (*was) {
    snprintf(path[n], sizeof(path[n]), "%s/io.weight", dir);
    e[n] = (struct agent_restore_entry){.file = path[n], .ino = ino};
    snprintf(e[n].value, sizeof(e[n].value), "%s", was);
    snprintf(e[n].written, sizeof(e[n].written), "%u", weight);
    n++;
  }
  if (*bfq_was) {
    snprintf(path[n], sizeof(path[n]), "%s/io.bfq.weight", dir);
    e[n] = (struct agent_restore_entry){.file = path[n], .ino = ino};
    snprintf(e[n].value, sizeof(e[n].value), "%s", bfq_was);
    snprintf(e[n].written, sizeof(e[n].written), "%u", cg2_weight_io_to_bfq(weight));
    n++;
  }
  unsigned long long now = agent_restore_dir_ino(path[0], err);
  if (now == 0)
    return -1;
  if (now != ino)
    return iob_error_code(err, IOB_CODE_FAILED_PRECONDITION,
                          "'%s' is inode %llu, not the %llu the hook saw", dir, now, ino);
  return agent_restore_remember_n(r, e, n, err);
}

/* Write "MAJ:MIN value" (the value alone for a whole-cgroup file,
 * "default value" for a default line) to the file: never through a
 * symbolic link, never creating it (a missing file is a vanished cgroup). */
static int put_back(const struct agent_restore_entry *e, struct iob_error **err) {
  char line[AGENT_RESTORE_VALUE_MAX + 32];
  int n = whole_cgroup(e->file) ? snprintf(line, sizeof(line), "%s", e->value)
          : default_line(e)
              ? snprintf(line, sizeof(line), "default %s", e->value)
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

/* What the file holds now for E's device, in the words the journal keeps
 * (the kernel prints no line for a device at its default). */
static int current(const struct agent_restore_entry *e, char *out, size_t size,
                   struct iob_error **err) {
  cleanup_close int fd = open(e->file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return iob_error(err, errno, "cannot open '%s'", e->file);
  cleanup_free char *buf = NULL;
  size_t len = 0;
  if (iob_read_fd(fd, e->file, 64 * 1024, &buf, &len, err) < 0)
    return -1;
  const char *base = strrchr(e->file, '/') + 1;
  if (whole_cgroup(e->file)) {
    while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
      buf[--len] = '\0';
    /* v1's freezer prints FREEZING until every task stopped: the agent
     * wrote FROZEN all the same */
    snprintf(out, size, "%s", strcmp(buf, "FREEZING") == 0 ? "FROZEN" : buf);
    return 0;
  }
  char key[32];
  if (default_line(e))
    snprintf(key, sizeof(key), "default ");
  else
    snprintf(key, sizeof(key), "%u:%u ", e->major, e->minor);
  for (char *save = NULL, *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
    if (strncmp(l, key, strlen(key)) == 0) {
      snprintf(out, size, "%s", l + strlen(key));
      return 0;
    }
    if (default_line(e) && strchr(l, ' ') == NULL) { /* BFQ once printed the bare default */
      snprintf(out, size, "%s", l);
      return 0;
    }
  }
  snprintf(out, size, "%s",
           strcmp(base, "io.max") == 0                 ? "rbps=max wbps=max riops=max wiops=max"
           : strncmp(base, "blkio.throttle.", 15) == 0 ? "0"
                                                       : "default");
  return 0;
}

static bool is_which(const struct agent_restore_entry *e, enum agent_restore_files which) {
  const char *base = strrchr(e->file, '/') + 1;
  bool cap = strcmp(base, "io.max") == 0 || strncmp(base, "blkio.throttle.", 15) == 0;
  bool freeze = is_freeze(e->file);
  bool ioprio = prio_file(e->file) || tasks_file(e->file);
  bool cpu = whole_cgroup(e->file) && !freeze && !ioprio;
  bool dflt = default_line(e);
  switch (which) {
  case AGENT_RESTORE_ALL:
    return true;
  case AGENT_RESTORE_CAPS:
    return cap;
  case AGENT_RESTORE_CPU:
    return cpu;
  case AGENT_RESTORE_HOOK_WEIGHT:
    return dflt;
  case AGENT_RESTORE_FREEZE:
    return freeze;
  case AGENT_RESTORE_IOPRIO:
    return ioprio;
  case AGENT_RESTORE_WEIGHTS:
    break;
  }
  return !cap && !cpu && !dflt && !freeze && !ioprio;
}

static bool in_dir(const char *file, const char *dir) {
  size_t n = strlen(dir);
  while (n > 1 && dir[n - 1] == '/')
    n--;
  return strncmp(file, dir, n) == 0 && file[n] == '/' && strchr(file + n + 1, '/') == NULL;
}

enum outcome {
  RESTORED,
  NOTHING, /* gone, another cgroup, changed since, nothing written: dropped */
  FAILED,  /* kept and tried again */
};

/* A failure that trying again cannot mend: a symbolic link where a cgroup
 * file was is never followed. */
static bool permanent(int e) {
  return e == ELOOP;
}

/* Whether E may be put back: still its cgroup, still the agent's value. */
static enum outcome check(const struct agent_restore_entry *e) {
  cleanup_error struct iob_error *err = NULL;
  unsigned long long ino = agent_restore_dir_ino(e->file, &err);
  if (ino == 0) {
    if (err->errno_ == ENOENT)
      return NOTHING;
    iob_warn("cannot restore '%s' %u:%u to '%s': %s", e->file, e->major, e->minor, e->value,
             err->msg);
    return FAILED;
  }
  if (ino != e->ino) {
    iob_info("'%s' %u:%u not restored to '%s': its cgroup is another one now (inode %llu, was "
             "%llu)",
             e->file, e->major, e->minor, e->value, ino, e->ino);
    return NOTHING;
  }
  char now[AGENT_RESTORE_VALUE_MAX];
  if (current(e, now, sizeof(now), &err) < 0) {
    if (err->errno_ == ENOENT)
      return NOTHING;
    iob_warn("cannot restore '%s' %u:%u to '%s': %s", e->file, e->major, e->minor, e->value,
             err->msg);
    return permanent(err->errno_) ? NOTHING : FAILED;
  }
  if (strcmp(now, e->written) != 0 && (e->prev[0] == '\0' || strcmp(now, e->prev) != 0)) {
    iob_info("'%s' %u:%u not restored to '%s': it holds '%s', not the agent's '%s' (changed "
             "since by another writer)",
             e->file, e->major, e->minor, e->value, now, e->written);
    return NOTHING;
  }
  return RESTORED;
}

/* The I/O priority of each task listed in E's file (the cgroup's
 * threads) that still has the class the agent gave (a class changed since,
 * by the task or another writer, is left alone) goes back to E's value.
 * Threads started since inherited the agent's class from their parent:
 * they go back too. */
static enum outcome tasks_back(const struct agent_restore_entry *e, bool replay) {
  int to, given;
  if (iob_ioprio_parse(e->value, &to) < 0 || iob_ioprio_parse(e->written, &given) < 0)
    return NOTHING;
  cleanup_error struct iob_error *err = NULL;
  unsigned long long ino = agent_restore_dir_ino(e->file, &err);
  if (ino == 0 || ino != e->ino)
    return ino == 0 && err->errno_ != ENOENT ? FAILED : NOTHING;
  cleanup_close int fd = open(e->file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  cleanup_free char *buf = NULL;
  size_t len = 0;
  if (fd < 0 || iob_read_fd(fd, e->file, AGENT_RESTORE_MAX_BYTES, &buf, &len, &err) < 0)
    return fd < 0 && errno == ENOENT ? NOTHING : FAILED;
  size_t n = 0, back = 0;
  for (char *save = NULL, *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
    char *end;
    long tid = strtol(l, &end, 10);
    int now;
    if (*end || tid <= 0 || tid > INT32_MAX || iob_ioprio_get((int)tid, &now, &err) < 0) {
      iob_error_release(&err); /* exited: nothing to put back */
      continue;
    }
    n++;
    if (now == given && iob_ioprio_set((int)tid, to, &err) == 0)
      back++;
    iob_error_release(&err);
  }
  if (replay || back)
    iob_info("'%s': %zu of %zu threads given back the I/O priority '%s'%s", e->file, back, n,
             e->value, replay ? " (left by an agent that did not stop)" : "");
  return RESTORED;
}

/* Put E back (checked first, unless a version-1 entry). */
static enum outcome restore_one(const struct agent_restore_entry *e, bool replay) {
  if (tasks_file(e->file))
    return tasks_back(e, replay);
  if (e->ino) {
    enum outcome o = check(e);
    if (o != RESTORED)
      return o;
  }
  cleanup_error struct iob_error *err = NULL;
  if (put_back(e, &err) < 0) {
    if (err->errno_ == ENOENT)
      return NOTHING;
    iob_warn("cannot restore '%s' %u:%u to '%s': %s", e->file, e->major, e->minor, e->value,
             err->msg);
    /* A version-1 entry is replayed once, as the agent that wrote it did. */
    return e->ino && !permanent(err->errno_) ? FAILED : NOTHING;
  }
  if (replay)
    iob_info("restored '%s' %u:%u to '%s' (left by an agent that did not stop)", e->file, e->major,
             e->minor, e->value);
  else
    iob_debug("restored '%s' %u:%u to '%s'", e->file, e->major, e->minor, e->value);
  return RESTORED;
}

/* After a failed put-back of E: whether to keep it, counting the try.  A
 * thaw is never given up (a container left frozen stays down for good),
 * but past AGENT_RESTORE_TRIES it waits twice as many retries each time,
 * up to AGENT_RESTORE_BACKOFF_MAX, so that a cgroup that cannot be thawed
 * costs a write now and then, not one per window.  Restore-only keeps
 * everything, its count held below the limit the journal accepts. */
static bool keep_trying(const struct agent_restore *r, struct agent_restore_entry *e) {
  if (is_freeze(e->file)) {
    if (e->tries < AGENT_RESTORE_TRIES_MAX)
      e->tries++;
    if (e->tries == AGENT_RESTORE_TRIES)
      iob_warn("'%s': not thawed after %d tries: tried again on fewer windows (at least every "
               "%d), never given up",
               e->file, AGENT_RESTORE_TRIES, AGENT_RESTORE_BACKOFF_MAX + 1);
    if (e->tries >= AGENT_RESTORE_TRIES) {
      unsigned shift = e->tries - AGENT_RESTORE_TRIES;
      e->wait = shift >= 6 ? AGENT_RESTORE_BACKOFF_MAX : 1u << shift;
    }
    return true;
  }
  if (e->tries + 1 < AGENT_RESTORE_TRIES) {
    e->tries++;
    return true;
  }
  return r->keep_failed;
}

static size_t restore_where(struct agent_restore *r, const char *dir,
                            enum agent_restore_files which, bool replay, bool failed_only) {
  size_t done = 0, k = 0;
  bool changed = false;
  for (size_t i = 0; i < r->n; i++) {
    struct agent_restore_entry *e = &r->v[i];
    if ((dir && !in_dir(e->file, dir)) || !is_which(e, which) || (failed_only && !e->tries)) {
      r->v[k++] = *e;
      continue;
    }
    if (failed_only && e->wait > 0) {
      e->wait--;
      r->v[k++] = *e;
      continue;
    }
    changed = true;
    enum outcome o = restore_one(e, replay);
    done += o == RESTORED;
    if (o == FAILED && keep_trying(r, e)) {
      r->v[k++] = *e;
      continue;
    }
    if (o == FAILED)
      iob_warn("'%s' %u:%u: not restored to '%s' after %d tries: given up", e->file, e->major,
               e->minor, e->value, AGENT_RESTORE_TRIES);
    free(e->file);
  }
  r->n = k;
  if (changed) {
    cleanup_error struct iob_error *err = NULL;
    if (save(r, &err) < 0)
      iob_warn("%s", err->msg);
  }
  return done;
}

size_t agent_restore_dir(struct agent_restore *r, const char *dir, enum agent_restore_files which) {
  return restore_where(r, dir, which, false, false);
}

size_t agent_restore_retry(struct agent_restore *r) {
  return restore_where(r, NULL, AGENT_RESTORE_ALL, false, true);
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
  size_t done = restore_where(r, NULL, AGENT_RESTORE_ALL, true, false);
  /* What failed for a passing reason stays in the journal (version 2 from
   * now on) and is tried again; nothing left: removed. */
  if (save(r, err) < 0)
    return -1;
  if (n > done)
    iob_info("'%s': %zu of %zu values not restored: their cgroups are gone or other ones, their "
             "values changed since, or the writes failed (%zu kept to try again)",
             r->path, n - done, n, r->n);
  return (int)done;
}

static void wait_ms(unsigned ms) {
  struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
    ;
}

int agent_restore_only(const char *state_dir, const char *boot_id_file, unsigned passes,
                       unsigned first_wait_ms, size_t *restored, struct iob_error **err) {
  if (restored)
    *restored = 0;
  struct stat sb;
  if (stat(state_dir, &sb) < 0) {
    if (errno != ENOENT)
      return iob_error(err, errno, "cannot stat '%s'", state_dir);
    iob_info("no state directory '%s': nothing to restore", state_dir);
    return 0;
  }
  /* The journal is a running agent's own: it puts its values back when it
   * stops, and a second writer would drop what it adds meanwhile. */
  cleanup_close int lock = -1;
  if (agent_lock_state_dir(state_dir, &lock, err) < 0)
    return -1;
  struct agent_restore r;
  if (agent_restore_init(&r, state_dir, boot_id_file, err) < 0)
    return -1;
  r.keep_failed = true;
  int done = agent_restore_replay(&r, err);
  if (done < 0) {
    agent_restore_release(&r);
    return -1;
  }
  size_t total = (size_t)done;
  unsigned ms = first_wait_ms;
  for (unsigned i = 0; i < passes && r.n > 0; i++, ms *= 2) {
    wait_ms(ms);
    for (size_t k = 0; k < r.n; k++)
      r.v[k].wait = 0;
    total += agent_restore_retry(&r);
  }
  for (size_t k = 0; k < r.n; k++)
    iob_warn("not restored: '%s' %u:%u to '%s' (kept in '%s')", r.v[k].file, r.v[k].major,
             r.v[k].minor, r.v[k].value, r.path);
  int left = (int)r.n;
  agent_restore_release(&r);
  if (restored)
    *restored = total;
  return left;
}
