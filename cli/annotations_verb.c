// SPDX-License-Identifier: Apache-2.0
/* iobatchctl annotations: every io.iobatch.* key the shim and the hook
 * read, what it may say and mean, and what it does from a trusted and an
 * untrusted namespace (client/annotations.h; no agent needed).  --keys is
 * what tests/annotations-doc.sh checks the man pages and README.md
 * against. */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "client/annotations.h"

static void usage(FILE *f) {
  fprintf(f, "usage: iobatchctl annotations [-o table|json] [--keys]\n"
             "Every io.iobatch.* annotation: who reads it, its values, what it means, and\n"
             "what it does from a namespace trust_declared trusts and from any other.\n"
             "  -o, --output FORMAT  table (default) or json\n"
             "      --json           the same as -o json\n"
             "      --keys           one line per key: the key and who reads it (shim,hook)\n"
             "  -h, --help           this text\n");
}

static const char *readers(unsigned r) {
  return (r & IOB_ANN_BY_SHIM) && (r & IOB_ANN_BY_HOOK) ? "shim,hook"
         : r & IOB_ANN_BY_SHIM                          ? "shim"
         : r & IOB_ANN_BY_HOOK                          ? "hook"
                                                        : "-";
}

static void print_keys(void) {
  for (size_t i = 0; i < iob_ann_defs_len; i++)
    printf("%s %s\n", iob_ann_defs[i].key, readers(iob_ann_defs[i].readers));
}

static void print_table(void) {
  for (size_t i = 0; i < iob_ann_defs_len; i++) {
    const struct iob_ann_def *d = &iob_ann_defs[i];
    printf("%s (read by %s)\n  values:  %s\n  meaning: %s\n", d->key, readers(d->readers),
           d->values, d->meaning);
    for (size_t r = 0; r < iob_ann_trust_table_len; r++) {
      const struct iob_ann_trust *t = &iob_ann_trust_table[r];
      if (strcmp(t->key, d->key) == 0)
        printf("  %s:\n    trusted:   %s\n    untrusted: %s\n", t->values, t->trusted,
               t->untrusted);
    }
  }
}

static int print_json(void) {
  json_t *arr = json_array();
  for (size_t i = 0; arr && i < iob_ann_defs_len; i++) {
    const struct iob_ann_def *d = &iob_ann_defs[i];
    json_t *trust = json_array();
    for (size_t r = 0; trust && r < iob_ann_trust_table_len; r++) {
      const struct iob_ann_trust *t = &iob_ann_trust_table[r];
      if (strcmp(t->key, d->key) == 0)
        json_array_append_new(trust, json_pack("{s:s, s:s, s:s}", "values", t->values, "trusted",
                                               t->trusted, "untrusted", t->untrusted));
    }
    json_array_append_new(arr, json_pack("{s:s, s:s, s:s, s:s, s:o*}", "key", d->key, "read_by",
                                         readers(d->readers), "values", d->values, "meaning",
                                         d->meaning, "trust", trust));
  }
  int rc = arr && json_dumpf(arr, stdout, JSON_INDENT(2)) == 0 ? 0 : 1;
  if (rc == 0)
    putchar('\n');
  json_decref(arr);
  return rc;
}

int iobctl_annotations(int argc, char **argv) {
  enum { O_KEYS = IOBCTL_OPT_VERB };
  static const struct option opts[] = {
      IOBCTL_OUTPUT_OPTIONS,
      {"keys", no_argument, NULL, O_KEYS},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  enum iobctl_output out = IOBCTL_OUT_TABLE;
  bool keys = false;
  optind = 0;
  opterr = 0;
  int o;
  while ((o = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
    int r = iobctl_output_opt("annotations", o, optarg, false, &out);
    if (r != 0) {
      if (r < 0)
        return 2;
      continue;
    }
    switch (o) {
    case O_KEYS:
      keys = true;
      break;
    case 'h':
      usage(stdout);
      return 0;
    default:
      return iobctl_usage_error("annotations", o, argv);
    }
  }
  if (optind < argc)
    return iobctl_usage_fail("annotations", "unexpected argument '%s'", argv[optind]);
  if (keys)
    print_keys();
  else if (out == IOBCTL_OUT_JSON)
    return print_json();
  else
    print_table();
  return 0;
}
