/* data_views.c — ledger datasets as SQL views: the slices of a chain, its
 * vocabulary and schema, the TEMP VIEWs over them, `silt tail` and
 * `silt schema` (public API in silt.h, internals in data_views.h). `silt
 * sql` (names in a query -> views of every kind of dataset) is
 * src/ops/sql.c.
 *
 * Invariants:
 *  - each public call opens its own in-memory engine (spill directory in a
 *    fresh `.silt/tmp/<random>/`, removed before returning) and frees it: no
 *    engine state survives a call; `tail` confines it (engine.h) once its
 *    view exists;
 *  - slice files are listed newest-first from the metadata chain and handed
 *    to the engine in offset order; records keep that order (file order,
 *    then row order); nothing is ever written to a dataset.
 */
#include "dataset/data_views.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "engine/schema.h"
#include "odf/json.h"
#include "odf/yaml.h"
#include "util/error.h"
#include "util/multiformats.h"
#include "util/fsutil.h"

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

/* The slice of `blk` exists with the size the block gives (the cheap check
 * of every read; its hashes are `silt verify`'s). */
static int slice_check(silt_dataset *ds, const odf_MetadataBlock *blk, const odf_DataSlice *sl)
{
    uint64_t size = 0;
    int st = silt_store_stat(ds->store, "data", sl->physical_hash.data, &size);
    if (st < 0)
        return st;
    if (st == 1 && size == sl->size)
        return 0;
    char text[SILT_MH_TEXT_LEN + 1], what[96];
    silt_multihash_to_text(sl->physical_hash.data, SILT_MH_LEN, text);
    if (st == 0)
        snprintf(what, sizeof what, "is missing");
    else
        snprintf(what, sizeof what, "has %llu bytes but the block says %llu", (unsigned long long)size,
                 (unsigned long long)sl->size);
    return silt_err(SILT_ECORRUPT, "dataset '%s': block %llu: data slice %s %s; run 'silt verify %s'",
                    silt_ds_label(ds), (unsigned long long)blk->sequence_number, text, what, silt_ds_label(ds));
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
                          silt_ds_label(ds));
            break;
        }
        if (!collecting && memcmp(cur, upto, SILT_MH_LEN) == 0)
            collecting = true;
        silt_arena *a = silt_arena_new();
        if (!a) {
            rc = silt_err(SILT_ENOMEM, "dataset '%s': out of memory", silt_ds_label(ds));
            break;
        }
        odf_MetadataBlock *blk = NULL;
        rc = silt_ds_load_block(ds, cur, a, &blk);
        const odf_DataSlice *sl = rc == 0 && collecting ? block_slice(blk) : NULL;
        if (sl && sl->offset_interval) {
            if (sl->physical_hash.len != SILT_MH_LEN) {
                rc = silt_err(SILT_ECORRUPT, "dataset '%s': block %llu: bad newData.physicalHash",
                              silt_ds_label(ds), (unsigned long long)blk->sequence_number);
            } else {
                char *path = silt_store_object_path(ds->store, "data", sl->physical_hash.data);
                if (!path) {
                    rc = silt_err(SILT_ENOMEM, "dataset '%s': out of memory", silt_ds_label(ds));
                } else if ((rc = slice_check(ds, blk, sl)) < 0) {
                    free(path);
                } else {
                    if (out->n == cap) {
                        size_t nc = cap ? 2 * cap : 16;
                        char **nf = realloc(out->files, nc * sizeof *nf);
                        if (!nf) {
                            free(path);
                            rc = silt_err(SILT_ENOMEM, "dataset '%s': out of memory", silt_ds_label(ds));
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
        rc = silt_err(SILT_ENOTFOUND, "block %s is not in the chain of dataset '%s'", text, silt_ds_label(ds));
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
        return silt_err(SILT_ECORRUPT, "dataset '%s': vocabulary block is not a SetVocab", silt_ds_label(ds));
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

/* The newest SetDataSchema block at or before `upto` (NULL = the head) into
 * *blk, or NULL when there is none. */
static int schema_block(silt_dataset *ds, silt_arena *a, const uint8_t *upto, odf_MetadataBlock **blk)
{
    *blk = NULL;
    int rc = silt_ds_sync(ds);
    if (rc < 0)
        return rc;
    if (!upto)
        return ds->st.schema.present ? silt_ds_load_block(ds, ds->st.schema.hash, a, blk) : 0;
    uint8_t cur[SILT_MH_LEN];
    memcpy(cur, upto, SILT_MH_LEN);
    for (;;) {
        odf_MetadataBlock *b = NULL;
        rc = silt_ds_load_block(ds, cur, a, &b);
        if (rc < 0)
            return rc;
        if (b->event.type == ODF_MetadataEvent_SetDataSchema) {
            *blk = b;
            return 0;
        }
        if (b->prev_block_hash.len != SILT_MH_LEN)
            return 0;
        memcpy(cur, b->prev_block_hash.data, SILT_MH_LEN);
    }
}

static int schema_at(silt_dataset *ds, silt_arena *a, const uint8_t *upto, odf_DataSchema **out)
{
    *out = NULL;
    odf_MetadataBlock *blk = NULL;
    int rc = schema_block(ds, a, upto, &blk);
    if (rc < 0 || !blk)
        return rc;
    if (blk->event.type != ODF_MetadataEvent_SetDataSchema)
        return silt_err(SILT_ECORRUPT, "dataset '%s': schema block is not a SetDataSchema", silt_ds_label(ds));
    const odf_SetDataSchema *s = blk->event.value;
    if (!s->schema)
        return silt_err(SILT_EUNSUPPORTED,
                        "dataset '%s': the schema is only given as a raw Arrow schema (legacy), "
                        "which silt cannot read",
                        silt_ds_label(ds));
    *out = s->schema;
    return 0;
}

int silt_ds_schema(silt_dataset *ds, silt_arena *a, odf_DataSchema **out)
{
    return schema_at(ds, a, NULL, out);
}

/* ---- views ---------------------------------------------------------------------- */

int silt_ds_create_view(silt_engine *e, silt_dataset *ds, const char *view, const uint8_t *upto,
                        bool current)
{
    silt_arena *a = silt_arena_new();
    if (!a)
        return silt_err(SILT_ENOMEM, "dataset '%s': out of memory", silt_ds_label(ds));
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
            rc = silt_err(SILT_ENOTFOUND, "dataset '%s' has no data", silt_ds_label(ds));
        silt_buf cols = SILT_BUF_INIT;
        if (rc == 0)
            rc = silt_schema_to_duckdb_columns(&cols, schema);
        if (rc < 0 && rc != SILT_ENOTFOUND)
            rc = silt_err_context(rc, "dataset '%s'", silt_ds_label(ds));
        if (rc == 0)
            rc = silt_query_create_empty_view(e, view, cols.data);
        silt_buf_free(&cols);
    }
    if (rc == 0 && current) {
        char *cv = silt_arena_printf(a, "%s:current", view);
        rc = cv ? silt_query_create_current_view(e, cv, view, &vocab)
                : silt_err(SILT_ENOMEM, "dataset '%s': out of memory", silt_ds_label(ds));
    }
    silt_slice_list_free(&sl);
    silt_arena_free(a);
    return rc;
}

/* ---- engine per call ------------------------------------------------------------ */

int silt_ws_engine_open(silt_workspace *ws, silt_engine **e, char **tmpdir)
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
int silt_ws_engine_close(silt_engine *e, char *tmpdir, int rc)
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

/* A block hash text into bytes. */
static int block_bytes(const char *text, uint8_t out[SILT_MH_LEN])
{
    silt_buf b = SILT_BUF_INIT;
    int rc = silt_multihash_from_text(text, &b);
    if (rc == 0 && b.len != SILT_MH_LEN)
        rc = SILT_EINVAL;
    if (rc == 0)
        memcpy(out, b.data, SILT_MH_LEN);
    silt_buf_free(&b);
    return rc == SILT_ENOMEM ? silt_err(rc, "out of memory")
           : rc < 0          ? silt_err(SILT_EINVAL, "'%s' is not a block hash (multihash f1620…)", text)
                             : 0;
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
    uint64_t skip = opts ? opts->skip : 0;
    uint8_t upto[SILT_MH_LEN];
    bool as_of = opts && opts->n_as_of == 1;
    if (opts && opts->n_as_of > 1)
        rc = silt_err(SILT_EINVAL, "tail: one --as-of block at most");
    if (rc == 0 && as_of)
        rc = block_bytes(opts->as_of[0], upto);
    if (rc == 0)
        rc = silt_ds_slices(ds, as_of ? upto : NULL, n ? n + skip : 1, &sl);
    if (rc == 0)
        rc = silt_ds_vocab(ds, a, &vocab);
    silt_engine *e = NULL;
    char *tmpdir = NULL;
    if (rc == 0)
        rc = silt_ws_engine_open(ds->ws, &e, &tmpdir);
    const char *view = silt_ds_label(ds);
    char *qv = NULL;
    if (rc == 0) {
        view = silt_arena_strdup(a, view);
        qv = view ? silt_sql_ident(view) : NULL;
        if (!qv)
            rc = silt_err(SILT_ENOMEM, "tail: out of memory");
    }
    if (rc == 0 && sl.n > 0) {
        uint64_t min = 0;
        if (sl.has_last_offset && n && sl.last_offset + 1 > n + skip)
            min = sl.last_offset + 1 - n - skip;
        rc = silt_query_create_slice_view(e, view, (const char *const *)sl.files, sl.n, &vocab, min);
    } else if (rc == 0) {
        rc = silt_ds_create_view(e, ds, view, NULL, false); /* empty view or "has no data" */
    }
    /* the query is silt's, but `tail` runs like every query: confined to the
     * slices of its view (and the Parquet file it writes) */
    const char *output = opts && fmt == SILT_QFMT_PARQUET ? opts->output : NULL;
    silt_confine_opts co = {.files = output ? &output : NULL, .n_files = output ? 1 : 0};
    if (rc == 0)
        rc = silt_engine_confine(e, &co);
    char *sql = NULL;
    if (rc == 0) {
        /* with skip: the newest `skip` records (offsets above
         * last - skip) are left out */
        char *qo = skip ? silt_sql_ident(vocab.offset) : NULL;
        if (n && skip && sl.has_last_offset && sl.last_offset >= skip)
            sql = qo ? silt_arena_printf(a, "SELECT * FROM %s WHERE %s <= %llu", qv, qo,
                                         (unsigned long long)(sl.last_offset - skip))
                     : NULL;
        else if (n && (!skip || !sl.has_last_offset))
            sql = silt_arena_printf(a, "SELECT * FROM %s", qv);
        else
            sql = silt_arena_printf(a, "SELECT * FROM %s LIMIT 0", qv);
        free(qo);
        if (!sql)
            rc = silt_err(SILT_ENOMEM, "tail: out of memory");
    }
    if (rc == 0) {
        silt_query_out qo = {.fmt = fmt,
                             .out = opts ? opts->out : NULL,
                             .path = opts ? opts->output : NULL,
                             .rows_out = opts ? opts->rows_out : NULL,
                             .max_width = opts ? opts->max_width : 0,
                             .op_column = vocab.op, /* the table shows +A/-R/-C/+C */
                             .progress = opts ? opts->progress : NULL,
                             .progress_ctx = opts ? opts->progress_ctx : NULL,
                             .phase = "tail"};
        rc = silt_query_exec(e, sql, &qo);
    }
    if (e)
        rc = silt_ws_engine_close(e, tmpdir, rc);
    free(qv);
    silt_slice_list_free(&sl);
    silt_arena_free(a);
    return rc;
}

int silt_dataset_schema_get(char **out, silt_dataset *ds, silt_schema_format fmt)
{
    return silt_dataset_schema_get_at(out, ds, NULL, fmt);
}

int silt_dataset_schema_get_at(char **out, silt_dataset *ds, const char *block, silt_schema_format fmt)
{
    *out = NULL;
    uint8_t upto[SILT_MH_LEN];
    if (block && block_bytes(block, upto) < 0)
        return SILT_EINVAL;
    silt_arena *a = silt_arena_new();
    if (!a)
        return silt_err(SILT_ENOMEM, "schema: out of memory");
    odf_DataSchema *s = NULL;
    int rc = schema_at(ds, a, block ? upto : NULL, &s);
    if (rc == 0 && !s)
        rc = silt_err(SILT_ENOTFOUND, "dataset '%s' has no schema", silt_ds_label(ds));
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
