#!/usr/bin/env bash
# test_flatc_crosscheck.sh — the ODF schema and its generated C code.
#  1. tools/odfgen.py regenerated into a temp dir must equal the committed
#     src/odf/odf_types.h and src/odf/odf_schema.c (nobody edited them by hand,
#     nobody forgot to regenerate after editing src/odf/odf.fbs).
#  2. Debian's flatc accepts src/odf/odf.fbs.
# The binary cross-check of the codec against flatc is the cmocka test
# tests/unit/test_flatc.c.
set -euo pipefail
SRC=${SILT_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

python3 "$SRC/tools/odfgen.py" --fbs "$SRC/src/odf/odf.fbs" --out-dir "$TMP/gen"
for f in odf_types.h odf_schema.c; do
    if ! diff -u "$SRC/src/odf/$f" "$TMP/gen/$f" >"$TMP/diff.txt"; then
        echo "FAIL: src/odf/$f is out of date; run: python3 tools/odfgen.py" >&2
        head -40 "$TMP/diff.txt" >&2
        exit 1
    fi
done
echo "ok: generated files are up to date"

if ! command -v flatc >/dev/null 2>&1; then
    echo "FAIL: flatc not found in PATH (install flatbuffers-compiler)" >&2
    exit 1
fi
flatc --cpp -o "$TMP/cpp" "$SRC/src/odf/odf.fbs"
echo "ok: flatc accepts src/odf/odf.fbs"
