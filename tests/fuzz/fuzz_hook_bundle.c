/* libFuzzer: <bundle>/config.json as the hook reads it
 * (hook_state_load_bundle: annotations and process.args), after the state
 * on stdin (fuzz_hook_state) named the bundle. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "runtime-hook/hook.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_tree_write("/bundle/config.json", data, size);
  struct hook_state st;
  memset(&st, 0, sizeof(st));
  if (asprintf(&st.bundle, "%s/bundle", fuzz_tree()) < 0 || (st.id = strdup("c1")) == NULL)
    abort();
  st.pid = 1;
  cleanup_error struct iob_error *err = NULL;
  if (hook_state_load_bundle(&st, &err) == 0) {
    const char *c = hook_annotation(&st, HOOK_ANN_CLASS);
    enum batch_class cls;
    if (c)
      (void)batch_class_parse(c, &cls);
    if (st.nargs > 0 && st.args[st.nargs] != NULL)
      __builtin_trap(); /* args must be NULL-terminated */
  }
  hook_state_release(&st);
  return 0;
}
