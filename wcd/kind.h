// SPDX-License-Identifier: Apache-2.0
/* What a container is to the batcher (a batch job, an open-ended service,
 * a pod sandbox) and its Kubernetes names, from its OCI annotations.  The
 * shim (config.json) and the hook (the OCI state) read the same keys
 * through this one function. */
#ifndef IOB_WCD_KIND_H
#define IOB_WCD_KIND_H

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"

/* io.iobatch.kind (client/annotations.h) is set by the user (ctr
 * --annotation, nerdctl --annotation, a pod annotation passed through the
 * runtime handler's pod_annotations): "job", "service" or "sandbox".  The
 * CRI's word that a container is a pod's sandbox wins over it:
 * pod_annotations reach the sandbox's config.json as well as the
 * containers', and a pod's pause container is never a job or a service.
 * Whoever creates the container says io.iobatch.kind, so the agent takes
 * "service" and "sandbox" from it only in a namespace that trust_declared
 * trusts (agent_ctr_set_kind). */
/* The longest name Kubernetes gives an object (a DNS subdomain, RFC 1123);
 * a longer one did not come from Kubernetes and is left out, so that the
 * agent does not refuse the whole registration for it. */
#define WCD_NAME_MAX 253

/* The value of annotation KEY, or NULL when there is none. */
typedef const char *(*wcd_annotation_fn)(void *ctx, const char *key);

struct wcd_kind {
  const char *kind;   /* "job", "service" or "sandbox"; NULL: not said */
  const char *source; /* the annotation the kind came from; NULL with kind */
  /* The kind is the CRI's container type (RegisterRequest.kind_source
   * RUNTIME), not io.iobatch.kind (ANNOTATION). */
  bool runtime;
  /* Point into the annotation values; NULL when not known. */
  const char *pod_name, *pod_namespace, *container_name;
};

/* INVALID_ARGUMENT naming io.iobatch.kind when it holds anything else
 * than the three kinds (the names are filled all the same; the CRI's
 * "sandbox" does not excuse it); the CRI's own keys with a value we do not
 * know only leave the kind unsaid. */
int wcd_kind_from_annotations(wcd_annotation_fn get, void *ctx, struct wcd_kind *out,
                              struct iob_error **err);

#endif
