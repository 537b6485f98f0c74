/* data_views.c — datasets as SQL views: `silt sql`, `silt tail`,
 * `silt schema` (public API in silt.h, internals in data_views.h).
 *
 * Invariants:
 *  - each public call opens its own in-memory engine (spill directory in a
 *    fresh `.silt/tmp/<random>/`, removed before returning) and frees it: no
 *    engine state survives a call;
 *  - only datasets whose names occur in the query (as a bare identifier, a
 *    "quoted identifier" or a 'string literal', optionally with @branch and
 *    :current) get a view; the dataset list is read once per call;
 *  - slice files are listed newest-first from the metadata chain and handed
 *    to the engine in offset order; records keep that order (file order,
 *    then row order); nothing is ever written to a dataset.
 */
#include "dataset/data_views.h"
#include "dataset/files.h"
#include "dataset/retention.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "engine/schema.h"
#include "odf/json.h"
#include "odf/yaml.h"
#include "util/error.h"
#include "util/fsutil.h"

/* "name" or "name@branch" (static per-thread buffer, for messages). */
static const char *label(const silt_dataset *ds)
{
    static _Thread_local char buf[256];
    if (strcmp(ds->branch, "master") == 0)
        snprintf(buf, sizeof buf, "%s", ds->name);
    else
        snprintf(buf, sizeof buf, "%s@%s", ds->name, ds->branch);
    return buf;
}

/* ---- slices ------------------------------------------------------------------ */

void silt_slice_list_free(silt_slice_list *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++)
        free(l->files[i]);
    free(l->files);
    memset(l, 0, sizeof *l);
}

static const odf_DataSlice *block_slice(const odf_MetadataBlock *blk)
{
    if (blk->event.type == ODF_MetadataEvent_AddData)
        return ((const odf_AddData *)blk->event.value)->new_data;
    if (blk->event.type == ODF_MetadataEvent_ExecuteTransform)
        return ((const odf_ExecuteTransform *)blk->event.value)->new_data;
    return NULL;
}

int silt_ds_slices(silt_dataset *ds, const uint8_t *upto, uint64_t max_records, silt_slice_list *out)
{
    memset(out, 0, sizeof *out);
    int rc = silt_ds_sync(ds);
    if (rc < 0)
        return rc;
    if (ds->st.empty || (!upto && !ds->st.has_last_offset))
        return 0; /* no data at all */
    uint8_t cur[SILT_MH_LEN];
    memcpy(cur, ds->st.head, SILT_MH_LEN);
    bool has = true, collecting = upto == NULL;
    uint64_t remaining = ds->st.seq + 1, covered = 0;
    size_t cap = 0;
    while (has && rc == 0) {
        if (remaining-- == 0) {
            rc = silt_err(SILT_ECORRUPT, "dataset '%s': chain is longer than its head sequence number",
                          label(ds));
            break;
        }
        if (!collecting && memcmp(cur, upto, SILT_MH_LEN) == 0)
            collecting = true;
        silt_arena *a = silt_arena_new();
        if (!a) {
            rc = silt_err(SILT_ENOMEM, "dataset '%s': out of memory", label(ds));
            break;
        }
        odf_MetadataBlock *blk = NULL;
        rc = silt_ds_load_block(ds, cur, a, &blk);
        const odf_DataSlice *sl = rc == 0 && collecting ? block_slice(blk) : NULL;
        if (sl && sl->offset_interval) {
            if (sl->physical_hash.len != SILT_MH_LEN) {
                rc = silt_err(SILT_ECORRUPT, "dataset '%s': block %llu: bad newData.physicalHash",
                              label(ds), (unsigned long long)blk->sequence_number);
            } else {
                char *path = silt_store_object_path(ds->store, "data", sl->physical_hash.data);
                if (!path) {
                    rc = silt_err(SILT_ENOMEM, "dataset '%s': out of memory", label(ds));
                } else if (!silt_fs_exists(path)) {
                    char text[SILT_MH_TEXT_LEN + 1];
                    silt_multihash_to_text(sl->physical_hash.data, SILT_MH_LEN, text);
                    rc = silt_err(SILT_ECORRUPT, "dataset '%s': block %llu: data slice %s is missing",
                                  label(ds), (unsigned long long)blk->sequence_number, text);
                    free(path);
                } else {
                    if (out->n == cap) {
                        size_t nc = cap ? 2 * cap : 16;
                        char **nf = realloc(out->files, nc * sizeof *nf);
                        if (!nf) {
                            free(path);
                            rc = silt_err(SILT_ENOMEM, "dataset '%s': out of memory", label(ds));
                        } else {
                            out->files = nf;
                            cap = nc;
                        }
                    }
                    if (rc == 0) {
                        out->files[out->n++] = path;
                        const odf_OffsetInterval *iv = sl->offset_interval;
                        out->first_offset = iv->start;
                        if (!out->has_last_offset) {
                            out->has_last_offset = true;
                            out->last_offset = iv->end;
                        }
                        covered += iv->end - iv->start + 1;
                        if (iv->start == 0 || (max_records && covered >= max_records))
                            has = false; /* everything needed is collected */
                    }
                }
            }
        }
        if (rc == 0 && has) {
            if (blk->prev_block_hash.data && blk->prev_block_hash.len == SILT_MH_LEN)
                memcpy(cur, blk->prev_block_hash.data, SILT_MH_LEN);
            else
                has = false;
        }
        silt_arena_free(a);
    }
    if (rc == 0 && !collecting) {
        char text[SILT_MH_TEXT_LEN + 1];
        silt_multihash_to_text(upto, SILT_MH_LEN, text);
        rc = silt_err(SILT_ENOTFOUND, "block %s is not in the chain of dataset '%s'", text, label(ds));
    }
    if (rc < 0) {
        silt_slice_list_free(out);
        return rc;
    }
    /* newest-first -> offset order */
    for (size_t i = 0; i < out->n / 2; i++) {
        char *t = out->files[i];
        out->files[i] = out->files[out->n - 1 - i];
        out->files[out->n - 1 - i] = t;
    }
    return 0;
}

/* ---- vocabulary and schema -------------------------------------------------- */

int silt_ds_vocab(silt_dataset *ds, silt_arena *a, silt_vocab_names *out)
{
    out->offset = "offset";
    out->op = "op";
    out->system_time = "system_time";
    out->event_time = "event_time";
    if (!ds->st.vocab.present)
        return 0;
    odf_MetadataBlock *blk = NULL;
    int rc = silt_ds_load_block(ds, ds->st.vocab.hash, a, &blk);
    if (rc < 0)
        return rc;
    if (blk->event.type != ODF_MetadataEvent_SetVocab)
        return silt_err(SILT_ECORRUPT, "dataset '%s': vocabulary block is not a SetVocab", label(ds));
    const odf_SetVocab *v = blk->event.value;
    if (v->offset_column)
        out->offset = v->offset_column;
    if (v->operation_type_column)
        out->op = v->operation_type_column;
    if (v->system_time_column)
        out->system_time = v->system_time_column;
    if (v->event_time_column)
        out->event_time = v->event_time_column;
    return 0;
}

int silt_ds_schema(silt_dataset *ds, silt_arena *a, odf_DataSchema **out)
{
    *out = NULL;
    int rc = silt_ds_sync(ds);
    if (rc < 0 || !ds->st.schema.present)
        return rc;
    odf_MetadataBlock *blk = NULL;
    rc = silt_ds_load_block(ds, ds->st.schema.hash, a, &blk);
    if (rc < 0)
        return rc;
    if (blk->event.type != ODF_MetadataEvent_SetDataSchema)
        return silt_err(SILT_ECORRUPT, "dataset '%s': schema block is not a SetDataSchema", label(ds));
    const odf_SetDataSchema *s = blk->event.value;
    if (!s->schema)
        return silt_err(SILT_EUNSUPPORTED,
                        "dataset '%s': the schema is only given as a raw Arrow schema (legacy), "
                        "which silt cannot read",
                        label(ds));
    *out = s->schema;
    return 0;
}

/* ---- views ---------------------------------------------------------------------- */

int silt_ds_create_view(silt_engine *e, silt_dataset *ds, const char *view, const uint8_t *upto,
                        bool current)
{
    /* files datasets: the files of the view read with the tabular schema
     * (files_schema.c); "name:current" does not apply to them */
    int isf = silt_files_is_files(ds);
    if (isf < 0)
        return isf;
    if (isf == 1)
        return silt_files_create_sql_view(e, ds, view, upto);
    silt_arena *a = silt_arena_new();
    if (!a)
        return silt_err(SILT_ENOMEM, "dataset '%s': out of memory", label(ds));
    silt_vocab_names vocab;
    silt_slice_list sl;
    memset(&sl, 0, sizeof sl);
    int rc = silt_ds_slices(ds, upto, 0, &sl);
    if (rc == 0)
        rc = silt_ds_vocab(ds, a, &vocab);
    if (rc == 0 && sl.n > 0) {
        rc = silt_query_create_slice_view(e, view, (const char *const *)sl.files, sl.n, &vocab, 0);
    } else if (rc == 0) {
        odf_DataSchema *schema = NULL;
        rc = silt_ds_schema(ds, a, &schema);
        if (rc == 0 && !schema)
            rc = silt_err(SILT_ENOTFOUND, "dataset '%s' has no data", label(ds));
        silt_buf cols = SILT_BUF_INIT;
        if (rc == 0)
            rc = silt_schema_to_duckdb_columns(&cols, schema);
        if (rc < 0 && rc != SILT_ENOTFOUND)
            rc = silt_err_context(rc, "dataset '%s'", label(ds));
        if (rc == 0)
            rc = silt_query_create_empty_view(e, view, cols.data);
        silt_buf_free(&cols);
    }
    if (rc == 0 && current) {
        char *cv = silt_arena_printf(a, "%s:current", view);
        rc = cv ? silt_query_create_current_view(e, cv, view, &vocab)
                : silt_err(SILT_ENOMEM, "dataset '%s': out of memory", label(ds));
    }
    silt_slice_list_free(&sl);
    silt_arena_free(a);
    return rc;
}

/* ---- references in a query ---------------------------------------------------- */

typedef struct qref {
    char *ref;     /* "name" or "name@branch" (owned) */
    bool current;  /* "<ref>:current" or current_state('<ref>') is used */
    bool has_as_of;
    uint8_t as_of[SILT_MH_LEN];
} qref;

typedef struct qrefs {
    qref *v;
    size_t n, cap;
} qrefs;

static void qrefs_free(qrefs *r)
{
    for (size_t i = 0; i < r->n; i++)
        free(r->v[i].ref);
    free(r->v);
    memset(r, 0, sizeof *r);
}

static int cmp_name(const void *k, const void *e)
{
    return strcmp((const char *)k, *(char *const *)e);
}

/* Adds candidate `text` (len bytes) if it names a dataset of `names`
 * (sorted, n entries). */
static int consider(qrefs *r, char **names, size_t n, const char *text, size_t len, bool literal)
{
    if (len == 0 || len > 400)
        return 0;
    char buf[401];
    memcpy(buf, text, len);
    buf[len] = '\0';
    bool current = literal; /* a string literal can only be current_state('x') */
    size_t bl = len;
    if (bl > 8 && strcmp(buf + bl - 8, ":current") == 0) {
        bl -= 8;
        buf[bl] = '\0';
        current = true;
    }
    char name[401];
    memcpy(name, buf, bl + 1);
    char *at = strchr(name, '@');
    if (at)
        *at = '\0';
    if (!bsearch(name, names, n, sizeof *names, cmp_name))
        return 0;
    for (size_t i = 0; i < r->n; i++) {
        if (strcmp(r->v[i].ref, buf) == 0) {
            r->v[i].current |= current;
            return 0;
        }
    }
    if (r->n == r->cap) {
        size_t nc = r->cap ? 2 * r->cap : 8;
        qref *nv = realloc(r->v, nc * sizeof *nv);
        if (!nv)
            return silt_err(SILT_ENOMEM, "sql: out of memory");
        r->v = nv;
        r->cap = nc;
    }
    qref *q = &r->v[r->n];
    memset(q, 0, sizeof *q);
    q->ref = strdup(buf);
    if (!q->ref)
        return silt_err(SILT_ENOMEM, "sql: out of memory");
    q->current = current;
    r->n++;
    return 0;
}

static bool is_word_start(unsigned char c)
{
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80;
}

static bool is_word_char(unsigned char c)
{
    return is_word_start(c) || c == '$' || (c >= '0' && c <= '9');
}

/* Tokenizes `sql` (comments, 'strings', "identifiers", bare words) and
 * collects the references to datasets of `names`. */
static int find_refs(const char *sql, char **names, size_t n, qrefs *out)
{
    const char *p = sql;
    silt_buf tok = SILT_BUF_INIT;
    int rc = 0;
    while (*p && rc == 0) {
        unsigned char c = (unsigned char)*p;
        if (c == '-' && p[1] == '-') {
            p += strcspn(p, "\n");
        } else if (c == '/' && p[1] == '*') {
            const char *end = strstr(p + 2, "*/");
            p = end ? end + 2 : p + strlen(p);
        } else if (c == '"' || c == '\'') {
            silt_buf_clear(&tok);
            p++;
            while (*p && rc == 0) {
                if (*p == (char)c) {
                    if (p[1] == (char)c) {
                        rc = silt_buf_putc(&tok, (char)c);
                        p += 2;
                        continue;
                    }
                    p++;
                    break;
                }
                rc = silt_buf_putc(&tok, *p++);
            }
            if (rc == 0 && tok.len)
                rc = consider(out, names, n, tok.data, tok.len, c == '\'');
        } else if (is_word_start(c)) {
            const char *s = p;
            while (*p && is_word_char((unsigned char)*p))
                p++;
            rc = consider(out, names, n, s, (size_t)(p - s), false);
        } else if (c >= '0' && c <= '9') {
            while (*p && (is_word_char((unsigned char)*p) || *p == '.'))
                p++;
        } else {
            p++;
        }
    }
    silt_buf_free(&tok);
    if (rc == SILT_ENOMEM)
        rc = silt_err(SILT_ENOMEM, "sql: out of memory");
    return rc;
}

/* ---- engine per call ------------------------------------------------------------ */

static int engine_open(silt_workspace *ws, silt_engine **e, char **tmpdir)
{
    *e = NULL;
    int rc = silt_ws_mktemp(ws, "tmp", tmpdir);
    if (rc < 0)
        return rc;
    silt_engine_opts o = {.spill_dir = *tmpdir, .memory_limit = NULL, .threads = 0};
    rc = silt_engine_open(e, &o);
    if (rc < 0) {
        silt_fs_remove_tree(*tmpdir);
        free(*tmpdir);
        *tmpdir = NULL;
    }
    return rc;
}

/* Frees the engine and its scratch directory; returns rc, keeping the
 * caller's error message (a leftover scratch directory is not an error). */
static int engine_close(silt_engine *e, char *tmpdir, int rc)
{
    silt_engine_free(e);
    if (tmpdir) {
        char saved[1024];
        snprintf(saved, sizeof saved, "%s", silt_error_last());
        silt_fs_remove_tree(tmpdir);
        if (rc < 0)
            silt_err(rc, "%s", saved);
        else
            silt_err_clear();
        free(tmpdir);
    }
    return rc;
}

static int parse_block(const char *text, uint8_t out[SILT_MH_LEN])
{
    silt_buf b = SILT_BUF_INIT;
    int rc = silt_multihash_from_text(text, &b);
    if (rc == 0 && b.len != SILT_MH_LEN)
        rc = SILT_EINVAL;
    if (rc == 0)
        memcpy(out, b.data, SILT_MH_LEN);
    silt_buf_free(&b);
    if (rc == SILT_ENOMEM)
        return silt_err(SILT_ENOMEM, "out of memory");
    if (rc < 0)
        return silt_err(SILT_EINVAL, "as-of: '%s' is not a block hash (multihash f1620…)", text);
    return 0;
}

/* Applies the as-of items to the references (opening datasets for bare
 * block lookups). */
static int apply_as_of(silt_workspace *ws, qrefs *refs, const silt_sql_opts *o)
{
    for (size_t i = 0; o && i < o->n_as_of; i++) {
        const char *item = o->as_of[i];
        const char *eq = strchr(item, '=');
        uint8_t h[SILT_MH_LEN];
        int rc = parse_block(eq ? eq + 1 : item, h);
        if (rc < 0)
            return rc;
        bool applied = false;
        for (size_t k = 0; k < refs->n; k++) {
            qref *q = &refs->v[k];
            if (eq) {
                if (strlen(q->ref) != (size_t)(eq - item) || strncmp(q->ref, item, (size_t)(eq - item)) != 0)
                    continue;
            } else {
                silt_dataset *ds = NULL;
                rc = silt_dataset_open(&ds, ws, q->ref);
                int st = rc == 0 ? silt_store_stat(ds->store, "blocks", h, NULL) : rc;
                silt_dataset_free(ds);
                if (st < 0)
                    return st;
                if (st == 0)
                    continue;
            }
            if (q->has_as_of && memcmp(q->as_of, h, SILT_MH_LEN) != 0)
                return silt_err(SILT_EINVAL, "as-of: two different blocks given for '%s'", q->ref);
            q->has_as_of = true;
            memcpy(q->as_of, h, SILT_MH_LEN);
            applied = true;
        }
        if (!applied && eq)
            return silt_err(SILT_EINVAL, "as-of '%s': the query does not use dataset '%.*s'", item,
                            (int)(eq - item), item);
        if (!applied)
            return silt_err(SILT_ENOTFOUND, "as-of: block %s is not in any dataset of the query", item);
    }
    return 0;
}

int silt_sql(silt_workspace *ws, const char *query, const silt_sql_opts *opts)
{
    if (opts && opts->rows_out)
        *opts->rows_out = 0;
    if (!query)
        return silt_err(SILT_EINVAL, "sql: no query");
    silt_qfmt fmt;
    int rc = silt_qfmt_parse(opts ? opts->format : NULL, &fmt);
    if (rc < 0)
        return rc;
    if (fmt == SILT_QFMT_PARQUET && !(opts && opts->output))
        return silt_err(SILT_EINVAL, "sql: format parquet needs an output file");
    char **names = NULL;
    rc = silt_dataset_list(&names, ws);
    if (rc < 0)
        return rc;
    size_t nnames = (size_t)rc;
    qrefs refs = {0};
    rc = find_refs(query, names, nnames, &refs);
    silt_strv_free(names);
    if (rc == 0)
        rc = apply_as_of(ws, &refs, opts);
    silt_engine *e = NULL;
    char *tmpdir = NULL;
    if (rc == 0)
        rc = engine_open(ws, &e, &tmpdir);
    /* A name in the query may not be meant as a dataset (a column or a
     * string that happens to equal a dataset name): a view that cannot be
     * made is skipped, and its error is reported only if the query fails. */
    bool macro = false;
    int deferred = 0;
    char deferred_msg[512] = "";
    for (size_t i = 0; rc == 0 && i < refs.n; i++) {
        silt_dataset *ds = NULL;
        int vr = silt_dataset_open(&ds, ws, refs.v[i].ref);
        if (vr == 0)
            vr = silt_ds_create_view(e, ds, refs.v[i].ref, refs.v[i].has_as_of ? refs.v[i].as_of : NULL,
                                     refs.v[i].current);
        silt_dataset_free(ds);
        if (vr == SILT_ENOMEM) {
            rc = vr;
        } else if (vr < 0 && refs.v[i].has_as_of) {
            rc = vr; /* explicitly asked for: always an error */
        } else if (vr < 0) {
            if (!deferred) {
                deferred = vr;
                snprintf(deferred_msg, sizeof deferred_msg, "%s", silt_error_last());
            }
            silt_err_clear();
        }
        if (rc == 0 && vr == 0 && refs.v[i].current && !macro) {
            rc = silt_query_create_current_macro(e);
            macro = true;
        }
    }
    if (rc == 0) {
        rc = silt_query_run(e, query, fmt, opts ? opts->out : NULL, opts ? opts->output : NULL,
                            opts ? opts->rows_out : NULL);
        if (rc < 0 && rc != SILT_ENOMEM && deferred)
            rc = silt_err(deferred, "%s", deferred_msg);
    }
    if (e)
        rc = engine_close(e, tmpdir, rc);
    qrefs_free(&refs);
    return rc;
}

int silt_dataset_tail(silt_dataset *ds, uint64_t n, const silt_sql_opts *opts)
{
    if (opts && opts->rows_out)
        *opts->rows_out = 0;
    silt_qfmt fmt;
    int rc = silt_qfmt_parse(opts ? opts->format : NULL, &fmt);
    if (rc < 0)
        return rc;
    if (fmt == SILT_QFMT_PARQUET && !(opts && opts->output))
        return silt_err(SILT_EINVAL, "tail: format parquet needs an output file");
    silt_arena *a = silt_arena_new();
    if (!a)
        return silt_err(SILT_ENOMEM, "tail: out of memory");
    silt_slice_list sl;
    silt_vocab_names vocab;
    rc = silt_ds_slices(ds, NULL, n ? n : 1, &sl);
    if (rc == 0)
        rc = silt_ds_vocab(ds, a, &vocab);
    silt_engine *e = NULL;
    char *tmpdir = NULL;
    if (rc == 0)
        rc = engine_open(ds->ws, &e, &tmpdir);
    const char *view = label(ds);
    char *qv = NULL;
    if (rc == 0) {
        view = silt_arena_strdup(a, view);
        qv = view ? silt_sql_ident(view) : NULL;
        if (!qv)
            rc = silt_err(SILT_ENOMEM, "tail: out of memory");
    }
    if (rc == 0 && sl.n > 0) {
        uint64_t min = 0;
        if (sl.has_last_offset && n && sl.last_offset + 1 > n)
            min = sl.last_offset + 1 - n;
        rc = silt_query_create_slice_view(e, view, (const char *const *)sl.files, sl.n, &vocab, min);
    } else if (rc == 0) {
        rc = silt_ds_create_view(e, ds, view, NULL, false); /* empty view or "has no data" */
    }
    char *sql = NULL;
    if (rc == 0) {
        sql = n ? silt_arena_printf(a, "SELECT * FROM %s", qv)
                : silt_arena_printf(a, "SELECT * FROM %s LIMIT 0", qv);
        if (!sql)
            rc = silt_err(SILT_ENOMEM, "tail: out of memory");
    }
    if (rc == 0)
        rc = silt_query_run(e, sql, fmt, opts ? opts->out : NULL, opts ? opts->output : NULL,
                            opts ? opts->rows_out : NULL);
    if (e)
        rc = engine_close(e, tmpdir, rc);
    free(qv);
    silt_slice_list_free(&sl);
    silt_arena_free(a);
    return rc;
}

int silt_dataset_schema_get(char **out, silt_dataset *ds, silt_schema_format fmt)
{
    *out = NULL;
    silt_arena *a = silt_arena_new();
    if (!a)
        return silt_err(SILT_ENOMEM, "schema: out of memory");
    odf_DataSchema *s = NULL;
    int rc = silt_ds_schema(ds, a, &s);
    if (rc == 0 && !s)
        rc = silt_err(SILT_ENOTFOUND, "dataset '%s' has no schema", label(ds));
    silt_buf b = SILT_BUF_INIT;
    if (rc == 0 && fmt == SILT_SCHEMA_YAML) {
        rc = odf_yaml_emit(&b, &odf_desc_DataSchema, s, 0);
    } else if (rc == 0 && fmt == SILT_SCHEMA_JSON) {
        json_t *j = odf_to_json(&odf_desc_DataSchema, s);
        char *t = j ? json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
        json_decref(j);
        if (!t)
            rc = j ? silt_err(SILT_ENOMEM, "schema: out of memory") : SILT_ENOMEM;
        else
            rc = silt_buf_printf(&b, "%s\n", t);
        free(t);
    } else if (rc == 0) {
        for (size_t i = 0; rc == 0 && i < s->fields.n; i++) {
            const odf_DataField *f = s->fields.items[i];
            rc = silt_buf_printf(&b, "%s: ", f->name);
            if (rc == 0)
                rc = silt_schema_type_describe(&b, &f->type);
            if (rc == 0)
                rc = silt_buf_putc(&b, '\n');
        }
    }
    if (rc == SILT_ENOMEM && !silt_error_last()[0])
        rc = silt_err(SILT_ENOMEM, "schema: out of memory");
    if (rc == 0) {
        *out = silt_buf_detach(&b);
        if (!*out)
            rc = silt_err(SILT_ENOMEM, "schema: out of memory");
    }
    silt_buf_free(&b);
    silt_arena_free(a);
    return rc;
}
