/* The agent's ttrpc service name (proto/iobatch/agent.proto); methods are
 * called by their bare names ("Register", "Admit", ...). */
#ifndef IOB_AGENT_API_H
#define IOB_AGENT_API_H

#define AGENT_SERVICE "iobatch.agent.v1.Agent"

#endif
