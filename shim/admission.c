/* The seam for the admission hold: Start of an init process asks here
 * before running `runc start`.  The agent that decides lands in a later
 * issue; until then every container is admitted at once. */
#include "shim/shim.h"

void shim_admission_wait(struct iob_loop *loop, const struct shim_admission_req *req,
                         shim_admission_fn fn, void *data) {
  (void)loop;
  (void)req;
  fn(data, 1, NULL);
}
