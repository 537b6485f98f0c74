#!/usr/bin/env bash
# test_ui.sh — the web UI at /ui/ in a real browser (docs/ui.md): a
# workspace with the example datasets (a polled ledger with appends and
# corrections, a push root, a derivative) and a files dataset, `silt serve`
# on a free port with SILT_ADMIN_TOKEN and a read token, then tests/ui/ui.mjs
# (playwright-core from the npm cache, Debian's /usr/bin/chromium). Every
# value the page is checked against is computed here from the CLI's output
# (silt list, info, tail, schema, log, sql, files), never written down.
# Screenshots of each page at 1280×800 and 390×844 go to $SILT_BUILD_DIR/ui-shots/.
source "$(dirname "$0")/../integration/lib.sh"

CACHE="${SILT_NPM_CACHE:-$HOME/.cache/silt/npm}"
[ -d "$CACHE/node_modules/playwright-core" ] || fail "playwright-core missing in $CACHE (run scripts/bootstrap.sh)"
[ -f "$CACHE/node_modules/axe-core/axe.min.js" ] || fail "axe-core missing in $CACHE (run scripts/bootstrap.sh)"
[ -x /usr/bin/chromium ] || fail "/usr/bin/chromium missing (run scripts/bootstrap.sh)"

EX="$SILT_SOURCE_DIR/examples"
ok init
ok add "$EX/city-populations.yaml" "$EX/sensor-readings.yaml" "$EX/hottest-days.yaml"
mkdir -p examples/data
cp "$EX"/data/city-populations-2020.csv "$EX"/data/city-populations-2021.csv examples/data/
ok pull city-populations
cp "$EX"/data/city-populations-2022.csv examples/data/
ok pull city-populations
ok new --files raw
mkdir -p in/dir && printf 'a,b\n1,2\n' >in/a.csv && printf 'x\n' >in/dir/b.txt
ok upload raw in/a.csv in/dir/b.txt --base in
READER=$("$SILT" token create viewer 2>/dev/null) || fail "token create viewer"

# The expectations, from the CLI (python3 runs silt and writes JSON).
python3 - "$SILT" "$T_DIR/expect.json" "$READER" <<'PY' || fail "computing the expectations from the CLI failed"
import csv, io, json, subprocess, sys
silt, out, reader = sys.argv[1], sys.argv[2], sys.argv[3]
def run(*a):
    p = subprocess.run([silt, *a], capture_output=True, text=True)
    return p.stdout, p.stderr, p.returncode
def js(*a):
    o, e, rc = run("--json", *a)
    assert rc == 0, (a, e)
    return json.loads(o)
def tail(name, *extra):
    """newest first: cells from --format csv, the op column from the table output"""
    o, e, rc = run("tail", name, "-n", "100", "--format", "csv", *extra)
    assert rc == 0, e
    rows = list(csv.reader(io.StringIO(o)))[1:]
    o, e, rc = run("tail", name, "-n", "100", *extra)
    ops = [l.split("|")[1].strip() for l in o.splitlines()[2:]]
    assert len(ops) == len(rows)
    for r, op in zip(rows, ops):
        OPMAP[r[1]] = op
        r[1] = op
    return rows[::-1], ops[::-1]
OPMAP = {}  # op number -> its label, as silt tail prints them

ds = "city-populations"
listing = js("list")
names = sorted(d["name"] for d in listing)
info = js("info", ds)
log = js("log", ds)
adds = [b for b in log if b["event"].get("newData")]
rows, ops = tail(ds)
as_of_block = adds[1]["hash"]
as_rows, _ = tail(ds, "--as-of", as_of_block)
cur = list(csv.reader(io.StringIO(run("sql", f'SELECT * FROM "{ds}:current" ORDER BY "offset" DESC', "--format", "csv")[0])))[1:]
for r in cur:
    r[1] = OPMAP[r[1]]
schema = run("schema", ds)[0].splitlines()
# Foundry type names of ODF types: docs/server.md, "readTable: Arrow types"
FOUNDRY = {"Int8": "BYTE", "Int16": "SHORT", "Int32": "INTEGER", "Int64": "LONG", "Float32": "FLOAT",
           "Float64": "DOUBLE", "Bool": "BOOLEAN", "String": "STRING", "Binary": "BINARY", "Date": "DATE",
           "Timestamp": "TIMESTAMP"}
foundry = [FOUNDRY.get(l.split(": ", 1)[1].split("(")[0], "–") for l in schema]
head = log[0]["event"]
iv = head["newData"]["offsetInterval"]
summary = (f"+{iv['end'] - iv['start'] + 1:,} records, offsets {iv['start']}..{iv['end']}, "
           f"watermark {head['newWatermark']}, source state {head['newSourceState']['value']}")
yaml = run("log", ds, "-n", "1", "--yaml")[0]
yaml = yaml.split("\n", 1)[1] if yaml.startswith("# block") else yaml
q = f'SELECT country, count(*) AS n, max(population) AS top FROM "{ds}" GROUP BY country ORDER BY country'
qcsv = run("sql", q, "--format", "csv")[0]
qtypes = [r[1] for r in list(csv.reader(io.StringIO(run("sql", "DESCRIBE " + q, "--format", "csv")[0])))[1:]]
err = run("sql", f'SELECT nope FROM "{ds}"')[1].strip()
cq = f'SELECT event_time, sum(population) AS total FROM "{ds}" GROUP BY event_time ORDER BY event_time'
cn = len(list(csv.reader(io.StringIO(run("sql", cq, "--format", "csv")[0])))) - 1
setinfo = next(b["event"] for b in log if b["event"]["kind"] == "SetInfo")
poll = next(b["event"] for b in log if b["event"]["kind"] == "SetPollingSource")
raw = js("info", "raw")
o, e, rc = run("sql", "SELECT CAST(date_trunc('day', event_time) AS DATE) AS day, count(*) AS n FROM \"city-populations\" "
               "WHERE event_time IS NOT NULL GROUP BY 1 ORDER BY 1", "--format", "csv")
assert rc == 0, e
days = list(csv.reader(io.StringIO(o)))[1:]
days_caption = f"{len(days):,} days from {days[0][0]} to {days[-1][0]}, {sum(int(r[1]) for r in days):,} records"
json.dump({
    "reader": reader, "names": names, "ledger": ds,
    "info": {"id": info["id"], "rid": info["rid"], "head": info["head"], "watermark": info["watermark"]},
    "description": setinfo["description"], "source": f"{poll['fetch']['kind']} (polling)",
    "daysCaption": days_caption,
    "plotCaption": f"{len(adds)} data blocks, {sum(b['event']['newData']['offsetInterval']['end'] - b['event']['newData']['offsetInterval']['start'] + 1 for b in adds):,} records, by system time",
    "rows": rows, "ops": ops, "asOf": {"block": as_of_block, "rows": as_rows}, "current": cur,
    "schema": schema, "foundryTypes": foundry, "log": log, "headSummary": summary, "headYaml": yaml,
    "query": {"sql": q, "rows": list(csv.reader(io.StringIO(qcsv)))[1:], "types": qtypes, "csv": qcsv,
              "error": err.removeprefix("silt: "), "chart": {"sql": cq, "caption": f"total by event_time ({cn} points)"}},
    "files": {"name": "raw", "rid": raw["rid"]},
}, open(out, "w"))
PY

ADMIN="ui-admin-$RANDOM$RANDOM"
serve_start
python3 - "$T_DIR/expect.json" "$ADMIN" <<'PY'
import json, sys
p = sys.argv[1]; e = json.load(open(p)); e["admin"] = sys.argv[2]; json.dump(e, open(p, "w"))
PY
export UI_WS="$T_DIR" UI_EXPECT="$T_DIR/expect.json" UI_BASE="$BASE" UI_AXE="$CACHE/node_modules/axe-core/axe.min.js"
export UI_SHOTS="${SILT_BUILD_DIR:-$SILT_SOURCE_DIR/build}/ui-shots"
if node_run "$(dirname "$0")/ui.mjs"; then pass; else fail "browser checks failed (see the FAIL lines above)"; fi
serve_stop
done_tests
