# SPDX-License-Identifier: Apache-2.0
"""Protobuf wire-format pieces for the seed-corpus generators
(gen_ttrpc_corpus.py, gen_seed_corpus.py): built by hand, no dependency."""


def varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def field(num, data):  # length-delimited; str is UTF-8 encoded
    if isinstance(data, str):
        data = data.encode()
    return varint(num << 3 | 2) + varint(len(data)) + data


def vfield(num, n):  # varint
    return varint(num << 3) + varint(n)
