/* odf_data.c — ODF node routes on one dataset's data and metadata:
 * POST /odf/{ds}/ingest (push ingest, like `silt ingest`), GET
 * /odf/{ds}/tail and GET /odf/{ds}/metadata (shapes after kamu's,
 * research/foundry-api.md §3.2; docs/server.md "ODF node routes").
 *
 * Invariants: ingest goes through silt_dataset_ingest with the body file
 * the core streamed to disk, so a failed ingest commits nothing; the tail
 * is rendered by the library into a scratch file and sent from it (memory
 * stays bounded whatever `limit` is); metadata is read from the chain
 * through the public block iterator.
 */
#include "odf_common.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <strings.h>

/* ---- ingest ------------------------------------------------------------------ */

static const struct {
    const char *media, *format;
} MEDIA[] = {
    {"text/csv", "csv"},
    {"application/json", "json"},
    {"application/x-ndjson", "ndjson"},
    {"application/geo+json", "geojson"},
    {"application/x-ndgeojson", "ndgeojson"},
    {"application/vnd.apache.parquet", "parquet"},
};

/* The silt format of a Content-Type (parameters such as "; charset=utf-8"
 * ignored, case-insensitive); NULL for an unsupported type. */
static const char *format_of_media(const char *ct)
{
    size_t n = strcspn(ct, ";");
    while (n && isspace((unsigned char)ct[n - 1]))
        n--;
    for (size_t i = 0; i < sizeof MEDIA / sizeof MEDIA[0]; i++)
        if (strlen(MEDIA[i].media) == n && strncasecmp(ct, MEDIA[i].media, n) == 0)
            return MEDIA[i].format;
    return NULL;
}

static int unsupported_media(srv_resp *out, const char *ct)
{
    char list[256] = "";
    for (size_t i = 0; i < sizeof MEDIA / sizeof MEDIA[0]; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", MEDIA[i].media);
    return srv_odf_error(out, 415, "unsupported media type '%s' (use one of %s)", ct, list);
}

static json_t *ingest_result_json(const silt_ingest_result *res)
{
    if (res->up_to_date)
        return json_pack("{s:b}", "upToDate", 1);
    json_t *j = json_pack("{s:b,s:I,s:{s:I,s:I},s:s}", "upToDate", 0, "numRecords", (json_int_t)res->num_records,
                          "offsetInterval", "start", (json_int_t)res->first_offset, "end",
                          (json_int_t)res->last_offset, "head", res->head);
    if (j && res->has_watermark)
        json_object_set_new(j, "watermark", json_string(res->watermark));
    return j;
}

/* 202 (records buffered) or 429 (Reject: the buffer is full, nothing
 * accepted); drops are reported in the body and the server log. */
static void buffered_answer(srv_resp *out, const char *dataset, const silt_push_result *res)
{
    if (res->rejected) {
        json_t *j = json_pack("{s:s,s:s,s:I,s:I,s:I}", "message", "", "source", res->source, "numRecords",
                              (json_int_t)0, "bufferedRecords", (json_int_t)res->buffered_records, "bufferSize",
                              (json_int_t)res->capacity);
        char msg[512];
        snprintf(msg, sizeof msg,
                 "the buffer of source '%s' is full (%llu of %llu records); nothing of this request was "
                 "accepted: retry after a flush (`silt pull %s`)",
                 res->source, (unsigned long long)res->buffered_records, (unsigned long long)res->capacity,
                 dataset);
        if (j)
            json_object_set_new(j, "message", json_string(msg));
        srv_json(out, 429, j);
        return;
    }
    if (res->dropped)
        fprintf(stderr, "silt serve: push buffer of source '%s' (dataset '%s') is full: dropped the %llu oldest "
                        "records (%llu in all)\n",
                res->source, dataset, (unsigned long long)res->dropped, (unsigned long long)res->dropped_total);
    srv_json(out, 202, json_pack("{s:s,s:I,s:I,s:I,s:I,s:I}", "source", res->source, "numRecords",
                                 (json_int_t)res->accepted, "bufferedRecords", (json_int_t)res->buffered_records,
                                 "bufferSize", (json_int_t)res->capacity, "droppedRecords",
                                 (json_int_t)res->dropped, "droppedTotal", (json_int_t)res->dropped_total));
}

int srv_odf_ingest(srv_req *r, srv_resp *out)
{
    const char *ct = srv_header(r, "Content-Type");
    const char *format = NULL;
    if (ct && *ct && !(format = format_of_media(ct)))
        return unsupported_media(out, ct);
    const char *et = srv_header(r, "odf-event-time");
    if (et && silt_time_check(et) < 0)
        return srv_odf_error(out, 400, "odf-event-time: %s", silt_error_last());
    odf_ds d;
    if (odf_ds_open(r, out, &d) < 0)
        return 0;
    const char *files[1] = {r->body_path};
    const char *display[1] = {"request body"};
    silt_ingest_opts o = {.files = files,
                          .display = display,
                          .nfiles = 1,
                          .format = format,
                          .event_time = et,
                          .source_name = srv_arg_get(r, "sourceName")};
    silt_push_result res;
    int rc = silt_dataset_push(&res, d.ds, &o);
    if (rc == SILT_ENOTFOUND || (rc == SILT_EINVAL && res.buffered)) /* the dataset exists: a bad request */
        srv_odf_error(out, 400, "%s", silt_error_last());
    else if (rc < 0)
        srv_lib_error(r, out, rc, NULL, NULL);
    else if (res.buffered)
        buffered_answer(out, r->params[0], &res);
    else
        srv_json(out, 200, ingest_result_json(&res.ingest));
    odf_ds_close(&d);
    return 0;
}

/* ---- tail ------------------------------------------------------------------- */

int srv_odf_tail(srv_req *r, srv_resp *out)
{
    uint64_t limit = 100, skip = 0;
    const char *a;
    if ((a = srv_arg_get(r, "limit")) && !odf_parse_count(a, 100000000, &limit))
        return srv_odf_error(out, 400, "limit '%s': expected a count 0..100000000", a);
    if ((a = srv_arg_get(r, "skip")) && !odf_parse_count(a, UINT64_MAX / 4, &skip))
        return srv_odf_error(out, 400, "skip '%s': expected a count", a);
    const char *fmt, *kamu;
    a = srv_arg_get(r, "dataFormat");
    if (!odf_data_format(a, &fmt, &kamu))
        return srv_odf_error(out, 400, "dataFormat '%s': expected JsonAoS, JsonSoA or JsonAoA", a);
    odf_ds d;
    if (odf_ds_open(r, out, &d) < 0)
        return 0;
    FILE *f;
    if (odf_spool_open(r, out, d.ws, &f) == 0) {
        fprintf(f, "{\"dataFormat\":\"%s\",\"data\":", kamu);
        silt_sql_opts o = {.format = fmt, .out = f, .skip = skip};
        int rc = silt_dataset_tail(d.ds, limit, &o);
        if (rc < 0) {
            fclose(f);
            srv_lib_error(r, out, rc, NULL, NULL);
        } else {
            fputc('}', f);
            odf_spool_send(out, 200, "application/json", f);
        }
    }
    odf_ds_close(&d);
    return 0;
}

/* ---- metadata ------------------------------------------------------------------- */

enum {
    INC_SEED = 1, INC_INFO = 2, INC_LICENSE = 4, INC_REFS = 8, INC_SCHEMA = 16, INC_VOCAB = 32,
    INC_ATTACHMENTS = 64
};

static const struct {
    const char *name;
    unsigned bit;
    const char *event; /* the event kind that carries it, or NULL */
} INCLUDES[] = {
    {"seed", INC_SEED, NULL},       {"info", INC_INFO, "SetInfo"},   {"license", INC_LICENSE, "SetLicense"},
    {"refs", INC_REFS, NULL},       {"schema", INC_SCHEMA, NULL},    {"vocab", INC_VOCAB, "SetVocab"},
    {"attachments", INC_ATTACHMENTS, "SetAttachments"},
};

/* Parses the comma-set `include` (NULL = seed). false: `bad` holds the
 * unknown name. */
static bool parse_includes(const char *text, unsigned *set, char *bad, size_t badcap)
{
    *set = 0;
    if (!text) {
        *set = INC_SEED;
        return true;
    }
    const char *p = text;
    while (*p) {
        size_t n = strcspn(p, ",");
        bool found = false;
        for (size_t i = 0; i < sizeof INCLUDES / sizeof INCLUDES[0]; i++) {
            if (strlen(INCLUDES[i].name) == n && strncasecmp(p, INCLUDES[i].name, n) == 0) {
                *set |= INCLUDES[i].bit;
                found = true;
            }
        }
        if (!found && n) {
            snprintf(bad, badcap, "%.*s", (int)n, p);
            return false;
        }
        p += n;
        if (*p == ',')
            p++;
    }
    return true;
}

/* The event of a block as JSON without its "kind" (new reference). */
static json_t *event_body(const silt_block *b)
{
    char *text = NULL;
    if (silt_block_to_json(&text, b) < 0)
        return NULL;
    json_t *blk = json_loads(text, 0, NULL);
    free(text);
    json_t *ev = blk ? json_incref(json_object_get(blk, "event")) : NULL;
    json_decref(blk);
    if (ev)
        json_object_del(ev, "kind");
    return ev;
}

/* Newest SetInfo / SetLicense / SetVocab / SetAttachments of the chain,
 * the ones `set` asks for, into `o` under their include names. */
static int newest_events(silt_dataset *ds, unsigned set, json_t *o)
{
    unsigned want = 0;
    for (size_t i = 0; i < sizeof INCLUDES / sizeof INCLUDES[0]; i++)
        if (INCLUDES[i].event && (set & INCLUDES[i].bit))
            want |= INCLUDES[i].bit;
    if (!want)
        return 0;
    silt_block_iter *it = NULL;
    int rc = silt_block_iter_new(&it, ds);
    silt_block *b = NULL;
    while (rc == 0 && want && (rc = silt_block_iter_next(&b, it)) == 0 && b) {
        const char *kind = silt_block_event_kind(b);
        for (size_t i = 0; i < sizeof INCLUDES / sizeof INCLUDES[0]; i++) {
            if (!(want & INCLUDES[i].bit) || strcmp(kind, INCLUDES[i].event) != 0)
                continue;
            json_t *ev = event_body(b);
            if (!ev) {
                rc = SILT_ENOMEM;
                break;
            }
            /* SetAttachments carries {attachments: …}: answer the attachments */
            json_t *val = INCLUDES[i].bit == INC_ATTACHMENTS ? json_incref(json_object_get(ev, "attachments")) : json_incref(ev);
            json_decref(ev);
            json_object_set_new(o, INCLUDES[i].name, val ? val : json_null());
            want &= ~INCLUDES[i].bit;
        }
        silt_block_free(b);
    }
    silt_block_iter_free(it);
    return rc;
}

/* The vocabulary in force: the newest SetVocab with the defaults filled. */
static void fill_vocab(json_t *o)
{
    json_t *v = json_object_get(o, "vocab");
    json_t *full = json_pack("{s:s,s:s,s:s,s:s}", "offsetColumn", "offset", "operationTypeColumn", "op",
                             "systemTimeColumn", "system_time", "eventTimeColumn", "event_time");
    if (!full)
        return;
    if (json_is_object(v))
        json_object_update(full, v);
    json_object_set_new(o, "vocab", full);
}

static json_t *refs_json(silt_dataset *ds)
{
    silt_branch_info *bv = NULL;
    size_t n = 0;
    if (silt_branch_list(&bv, &n, ds) < 0)
        return NULL;
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++) {
        char name[120];
        snprintf(name, sizeof name, strcmp(bv[i].name, "master") == 0 ? "head" : "branches/%s", bv[i].name);
        json_array_append_new(a, json_pack("{s:s,s:s}", "name", name, "blockHash", bv[i].head));
    }
    free(bv);
    return a;
}

int srv_odf_metadata(srv_req *r, srv_resp *out)
{
    unsigned set;
    char bad[64];
    if (!parse_includes(srv_arg_get(r, "include"), &set, bad, sizeof bad))
        return srv_odf_error(out, 400, "include '%s': expected a comma-separated set of attachments, info, "
                                       "license, refs, schema, seed, vocab", bad);
    odf_ds d;
    if (odf_ds_open(r, out, &d) < 0)
        return 0;
    json_t *o = json_object();
    int rc = o ? newest_events(d.ds, set, o) : SILT_ENOMEM;
    if (rc == 0 && (set & INC_SEED))
        json_object_set_new(o, "seed", json_pack("{s:s,s:s}", "datasetId", d.info.id, "datasetKind",
                                                 d.info.kind == SILT_ROOT ? "Root" : "Derivative"));
    if (rc == 0 && (set & INC_VOCAB))
        fill_vocab(o);
    if (rc == 0 && (set & INC_REFS)) {
        json_t *refs = refs_json(d.ds);
        rc = refs ? json_object_set_new(o, "refs", refs) : SILT_EIO;
    }
    if (rc == 0 && (set & INC_SCHEMA) && d.info.has_schema) {
        char *text = NULL;
        rc = silt_dataset_schema_get(&text, d.ds, SILT_SCHEMA_JSON);
        json_t *s = rc == 0 ? json_loads(text, 0, NULL) : NULL;
        free(text);
        if (s) {
            json_object_set_new(o, "schema", s);
            json_object_set_new(o, "schemaFormat", json_string("OdfJson"));
        }
    }
    if (rc < 0) {
        json_decref(o);
        srv_lib_error(r, out, rc, NULL, NULL);
    } else {
        srv_json(out, 200, json_pack("{s:o}", "output", o));
    }
    odf_ds_close(&d);
    return 0;
}
