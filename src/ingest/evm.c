/* evm.c — EVM logs ingress (evm.h): JSON-RPC over HTTP, the block scan, and
 * the Parquet file of one batch.
 *
 * Invariants: every log of a scanned block range is in the batch or
 * excluded by the filter (a batch ends only at a block boundary, so the
 * state "<block>@<hash>" means "everything up to this block is in"); the
 * node's answers are checked (hex quantities, 32-byte hashes, 20-byte
 * addresses, topic0 = the selector of the signature) before they are used;
 * the node URL appears in messages only through the redaction hook.
 */
#include "ingest/evm.h"

#include <curl/curl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/engine.h"
#include "ingest/evm_abi.h"
#include "ingest/evm_filter.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/fsutil.h"

#define RPC_MAX_BYTES (256u << 20) /* of one response */

typedef struct evm_ctx {
    const silt_evm_opts *o;
    char *shown_url; /* redacted */
    CURL *curl;
    long id;
    silt_evm_sig *sig;
    silt_evm_filter *filter;
    silt_evm_pushdown pd;
    silt_arena *a;
} evm_ctx;

static uint64_t env_u64(const char *name, uint64_t def, uint64_t min)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return def;
    char *end = NULL;
    unsigned long long x = strtoull(v, &end, 10);
    if (*end || x < min)
        return def;
    return (uint64_t)x;
}

/* ---- JSON-RPC ------------------------------------------------------------------ */

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
    silt_buf *b = ud;
    if (b->len + sz * n > RPC_MAX_BYTES || silt_buf_append(b, p, sz * n) != 0)
        return 0;
    return sz * n;
}

/* Is this node error a "response too large / range too wide" refusal? */
static bool too_large(const char *msg)
{
    static const char *const pats[] = {"too large", "more than", "limit", "exceed", "too many", "too big",
                                       "range is too", "response size"};
    for (size_t i = 0; i < sizeof pats / sizeof pats[0]; i++)
        if (strcasestr(msg, pats[i]))
            return true;
    return false;
}

/* Calls `method` with `params` (reference stolen); *result is a new
 * reference. A refusal the caller may retry smaller is SILT_ERANGE_RPC. */
#define SILT_ERANGE_RPC 1
static int rpc(evm_ctx *c, const char *method, json_t *params, json_t **result)
{
    *result = NULL;
    json_t *req = json_pack("{s:s,s:I,s:s,s:o}", "jsonrpc", "2.0", "id", (json_int_t)++c->id, "method", method,
                            "params", params);
    char *body = req ? json_dumps(req, JSON_COMPACT) : NULL;
    json_decref(req);
    if (!body)
        return silt_err(SILT_ENOMEM, "out of memory");
    silt_buf resp = SILT_BUF_INIT;
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(c->curl, CURLOPT_URL, c->o->node_url);
    curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, &resp);
    CURLcode cc = curl_easy_perform(c->curl);
    long status = 0;
    curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(h);
    free(body);
    int rc = 0;
    if (cc != CURLE_OK)
        rc = silt_err(SILT_EIO, "%s: %s (node %s)", method, curl_easy_strerror(cc), c->shown_url);
    else if (status == 413)
        rc = SILT_ERANGE_RPC;
    else if (status != 200)
        rc = silt_err(SILT_EIO, "%s: HTTP %ld (node %s)", method, status, c->shown_url);
    json_t *doc = rc ? NULL : json_loadb(resp.data ? resp.data : "", resp.len, 0, NULL);
    silt_buf_free(&resp);
    if (rc)
        return rc;
    json_t *err = json_object_get(doc, "error"), *res = json_object_get(doc, "result");
    if (!doc) {
        rc = silt_err(SILT_EIO, "%s: the node's answer is not JSON (node %s)", method, c->shown_url);
    } else if (err) {
        const char *m = json_string_value(json_object_get(err, "message"));
        if (m && strcmp(method, "eth_getLogs") == 0 && too_large(m))
            rc = SILT_ERANGE_RPC;
        else
            rc = silt_err(SILT_EIO, "%s: node error %lld: %.300s", method,
                          (long long)json_integer_value(json_object_get(err, "code")), m ? m : "(no message)");
    } else if (!res) {
        rc = silt_err(SILT_EIO, "%s: the node's answer has no result (node %s)", method, c->shown_url);
    } else {
        *result = json_incref(res);
    }
    json_decref(doc);
    return rc;
}

static int quantity(const json_t *v, uint64_t *out)
{
    const char *s = json_string_value(v);
    if (!s || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') || !s[2] || strlen(s) > 18)
        return -1;
    char *end = NULL;
    unsigned long long x = strtoull(s + 2, &end, 16);
    if (*end)
        return -1;
    *out = (uint64_t)x;
    return 0;
}

static int rpc_quantity(evm_ctx *c, const char *method, json_t *params, uint64_t *out)
{
    json_t *r = NULL;
    int rc = rpc(c, method, params, &r);
    if (rc == SILT_ERANGE_RPC)
        rc = silt_err(SILT_EIO, "%s: HTTP 413 (node %s)", method, c->shown_url);
    if (!rc && quantity(r, out) != 0)
        rc = silt_err(SILT_EIO, "%s: the node answered no hex quantity (node %s)", method, c->shown_url);
    json_decref(r);
    return rc;
}

/* Hash of block `n` ("0x…" 32 bytes) into out. */
static int block_hash(evm_ctx *c, uint64_t n, uint8_t out[32])
{
    char q[32];
    snprintf(q, sizeof q, "0x%llx", (unsigned long long)n);
    json_t *r = NULL;
    int rc = rpc(c, "eth_getBlockByNumber", json_pack("[s,b]", q, 0), &r);
    if (rc == SILT_ERANGE_RPC)
        rc = silt_err(SILT_EIO, "eth_getBlockByNumber: HTTP 413 (node %s)", c->shown_url);
    if (!rc && silt_evm_hex_fixed(json_string_value(json_object_get(r, "hash")), out, 32) != 0)
        rc = silt_err(SILT_EIO, "eth_getBlockByNumber %llu: the node knows no such block (node %s)",
                      (unsigned long long)n, c->shown_url);
    json_decref(r);
    return rc;
}

/* ---- setup ---------------------------------------------------------------------- */

static int parse_source(evm_ctx *c)
{
    const silt_evm_opts *o = c->o;
    if (!o->node_url || !*o->node_url)
        return silt_err(SILT_EINVAL, "nodeUrl is required (silt has no default node per chainId)");
    if (strncmp(o->node_url, "http://", 7) != 0 && strncmp(o->node_url, "https://", 8) != 0)
        return silt_err(SILT_EINVAL, "nodeUrl must be an http:// or https:// URL");
    int rc = silt_evm_filter_parse(&c->filter, o->filter);
    if (!rc && o->signature && *o->signature)
        rc = silt_evm_sig_parse(&c->sig, c->a, o->signature);
    if (!rc)
        rc = silt_evm_filter_pushdown(c->filter, &c->pd);
    if (!rc && c->sig && !c->sig->anonymous)
        rc = silt_evm_set_restrict(&c->pd.topics[0], c->sig->selector);
    return rc;
}

static void ctx_free(evm_ctx *c)
{
    if (c->curl)
        curl_easy_cleanup(c->curl);
    silt_evm_filter_free(c->filter);
    silt_evm_pushdown_free(&c->pd);
    silt_arena_free(c->a);
    free(c->shown_url);
}

static int ctx_init(evm_ctx *c, const silt_evm_opts *o)
{
    memset(c, 0, sizeof *c);
    c->o = o;
    c->pd.address.any = true;
    for (int i = 0; i < 4; i++)
        c->pd.topics[i].any = true;
    if (!(c->a = silt_arena_new()))
        return silt_err(SILT_ENOMEM, "out of memory");
    return parse_source(c);
}

int silt_evm_check(const silt_evm_opts *o)
{
    evm_ctx c;
    int rc = ctx_init(&c, o);
    ctx_free(&c);
    return rc;
}

static int connect_node(evm_ctx *c)
{
    const silt_evm_opts *o = c->o;
    c->shown_url = o->redact ? o->redact(o->redact_ctx, o->node_url) : strdup(o->node_url);
    if (!c->shown_url || !(c->curl = curl_easy_init()))
        return silt_err(SILT_ENOMEM, "out of memory");
    long timeout = (long)env_u64("SILT_HTTP_TIMEOUT", SILT_HTTP_TIMEOUT_DEFAULT, 1);
    curl_easy_setopt(c->curl, CURLOPT_CONNECTTIMEOUT, (long)SILT_HTTP_CONNECT_TIMEOUT);
    curl_easy_setopt(c->curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(c->curl, CURLOPT_LOW_SPEED_TIME, timeout);
    curl_easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c->curl, CURLOPT_PROTOCOLS_STR, "http,https");
    uint64_t chain = 0;
    int rc = rpc_quantity(c, "eth_chainId", json_array(), &chain);
    if (!rc && o->has_chain_id && chain != o->chain_id)
        rc = silt_err(SILT_EINVAL, "the node at %s serves chain %llu, the source expects chainId %llu",
                      c->shown_url, (unsigned long long)chain, (unsigned long long)o->chain_id);
    return rc;
}

/* Block after the previous state; checks the state's block hash is still
 * the node's (else the chain was reorganised under the dataset). */
static int resume_from(evm_ctx *c, uint64_t *from)
{
    *from = 0;
    const char *s = c->o->prev_state;
    if (!s)
        return 0;
    const char *at = strchr(s, '@');
    char *end = NULL;
    unsigned long long n = strtoull(s, &end, 10);
    uint8_t want[32], got[32];
    if (!at || end != at || s == at || silt_evm_hex_fixed(at + 1, want, 32) != 0)
        return silt_err(SILT_EINVAL, "source state '%s' is not '<block>@<block hash>'", s);
    int rc = block_hash(c, n, got);
    if (!rc && memcmp(want, got, 32) != 0)
        return silt_err(SILT_ECONFLICT,
                        "block %llu is no longer the one the dataset indexed (the chain was reorganised; "
                        "raise SILT_EVM_CONFIRMATIONS)",
                        n);
    *from = n + 1;
    return rc;
}

/* ---- one chunk of logs --------------------------------------------------------- */

static json_t *set_json(const silt_evm_set *s, size_t width)
{
    if (s->any)
        return json_null();
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < s->n; i++) {
        silt_buf b = SILT_BUF_INIT;
        if (silt_buf_puts(&b, "0x") || silt_evm_hex_append(&b, s->v[i], width) ||
            json_array_append_new(arr, json_string(b.data))) {
            silt_buf_free(&b);
            json_decref(arr);
            return NULL;
        }
        silt_buf_free(&b);
    }
    return arr;
}

static json_t *logs_params(const evm_ctx *c, uint64_t from, uint64_t to)
{
    char f[32], t[32];
    snprintf(f, sizeof f, "0x%llx", (unsigned long long)from);
    snprintf(t, sizeof t, "0x%llx", (unsigned long long)to);
    json_t *q = json_pack("{s:s,s:s}", "fromBlock", f, "toBlock", t);
    if (!q)
        return NULL;
    if (!c->pd.address.any && json_object_set_new(q, "address", set_json(&c->pd.address, 20)))
        goto fail;
    int last = -1;
    for (int i = 0; i < 4; i++)
        if (!c->pd.topics[i].any)
            last = i;
    if (last >= 0) {
        json_t *tp = json_array();
        for (int i = 0; tp && i <= last; i++)
            if (json_array_append_new(tp, set_json(&c->pd.topics[i], 32)))
                goto fail;
        if (json_object_set_new(q, "topics", tp))
            goto fail;
    }
    return json_pack("[o]", q);
fail:
    json_decref(q);
    return NULL;
}

/* One fetched log, checked. */
typedef struct evm_log {
    uint64_t block, tx_index, log_index, ts;
    bool has_ts;
    uint8_t block_hash[32], tx_hash[32], address[20];
    uint8_t topics[4][32];
    size_t ntopics;
    uint8_t *data;
    size_t ndata;
} evm_log;

static int log_parse(const evm_ctx *c, json_t *j, evm_log *l)
{
    memset(l, 0, sizeof *l);
    json_t *topics = json_object_get(j, "topics");
    bool ok = quantity(json_object_get(j, "blockNumber"), &l->block) == 0 &&
              quantity(json_object_get(j, "transactionIndex"), &l->tx_index) == 0 &&
              quantity(json_object_get(j, "logIndex"), &l->log_index) == 0 &&
              silt_evm_hex_fixed(json_string_value(json_object_get(j, "blockHash")), l->block_hash, 32) == 0 &&
              silt_evm_hex_fixed(json_string_value(json_object_get(j, "transactionHash")), l->tx_hash, 32) == 0 &&
              silt_evm_hex_fixed(json_string_value(json_object_get(j, "address")), l->address, 20) == 0 &&
              json_is_array(topics) && json_array_size(topics) <= 4;
    json_t *ts = json_object_get(j, "blockTimestamp");
    if (ok && ts && !json_is_null(ts)) {
        ok = quantity(ts, &l->ts) == 0 && l->ts < 253402300800ull; /* before year 10000 */
        l->has_ts = true;
    }
    for (size_t i = 0; ok && i < json_array_size(topics); i++)
        ok = silt_evm_hex_fixed(json_string_value(json_array_get(topics, i)), l->topics[l->ntopics++], 32) == 0;
    if (ok && silt_evm_hex_alloc(json_string_value(json_object_get(j, "data")), &l->data, &l->ndata) != 0) {
        silt_err_clear();
        ok = false;
    }
    if (!ok)
        return silt_err(SILT_EIO, "eth_getLogs: the node answered a malformed log (node %s)", c->shown_url);
    return 0;
}

static int put_hex_field(silt_buf *b, const char *name, const uint8_t *p, size_t n)
{
    return silt_buf_printf(b, ",\"%s\":\"", name) || silt_evm_hex_append(b, p, n) || silt_buf_putc(b, '"')
               ? SILT_ENOMEM
               : 0;
}

/* Appends the NDJSON line of `l` (wire format: binary as hex). */
static int log_line(const evm_ctx *c, const evm_log *l, silt_buf *b)
{
    int rc = silt_buf_printf(b, "{\"block_number\":%llu", (unsigned long long)l->block);
    if (!rc)
        rc = put_hex_field(b, "block_hash", l->block_hash, 32);
    if (!rc)
        rc = l->has_ts ? silt_buf_printf(b, ",\"block_timestamp\":%llu", (unsigned long long)l->ts)
                       : silt_buf_puts(b, ",\"block_timestamp\":null");
    if (!rc)
        rc = silt_buf_printf(b, ",\"transaction_index\":%llu", (unsigned long long)l->tx_index);
    if (!rc)
        rc = put_hex_field(b, "transaction_hash", l->tx_hash, 32);
    if (!rc)
        rc = silt_buf_printf(b, ",\"log_index\":%llu", (unsigned long long)l->log_index);
    if (!rc)
        rc = put_hex_field(b, "address", l->address, 20);
    for (size_t i = 0; !rc && i < 4; i++) {
        char name[8];
        snprintf(name, sizeof name, "topic%zu", i);
        rc = i < l->ntopics ? put_hex_field(b, name, l->topics[i], 32) : silt_buf_printf(b, ",\"%s\":null", name);
    }
    if (!rc)
        rc = put_hex_field(b, "data", l->data, l->ndata);
    if (rc)
        return silt_err(SILT_ENOMEM, "out of memory");
    if (c->sig && c->sig->nparams) {
        size_t mark = b->len;
        if (silt_buf_puts(b, ",\"event\":"))
            return silt_err(SILT_ENOMEM, "out of memory");
        rc = silt_evm_decode(b, c->sig, (const uint8_t(*)[32])l->topics, l->ntopics, l->data, l->ndata);
        if (rc) {
            b->len = mark;
            silt_buf err = SILT_BUF_INIT;
            silt_evm_hex_append(&err, l->tx_hash, 32);
            rc = silt_err_context(rc, "log %llu of tx 0x%s (block %llu)", (unsigned long long)l->log_index,
                                  err.data ? err.data : "", (unsigned long long)l->block);
            silt_buf_free(&err);
            return rc;
        }
    }
    return silt_buf_puts(b, "}\n") ? silt_err(SILT_ENOMEM, "out of memory") : 0;
}

/* The batch being built: NDJSON lines and, per line, its block and end. */
typedef struct batch {
    silt_buf lines;
    uint64_t *blocks;
    size_t *ends;
    size_t n, cap;
} batch;

static int batch_push(batch *bt, uint64_t block)
{
    if (bt->n == bt->cap) {
        size_t cap = bt->cap ? bt->cap * 2 : 256;
        uint64_t *nb = realloc(bt->blocks, cap * sizeof *nb);
        if (nb)
            bt->blocks = nb;
        size_t *ne = nb ? realloc(bt->ends, cap * sizeof *ne) : NULL;
        if (!ne)
            return silt_err(SILT_ENOMEM, "out of memory");
        bt->ends = ne;
        bt->cap = cap;
    }
    bt->blocks[bt->n] = block;
    bt->ends[bt->n++] = bt->lines.len;
    return 0;
}

/* Adds the matching logs of one eth_getLogs answer to the batch. */
static int add_logs(evm_ctx *c, json_t *logs, batch *bt)
{
    if (!json_is_array(logs))
        return silt_err(SILT_EIO, "eth_getLogs: the node answered no list (node %s)", c->shown_url);
    int rc = 0;
    for (size_t i = 0; !rc && i < json_array_size(logs); i++) {
        json_t *j = json_array_get(logs, i);
        if (json_is_true(json_object_get(j, "removed")))
            continue;
        evm_log l;
        if ((rc = log_parse(c, j, &l)) != 0)
            break;
        silt_evm_log_view v = {l.block, l.block_hash, l.address, (const uint8_t(*)[32])l.topics, l.ntopics};
        if (silt_evm_filter_match(c->filter, &v)) {
            rc = log_line(c, &l, &bt->lines);
            if (!rc)
                rc = batch_push(bt, l.block);
        }
        free(l.data);
    }
    return rc;
}

/* Cuts the batch after the block of its `limit`-th line (when that block is
 * not the chunk's last); returns the new last scanned block. */
static uint64_t batch_cut(batch *bt, uint64_t limit, uint64_t chunk_end)
{
    if (bt->n <= limit)
        return chunk_end;
    uint64_t b = bt->blocks[limit - 1];
    size_t keep = limit;
    while (keep < bt->n && bt->blocks[keep] == b)
        keep++;
    bt->n = keep;
    bt->lines.len = bt->ends[keep - 1];
    bt->lines.data[bt->lines.len] = '\0';
    return b < chunk_end ? b : chunk_end;
}

/* Scans [from, to] into bt; *last = the last block fully scanned. */
static int scan(evm_ctx *c, uint64_t from, uint64_t to, batch *bt, uint64_t *last)
{
    uint64_t stride = env_u64("SILT_EVM_BLOCK_STRIDE", 100000, 1);
    uint64_t limit = env_u64("SILT_EVM_BATCH_SIZE", 100000, 1);
    uint64_t max_blocks = env_u64("SILT_EVM_COMMIT_BLOCKS", 1000000, 1);
    uint64_t pos = from;
    *last = from - 1; /* from > 0 whenever nothing is scanned yet and the caller reads it */
    while (pos <= to) {
        uint64_t end = to - pos + 1 > stride ? pos + stride - 1 : to;
        json_t *logs = NULL, *params = logs_params(c, pos, end);
        if (!params)
            return silt_err(SILT_ENOMEM, "out of memory");
        int rc = rpc(c, "eth_getLogs", params, &logs);
        if (rc == SILT_ERANGE_RPC) {
            if (end == pos)
                return silt_err(SILT_EIO, "eth_getLogs: the node refuses even block %llu alone as too large (node %s)",
                                (unsigned long long)pos, c->shown_url);
            stride = (end - pos + 1) / 2;
            continue;
        }
        if (!rc)
            rc = add_logs(c, logs, bt);
        json_decref(logs);
        if (rc)
            return rc;
        *last = batch_cut(bt, limit, end);
        if (*last < end || bt->n >= limit || *last - from + 1 >= max_blocks || *last == UINT64_MAX)
            break;
        pos = end + 1;
    }
    return 0;
}

/* ---- Parquet ------------------------------------------------------------------- */

static int write_parquet(evm_ctx *c, const char *ndjson, const char *parquet)
{
    silt_buf sql = SILT_BUF_INIT, ev = SILT_BUF_INIT, conv = SILT_BUF_INIT;
    bool has_event = c->sig && c->sig->nparams;
    int rc = has_event ? silt_evm_sql_type(&ev, c->sig, true) : 0;
    if (!rc && has_event)
        rc = silt_evm_sql_convert(&conv, c->sig, "event");
    char *in = silt_sql_str(ndjson), *outp = silt_sql_str(parquet), *evt = has_event ? silt_sql_str(ev.data) : NULL;
    if (!rc && (!in || !outp || (has_event && !evt)))
        rc = SILT_ENOMEM;
    if (!rc)
        rc = silt_buf_printf(
            &sql,
            "COPY (SELECT block_number, unhex(block_hash) AS block_hash, "
            "make_timestamp(block_timestamp * 1000000) AS block_timestamp, transaction_index, "
            "unhex(transaction_hash) AS transaction_hash, log_index, unhex(address) AS address, "
            "unhex(topic0) AS topic0, unhex(topic1) AS topic1, unhex(topic2) AS topic2, unhex(topic3) AS topic3, "
            "unhex(data) AS data%s%s%s FROM read_json(%s, format = 'newline_delimited', columns = {"
            "block_number: 'UBIGINT', block_hash: 'VARCHAR', block_timestamp: 'BIGINT', transaction_index: "
            "'UBIGINT', transaction_hash: 'VARCHAR', log_index: 'UBIGINT', address: 'VARCHAR', topic0: 'VARCHAR', "
            "topic1: 'VARCHAR', topic2: 'VARCHAR', topic3: 'VARCHAR', data: 'VARCHAR'%s%s}))"
            " TO %s (FORMAT parquet)",
            has_event ? ", " : "", has_event ? conv.data : "", has_event ? " AS event" : "", in,
            has_event ? ", event: " : "", has_event ? evt : "", outp);
    free(in);
    free(outp);
    free(evt);
    silt_buf_free(&ev);
    silt_buf_free(&conv);
    if (rc) {
        silt_buf_free(&sql);
        return silt_err(SILT_ENOMEM, "out of memory");
    }
    silt_engine *e = NULL;
    silt_engine_opts eo = {.spill_dir = c->o->tmpdir, .threads = 1};
    rc = silt_engine_open(&e, &eo);
    if (!rc)
        rc = silt_engine_exec(e, sql.data);
    silt_engine_free(e);
    silt_buf_free(&sql);
    return rc ? silt_err_context(rc, "writing the fetched logs") : 0;
}

/* ---- entry points --------------------------------------------------------------- */

static int finish_batch(evm_ctx *c, batch *bt, uint64_t last, silt_evm_result *out)
{
    uint8_t h[32];
    int rc = block_hash(c, last, h);
    silt_buf st = SILT_BUF_INIT;
    if (!rc && (silt_buf_printf(&st, "%llu@", (unsigned long long)last) || silt_evm_hex_append(&st, h, 32)))
        rc = silt_err(SILT_ENOMEM, "out of memory");
    if (!rc)
        out->state_value = silt_buf_detach(&st);
    silt_buf_free(&st);
    out->num_logs = bt->n;
    if (rc || !bt->n)
        return rc;
    char *nd = silt_path_join(c->o->tmpdir, "logs.ndjson", NULL), *pq = silt_path_join(c->o->tmpdir, "logs.parquet", NULL);
    if (!nd || !pq)
        rc = silt_err(SILT_ENOMEM, "out of memory");
    if (!rc)
        rc = silt_fs_write_atomic(nd, bt->lines.data, bt->lines.len, false);
    if (!rc)
        rc = write_parquet(c, nd, pq);
    if (nd)
        remove(nd);
    free(nd);
    if (!rc)
        out->path = pq;
    else
        free(pq);
    return rc;
}

int silt_evm_fetch(silt_evm_result *out, const silt_evm_opts *o)
{
    memset(out, 0, sizeof *out);
    evm_ctx c;
    int rc = ctx_init(&c, o);
    if (!rc)
        rc = connect_node(&c);
    uint64_t from = 0, head = 0;
    if (!rc)
        rc = resume_from(&c, &from);
    if (!rc)
        rc = rpc_quantity(&c, "eth_blockNumber", json_array(), &head);
    if (rc) {
        ctx_free(&c);
        return rc;
    }
    uint64_t conf = env_u64("SILT_EVM_CONFIRMATIONS", 0, 0);
    uint64_t to = head >= conf ? head - conf : 0;
    if (c.pd.hi < to)
        to = c.pd.hi;
    if (c.pd.lo > from && !silt_evm_pushdown_empty(&c.pd))
        from = c.pd.lo;
    if (head < conf || from > to) {
        out->up_to_date = true;
        ctx_free(&c);
        return 0;
    }
    batch bt = {SILT_BUF_INIT, NULL, NULL, 0, 0};
    uint64_t last = to;
    if (!silt_evm_pushdown_empty(&c.pd))
        rc = scan(&c, from, to, &bt, &last);
    if (!rc) {
        out->from_block = from;
        out->to_block = last;
        out->has_more = last < to;
        rc = finish_batch(&c, &bt, last, out);
    }
    silt_buf_free(&bt.lines);
    free(bt.blocks);
    free(bt.ends);
    ctx_free(&c);
    if (rc)
        silt_evm_result_free(out);
    return rc;
}

void silt_evm_result_free(silt_evm_result *r)
{
    free(r->path);
    free(r->state_value);
    memset(r, 0, sizeof *r);
}
