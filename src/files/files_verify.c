/* files_verify.c — what `silt verify` checks of a files dataset beyond its
 * chain: every file object linked by the rows of the chain.
 *
 * A linked object must exist in data/ with the size its rows give. A
 * missing object recorded in the purge record (info/purged.json) was
 * purged by retention and is not a problem; any other missing or
 * wrong-sized object is reported. Problems are reported, never returned as
 * errors; only I/O errors of the workspace and out-of-memory abort.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataset/data_views.h"
#include "dataset/dataset_internal.h"
#include "files/files.h"
#include "files/purged.h"
#include "util/error.h"

typedef struct link_ctx {
    silt_dataset *ds;
    json_t *pobj;
    silt_report_fn report;
    void *rctx;
    silt_verify_tally *tally;
} link_ctx;

static void problem(link_ctx *l, const char *line)
{
    l->tally->corrupt++;
    if (l->report)
        l->report(l->rctx, line);
}

/* One linked object: (content_hash, path, rid, size). */
static int on_link(void *ctx, size_t ncols, const char *const *names, const char *const *v)
{
    (void)names;
    link_ctx *l = ctx;
    if (ncols < 4 || !v[0])
        return 0;
    silt_buf b = SILT_BUF_INIT;
    char line[1024];
    if (silt_multihash_from_text(v[0], &b) || b.len != SILT_MH_LEN) {
        silt_err_clear();
        snprintf(line, sizeof line, "file '%s' (transaction %s): invalid content hash '%s'", v[1] ? v[1] : "",
                 v[2] ? v[2] : "", v[0]);
        problem(l, line);
        silt_buf_free(&b);
        return 0;
    }
    uint64_t size = 0;
    int st = silt_store_stat(l->ds->store, "data", (const uint8_t *)b.data, &size);
    silt_buf_free(&b);
    if (st < 0)
        return st == SILT_ENOMEM ? st : (silt_err_clear(), 0);
    if (st == 0) {
        if (json_object_get(l->pobj, v[0]))
            return 0; /* purged by retention: recorded, not a problem */
        snprintf(line, sizeof line, "file object %s ('%s', transaction %s): missing (not purged by retention)", v[0],
                 v[1] ? v[1] : "", v[2] ? v[2] : "");
        problem(l, line);
    } else if (v[3] && size != strtoull(v[3], NULL, 10)) {
        snprintf(line, sizeof line, "file object %s ('%s', transaction %s): size %llu but the entry says %s", v[0],
                 v[1] ? v[1] : "", v[2] ? v[2] : "", (unsigned long long)size, v[3]);
        problem(l, line);
    }
    return 0;
}

/* SELECT of every linked object of the slices `sl`. */
static int links_sql(silt_buf *sql, const silt_slice_list *sl)
{
    int rc = silt_buf_puts(sql, "SELECT content_hash, min(path), min(transaction_rid), min(size) FROM read_parquet([");
    for (size_t i = 0; rc == 0 && i < sl->n; i++) {
        char *q = silt_sql_str(sl->files[i]);
        rc = q ? silt_buf_printf(sql, "%s%s", i ? ", " : "", q) : SILT_ENOMEM;
        free(q);
    }
    if (rc == 0)
        rc = silt_buf_puts(sql, "]) WHERE op IN (0, 3) GROUP BY content_hash ORDER BY 2");
    return rc == SILT_ENOMEM ? silt_err(SILT_ENOMEM, "out of memory") : rc;
}

int silt_files_verify(silt_dataset *ds, silt_report_fn report, void *rctx, silt_verify_tally *tally)
{
    int rc = silt_files_is_files(ds);
    if (rc <= 0)
        return rc;
    silt_slice_list sl;
    rc = silt_ds_slices(ds, NULL, 0, &sl);
    if (rc == SILT_ECORRUPT) /* a missing slice: reported by the chain check */
        return silt_err_clear(), 0;
    if (rc < 0 || sl.n == 0)
        return rc;
    json_t *purged = NULL;
    silt_buf sql = SILT_BUF_INIT;
    silt_engine *e = NULL;
    char *tmpdir = NULL;
    rc = silt_purge_record_load(ds, &purged);
    if (!rc)
        rc = links_sql(&sql, &sl);
    if (!rc)
        rc = silt_ws_engine_open(ds->ws, &e, &tmpdir);
    link_ctx l = {ds, json_object_get(purged, "objects"), report, rctx, tally};
    if (!rc) {
        rc = silt_engine_query_rows(e, sql.data, on_link, &l);
        if (rc < 0 && rc != SILT_ENOMEM) {
            char line[1024];
            snprintf(line, sizeof line, "cannot check the file objects: %s", silt_error_last());
            problem(&l, line);
            rc = 0;
        }
        rc = silt_ws_engine_close(e, tmpdir, rc);
    }
    silt_buf_free(&sql);
    json_decref(purged);
    silt_slice_list_free(&sl);
    return rc;
}
