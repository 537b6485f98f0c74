#!/usr/bin/env bash
# test_tokens.sh — `silt token create|list|revoke` (API tokens of silt serve):
#  - create prints the secret once ("silt_" + 43 base64url characters), a
#    note on stderr; secrets are distinct; --json shape exact;
#  - .silt/tokens.json is mode 0600 and holds the SHA-256 of each secret;
#    no secret appears anywhere under .silt/ nor in `token list` (table or
#    --json), which never shows a hash either;
#  - list table and --json exact (patterns, expiry from --expires-days with
#    the clock of SILT_FAKE_SYSTEM_TIME), revoke;
#  - every usage error exits 2, every failure (bad name, duplicate name,
#    unknown token, too many days) exits 1 with one line, and none of them
#    changes .silt/;
#  - a tokens.json readable or writable by group/others is refused by every
#    command with a clear message.
source "$(dirname "$0")/lib.sh"

export SILT_FAKE_SYSTEM_TIME=2030-01-01T00:00:00Z
ok init
HEADER='NAME  SCOPE  DATASETS  CREATED  EXPIRES  LAST USED'
ok token list
assert_eq "$OUT" "$HEADER" "list without tokens"
ok --json token list
assert_eq "$OUT" "[]" "json list without tokens"
assert_eq "$(ls -A .silt)" "datasets" "listing creates nothing"

# ---- create ---------------------------------------------------------------
ok token create ci
S_CI=$OUT
assert_eq "$ERR" "silt: token ci created: store its secret now, it is not shown again" "create note"
[[ "$S_CI" =~ ^silt_[A-Za-z0-9_-]{43}$ ]] || fail "secret format: '$S_CI'"
pass
ok token create sales-writer --write --dataset 'sales.*' --dataset raw --expires-days 30
S_W=$OUT
ok --json token create ops --admin
S_A=$(printf '%s' "$OUT" | jget 'd["secret"]')
[[ "$S_A" =~ ^silt_[A-Za-z0-9_-]{43}$ ]] || fail "json secret format: '$S_A'"
pass
assert_eq "$(printf '%s' "$OUT" | python3 -c 'import json,sys
d=json.load(sys.stdin); d["secret"]="S"; print(json.dumps(d))')" \
    '{"name": "ops", "secret": "S", "scope": "admin", "datasets": [], "created": "2030-01-01T00:00:00Z", "expires": null}' \
    "create --json"
ok --json token create eu --scope read --dataset 'eu-*' --expires-days 1
S_EU=$(printf '%s' "$OUT" | jget 'd["secret"]')
assert_eq "$(printf '%s' "$OUT" | jget '[list(d.keys()), d["scope"], d["datasets"], d["expires"]]')" \
    '[["name","secret","scope","datasets","created","expires"],"read",["eu-*"],"2030-01-02T00:00:00Z"]' \
    "create --json with patterns and expiry"
assert_eq "$(printf '%s\n' "$S_CI" "$S_W" "$S_A" "$S_EU" | sort -u | wc -l)" 4 "secrets are distinct"

# ---- the file --------------------------------------------------------------
assert_eq "$(stat -c %a .silt/tokens.json)" 600 "tokens.json mode"
assert_eq "$(ls -A .silt | sort | tr '\n' ' ')" "datasets tokens.json tokens.lock " "no temp file left"
for s in "$S_CI" "$S_W" "$S_A" "$S_EU"; do
    if grep -rqF -- "${s#silt_}" .silt; then fail "a secret is stored under .silt/"; else pass; fi
    h=$(printf '%s' "$s" | sha256sum | cut -d' ' -f1)
    assert_contains "$(cat .silt/tokens.json)" "\"sha256\": \"$h\"" "SHA-256 of the secret stored"
done

# ---- list ------------------------------------------------------------------
ok token list
LIST=$OUT
assert_eq "$LIST" "NAME          SCOPE  DATASETS     CREATED                   EXPIRES                   LAST USED
ci            read   all          2030-01-01T00:00:00.000Z  never                     never
eu            read   eu-*         2030-01-01T00:00:00.000Z  2030-01-02T00:00:00.000Z  never
ops           admin  all          2030-01-01T00:00:00.000Z  never                     never
sales-writer  write  sales.*,raw  2030-01-01T00:00:00.000Z  2030-01-31T00:00:00.000Z  never" "list table"
ok --json token list
JLIST=$OUT
assert_eq "$(printf '%s' "$JLIST" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)))')" \
'[{"name": "ci", "scope": "read", "datasets": [], "created": "2030-01-01T00:00:00Z", "expires": null, "lastUsed": null}, '\
'{"name": "eu", "scope": "read", "datasets": ["eu-*"], "created": "2030-01-01T00:00:00Z", "expires": "2030-01-02T00:00:00Z", "lastUsed": null}, '\
'{"name": "ops", "scope": "admin", "datasets": [], "created": "2030-01-01T00:00:00Z", "expires": null, "lastUsed": null}, '\
'{"name": "sales-writer", "scope": "write", "datasets": ["sales.*", "raw"], "created": "2030-01-01T00:00:00Z", "expires": "2030-01-31T00:00:00Z", "lastUsed": null}]' \
    "list --json"
for s in "$S_CI" "$S_W" "$S_A" "$S_EU"; do
    h=$(printf '%s' "$s" | sha256sum | cut -d' ' -f1)
    case "$LIST$JLIST" in *"${s#silt_}"* | *"$h"*) fail "list shows a secret or its hash" ;; *) pass ;; esac
done

# ---- usage errors: exit 2, nothing changes ----------------------------------
H="(see 'silt help')"
unchanged_after 2 "silt: token needs a subcommand: create | list | revoke $H" token
unchanged_after 2 "silt: unknown token subcommand 'show' $H" token show
unchanged_after 2 "silt: token create needs a NAME $H" token create
unchanged_after 2 "silt: token create needs a NAME $H" token create --write
unchanged_after 2 "silt: token create: unknown option '--bogus' $H" token create x --bogus
unchanged_after 2 "silt: token create: unexpected argument 'y' $H" token create x y
unchanged_after 2 "silt: token create: give one scope (--read, --write or --admin) $H" token create x --read --write
unchanged_after 2 "silt: token create: give one scope (--read, --write or --admin) $H" token create x --admin --scope read
unchanged_after 2 "silt: token create: unknown scope 'root' (read, write or admin) $H" token create x --scope root
unchanged_after 2 "silt: token create: --dataset needs a value $H" token create x --dataset
unchanged_after 2 "silt: token create: --expires-days needs a value $H" token create x --expires-days
for d in 0 -3 abc 1.5 '' 1e3 +5 07 9999999999; do
    unchanged_after 2 "silt: token create: --expires-days needs a positive whole number of days, not '$d' $H" \
        token create x --expires-days "$d"
done
unchanged_after 2 "silt: token list: unexpected argument 'x' $H" token list x
unchanged_after 2 "silt: token revoke needs a NAME $H" token revoke
unchanged_after 2 "silt: token revoke: unexpected argument 'b' $H" token revoke a b
unchanged_after 2 "silt: token revoke: unknown option '--all' $H" token revoke --all

# ---- failures: exit 1, one line, nothing changes ------------------------------
unchanged_after 1 "silt: token 'ci' already exists" token create ci --admin
unchanged_after 1 "silt: invalid token name 'a b': use 1..64 characters of [A-Za-z0-9._-]" token create 'a b'
unchanged_after 1 "silt: invalid token name 'a/b': use 1..64 characters of [A-Za-z0-9._-]" token create a/b
unchanged_after 1 "silt: invalid token name '': use 1..64 characters of [A-Za-z0-9._-]" token create $'a\nb'
unchanged_after 1 "silt: token 'x': dataset pattern '' must be 1..255 printable ASCII characters" \
    token create x --dataset $'a\nb'
LONG=$(printf 'x%.0s' $(seq 65))
unchanged_after 1 "silt: invalid token name '$LONG': use 1..64 characters of [A-Za-z0-9._-]" token create "$LONG"
unchanged_after 1 "silt: token 'x': dataset pattern '' must be 1..255 printable ASCII characters" \
    token create x --dataset ''
unchanged_after 1 "silt: token 'x': expires-days must be at most 36500" token create x --expires-days 36501
unchanged_after 1 "silt: no token named 'nope'" token revoke nope
unchanged_after 1 "silt: no token named 'a b'" token revoke 'a b'

# ---- revoke ------------------------------------------------------------------
ok token revoke ci
assert_eq "$OUT" "revoked token ci" "revoke output"
ok --json token revoke eu
assert_eq "$(printf '%s' "$OUT" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)))')" \
    '{"name": "eu", "revoked": true}' "revoke --json"
ok token list
assert_eq "$(printf '%s\n' "$OUT" | cut -d' ' -f1 | tr '\n' ' ')" "NAME ops sales-writer " "list after revoke"
fails 1 "silt: no token named 'ci'" token revoke ci
assert_eq "$(stat -c %a .silt/tokens.json)" 600 "mode after rewrites"
ok token create ci # the name is free again, with a new secret
[ "$OUT" != "$S_CI" ] || fail "a re-created token got the old secret"
pass

# ---- a tokens.json readable by others is refused --------------------------------
P="$T_DIR/.silt/tokens.json"
for m in 644 640 604 660 606; do
    chmod "$m" .silt/tokens.json
    MSG="silt: $P: mode 0$m is too open: a tokens file must not be accessible by group or others (chmod 600)"
    unchanged_after 1 "$MSG" token list
    unchanged_after 1 "$MSG" token create y
    unchanged_after 1 "$MSG" token revoke ops
done
chmod 600 .silt/tokens.json
ok token list
assert_eq "$(printf '%s\n' "$OUT" | wc -l)" 4 "usable again after chmod 600"

# ---- a hand-edited file with a mistake is refused, naming it -------------------------
cp .silt/tokens.json "$T_DIR/good.json"
sed -i 's/"datasets"/"dataset"/' .silt/tokens.json
unchanged_after 1 "silt: $P: token 1: unknown key 'dataset'" token list
cp "$T_DIR/good.json" .silt/tokens.json
chmod 600 .silt/tokens.json
ok token list
done_tests
