#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A CRI that only lists: Version, ListPodSandbox and ListContainers of
runtime.v1 (proto/cri/api.proto, compiled with grpc_tools as
cri_client.py does) on a unix socket, for suites that start containers
with plain runc but need the node's CRI to say which ids are pod
sandboxes (tests/integration/agent/kubepods.sh).

  cri_fake.py --socket S --gen DIR [--sandbox ID:POD_UID]... [--container ID:SANDBOX]...

Serves until killed; every other method is UNIMPLEMENTED.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cri_client import load_api  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--socket", required=True)
    ap.add_argument("--gen", required=True)
    ap.add_argument("--sandbox", action="append", default=[])
    ap.add_argument("--container", action="append", default=[])
    a = ap.parse_args()
    import grpc
    from concurrent import futures

    pb, stubs = load_api(a.gen)

    class Runtime(stubs.RuntimeServiceServicer):
        def Version(self, req, ctx):
            return pb.VersionResponse(version="0.1.0", runtime_name="cri-fake",
                                      runtime_version="1", runtime_api_version="v1")

        def ListPodSandbox(self, req, ctx):
            items = []
            for s in a.sandbox:
                sid, _, uid = s.partition(":")
                md = pb.PodSandboxMetadata(name=sid, uid=uid, namespace="fake")
                items.append(pb.PodSandbox(id=sid, metadata=md))
            return pb.ListPodSandboxResponse(items=items)

        def ListContainers(self, req, ctx):
            out = []
            for c in a.container:
                cid, _, sb = c.partition(":")
                out.append(pb.Container(id=cid, pod_sandbox_id=sb,
                                        metadata=pb.ContainerMetadata(name=cid)))
            return pb.ListContainersResponse(containers=out)

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    stubs.add_RuntimeServiceServicer_to_server(Runtime(), server)
    server.add_insecure_port("unix://" + a.socket)
    server.start()
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
