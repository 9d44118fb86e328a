#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Write the seed corpora of fuzz_ttrpc_frame and fuzz_ttrpc_server:
ttrpc frames built by hand (protobuf wire format, no dependency)."""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from protowire import field, varint, vfield  # noqa: E402

SVC = b"iobatch.fuzz.v1.Fuzz"


def frame(sid, typ, payload, flags=0, length=None):
    n = len(payload) if length is None else length
    return struct.pack(">IIBB", n, sid, typ, flags) + payload


def request(service, method, payload=b"", timeout=0, md=()):
    r = field(1, service) + field(2, method)
    if payload:
        r += field(3, payload)
    if timeout:
        r += vfield(4, timeout)
    for k, v in md:
        r += field(5, field(1, k) + field(2, v))
    return r


task_start = field(1, b"c1") + vfield(2, 42)
seeds = {
    "echo": frame(1, 1, request(SVC, b"Echo", task_start)),
    "echo_md": frame(1, 1, request(SVC, b"Echo", task_start, 5_000_000_000,
                                   [(b"Containerd-Namespace-Ttrpc", b"default")])),
    "two_defer": frame(1, 1, request(SVC, b"Defer")) + frame(3, 1, request(SVC, b"Defer")),
    "defer_held": frame(1, 1, request(SVC, b"Defer")) + frame(3, 1, request(SVC, b"Echo")),
    "fail": frame(5, 1, request(SVC, b"Fail", task_start)),
    "unknown_service": frame(1, 1, request(b"foo.Bar", b"X")),
    "unknown_method": frame(1, 1, request(SVC, b"Nope")),
    "bad_payload": frame(1, 1, request(SVC, b"Echo", b"\x0a\x7fx")),
    "bad_request": frame(1, 1, b"\xff\xff\xff"),
    "even_id": frame(2, 1, request(SVC, b"Echo")),
    "reused_id": frame(3, 1, request(SVC, b"Echo")) + frame(3, 1, request(SVC, b"Echo")),
    "data_frame": frame(1, 3, b"x", flags=1),
    "unknown_type": frame(1, 9, b"zz") + frame(3, 1, request(SVC, b"Echo")),
    "oversize": frame(1, 1, b"\0" * 64, length=4 * 1024 * 1024 + 1),
    "truncated_header": b"\0\0\0\x05\0\0",
    "truncated_body": frame(1, 1, b"abc", length=100),
    "response": frame(1, 2, field(1, vfield(1, 5) + field(2, b"not found")) + field(2, b"x")),
    "empty": frame(1, 1, b""),
}

top = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus")
for target, prefix in (("fuzz_ttrpc_server", b""), ("fuzz_ttrpc_frame", b"\x00")):
    d = os.path.join(top, target)
    os.makedirs(d, exist_ok=True)
    for name, data in seeds.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(prefix + data)
    if target == "fuzz_ttrpc_frame":  # split reads: chunk sizes 1 and 3
        with open(os.path.join(d, "echo_1byte"), "wb") as f:
            f.write(b"\x00" + seeds["echo"])
        with open(os.path.join(d, "two_defer_3byte"), "wb") as f:
            f.write(b"\x02" + seeds["two_defer"])


def response(code=None, message=b"", payload=b""):
    r = b""
    if code is not None:
        st = (vfield(1, code) if code else b"") + (field(2, message) if message else b"")
        r += field(1, st)
    if payload:
        r += field(2, payload)
    return r


client_seeds = {
    "all_ok": frame(1, 2, response(0, payload=task_start)) + frame(3, 2, response(0))
    + frame(5, 2, response()),
    "reversed": frame(5, 2, response(0)) + frame(3, 2, response(5, b"not found"))
    + frame(1, 2, response(12, b"method M")),
    "no_status": frame(1, 2, response(payload=task_start)),
    "bad_payload": frame(1, 2, response(0, payload=b"\x0a\x7f")),
    "bad_response": frame(3, 2, b"\xff\xff"),
    "unknown_id": frame(7, 2, response(0)) + frame(1, 2, response(0)),
    "oversize": frame(1, 2, b"\0" * 32, length=4 * 1024 * 1024 + 1),
    "data_frame": frame(1, 3, b"x") + frame(3, 2, response(0)),
    "truncated": frame(1, 2, response(0), length=50),
}
d = os.path.join(top, "fuzz_ttrpc_client")
os.makedirs(d, exist_ok=True)
for name, data in client_seeds.items():
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)
