#!/usr/bin/env bash
# Workspace discovery, dataset lifecycle (new/list/info/rename/delete), usage
# errors and --json output of the basic commands.
. "$(dirname "$0")/lib.sh"

# --- usage errors -------------------------------------------------------------
fails 2 "silt: unknown command 'frobnicate' (see 'silt help')" frobnicate
fails 2 "silt: new needs a NAME (see 'silt help')" new
fails 2 "silt: log: unknown option '--bogus' (see 'silt help')" log x --bogus
run
[ "$RC" -eq 2 ] || fail "no command must exit 2"
ok help
assert_contains "$OUT" "usage: silt"

# --- no workspace ---------------------------------------------------------------
mkdir empty && cd empty
unset SILT_WORKSPACE || true
fails_like 1 "no silt workspace found" list
cd "$T_DIR"

# --- init -----------------------------------------------------------------------
mkdir ws && cd ws
ok init
[ -d .silt/datasets ] || fail ".silt/datasets missing after init"
fails_like 1 "already" init

# --- new / list / info ------------------------------------------------------------
ok new alpha
assert_contains "$OUT" "Created alpha (did:odf:fed01"
ok new beta
fails_like 1 "dataset 'alpha' already exists" new alpha
fails_like 1 "invalid dataset name" new "bad/name"
fails_like 1 "invalid dataset name" new ".hidden"
ok list
assert_eq "$(echo "$OUT" | awk 'NR>1{print $1}' | tr '\n' ' ')" "alpha beta " "list order"
ok list --json
assert_eq "$(echo "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(",".join(x["name"]+":"+str(x["blocks"]) for x in d))')" "alpha:1,beta:1" "list --json"
ok info alpha --json
assert_eq "$(echo "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["kind"], d["blocks"], d["records"], d["lastOffset"], d["watermark"])')" "Root 1 0 None None" "info --json"
id=$(echo "$OUT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
case "$id" in did:odf:fed01*) pass ;; *) fail "bad id $id" ;; esac
# the dataset directory is named after the DID's multibase form
[ -d ".silt/datasets/${id#did:odf:}" ] || fail "dataset dir for $id missing"
[ "$(cat ".silt/datasets/${id#did:odf:}/info/alias")" = "alpha" ] || fail "alias file"
head=$(cat ".silt/datasets/${id#did:odf:}/refs/head")
case "$head" in f1620*) pass ;; *) fail "refs/head '$head'" ;; esac
[ "$(tail -c1 ".silt/datasets/${id#did:odf:}/refs/head" | od -An -c | tr -d ' ')" != '\n' ] || fail "refs/head ends with a newline"
[ -f ".silt/datasets/${id#did:odf:}/blocks/$head" ] || fail "head block missing"
# open by DID works too
ok info "$id"
assert_contains "$OUT" "Name:          alpha"

# --- workspace discovery --------------------------------------------------------
mkdir -p sub/dir && cd sub/dir
ok list
assert_contains "$OUT" "alpha"
cd "$T_DIR"
ok --workspace "$T_DIR/ws" list
assert_contains "$OUT" "beta"
SILT_WORKSPACE="$T_DIR/ws" ok list
assert_contains "$OUT" "beta"
ok list --workspace="$T_DIR/ws/.silt"
assert_contains "$OUT" "beta"
cd "$T_DIR/ws"

# --- log ----------------------------------------------------------------------
ok log alpha
assert_eq "$(echo "$OUT" | wc -l)" "1" "seed-only log"
assert_contains "$OUT" "Seed"
ok log alpha --yaml
assert_contains "$OUT" "kind: MetadataBlock"
assert_contains "$OUT" "datasetId: $id"
ok log alpha --json
assert_eq "$(echo "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d[0]["hash"]==sys.argv[1], d[0]["event"]["kind"], d[0]["sequenceNumber"])' "$head")" "True Seed 0" "log --json"
fails_like 1 "dataset 'nope' not found" log nope

# --- dataset RIDs: derived from the id, stable across renames -----------------------
RID=$(info alpha "d['rid']")
DID=$(info alpha "d['id']")
# the UUID is SHA3-256("silt.dev/dataset-rid" || did bytes)[0:16], version 8, RFC 9562 variant
WANT=$(python3 - "$DID" <<'PY'
import hashlib, sys
did = bytes.fromhex(sys.argv[1][len("did:odf:f"):])
h = bytearray(hashlib.sha3_256(b"silt.dev/dataset-rid" + did).digest()[:16])
h[6] = (h[6] & 0x0F) | 0x80
h[8] = (h[8] & 0x3F) | 0x80
x = h.hex()
print(f"ri.silt.main.dataset.{x[0:8]}-{x[8:12]}-{x[12:16]}-{x[16:20]}-{x[20:32]}")
PY
)
assert_eq "$RID" "$WANT" "rid derived from the did"
ok info "$RID"
assert_contains "$OUT" "Name:          alpha"
assert_contains "$OUT" "RID:           $RID"
fails_like 1 "dataset 'ri.silt.main.dataset.00000000-0000-8000-8000-000000000000' not found" info ri.silt.main.dataset.00000000-0000-8000-8000-000000000000

# --- rename / delete ------------------------------------------------------------
ok rename alpha gamma
assert_eq "$(info gamma "d['rid']")" "$RID" "rid after rename"
fails_like 1 "dataset 'alpha' not found" info alpha
ok info gamma
fails_like 1 "dataset 'beta' already exists" rename gamma beta
ok delete beta
fails_like 1 "dataset 'beta' not found" delete beta
ok list --json
assert_eq "$(echo "$OUT" | python3 -c 'import json,sys; print([x["name"] for x in json.load(sys.stdin)])')" "['gamma']" "after delete"
ok verify --all
assert_contains "$OUT" "gamma: ok (1 blocks)"

done_tests
