/* odf_query.c — GET|POST /odf/query: SQL over the datasets the token may
 * read, answered in kamu's shape {"input": {…, "datasets": [{alias,
 * blockHash, id}]}, "output": {"dataFormat", "data"}} (research §3.2).
 *
 * Invariants:
 *  - the query runs through silt_sql confined (no unsafe_file_access), with
 *    a visibility filter built from the token's patterns (a hidden dataset
 *    is an unknown table), a memory limit and a timeout (environment
 *    SILT_QUERY_MEMORY_LIMIT, SILT_QUERY_TIMEOUT_MS; docs/server.md);
 *  - `input.datasets` echoes the block each dataset was actually read at, so
 *    sending it back pins the same heads and reproduces the result;
 *  - the data are rendered by the library into a scratch file (bounded by
 *    `limit`, never held in memory) and streamed after the JSON prefix.
 */
#include "odf_common.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LIMIT_MAX 100000000ull
#define DEFAULT_TIMEOUT_MS 30000u
#define DEFAULT_MEMORY_LIMIT (1ull << 30)

/* ---- the request ---------------------------------------------------------------- */

void odf_query_req_free(odf_query_req *q)
{
    free(q->query);
    for (size_t i = 0; i < q->ndatasets; i++) {
        free(q->datasets[i].alias);
        free(q->datasets[i].block);
        free(q->datasets[i].id);
    }
    free(q->datasets);
    memset(q, 0, sizeof *q);
}

static void req_defaults(odf_query_req *q)
{
    memset(q, 0, sizeof *q);
    q->limit = 100;
    odf_data_format(NULL, &q->silt_fmt, &q->kamu_fmt);
}

static int fail(char *err, size_t cap, const char *msg, const char *arg)
{
    snprintf(err, cap, msg, arg);
    return -1;
}

/* A JSON count field (a non-negative integer <= max). */
static int count_field(json_t *v, const char *name, uint64_t max, uint64_t *out, char *err, size_t cap)
{
    if (!json_is_integer(v) || json_integer_value(v) < 0 || (uint64_t)json_integer_value(v) > max)
        return fail(err, cap, "%s: expected a non-negative integer within bounds", name);
    *out = (uint64_t)json_integer_value(v);
    return 0;
}

static int dialect_ok(const char *d, char *err, size_t cap)
{
    if (d && strcmp(d, "SqlDuckDb") != 0)
        return fail(err, cap, "queryDialect '%.100s' is not supported (silt runs SqlDuckDb)", d);
    return 0;
}

static int parse_datasets(odf_query_req *q, json_t *arr, char *err, size_t cap)
{
    if (!json_is_array(arr))
        return fail(err, cap, "%s: expected an array of {alias, blockHash, id}", "datasets");
    size_t n = json_array_size(arr);
    q->datasets = calloc(n ? n : 1, sizeof *q->datasets);
    if (!q->datasets)
        return fail(err, cap, "%s", "out of memory");
    for (size_t i = 0; i < n; i++) {
        json_t *d = json_array_get(arr, i);
        if (!json_is_object(d))
            return fail(err, cap, "%s: expected an array of {alias, blockHash, id}", "datasets");
        q->ndatasets++; /* counted before its fields: freed whatever fails below */
        const char *k;
        json_t *v;
        json_object_foreach(d, k, v) {
            char **slot = strcmp(k, "alias") == 0 ? &q->datasets[i].alias
                          : strcmp(k, "blockHash") == 0 ? &q->datasets[i].block
                          : strcmp(k, "id") == 0 ? &q->datasets[i].id : NULL;
            if (!slot)
                return fail(err, cap, "datasets: unknown field '%.100s' (alias, blockHash, id)", k);
            if (!json_is_string(v) && !json_is_null(v))
                return fail(err, cap, "datasets: '%s' must be a string", k);
            if (json_is_string(v) && !(*slot = strdup(json_string_value(v))))
                return fail(err, cap, "%s", "out of memory");
        }
        if (!q->datasets[i].alias)
            return fail(err, cap, "%s: every entry needs an alias", "datasets");
    }
    return 0;
}

static int parse_field(odf_query_req *q, const char *k, json_t *v, char *err, size_t cap)
{
    if (strcmp(k, "query") == 0) {
        if (!json_is_string(v))
            return fail(err, cap, "%s: expected a string", k);
        free(q->query);
        q->query = strdup(json_string_value(v));
        return q->query ? 0 : fail(err, cap, "%s", "out of memory");
    }
    if (strcmp(k, "queryDialect") == 0)
        return json_is_string(v) ? dialect_ok(json_string_value(v), err, cap)
                                 : fail(err, cap, "%s: expected a string", k);
    if (strcmp(k, "dataFormat") == 0) {
        const char *f = json_string_value(v);
        if (!f || !odf_data_format(f, &q->silt_fmt, &q->kamu_fmt))
            return fail(err, cap, "dataFormat '%.100s': expected JsonAoS, JsonSoA or JsonAoA", f ? f : "?");
        return 0;
    }
    if (strcmp(k, "include") == 0) {
        size_t i;
        json_t *x;
        if (!json_is_array(v))
            return fail(err, cap, "%s: expected an array", k);
        json_array_foreach(v, i, x) {
            if (!json_is_string(x) || strcmp(json_string_value(x), "Input") != 0)
                return fail(err, cap, "include '%.100s': only Input is supported (and always included)",
                            json_is_string(x) ? json_string_value(x) : "?");
        }
        return 0;
    }
    if (strcmp(k, "skip") == 0)
        return count_field(v, k, UINT64_MAX / 4, &q->skip, err, cap);
    if (strcmp(k, "limit") == 0)
        return count_field(v, k, LIMIT_MAX, &q->limit, err, cap);
    if (strcmp(k, "datasets") == 0)
        return parse_datasets(q, v, err, cap);
    return fail(err, cap, "unknown field '%.100s' (query, queryDialect, dataFormat, include, skip, limit, datasets)",
                k);
}

int odf_query_parse_body(odf_query_req *q, const char *body, size_t len, char *err, size_t errcap)
{
    req_defaults(q);
    json_error_t je;
    json_t *j = json_loadb(body ? body : "", len, JSON_REJECT_DUPLICATES, &je);
    if (!j)
        return fail(err, errcap, "invalid JSON body: %s", je.text);
    int rc = 0;
    if (!json_is_object(j)) {
        rc = fail(err, errcap, "%s", "the body must be a JSON object {query, …}");
    } else {
        const char *k;
        json_t *v;
        json_object_foreach(j, k, v) {
            if ((rc = parse_field(q, k, v, err, errcap)) < 0)
                break;
        }
    }
    json_decref(j);
    if (rc == 0 && !q->query)
        rc = fail(err, errcap, "%s", "query: missing");
    return rc;
}

static int parse_args(srv_req *r, odf_query_req *q, char *err, size_t cap)
{
    req_defaults(q);
    const char *a;
    if (!(a = srv_arg_get(r, "query")))
        return fail(err, cap, "%s", "query: missing (GET /odf/query?query=SELECT…)");
    if (!(q->query = strdup(a)))
        return fail(err, cap, "%s", "out of memory");
    if (dialect_ok(srv_arg_get(r, "queryDialect"), err, cap) < 0)
        return -1;
    if (!(a = srv_arg_get(r, "dataFormat")))
        a = srv_arg_get(r, "format");
    if (a && !odf_data_format(a, &q->silt_fmt, &q->kamu_fmt))
        return fail(err, cap, "dataFormat '%.100s': expected JsonAoS, JsonSoA or JsonAoA", a);
    if ((a = srv_arg_get(r, "skip")) && !odf_parse_count(a, UINT64_MAX / 4, &q->skip))
        return fail(err, cap, "skip '%.40s': expected a count", a);
    if ((a = srv_arg_get(r, "limit")) && !odf_parse_count(a, LIMIT_MAX, &q->limit))
        return fail(err, cap, "limit '%.40s': expected a count 0..100000000", a);
    return 0;
}

/* ---- limits ------------------------------------------------------------------- */

/* A size with an optional K/M/G suffix (binary); `def` when unset or bad. */
static uint64_t env_size(const char *name, uint64_t def)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return def;
    char *end;
    unsigned long long n = strtoull(v, &end, 10);
    int shift = *end == 'K' || *end == 'k' ? 10 : *end == 'M' || *end == 'm' ? 20 : *end == 'G' || *end == 'g' ? 30 : 0;
    if (end == v || (shift && end[1]) || (!shift && *end))
        return def;
    return (uint64_t)n << shift;
}

/* ---- the answer --------------------------------------------------------------- */

/* The streamed body: a prefix in memory, the data file, a suffix. */
typedef struct qstream {
    char *head;
    size_t hlen;
    int fd;
    uint64_t fsize;
    char *tail;
    size_t tlen;
} qstream;

static long qstream_read(void *ctx, uint64_t pos, char *buf, size_t max)
{
    qstream *s = ctx;
    if (pos < s->hlen) {
        size_t n = s->hlen - (size_t)pos < max ? s->hlen - (size_t)pos : max;
        memcpy(buf, s->head + pos, n);
        return (long)n;
    }
    pos -= s->hlen;
    if (pos < s->fsize) {
        size_t want = s->fsize - pos < max ? (size_t)(s->fsize - pos) : max;
        ssize_t n = pread(s->fd, buf, want, (off_t)pos);
        return n > 0 ? (long)n : -1;
    }
    pos -= s->fsize;
    if (pos < s->tlen) {
        size_t n = s->tlen - (size_t)pos < max ? s->tlen - (size_t)pos : max;
        memcpy(buf, s->tail + pos, n);
        return (long)n;
    }
    return 0;
}

static void qstream_free(void *ctx)
{
    qstream *s = ctx;
    free(s->head);
    free(s->tail);
    if (s->fd >= 0)
        close(s->fd);
    free(s);
}

/* {"input": {…}, "output": {"dataFormat": F, "data": as text up to the data. */
static char *answer_head(const odf_query_req *q, const silt_sql_input *in, size_t nin)
{
    json_t *ds = json_array();
    for (size_t i = 0; ds && i < nin; i++)
        json_array_append_new(ds, json_pack("{s:s,s:s,s:s}", "alias", in[i].ref, "blockHash", in[i].block, "id",
                                            in[i].id));
    json_t *input = json_pack("{s:s,s:s,s:s,s:I,s:I,s:o}", "query", q->query, "queryDialect", "SqlDuckDb",
                              "dataFormat", q->kamu_fmt, "skip", (json_int_t)q->skip, "limit",
                              (json_int_t)q->limit, "datasets", ds);
    char *it = input ? json_dumps(input, JSON_COMPACT) : NULL;
    json_decref(input);
    if (!it)
        return NULL;
    size_t n = strlen(it) + strlen(q->kamu_fmt) + 64;
    char *head = malloc(n);
    if (head)
        snprintf(head, n, "{\"input\":%s,\"output\":{\"dataFormat\":\"%s\",\"data\":", it, q->kamu_fmt);
    free(it);
    return head;
}

/* An id the request gave for a dataset must be the id it resolved to. */
static int check_ids(srv_resp *out, const odf_query_req *q, const silt_sql_input *in, size_t nin)
{
    for (size_t i = 0; i < q->ndatasets; i++) {
        if (!q->datasets[i].id)
            continue;
        for (size_t k = 0; k < nin; k++)
            if (strcmp(in[k].ref, q->datasets[i].alias) == 0 && strcmp(in[k].id, q->datasets[i].id) != 0)
                return srv_odf_error(out, 400, "datasets: '%s' has id %s, not %s", in[k].ref, in[k].id,
                                     q->datasets[i].id), -1;
    }
    return 0;
}

static bool token_sees(void *ctx, const char *name) { return srv_token_sees(ctx, name); }

/* Runs the parsed query and fills `out`. */
static void run(srv_req *r, srv_resp *out, const odf_query_req *q)
{
    char **as_of = calloc(q->ndatasets ? q->ndatasets : 1, sizeof *as_of);
    size_t nas = 0;
    for (size_t i = 0; as_of && i < q->ndatasets; i++) {
        if (!q->datasets[i].block)
            continue;
        size_t n = strlen(q->datasets[i].alias) + strlen(q->datasets[i].block) + 2;
        if (!(as_of[nas] = malloc(n)))
            break;
        snprintf(as_of[nas++], n, "%s=%s", q->datasets[i].alias, q->datasets[i].block);
    }
    silt_workspace *ws = NULL;
    FILE *f = NULL;
    silt_sql_input *in = NULL;
    size_t nin = 0;
    if (!as_of) {
        srv_odf_error(out, 500, "out of memory");
    } else if (srv_open_ws(r, out, &ws) == 0 && odf_spool_open(r, out, ws, &f) == 0) {
        silt_sql_opts o = {.format = q->silt_fmt, .out = f, .as_of = (const char *const *)as_of, .n_as_of = nas,
                           .skip = q->skip, .has_limit = true, .limit = q->limit,
                           .timeout_ms = (uint32_t)env_size("SILT_QUERY_TIMEOUT_MS", DEFAULT_TIMEOUT_MS),
                           .memory_limit = env_size("SILT_QUERY_MEMORY_LIMIT", DEFAULT_MEMORY_LIMIT),
                           .visible = token_sees, .visible_ctx = r, .inputs_out = &in, .n_inputs_out = &nin,
                           .remote = true};
        int rc = silt_sql(ws, q->query, &o);
        struct stat st;
        qstream *s = NULL;
        if (rc < 0) {
            /* every refusal of a query is the client's: 400 (I/O and memory: 500) */
            int status = rc == SILT_EIO || rc == SILT_ENOMEM || rc == SILT_EINTERNAL ? 500 : 400;
            srv_odf_error(out, status, "%s", silt_error_last());
        } else if (check_ids(out, q, in, nin) == 0) {
            if (fflush(f) != 0 || fstat(fileno(f), &st) != 0 || !(s = calloc(1, sizeof *s))) {
                srv_odf_error(out, 500, "writing the response failed: %s", strerror(errno));
            } else {
                s->fd = dup(fileno(f));
                s->fsize = (uint64_t)st.st_size;
                s->head = answer_head(q, in, nin);
                s->hlen = s->head ? strlen(s->head) : 0;
                s->tail = strdup("}}");
                s->tlen = 2;
                if (s->fd < 0 || !s->head || !s->tail) {
                    qstream_free(s);
                    srv_odf_error(out, 500, "out of memory");
                } else {
                    srv_stream(out, 200, "application/json", qstream_read, s, qstream_free);
                }
            }
        }
    }
    if (f)
        fclose(f);
    free(in);
    for (size_t i = 0; as_of && i < nas; i++)
        free(as_of[i]);
    free(as_of);
    silt_workspace_free(ws);
}

int srv_odf_query(srv_req *r, srv_resp *out)
{
    odf_query_req q;
    char err[512];
    int rc = r->method == SRV_POST ? odf_query_parse_body(&q, r->body, r->body_len, err, sizeof err)
                                   : parse_args(r, &q, err, sizeof err);
    if (rc < 0)
        srv_odf_error(out, 400, "%s", err);
    else
        run(r, out, &q);
    odf_query_req_free(&q);
    return 0;
}
