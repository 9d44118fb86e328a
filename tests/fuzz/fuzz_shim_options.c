// SPDX-License-Identifier: Apache-2.0
/* libFuzzer: what the shim reads about its runtime options and a bundle,
 * besides start's stdin (fuzz_shim_bootstrap) and config.json as a whole
 * (fuzz_oci_config).  The first byte picks:
 *   0  the runtime-options TOML (ConfigPath file, shim/options.c)
 *   1  <bundle>/options.json (shim_options_read, shim/args.c)
 *   2  a containerd.runc.v1.Options payload of a Create's options Any
 *   3  config.json annotations checked at Create (shim_ctr_info_parse)
 *   4  config.json's hooks, where the shim looks for iobatch-hook
 *      (shim_ctr_info_parse, as 3: the seeds of 4 carry hooks)
 *   5  rootfs mount options of a Create, NUL-separated (shim/rootfs.c)
 * runtimeoptions.v1.Options (a path the shim opens) is not fed here: the
 * fuzzer must not open arbitrary paths; its file content is case 0. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "shim/admission.h"
#include "shim/rootfs.h"
#include "shim/options.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  uint8_t which = data[0] % 6;
  const uint8_t *in = data + 1;
  size_t len = size - 1;
  cleanup_error struct iob_error *err = NULL;
  char bundle[4200];
  snprintf(bundle, sizeof(bundle), "%s/bundle", fuzz_tree());
  switch (which) {
  case 0: {
    struct shim_options o = {0};
    shim_options_parse_toml((const char *)in, len, &o, &err);
    shim_options_release(&o);
    break;
  }
  case 1: {
    fuzz_tree_write("/bundle/options.json", in, len);
    struct shim_options o;
    shim_options_read(bundle, &o, &err);
    shim_options_release(&o);
    break;
  }
  case 2: {
    struct shim_options o = {0};
    bool found = false;
    shim_options_from_any("type.googleapis.com/containerd.runc.v1.Options", in, len, &o, &found,
                          &err);
    shim_options_release(&o);
    break;
  }
  case 3:
  case 4: {
    struct shim_ctr_info ci;
    if (shim_ctr_info_parse((const char *)in, len, &ci, &err) == 0)
      shim_ctr_info_release(&ci);
    break;
  }
  case 5: {
    cleanup_free char *copy = malloc(len + 1);
    if (copy == NULL)
      abort();
    memcpy(copy, in, len);
    copy[len] = '\0';
    const char *opts[33];
    size_t n = 0;
    for (char *p = copy; p < copy + len && n < 32; p += strlen(p) + 1)
      opts[n++] = p;
    unsigned long flags = 0, prop = 0;
    char *mdata = NULL;
    if (shim_mount_parse_options(opts, n, &flags, &prop, &mdata, &err) == 0)
      free(mdata);
    break;
  }
  }
  return 0;
}
