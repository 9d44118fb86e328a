#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Run the pods of Kubernetes manifests the way a kubelet runs them, through
a containerd's CRI (runtime.v1, tests/tools/cri_client.py), for
tests/install/daemonset.sh.  No API server: the manifests are read from
files, and what the kubelet would get from the API server (a DaemonSet's
pod template, a ConfigMap's data, the RuntimeClass's handler) is taken
from them.

  kubelet.py --socket S --gen DIR --root R --node N up FILE... --pod KIND/NAME
             [--timeout SECONDS]
  kubelet.py ... probe FILE... --pod KIND/NAME --container C [--kind liveness]
  kubelet.py ... exec --pod NAME --container C -- CMD...
  kubelet.py ... status --pod NAME
  kubelet.py ... down --pod NAME

R is where the node's / is seen from here (/proc/PID/root of its PID 1):
hostPath directories are made there as the kubelet makes them (0755 for
DirectoryOrCreate; Socket and Directory must exist), and a ConfigMap or
projected volume (serviceAccountToken, configMap, downwardAPI sources) is
written under the node's /var/lib/kubelet/pods/UID/volumes/ and
bind-mounted read-only, as the kubelet does.  `up` runs RunPodSandbox with the pod's namespaces (hostPID,
hostNetwork, hostIPC), then each init container to completion, in order,
then the containers; every container gets the template's image, command,
args, env (value and fieldRef: spec.nodeName, metadata.name,
metadata.namespace, status.podIP), volume mounts and security context
(privileged, capabilities, runAsUser, runAsGroup, runAsNonRoot (checked
against the image's user, as the kubelet checks it),
allowPrivilegeEscalation, readOnlyRootFilesystem, seccompProfile; the
pod's securityContext for what the container's does not set, and its
supplementalGroups), the pod's labels and the kubelet's own, and the
service account token volume unless automountServiceAccountToken is
false.  Calls the runtime cannot answer
(UNAVAILABLE: containerd restarting, as the installer may make it) are
retried, as the kubelet retries.  The runtime request timeout is the
kubelet's default, 2 minutes: a StartContainer held longer fails
DEADLINE_EXCEEDED.  Output: JSON lines.
"""
import argparse
import glob
import json
import os
import re
import stat
import sys
import time
import uuid

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import cri_client  # noqa: E402

RUNTIME_REQUEST_TIMEOUT = 120  # kubelet --runtime-request-timeout default (2m)
# The kubelet's default masked and read-only paths for an unprivileged
# container (pkg/securitycontext/util.go, procMount Default).
MASKED = ["/proc/asound", "/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
          "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi",
          "/sys/firmware"]
READONLY = ["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"]
SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
# The token volume the kubelet adds when automountServiceAccountToken is not
# false (its kube-api-access-XXXXX); a key no manifest's volume can have.
AUTO_TOKEN = "kube-api-access (automount)"


def emit(**kw):
    print(json.dumps(kw), flush=True)


def load_docs(files):
    docs = {}
    for f in files:
        with open(f) as fh:
            for d in yaml.safe_load_all(fh):
                if d:
                    docs[(d["kind"], d["metadata"]["name"])] = d
    return docs


class Kubelet:
    def __init__(self, a):
        self.a = a
        self.cri = cri_client.Cri(a.socket, a.gen, RUNTIME_REQUEST_TIMEOUT)
        self.pb = self.cri.pb
        self.root = a.root.rstrip("/")

    def call(self, method, req, timeout=RUNTIME_REQUEST_TIMEOUT, retry_for=90):
        """A CRI call.  While containerd restarts (the installer may make
        it), its socket is gone (UNAVAILABLE) and then, for a moment, it
        listens before its CRI plugin has registered (UNIMPLEMENTED), or
        has registered it but not yet loaded its state (UNKNOWN, "server is
        not initialized yet", containerd 1.6's CRI): all are retried, as the
        kubelet retries."""
        codes = (self.cri.grpc.StatusCode.UNAVAILABLE, self.cri.grpc.StatusCode.UNIMPLEMENTED)
        end = time.monotonic() + retry_for
        while True:
            try:
                return getattr(self.cri.rt, method)(req, timeout=timeout)
            except self.cri.grpc.RpcError as e:
                starting = (e.code() == self.cri.grpc.StatusCode.UNKNOWN
                            and "not initialized yet" in (e.details() or ""))
                if (e.code() not in codes and not starting) or time.monotonic() > end:
                    raise
                time.sleep(0.5)

    def node_path(self, p):
        return self.root + p

    # ---- the pod

    def pod_of(self, docs, ref):
        kind, name = ref.split("/", 1)
        d = docs[(kind, name)]
        if kind == "DaemonSet":
            t = d["spec"]["template"]
            meta = dict(t.get("metadata", {}))
            meta["name"] = "%s-%s" % (name, uuid.uuid4().hex[:5])
            meta["namespace"] = d["metadata"].get("namespace", "default")
            return meta, t["spec"]
        if kind == "Pod":
            meta = dict(d["metadata"])
            meta.setdefault("namespace", "default")
            return meta, d["spec"]
        sys.exit("kubelet.py: %s is neither a DaemonSet nor a Pod" % ref)

    def handler(self, docs, spec):
        rc = spec.get("runtimeClassName")
        if not rc:
            return ""
        return docs[("RuntimeClass", rc)]["handler"]

    def sandbox_config(self, meta, spec, uid):
        pb = self.pb
        ns = pb.NamespaceOption(
            network=pb.NODE if spec.get("hostNetwork") else pb.POD,
            pid=pb.NODE if spec.get("hostPID") else (pb.POD if spec.get("shareProcessNamespace") else pb.CONTAINER),
            ipc=pb.NODE if spec.get("hostIPC") else pb.POD)
        privileged = any(c.get("securityContext", {}).get("privileged")
                         for c in spec.get("containers", []) + spec.get("initContainers", []))
        labels = dict(meta.get("labels", {}))
        labels.update({"io.kubernetes.pod.name": meta["name"], "io.kubernetes.pod.namespace": meta["namespace"],
                       "io.kubernetes.pod.uid": uid})
        logdir = "/var/log/pods/%s_%s_%s" % (meta["namespace"], meta["name"], uid)
        os.makedirs(self.node_path(logdir), 0o755, exist_ok=True)
        ports = [pb.PortMapping(protocol=pb.TCP, container_port=p["containerPort"])
                 for c in spec.get("containers", []) for p in c.get("ports", [])]
        return pb.PodSandboxConfig(
            metadata=pb.PodSandboxMetadata(name=meta["name"], uid=uid, namespace=meta["namespace"], attempt=0),
            hostname=self.a.node if spec.get("hostNetwork") else meta["name"],
            log_directory=logdir, labels=labels, annotations=meta.get("annotations", {}),
            port_mappings=ports,
            linux=pb.LinuxPodSandboxConfig(
                cgroup_parent="/kubepods/besteffort/pod" + uid,
                security_context=pb.LinuxSandboxSecurityContext(
                    namespace_options=ns, privileged=privileged,
                    seccomp=pb.SecurityProfile(profile_type=pb.SecurityProfile.Unconfined))))

    # ---- volumes, as the kubelet sets them up before any container

    def volumes(self, docs, meta, spec, uid):
        out = {}
        for v in spec.get("volumes", []):
            name = v["name"]
            if "hostPath" in v:
                hp = v["hostPath"]
                path, typ = hp["path"], hp.get("type", "")
                np = self.node_path(path)
                if typ == "DirectoryOrCreate" and not os.path.exists(np):
                    os.makedirs(np, 0o755)  # kubelet: os.MkdirAll(path, 0755)
                    os.chmod(np, 0o755)
                elif typ == "Directory" and not os.path.isdir(np):
                    sys.exit("kubelet.py: hostPath %s (%s) is not a directory" % (path, name))
                elif typ == "Socket" and not stat.S_ISSOCK(os.stat(np).st_mode if os.path.exists(np) else 0):
                    sys.exit("kubelet.py: hostPath %s (%s) is not a socket" % (path, name))
                out[name] = (path, False)
            elif "configMap" in v:
                cm = docs[("ConfigMap", v["configMap"]["name"])]
                d = "/var/lib/kubelet/pods/%s/volumes/kubernetes.io~configmap/%s" % (uid, name)
                os.makedirs(self.node_path(d), 0o755, exist_ok=True)
                mode = v["configMap"].get("defaultMode", 0o644)
                for k, text in cm.get("data", {}).items():
                    with open(self.node_path(d + "/" + k), "w") as fh:
                        fh.write(text)
                    os.chmod(self.node_path(d + "/" + k), mode)
                out[name] = (d, True)  # the kubelet mounts configMaps read-only
            elif "projected" in v:
                d = "/var/lib/kubelet/pods/%s/volumes/kubernetes.io~projected/%s" % (uid, name)
                os.makedirs(self.node_path(d), 0o755, exist_ok=True)
                mode = v["projected"].get("defaultMode", 0o644)
                for path, text in self.projected(docs, meta, v["projected"]["sources"]):
                    os.makedirs(os.path.dirname(self.node_path(d + "/" + path)), 0o755, exist_ok=True)
                    with open(self.node_path(d + "/" + path), "w") as fh:
                        fh.write(text)
                    os.chmod(self.node_path(d + "/" + path), mode)
                out[name] = (d, True)  # projected volumes are read-only
            elif "emptyDir" in v:
                d = "/var/lib/kubelet/pods/%s/volumes/kubernetes.io~empty-dir/%s" % (uid, name)
                os.makedirs(self.node_path(d), 0o777, exist_ok=True)
                out[name] = (d, False)
            else:
                sys.exit("kubelet.py: volume %s: only hostPath, configMap, projected and emptyDir" % name)
        if spec.get("serviceAccountName") and spec.get("automountServiceAccountToken", True):
            # The projected token volume.  No API server issued a token:
            # kubectl in the pod finds one and reaches no server.
            d = "/var/lib/kubelet/pods/%s/volumes/kubernetes.io~projected/kube-api-access-auto" % uid
            os.makedirs(self.node_path(d), 0o755, exist_ok=True)
            for k, text in (("token", "no-api-server-in-this-test"), ("namespace", meta["namespace"])):
                with open(self.node_path(d + "/" + k), "w") as fh:
                    fh.write(text)
            out[AUTO_TOKEN] = (d, True)
        return out

    def projected(self, docs, meta, sources):
        """The files of a projected volume: (path, text) for each item.
        No API server issues a token here: a placeholder (kubectl in the pod
        finds it and reaches no server).  kube-root-ca.crt is the ConfigMap
        kube-controller-manager publishes in every namespace: without an
        API server there is none, and its ca.crt is left empty."""
        field = {"metadata.namespace": meta["namespace"], "metadata.name": meta["name"]}
        for src in sources:
            if "serviceAccountToken" in src:
                yield src["serviceAccountToken"]["path"], "no-api-server-in-this-test"
            elif "configMap" in src:
                cm_name = src["configMap"]["name"]
                data = docs.get(("ConfigMap", cm_name), {}).get("data")
                if data is None and cm_name != "kube-root-ca.crt" and not src["configMap"].get("optional"):
                    sys.exit("kubelet.py: projected configMap %s: no such ConfigMap" % cm_name)
                data = data or {}
                for it in src["configMap"].get("items") or [{"key": k, "path": k} for k in data]:
                    yield it["path"], data.get(it["key"], "")
            elif "downwardAPI" in src:
                for it in src["downwardAPI"]["items"]:
                    yield it["path"], field[it["fieldRef"]["fieldPath"]]
            else:
                sys.exit("kubelet.py: projected source %s: only serviceAccountToken, configMap, downwardAPI"
                         % list(src))

    def security(self, spec, c, image_uid):
        """The container's security context with the pod's for what it
        does not set (the kubelet's DetermineEffectiveSecurityContext), and
        runAsNonRoot checked against the uid it will run as
        (verifyRunAsNonRoot): CreateContainerConfigError otherwise."""
        sc = dict(c.get("securityContext", {}))
        psc = spec.get("securityContext", {})
        for k in ("runAsUser", "runAsGroup", "runAsNonRoot", "seccompProfile"):
            if k not in sc and k in psc:
                sc[k] = psc[k]
        if sc.get("runAsNonRoot"):
            u = sc.get("runAsUser", image_uid)
            if u in (0, None):
                emit(event="create-failed", container=c["name"],
                     error="CreateContainerConfigError: container has runAsNonRoot and image will run as root")
                sys.exit(1)
        return sc, psc.get("supplementalGroups", [])

    def container_config(self, meta, spec, uid, c, vols, pod_ip, image_uid=None):
        pb = self.pb
        field = {"spec.nodeName": self.a.node, "metadata.name": meta["name"],
                 "metadata.namespace": meta["namespace"], "status.podIP": pod_ip,
                 "metadata.uid": uid}
        envs = [pb.KeyValue(key="KUBERNETES_SERVICE_HOST", value="127.0.0.1"),
                pb.KeyValue(key="KUBERNETES_SERVICE_PORT", value="6443")]
        for e in c.get("env", []):
            if "value" in e:
                envs.append(pb.KeyValue(key=e["name"], value=e["value"]))
            elif "fieldRef" in e.get("valueFrom", {}):
                envs.append(pb.KeyValue(key=e["name"], value=field[e["valueFrom"]["fieldRef"]["fieldPath"]]))
            else:
                sys.exit("kubelet.py: env %s: only value and fieldRef" % e["name"])
        mounts = []
        for m in c.get("volumeMounts", []):
            host, ro = vols[m["name"]]
            mounts.append(pb.Mount(container_path=m["mountPath"], host_path=host,
                                   readonly=ro or bool(m.get("readOnly"))))
        if AUTO_TOKEN in vols:
            mounts.append(pb.Mount(container_path=SA_DIR, host_path=vols[AUTO_TOKEN][0], readonly=True))
        # /dev/termination-log, a file of the pod's directory on the node
        tl = "/var/lib/kubelet/pods/%s/containers/%s/%s" % (uid, c["name"], uuid.uuid4().hex[:8])
        os.makedirs(os.path.dirname(self.node_path(tl)), 0o750, exist_ok=True)
        open(self.node_path(tl), "w").close()
        mounts.append(pb.Mount(container_path="/dev/termination-log", host_path=tl))
        sc, groups = self.security(spec, c, image_uid)
        priv = bool(sc.get("privileged"))
        caps = sc.get("capabilities", {})
        lsc = pb.LinuxContainerSecurityContext(
            privileged=priv,
            capabilities=pb.Capability(add_capabilities=caps.get("add", []), drop_capabilities=caps.get("drop", [])),
            namespace_options=self.sandbox_ns,
            readonly_rootfs=bool(sc.get("readOnlyRootFilesystem")),
            no_new_privs=sc.get("allowPrivilegeEscalation") is False,
            masked_paths=[] if priv else MASKED, readonly_paths=[] if priv else READONLY,
            supplemental_groups=groups,
            seccomp=pb.SecurityProfile(profile_type=pb.SecurityProfile.Unconfined))
        if sc.get("seccompProfile", {}).get("type") == "RuntimeDefault":
            lsc.seccomp.profile_type = pb.SecurityProfile.RuntimeDefault
        elif sc.get("seccompProfile", {}).get("type") not in (None, "Unconfined"):
            sys.exit("kubelet.py: seccompProfile %s: only RuntimeDefault and Unconfined" % sc["seccompProfile"])
        if "runAsUser" in sc:
            lsc.run_as_user.value = sc["runAsUser"]
        if "runAsGroup" in sc:
            lsc.run_as_group.value = sc["runAsGroup"]
        res = pb.LinuxContainerResources(oom_score_adj=-997 if spec.get("priorityClassName") in (
            "system-node-critical", "system-cluster-critical") else 1000)
        req = c.get("resources", {}).get("requests", {})
        lim = c.get("resources", {}).get("limits", {})
        if "cpu" in req:
            milli = int(req["cpu"][:-1]) if str(req["cpu"]).endswith("m") else int(float(req["cpu"]) * 1000)
            res.cpu_shares = max(2, milli * 1024 // 1000)
        if "memory" in lim:
            units = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30}
            v = str(lim["memory"])
            res.memory_limit_in_bytes = int(v[:-2]) * units[v[-2:]] if v[-2:] in units else int(v)
        labels = {"io.kubernetes.container.name": c["name"], "io.kubernetes.pod.name": meta["name"],
                  "io.kubernetes.pod.namespace": meta["namespace"], "io.kubernetes.pod.uid": uid}
        return pb.ContainerConfig(
            metadata=pb.ContainerMetadata(name=c["name"], attempt=0),
            image=pb.ImageSpec(image=c["image"]), command=c.get("command", []), args=c.get("args", []),
            working_dir=c.get("workingDir", ""), envs=envs, mounts=mounts, labels=labels,
            annotations={"io.kubernetes.container.restartCount": "0",
                         "io.kubernetes.container.terminationMessagePath": "/dev/termination-log"},
            log_path="%s/0.log" % c["name"],
            linux=pb.LinuxContainerConfig(resources=res, security_context=lsc))

    def log_of(self, cid):
        st = self.call("ContainerStatus", self.pb.ContainerStatusRequest(container_id=cid)).status
        try:
            with open(self.node_path(st.log_path)) as fh:
                return "".join(line.split(" ", 3)[-1] for line in fh)
        except OSError:
            return ""

    def wait_exit(self, cid, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            st = self.call("ContainerStatus", self.pb.ContainerStatusRequest(container_id=cid)).status
            if st.state == self.pb.CONTAINER_EXITED:
                return st.exit_code
            time.sleep(0.2)
        raise TimeoutError("container %s did not exit within %.0f s" % (cid[:12], timeout))

    def run_container(self, pod, cfg, meta, spec, uid, c, vols, pod_ip):
        pb = self.pb
        img = self.cri.img.ImageStatus(pb.ImageStatusRequest(image=pb.ImageSpec(image=c["image"])),
                                       timeout=RUNTIME_REQUEST_TIMEOUT)
        if not img.image.id:  # IfNotPresent: there is no registry to pull from
            sys.exit("kubelet.py: image %s is not on the node (ErrImagePull)" % c["image"])
        cc = self.container_config(meta, spec, uid, c, vols, pod_ip,
                                   img.image.uid.value if img.image.HasField("uid") else None)
        cid = self.call("CreateContainer", pb.CreateContainerRequest(
            pod_sandbox_id=pod, config=cc, sandbox_config=cfg)).container_id
        t0 = time.monotonic()
        self.call("StartContainer", pb.StartContainerRequest(container_id=cid))
        return cid, round((time.monotonic() - t0) * 1000, 1)

    def up(self, docs):
        a = self.a
        meta, spec = self.pod_of(docs, a.pod)
        uid = str(uuid.uuid4())
        cfg = self.sandbox_config(meta, spec, uid)
        self.sandbox_ns = cfg.linux.security_context.namespace_options
        vols = self.volumes(docs, meta, spec, uid)
        pod = self.call("RunPodSandbox", self.pb.RunPodSandboxRequest(
            config=cfg, runtime_handler=self.handler(docs, spec))).pod_sandbox_id
        st = self.call("PodSandboxStatus", self.pb.PodSandboxStatusRequest(pod_sandbox_id=pod)).status
        pod_ip = st.network.ip
        emit(event="sandbox", pod=meta["name"], namespace=meta["namespace"], uid=uid, pod_id=pod, ip=pod_ip,
             handler=self.handler(docs, spec))
        for c in spec.get("initContainers", []):
            cid, ms = self.run_container(pod, cfg, meta, spec, uid, c, vols, pod_ip)
            code = self.wait_exit(cid, a.timeout)
            emit(event="init", container=c["name"], id=cid, exit_code=code, log=self.log_of(cid))
            if code != 0:  # the kubelet would restart it (backoff); one run says it
                sys.exit(1)
        for c in spec["containers"]:
            try:
                cid, ms = self.run_container(pod, cfg, meta, spec, uid, c, vols, pod_ip)
            except self.cri.grpc.RpcError as e:
                emit(event="start-failed", container=c["name"], error="%s: %s" % (e.code().name, e.details()))
                sys.exit(1)
            emit(event="started", container=c["name"], id=cid, start_ms=ms)

    # ---- a running pod, found by its name as the kubelet keeps it

    def find(self, name):
        """A pod by its name, or a DaemonSet's pod by the DaemonSet's name."""
        pb = self.pb
        pods = [p for p in self.call("ListPodSandbox", pb.ListPodSandboxRequest()).items
                if p.metadata.name == name or re.fullmatch(re.escape(name) + "-[0-9a-f]{5}", p.metadata.name)]
        pods = [p for p in pods if p.state == pb.SANDBOX_READY] or pods
        if not pods:
            sys.exit("kubelet.py: no pod %s" % name)
        p = pods[0]
        ctrs = self.call("ListContainers", pb.ListContainersRequest(
            filter=pb.ContainerFilter(pod_sandbox_id=p.id))).containers
        return p, {c.metadata.name: c for c in ctrs}

    def exec_(self, cid, cmd, timeout):
        r = self.call("ExecSync", self.pb.ExecSyncRequest(container_id=cid, cmd=cmd, timeout=timeout),
                      timeout=timeout + 5)
        return r.exit_code, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")

    def probe(self, docs):
        a = self.a
        meta, spec = self.pod_of(docs, a.pod)
        c = {c["name"]: c for c in spec["containers"]}[a.container]
        pr = c[a.kind + "Probe"]
        _, ctrs = self.find(a.pod.split("/", 1)[1])
        code, out, err = self.exec_(ctrs[a.container].id, pr["exec"]["command"], pr.get("timeoutSeconds", 1))
        emit(probe=a.kind, container=a.container, command=pr["exec"]["command"], exit_code=code,
             stdout=out, stderr=err)
        sys.exit(0 if code == 0 else 1)

    def status(self):
        """The pod's state and each container's, with its start and end
        (nanoseconds since the epoch) and exit code."""
        pb = self.pb
        p, ctrs = self.find(self.a.pod)
        out = {}
        for n, c in ctrs.items():
            st = self.call("ContainerStatus", pb.ContainerStatusRequest(container_id=c.id)).status
            out[n] = dict(state=pb.ContainerState.Name(st.state), started_at=st.started_at,
                          finished_at=st.finished_at, exit_code=st.exit_code)
        emit(pod=p.metadata.name, pod_id=p.id, state=pb.PodSandboxState.Name(p.state), containers=out)

    def logs(self):
        _, ctrs = self.find(self.a.pod)
        sys.stdout.write(self.log_of(ctrs[self.a.container].id))

    def down(self):
        """StopContainer (grace period 30 s) for each, then StopPodSandbox,
        RemovePodSandbox and the pod's directory, as the kubelet does."""
        pb = self.pb
        p, ctrs = self.find(self.a.pod)
        for c in ctrs.values():
            if c.state == pb.CONTAINER_RUNNING:
                self.call("StopContainer", pb.StopContainerRequest(container_id=c.id, timeout=30))
        self.call("StopPodSandbox", pb.StopPodSandboxRequest(pod_sandbox_id=p.id))
        self.call("RemovePodSandbox", pb.RemovePodSandboxRequest(pod_sandbox_id=p.id))
        uid = p.metadata.uid
        for d in ("/var/lib/kubelet/pods/" + uid,
                  "/var/log/pods/%s_%s_%s" % (p.metadata.namespace, p.metadata.name, uid)):
            nd = self.node_path(d)
            if os.path.isdir(nd):
                for r, dirs, files in os.walk(nd, topdown=False):
                    for f in files:
                        os.unlink(os.path.join(r, f))
                    for x in dirs:
                        os.rmdir(os.path.join(r, x))
                os.rmdir(nd)
        emit(removed=p.metadata.name)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--socket", required=True)
    ap.add_argument("--gen", required=True)
    ap.add_argument("--root", required=True, help="the node's / as seen from here")
    ap.add_argument("--node", default="node-1", help="the node's name (spec.nodeName)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("up")
    p.add_argument("files", nargs="+")
    p.add_argument("--pod", required=True, help="DaemonSet/NAME or Pod/NAME")
    p.add_argument("--timeout", type=float, default=180, help="seconds for an init container to end")
    p = sub.add_parser("probe")
    p.add_argument("files", nargs="+")
    p.add_argument("--pod", required=True)
    p.add_argument("--container", required=True)
    p.add_argument("--kind", default="liveness", choices=["liveness", "readiness"])
    p = sub.add_parser("exec")
    p.add_argument("--pod", required=True)
    p.add_argument("--container", required=True)
    p.add_argument("--timeout", type=int, default=30)
    p.add_argument("argv", nargs="+")
    p = sub.add_parser("status")
    p.add_argument("--pod", required=True)
    p = sub.add_parser("logs")
    p.add_argument("--pod", required=True)
    p.add_argument("--container", required=True)
    p = sub.add_parser("down")
    p.add_argument("--pod", required=True)
    a = ap.parse_args()
    os.umask(0o022)
    k = Kubelet(a)
    if a.cmd == "up":
        k.up(load_docs(a.files))
    elif a.cmd == "probe":
        k.probe(load_docs(a.files))
    elif a.cmd == "exec":
        _, ctrs = k.find(a.pod)
        code, out, err = k.exec_(ctrs[a.container].id, a.argv, a.timeout)
        sys.stdout.write(out)
        sys.stderr.write(err)
        sys.exit(code)
    elif a.cmd == "status":
        k.status()
    elif a.cmd == "logs":
        k.logs()
    elif a.cmd == "down":
        k.down()


if __name__ == "__main__":
    main()
