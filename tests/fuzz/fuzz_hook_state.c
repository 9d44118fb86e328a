// SPDX-License-Identifier: Apache-2.0
/* libFuzzer: the OCI state JSON the hook reads from stdin. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "runtime-hook/hook.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct iob_error *err = NULL;
  struct hook_state st;
  if (hook_state_parse((const char *)data, size, &st, &err) < 0) {
    iob_error_release(&err);
    return 0;
  }
  /* what the parser promises */
  bool stopped = strcmp(st.status, "stopped") == 0;
  if (st.pid < 0 || (st.pid == 0 && !stopped) || st.bundle[0] != '/' ||
      strchr(st.id, '/') != NULL)
    __builtin_trap();
  const char *c = hook_annotation(&st, IOB_ANN_CLASS);
  enum batch_class cls;
  if (c)
    (void)batch_class_parse(c, &cls);
  hook_state_release(&st);
  return 0;
}
