#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A small CRI client for tests/integration/e2e/cri-pods.sh: speaks
runtime.v1 (proto/cri/api.proto, compiled here with grpc_tools) to a
containerd CRI socket, as the kubelet would.

  cri_client.py --socket S --gen DIR version
  cri_client.py ... image-status IMAGE
  cri_client.py ... pods-up --handler H --image I --count N --prefix P
  cri_client.py ... bench --image I --handlers iobatch,runc --reps R
  cri_client.py ... create --handler H --image I --name POD [--namespace NS]
                    [--annotation K=V]... [CMD...]
  cri_client.py ... start CONTAINER_ID
  cri_client.py ... list
  cri_client.py ... down

Each command prints JSON lines (one object per line) on stdout.  Debian's
python3-grpcio and python3-grpc-tools, run by /usr/bin/python3 (a
python3 earlier in PATH may not have them).
"""
import argparse
import importlib
import json
import os
import statistics
import sys
import time
import uuid

PROTO_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "proto", "cri")


def load_api(gen):
    """api_pb2 and api_pb2_grpc, compiled into GEN unless already there."""
    if not os.path.exists(os.path.join(gen, "api_pb2_grpc.py")):
        from grpc_tools import protoc

        os.makedirs(gen, exist_ok=True)
        rc = protoc.main(["protoc", "-I" + os.path.abspath(PROTO_DIR), "--python_out=" + gen,
                          "--grpc_python_out=" + gen, "api.proto"])
        if rc != 0:
            sys.exit("cri_client: protoc failed on %s/api.proto" % PROTO_DIR)
    sys.path.insert(0, gen)
    return importlib.import_module("api_pb2"), importlib.import_module("api_pb2_grpc")


class Cri:
    def __init__(self, sock, gen, timeout):
        import grpc

        self.pb, stubs = load_api(gen)
        self.grpc = grpc
        self.chan = grpc.insecure_channel("unix://" + sock)
        self.rt = stubs.RuntimeServiceStub(self.chan)
        self.img = stubs.ImageServiceStub(self.chan)
        self.timeout = timeout

    def sandbox_config(self, name, annotations=None, namespace="iobtest", labels=None):
        pb = self.pb
        # No CNI here: the pod shares the node's network namespace.
        ns = pb.NamespaceOption(network=pb.NODE, pid=pb.POD, ipc=pb.POD)
        return pb.PodSandboxConfig(
            metadata=pb.PodSandboxMetadata(name=name, uid=str(uuid.uuid4()), namespace=namespace),
            annotations=annotations or {},
            labels=labels or {},
            linux=pb.LinuxPodSandboxConfig(
                security_context=pb.LinuxSandboxSecurityContext(namespace_options=ns)))

    def run_pod(self, handler, name, annotations=None, namespace="iobtest", labels=None):
        cfg = self.sandbox_config(name, annotations, namespace, labels)
        r = self.rt.RunPodSandbox(self.pb.RunPodSandboxRequest(config=cfg, runtime_handler=handler),
                                  timeout=self.timeout)
        return r.pod_sandbox_id, cfg

    def create(self, pod, cfg, name, image, command):
        pb = self.pb
        c = pb.ContainerConfig(metadata=pb.ContainerMetadata(name=name),
                               image=pb.ImageSpec(image=image), command=command)
        r = self.rt.CreateContainer(
            pb.CreateContainerRequest(pod_sandbox_id=pod, config=c, sandbox_config=cfg),
            timeout=self.timeout)
        return r.container_id

    def start(self, cid, timeout=None):
        self.rt.StartContainer(self.pb.StartContainerRequest(container_id=cid),
                               timeout=timeout or self.timeout)

    def status(self, cid):
        return self.rt.ContainerStatus(self.pb.ContainerStatusRequest(container_id=cid),
                                       timeout=self.timeout).status

    def wait_exit(self, cid, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            s = self.status(cid)
            if s.state == self.pb.CONTAINER_EXITED:
                return s.exit_code
            time.sleep(0.005)
        raise TimeoutError("container %s did not exit within %.0f s" % (cid[:12], timeout))

    def remove_pod(self, pod):
        self.rt.StopPodSandbox(self.pb.StopPodSandboxRequest(pod_sandbox_id=pod),
                               timeout=self.timeout)
        self.rt.RemovePodSandbox(self.pb.RemovePodSandboxRequest(pod_sandbox_id=pod),
                                 timeout=self.timeout)


def emit(**kw):
    print(json.dumps(kw), flush=True)


def cmd_version(cri, a):
    r = cri.rt.Version(cri.pb.VersionRequest(version="v1"), timeout=cri.timeout)
    emit(runtime_name=r.runtime_name, runtime_version=r.runtime_version,
         runtime_api_version=r.runtime_api_version)


def cmd_image_status(cri, a):
    r = cri.img.ImageStatus(cri.pb.ImageStatusRequest(image=cri.pb.ImageSpec(image=a.image)),
                            timeout=cri.timeout)
    emit(image=a.image, present=bool(r.image.id), id=r.image.id)


def cmd_pods_up(cri, a):
    """COUNT pods, each a sandbox and one idle container, started one after
    the other; a StartContainer that does not return within --start-timeout
    is reported as held and left CREATED."""
    for i in range(a.count):
        name = "%s-%d" % (a.prefix, i)
        t0 = time.monotonic()
        pod, cfg = cri.run_pod(a.handler, name)
        cid = cri.create(pod, cfg, "idle", a.image, ["/bin/sleep", "3600"])
        try:
            cri.start(cid, timeout=a.start_timeout)
            started = True
        except cri.grpc.RpcError as e:
            started = False
            err = "%s: %s" % (e.code().name, e.details())
        ms = (time.monotonic() - t0) * 1000
        if started:
            emit(pod=name, pod_id=pod, container_id=cid, started=True, ms=round(ms, 1))
        else:
            emit(pod=name, pod_id=pod, container_id=cid, started=False, ms=round(ms, 1), error=err)


def pod_start(cri, handler, name, image, wait):
    """One pod's full start, as the kubelet drives it: sandbox, container,
    start, the container's exit, stop and removal.  Milliseconds per phase."""
    t = [time.monotonic()]
    pod, cfg = cri.run_pod(handler, name)
    t.append(time.monotonic())
    cid = cri.create(pod, cfg, "once", image, ["/bin/true"])
    t.append(time.monotonic())
    cri.start(cid)
    t.append(time.monotonic())
    code = cri.wait_exit(cid, wait)
    t.append(time.monotonic())
    cri.remove_pod(pod)
    t.append(time.monotonic())
    ms = [round((t[i + 1] - t[i]) * 1000, 1) for i in range(len(t) - 1)]
    return dict(ms=round((t[-1] - t[0]) * 1000, 1), sandbox_ms=ms[0], create_ms=ms[1],
                start_ms=ms[2], exit_ms=ms[3], remove_ms=ms[4], exit_code=code)


def cmd_bench(cri, a):
    """REPS rounds of one pod start per handler, interleaved, the order
    alternating by round so that neither handler always goes first; then
    the median of each.  A handler that failed once is not tried again."""
    handlers = a.handlers.split(",")
    times = {h: [] for h in handlers}
    failed = set()
    for rep in range(a.reps):
        order = handlers if rep % 2 == 0 else list(reversed(handlers))
        for h in order:
            name = "new-%s-%d" % (h, rep)
            if h in failed:
                # One timeout is the answer; more would only take long.
                emit(handler=h, rep=rep, ok=False, error="not tried after a failure")
                continue
            try:
                r = pod_start(cri, h, name, a.image, a.wait)
                times[h].append(r["ms"])
                emit(handler=h, rep=rep, ok=True, **r)
            except (cri.grpc.RpcError, TimeoutError) as e:
                msg = "%s: %s" % (e.code().name, e.details()) if isinstance(
                    e, cri.grpc.RpcError) else str(e)
                emit(handler=h, rep=rep, ok=False, error=msg)
                failed.add(h)
    for h in handlers:
        if times[h]:
            emit(handler=h, median_ms=round(statistics.median(times[h]), 1), n=len(times[h]))


def cmd_create(cri, a):
    """One pod (sandbox) and one container in it, created, not started:
    what the kubelet has done before StartContainer."""
    ann = dict(kv.split("=", 1) for kv in a.annotation)
    labels = dict(kv.split("=", 1) for kv in a.label)
    pod, cfg = cri.run_pod(a.handler, a.name, ann, a.namespace, labels)
    cid = cri.create(pod, cfg, a.container, a.image, a.command or ["/bin/sleep", "3600"])
    emit(pod=a.name, pod_id=pod, container_id=cid)


def cmd_start(cri, a):
    cri.start(a.container_id)
    emit(started=a.container_id)


def cmd_list(cri, a):
    pods = cri.rt.ListPodSandbox(cri.pb.ListPodSandboxRequest(), timeout=cri.timeout).items
    for p in pods:
        emit(kind="pod", id=p.id, name=p.metadata.name, handler=p.runtime_handler,
             state=cri.pb.PodSandboxState.Name(p.state))
    ctrs = cri.rt.ListContainers(cri.pb.ListContainersRequest(), timeout=cri.timeout).containers
    for c in ctrs:
        emit(kind="container", id=c.id, pod_id=c.pod_sandbox_id, name=c.metadata.name,
             state=cri.pb.ContainerState.Name(c.state))


def cmd_down(cri, a):
    pods = cri.rt.ListPodSandbox(cri.pb.ListPodSandboxRequest(), timeout=cri.timeout).items
    for p in pods:
        try:
            cri.remove_pod(p.id)
            emit(removed=p.id)
        except cri.grpc.RpcError as e:
            emit(not_removed=p.id, error="%s: %s" % (e.code().name, e.details()))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--socket", required=True, help="containerd's gRPC socket")
    ap.add_argument("--gen", required=True, help="directory for the generated Python code")
    ap.add_argument("--timeout", type=float, default=60, help="seconds per call")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("version")
    p = sub.add_parser("image-status")
    p.add_argument("image")
    p = sub.add_parser("pods-up")
    p.add_argument("--handler", required=True)
    p.add_argument("--image", required=True)
    p.add_argument("--count", type=int, default=4)
    p.add_argument("--prefix", default="idle")
    p.add_argument("--start-timeout", type=float, default=30)
    p = sub.add_parser("bench")
    p.add_argument("--image", required=True)
    p.add_argument("--handlers", default="iobatch,runc")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--wait", type=float, default=60, help="seconds for the container to exit")
    p = sub.add_parser("create")
    p.add_argument("--handler", required=True)
    p.add_argument("--image", required=True)
    p.add_argument("--name", required=True, help="the pod's name")
    p.add_argument("--container", default="main", help="the container's name")
    p.add_argument("--namespace", default="iobtest", help="the pod's namespace")
    p.add_argument("--annotation", action="append", default=[], help="a pod annotation K=V")
    p.add_argument("--label", action="append", default=[], help="a pod label K=V")
    p.add_argument("command", nargs="*")
    p = sub.add_parser("start")
    p.add_argument("container_id")
    sub.add_parser("list")
    sub.add_parser("down")
    a = ap.parse_args()
    cri = Cri(a.socket, a.gen, a.timeout)
    {"version": cmd_version, "image-status": cmd_image_status, "pods-up": cmd_pods_up,
     "bench": cmd_bench, "create": cmd_create, "start": cmd_start, "list": cmd_list,
     "down": cmd_down}[a.cmd](cri, a)


if __name__ == "__main__":
    main()
