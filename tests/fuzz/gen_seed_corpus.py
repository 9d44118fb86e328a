#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Write the seed corpora of fuzz_cg2_files, fuzz_shim_options,
fuzz_shim_requests and fuzz_agent_requests (protobuf wire format built by
hand, no dependency).  Each seed starts with the selector byte the target
reads first.  Run from the repository root; files are overwritten."""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from protowire import field, varint, vfield  # noqa: E402


def dfield(num, x):  # double
    return varint(num << 3 | 1) + struct.pack("<d", x)


MOUNTINFO = (
    b"22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
    b"25 22 0:22 / /sys/fs/cgroup ro,nosuid shared:4 - tmpfs tmpfs ro,mode=755\n"
    b"26 25 0:23 / /sys/fs/cgroup/unified rw,nosuid shared:5 - cgroup2 cgroup2 rw,nsdelegate\n"
    b"27 25 0:24 / /sys/fs/cgroup/blkio rw,nosuid shared:9 - cgroup cgroup rw,blkio\n"
    b"28 25 0:25 / /sys/fs/cgroup/with\\040space rw shared:10 - cgroup cgroup rw,name=systemd\n"
)
PROC_IO = (b"rchar: 4096\nwchar: 8192\nsyscr: 10\nsyscw: 20\nread_bytes: 0\n"
           b"write_bytes: 4096\ncancelled_write_bytes: 0\n")

cg2_files = {
    "mountinfo": b"\x00" + MOUNTINFO,
    "mountinfo-v2only": b"\x00" + b"30 1 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
    "mountinfo-short": b"\x00" + b"30 1 0:26 /\n31 - cgroup2\n",
    "v1-mount": b"\x01" + MOUNTINFO,
    "pid-cgroup": b"\x02" + b"12:blkio:/user.slice\n1:name=systemd:/user.slice/x\n0::/a/b\n",
    "pid-cgroup-dotdot": b"\x02" + b"0::/a/../b\n",
    "pid-cgroup-v1": b"\x03" + b"12:blkio:/user.slice\n1:name=systemd:/user.slice/x\n0::/\n",
    "procs": b"\x04" + b"1\n42\n4194304\n",
    "procs-bad": b"\x04" + b"1\n-2\nx\n99999999999999999999\n",
    "procio": b"\x05" + PROC_IO,
    "procio-missing": b"\x05" + b"rchar: 1\nwchar: 2\n",
    "io-weight": b"\x06" + b"default 100\n8:0 200\n259:0 10000\n",
    "bfq-weight": b"\x06" + b"100\n",
    "io-weight-range": b"\x06" + b"default 0\n8:0 10001\n",
    "u64-overflow": b"\x07" + b"18446744073709551616",
    "scheduler": b"\x08" + b"mq-deadline kyber [bfq] none\n",
    "scheduler-odd": b"\x08" + b"[] [none\n",
    "iocost": b"\x09" + b"259:0 enable=0 ctrl=auto\n8:0 enable=1 ctrl=user rpct=95.00\n",
    "iocost-bad": b"\x09" + b"8:0\n8:0 ctrl=auto\nx:y enable=1\n",
}

runc_options = (field(6, "runc") + field(7, "/run/containerd/runc") + field(3, "/iobatch")
                + vfield(9, 1) + vfield(4, 1000))
shim_options = {
    "toml": b"\x00" + b'BinaryName = "runc"\nRoot = "/run/containerd/runc"\n'
    b'SystemdCgroup = true\nIobatchAgentSocket = "/run/iobatch/iobatchd.sock"\n'
    b'IobatchFailClosed = true\n# comment\nCriuPath = ""\n',
    "toml-bad": b"\x00" + b'Root = "relative"\n[x\nIobatchFailClosed = maybe\n',
    # comments after values, '#' in strings, literal strings, escapes,
    # quoted and unknown keys (shim/options.c)
    "toml-comments": b"\x00" + b'BinaryName = "runc"   # or "crun"\nRoot = \'/run/r#1\' # lit\n'
    b'"ShimCgroup" = "/a\\\\b\\"c\\t"\nSystemdCgroups = true # typo\nIoUid = 7# x\n'
    b'Foo = [1, 2]\n',
    "toml-bad-strings": b"\x00" + b'Root = "/r\\q"\nBinaryName = "a" b\nRoot = \'x\n'
    b'Root = "\\u00e9"\nIoGid = +1\n = "x"\nBinaryName =\n',
    "options-json": b"\x01" + b'{"binary_name":"runc","root":"/run/x","systemd_cgroup":true,'
    b'"io_uid":1,"agent_socket":"/run/a.sock","fail_closed":true}',
    "options-json-bad": b"\x01" + b'{"root":"../x","binary_name":"a\\nb"}',
    "runc-options": b"\x02" + runc_options,
    "runc-options-bad": b"\x02" + field(7, "rel/../x"),
    "config-annotations": b"\x03" + b'{"annotations":{"io.iobatch.class":"seq-write",'
    b'"io.iobatch.max-hold-ms":"5000","io.iobatch.workload":"backup"},'
    b'"process":{"args":["fio","--name=x"]}}',
    "config-bad-hold": b"\x03" + b'{"annotations":{"io.iobatch.max-hold-ms":"-1"}}',
    "config-cri-sandbox": b"\x03" + b'{"annotations":{"io.kubernetes.cri.container-type":"sandbox",'
    b'"io.kubernetes.cri.sandbox-name":"web-0","io.kubernetes.cri.sandbox-namespace":"prod"}}',
    "config-crio": b"\x03" + b'{"annotations":{"io.kubernetes.cri-o.ContainerType":"container",'
    b'"io.kubernetes.pod.name":"db-1","io.kubernetes.pod.namespace":"ns",'
    b'"io.kubernetes.container.name":"pg"}}',
    "config-bad-kind": b"\x03" + b'{"annotations":{"io.iobatch.kind":"pod",'
    b'"io.kubernetes.cri.container-name":"a\\u0001b"}}',
    # a pod annotation on the pod's sandbox: the CRI's type wins (wcd/kind.c)
    "config-kind-and-cri": b"\x03" + b'{"annotations":{"io.iobatch.kind":"service",'
    b'"io.kubernetes.cri-o.ContainerType":"sandbox","io.kubernetes.cri.container-type":"x"}}',
    "hooks-in-spec": b"\x04" + b'{"ociVersion":"1.0.2","hooks":{"createRuntime":[{"path":"/x"},{"path":"/usr/bin/iobatch-hook"}]}}',
    "hooks-in-spec-bad": b"\x04" + b'{"hooks":{"createRuntime":{"path":1}}}',
    "mount-options": b"\x05" + b"ro\0nosuid\0rbind\0rprivate\0lowerdir=/a\0upperdir=/b",
}

mount = field(1, "overlay") + field(2, "overlay") + field(4, "lowerdir=/l") + field(4, "ro")
any_runc = field(1, "type.googleapis.com/containerd.runc.v1.Options") + field(2, runc_options)
# containerd.task.v2.Task methods in declaration order (shim.proto).
M = {n: i for i, n in enumerate(
    "State Create Start Delete Pids Pause Resume Checkpoint Kill Exec ResizePty CloseIO "
    "Update Wait Stats Connect Shutdown".split())}
shim_requests = {
    "create": bytes([M["Create"]]) + field(1, "c1") + field(2, "/run/containerd/b/c1")
    + field(3, mount) + field(5, "/run/fifo/in") + field(6, "file:///var/log/c1")
    + field(7, "binary:///usr/bin/logger?tag=x&y=1") + field(10, any_runc),
    "create-bad": bytes([M["Create"]]) + field(1, "-bad..id") + field(2, "../b")
    + field(3, field(4, "nosuchopt")) + field(6, "ftp://x"),
    "exec": bytes([M["Exec"]]) + field(1, "c1") + field(2, "e1") + vfield(3, 1)
    + field(7, field(1, "types.containerd.io/opencontainers/runtime-spec/1/Process")
            + field(2, b'{"args":["sh"]}')),
    "kill": bytes([M["Kill"]]) + field(1, "c1") + field(2, "e1") + vfield(3, 9) + vfield(4, 1),
    "delete": bytes([M["Delete"]]) + field(1, "c" * 80),
    "state": bytes([M["State"]]) + field(1, "c1"),
    "update": bytes([M["Update"]]) + field(1, "c1")
    + field(2, field(1, "x") + field(2, b'{"cpu":{}}')),
    "shutdown": bytes([M["Shutdown"]]) + field(1, "c1") + vfield(2, 1),
}


def rec(which, payload):
    return bytes([which]) + struct.pack("<H", len(payload)) + payload


reg = (field(1, "c1") + field(2, "default") + vfield(3, 42) + field(4, "/a/b")
       + field(5, "/run/b/c1") + field(6, "seq-write") + field(7, "fio") + field(8, "hook")
       + field(9, vfield(1, 100) + vfield(5, 1000)) + vfield(10, 5000))
reg2 = field(1, "c2") + field(2, "default") + field(7, "db") + field(8, "shim")
admit = field(1, "c1") + field(2, "default") + vfield(5, 2000)
admit2 = field(1, "c2") + field(2, "default") + field(3, "random-read")
job = lambda n, c, s: field(1, field(1, n) + field(2, c) + dfield(3, s))
# kind_source (16 in Register, 7 in Admit): annotation, runtime, unknown;
# pod namespace 14 (the daemon trusts kube-system only)
kreg = lambda i, k, s, ns: (field(1, i) + field(2, "k8s.io") + field(6, "seq-write")
                            + field(12, k) + field(14, ns) + vfield(16, s))
kadmit = lambda i, k, s: field(1, i) + field(2, "k8s.io") + field(6, k) + vfield(7, s)
plan = job("a", "seq-write", 10) + job("b", "random-read", 5) + vfield(2, 2) + dfield(3, 0.5)
agent_requests = {
    "register-admit-exit": rec(0, reg) + rec(1, admit) + rec(0, reg2) + rec(1, admit2)
    + rec(3, field(1, "c1") + field(2, "default") + vfield(3, 0)) + rec(2, field(1, "c2")
                                                                      + field(2, "default")),
    "admit-unknown": rec(1, admit2) + rec(1, field(1, "c3") + field(3, "no-such-class")),
    "register-bad": rec(0, field(1, "") + field(2, "default")) + rec(0, field(1, "x/../y")),
    "running": rec(0, reg + vfield(11, 1)) + rec(1, admit) + rec(4, b""),
    "kind-trust": rec(0, kreg("w", "job", 1, "kube-system") + vfield(11, 1))
    + rec(0, kreg("u", "service", 1, "team-a")) + rec(1, kadmit("u", "service", 0))
    + rec(0, kreg("p", "sandbox", 2, "team-a")) + rec(1, kadmit("p", "sandbox", 2))
    + rec(1, kadmit("x", "sandbox", 99)) + rec(0, kreg("t", "service", 1, "kube-system"))
    + rec(4, b""),
    "plan": rec(5, plan),
    "plan-bad": rec(5, plan + vfield(2, 100000) + dfield(3, 2.0)),
    "replies": rec(6, field(1, "seq-write") + vfield(2, 100))
    + rec(7, vfield(1, 1) + field(2, "no conflict") + vfield(3, 12))
    + rec(9, field(1, field(1, "a") + dfield(2, 0.1)) + field(4, "exact")),
}

for name, seeds in [("fuzz_cg2_files", cg2_files), ("fuzz_shim_options", shim_options),
                    ("fuzz_shim_requests", shim_requests),
                    ("fuzz_agent_requests", agent_requests)]:
    d = os.path.join("tests/fuzz/corpus", name)
    os.makedirs(d, exist_ok=True)
    for seed, data in seeds.items():
        with open(os.path.join(d, seed), "wb") as f:
            f.write(data)
