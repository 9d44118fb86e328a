// SPDX-License-Identifier: Apache-2.0
/* libFuzzer: <bundle>/config.json through the one OCI reader
 * (iob_oci_config_parse, common/oci.c), then everything that is taken from
 * it: the shim's iobatch annotations and its look for iobatch-hook among
 * the hooks (shim_ctr_info_of), its grouping key (shim_config_group), and
 * the hook's annotations and process.args within its bounds
 * (hook_state_take_config).  Replaces fuzz_hook_bundle and the config half
 * of the old fuzz_shim_config. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "batcher/class.h"
#include "common/oci.h"
#include "runtime-hook/hook.h"
#include "shim/admission.h"
#include "shim/args.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void hook_take(const struct iob_oci_config *cfg) {
  cleanup_error struct iob_error *err = NULL;
  struct hook_state st;
  memset(&st, 0, sizeof(st));
  st.annotations = json_object();
  if (hook_state_take_config(&st, cfg, &err) == 0) {
    const char *c = hook_annotation(&st, IOB_ANN_CLASS);
    enum batch_class cls;
    if (c)
      (void)batch_class_parse(c, &cls);
    if (st.args && st.args[st.nargs] != NULL)
      __builtin_trap(); /* args must be NULL-terminated */
  }
  hook_state_release(&st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cleanup_error struct iob_error *err = NULL;
  struct iob_oci_config cfg;
  if (iob_oci_config_parse((const char *)data, size, "config.json", &cfg, &err) < 0)
    return 0;
  for (size_t i = 0; i < cfg.nargs; i++)
    if (cfg.args[i] == NULL)
      __builtin_trap();
  struct shim_ctr_info in;
  if (shim_ctr_info_of(&cfg, &in, &err) == 0)
    shim_ctr_info_release(&in);
  iob_error_release(&err);
  char *group = NULL;
  if (shim_config_group(&cfg, "c1", &group, &err) == 0)
    free(group);
  iob_error_release(&err);
  hook_take(&cfg);
  iob_oci_config_release(&cfg);
  return 0;
}
