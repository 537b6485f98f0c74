/* skipped.c — names ingested by a source, and the record of files a
 * FilesGlob pull skipped (see skipped.h).
 * Invariants: the record is only replaced atomically (silt_ds_info_save)
 * under its info lock; reading it never fails a listing because of one
 * dataset whose record is unreadable (that dataset's entries are left out
 * and nothing else changes). */
#include "ingest/skipped.h"

#include "dataset/info.h"
#include "util/error.h"
#include "util/fsutil.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int silt_skipped_ingested_values(char ***out, size_t *n, silt_dataset *ds, const char *source_name,
                                 bool also_default, silt_arena *a)
{
    *out = NULL;
    *n = 0;
    size_t cap = 16, k = 0;
    char **v = malloc(cap * sizeof *v);
    if (!v)
        return silt_err(SILT_ENOMEM, "out of memory");
    bool has = !ds->st.empty;
    uint8_t hash[SILT_MH_LEN];
    memcpy(hash, ds->st.head, SILT_MH_LEN);
    int rc = 0;
    while (has && !rc) {
        odf_MetadataBlock *b = NULL;
        if ((rc = silt_ds_load_block(ds, hash, a, &b)) != 0)
            break;
        const odf_SourceState *ss = NULL;
        if (b->event.type == ODF_MetadataEvent_AddData)
            ss = ((const odf_AddData *)b->event.value)->new_source_state;
        const char *sn = ss && ss->source_name ? ss->source_name : "";
        if (ss && ss->value && (strcmp(sn, source_name) == 0 || (also_default && strcmp(sn, "default") == 0))) {
            if (k == cap) {
                char **nv = realloc(v, cap * 2 * sizeof *nv);
                if (!nv) {
                    rc = silt_err(SILT_ENOMEM, "out of memory");
                    break;
                }
                v = nv;
                cap *= 2;
            }
            if (!(v[k++] = silt_arena_strdup(a, ss->value)))
                rc = silt_err(SILT_ENOMEM, "out of memory");
        }
        has = b->prev_block_hash.data && b->prev_block_hash.len == SILT_MH_LEN;
        if (has)
            memcpy(hash, b->prev_block_hash.data, SILT_MH_LEN);
    }
    if (rc) {
        free(v);
        return rc;
    }
    qsort(v, k, sizeof *v, cmp_str);
    char **arr = silt_arena_alloc(a, (k ? k : 1) * sizeof *arr);
    if (!arr) {
        free(v);
        return silt_err(SILT_ENOMEM, "out of memory");
    }
    memcpy(arr, v, k * sizeof *arr);
    free(v);
    *out = arr;
    *n = k;
    return 0;
}

bool silt_skipped_contains(char *const *values, size_t n, const char *value)
{
    return n && bsearch(&value, values, n, sizeof *values, cmp_str) != NULL;
}

static json_t *entries_json(const char *const *files, const char *const *reasons, size_t n)
{
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < n; i++) {
        json_t *e = json_pack("{s:s,s:s}", "file", files[i], "reason", reasons[i]);
        if (!e || json_array_append_new(arr, e) != 0) {
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}

int silt_skipped_record(silt_dataset *ds, const char *source_name, const char *const *files,
                        const char *const *reasons, size_t n)
{
    if (n == 0) { /* nothing to note: only a record that exists can need a change */
        char *p = silt_path_join(ds->dir, "info", SILT_SKIPPED_RECORD, NULL);
        if (!p)
            return silt_err(SILT_ENOMEM, "out of memory");
        bool exists = access(p, F_OK) == 0;
        free(p);
        if (!exists)
            return 0;
    }
    int fd = silt_ds_info_lock(ds, "pull-skipped.lock");
    if (fd < 0)
        return fd;
    json_t *rec = NULL, *now = entries_json(files, reasons, n);
    int rc = now ? silt_ds_info_load(ds, SILT_SKIPPED_RECORD, &rec) : silt_err(SILT_ENOMEM, "out of memory");
    if (!rc) {
        json_t *was = json_object_get(rec, source_name);
        bool same = was ? json_equal(was, now) : n == 0;
        if (!same) {
            if (n)
                rc = json_object_set(rec, source_name, now) == 0 ? 0 : silt_err(SILT_ENOMEM, "out of memory");
            else
                json_object_del(rec, source_name);
            if (!rc)
                rc = silt_ds_info_save(ds, SILT_SKIPPED_RECORD, rec);
        }
    }
    json_decref(now);
    json_decref(rec);
    silt_fs_unlock(fd);
    return rc;
}

/* ---- public listing ---------------------------------------------------- */

void silt_skipped_files_free(silt_skipped_file *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++) {
        free(v[i].dataset);
        free(v[i].source);
        free(v[i].file);
        free(v[i].reason);
    }
    free(v);
}

/* Appends the entries of one dataset's record to *v. */
static int add_record(silt_skipped_file **v, size_t *n, size_t *cap, const char *dsname, json_t *rec)
{
    const char *src;
    json_t *arr;
    json_object_foreach(rec, src, arr)
    {
        size_t i;
        json_t *e;
        json_array_foreach(arr, i, e)
        {
            const char *file = json_string_value(json_object_get(e, "file"));
            const char *reason = json_string_value(json_object_get(e, "reason"));
            if (!file || !reason)
                continue;
            if (*n == *cap) {
                size_t nc = *cap ? *cap * 2 : 8;
                silt_skipped_file *nv = realloc(*v, nc * sizeof *nv);
                if (!nv)
                    return silt_err(SILT_ENOMEM, "out of memory");
                *v = nv;
                *cap = nc;
            }
            silt_skipped_file *s = &(*v)[*n];
            s->dataset = strdup(dsname);
            s->source = strdup(src);
            s->file = strdup(file);
            s->reason = strdup(reason);
            (*n)++;
            if (!s->dataset || !s->source || !s->file || !s->reason)
                return silt_err(SILT_ENOMEM, "out of memory");
        }
    }
    return 0;
}

int silt_pull_skipped_list(silt_skipped_file **out, size_t *n_out, silt_workspace *ws)
{
    *out = NULL;
    *n_out = 0;
    char **names = NULL;
    int rc = silt_dataset_list(&names, ws);
    if (rc < 0)
        return rc;
    silt_skipped_file *v = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; names[i] && rc >= 0; i++) {
        char *dir = NULL;
        if (silt_ws_find_by_name(ws, names[i], &dir) != 0) {
            silt_err_clear();
            continue;
        }
        char *p = silt_path_join(dir, "info", SILT_SKIPPED_RECORD, NULL);
        free(dir);
        if (!p) {
            rc = silt_err(SILT_ENOMEM, "out of memory");
            break;
        }
        json_error_t je;
        json_t *rec = json_load_file(p, 0, &je);
        free(p);
        if (json_is_object(rec))
            rc = add_record(&v, &n, &cap, names[i], rec);
        json_decref(rec);
    }
    silt_strv_free(names);
    if (rc < 0) {
        silt_skipped_files_free(v, n);
        return rc;
    }
    *out = v;
    *n_out = n;
    return 0;
}
