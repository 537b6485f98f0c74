#!/usr/bin/env bash
# test_vocab_rules.sh — SetVocab events that would break the dataset are
# refused by `silt append`: empty names, two system columns under one name,
# a name that is already a data column of the current schema, and renaming a
# system column once the dataset has a schema (its slices carry the old
# name). Every refusal is one line on stderr, exit 1, the dataset exactly as
# it was and still verifying; valid vocabularies still append and ingest.
source "$(dirname "$0")/lib.sh"

use_soft_failures

ok init

ds_dir() { echo "$T_DIR/.silt/datasets/$(info "$1" 'd["id"]' | sed 's/^did:odf://')"; }

# bad_vocab DATASET EXACT_STDERR YAML: `silt append` of the SetVocab in YAML
# fails with exactly this message and changes nothing
bad_vocab() {
    local ds=$1 msg=$2 before
    printf '%s\n' "$3" >"$T_DIR/vocab.yaml"
    before=$(tree_sum "$(ds_dir "$ds")")
    fails 1 "$msg" append "$ds" "$T_DIR/vocab.yaml"
    [ "$(printf '%s\n' "$ERR" | wc -l)" -eq 1 ] || fail "append to $ds: stderr is not one line: $ERR"
    pass
    assert_eq "$(tree_sum "$(ds_dir "$ds")")" "$before" "append to $ds left the dataset changed"
    ok verify "$ds"
}

V=$T_DIR/vocab.yaml

# ---- a dataset without a schema ----------------------------------------------
ok new plain
bad_vocab plain "silt: $V: event 1 (SetVocab): dataset 'plain': block 1 (SetVocab): offsetColumn is empty (omit it to use the default 'offset')" \
    'kind: SetVocab
offsetColumn: ""'
bad_vocab plain "silt: $V: event 1 (SetVocab): dataset 'plain': block 1 (SetVocab): systemTimeColumn is empty (omit it to use the default 'system_time')" \
    'kind: SetVocab
offsetColumn: off
systemTimeColumn: ""'
bad_vocab plain "silt: $V: event 1 (SetVocab): dataset 'plain': block 1 (SetVocab): eventTimeColumn 'event_time' names the same column as offsetColumn 'event_time' (system columns need distinct names)" \
    'kind: SetVocab
offsetColumn: event_time'
bad_vocab plain "silt: $V: event 1 (SetVocab): dataset 'plain': block 1 (SetVocab): systemTimeColumn 'When' names the same column as operationTypeColumn 'when' (system columns need distinct names)" \
    'kind: SetVocab
operationTypeColumn: when
systemTimeColumn: When'
# before any schema the names may change
printf 'kind: SetVocab\noffsetColumn: o1\n' >"$V"
ok append plain "$V"
printf 'kind: SetVocab\noffsetColumn: off\neventTimeColumn: ts\n' >"$V"
ok append plain "$V"
ok verify plain

# ---- a dataset with data -------------------------------------------------------
add_ds cities <<'EOF'
    - kind: SetVocab
      eventTimeColumn: date
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
        ddlSchema: ["date TIMESTAMP", "city STRING", "population BIGINT"]
      merge:
        kind: Append
EOF
printf 'date,city,population\n2020-01-01T00:00:00Z,A,1\n' >c1.csv
ok ingest cities c1.csv
bad_vocab cities "silt: $V: event 1 (SetVocab): dataset 'cities': block 5 (SetVocab): offsetColumn 'city' clashes with the data column 'city' of the current schema" \
    'kind: SetVocab
offsetColumn: city
eventTimeColumn: date'
bad_vocab cities "silt: $V: event 1 (SetVocab): dataset 'cities': block 5 (SetVocab): eventTimeColumn 'Population' clashes with the data column 'population' of the current schema" \
    'kind: SetVocab
eventTimeColumn: Population'
bad_vocab cities "silt: $V: event 1 (SetVocab): dataset 'cities': block 5 (SetVocab): eventTimeColumn cannot change from 'date' to 'event_time' once the dataset has a schema (its schema and data name the column 'date')" \
    'kind: SetVocab
offsetColumn: offset'
bad_vocab cities "silt: $V: event 1 (SetVocab): dataset 'cities': block 5 (SetVocab): operationTypeColumn cannot change from 'op' to 'operation' once the dataset has a schema (its schema and data name the column 'op')" \
    'kind: SetVocab
operationTypeColumn: operation
eventTimeColumn: date'
# the same names spelled out are accepted, and the dataset still works
printf 'kind: SetVocab\noffsetColumn: offset\noperationTypeColumn: op\nsystemTimeColumn: system_time\neventTimeColumn: date\n' >"$V"
ok append cities "$V"
printf 'date,city,population\n2020-01-02T00:00:00Z,B,2\n' >c2.csv
ok ingest cities c2.csv
expect_sql 'SELECT "offset", op, date, city, population FROM cities ORDER BY "offset"' "cities after the vocab" <<'EOF'
offset,op,date,city,population
0,0,2020-01-01T00:00:00Z,A,1
1,0,2020-01-02T00:00:00Z,B,2
EOF
ok tail cities
ok verify --all

finish
