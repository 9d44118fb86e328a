// SPDX-License-Identifier: Apache-2.0
/* The agent's ttrpc service name (proto/iobatch/agent.proto); methods are
 * called by their bare names ("Register", "Admit", ...).
 * AGENT_DEFAULT_SOCKET is where iobatchd listens unless configured
 * otherwise, and where the shim, the hook and iobatchctl look for it when
 * told no other path. */
#ifndef IOB_CLIENT_API_H
#define IOB_CLIENT_API_H

#define AGENT_SERVICE "iobatch.agent.v1.Agent"
#define AGENT_DEFAULT_SOCKET "/run/iobatch/iobatchd.sock"

#endif
