-- push.lua — wrk script of bench_push.sh: POSTs one NDJSON body of BATCH
-- small records ({"id":N,"device":"d-N","value":N.5}) per request.
-- BATCH comes from the environment (default 1000).
local batch = tonumber(os.getenv("BATCH") or "1000")
local lines = {}
for i = 1, batch do
  lines[i] = string.format('{"id":%d,"device":"d-%d","value":%d.5}', i, i % 100, i)
end
wrk.method = "POST"
wrk.body = table.concat(lines, "\n") .. "\n"
wrk.headers["Content-Type"] = "application/x-ndjson"
