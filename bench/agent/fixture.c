// SPDX-License-Identifier: Apache-2.0
/* bench/agent-overhead.sh's client: register N fixture cgroups with iobatchd
 * as running containers, or ask how many it knows.
 *
 *   iob-agent-fixture register SOCKET N PID   ids fix-1..fix-N, namespace
 *       "iobench", cgroup "/iobench/fix-K" (under the agent's cgroup_root),
 *       pid PID (what the procfs sampler would read), declared seq-read
 *   iob-agent-fixture register-real SOCKET FILE   real containers (bench/agent/
 *       realctr.c), one "ID PID CGROUP" line each in FILE (CGROUP relative
 *       to the cgroup2 mount, as the shim registers it), namespace
 *       "iobench", declared seq-read, running: one connection for all, where
 *       an iobatchctl call each would add a thousand processes
 *   iob-agent-fixture status SOCKET           prints "<containers> <sampler>"
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client.h"
#include "common/cleanup.h"
#include "common/error.h"
#include "iobatch/agent.pb-c.h"
#include "ttrpc/ttrpc.h"

#include "client/api.h"
#define MAX_FIXTURES 100000
#define TIMEOUT_MS 10000

static int register_one(struct ttrpc_client *c, const struct client_container *ctr,
                        struct iob_error **err) {
  Iobatch__Agent__V1__RegisterRequest req;
  client_register_request(ctr, "bench", &req);
  ProtobufCMessage *resp = NULL;
  if (ttrpc_client_call(c, AGENT_SERVICE, "Register", &req.base,
                        &iobatch__agent__v1__register_response__descriptor, &resp, TIMEOUT_MS,
                        NULL, 0, err) < 0)
    return iob_error_prefix(err, "register '%s'", ctr->id);
  protobuf_c_message_free_unpacked(resp, NULL);
  return 0;
}

static int do_register(struct ttrpc_client *c, unsigned n, unsigned pid, struct iob_error **err) {
  for (unsigned k = 1; k <= n; k++) {
    char id[32], cg[64];
    snprintf(id, sizeof(id), "fix-%u", k);
    snprintf(cg, sizeof(cg), "/iobench/fix-%u", k);
    struct client_container ctr = {.id = id,
                                  .ns = "iobench",
                                  .pid = pid,
                                  .cgroup = cg,
                                  .declared_class = "seq-read",
                                  .workload_key = "bench-fixture",
                                  .running = true};
    if (register_one(c, &ctr, err) < 0)
      return -1;
  }
  return 0;
}

static int do_register_real(struct ttrpc_client *c, const char *file, struct iob_error **err) {
  cleanup_file FILE *f = fopen(file, "r");
  if (f == NULL)
    return iob_error(err, errno, "cannot open '%s'", file);
  char id[128], cg[512];
  unsigned pid;
  int r;
  while ((r = fscanf(f, "%127s %u %511s", id, &pid, cg)) == 3) {
    struct client_container ctr = {.id = id,
                                  .ns = "iobench",
                                  .pid = pid,
                                  .cgroup = cg,
                                  .declared_class = "seq-read",
                                  .workload_key = "bench-real",
                                  .running = true};
    if (register_one(c, &ctr, err) < 0)
      return -1;
  }
  if (r != EOF)
    return iob_error(err, EINVAL, "'%s': a line is not \"ID PID CGROUP\"", file);
  return 0;
}

static int do_status(struct ttrpc_client *c, struct iob_error **err) {
  Iobatch__Agent__V1__StatusRequest req = IOBATCH__AGENT__V1__STATUS_REQUEST__INIT;
  ProtobufCMessage *resp = NULL;
  if (ttrpc_client_call(c, AGENT_SERVICE, "Status", &req.base,
                        &iobatch__agent__v1__status_response__descriptor, &resp, TIMEOUT_MS, NULL,
                        0, err) < 0)
    return iob_error_prefix(err, "status");
  Iobatch__Agent__V1__StatusResponse *s = (void *)resp;
  printf("%zu %s\n", s->n_containers, s->sampler ? s->sampler : "?");
  protobuf_c_message_free_unpacked(resp, NULL);
  return 0;
}

int main(int argc, char **argv) {
  cleanup_error struct iob_error *err = NULL;
  if (argc < 3 || (strcmp(argv[1], "register") == 0 && argc != 5) ||
      (strcmp(argv[1], "register-real") == 0 && argc != 4)) {
    fprintf(stderr, "usage: %s register SOCKET N PID | register-real SOCKET FILE | status SOCKET\n",
            argv[0]);
    return 2;
  }
  struct ttrpc_client *c = NULL;
  if (ttrpc_client_connect(argv[2], &c, &err) < 0) {
    iob_error_print("iob-agent-fixture", &err);
    return 1;
  }
  int r;
  if (strcmp(argv[1], "register") == 0) {
    long n = strtol(argv[3], NULL, 10), pid = strtol(argv[4], NULL, 10);
    if (n < 1 || n > MAX_FIXTURES || pid < 0) {
      fprintf(stderr, "iob-agent-fixture: bad N or PID\n");
      ttrpc_client_free(c);
      return 2;
    }
    r = do_register(c, (unsigned)n, (unsigned)pid, &err);
  } else if (strcmp(argv[1], "register-real") == 0) {
    r = do_register_real(c, argv[3], &err);
  } else {
    r = do_status(c, &err);
  }
  ttrpc_client_free(c);
  if (r < 0) {
    iob_error_print("iob-agent-fixture", &err);
    return 1;
  }
  return 0;
}
