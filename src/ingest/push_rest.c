/* push_rest.c — RestEndpoint push sources (docs/ingestion.md): a Source
 * resource with `ingress: {kind: RestEndpoint, buffer: …}` targeted by a
 * Flow of the dataset. Without `buffer` a push is ingested at once (as
 * AddPushSource); with one, the request's records are appended to the
 * write-ahead file `<.silt>/buffers/<dataset id>/<source>.wal`
 * (push_buffer.h) and ingested later by silt_push_flush as ONE AddData.
 *
 * Invariants: a request is parsed completely (the source's read step, in
 * an engine) before anything is written; an append is one write + fdatasync
 * under the source's lock (`<source>.lock`); a flush holds
 * `<source>.flush.lock` throughout and commits the AddData with the source
 * state {kind silt/push-buffer, value: the seq after its last record}
 * before it compacts the file, and skips every record below the chain's
 * state — a crash between the two never ingests a record twice. */
#include "dataset/data_views.h"
#include "dataset/dataset_internal.h"
#include "engine/engine.h"
#include "engine/read.h"
#include "ingest/ingest.h"
#include "ingest/push_buffer.h"
#include "ingest/push_flush.h"
#include "ingest/resources.h"
#include "util/error.h"
#include "util/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define STATE_KIND "silt/push-buffer"

typedef struct rest_src {
    const char *name;       /* Source resource name (arena) */
    odf_SourceSpec *spec;   /* arena */
    const odf_IngressBufferMemory *buf; /* NULL: unbuffered */
} rest_src;

/* ---- resolving the source ------------------------------------------------- */

static int load_rest(silt_workspace *ws, silt_arena *a, const char *name, rest_src *out, bool *is_rest)
{
    odf_SourceSpec *s = NULL;
    int rc = silt_res_source_load(&s, a, ws, name);
    if (rc)
        return rc;
    *is_rest = s->ingress.type == ODF_Ingress_RestEndpoint;
    if (*is_rest) {
        const odf_IngressRestEndpoint *re = s->ingress.value;
        out->name = name;
        out->spec = s;
        out->buf = re && re->buffer.type == ODF_IngressBuffer_Memory ? re->buffer.value : NULL;
    }
    return 0;
}

/* The RestEndpoint source of `ds` named `name` (NULL: the only one): 1 =
 * found, 0 = none (the caller falls back to AddPushSource). */
static int find_rest(silt_dataset *ds, silt_arena *a, const char *name, rest_src *out)
{
    memset(out, 0, sizeof *out);
    silt_flow_def **flows = NULL;
    size_t nf = 0, found = 0;
    int rc = silt_res_flows_for_dataset(&flows, &nf, a, ds->ws, ds->name);
    if (rc)
        return rc;
    for (size_t i = 0; i < nf; i++) {
        for (size_t j = 0; j < flows[i]->ntasks; j++) {
            const char *sn = flows[i]->tasks[j].source;
            if ((name && strcmp(sn, name) != 0) || (out->name && strcmp(out->name, sn) == 0))
                continue;
            rest_src r;
            bool is_rest = false;
            if ((rc = load_rest(ds->ws, a, sn, &r, &is_rest)) != 0)
                return rc;
            if (!is_rest)
                continue;
            if (found++)
                return silt_err(SILT_EINVAL, "dataset '%s' has several RestEndpoint sources ('%s', '%s'); "
                                "choose one with sourceName", ds->name, out->name, sn);
            *out = r;
        }
    }
    if (found && !name && ds->st.num_push_sources)
        return silt_err(SILT_EINVAL, "dataset '%s' has a RestEndpoint source ('%s') and AddPushSource sources; "
                        "choose one with sourceName", ds->name, out->name);
    return found ? 1 : 0;
}

/* ---- files --------------------------------------------------------------------- */

static char *buf_path(silt_dataset *ds, const char *source, const char *suffix)
{
    char file[512];
    snprintf(file, sizeof file, "%s%s", source, suffix);
    char *p = silt_path_join(ds->ws->root, "buffers", ds->id, file, NULL);
    if (!p)
        silt_err(SILT_ENOMEM, "push buffer: out of memory");
    return p;
}

static int lock_file(silt_dataset *ds, const char *source, const char *suffix)
{
    char *dir = silt_path_join(ds->ws->root, "buffers", ds->id, NULL);
    char *p = buf_path(ds, source, suffix);
    int rc = !dir || !p ? SILT_ENOMEM : silt_fs_mkdirs(dir);
    if (rc == 0)
        rc = silt_fs_lock(p, true);
    free(dir);
    free(p);
    return rc;
}

/* Reads the whole file at fd into b (empty when absent). */
static int read_fd(int fd, silt_buf *b, const char *what)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return silt_err(SILT_EIO, "%s: %s", what, strerror(errno));
    if (silt_buf_reserve(b, (size_t)st.st_size + 1))
        return silt_err(SILT_ENOMEM, "push buffer: out of memory");
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t r = pread(fd, b->data + got, (size_t)st.st_size - got, (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return silt_err(SILT_EIO, "%s: %s", what, strerror(errno));
        if (r == 0)
            break;
        got += (size_t)r;
    }
    b->len = got;
    return 0;
}

/* The seq after the last record the chain says this source ingested. */
static uint64_t committed_seq(const silt_dataset *ds, const char *source)
{
    for (size_t i = 0; i < ds->st.num_source_states; i++) {
        const odf_source_state_ref *r = &ds->st.source_states[i];
        if (strcmp(r->source_name, source) == 0 && r->kind && strcmp(r->kind, STATE_KIND) == 0 && r->value)
            return strtoull(r->value, NULL, 10);
    }
    return 0;
}

static uint64_t max3(uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t m = a > b ? a : b;
    return m > c ? m : c;
}

/* ---- per-process cache of the last scan (keyed by inode and size) -------- */

typedef struct scan_cache {
    dev_t dev;
    ino_t ino;
    off_t size;
    silt_pbuf_scan scan;
} scan_cache;
#define NCACHE 16
static scan_cache cache[NCACHE];
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

static bool cache_get(const struct stat *st, silt_pbuf_scan *out)
{
    bool hit = false;
    pthread_mutex_lock(&cache_lock);
    for (int i = 0; i < NCACHE && !hit; i++)
        if (cache[i].ino == st->st_ino && cache[i].dev == st->st_dev && cache[i].size == st->st_size &&
            cache[i].size > 0) {
            *out = cache[i].scan;
            hit = true;
        }
    pthread_mutex_unlock(&cache_lock);
    return hit;
}

static void cache_put(const struct stat *st, const silt_pbuf_scan *s)
{
    pthread_mutex_lock(&cache_lock);
    int slot = (int)(st->st_ino % NCACHE);
    cache[slot] = (scan_cache){st->st_dev, st->st_ino, st->st_size, *s};
    pthread_mutex_unlock(&cache_lock);
}

/* Scans the open wal (cached when unchanged) and cuts a torn tail off. */
static int scan_wal(int fd, silt_pbuf_scan *s, const char *path)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return silt_err(SILT_EIO, "%s: %s", path, strerror(errno));
    if (cache_get(&st, s))
        return 0;
    silt_buf b = SILT_BUF_INIT;
    int rc = read_fd(fd, &b, path);
    if (!rc)
        rc = silt_pbuf_parse((const uint8_t *)b.data, b.len, s, NULL, NULL);
    silt_buf_free(&b);
    if (rc)
        return silt_err_context(rc, "%s", path);
    if (s->torn && ftruncate(fd, (off_t)s->valid_end) != 0)
        return silt_err(SILT_EIO, "%s: cannot cut off a torn append: %s", path, strerror(errno));
    if (s->torn) {
        s->torn = false;
        if (fstat(fd, &st) != 0)
            return silt_err(SILT_EIO, "%s: %s", path, strerror(errno));
    }
    cache_put(&st, s);
    return 0;
}

/* ---- parsing a request into records ------------------------------------------------ */

typedef silt_pbuf_lines recs; /* push_buffer.h */

/* The records of the request, read with the source's read step (as a
 * synchronous push would) and written as one NDJSON line each. */
static int parse_request(silt_dataset *ds, const odf_union *read, const silt_ingest_opts *o, recs *r)
{
    silt_engine *e = NULL;
    char *tmp = NULL;
    int rc = silt_ws_engine_open(ds->ws, &e, &tmp);
    if (rc)
        return rc;
    rc = silt_read_files(e, read, o->files, o->display, o->nfiles, "__silt_push");
    char *out = rc ? NULL : silt_path_join(tmp, "records.ndjson", NULL);
    if (!rc && !out)
        rc = silt_err(SILT_ENOMEM, "push buffer: out of memory");
    if (!rc) {
        char *lit = silt_sql_str(out);
        silt_buf sql = SILT_BUF_INIT;
        rc = !lit || silt_buf_printf(&sql, "COPY (SELECT * FROM __silt_push ORDER BY rowid) TO %s (FORMAT JSON)", lit)
                 ? silt_err(SILT_ENOMEM, "push buffer: out of memory")
                 : silt_engine_exec(e, sql.data);
        silt_buf_free(&sql);
        free(lit);
    }
    if (!rc)
        rc = silt_fs_read(out, &r->text);
    free(out);
    rc = silt_ws_engine_close(e, tmp, rc);
    if (!rc)
        rc = silt_pbuf_lines_split(r);
    return rc;
}

/* ---- append ---------------------------------------------------------------- */

/* Decides and writes the append of `r` under the source lock. */
static int append_locked(silt_dataset *ds, const rest_src *s, const recs *r, int fd, const char *path,
                         silt_push_result *out)
{
    silt_pbuf_scan sc;
    int rc = scan_wal(fd, &sc, path);
    if (rc)
        return rc;
    uint64_t cap = s->buf->has_buffer_size ? s->buf->buffer_size : 0;
    bool drop_oldest = s->buf->overflow_policy && strcmp(s->buf->overflow_policy, "DropOldest") == 0;
    uint64_t from = max3(sc.base_seq, sc.drop_before, committed_seq(ds, s->name));
    uint64_t live = sc.next_seq > from ? sc.next_seq - from : 0, n = r->n;
    out->capacity = cap;
    out->dropped_total = sc.dropped_total;
    out->buffered_records = live;
    if (n > cap)
        return silt_err(SILT_EINVAL, "the request has %" PRIu64 " records; the buffer of source '%s' holds at most %" PRIu64,
                        n, s->name, cap);
    if (n == 0)
        return 0;
    uint64_t drop = live + n > cap ? live + n - cap : 0;
    if (drop && !drop_oldest) {
        out->rejected = true;
        return 0;
    }
    silt_buf b = SILT_BUF_INIT;
    if (sc.valid_end == 0 && silt_buf_append(&b, SILT_PBUF_HEADER, SILT_PBUF_HEADER_LEN))
        rc = silt_err(SILT_ENOMEM, "push buffer: out of memory");
    if (!rc)
        rc = silt_pbuf_encode_data(&b, sc.next_seq, r->v, r->len, r->n);
    if (!rc && drop)
        rc = silt_pbuf_encode_mark(&b, from + drop, sc.dropped_total + drop, sc.next_seq + n);
    if (!rc)
        rc = silt_fs_pwrite_all(fd, b.data, b.len, (long long)sc.valid_end, path);
    if (!rc && fdatasync(fd) != 0)
        rc = silt_err(SILT_EIO, "%s: fsync: %s", path, strerror(errno));
    struct stat st;
    if (!rc && fstat(fd, &st) == 0) {
        uint64_t wend = sc.valid_end;
        if (wend == 0)
            sc.base_seq = sc.drop_before = sc.next_seq;
        sc.valid_end = wend + b.len;
        sc.next_seq += n;
        sc.frames += drop ? 2 : 1;
        if (drop) {
            sc.drop_before = from + drop;
            sc.dropped_total += drop;
        }
        cache_put(&st, &sc);
    }
    silt_buf_free(&b);
    if (rc)
        return rc;
    out->accepted = n;
    out->dropped = drop;
    out->dropped_total = sc.dropped_total;
    out->buffered_records = live + n - drop;
    return 0;
}

static int push_buffered(silt_dataset *ds, const rest_src *s, const odf_union *read, const silt_ingest_opts *o,
                         silt_push_result *out)
{
    out->buffered = true;
    if (o->event_time)
        return silt_err(SILT_EINVAL, "source '%s' buffers its records: odf-event-time is not supported there "
                        "(put the event time in the records)", s->name);
    recs r;
    memset(&r, 0, sizeof r);
    int rc = parse_request(ds, read, o, &r);
    int lk = rc ? -1 : lock_file(ds, s->name, ".lock");
    if (!rc && lk < 0)
        rc = lk;
    char *path = rc ? NULL : buf_path(ds, s->name, ".wal");
    int fd = path ? open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644) : -1;
    if (!rc && !path)
        rc = SILT_ENOMEM;
    else if (!rc && fd < 0)
        rc = silt_err(SILT_EIO, "%s: %s", path, strerror(errno));
    if (!rc)
        rc = append_locked(ds, s, &r, fd, path, out);
    if (fd >= 0)
        close(fd);
    silt_fs_unlock(lk);
    free(path);
    silt_pbuf_lines_free(&r);
    return rc;
}

/* ---- entry points ------------------------------------------------------------ */

static int push_sync(silt_dataset *ds, const rest_src *s, const odf_union *read, const silt_ingest_opts *o,
                     silt_push_result *out)
{
    silt_ingest_request req = {.read = read,
                               .preprocess = &s->spec->preprocess,
                               .merge = &s->spec->merge,
                               .files = o->files,
                               .display = o->display,
                               .nfiles = o->nfiles};
    if (o->event_time) {
        if (silt_time_parse(o->event_time, &req.event_time))
            return silt_err(SILT_EINVAL, "event time '%s': not an RFC 3339 time", o->event_time);
        req.has_event_time = true;
    }
    return silt_ingest_run(ds, &req, &out->ingest);
}

int silt_dataset_push(silt_push_result *out, silt_dataset *ds, const silt_ingest_opts *o)
{
    memset(out, 0, sizeof *out);
    int rc = silt_ds_sync(ds);
    if (rc)
        return rc;
    silt_arena *a = silt_arena_new();
    if (!a)
        return silt_err(SILT_ENOMEM, "push: out of memory");
    rest_src s;
    int found = ds->st.dataset_kind == ODF_DatasetKind_Root ? find_rest(ds, a, o->source_name, &s) : 0;
    if (found < 0) {
        silt_arena_free(a);
        return found;
    }
    if (!found) {
        silt_arena_free(a);
        return silt_dataset_ingest(&out->ingest, ds, o);
    }
    snprintf(out->source, sizeof out->source, "%s", s.name);
    odf_union tr;
    const odf_union *read = &s.spec->read;
    if (o->format && (rc = silt_read_step_transcode(a, &s.spec->read, o->format, &tr)) == 0)
        read = &tr;
    if (!rc && o->nfiles == 0)
        rc = silt_err(SILT_EINVAL, "nothing to ingest: no input files");
    if (!rc)
        rc = s.buf ? push_buffered(ds, &s, read, o, out) : push_sync(ds, &s, read, o, out);
    silt_arena_free(a);
    return rc;
}

/* ---- flush ----------------------------------------------------------------------- */

typedef struct collect_ctx {
    FILE *f;
    uint64_t from, n;
} collect_ctx;

static int collect(void *ctx, uint64_t seq, const char *rec, size_t len)
{
    collect_ctx *c = ctx;
    if (seq < c->from)
        return 0;
    c->n++;
    return fwrite(rec, 1, len, c->f) == len && fputc('\n', c->f) != EOF ? 0
                                                                          : silt_err(SILT_EIO, "push flush: write failed");
}

/* Rewrites the wal without the records below `upto` (under the source lock):
 * a MARK, then every frame appended after `end` (the part flushed). */
static int compact(const char *path, uint64_t end, uint64_t upto, uint64_t seq_at_end)
{
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return silt_err(SILT_EIO, "%s: %s", path, strerror(errno));
    silt_buf cur = SILT_BUF_INIT, nb = SILT_BUF_INIT;
    silt_pbuf_scan sc;
    int rc = read_fd(fd, &cur, path);
    close(fd);
    if (!rc)
        rc = silt_pbuf_parse((const uint8_t *)cur.data, cur.len, &sc, NULL, NULL);
    if (!rc && silt_buf_append(&nb, SILT_PBUF_HEADER, SILT_PBUF_HEADER_LEN))
        rc = silt_err(SILT_ENOMEM, "push buffer: out of memory");
    /* the drops made meanwhile are in the tail's MARKs; carry the total */
    uint64_t drop_before = upto > sc.drop_before ? upto : sc.drop_before;
    if (!rc)
        rc = silt_pbuf_encode_mark(&nb, drop_before < seq_at_end ? drop_before : seq_at_end, sc.dropped_total,
                                   seq_at_end);
    if (!rc) /* MQTT sources: the packet ids the dropped frames held */
        rc = silt_pbuf_encode_carry(&nb, (const uint8_t *)cur.data, (size_t)end, seq_at_end);
    if (!rc && sc.valid_end > end && silt_buf_append(&nb, cur.data + end, (size_t)(sc.valid_end - end)))
        rc = silt_err(SILT_ENOMEM, "push buffer: out of memory");
    if (!rc)
        rc = silt_fs_write_atomic(path, nb.data, nb.len, false);
    silt_buf_free(&cur);
    silt_buf_free(&nb);
    return rc;
}

/* Copies the live records of the wal into `file`; *end / *next: the bytes
 * and the seq they cover. Under the source lock. */
static int snapshot(silt_dataset *ds, const char *source, const char *path, const char *file, uint64_t *end,
                    uint64_t *next, uint64_t *n, uint64_t *skipped)
{
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT)
        return 0;
    if (fd < 0)
        return silt_err(SILT_EIO, "%s: %s", path, strerror(errno));
    silt_buf b = SILT_BUF_INIT;
    silt_pbuf_scan sc;
    int rc = read_fd(fd, &b, path);
    close(fd);
    collect_ctx c = {fopen(file, "we"), 0, 0};
    if (!rc && !c.f)
        rc = silt_err(SILT_EIO, "%s: %s", file, strerror(errno));
    if (!rc) {
        silt_pbuf_scan pre;
        rc = silt_pbuf_parse((const uint8_t *)b.data, b.len, &pre, NULL, NULL);
        uint64_t comm = committed_seq(ds, source);
        c.from = max3(pre.base_seq, pre.drop_before, comm);
        uint64_t lo = max3(pre.base_seq, pre.drop_before, 0), hi = comm < pre.next_seq ? comm : pre.next_seq;
        *skipped = hi > lo ? hi - lo : 0; /* committed by a flush whose compaction a crash cut short */
        if (!rc)
            rc = silt_pbuf_parse((const uint8_t *)b.data, b.len, &sc, collect, &c);
    }
    if (c.f && fclose(c.f) != 0 && !rc)
        rc = silt_err(SILT_EIO, "%s: %s", file, strerror(errno));
    silt_buf_free(&b);
    if (rc)
        return silt_err_context(rc, "%s", path);
    *end = sc.valid_end;
    *next = sc.next_seq;
    *n = c.n;
    return 0;
}

static int flush_ingest(silt_dataset *ds, const rest_src *s, const char *file, uint64_t next, silt_arena *a,
                        silt_push_flush_result *out)
{
    odf_union read;
    int rc = silt_read_step_transcode(a, &s->spec->read, "ndjson", &read);
    if (rc)
        return rc;
    char val[32];
    snprintf(val, sizeof val, "%" PRIu64, next);
    odf_SourceState st = {.source_name = (char *)s->name, .kind = STATE_KIND, .value = val};
    const char *files[1] = {file};
    const char *disp[1] = {"push buffer"};
    silt_ingest_request req = {.read = &read,
                               .preprocess = &s->spec->preprocess,
                               .merge = &s->spec->merge,
                               .files = files,
                               .display = disp,
                               .nfiles = 1,
                               .source_state = &st};
    return silt_ingest_run(ds, &req, &out->ingest);
}

static int flush_source(silt_dataset *ds, const rest_src *s, silt_arena *a, silt_push_flush_result *out)
{
    int fl = lock_file(ds, s->name, ".flush.lock");
    if (fl < 0)
        return fl;
    char *path = buf_path(ds, s->name, ".wal");
    char *tmp = NULL;
    int rc = path ? silt_ws_mktemp(ds->ws, "tmp", &tmp) : SILT_ENOMEM;
    char *file = rc ? NULL : silt_path_join(tmp, "records.ndjson", NULL);
    uint64_t end = 0, next = 0, n = 0, skipped = 0;
    if (!rc && !file)
        rc = silt_err(SILT_ENOMEM, "push flush: out of memory");
    int lk = rc ? -1 : lock_file(ds, s->name, ".lock");
    if (!rc && lk < 0)
        rc = lk;
    if (!rc)
        rc = silt_ds_sync(ds);
    if (!rc)
        rc = snapshot(ds, s->name, path, file, &end, &next, &n, &skipped);
    silt_fs_unlock(lk);
    out->skipped = skipped;
    if (!rc && n) {
        rc = flush_ingest(ds, s, file, next, a, out);
        out->records = rc ? 0 : n;
        out->committed = rc == 0;
    }
    if (!rc && end) {
        lk = lock_file(ds, s->name, ".lock");
        rc = lk < 0 ? lk : compact(path, end, next, next);
        silt_fs_unlock(lk);
    }
    if (tmp) {
        silt_fs_remove_tree(tmp);
        free(tmp);
    }
    free(file);
    free(path);
    silt_fs_unlock(fl);
    return rc;
}

int silt_push_flush_source(silt_push_flush_result *out, silt_dataset *ds, const char *name, odf_SourceSpec *spec)
{
    memset(out, 0, sizeof *out);
    silt_arena *a = silt_arena_new();
    if (!a)
        return silt_err(SILT_ENOMEM, "push flush: out of memory");
    rest_src s = {.name = name, .spec = spec};
    snprintf(out->source, sizeof out->source, "%s", name);
    int rc = silt_ds_sync(ds);
    if (!rc)
        rc = flush_source(ds, &s, a, out);
    silt_arena_free(a);
    return rc;
}

int silt_push_flush(silt_push_flush_result *out, silt_dataset *ds, const char *source_name)
{
    memset(out, 0, sizeof *out);
    int rc = silt_ds_sync(ds);
    if (rc)
        return rc;
    silt_arena *a = silt_arena_new();
    if (!a)
        return silt_err(SILT_ENOMEM, "push flush: out of memory");
    rest_src s;
    int found = find_rest(ds, a, source_name, &s);
    if (found == 0)
        found = source_name ? silt_err(SILT_ENOTFOUND, "dataset '%s' has no RestEndpoint source named '%s'",
                                       ds->name, source_name)
                            : silt_err(SILT_ENOTFOUND, "dataset '%s' has no RestEndpoint source", ds->name);
    else if (found > 0 && !s.buf)
        found = silt_err(SILT_EINVAL, "source '%s' of dataset '%s' has no buffer (its pushes are ingested at once)",
                         s.name, ds->name);
    if (found > 0) {
        snprintf(out->source, sizeof out->source, "%s", s.name);
        rc = flush_source(ds, &s, a, out);
    } else {
        rc = found;
    }
    silt_arena_free(a);
    return rc;
}

/* ---- status ------------------------------------------------------------------------ */

int silt_push_buffer_counts(silt_workspace *ws, const char *source, uint64_t *buffered, uint64_t *dropped)
{
    *buffered = *dropped = 0;
    char *dir = silt_path_join(ws->root, "buffers", NULL);
    if (!dir)
        return silt_err(SILT_ENOMEM, "push buffer: out of memory");
    char **names = NULL;
    int rc = silt_dataset_list(&names, ws);
    for (size_t i = 0; rc >= 0 && names && names[i]; i++) {
        silt_dataset *ds = NULL;
        if (silt_dataset_open(&ds, ws, names[i]) < 0 || silt_ds_sync(ds) < 0) {
            silt_dataset_free(ds);
            silt_err_clear();
            continue;
        }
        char *path = buf_path(ds, source, ".wal");
        silt_buf b = SILT_BUF_INIT;
        silt_pbuf_scan sc;
        if (path && silt_fs_exists(path) && silt_fs_read(path, &b) == 0 &&
            silt_pbuf_parse((const uint8_t *)b.data, b.len, &sc, NULL, NULL) == 0) {
            uint64_t from = max3(sc.base_seq, sc.drop_before, committed_seq(ds, source));
            *buffered += sc.next_seq > from ? sc.next_seq - from : 0;
            *dropped += sc.dropped_total;
        }
        silt_err_clear();
        silt_buf_free(&b);
        free(path);
        silt_dataset_free(ds);
    }
    silt_strv_free(names);
    free(dir);
    return rc < 0 ? rc : 0;
}
