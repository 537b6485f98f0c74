#!/usr/bin/env bash
# Per-command help (silt CMD --help, -h, silt help CMD), the nearest-command
# suggestion, --version, and the man page and completions generated from the
# same help table.
source "$(dirname "$0")/lib.sh"

CMDS="init new add list info rename delete ingest sql tail schema read-table pull sources flows txn upload files cat
branch retention gc log append verify block serve token push repo help reset lineage"
for c in $CMDS; do
    ok "$c" --help
    H=$OUT
    assert_contains "$H" "silt $c — "
    assert_contains "$H" "Usage:"
    assert_contains "$H" "Environment:"
    assert_contains "$H" "SILT_WORKSPACE"
    assert_contains "$H" "Example:"
    assert_contains "$H" "Exit codes: 0 ok, 1 failed, 2 usage error."
    ok help "$c"
    assert_eq "$OUT" "$H" "silt help $c = silt $c --help"
    ok "$c" -h
    assert_eq "$OUT" "$H" "silt $c -h"
done
# the options of a command are in its help
ok sql --help
assert_contains "$OUT" "--unsafe-file-access"
assert_contains "$OUT" "--as-of NAME=REF"
ok tail --help
assert_contains "$OUT" "-n N"
# --help wins wherever it is before "--", even with other arguments
ok txn start x --type snapshot --help
assert_contains "$OUT" "silt txn — transactions of a files dataset"
# after "--" it is an argument, not a request for help
ok init
ok new alpha
fails_like 1 "invalid dataset reference '--help'" info -- --help
# "--" ends the options of every command: before operands that cannot
# start with '-' it changes nothing; file operands after it may start with '-'
ok new --files fz
printf 'x\n' >"$T_DIR/x.txt"
printf 'y\n' >"$T_DIR/-y.txt"
(cd "$T_DIR" && "$SILT" upload fz -- x.txt -y.txt >/dev/null) || fail "upload fz -- x.txt -y.txt"
pass
ok files -- fz
assert_eq "$(printf '%s\n' "$OUT" | cut -f1 | tr '\n' ' ')" "-y.txt x.txt " "files -- NAME"
ok cat fz -- -y.txt
assert_eq "$OUT" "y" "cat NAME -- -PATH"
for args in "log -- fz -n 1" "verify -- fz" "schema -- fz" "branch list -- fz" "txn list -- fz" \
            "retention show -- fz" "gc --dry-run -- fz" "token list --" "files -- fz"; do
    # shellcheck disable=SC2086
    ok $args
done
ok log -- fz -n 1
A=$OUT
ok log fz -n 1
assert_eq "$A" "$OUT" "log -- NAME -n 1 = log NAME -n 1"
ok verify -- fz
assert_eq "$OUT" "fz: ok (3 blocks)" "verify -- NAME"
ok new --push-source csv ev
printf 'a\n1\n' >"$T_DIR/-e.csv"
(cd "$T_DIR" && "$SILT" ingest ev -- -e.csv >"$T_DIR/.ing" 2>&1) || fail "ingest ev -- -e.csv: $(cat "$T_DIR/.ing")"
assert_contains "$(cat "$T_DIR/.ing")" "ev: 1 new record (offsets 0..0)"
# every command of the usage text has a help entry (and nothing else is listed)
ok help
USAGE=$OUT
assert_contains "$USAGE" "'silt help COMMAND' or 'silt COMMAND --help'"
assert_eq "$(printf '%s' "$USAGE" | head -1)" "usage: silt [--workspace DIR] [--json] COMMAND [ARGS]" "usage line"
for c in $(printf '%s\n' "$USAGE" | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p' | sort -u); do
    ok help "$c"
done

# misspelt commands suggest the nearest one; far-off names do not
fails_like 2 "unknown command 'lsit' (did you mean 'list'?)" lsit
fails_like 2 "unknown command 'sqll' (did you mean 'sql'?)" sqll
fails_like 2 "unknown command 'veriyf' (did you mean 'verify'?)" veriyf
fails_like 2 "unknown command 'xyzzyq' (see 'silt help')" xyzzyq
fails_like 2 "help: unknown command 'uplod' (did you mean 'upload'?)" help uplod
fails_like 2 "help --completion: unknown shell 'fish' (bash or zsh)" help --completion fish
fails_like 2 "help takes one COMMAND, --man or --completion SHELL" help a b

ok --version
assert_eq "$OUT" "silt 0.1.0" "--version"
ok version
assert_eq "$OUT" "silt 0.1.0" "version"

# man page: renders, one section per command
ok help --man
printf '%s\n' "$OUT" >silt.1
assert_eq "$(grep -c '^\.SS ' silt.1)" "$(printf '%s\n' $CMDS | wc -l)" "one .SS per command"
if command -v man >/dev/null; then
    MAN=$(MANWIDTH=100 man -l silt.1 2>&1)
    assert_contains "$MAN" "silt - versioned, verifiable dataset store"
    assert_contains "$MAN" "--unsafe-file-access"
fi

# bash completion: completes commands and a command's flags
ok help --completion bash
printf '%s\n' "$OUT" >silt.bash
bash -n silt.bash || fail "bash completion does not parse"
pass
got=$(bash -c 'source ./silt.bash; COMP_WORDS=(silt sq); COMP_CWORD=1; _silt; printf "%s " "${COMPREPLY[@]}"')
assert_eq "$got" "sql " "bash: silt sq<TAB>"
got=$(bash -c 'source ./silt.bash; COMP_WORDS=(silt sql --uns); COMP_CWORD=2; _silt; printf "%s " "${COMPREPLY[@]}"')
assert_eq "$got" "--unsafe-file-access " "bash: silt sql --uns<TAB>"
ok help --completion zsh
assert_contains "$OUT" "#compdef silt"
assert_contains "$OUT" "'sql:run one SQL query over the datasets'"
if command -v zsh >/dev/null; then
    printf '%s\n' "$OUT" >_silt
    zsh -n _silt || fail "zsh completion does not parse"
    pass
fi

done_tests
