// SPDX-License-Identifier: Apache-2.0
/* Task events to containerd (Events/Forward), in the order published. */
#ifndef SHIM_EVENTS_H
#define SHIM_EVENTS_H

#include "common/error.h"
#include "common/loop.h"

struct ProtobufCMessage;
int shim_events_init(struct iob_loop *loop, const char *ttrpc_address, const char *ns,
                     struct iob_error **err);
/* Queue an event for Events/Forward; events go out in queue order. */
void shim_events_publish(const char *topic, const struct ProtobufCMessage *ev);
/* Run the loop until the queue is empty or timeout_ms passed. */
void shim_events_drain(struct iob_loop *loop, int timeout_ms);

#endif
