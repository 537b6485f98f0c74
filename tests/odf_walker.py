#!/usr/bin/env python3
"""odf_walker.py — an independent check of an ODF dataset directory (a
file:// repository entry): follows refs/head and each block's previous-block
reference back to the Seed, and checks that every object it meets (blocks,
data, checkpoints) hashes to its name (SHA3-256 multihash, multibase base16
'f1620…'). It uses no silt code: block references are found as the 34-byte
multihashes (0x16 0x20 + digest) inside each block that name a file of the
dataset. Prints "BLOCKS DATA CHECKPOINTS" counts; exits 1 on any problem.

usage: odf_walker.py DATASET_DIR
"""
import hashlib
import os
import sys


def mh_text(digest):
    return "f1620" + digest.hex()


def check(path):
    with open(path, "rb") as f:
        data = f.read()
    name = os.path.basename(path)
    got = mh_text(hashlib.sha3_256(data).digest())
    if got != name:
        sys.exit(f"{path}: hashes to {got}")
    return data


def refs_in(data):
    out, i = [], 0
    while True:
        i = data.find(b"\x16\x20", i)
        if i < 0 or i + 34 > len(data):
            return out
        out.append(mh_text(data[i + 2:i + 34]))
        i += 1


def main():
    d = sys.argv[1]
    with open(os.path.join(d, "refs", "head")) as f:
        cur = f.read().strip()
    seen = {"blocks": 0, "data": 0, "checkpoints": 0}
    visited = set()
    while cur:
        if cur in visited:
            sys.exit(f"cycle at {cur}")
        visited.add(cur)
        p = os.path.join(d, "blocks", cur)
        if not os.path.exists(p):
            sys.exit(f"blocks/{cur} is missing")
        data = check(p)
        seen["blocks"] += 1
        prev = []
        for h in refs_in(data):
            for kind in ("data", "checkpoints"):
                q = os.path.join(d, kind, h)
                if os.path.exists(q):
                    check(q)
                    seen[kind] += 1
            if os.path.exists(os.path.join(d, "blocks", h)) and h != cur:
                prev.append(h)
        if len(prev) > 1:
            sys.exit(f"blocks/{cur} names {len(prev)} blocks")
        cur = prev[0] if prev else None
    print(seen["blocks"], seen["data"], seen["checkpoints"])


if __name__ == "__main__":
    main()
