/* files.c — files datasets (see files.h): creation, logical paths, content
 * types, the projection of views from the chain, and the commit of one
 * transaction as one AddData.
 *
 * Invariants:
 *  - the chain is the only truth about committed transactions: an AddData
 *    whose extra holds "silt.dev/transaction" {rid, type} IS the commit of
 *    that transaction (txn records under txn/ are bookkeeping);
 *  - a view is the changelog projection of the rows up to a block: a path is
 *    in the view when its last row (by offset) is +A or +C. For a block B,
 *    view(B) = checkpoint C (the view after the block that introduced C,
 *    i.e. whose prevCheckpoint differs from its newCheckpoint) updated by
 *    the slices of the AddData blocks after it up to B; every other block
 *    only carries C over. This equals the spec's algorithm because every
 *    transaction's rows are exactly its effect on the view (SNAPSHOT retracts
 *    every file it does not re-put);
 *  - a commit writes the slice and checkpoint objects first and publishes
 *    the AddData with one compare-and-swap of the branch ref: it is fully
 *    visible or not at all; the watermark is the commit time, strictly
 *    increasing, so even a transaction without rows is a valid AddData.
 */
#include "files/files.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dataset/dataset_internal.h"
#include "dataset/data_views.h"
#include "engine/engine.h"
#include "engine/schema.h"
#include "engine/writer.h"
#include "odf/json.h"
#include "util/error.h"
#include "util/fsutil.h"
#include "util/hash.h"

#define ARCHETYPE_KEY "silt.dev/archetype"
#define TXN_KEY "silt.dev/transaction"
#define CP_EVERY_SLICES 32

/* ---- small helpers -------------------------------------------------------- */

const char *silt_txn_type_name(silt_txn_type t)
{
    switch (t) {
    case SILT_TXN_SNAPSHOT: return "SNAPSHOT";
    case SILT_TXN_APPEND: return "APPEND";
    case SILT_TXN_UPDATE: return "UPDATE";
    case SILT_TXN_DELETE: return "DELETE";
    }
    return "?";
}

const char *silt_txn_status_name(silt_txn_status s)
{
    switch (s) {
    case SILT_TXN_OPEN: return "OPEN";
    case SILT_TXN_COMMITTED: return "COMMITTED";
    case SILT_TXN_ABORTED: return "ABORTED";
    }
    return "?";
}

int silt_txn_type_parse(silt_txn_type *out, const char *name)
{
    static const char *const N[] = {"SNAPSHOT", "APPEND", "UPDATE", "DELETE"};
    for (int i = 0; name && i < 4; i++)
        if (strcasecmp(name, N[i]) == 0) {
            *out = (silt_txn_type)i;
            return 0;
        }
    return silt_err(SILT_EINVAL, "invalid transaction type '%s' (use snapshot, append, update or delete)",
                    name ? name : "");
}

const char *silt_files_content_type(const char *path)
{
    static const char *const T[][2] = {
        {"csv", "text/csv"},          {"tsv", "text/tab-separated-values"},
        {"txt", "text/plain"},        {"md", "text/markdown"},
        {"json", "application/json"}, {"ndjson", "application/x-ndjson"},
        {"geojson", "application/geo+json"}, {"parquet", "application/vnd.apache.parquet"},
        {"xml", "application/xml"},   {"yaml", "application/yaml"},
        {"yml", "application/yaml"},  {"html", "text/html"},
        {"pdf", "application/pdf"},   {"png", "image/png"},
        {"jpg", "image/jpeg"},        {"jpeg", "image/jpeg"},
        {"gif", "image/gif"},         {"svg", "image/svg+xml"},
        {"tif", "image/tiff"},        {"tiff", "image/tiff"},
        {"zip", "application/zip"},   {"gz", "application/gzip"},
        {"avro", "application/avro"}, {"shp", "application/x-esri-shape"},
    };
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    if (dot && dot != base)
        for (size_t i = 0; i < sizeof T / sizeof T[0]; i++)
            if (strcasecmp(dot + 1, T[i][0]) == 0)
                return T[i][1];
    return "application/octet-stream";
}

int silt_files_path_normalize(char **out, const char *path)
{
    *out = NULL;
    if (!path || !*path)
        return silt_err(SILT_EINVAL, "invalid logical path '': empty");
    const char *p = path;
    if (strncmp(p, "./", 2) == 0)
        p += 2;
    size_t len = strlen(p);
    if (len > 1024)
        return silt_err(SILT_EINVAL, "invalid logical path '%.40s…': longer than 1024 bytes", path);
    if (p[0] == '/')
        return silt_err(SILT_EINVAL, "invalid logical path '%s': absolute paths are not allowed", path);
    if (len == 0)
        return silt_err(SILT_EINVAL, "invalid logical path '%s': empty", path);
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f)
            return silt_err(SILT_EINVAL, "invalid logical path '%s': control characters are not allowed", path);
    const char *seg = p;
    for (;;) {
        const char *end = strchr(seg, '/');
        size_t n = end ? (size_t)(end - seg) : strlen(seg);
        if (n == 0)
            return silt_err(SILT_EINVAL, "invalid logical path '%s': empty path segment", path);
        if (n == 2 && seg[0] == '.' && seg[1] == '.')
            return silt_err(SILT_EINVAL, "invalid logical path '%s': '..' is not allowed", path);
        if (n == 1 && seg[0] == '.')
            return silt_err(SILT_EINVAL, "invalid logical path '%s': '.' segments are not allowed", path);
        if (!end)
            break;
        seg = end + 1;
    }
    *out = strdup(p);
    return *out ? 0 : silt_err(SILT_ENOMEM, "out of memory");
}

/* ---- schema / archetype ------------------------------------------------------ */

static const char *const SCHEMA_SQL =
    "CREATE OR REPLACE TEMP TABLE __silt_files_schema (\"offset\" UBIGINT, op UTINYINT, "
    "system_time TIMESTAMP_MS, event_time TIMESTAMP_MS, path VARCHAR, content_hash VARCHAR, "
    "size BIGINT, content_type VARCHAR, transaction_rid VARCHAR, transaction_type VARCHAR)";

/* An engine spilling into a private scratch directory of the workspace
 * (*tmp, malloc'd; never the shared tmp/spill, whose files another
 * process's engine may delete when it closes); close it with
 * silt_ws_engine_close. */
static int open_engine(silt_dataset *ds, silt_engine **e, char **tmp)
{
    return silt_ws_engine_open(ds->ws, e, tmp);
}

/* The non-nullable columns of the file entries (schema and slices). */
static const char *const FILES_REQUIRED[] = {"offset", "op", "system_time", "event_time", "path", "content_hash",
                                             "size", "transaction_rid", "transaction_type", NULL};

static int files_schema(silt_engine *e, silt_arena *a, odf_DataSchema **out)
{
    int rc = silt_engine_exec(e, SCHEMA_SQL);
    if (!rc)
        rc = silt_schema_from_table(e, a, "__silt_files_schema", FILES_REQUIRED, out);
    if (rc)
        return rc;
    odf_DataSchema *s = *out;
    odf_ExtraAttributes *se = silt_arena_alloc(a, sizeof *se);
    odf_ExtraAttributes *fe = silt_arena_alloc(a, sizeof *fe);
    if (!se || !fe)
        return SILT_ENOMEM;
    se->entries = silt_arena_strdup(a, "{\"" ARCHETYPE_KEY "\":\"Files\"}");
    fe->entries = silt_arena_strdup(a, "{\"opendatafabric.org/type\":{\"kind\":\"ObjectLink\",\"linkType\":{\"kind\":"
                                       "\"Multihash\"}}}");
    if (!se->entries || !fe->entries)
        return SILT_ENOMEM;
    s->extra = se;
    for (size_t i = 0; i < s->fields.n; i++) {
        odf_DataField *f = ((odf_DataField **)s->fields.items)[i];
        if (strcmp(f->name, "content_hash") == 0)
            f->extra = fe;
    }
    return 0;
}

int silt_files_create(silt_dataset **out, silt_workspace *ws, const char *name)
{
    *out = NULL;
    silt_dataset *ds = NULL;
    int rc = silt_dataset_create(&ds, ws, name, SILT_ROOT);
    if (rc)
        return rc;
    silt_engine *e = NULL;
    char *etmp = NULL;
    silt_arena *a = silt_arena_new();
    odf_DataSchema *schema = NULL;
    rc = a ? open_engine(ds, &e, &etmp) : SILT_ENOMEM;
    if (!rc)
        rc = files_schema(e, a, &schema);
    if (!rc) {
        odf_SetDataSchema sds = {.schema = schema};
        odf_union ev = {ODF_MetadataEvent_SetDataSchema, &sds};
        rc = silt_ds_append_event(ds, &ev, NULL);
    }
    rc = silt_ws_engine_close(e, etmp, rc);
    silt_arena_free(a);
    if (rc) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", silt_error_last());
        silt_dataset_free(ds);
        silt_dataset_delete(ws, name); /* nothing half-done stays visible */
        return silt_err(rc, "%s", msg);
    }
    *out = ds;
    return 0;
}

/* ---- the archetype cache of silt_files_is_files ---------------------------------
 *
 * Whether a SetDataSchema block declares the Files archetype is a function
 * of the block, and a block is named by the hash of its bytes: a
 * long-running process (silt_process_caches_on) remembers the answer per
 * schema block hash instead of loading and decoding the block on every
 * request. A new schema is a new block, a new key. */

#define ARCHETYPE_CACHE_SLOTS 64

static struct {
    uint8_t hash[SILT_MH_LEN];
    int is; /* 0 or 1; -1 = free slot */
} g_arch[ARCHETYPE_CACHE_SLOTS];
static size_t g_arch_next, g_arch_used;
static pthread_mutex_t g_arch_lock = PTHREAD_MUTEX_INITIALIZER;

/* 0 / 1 from the cache, or -1 when not cached. */
static int archetype_cache_get(const uint8_t hash[SILT_MH_LEN])
{
    int is = -1;
    pthread_mutex_lock(&g_arch_lock);
    for (size_t i = 0; i < g_arch_used && is < 0; i++)
        if (memcmp(g_arch[i].hash, hash, SILT_MH_LEN) == 0)
            is = g_arch[i].is;
    pthread_mutex_unlock(&g_arch_lock);
    return is;
}

static void archetype_cache_put(const uint8_t hash[SILT_MH_LEN], int is)
{
    pthread_mutex_lock(&g_arch_lock);
    size_t slot = g_arch_next;
    g_arch_next = (g_arch_next + 1) % ARCHETYPE_CACHE_SLOTS;
    if (g_arch_used < ARCHETYPE_CACHE_SLOTS)
        g_arch_used++;
    memcpy(g_arch[slot].hash, hash, SILT_MH_LEN);
    g_arch[slot].is = is;
    pthread_mutex_unlock(&g_arch_lock);
}

int silt_files_is_files(silt_dataset *ds)
{
    int rc = silt_ds_sync(ds);
    if (rc)
        return rc;
    if (!ds->st.schema.present)
        return 0;
    bool cache = silt_process_caches_on();
    int known = cache ? archetype_cache_get(ds->st.schema.hash) : -1;
    if (known >= 0)
        return known;
    silt_arena *a = silt_arena_new();
    if (!a)
        return SILT_ENOMEM;
    odf_MetadataBlock *b = NULL;
    rc = silt_ds_load_block(ds, ds->st.schema.hash, a, &b);
    int is = 0;
    if (!rc && b->event.type == ODF_MetadataEvent_SetDataSchema) {
        odf_SetDataSchema *s = b->event.value;
        is = s->schema && s->schema->extra && s->schema->extra->entries &&
             strstr(s->schema->extra->entries, "\"" ARCHETYPE_KEY "\":\"Files\"") != NULL;
    }
    silt_arena_free(a);
    if (!rc && cache)
        archetype_cache_put(ds->st.schema.hash, is);
    return rc ? rc : is;
}

int silt_files_require(silt_dataset *ds)
{
    int rc = silt_files_is_files(ds);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return silt_err(SILT_EINVAL, "dataset '%s' is not a files dataset (create it with 'silt new %s --files')",
                        ds->name, ds->name);
    return 0;
}

/* ---- chain walking ------------------------------------------------------------- */

/* One block as the view code sees it. */
typedef struct tblock {
    uint8_t hash[SILT_MH_LEN];
    bool is_add;        /* AddData */
    const char *rid;    /* transaction rid (arena) or NULL */
    silt_txn_type type;
    bool has_slice;
    uint8_t slice[SILT_MH_LEN];
    uint64_t slice_size;
    uint64_t nrows;
    bool cp_introduced; /* newCheckpoint present and != prevCheckpoint */
    uint8_t cp[SILT_MH_LEN];
    uint64_t cp_size;
    int64_t sys_ms;
} tblock;

typedef struct tlist {
    tblock *v; /* newest first */
    size_t n, cap;
} tlist;

static int tlist_push(tlist *l, const tblock *b)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        tblock *nv = realloc(l->v, cap * sizeof *nv);
        if (!nv)
            return silt_err(SILT_ENOMEM, "out of memory");
        l->v = nv;
        l->cap = cap;
    }
    l->v[l->n++] = *b;
    return 0;
}

/* Parses the transaction attribute of an AddData extra. */
static int parse_txn_extra(silt_arena *a, const char *entries, const char **rid, silt_txn_type *type)
{
    *rid = NULL;
    if (!entries || !strstr(entries, TXN_KEY))
        return 0;
    json_error_t err;
    json_t *j = json_loads(entries, 0, &err);
    if (!j)
        return 0;
    json_t *t = json_object_get(j, TXN_KEY);
    const char *r = json_string_value(json_object_get(t, "rid"));
    const char *ty = json_string_value(json_object_get(t, "type"));
    int rc = 0;
    if (r && ty && silt_txn_type_parse(type, ty) == 0) {
        *rid = silt_arena_strdup(a, r);
        if (!*rid)
            rc = SILT_ENOMEM;
    }
    silt_err_clear();
    json_decref(j);
    return rc;
}

/* Walks back from `from` (NULL = head). With stop_at_cp, stops after the
 * block that introduced the checkpoint in force (that block is included).
 * Stops at the Seed. Blocks are appended newest first. */
static int walk(silt_dataset *ds, silt_arena *a, const uint8_t *from, bool stop_at_cp, tlist *out)
{
    int rc = silt_ds_sync(ds);
    if (rc)
        return rc;
    uint8_t cur[SILT_MH_LEN];
    memcpy(cur, from ? from : ds->st.head, SILT_MH_LEN);
    for (;;) {
        odf_MetadataBlock *b = NULL;
        rc = silt_ds_load_block(ds, cur, a, &b);
        if (rc)
            return rc;
        tblock t;
        memset(&t, 0, sizeof t);
        memcpy(t.hash, cur, SILT_MH_LEN);
        t.sys_ms = silt_time_to_ms((silt_time){b->system_time.sec, b->system_time.nsec});
        if (b->event.type == ODF_MetadataEvent_AddData) {
            odf_AddData *ad = b->event.value;
            t.is_add = true;
            rc = parse_txn_extra(a, ad->extra ? ad->extra->entries : NULL, &t.rid, &t.type);
            if (rc)
                return rc;
            if (ad->new_data && ad->new_data->physical_hash.len == SILT_MH_LEN) {
                t.has_slice = true;
                memcpy(t.slice, ad->new_data->physical_hash.data, SILT_MH_LEN);
                t.slice_size = ad->new_data->size;
                if (ad->new_data->offset_interval)
                    t.nrows = ad->new_data->offset_interval->end - ad->new_data->offset_interval->start + 1;
            }
            if (ad->new_checkpoint && ad->new_checkpoint->physical_hash.len == SILT_MH_LEN &&
                (ad->prev_checkpoint.len != SILT_MH_LEN ||
                 memcmp(ad->prev_checkpoint.data, ad->new_checkpoint->physical_hash.data, SILT_MH_LEN) != 0)) {
                t.cp_introduced = true;
                memcpy(t.cp, ad->new_checkpoint->physical_hash.data, SILT_MH_LEN);
                t.cp_size = ad->new_checkpoint->size;
            }
        }
        rc = tlist_push(out, &t);
        if (rc)
            return rc;
        if (stop_at_cp && t.cp_introduced)
            return 0;
        if (b->prev_block_hash.len != SILT_MH_LEN)
            return 0;
        memcpy(cur, b->prev_block_hash.data, SILT_MH_LEN);
    }
}

silt_time silt_files_commit_time(const silt_dataset *ds)
{
    silt_time now = silt_time_now();
    silt_time last = {ds->st.last_system_time.sec, ds->st.last_system_time.nsec};
    if (!ds->st.empty && silt_time_cmp(now, last) < 0)
        now = last;
    int64_t ms = silt_time_to_ms(now);
    if (silt_time_cmp(silt_time_from_ms(ms), now) < 0)
        ms++;
    if (ds->st.has_watermark) {
        int64_t wm = silt_time_to_ms((silt_time){ds->st.watermark.sec, ds->st.watermark.nsec});
        if (ms <= wm)
            ms = wm + 1;
    }
    return silt_time_from_ms(ms);
}

int silt_files_commits(silt_dataset *ds, silt_files_commit_info **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    silt_arena *a = silt_arena_new();
    if (!a)
        return silt_err(SILT_ENOMEM, "out of memory");
    tlist l = {0};
    int rc = walk(ds, a, NULL, false, &l);
    size_t n = 0;
    silt_files_commit_info *v = rc ? NULL : calloc(l.n ? l.n : 1, sizeof *v);
    if (!rc && !v)
        rc = silt_err(SILT_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < l.n; i++) {
        if (!l.v[i].rid)
            continue;
        silt_files_commit_info *c = &v[n++];
        snprintf(c->rid, sizeof c->rid, "%s", l.v[i].rid);
        c->type = l.v[i].type;
        memcpy(c->block, l.v[i].hash, SILT_MH_LEN);
        c->time_ms = l.v[i].sys_ms;
    }
    free(l.v);
    silt_arena_free(a);
    if (rc) {
        free(v);
        return rc;
    }
    *out = v;
    *n_out = n;
    return 0;
}

/* ---- views ---------------------------------------------------------------------- */

struct silt_view {
    silt_arena *a;
    silt_file_entry *e;
    size_t n, cap;
    atomic_int refs; /* 1 when made; the view cache holds one more (silt_files_view) */
};

size_t silt_view_count(const silt_view *v) { return v ? v->n : 0; }

const silt_file_entry *silt_view_entry(const silt_view *v, size_t i)
{
    return v && i < v->n ? &v->e[i] : NULL;
}

const silt_file_entry *silt_view_find(const silt_view *v, const char *path)
{
    size_t lo = 0, hi = v ? v->n : 0;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(v->e[mid].path, path);
        if (c == 0)
            return &v->e[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

void silt_view_free(silt_view *v)
{
    if (!v || atomic_fetch_sub(&v->refs, 1) > 1)
        return;
    silt_arena_free(v->a);
    free(v->e);
    free(v);
}

static const char *const EMPTY_VIEW =
    "SELECT CAST(NULL AS VARCHAR) AS path, CAST(NULL AS VARCHAR) AS content_hash, CAST(NULL AS BIGINT) AS size, "
    "CAST(NULL AS VARCHAR) AS content_type, CAST(NULL AS VARCHAR) AS transaction_rid, CAST(NULL AS VARCHAR) AS "
    "transaction_type, CAST(NULL AS TIMESTAMP) AS event_time WHERE false";
#define VIEW_COLS "path, content_hash, size, content_type, transaction_rid, transaction_type"

/* Appends "'<object path>'" of kind/mh to sql. */
static int put_obj(silt_dataset *ds, silt_buf *sql, const char *kind, const uint8_t mh[SILT_MH_LEN])
{
    char *p = silt_store_object_path(ds->store, kind, mh);
    char *q = p ? silt_sql_str(p) : NULL;
    free(p);
    if (!q)
        return silt_err(SILT_ENOMEM, "out of memory");
    int rc = silt_buf_puts(sql, q);
    free(q);
    return rc;
}

/* An object of block `t` read back to build a view: the checkpoint, and the
 * slices replayed on it (the next commit's checkpoint is made from them),
 * must have the size and hash the block gives (`full`); a slice read for a
 * range only its size (its hashes are `silt verify`'s). */
static int check_read_back(silt_dataset *ds, const tblock *t, const char *kind, bool full)
{
    bool cp = strcmp(kind, "checkpoints") == 0;
    const uint8_t *mh = cp ? t->cp : t->slice;
    uint64_t want = cp ? t->cp_size : t->slice_size, size = 0;
    int rc = 0;
    if (full) {
        rc = silt_store_check_object(ds->store, kind, mh, want);
    } else {
        int st = silt_store_stat(ds->store, kind, mh, &size);
        char text[SILT_MH_TEXT_LEN + 1];
        silt_multihash_to_text(mh, SILT_MH_LEN, text);
        if (st < 0)
            rc = st;
        else if (st == 0)
            rc = silt_err(SILT_ENOTFOUND, "%s/%s is missing", kind, text);
        else if (size != want)
            rc = silt_err(SILT_ECORRUPT, "%s/%s has %llu bytes, expected %llu", kind, text,
                          (unsigned long long)size, (unsigned long long)want);
    }
    if (rc == 0)
        return 0;
    char msg[512], blk[SILT_MH_TEXT_LEN + 1];
    snprintf(msg, sizeof msg, "%s", silt_error_last());
    silt_multihash_to_text(t->hash, SILT_MH_LEN, blk);
    return silt_err(rc == SILT_EIO ? rc : SILT_ECORRUPT, "%s (%s of block %s); run 'silt verify %s'", msg,
                    cp ? "newCheckpoint" : "newData", blk, silt_ds_label(ds));
}

/* Stats of the last view built. */
typedef struct view_stats {
    size_t replay_slices;
    uint64_t replay_rows;
} view_stats;

/* Creates TEMP TABLE `table` (path … transaction_type, event_time TIMESTAMP)
 * holding the view as of block `at` (NULL = head). */
static int build_view_at(silt_dataset *ds, silt_engine *e, const uint8_t *at, const char *table,
                         view_stats *stats)
{
    silt_arena *a = silt_arena_new();
    if (!a)
        return SILT_ENOMEM;
    tlist l = {0};
    silt_buf sql = SILT_BUF_INIT;
    int rc = walk(ds, a, at, true, &l);
    size_t nslices = 0;
    uint64_t nrows = 0;
    const tblock *cp = NULL;
    for (size_t i = 0; !rc && i < l.n; i++) {
        if (l.v[i].cp_introduced) {
            cp = &l.v[i];
            break;
        }
        if (l.v[i].has_slice) {
            nslices++;
            nrows += l.v[i].nrows;
        }
    }
    if (!rc && cp)
        rc = check_read_back(ds, cp, "checkpoints", true);
    for (size_t i = 0; !rc && i < l.n && &l.v[i] != cp; i++)
        if (l.v[i].has_slice)
            rc = check_read_back(ds, &l.v[i], "data", true);
    if (!rc)
        rc = silt_buf_printf(&sql, "CREATE OR REPLACE TEMP TABLE %s AS WITH b AS (", table);
    if (!rc && cp) {
        rc = silt_buf_puts(&sql, "SELECT " VIEW_COLS ", CAST(event_time AS TIMESTAMP) AS event_time FROM read_parquet(");
        if (!rc)
            rc = put_obj(ds, &sql, "checkpoints", cp->cp);
        if (!rc)
            rc = silt_buf_puts(&sql, ")");
    } else if (!rc) {
        rc = silt_buf_puts(&sql, EMPTY_VIEW);
    }
    if (!rc)
        rc = silt_buf_puts(&sql, ")");
    if (!rc && nslices == 0) {
        rc = silt_buf_puts(&sql, " SELECT * FROM b");
    } else if (!rc) {
        rc = silt_buf_puts(&sql, ", r AS (SELECT * FROM read_parquet([");
        size_t k = 0;
        for (size_t i = 0; !rc && i < l.n && &l.v[i] != cp; i++) {
            if (!l.v[i].has_slice)
                continue;
            if (k++)
                rc = silt_buf_puts(&sql, ", ");
            if (!rc)
                rc = put_obj(ds, &sql, "data", l.v[i].slice);
        }
        if (!rc)
            rc = silt_buf_puts(
                &sql, "])), l AS (SELECT * FROM r QUALIFY row_number() OVER (PARTITION BY path ORDER BY \"offset\" "
                      "DESC) = 1) SELECT * FROM b WHERE NOT EXISTS (SELECT 1 FROM l WHERE l.path = b.path) "
                      "UNION ALL SELECT " VIEW_COLS ", CAST(event_time AS TIMESTAMP) AS event_time FROM l "
                      "WHERE op IN (0, 3)");
    }
    if (!rc)
        rc = silt_engine_exec(e, sql.data);
    if (rc)
        silt_err_context(rc, "view of %s", silt_ds_label(ds));
    if (stats) {
        stats->replay_slices = nslices;
        stats->replay_rows = nrows;
    }
    silt_buf_free(&sql);
    free(l.v);
    silt_arena_free(a);
    return rc;
}

static int collect_entry(void *ctx, size_t ncols, const char *const *names, const char *const *v)
{
    (void)names;
    silt_view *vw = ctx;
    if (ncols < 7)
        return silt_err(SILT_EINTERNAL, "view: unexpected columns");
    if (vw->n == vw->cap) {
        size_t cap = vw->cap ? vw->cap * 2 : 64;
        silt_file_entry *ne = realloc(vw->e, cap * sizeof *ne);
        if (!ne)
            return silt_err(SILT_ENOMEM, "out of memory");
        vw->e = ne;
        vw->cap = cap;
    }
    silt_file_entry *e = &vw->e[vw->n];
    memset(e, 0, sizeof *e);
    e->path = silt_arena_strdup(vw->a, v[0] ? v[0] : "");
    e->content_hash = silt_arena_strdup(vw->a, v[1] ? v[1] : "");
    e->size = v[2] ? strtoull(v[2], NULL, 10) : 0;
    e->content_type = silt_arena_strdup(vw->a, v[3] ? v[3] : "");
    e->rid = silt_arena_strdup(vw->a, v[4] ? v[4] : "");
    if (!v[5] || silt_txn_type_parse(&e->txn_type, v[5]) < 0)
        e->txn_type = SILT_TXN_UPDATE;
    silt_err_clear();
    silt_time_format(silt_time_from_ms(v[6] ? strtoll(v[6], NULL, 10) : 0), e->time);
    if (!e->path || !e->content_hash || !e->content_type || !e->rid)
        return SILT_ENOMEM;
    vw->n++;
    return 0;
}

static int view_from_table(silt_engine *e, const char *table, silt_view **out)
{
    *out = NULL;
    silt_view *v = calloc(1, sizeof *v);
    if (!v || !(v->a = silt_arena_new())) {
        free(v);
        return silt_err(SILT_ENOMEM, "out of memory");
    }
    atomic_init(&v->refs, 1);
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT " VIEW_COLS ", epoch_ms(event_time) FROM %s ORDER BY path", table);
    int rc = silt_engine_query_rows(e, sql, collect_entry, v);
    if (rc) {
        silt_view_free(v);
        return rc;
    }
    *out = v;
    return 0;
}

/* Index (in l, newest first) of the AddData of transaction rid, or -1. */
static long find_rid(const tlist *l, const char *rid)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].rid && strcmp(l->v[i].rid, rid) == 0)
            return (long)i;
    return -1;
}

static int not_committed(silt_dataset *ds, const char *rid)
{
    return silt_err(SILT_ENOTFOUND, "transaction %s is not committed on branch %s of %s", rid, ds->branch,
                    ds->name);
}

/* Range view START..END into TEMP TABLE `table`. */
static int build_range(silt_dataset *ds, silt_engine *e, const tlist *l, const char *start, const char *end,
                       const char *table)
{
    long is = find_rid(l, start), ie = find_rid(l, end);
    if (is < 0)
        return not_committed(ds, start);
    if (ie < 0)
        return not_committed(ds, end);
    if (ie > is) /* newest first: END must be newer (smaller index) */
        return silt_err(SILT_EINVAL, "range %s..%s: START is after END", start, end);
    /* an intermediate SNAPSHOT (in (start, end]) begins a new view */
    long begin = is;
    for (long i = ie; i < is; i++)
        if (l->v[i].rid && l->v[i].type == SILT_TXN_SNAPSHOT) {
            begin = i;
            break;
        }
    silt_buf sql = SILT_BUF_INIT;
    int rc = silt_buf_printf(&sql, "CREATE OR REPLACE TEMP TABLE %s AS WITH r AS (", table);
    size_t k = 0;
    for (long i = begin; !rc && i >= ie; i--) {
        const tblock *t = &l->v[i];
        if (!t->has_slice)
            continue;
        rc = check_read_back(ds, t, "data", false);
        if (!rc && k++)
            rc = silt_buf_puts(&sql, " UNION ALL ");
        if (!rc)
            rc = silt_buf_printf(&sql, "SELECT \"offset\", op, " VIEW_COLS ", event_time, %s AS del FROM read_parquet(",
                                 t->rid && t->type == SILT_TXN_DELETE ? "true" : "false");
        if (!rc)
            rc = put_obj(ds, &sql, "data", t->slice);
        if (!rc)
            rc = silt_buf_puts(&sql, ")");
    }
    if (!rc && k == 0)
        rc = silt_buf_printf(&sql, "SELECT CAST(0 AS UBIGINT) AS \"offset\", CAST(0 AS UTINYINT) AS op, * EXCLUDE "
                                   "(event_time), CAST(NULL AS TIMESTAMP_MS) AS event_time, false AS del FROM (%s)",
                             EMPTY_VIEW);
    if (!rc)
        rc = silt_buf_puts(&sql, "), l AS (SELECT * FROM r WHERE op IN (0, 3) OR (op = 1 AND del) QUALIFY "
                                 "row_number() OVER (PARTITION BY path ORDER BY \"offset\" DESC) = 1) SELECT " VIEW_COLS
                                 ", CAST(event_time AS TIMESTAMP) AS event_time FROM l WHERE op IN (0, 3)");
    if (!rc)
        rc = silt_engine_exec(e, sql.data);
    silt_buf_free(&sql);
    return rc;
}

/* Builds the requested view into TEMP TABLE __silt_view. */
static int build_view(silt_dataset *ds, silt_engine *e, const silt_view_spec *spec)
{
    bool range = spec && (spec->range_start || spec->range_end);
    bool at = spec && spec->at;
    if (range && (!spec->range_start || !spec->range_end))
        return silt_err(SILT_EINVAL, "a range needs START..END");
    if (range && at)
        return silt_err(SILT_EINVAL, "give either a transaction (--at) or a range, not both");
    if (!range && !at)
        return build_view_at(ds, e, NULL, "__silt_view", NULL);
    silt_arena *a = silt_arena_new();
    if (!a)
        return SILT_ENOMEM;
    tlist l = {0};
    int rc = walk(ds, a, NULL, false, &l);
    if (!rc && at) {
        long i = find_rid(&l, spec->at);
        if (i < 0)
            rc = not_committed(ds, spec->at);
        else
            rc = build_view_at(ds, e, l.v[i].hash, "__silt_view", NULL);
    } else if (!rc) {
        rc = build_range(ds, e, &l, spec->range_start, spec->range_end, "__silt_view");
    }
    free(l.v);
    silt_arena_free(a);
    return rc;
}

int silt_view_get(silt_view **out, silt_dataset *ds, const silt_view_spec *spec)
{
    *out = NULL;
    int rc = silt_files_require(ds);
    silt_engine *e = NULL;
    char *etmp = NULL;
    if (!rc)
        rc = open_engine(ds, &e, &etmp);
    if (!rc)
        rc = build_view(ds, e, spec);
    if (!rc)
        rc = view_from_table(e, "__silt_view", out);
    return silt_ws_engine_close(e, etmp, rc);
}

/* ---- --as-of references ---------------------------------------------------------- */

static bool all_digits(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

int silt_as_of_resolve(silt_dataset *ds, const char *ref, char *block_out, char *rid_out)
{
    block_out[0] = '\0';
    if (rid_out)
        rid_out[0] = '\0';
    if (!ref || !*ref)
        return silt_err(SILT_EINVAL, "--as-of needs a block hash (or a unique prefix), a sequence number, an "
                                     "RFC 3339 time or a transaction rid");
    silt_arena *a = silt_arena_new();
    if (!a)
        return silt_err(SILT_ENOMEM, "out of memory");
    tlist l = {0};
    int rc = walk(ds, a, NULL, false, &l);
    long found = -1;
    silt_time t;
    bool by_time = !rc && !all_digits(ref) && strchr(ref, 'T') && silt_time_parse(ref, &t) == 0;
    size_t rlen = strlen(ref);
    for (size_t i = 0; !rc && i < l.n; i++) { /* newest first */
        char text[SILT_MH_TEXT_LEN + 1];
        silt_multihash_to_text(l.v[i].hash, SILT_MH_LEN, text);
        uint64_t seq = l.n - 1 - i;
        bool match;
        if (strncmp(ref, "ri.", 3) == 0)
            match = l.v[i].rid && strcmp(l.v[i].rid, ref) == 0;
        else if (all_digits(ref) && rlen < 20)
            match = seq == strtoull(ref, NULL, 10);
        else if (by_time)
            match = l.v[i].sys_ms <= silt_time_to_ms(t);
        else
            match = rlen >= 8 && strncmp(text, ref, rlen) == 0;
        if (!match)
            continue;
        if (found >= 0 && !by_time && strncmp(ref, "ri.", 3) != 0) {
            rc = silt_err(SILT_EINVAL, "--as-of '%s' is ambiguous in %s: it is a prefix of several blocks (give more "
                                       "characters)",
                          ref, silt_ds_label(ds));
            break;
        }
        if (found < 0)
            found = (long)i;
        if (by_time || strncmp(ref, "ri.", 3) == 0 || all_digits(ref))
            break;
    }
    if (!rc && found < 0) {
        if (strncmp(ref, "ri.", 3) == 0)
            rc = not_committed(ds, ref);
        else if (!by_time && !all_digits(ref) && rlen < 8)
            rc = silt_err(SILT_EINVAL, "--as-of '%s': a block hash prefix needs at least 8 characters", ref);
        else
            rc = silt_err(SILT_ENOTFOUND, "--as-of '%s': no block of %s matches%s", ref, silt_ds_label(ds),
                          by_time ? " (the dataset is newer than that time)" : "");
    }
    if (!rc) {
        silt_multihash_to_text(l.v[found].hash, SILT_MH_LEN, block_out);
        for (size_t i = (size_t)found; rid_out && i < l.n; i++) {
            if (l.v[i].is_add && l.v[i].rid) {
                snprintf(rid_out, 64, "%s", l.v[i].rid);
                break;
            }
        }
    }
    free(l.v);
    silt_arena_free(a);
    return rc;
}

/* ---- the view cache of silt_files_view -----------------------------------------
 *
 * A view is a function of the chain up to the branch head and the request
 * (at / range), and blocks are immutable: so a long-running process (silt
 * serve) keeps the views it computed, keyed by dataset directory, head
 * block and request, and hands out shared, read-only references (views are
 * never modified after they are made; silt_view_free drops a reference).
 * A new head is a new key; old entries age out (least recently used). */

#define VIEW_CACHE_SLOTS 32

typedef struct view_slot {
    char *key;
    silt_view *v;
    uint64_t used;
} view_slot;

static view_slot g_views[VIEW_CACHE_SLOTS];
static uint64_t g_view_clock;
static pthread_mutex_t g_view_lock = PTHREAD_MUTEX_INITIALIZER;

static char *view_key(const silt_dataset *ds, const char *at, const char *start, const char *end)
{
    silt_buf b = SILT_BUF_INIT;
    int rc = silt_buf_printf(&b, "%s%c%s%c%s%c%s%c%s", ds->dir, 0, ds->head, 0, at ? at : "", 0,
                             start ? start : "", 0, end ? end : "");
    if (rc) {
        silt_buf_free(&b);
        return NULL;
    }
    return b.data; /* NUL-separated; compared with memcmp over the length below */
}

static size_t view_key_len(const char *k)
{
    size_t n = 0;
    for (int part = 0; part < 5; part++)
        n += strlen(k + n) + 1;
    return n;
}

static silt_view *view_cache_get(const char *key)
{
    silt_view *v = NULL;
    size_t kl = view_key_len(key);
    pthread_mutex_lock(&g_view_lock);
    for (size_t i = 0; i < VIEW_CACHE_SLOTS && !v; i++) {
        if (g_views[i].key && view_key_len(g_views[i].key) == kl && memcmp(g_views[i].key, key, kl) == 0) {
            v = g_views[i].v;
            atomic_fetch_add(&v->refs, 1);
            g_views[i].used = ++g_view_clock;
        }
    }
    pthread_mutex_unlock(&g_view_lock);
    return v;
}

/* Stores v under key (takes key; adds the cache's reference to v). */
static void view_cache_put(char *key, silt_view *v)
{
    pthread_mutex_lock(&g_view_lock);
    size_t slot = 0;
    for (size_t i = 0; i < VIEW_CACHE_SLOTS; i++) {
        if (!g_views[i].key) {
            slot = i;
            break;
        }
        if (g_views[i].used < g_views[slot].used)
            slot = i;
    }
    silt_view *old = g_views[slot].v;
    free(g_views[slot].key);
    atomic_fetch_add(&v->refs, 1);
    g_views[slot] = (view_slot){key, v, ++g_view_clock};
    pthread_mutex_unlock(&g_view_lock);
    silt_view_free(old);
}

/* Single flight: a view being computed is listed here, and the threads that
 * ask for it meanwhile wait for it instead of computing it too (64 requests
 * on a new head would otherwise each build the same view at once). */
#define VIEW_PENDING_N 16
static char *g_pending[VIEW_PENDING_N]; /* copies of the keys being computed (owned) */
static pthread_cond_t g_view_done = PTHREAD_COND_INITIALIZER;

static bool pending_has(const char *key, size_t kl)
{
    for (size_t i = 0; i < VIEW_PENDING_N; i++)
        if (g_pending[i] && view_key_len(g_pending[i]) == kl && memcmp(g_pending[i], key, kl) == 0)
            return true;
    return false;
}

/* The cached view of key, or NULL after registering the caller as the one
 * computing it (*slot its entry in g_pending; -1 when the list is full). */
static silt_view *view_cache_claim(const char *key, int *slot)
{
    *slot = -1;
    size_t kl = view_key_len(key);
    for (;;) {
        pthread_mutex_lock(&g_view_lock);
        while (pending_has(key, kl))
            pthread_cond_wait(&g_view_done, &g_view_lock);
        pthread_mutex_unlock(&g_view_lock);
        silt_view *v = view_cache_get(key);
        if (v)
            return v;
        pthread_mutex_lock(&g_view_lock);
        if (!pending_has(key, kl))
            break; /* still unclaimed: ours (the lock is held) */
        pthread_mutex_unlock(&g_view_lock); /* another thread claimed it in between */
    }
    for (int i = 0; i < VIEW_PENDING_N && *slot < 0; i++)
        if (!g_pending[i] && (g_pending[i] = malloc(kl)) != NULL) {
            memcpy(g_pending[i], key, kl);
            *slot = i;
        }
    pthread_mutex_unlock(&g_view_lock);
    return NULL;
}

/* Ends a claim (after view_cache_put, or on failure) and wakes the waiters. */
static void view_cache_release(int slot)
{
    if (slot < 0)
        return;
    pthread_mutex_lock(&g_view_lock);
    free(g_pending[slot]);
    g_pending[slot] = NULL;
    pthread_cond_broadcast(&g_view_done);
    pthread_mutex_unlock(&g_view_lock);
}

int silt_files_view(silt_view **out, silt_dataset *ds, const char *at, const char *range_start,
                    const char *range_end)
{
    *out = NULL;
    int rc = silt_files_require(ds); /* also brings ds->head up to date */
    if (rc)
        return rc;
    char *key = silt_process_caches_on() ? view_key(ds, at, range_start, range_end) : NULL;
    int slot = -1;
    if (key && (*out = view_cache_claim(key, &slot)) != NULL) {
        free(key);
        return 0;
    }
    silt_view_spec spec = {at, range_start, range_end};
    rc = silt_view_get(out, ds, &spec);
    if (rc == 0 && key)
        view_cache_put(key, *out); /* takes key */
    else
        free(key);
    view_cache_release(slot);
    return rc;
}

char *silt_view_object_path(silt_dataset *ds, const silt_file_entry *e)
{
    silt_buf mh = SILT_BUF_INIT;
    char *p = NULL;
    if (silt_multihash_from_text(e->content_hash, &mh) == 0 && mh.len == SILT_MH_LEN)
        p = silt_store_object_path(ds->store, "data", (const uint8_t *)mh.data);
    silt_buf_free(&mh);
    return p;
}

/* Files up to this size are read once into memory, hashed, then written;
 * larger ones are hashed in a first pass over the open file and streamed
 * in a second (from the page cache), hashed again. */
#define CAT_IN_MEMORY (8u << 20)

/* Reads fd from its current position to the end, hashing into `h` and
 * writing to `out` when it is not NULL; `buf` (cap bytes) is scratch. */
static int cat_pass(int fd, silt_sha3_ctx *h, FILE *out, char *buf, size_t cap, const char *norm)
{
    for (;;) {
        ssize_t n = read(fd, buf, cap);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return silt_err(SILT_EIO, "file '%s': read error: %s", norm, strerror(errno));
        if (n == 0)
            return 0;
        int rc = silt_sha3_update(h, buf, (size_t)n);
        if (rc)
            return rc;
        if (out && fwrite(buf, 1, (size_t)n, out) != (size_t)n)
            return silt_err(SILT_EIO, "cat '%s': write error: %s", norm, strerror(errno));
    }
}

/* Does the hash of `h` equal the entry's content hash? */
static int cat_check(silt_sha3_ctx *h, const silt_file_entry *fe, const char *norm, const char *when,
                     const silt_dataset *ds)
{
    uint8_t d[SILT_SHA3_256_LEN], mh[SILT_MH_LEN];
    int rc = silt_sha3_final(h, d);
    if (rc)
        return rc;
    silt_multihash_wrap_sha3(d, mh);
    char got[SILT_MH_TEXT_LEN + 1];
    silt_multihash_to_text(mh, SILT_MH_LEN, got);
    if (strcmp(got, fe->content_hash) == 0)
        return 0;
    return silt_err(SILT_ECORRUPT, "file '%s': object %s is damaged%s: its bytes hash to %s (run 'silt verify %s')",
                    norm, fe->content_hash, when, got, ds->name);
}

/* Writes the bytes of object `fd` to `out` only once they are known to
 * hash to the entry's content hash: nothing wrong is ever printed (bar an
 * object rewritten in place while it is being read, reported at the end). */
static int cat_verified(int fd, const silt_file_entry *fe, const char *norm, const silt_dataset *ds, FILE *out)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return silt_err(SILT_EIO, "file '%s': %s", norm, strerror(errno));
    bool small = (uint64_t)st.st_size <= CAT_IN_MEMORY;
    size_t cap = small ? (size_t)st.st_size + 1 : 1u << 20;
    char *buf = malloc(cap);
    silt_sha3_ctx *h = silt_sha3_new();
    int rc = buf && h ? 0 : silt_err(SILT_ENOMEM, "out of memory");
    size_t got = 0;
    while (!rc && small && got < cap) { /* one read into memory */
        ssize_t n = read(fd, buf + got, cap - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            rc = silt_err(SILT_EIO, "file '%s': read error: %s", norm, strerror(errno));
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    if (!rc && small && got == cap)
        rc = silt_err(SILT_EIO, "file '%s': object %s grew while it was read", norm, fe->content_hash);
    if (!rc && small)
        rc = silt_sha3_update(h, buf, got);
    if (!rc && !small)
        rc = cat_pass(fd, h, NULL, buf, cap, norm);
    if (!rc)
        rc = cat_check(h, fe, norm, "", ds);
    if (!rc && small && fwrite(buf, 1, got, out) != got)
        rc = silt_err(SILT_EIO, "cat '%s': write error: %s", norm, strerror(errno));
    if (!rc && !small) {
        silt_sha3_free(h);
        h = silt_sha3_new();
        rc = !h ? silt_err(SILT_ENOMEM, "out of memory")
                : lseek(fd, 0, SEEK_SET) != 0 ? silt_err(SILT_EIO, "file '%s': %s", norm, strerror(errno)) : 0;
        if (!rc)
            rc = cat_pass(fd, h, out, buf, cap, norm);
        if (!rc)
            rc = cat_check(h, fe, norm, " (it changed while it was read)", ds);
    }
    if (!rc && fflush(out) != 0)
        rc = silt_err(SILT_EIO, "cat '%s': write error: %s", norm, strerror(errno));
    silt_sha3_free(h);
    free(buf);
    return rc;
}

/* Opens the object of a view entry (see silt_files_open); purge_possible:
 * a missing object may have been purged by retention (never for the latest
 * view, where a missing object is corruption whatever the record says);
 * check_size: an object whose size differs from the entry's is refused
 * (cat hashes the bytes instead and names the damage precisely). */
static int object_open(int *fd_out, uint64_t *size_out, silt_dataset *ds, const silt_file_entry *fe,
                       bool purge_possible, bool check_size)
{
    *fd_out = -1;
    *size_out = 0;
    char *obj = silt_view_object_path(ds, fe);
    if (!obj)
        return silt_err(SILT_ENOMEM, "out of memory");
    int rc = 0;
    int fd = open(obj, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        char prid[64];
        if (err == ENOENT && purge_possible && silt_files_purged(prid, ds, fe->content_hash) == 1)
            rc = silt_err(SILT_ENOTFOUND, "file '%s' was purged by retention (transaction %s)", fe->path, prid);
        else if (err == ENOENT)
            rc = silt_err(SILT_ECORRUPT, "file '%s': object %s is missing (run 'silt verify %s')", fe->path,
                          fe->content_hash, ds->name);
        else
            rc = silt_err(SILT_EIO, "file '%s': object %s: %s", fe->path, fe->content_hash, strerror(err));
    }
    struct stat st;
    if (!rc && fstat(fd, &st) != 0)
        rc = silt_err(SILT_EIO, "file '%s': object %s: %s", fe->path, fe->content_hash, strerror(errno));
    if (!rc && check_size && (uint64_t)st.st_size != fe->size)
        rc = silt_err(SILT_ECORRUPT, "file '%s': object %s has %llu bytes, the view says %llu (run 'silt verify %s')",
                      fe->path, fe->content_hash, (unsigned long long)st.st_size, (unsigned long long)fe->size,
                      ds->name);
    if (rc && fd >= 0)
        close(fd);
    free(obj);
    if (rc)
        return rc;
    *fd_out = fd;
    *size_out = fe->size;
    return 0;
}

int silt_files_open(int *fd_out, uint64_t *size_out, silt_dataset *ds, const silt_file_entry *fe)
{
    return object_open(fd_out, size_out, ds, fe, true, true);
}

/* Reads size bytes of fd from offset 0 into a malloc'd, NUL-terminated buffer. */
static int read_all(int fd, uint64_t size, const silt_file_entry *fe, char **out)
{
    char *b = malloc(size + 1);
    if (!b)
        return silt_err(SILT_ENOMEM, "out of memory");
    uint64_t got = 0;
    while (got < size) {
        ssize_t n = pread(fd, b + got, size - got, (off_t)got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int rc = n < 0 ? silt_err(SILT_EIO, "file '%s': object %s: %s", fe->path, fe->content_hash, strerror(errno))
                           : silt_err(SILT_ECORRUPT, "file '%s': object %s ended after %llu bytes", fe->path,
                                      fe->content_hash, (unsigned long long)got);
            free(b);
            return rc;
        }
        got += (uint64_t)n;
    }
    b[size] = '\0';
    *out = b;
    return 0;
}

int silt_files_read_small(char **buf, size_t *len, silt_dataset *ds, const silt_file_entry *fe)
{
    *buf = NULL;
    *len = 0;
    if (fe->size > SILT_FILES_SMALL_MAX)
        return silt_err(SILT_EINVAL, "file '%s' has %llu bytes: more than %u to read into memory", fe->path,
                        (unsigned long long)fe->size, SILT_FILES_SMALL_MAX);
    silt_stat_id ids[SILT_STAT_IDS] = {{0}};
    char *obj = NULL;
    if (silt_process_caches_on()) {
        if (!(obj = silt_view_object_path(ds, fe)))
            return silt_err(SILT_ENOMEM, "out of memory");
        if (silt_stat_id_of(obj, &ids[0]) == 0 && S_ISREG(ids[0].mode) && (uint64_t)ids[0].size == fe->size &&
            (*buf = silt_statcache_get_bytes('c', obj, ids, len)) != NULL) {
            free(obj);
            return 0;
        }
    }
    int fd = -1;
    uint64_t size = 0;
    int rc = object_open(&fd, &size, ds, fe, true, true);
    if (!rc) {
        rc = read_all(fd, size, fe, buf);
        close(fd);
    }
    if (!rc) {
        *len = (size_t)size;
        if (obj && ids[0].valid)
            silt_statcache_put_bytes('c', obj, ids, *buf, *len);
    }
    free(obj);
    return rc;
}

int silt_files_cat(silt_dataset *ds, const char *path, const char *at, FILE *out)
{
    char *norm = NULL;
    int rc = silt_files_path_normalize(&norm, path);
    if (rc)
        return rc;
    silt_view *v = NULL;
    rc = silt_files_view(&v, ds, at, NULL, NULL);
    const silt_file_entry *fe = rc ? NULL : silt_view_find(v, norm);
    if (!rc && !fe)
        rc = silt_err(SILT_ENOTFOUND, "file '%s' is not in the %s view of %s", norm, at ? "requested" : "latest",
                      silt_ds_label(ds));
    int fd = -1;
    uint64_t size = 0;
    if (fe)
        rc = object_open(&fd, &size, ds, fe, at != NULL, false);
    if (fd >= 0) {
        rc = cat_verified(fd, fe, norm, ds, out ? out : stdout);
        close(fd);
    }
    silt_view_free(v);
    free(norm);
    return rc;
}

/* ---- commit ------------------------------------------------------------------------ */

/* Finds the AddData of `rid` on ds's branch, scanning back from the head no
 * further than blocks older than `not_before_ms` (-1: the whole chain).
 * 1 found (hash in block_out), 0 not found. */
int silt_files_find_commit(silt_dataset *ds, const char *rid, int64_t not_before_ms,
                           uint8_t block_out[SILT_MH_LEN])
{
    int rc = silt_ds_sync(ds);
    if (rc)
        return rc;
    silt_arena *a = silt_arena_new();
    if (!a)
        return SILT_ENOMEM;
    uint8_t cur[SILT_MH_LEN];
    memcpy(cur, ds->st.head, SILT_MH_LEN);
    int found = 0;
    while (!rc) {
        odf_MetadataBlock *b = NULL;
        rc = silt_ds_load_block(ds, cur, a, &b);
        if (rc)
            break;
        if (not_before_ms >= 0 &&
            silt_time_to_ms((silt_time){b->system_time.sec, b->system_time.nsec}) < not_before_ms)
            break;
        if (b->event.type == ODF_MetadataEvent_AddData) {
            odf_AddData *ad = b->event.value;
            const char *r = NULL;
            silt_txn_type t;
            rc = parse_txn_extra(a, ad->extra ? ad->extra->entries : NULL, &r, &t);
            if (!rc && r && strcmp(r, rid) == 0) {
                memcpy(block_out, cur, SILT_MH_LEN);
                found = 1;
                break;
            }
        }
        if (b->prev_block_hash.len != SILT_MH_LEN)
            break;
        memcpy(cur, b->prev_block_hash.data, SILT_MH_LEN);
    }
    silt_arena_free(a);
    return rc ? rc : found;
}

static int first_text(silt_engine *e, char **out, const char *sql)
{
    *out = NULL;
    int rc = silt_engine_query_text(e, out, sql);
    if (rc == SILT_ENOTFOUND) {
        silt_err_clear();
        return 0;
    }
    return rc;
}

/* Loads the staged changes into TEMP TABLE __silt_staged (last change per path). */
static int load_changes(silt_dataset *ds, silt_engine *e, const silt_files_change *c, size_t n)
{
    int rc = silt_engine_exec(e, "CREATE OR REPLACE TEMP TABLE __silt_st (seq BIGINT, rm BOOLEAN, path VARCHAR, "
                                 "content_hash VARCHAR, size BIGINT, content_type VARCHAR)");
    silt_buf sql = SILT_BUF_INIT;
    for (size_t i = 0; !rc && i < n; i += 500) {
        silt_buf_clear(&sql);
        rc = silt_buf_puts(&sql, "INSERT INTO __silt_st VALUES ");
        for (size_t j = i; !rc && j < n && j < i + 500; j++) {
            char *qp = silt_sql_str(c[j].path);
            char *qt = silt_sql_str(silt_files_content_type(c[j].path));
            if (!qp || !qt)
                rc = silt_err(SILT_ENOMEM, "out of memory");
            if (!rc && !c[j].remove) {
                uint8_t mh[SILT_MH_LEN];
                silt_buf b = SILT_BUF_INIT;
                rc = silt_multihash_from_text(c[j].content_hash, &b);
                if (!rc && b.len == SILT_MH_LEN) {
                    memcpy(mh, b.data, SILT_MH_LEN);
                    uint64_t sz = 0;
                    int st = silt_store_stat(ds->store, "data", mh, &sz);
                    if (st == 0)
                        rc = silt_err(SILT_ECORRUPT, "staged file '%s': object %s is missing from data/", c[j].path,
                                      c[j].content_hash);
                    else if (st < 0)
                        rc = st;
                }
                silt_buf_free(&b);
            }
            if (!rc)
                rc = silt_buf_printf(&sql, "%s(%zu, %s, %s, '%s', %llu, %s)", j > i ? ", " : "", j,
                                     c[j].remove ? "true" : "false", qp, c[j].remove ? "" : c[j].content_hash,
                                     (unsigned long long)c[j].size, qt);
            free(qp);
            free(qt);
        }
        if (!rc)
            rc = silt_engine_exec(e, sql.data);
    }
    silt_buf_free(&sql);
    if (!rc)
        rc = silt_engine_exec(e, "CREATE OR REPLACE TEMP TABLE __silt_staged AS SELECT * FROM __silt_st QUALIFY "
                                 "row_number() OVER (PARTITION BY path ORDER BY seq DESC) = 1");
    return rc;
}

int silt_files_commit(silt_dataset *ds, const char *rid, silt_txn_type type, const silt_files_change *changes,
                      size_t n, uint8_t block_out[SILT_MH_LEN])
{
    int rc = silt_files_require(ds);
    if (rc)
        return rc;
    silt_engine *e = NULL;
    char *etmp = NULL;
    silt_arena *a = silt_arena_new();
    char *slice_tmp = NULL, *cp_tmp = NULL, *txt = NULL;
    silt_buf sql = SILT_BUF_INIT;
    rc = a ? open_engine(ds, &e, &etmp) : SILT_ENOMEM;
    view_stats vs = {0};
    if (!rc)
        rc = build_view_at(ds, e, NULL, "__silt_cur", &vs);
    if (!rc)
        rc = load_changes(ds, e, changes, n);
    const char *tname = silt_txn_type_name(type);
    /* type rules */
    if (!rc && type == SILT_TXN_APPEND) {
        rc = first_text(e, &txt, "SELECT min(s.path) FROM __silt_staged s JOIN __silt_cur v USING (path)");
        if (!rc && txt)
            rc = silt_err(SILT_EEXISTS,
                          "APPEND transaction %s would overwrite '%s', which is already in the view of %s "
                          "(use an UPDATE transaction)",
                          rid, txt, silt_ds_label(ds));
    }
    if (!rc && type == SILT_TXN_DELETE) {
        rc = first_text(e, &txt, "SELECT min(path) FROM __silt_staged WHERE path NOT IN (SELECT path FROM __silt_cur)");
        if (!rc && txt)
            rc = silt_err(SILT_ENOTFOUND, "DELETE transaction %s: '%s' is not in the view of %s", rid, txt,
                          silt_ds_label(ds));
    }
    silt_time now = silt_files_commit_time(ds);
    char *qrid = silt_sql_str(rid);
    if (!qrid && !rc)
        rc = silt_err(SILT_ENOMEM, "out of memory");
    /* the changelog rows: removals first (by path), then per path -C, +C / +A */
    if (!rc) {
        const char *removed =
            type == SILT_TXN_SNAPSHOT ? "v.path NOT IN (SELECT path FROM __silt_staged)"
            : type == SILT_TXN_DELETE ? "v.path IN (SELECT path FROM __silt_staged)"
                                      : "false";
        bool puts = type != SILT_TXN_DELETE;
        bool changes_ok = type == SILT_TXN_SNAPSHOT || type == SILT_TXN_UPDATE;
        rc = silt_buf_printf(
            &sql,
            "CREATE OR REPLACE TEMP TABLE __silt_out AS SELECT op, event_time, path, content_hash, size, "
            "content_type, transaction_rid, transaction_type FROM ("
            "SELECT 0 AS k1, v.path AS k, 0 AS k2, CAST(1 AS UTINYINT) AS op, v.event_time, v.path, v.content_hash, "
            "v.size, v.content_type, v.transaction_rid, v.transaction_type FROM __silt_cur v WHERE %s "
            "UNION ALL SELECT 1, v.path, 0, CAST(2 AS UTINYINT), v.event_time, v.path, v.content_hash, v.size, "
            "v.content_type, v.transaction_rid, v.transaction_type FROM __silt_cur v JOIN __silt_staged s USING "
            "(path) WHERE %s "
            "UNION ALL SELECT 1, s.path, 1, CAST(CASE WHEN v.path IS NULL THEN 0 ELSE 3 END AS UTINYINT), "
            "epoch_ms(CAST(%lld AS BIGINT)), s.path, s.content_hash, s.size, s.content_type, %s, '%s' FROM "
            "__silt_staged s LEFT JOIN __silt_cur v USING (path) WHERE %s) ORDER BY k1, k, k2",
            removed, changes_ok ? "true" : "false", (long long)silt_time_to_ms(now), qrid, tname,
            puts ? "NOT s.rm" : "false");
    }
    if (!rc)
        rc = silt_engine_exec(e, sql.data);
    uint64_t nrows = 0, sum_size = 0, nview = 0;
    if (!rc)
        rc = silt_engine_query_u64(e, &nrows, "SELECT count(*) FROM __silt_out");
    if (!rc)
        rc = silt_engine_query_u64(e, &sum_size, "SELECT coalesce(sum(size), 0) FROM __silt_out");
    if (!rc)
        rc = silt_engine_exec(e, "CREATE OR REPLACE TEMP TABLE __silt_next AS SELECT * FROM __silt_cur WHERE path "
                                 "NOT IN (SELECT path FROM __silt_out) UNION ALL SELECT " VIEW_COLS
                                 ", event_time FROM __silt_out WHERE op IN (0, 3)");
    if (!rc)
        rc = silt_engine_query_u64(e, &nview, "SELECT count(*) FROM __silt_next");

    odf_AddData *ad = rc ? NULL : silt_arena_alloc(a, sizeof *ad);
    if (!rc && !ad)
        rc = SILT_ENOMEM;
    if (!rc) {
        silt_ds_add_data_continue(ds, ad, NULL); /* its own checkpoint follows */
        ad->has_new_watermark = true;
        ad->new_watermark = (odf_time){now.sec, now.nsec};
    }
    if (!rc && nrows > 0) {
        uint64_t first = ds->st.has_last_offset ? ds->st.last_offset + 1 : 0;
        char rnd[17];
        slice_tmp = silt_random_hex(rnd, 8)
                        ? NULL
                        : silt_arena_printf(a, "%s/data/.tmp-%ld-%s.parquet", ds->dir, (long)getpid(), rnd);
        if (!slice_tmp)
            rc = SILT_ENOMEM;
        silt_slice_info si;
        if (!rc) {
            silt_slice_spec ss = {"__silt_out", "offset", "op", "system_time", "event_time", first, now, slice_tmp,
                                  false, NULL, 0, FILES_REQUIRED};
            rc = silt_write_slice(e, &ss, &si);
        }
        if (!rc)
            rc = silt_store_adopt_file(ds->store, "data", si.physical_hash, slice_tmp);
        odf_DataSlice *nd = rc ? NULL : silt_arena_alloc(a, sizeof *nd);
        odf_OffsetInterval *oi = rc ? NULL : silt_arena_alloc(a, sizeof *oi);
        uint8_t *lh = rc ? NULL : silt_arena_memdup(a, si.logical_hash, sizeof si.logical_hash);
        uint8_t *ph = rc ? NULL : silt_arena_memdup(a, si.physical_hash, sizeof si.physical_hash);
        if (!rc && (!nd || !oi || !lh || !ph))
            rc = SILT_ENOMEM;
        if (!rc) {
            oi->start = first;
            oi->end = first + nrows - 1;
            nd->logical_hash = (odf_bytes){lh, sizeof si.logical_hash};
            nd->physical_hash = (odf_bytes){ph, sizeof si.physical_hash};
            nd->offset_interval = oi;
            nd->size = si.size;
            ad->new_data = nd;
        }
    }
    /* checkpoint of the view: on a SNAPSHOT, or when replaying got long */
    bool new_cp = !rc && (type == SILT_TXN_SNAPSHOT || vs.replay_slices + 1 >= CP_EVERY_SLICES ||
                          vs.replay_rows + nrows >= (nview / 4 > 4096 ? nview / 4 : 4096));
    if (!rc && nrows == 0)
        new_cp = false; /* the view did not change */
    if (!rc && new_cp) {
        char rnd[17];
        cp_tmp = silt_random_hex(rnd, 8)
                     ? NULL
                     : silt_arena_printf(a, "%s/checkpoints/.tmp-%ld-%s.parquet", ds->dir, (long)getpid(), rnd);
        char *q = cp_tmp ? silt_sql_str(cp_tmp) : NULL;
        if (!q)
            rc = SILT_ENOMEM;
        if (!rc)
            rc = silt_engine_execf(e,
                                   "COPY (SELECT " VIEW_COLS ", CAST(event_time AS TIMESTAMP_MS) AS event_time FROM "
                                   "__silt_next ORDER BY path) TO %s (FORMAT parquet, compression zstd)",
                                   q);
        free(q);
        uint8_t digest[32];
        uint64_t csize = 0;
        if (!rc)
            rc = silt_sha3_file(cp_tmp, digest, &csize);
        uint8_t *ch = rc ? NULL : silt_arena_alloc(a, SILT_MH_LEN);
        odf_Checkpoint *cp = rc ? NULL : silt_arena_alloc(a, sizeof *cp);
        if (!rc && (!ch || !cp))
            rc = SILT_ENOMEM;
        if (!rc) {
            silt_multihash_wrap_sha3(digest, ch);
            rc = silt_store_adopt_file(ds->store, "checkpoints", ch, cp_tmp);
        }
        if (!rc) {
            cp->physical_hash = (odf_bytes){ch, SILT_MH_LEN};
            cp->size = csize;
            ad->new_checkpoint = cp;
        }
    } else if (!rc && ds->st.has_checkpoint) {
        odf_Checkpoint *cp = silt_arena_alloc(a, sizeof *cp);
        if (!cp)
            rc = SILT_ENOMEM;
        else {
            cp->physical_hash = (odf_bytes){ds->st.checkpoint, SILT_MH_LEN};
            cp->size = ds->st.checkpoint_size;
            ad->new_checkpoint = cp;
        }
    }
    /* extra: linked objects + transaction */
    if (!rc) {
        json_t *j = json_pack("{s:{s:I,s:I},s:{s:s,s:s}}", "opendatafabric.org/linkedObjects", "numObjectsNaive",
                              (json_int_t)nrows, "sizeNaive", (json_int_t)sum_size, TXN_KEY, "rid", rid, "type",
                              tname);
        silt_buf ex = SILT_BUF_INIT;
        odf_ExtraAttributes *x = silt_arena_alloc(a, sizeof *x);
        rc = j && x ? odf_json_canonical(&ex, j) : SILT_ENOMEM;
        if (!rc && !(x->entries = silt_arena_strdup(a, ex.data)))
            rc = SILT_ENOMEM;
        if (!rc)
            ad->extra = x;
        silt_buf_free(&ex);
        json_decref(j);
    }
    uint8_t hash[1][SILT_MH_LEN];
    if (!rc) {
        odf_union ev = {ODF_MetadataEvent_AddData, ad};
        rc = silt_ds_append_events_at(ds, &ev, 1, hash, &now);
    }
    if (!rc && block_out)
        memcpy(block_out, hash[0], SILT_MH_LEN);
    if (slice_tmp)
        unlink(slice_tmp);
    if (cp_tmp)
        unlink(cp_tmp);
    if (rc == SILT_ENOMEM && !*silt_error_last())
        silt_err(SILT_ENOMEM, "out of memory");
    free(qrid);
    free(txt);
    silt_buf_free(&sql);
    rc = silt_ws_engine_close(e, etmp, rc);
    silt_arena_free(a);
    return rc;
}
