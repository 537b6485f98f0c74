#!/usr/bin/env bash
# The README tour runs as written: every `sh` block of its section "A tour
# of the CLI", in order, as one script with `set -euo pipefail`, starting in
# the source root as the README says, in a fresh temporary directory; no
# step may fail. Also: the doc references of README.md and docs/ name files
# that are in the repository.
source "$(dirname "$0")/lib.sh"

python3 - "$SILT_SOURCE_DIR/README.md" >tour.sh <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
start = text.index("## A tour of the CLI\n")
end = text.index("\n## ", start + 1)
blocks = re.findall(r"```sh\n(.*?)```", text[start:end], re.S)
assert len(blocks) >= 4, len(blocks)
print("\n".join(blocks))
PY
[ "$(grep -c '^silt ' tour.sh)" -ge 30 ] || fail "tour extraction found too few commands: $(grep -c '^silt ' tour.sh)"
pass
# run it where the README says (the clone's root), with TMPDIR inside the test directory
(cd "$SILT_SOURCE_DIR" && TMPDIR="$T_DIR" PATH="$(dirname "$SILT"):$PATH" bash -euo pipefail "$T_DIR/tour.sh") \
    >tour.out 2>tour.err || fail "the README tour failed: $(tail -5 tour.err)"
pass
# a few results the README's comments promise
grep -q '^Created docs ' tour.out || fail "no files dataset created: $(tail -3 tour.out)"
grep -q $'^scans/a.txt\t6\t' tour.out || fail "branch review lacks scans/a.txt"
grep -q 'notes.txt' tour.out || fail "branch review lacks notes.txt"
pass
# the source tree is untouched by the tour
[ -z "$(git -C "$SILT_SOURCE_DIR" status --porcelain --untracked-files=all -- . ':!build*' 2>/dev/null | grep -v '^?? build' | grep -E '(block.yaml|local.csv|quick.csv|info.yaml|notes.txt|report.pdf|scans/)' || true)" ] \
    || fail "the tour wrote into the source tree"
pass

# doc references of README.md and the user guides in docs/: `docs/…` and
# `spec/…` name files of the repository, and no DESIGN.md (outside it)
python3 - "$SILT_SOURCE_DIR" <<'PY' || fail "a doc reference names a file that is not in the repository"
import os, re, sys
root = sys.argv[1]
bad = []
guides = [os.path.join(root, "README.md")] + [
    os.path.join(root, "docs", f) for f in sorted(os.listdir(os.path.join(root, "docs")))
    if f.endswith(".md") and f != "decisions.md"]  # decisions.md records departures from DESIGN.md
for path in guides:
    if True:
        text = open(path, encoding="utf-8").read()
        for ref in re.findall(r"`((?:docs|spec)/[A-Za-z0-9_./-]+\.md)`", text):
            if not os.path.exists(os.path.join(root, ref)):
                bad.append(f"{os.path.relpath(path, root)}: {ref}")
        if "DESIGN.md" in text:
            bad.append(f"{os.path.relpath(path, root)}: DESIGN.md")
for b in bad:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
pass
done_tests
