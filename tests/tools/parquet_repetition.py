#!/usr/bin/env python3
"""Prints the schema of a Parquet file's footer: one line per schema element,
"<dotted path> <REQUIRED|OPTIONAL|REPEATED>", root excluded, in footer order.

An independent reader for the tests (Python 3 standard library only): it
decodes the Thrift compact FileMetaData itself, from parquet.thrift's field
ids (FileMetaData.schema = 2; SchemaElement.repetition_type = 3, name = 4,
num_children = 5), without DuckDB and without silt's C code.

    python3 tests/tools/parquet_repetition.py FILE.parquet
"""
import struct
import sys

REP = {0: "REQUIRED", 1: "OPTIONAL", 2: "REPEATED"}


def varint(b, p):
    r = s = 0
    while True:
        x = b[p]
        p += 1
        r |= (x & 0x7F) << s
        s += 7
        if x < 0x80:
            return r, p


def zigzag(n):
    return (n >> 1) ^ -(n & 1)


def value(b, p, t):
    if t in (1, 2):  # bool in a container: one byte
        return b[p] == 1, p + 1
    if t == 3:
        return b[p], p + 1
    if t in (4, 5, 6):
        v, p = varint(b, p)
        return zigzag(v), p
    if t == 7:
        return b[p:p + 8], p + 8
    if t == 8:
        n, p = varint(b, p)
        return bytes(b[p:p + n]), p + n
    if t in (9, 10):
        h = b[p]
        p += 1
        n, et = h >> 4, h & 15
        if n == 15:
            n, p = varint(b, p)
        out = []
        for _ in range(n):
            v, p = value(b, p, et)
            out.append(v)
        return out, p
    if t == 11:
        n, p = varint(b, p)
        if n == 0:
            return {}, p
        kv = b[p]
        p += 1
        out = {}
        for _ in range(n):
            k, p = value(b, p, kv >> 4)
            v, p = value(b, p, kv & 15)
            out[k] = v
        return out, p
    if t == 12:
        return struct_(b, p)
    raise ValueError("unknown Thrift type %d" % t)


def struct_(b, p):
    d, last = {}, 0
    while True:
        h = b[p]
        p += 1
        if h == 0:
            return d, p
        t, delta = h & 15, h >> 4
        if delta:
            fid = last + delta
        else:
            v, p = varint(b, p)
            fid = zigzag(v)
        last = fid
        if t in (1, 2):  # bool field: the value is the type
            d[fid] = t == 1
        else:
            d[fid], p = value(b, p, t)


def main(path):
    b = open(path, "rb").read()
    if b[:4] != b"PAR1" or b[-4:] != b"PAR1":
        sys.exit("%s: not a Parquet file" % path)
    n = struct.unpack("<I", b[-8:-4])[0]
    meta, _ = struct_(b, len(b) - 8 - n)
    els = meta[2]
    pos = [1]

    def walk(count, prefix):
        for _ in range(count):
            e = els[pos[0]]
            pos[0] += 1
            name = e[4].decode()
            path_ = prefix + name
            print(path_, REP[e[3]])
            walk(e.get(5, 0), path_ + ".")

    walk(els[0].get(5, 0), "")


if __name__ == "__main__":
    main(sys.argv[1])
