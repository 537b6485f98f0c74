#!/usr/bin/env python3
"""check_layers.py — fails when an #include or a call crosses a layer upwards.

The layers of DESIGN.md §2, lowest first (docs/architecture.md):

    util < odf < store < engine < dataset < files < ingest < transform < ops
    < cli, server

Rules checked:
  1. a file under src/<L>/ includes "<M>/…" only when M is L or below L;
  2. an object file of src/<L>/ references (calls, or takes the address of)
     only symbols defined in L or below — this also catches a prototype
     declared locally to hide an upward call, which rule 1 cannot see;
  3. cli/ and server/ include only "silt.h" and their own headers, and use
     only functions declared in include/silt.h (the public API).

Usage:
  check_layers.py SOURCE_DIR BUILD_DIR   check the tree (objects from the build)
  check_layers.py --self-test            check that the checker catches an
                                         upward include and an upward call
Exit status 0 when clean, 1 with one line per violation otherwise.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

LAYERS = ["util", "odf", "store", "engine", "dataset", "files", "ingest", "transform", "ops"]
TOP = ["cli", "server"]  # above every src/ layer, public API only
RANK = {name: i for i, name in enumerate(LAYERS)}
for t in TOP:
    RANK[t] = len(LAYERS)

INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
PUBLIC_DECL_RE = re.compile(r"\b(silt_[A-Za-z0-9_]+)\s*\(")


def layer_of(rel):
    """Layer of a path relative to the source dir, or None."""
    parts = rel.split(os.sep)
    if parts[0] == "src" and len(parts) > 2 and parts[1] in RANK:
        return parts[1]
    if parts[0] in TOP:
        return parts[0]
    return None


def source_files(src):
    for top in ["src", *TOP]:
        base = os.path.join(src, top)
        for dirpath, _, files in os.walk(base):
            for f in sorted(files):
                if f.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(dirpath, f), src)


def check_includes(src):
    problems = []
    for rel in source_files(src):
        layer = layer_of(rel)
        if layer is None:
            continue
        with open(os.path.join(src, rel), encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for inc in INCLUDE_RE.findall(text):
            if layer in TOP:
                if inc != "silt.h" and "/" in inc:
                    problems.append(f"{rel}: includes \"{inc}\": {layer}/ may include only \"silt.h\" and its own headers")
                continue
            target = inc.split("/")[0] if "/" in inc else None
            if target in RANK and RANK[target] > RANK[layer]:
                problems.append(f"{rel}: includes \"{inc}\": {target}/ is above {layer}/")
    return problems


def nm_symbols(obj):
    """(defined, undefined) global symbol names of an object file."""
    out = subprocess.run(["nm", "-g", obj], check=True, capture_output=True, text=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            undefined.add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDBRCVW":
            defined.add(parts[2])
    return defined, undefined


def objects(src, build):
    """(layer, source path, object path) of every object of the library and
    the CLI whose source still exists (a build tree keeps stale objects of
    moved files)."""
    for target in ["siltlib.dir", "silt.dir", "siltserver.dir"]:
        base = os.path.join(build, "CMakeFiles", target)
        for dirpath, _, files in os.walk(base):
            for f in sorted(files):
                if not f.endswith(".o"):
                    continue
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, base)[: -len(".o")]
                layer = layer_of(rel)
                if layer and os.path.exists(os.path.join(src, rel)):
                    yield layer, rel, path


def public_api(src):
    with open(os.path.join(src, "include", "silt.h"), encoding="utf-8") as fh:
        return set(PUBLIC_DECL_RE.findall(fh.read()))


def check_calls(src, build):
    objs = list(objects(src, build))
    if not objs:
        return [f"{build}: no object files found (build first)"]
    owner = {}
    syms = {}
    for layer, rel, path in objs:
        d, u = nm_symbols(path)
        syms[rel] = (layer, d, u)
        for s in d:
            owner[s] = (layer, rel)
    api = public_api(src)
    problems = []
    for rel, (layer, _, undefined) in sorted(syms.items()):
        for s in sorted(undefined):
            if s not in owner:
                continue  # libc, DuckDB, …
            olayer, orel = owner[s]
            if layer in TOP:
                if olayer not in TOP and s not in api:
                    problems.append(f"{rel}: uses {s} ({orel}), which is not public API (include/silt.h)")
            elif RANK[olayer] > RANK[layer]:
                problems.append(f"{rel}: calls {s} ({orel}): {olayer}/ is above {layer}/")
    return problems


def check(src, build):
    return check_includes(src) + check_calls(src, build)


def self_test():
    """Builds a tiny tree with one upward include and one upward call."""
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not cc:
        print("self-test: no C compiler", file=sys.stderr)
        return 1
    tmp = tempfile.mkdtemp(prefix="silt-layers-")
    try:
        src, build = os.path.join(tmp, "src-tree"), os.path.join(tmp, "build")
        files = {
            "include/silt.h": "int silt_public(void);\n",
            "src/util/low.c": '#include "ops/high.h"\nint silt_high(void);\nint silt_low(void) { return silt_high(); }\n',
            "src/ops/high.h": "int silt_high(void);\n",
            "src/ops/high.c": "int silt_high(void) { return 1; }\nint silt_public(void) { return 2; }\n",
            "cli/main.c": '#include "silt.h"\nint silt_high(void);\nint main(void) { return silt_public() + silt_high(); }\n',
        }
        for rel, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(src, rel)), exist_ok=True)
            with open(os.path.join(src, rel), "w", encoding="utf-8") as fh:
                fh.write(text)
        for rel in ["src/util/low.c", "src/ops/high.c", "cli/main.c"]:
            target = "silt.dir" if rel.startswith("cli/") else "siltlib.dir"
            obj = os.path.join(build, "CMakeFiles", target, rel + ".o")
            os.makedirs(os.path.dirname(obj), exist_ok=True)
            subprocess.run([cc, "-c", "-I", os.path.join(src, "src"), "-I", os.path.join(src, "include"),
                            os.path.join(src, rel), "-o", obj], check=True)
        got = check(src, build)
        want = [
            'src/util/low.c: includes "ops/high.h": ops/ is above util/',
            "src/util/low.c: calls silt_high (src/ops/high.c): ops/ is above util/",
            "cli/main.c: uses silt_high (src/ops/high.c), which is not public API (include/silt.h)",
        ]
        if sorted(got) != sorted(want):
            print("self-test FAILED: expected\n  " + "\n  ".join(want) + "\ngot\n  " + "\n  ".join(got), file=sys.stderr)
            return 1
        print("check_layers self-test: upward include, upward call and non-public use detected")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv):
    if len(argv) == 2 and argv[1] == "--self-test":
        return self_test()
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    problems = check(argv[1], argv[2])
    for p in problems:
        print(f"layer violation: {p}")
    if problems:
        print(f"check_layers: {len(problems)} violation(s); see docs/architecture.md", file=sys.stderr)
        return 1
    print("check_layers: every include and call points down the layers")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
