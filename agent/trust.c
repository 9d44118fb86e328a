// SPDX-License-Identifier: Apache-2.0
/* The trust table (agent/trust.h). */
#include "agent/trust.h"

const struct agent_trust_rule agent_trust_table[] = {
    {AGENT_ANN_CLASS, "seq-read, rand-read, seq-write, rand-write, mixed, idle, unknown",
     "the class: never measured over, planned and learned as said; the hook writes its first "
     "io.weight, journalled by the agent first",
     "a hint, shown by status: planned only as a writing class (seq-write, rand-write, "
     "mixed); idle, a reader or unknown is planned as unknown (a probe) and is a protection "
     "target; the first measurement or a profile replaces it; never learned; no io.weight from "
     "the hook"},
    {AGENT_ANN_CLASS, "latency",
     "protected at once: batch containers are capped and held for it; planned as a service",
     "never protected by it: a job, protected only as any container is (protect = "
     "detected and its I/O looks latency-sensitive), and only while it does"},
    {AGENT_ANN_KIND, "job, service, sandbox",
     "the kind: a service is never held and takes no batch slot, a sandbox is never planned",
     "job stands; service and sandbox are ignored: a job, held and planned (logged once)"},
    {AGENT_ANN_MAX_HOLD, "milliseconds",
     "its deadline, but at least 1 s (AGENT_MIN_HOLD_MS) and the batch window, unless "
     "max_hold is shorter",
     "ignored (logged once): its deadline is the agent's max_hold"},
    {AGENT_ANN_WORKLOAD, "a key (at most 1024 bytes of UTF-8)",
     "the profile key, within the container's own namespace",
     "the same: a tenant names only its own namespace's profiles, at most "
     "profiles_per_namespace of them, evicted oldest first"},
    {AGENT_ANN_LATENCY_TARGET, "microseconds",
     "the container's latency objective while it is protected (agent/protect.h)",
     "ignored (logged once): its objective is learned"},
};

const size_t agent_trust_table_len = sizeof(agent_trust_table) / sizeof(agent_trust_table[0]);
