/* What a container is to the batcher (a batch job, an open-ended service,
 * a pod sandbox) and its Kubernetes names, from its OCI annotations.  The
 * shim (config.json) and the hook (the OCI state) read the same keys
 * through this one function. */
#ifndef IOB_WCD_KIND_H
#define IOB_WCD_KIND_H

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"

/* Set by the user (ctr --annotation, nerdctl --annotation, a pod
 * annotation passed through the runtime handler's pod_annotations):
 * "job", "service" or "sandbox".  The CRI's word that a container is a
 * pod's sandbox wins over it: pod_annotations reach the sandbox's
 * config.json as well as the containers', and a pod's pause container is
 * never a job or a service.  Whoever creates the container says
 * io.iobatch.kind, so the agent takes "service" and "sandbox" from it only
 * in a namespace that trust_declared trusts (agent_ctr_set_kind). */
#define WCD_ANN_KIND "io.iobatch.kind"
/* The longest name Kubernetes gives an object (a DNS subdomain, RFC 1123);
 * a longer one did not come from Kubernetes and is left out, so that the
 * agent does not refuse the whole registration for it. */
#define WCD_NAME_MAX 253

/* A protected container's latency objective: the p99 of its block I/O,
 * "5ms", "500us", "0.5ms" or "1s" (1us to 60s).  Taken only from a
 * namespace trust_declared trusts; from any other it is ignored and the
 * objective is learned (agent/protect.h). */
#define WCD_ANN_LATENCY_TARGET "io.iobatch.latency-target"
#define WCD_LATENCY_TARGET_MAX_US (60u * 1000 * 1000)
/* Parse S into microseconds; INVALID_ARGUMENT naming the annotation. */
int wcd_latency_target_parse(const char *s, uint32_t *us, struct iob_error **err);

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
