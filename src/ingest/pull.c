/* pull.c — polling ingest (`silt pull`): runs a dataset's polling source
 * through ingress (fetch.h: Url, FilesGlob; container.h: Container) ->
 * prepare (prepare.h) -> the ingestion pipeline (ingest.h). The source is
 * either
 *  - a Flow resource targeting the dataset (resources.h: the first Ingest
 *    task of the first flow by name) with its Source resource: templates
 *    (`${{ config.x }}`, `${{ env.X || 'default' }}`) are rendered into the
 *    URL, request headers, the FilesGlob path, Pipe commands and the
 *    Container image, command, args and env, and the task's
 *    targetRecordsPerSlice splits the batch into several AddData blocks; or
 *  - the legacy SetPollingSource event of the chain, whose same fields are
 *    rendered with `env.X` templates (there is no config).
 * Templates are rendered here, at pull time, never at `silt add`: the chain
 * and the resource files keep the template text.
 * A Container source runs once per batch (one ingest each) while the
 * container says it has more data.
 * When both exist the Flow wins (resources supersede legacy source events,
 * ODF RFC-018) and a warning says so.
 *
 * Invariants:
 *  - every ingest is one atomic publication (SetDataSchema when the schema
 *    grows, then one or more AddData) by the pipeline's single
 *    compare-and-swap; a failure leaves the blocks committed before it and
 *    nothing of the failed ingest;
 *  - source state names: "odf/polling" for the legacy source (states kamu
 *    wrote under "default" are read too); the Source resource's name for a
 *    Flow (kamu has no runtime for Source resources; ODF leaves sourceName
 *    to identify the source). Kinds as kamu writes them: odf/etag (HTTP
 *    ETag, for FilesGlob the name of the last ingested file, for Container
 *    what it wrote to ODF_NEW_ETAG_PATH) and odf/last-modified (RFC 3339);
 *  - secrets: rendered strings are private to this file (zeroed before they
 *    are freed); every message that leaves it — warnings, fetch errors, the
 *    final error — goes through silt_config_redact, so no resolved secret
 *    value (nor its URL-encoded form) reaches stderr, and none is stored:
 *    blocks only ever receive data, offsets and source state (ETag /
 *    Last-Modified / file name), and a state value that contains a secret
 *    (a token in a file name, an ETag echoing one) is stored sealed (each
 *    secret replaced by a marker naming its config key, silt_config_seal)
 *    and unsealed with the current secrets when it is read back;
 *  - temporary files live in `<.silt>/tmp/<random>/` and are removed on
 *    every path.
 */
#include "dataset/dataset_internal.h"
#include "ingest/config.h"
#include "ingest/container.h"
#include "ingest/event_time.h"
#include "ingest/evm.h"
#include "ingest/fetch.h"
#include "ingest/ingest.h"
#include "ingest/mqtt_pull.h"
#include "ingest/prepare.h"
#include "ingest/resources.h"
#include "ingest/skipped.h"
#include "util/error.h"
#include "util/fsutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SILT_POLLING_SOURCE_NAME "odf/polling"
#define SILT_GLOB_MAX_ROUNDS 1000
#define SILT_PULL_ATTEMPTS 5 /* of a --set-watermark that loses races */

/* Everything one pull needs, independent of the source's form. */
typedef struct pull_ctx {
    silt_dataset *ds;
    const silt_pull_opts *o;
    const char *state_name;      /* sourceName of the state we write */
    bool legacy;                 /* SetPollingSource (reads "default" too) */
    const odf_uvec *prepare;     /* possibly rendered copies (Pipe commands) */
    const odf_union *read, *preprocess, *merge;
    uint64_t target_records_per_slice;
    silt_config *cfg;            /* NULL for the legacy source */
    char **owned;                /* rendered strings (may hold secrets) */
    size_t nowned, capowned;
    silt_progress prog;          /* reported through o->progress */
} pull_ctx;

/* ---- progress ---------------------------------------------------------------- */

/* Reports c->prog with `item` (the file about to be read, NULL when done);
 * SILT_ECANCELED when the callback asks to stop. */
static int pull_tick(pull_ctx *c, const char *item, const silt_pull_result *out)
{
    if (!c->o->progress)
        return 0;
    c->prog.item = item;
    c->prog.records = out->num_records;
    if (c->o->progress(c->o->progress_ctx, &c->prog) == 0)
        return 0;
    if (item)
        return silt_err(SILT_ECANCELED, "pull '%s': interrupted before '%s'", c->ds->name, item);
    return silt_err(SILT_ECANCELED, "pull '%s': interrupted", c->ds->name);
}

/* ---- secrets ------------------------------------------------------------- */

static char *redact_hook(void *ctx, const char *text)
{
    const pull_ctx *c = ctx;
    return silt_config_redact(c->cfg, text);
}

/* Warnings of the prepare steps, redacted, then passed to the caller's hook. */
static void redact_warn(void *ctx, const char *line)
{
    const pull_ctx *c = ctx;
    if (!c->o->warn)
        return;
    char *r = silt_config_redact(c->cfg, line);
    c->o->warn(c->o->warn_ctx, r ? r : "(warning withheld: out of memory while removing secrets)");
    free(r);
}

static void pull_ctx_free(pull_ctx *c)
{
    for (size_t i = 0; i < c->nowned; i++) {
        if (c->owned[i]) {
            memset(c->owned[i], 0, strlen(c->owned[i]));
            free(c->owned[i]);
        }
    }
    free(c->owned);
    silt_config_free(c->cfg);
    c->owned = NULL;
    c->cfg = NULL;
    c->nowned = c->capowned = 0;
}

/* Renders template `tmpl` (field `what` in errors); the result is owned by
 * the context. A NULL template stays NULL. */
static int render(pull_ctx *c, const char *what, const char *tmpl, char **out)
{
    *out = NULL;
    if (!tmpl)
        return 0;
    if (c->nowned == c->capowned) {
        size_t cap = c->capowned ? c->capowned * 2 : 8;
        char **n = realloc(c->owned, cap * sizeof *n);
        if (!n)
            return silt_err(SILT_ENOMEM, "pull: out of memory");
        c->owned = n;
        c->capowned = cap;
    }
    int rc = silt_config_render(c->cfg, what, tmpl, out);
    if (rc)
        return rc;
    c->owned[c->nowned++] = *out;
    return 0;
}

/* ---- source state ---------------------------------------------------------- */

static const odf_source_state_ref *prev_state(const pull_ctx *c)
{
    const odf_source_state_ref *fallback = NULL;
    const odf_chain_state *st = &c->ds->st;
    for (size_t i = 0; i < st->num_source_states; i++) {
        const odf_source_state_ref *r = &st->source_states[i];
        if (strcmp(r->source_name, c->state_name) == 0)
            return r;
        if (c->legacy && strcmp(r->source_name, "default") == 0)
            fallback = r;
    }
    return fallback;
}

static void scrub_free(char *s)
{
    if (s)
        memset(s, 0, strlen(s));
    free(s);
}

/* The value the previous state `prev` stands for (a sealed value rendered
 * with the current secrets, see silt_config_unseal); NULL without a state.
 * *out may hold a secret: release it with scrub_free. */
static int prev_value(const pull_ctx *c, const odf_source_state_ref *prev, char **out)
{
    *out = NULL;
    if (!prev || !prev->value)
        return 0;
    int rc = silt_config_unseal(c->cfg, prev->value, out);
    return rc ? silt_err_context(rc, "pull '%s'", c->ds->name) : 0;
}

/* Has this source ingested before? With a state: yes. Without one, data in
 * the dataset counts for the legacy source (the only polling source of its
 * chain); for a Flow only when no source ever recorded a state (otherwise
 * the data came from another source, e.g. a legacy one the Flow replaced). */
static bool ingested_before(const pull_ctx *c, const odf_source_state_ref *prev)
{
    if (prev)
        return true;
    if (!c->ds->st.has_last_offset)
        return false;
    return c->legacy || c->ds->st.num_source_states == 0;
}

/* ---- results --------------------------------------------------------------- */

static void add_result(silt_pull_result *out, const silt_ingest_result *r)
{
    if (r->up_to_date)
        return;
    out->num_ingests += r->num_slices > 1 ? r->num_slices : 1; /* AddData blocks */
    if (r->num_records) {
        if (!out->has_offsets)
            out->first_offset = r->first_offset;
        out->has_offsets = true;
        out->last_offset = r->last_offset;
        out->num_records += r->num_records;
    }
    snprintf(out->head, sizeof out->head, "%s", r->head);
}

static void finish_result(silt_pull_result *out, silt_dataset *ds)
{
    out->up_to_date = out->num_ingests == 0;
    if (silt_ds_sync(ds) == 0) {
        snprintf(out->head, sizeof out->head, "%s", ds->head);
        if (ds->st.has_watermark) {
            out->has_watermark = true;
            silt_time_format((silt_time){ds->st.watermark.sec, ds->st.watermark.nsec}, out->watermark);
        }
    }
}

/* Last path component of a URL without query/fragment, for messages. */
static char *url_display(const char *url)
{
    const char *p = strstr(url, "://");
    p = p ? p + 3 : url;
    size_t n = strcspn(p, "?#");
    const char *end = p + n;
    const char *s = end;
    while (s > p && s[-1] != '/')
        s--;
    if (s == end)
        return strdup("(url)");
    return strndup(s, (size_t)(end - s));
}

/* ---- ingress ---------------------------------------------------------------- */

/* Ingress Url / FetchStep Url after rendering. */
typedef struct url_src {
    const char *url;
    const odf_union *event_time, *cache;
    const char **names, **values; /* nh each */
    size_t nh;
} url_src;

typedef struct glob_src {
    const char *path;
    const odf_union *event_time, *cache;
    int order;
} glob_src;

/* Prepares `file` and ingests it with the given fallback event time and state. */
static int ingest_one(pull_ctx *c, const char *tmpdir, const char *file, const char *display, bool has_et,
                      silt_time et, const odf_SourceState *state, silt_ingest_result *r)
{
    char *prepared = NULL;
    int rc = silt_prepare_run(&prepared, c->prepare, file, display, tmpdir, redact_warn, c);
    if (rc)
        return silt_err_context(rc, "pull '%s'", c->ds->name);
    const char *files[1] = {prepared};
    const char *disp[1] = {display};
    silt_ingest_request req = {.read = c->read,
                               .preprocess = c->preprocess,
                               .merge = c->merge,
                               .files = files,
                               .display = disp,
                               .nfiles = 1,
                               .has_event_time = has_et,
                               .event_time = et,
                               .source_state = state,
                               .target_records_per_slice = c->target_records_per_slice};
    rc = silt_ingest_run(c->ds, &req, r);
    free(prepared);
    return rc;
}

static int pull_url(pull_ctx *c, const url_src *u, silt_pull_result *out)
{
    silt_dataset *ds = c->ds;
    const odf_source_state_ref *prev = prev_state(c);
    if (u->cache->type == ODF_SourceCaching_Forever && ingested_before(c, prev))
        return 0; /* ingested once: never again */
    if (!prev && ingested_before(c, prev) && !c->o->fetch_uncacheable) {
        out->uncacheable = true;
        return 0;
    }
    char *tmpdir = NULL, *body = NULL, *shown = silt_config_redact(c->cfg, u->url ? u->url : "");
    char *display = shown ? url_display(shown) : NULL, *prev_v = NULL, *sealed = NULL;
    int rc = display ? 0 : silt_err(SILT_ENOMEM, "pull: out of memory");
    if (!rc)
        rc = prev_value(c, prev, &prev_v);
    c->prog.total++;
    if (!rc)
        rc = pull_tick(c, display, out);
    if (!rc)
        rc = silt_ws_mktemp(ds->ws, "tmp", &tmpdir);
    if (!rc && !(body = silt_path_join(tmpdir, "fetched", NULL)))
        rc = silt_err(SILT_ENOMEM, "pull: out of memory");
    silt_fetch_url_result fr;
    memset(&fr, 0, sizeof fr);
    if (!rc) {
        silt_fetch_url_opts fo = {.url = u->url,
                                  .header_names = u->names,
                                  .header_values = u->values,
                                  .nheaders = u->nh,
                                  .prev_kind = prev ? prev->kind : NULL,
                                  .prev_value = prev_v,
                                  .out_path = body,
                                  .redact = redact_hook,
                                  .redact_ctx = c};
        rc = silt_fetch_url(&fr, &fo);
        if (rc)
            rc = silt_err_context(rc, "pull '%s'", ds->name);
    }
    if (!rc && !fr.up_to_date) {
        bool has_et = false;
        silt_time et = {0, 0};
        rc = silt_et_resolve(u->event_time, ODF_EventTimeSource_FromMetadata, u->url, fr.has_last_modified,
                             fr.last_modified, &has_et, &et);
        if (rc)
            rc = silt_err_context(rc, "pull '%s'", ds->name);
        if (!rc && fr.state_kind && (rc = silt_config_seal(c->cfg, fr.state_value, &sealed)) != 0)
            rc = silt_err_context(rc, "pull '%s'", ds->name);
        odf_SourceState ss = {(char *)c->state_name, fr.state_kind, sealed};
        silt_ingest_result r;
        c->prog.total_bytes += fr.bytes;
        if (!rc)
            rc = pull_tick(c, display, out); /* fetched: the last chance to stop before the commit */
        if (!rc)
            rc = ingest_one(c, tmpdir, fr.path, display, has_et, et, fr.state_kind ? &ss : NULL, &r);
        if (!rc)
            add_result(out, &r);
        c->prog.bytes += fr.bytes;
    }
    if (!rc) {
        c->prog.done++;
        rc = pull_tick(c, NULL, out);
    }
    if (fr.state_value)
        memset(fr.state_value, 0, strlen(fr.state_value)); /* may hold a secret */
    silt_fetch_url_result_free(&fr);
    if (tmpdir)
        silt_fs_remove_tree(tmpdir);
    free(tmpdir);
    free(body);
    free(display);
    free(shown);
    scrub_free(prev_v);
    free(sealed);
    return rc;
}

/* ---- FilesGlob -------------------------------------------------------------- */

/* One AddData that only records source state `ss` (a 0-byte file: no
 * records, nothing to read or merge, but the source moves past it). A lost
 * race is retried while the source's state is still the one it was. */
static int commit_state_only(pull_ctx *c, const odf_SourceState *ss, silt_ingest_result *r)
{
    silt_dataset *ds = c->ds;
    const odf_source_state_ref *p0 = prev_state(c);
    char *was = p0 && p0->value ? strdup(p0->value) : NULL;
    if (p0 && p0->value && !was)
        return silt_err(SILT_ENOMEM, "pull: out of memory");
    int rc = 0;
    for (int attempt = 1;; attempt++) {
        odf_AddData ad;
        memset(&ad, 0, sizeof ad);
        odf_Checkpoint cp;
        silt_ds_add_data_continue(ds, &ad, &cp);
        if (ds->st.has_watermark) { /* carried forward: no records, no new event time */
            ad.has_new_watermark = true;
            ad.new_watermark = ds->st.watermark;
        }
        ad.new_source_state = (odf_SourceState *)ss;
        odf_union ev = {ODF_MetadataEvent_AddData, &ad};
        rc = silt_ds_append_events_n(ds, &ev, 1, NULL);
        if (rc != SILT_ECONFLICT || attempt >= SILT_PULL_ATTEMPTS)
            break;
        if ((rc = silt_ds_sync(ds)) != 0)
            break;
        const odf_source_state_ref *p1 = prev_state(c);
        if (strcmp(p1 && p1->value ? p1->value : "", was ? was : "") != 0) {
            rc = silt_err(SILT_ECONFLICT, "pull '%s': another writer ingested from the source meanwhile", ds->name);
            break;
        }
        silt_err_clear();
    }
    free(was);
    if (rc)
        return rc;
    memset(r, 0, sizeof *r);
    r->num_slices = 1;
    snprintf(r->head, sizeof r->head, "%s", ds->head);
    return 0;
}

/* Ingests one listed file: its own AddData, or a state-only one when empty. */
static int glob_ingest_file(pull_ctx *c, const silt_glob_file *f, silt_pull_result *out)
{
    char *sealed = NULL;
    int rc = silt_config_seal(c->cfg, f->name, &sealed);
    if (rc)
        return rc;
    odf_SourceState ss = {(char *)c->state_name, SILT_STATE_ETAG, sealed};
    silt_ingest_result r;
    if (f->size == 0) {
        rc = commit_state_only(c, &ss, &r);
    } else {
        char *tmpdir = NULL;
        rc = silt_ws_mktemp(c->ds->ws, "tmp", &tmpdir);
        if (!rc)
            rc = ingest_one(c, tmpdir, f->path, f->name, f->has_time, f->time, &ss, &r);
        if (tmpdir)
            silt_fs_remove_tree(tmpdir);
        free(tmpdir);
    }
    if (!rc)
        add_result(out, &r);
    free(sealed);
    return rc;
}

/* Files the pull will not read: a warning each, and the record (skipped.h).
 * Files the chain records as ingested by this source are not mentioned. */
typedef struct glob_notes {
    const char **files, **reasons; /* n each; malloc'd and redacted (a file name may hold a secret) */
    size_t n;
} glob_notes;

static void glob_notes_free(glob_notes *g)
{
    for (size_t i = 0; i < g->n; i++) {
        free((char *)g->files[i]);
        free((char *)g->reasons[i]);
    }
    free(g->files);
    free(g->reasons);
    memset(g, 0, sizeof *g);
}

/* Was file name `name` ingested by this source (its sealed name is a
 * recorded state value)? */
static int was_ingested(pull_ctx *c, char *const *vals, size_t nvals, const char *name, bool *yes)
{
    char *sealed = NULL;
    int rc = silt_config_seal(c->cfg, name, &sealed);
    if (rc)
        return rc;
    *yes = silt_skipped_contains(vals, nvals, sealed);
    free(sealed);
    return 0;
}

/* Notes `file` (late: it sorts before the last ingested one; else its
 * event time failed) and warns about it. */
static int note_add(pull_ctx *c, glob_notes *g, const char *file, const char *reason, bool late)
{
    char *r = silt_config_redact(c->cfg, reason), *f = silt_config_redact(c->cfg, file);
    if (!r || !f) {
        free(r);
        free(f);
        return silt_err(SILT_ENOMEM, "pull: out of memory");
    }
    g->files[g->n] = f;
    g->reasons[g->n++] = r;
    char msg[2048];
    if (late)
        snprintf(msg, sizeof msg, "pull '%s': file '%s' %s and will not be read; rename it or reset the source",
                 c->ds->name, file, reason);
    else
        snprintf(msg, sizeof msg, "pull '%s': skipping '%s': %s", c->ds->name, file, reason);
    redact_warn(c, msg);
    return 0;
}

static int glob_notes_collect(pull_ctx *c, const silt_glob_listing *l, const char *last, glob_notes *g)
{
    memset(g, 0, sizeof *g);
    if (!l->nskipped && !l->nbefore)
        return 0;
    size_t cap = l->nskipped + l->nbefore;
    g->files = calloc(cap, sizeof *g->files);
    g->reasons = calloc(cap, sizeof *g->reasons);
    silt_arena *a = silt_arena_new();
    char **vals = NULL;
    size_t nvals = 0;
    int rc = g->files && g->reasons && a ? 0 : silt_err(SILT_ENOMEM, "pull: out of memory");
    bool known = true; /* the chain told which names were ingested */
    if (!rc && (rc = silt_skipped_ingested_values(&vals, &nvals, c->ds, c->state_name, c->legacy, a)) != 0 &&
        rc != SILT_ENOMEM) {
        known = false; /* an unreadable block is verify's to report; the pull itself goes on */
        silt_err_clear();
        rc = 0;
    }
    for (size_t i = 0; !rc && i < l->nskipped; i++) {
        bool done = false;
        rc = was_ingested(c, vals, nvals, l->skipped[i].name, &done);
        if (!rc && !done)
            rc = note_add(c, g, l->skipped[i].name, l->skipped[i].reason, false);
    }
    for (size_t i = 0; !rc && known && i < l->nbefore; i++) {
        bool done = false;
        rc = was_ingested(c, vals, nvals, l->before[i].name, &done);
        char reason[1024];
        snprintf(reason, sizeof reason, "sorts before the last ingested '%s'", last ? last : "");
        if (!rc && !done)
            rc = note_add(c, g, l->before[i].name, reason, true);
    }
    silt_arena_free(a);
    return rc;
}

/* Lists the folder against the current source state. */
static int glob_list(pull_ctx *c, const glob_src *g, silt_glob_listing *l, char **last)
{
    const odf_source_state_ref *prev = prev_state(c);
    *last = NULL;
    int rc = prev && strcmp(prev->kind, SILT_STATE_ETAG) == 0 ? prev_value(c, prev, last) : 0;
    if (!rc && (rc = silt_fetch_glob(l, g->path, g->order, g->event_time, *last)) != 0)
        rc = silt_err_context(rc, "pull '%s'", c->ds->name);
    return rc;
}

/* Rounds of list + ingest until no new file appears. The first round's
 * files that will not be read are warned about and, when the pull
 * succeeds, recorded. */
static int pull_glob(pull_ctx *c, const glob_src *g, silt_pull_result *out)
{
    silt_dataset *ds = c->ds;
    glob_notes notes = {0};
    int rc = 0;
    for (int round = 0; round < SILT_GLOB_MAX_ROUNDS && !rc; round++) {
        if (g->cache->type == ODF_SourceCaching_Forever && ingested_before(c, prev_state(c)))
            break;
        silt_glob_listing l = {0};
        char *last = NULL;
        rc = glob_list(c, g, &l, &last);
        if (!rc && round == 0)
            rc = glob_notes_collect(c, &l, last, &notes);
        bool had_last = last != NULL;
        scrub_free(last);
        if (!rc && l.n == 0 && !had_last && out->num_ingests == 0 && l.total == 0)
            rc = silt_err(SILT_ENOTFOUND, "pull '%s': no files match '%s'", ds->name, g->path);
        c->prog.total += l.n;
        for (size_t i = 0; i < l.n; i++)
            c->prog.total_bytes += l.files[i].size;
        for (size_t i = 0; !rc && i < l.n; i++) {
            if ((rc = pull_tick(c, l.files[i].name, out)) != 0)
                break;
            rc = glob_ingest_file(c, &l.files[i], out);
            if (!rc) {
                c->prog.done++;
                c->prog.bytes += l.files[i].size;
            }
        }
        if (!rc && l.n)
            rc = pull_tick(c, NULL, out);
        bool more = l.n > 0 && g->cache->type != ODF_SourceCaching_Forever;
        silt_glob_listing_free(&l);
        if (!more)
            break;
    }
    if (!rc && g->cache->type != ODF_SourceCaching_Forever)
        rc = silt_skipped_record(ds, c->state_name, notes.files, (const char *const *)notes.reasons, notes.n);
    glob_notes_free(&notes);
    return rc;
}

/* ---- EVM logs ------------------------------------------------------------------ */

typedef struct evm_src {
    bool has_chain_id;
    uint64_t chain_id;
    const char *node_url, *filter, *signature;
} evm_src;

/* One batch of logs: its Parquet file through prepare/read/merge, or a
 * state-only AddData when no log matched. *more: blocks remain. */
static int evm_batch(pull_ctx *c, const evm_src *e, silt_pull_result *out, bool *more)
{
    const odf_source_state_ref *prev = prev_state(c);
    char *tmpdir = NULL, *prev_v = NULL, *sealed = NULL;
    int rc = prev && strcmp(prev->kind, SILT_STATE_ETAG) == 0 ? prev_value(c, prev, &prev_v) : 0;
    if (!rc)
        rc = silt_ws_mktemp(c->ds->ws, "tmp", &tmpdir);
    silt_evm_result r;
    memset(&r, 0, sizeof r);
    if (!rc) {
        silt_evm_opts eo = {e->has_chain_id, e->chain_id, e->node_url, e->filter, e->signature,
                            prev_v, tmpdir, redact_hook, c};
        rc = silt_evm_fetch(&r, &eo);
    }
    *more = !rc && r.has_more;
    if (!rc && !r.up_to_date && (rc = silt_config_seal(c->cfg, r.state_value, &sealed)) == 0) {
        odf_SourceState ss = {(char *)c->state_name, SILT_STATE_ETAG, sealed};
        silt_ingest_result ir;
        c->prog.total++;
        rc = pull_tick(c, "logs", out);
        if (!rc)
            rc = r.path ? ingest_one(c, tmpdir, r.path, "logs", false, (silt_time){0, 0}, &ss, &ir)
                        : commit_state_only(c, &ss, &ir);
        if (!rc) {
            add_result(out, &ir);
            c->prog.done++;
        }
    }
    silt_evm_result_free(&r);
    if (tmpdir)
        silt_fs_remove_tree(tmpdir);
    free(tmpdir);
    scrub_free(prev_v);
    free(sealed);
    return rc ? silt_err_context(rc, "pull '%s'", c->ds->name) : 0;
}

/* Batches until the scan reaches its target (head minus confirmations). */
static int pull_evm(pull_ctx *c, const evm_src *e, silt_pull_result *out)
{
    if (c->read->type != ODF_ReadStep_Parquet)
        return silt_err(SILT_EINVAL, "pull '%s': an EVM logs source needs `read: {kind: Parquet}` (the fetched logs "
                        "are a Parquet file, as in kamu)", c->ds->name);
    silt_evm_opts chk = {e->has_chain_id, e->chain_id, e->node_url, e->filter, e->signature, NULL, NULL, NULL, NULL};
    int rc = silt_evm_check(&chk);
    if (rc)
        return silt_err_context(rc, "pull '%s'", c->ds->name);
    bool more = true;
    for (int round = 0; !rc && more && round < SILT_GLOB_MAX_ROUNDS; round++)
        rc = evm_batch(c, e, out, &more);
    if (!rc)
        rc = pull_tick(c, NULL, out);
    return rc;
}

/* ---- Container ---------------------------------------------------------------- */

#define SILT_CONTAINER_MAX_BATCHES 100000 /* a guard against a container that always has more */

/* Ingress Container / FetchStep Container after rendering; ODF_BATCH_SIZE and
 * SILT_CONTAINER_NETWORK of the source's env are settings, not passed on. */
typedef struct ctr_src {
    const char *image;
    const char **command, **args, **env_names, **env_values;
    size_t ncommand, nargs, nenv;
    bool host_network;
    uint64_t batch_size;
} ctr_src;

/* Each stderr line of the container, as a (redacted) warning. */
static void ctr_log(void *ctx, const char *line)
{
    pull_ctx *c = ctx;
    char msg[1400];
    snprintf(msg, sizeof msg, "pull '%s': container: %s", c->ds->name, line);
    redact_warn(c, msg);
}

/* While a container runs: the progress hook (Ctrl-C stops the run). */
typedef struct ctr_poll_ctx {
    pull_ctx *c;
    const char *display;
    silt_pull_result *out;
} ctr_poll_ctx;

static int ctr_poll(void *ctx)
{
    ctr_poll_ctx *p = ctx;
    return pull_tick(p->c, p->display, p->out);
}

/* A setting of the source's env list: 1 = consumed, 0 = a variable to pass on. */
static int ctr_setting(ctr_src *s, const char *what, const char *name, const char *value)
{
    if (strcmp(name, "ODF_BATCH_SIZE") == 0) {
        char *end;
        unsigned long long n = strtoull(value, &end, 10);
        if (!*value || *end || n == 0 || *value == '-')
            return silt_err(SILT_EINVAL, "%s: ODF_BATCH_SIZE must be a positive integer", what);
        s->batch_size = n;
        return 1;
    }
    if (strcmp(name, "SILT_CONTAINER_NETWORK") == 0) {
        if (strcmp(value, "none") != 0 && strcmp(value, "host") != 0)
            return silt_err(SILT_EINVAL, "%s: SILT_CONTAINER_NETWORK must be 'none' or 'host'", what);
        s->host_network = strcmp(value, "host") == 0;
        return 1;
    }
    return 0;
}

/* Renders the fields of a Container ingress (`pfx` "fetch" or "ingress"). An
 * env entry without a value takes the variable of the same name from silt's
 * environment (as the template ${{ env.NAME }}). */
static int render_container(pull_ctx *c, const char *pfx, const char *image, const odf_strvec *cmd,
                            const odf_strvec *args, const odf_vec *env, ctr_src *s, silt_arena *a)
{
    memset(s, 0, sizeof *s);
    char what[96];
    snprintf(what, sizeof what, "%s.image", pfx);
    char *img = NULL;
    int rc = render(c, what, image ? image : "", &img);
    s->image = img;
    size_t nc = cmd->present ? cmd->n : 0, na = args->present ? args->n : 0, ne = env->present ? env->n : 0;
    s->command = silt_arena_alloc(a, (nc + 1) * sizeof *s->command);
    s->args = silt_arena_alloc(a, (na + 1) * sizeof *s->args);
    s->env_names = silt_arena_alloc(a, (ne + 1) * sizeof *s->env_names);
    s->env_values = silt_arena_alloc(a, (ne + 1) * sizeof *s->env_values);
    if (!rc && (!s->command || !s->args || !s->env_names || !s->env_values))
        rc = silt_err(SILT_ENOMEM, "pull: out of memory");
    for (size_t i = 0; !rc && i < nc; i++, s->ncommand++) {
        snprintf(what, sizeof what, "%s.command[%zu]", pfx, i);
        rc = render(c, what, cmd->items[i], (char **)&s->command[i]);
    }
    for (size_t i = 0; !rc && i < na; i++, s->nargs++) {
        snprintf(what, sizeof what, "%s.args[%zu]", pfx, i);
        rc = render(c, what, args->items[i], (char **)&s->args[i]);
    }
    for (size_t i = 0; !rc && i < ne; i++) {
        const odf_EnvVar *e = env->items[i];
        const char *name = e->name ? e->name : "";
        char implied[300], *v = NULL;
        snprintf(what, sizeof what, "%s.env[%zu].value", pfx, i);
        snprintf(implied, sizeof implied, "${{ env.%s }}", name);
        rc = render(c, what, e->value ? e->value : implied, &v);
        snprintf(what, sizeof what, "%s.env[%zu]", pfx, i);
        int used = rc ? rc : ctr_setting(s, what, name, v);
        if (used < 0)
            rc = used;
        else if (used == 0) {
            s->env_names[s->nenv] = name;
            s->env_values[s->nenv++] = v;
        }
    }
    return rc;
}

/* The state a container run produced: ETag first, else Last-Modified. */
static int ctr_new_state(const silt_container_result *r, const char **kind, char **value)
{
    *kind = NULL;
    *value = NULL;
    if (r->etag) {
        *kind = SILT_STATE_ETAG;
        *value = strdup(r->etag);
    } else if (r->has_last_modified) {
        char text[40];
        silt_time_format(r->last_modified, text);
        *kind = SILT_STATE_LAST_MODIFIED;
        *value = strdup(text);
    } else {
        return 0;
    }
    return *value ? 0 : silt_err(SILT_ENOMEM, "pull: out of memory");
}

/* Ingests the output of one run: its data with the new state, a state-only
 * AddData for an empty output, nothing without data and state. */
static int ctr_ingest(pull_ctx *c, const char *tmpdir, const char *data, const char *display,
                      const silt_container_result *r, const char *kind, const char *value, silt_pull_result *out)
{
    char *sealed = NULL;
    int rc = kind ? silt_config_seal(c->cfg, value, &sealed) : 0;
    odf_SourceState ss = {(char *)c->state_name, (char *)kind, sealed};
    silt_ingest_result ir;
    if (!rc && r->bytes == 0 && kind)
        rc = commit_state_only(c, &ss, &ir);
    else if (!rc && r->bytes)
        rc = ingest_one(c, tmpdir, data, display, false, (silt_time){0, 0}, kind ? &ss : NULL, &ir);
    if (!rc && (r->bytes || kind))
        add_result(out, &ir);
    free(sealed);
    return rc;
}

/* One run of the container and its ingest; *more: run again. */
static int ctr_batch(pull_ctx *c, const ctr_src *s, const char *display, char **kind, char **value,
                     silt_pull_result *out, bool *more)
{
    *more = false;
    char *tmpdir = NULL, *data = NULL, *nv = NULL;
    const char *nk = NULL;
    silt_container_result r;
    memset(&r, 0, sizeof r);
    int rc = silt_ws_mktemp(c->ds->ws, "tmp", &tmpdir);
    if (!rc && !(data = silt_path_join(tmpdir, "fetched", NULL)))
        rc = silt_err(SILT_ENOMEM, "pull: out of memory");
    if (!rc) {
        bool etag = *kind && strcmp(*kind, SILT_STATE_ETAG) == 0;
        ctr_poll_ctx pc = {c, display, out};
        silt_container_opts o = {.image = s->image,
                                 .command = s->command, .ncommand = s->ncommand,
                                 .args = s->args, .nargs = s->nargs,
                                 .env_names = s->env_names, .env_values = s->env_values, .nenv = s->nenv,
                                 .host_network = s->host_network,
                                 .batch_size = s->batch_size,
                                 .prev_etag = etag ? *value : NULL,
                                 .prev_last_modified = *kind && !etag ? *value : NULL,
                                 .workdir = tmpdir, .out_path = data,
                                 .log = ctr_log, .log_ctx = c,
                                 .poll = c->o->progress ? ctr_poll : NULL, .poll_ctx = &pc};
        rc = silt_container_run(&r, &o);
    }
    if (!rc)
        rc = ctr_new_state(&r, &nk, &nv);
    bool same = !rc && nk && *kind && strcmp(nk, *kind) == 0 && strcmp(nv, *value) == 0;
    if (same && r.bytes)
        rc = silt_err(SILT_EINVAL,
                      "container '%s' wrote the previous source state again but also %llu bytes of data (a "
                      "container with nothing new must write no data)",
                      s->image, (unsigned long long)r.bytes);
    else if (!rc && r.has_more && (!nk || same))
        rc = silt_err(SILT_EINVAL,
                      "container '%s' created ODF_NEW_HAS_MORE_DATA_PATH without writing a new ETag or "
                      "Last-Modified",
                      s->image);
    c->prog.total_bytes += r.bytes;
    if (!rc && !same)
        rc = pull_tick(c, display, out); /* fetched: the last chance to stop before the commit */
    if (!rc && !same)
        rc = ctr_ingest(c, tmpdir, data, display, &r, nk, nv, out);
    if (!rc && !same && nk) {
        scrub_free(*value);
        free(*kind);
        *kind = strdup(nk);
        *value = nv;
        nv = NULL;
        if (!*kind)
            rc = silt_err(SILT_ENOMEM, "pull: out of memory");
        *more = !rc && r.has_more;
    }
    c->prog.bytes += r.bytes;
    silt_container_result_free(&r);
    scrub_free(nv);
    if (tmpdir)
        silt_fs_remove_tree(tmpdir);
    free(tmpdir);
    free(data);
    return rc;
}

/* Runs the container until it has no more data: one ingest per batch. */
static int pull_container(pull_ctx *c, const ctr_src *s, silt_pull_result *out)
{
    const odf_source_state_ref *prev = prev_state(c);
    char *kind = prev && prev->kind ? strdup(prev->kind) : NULL, *value = NULL;
    char *display = silt_config_redact(c->cfg, s->image);
    int rc = (prev && prev->kind && !kind) || !display ? silt_err(SILT_ENOMEM, "pull: out of memory") : 0;
    if (!rc)
        rc = prev_value(c, prev, &value);
    if (!rc && kind && !value && !(value = strdup("")))
        rc = silt_err(SILT_ENOMEM, "pull: out of memory");
    bool more = true;
    for (size_t batch = 0; !rc && more; batch++) {
        if (batch == SILT_CONTAINER_MAX_BATCHES) {
            rc = silt_err(SILT_EINVAL, "container '%s' still has more data after %d batches", s->image,
                          SILT_CONTAINER_MAX_BATCHES);
            break;
        }
        c->prog.total++;
        rc = pull_tick(c, display, out);
        if (!rc)
            rc = ctr_batch(c, s, display, &kind, &value, out, &more);
        if (!rc)
            c->prog.done++;
    }
    if (!rc)
        rc = pull_tick(c, NULL, out);
    if (rc)
        rc = silt_err_context(rc, "pull '%s'", c->ds->name);
    free(kind);
    scrub_free(value);
    free(display);
    return rc;
}

/* ---- the two source forms ------------------------------------------------------ */

/* Renders the request of a Url step (`pfx` "fetch" or "ingress"). */
static int render_url(pull_ctx *c, const char *pfx, const char *url, const odf_vec *headers, url_src *u,
                      silt_arena *a)
{
    size_t nh = headers->present ? headers->n : 0;
    const char **names = silt_arena_alloc(a, (nh + 1) * sizeof *names);
    const char **values = silt_arena_alloc(a, (nh + 1) * sizeof *values);
    if (!names || !values)
        return silt_err(SILT_ENOMEM, "pull: out of memory");
    char what[64], *r = NULL;
    snprintf(what, sizeof what, "%s.url", pfx);
    int rc = render(c, what, url ? url : "", &r);
    for (size_t i = 0; !rc && i < nh; i++) {
        const odf_RequestHeader *h = headers->items[i];
        char *v = NULL, *n = NULL;
        snprintf(what, sizeof what, "%s.headers[%zu].name", pfx, i);
        rc = render(c, what, h->name ? h->name : "", &n);
        snprintf(what, sizeof what, "%s.headers[%zu].value", pfx, i);
        if (!rc)
            rc = render(c, what, h->value ? h->value : "", &v);
        names[i] = n;
        values[i] = v;
    }
    u->url = r;
    u->names = names;
    u->values = values;
    u->nh = nh;
    return rc;
}

static int render_prepare(pull_ctx *c, const odf_uvec *in, odf_uvec *outv, silt_arena *a);

/* The legacy SetPollingSource: its fields are templates too (env.NAME;
 * there is no config). */
static int run_legacy(pull_ctx *c, const odf_SetPollingSource *ps, silt_arena *a, silt_pull_result *out)
{
    c->state_name = SILT_POLLING_SOURCE_NAME;
    c->legacy = true;
    c->read = &ps->read;
    c->preprocess = &ps->preprocess;
    c->merge = &ps->merge;
    c->target_records_per_slice = c->o->target_records_per_slice;
    int rc = silt_config_load(&c->cfg, c->ds->ws->root, NULL); /* empty: collects env values to redact */
    odf_uvec *prep = rc ? NULL : silt_arena_alloc(a, sizeof *prep);
    if (!rc && !prep)
        rc = silt_err(SILT_ENOMEM, "pull: out of memory");
    if (!rc)
        rc = render_prepare(c, &ps->prepare, prep, a);
    if (rc)
        return silt_err_context(rc, "pull '%s'", c->ds->name);
    c->prepare = prep;
    switch (ps->fetch.type) {
    case ODF_FetchStep_Url: {
        const odf_FetchStepUrl *f = ps->fetch.value;
        url_src u = {NULL, &f->event_time, &f->cache, NULL, NULL, 0};
        rc = render_url(c, "fetch", f->url, &f->headers, &u, a);
        return rc ? silt_err_context(rc, "pull '%s'", c->ds->name) : pull_url(c, &u, out);
    }
    case ODF_FetchStep_FilesGlob: {
        const odf_FetchStepFilesGlob *f = ps->fetch.value;
        char *path = NULL;
        if ((rc = render(c, "fetch.path", f->path ? f->path : "", &path)) != 0)
            return silt_err_context(rc, "pull '%s'", c->ds->name);
        glob_src g = {path, &f->event_time, &f->cache, f->has_order ? f->order : ODF_SourceOrdering_ByName};
        return pull_glob(c, &g, out);
    }
    case ODF_FetchStep_EthereumLogs: {
        const odf_FetchStepEthereumLogs *f = ps->fetch.value;
        evm_src e = {f->has_chain_id, f->chain_id, f->node_url, f->filter, f->signature};
        return pull_evm(c, &e, out);
    }
    case ODF_FetchStep_Container: {
        const odf_FetchStepContainer *f = ps->fetch.value;
        ctr_src cs;
        rc = render_container(c, "fetch", f->image, &f->command, &f->args, &f->env, &cs, a);
        return rc ? silt_err_context(rc, "pull '%s'", c->ds->name) : pull_container(c, &cs, out);
    }
    case ODF_FetchStep_Mqtt: {
        const odf_FetchStepMqtt *f = ps->fetch.value;
        odf_IngressMqtt m = {f->host, f->port, f->username, f->password, f->topics};
        odf_SourceSpec spec = {.read = ps->read, .preprocess = ps->preprocess, .merge = ps->merge};
        rc = silt_mqtt_pull(c->ds, SILT_MQTT_LEGACY_SOURCE, &spec, &m, c->cfg, c->o, out);
        return rc ? silt_err_context(rc, "pull '%s'", c->ds->name) : 0;
    }
    default:
        return silt_err(SILT_EINVAL, "pull '%s': the polling source has no fetch step", c->ds->name);
    }
}

static const char *or_default(const char *v, const char *d) { return v && *v ? v : d; }

/* A Source's `vocab` must agree with the dataset's (SetVocab or defaults):
 * the pipeline writes the dataset's column names. */
static int check_vocab(pull_ctx *c, const char *source, const odf_DatasetVocabulary *sv, silt_arena *a)
{
    if (!sv)
        return 0;
    const odf_SetVocab *dv = NULL;
    if (c->ds->st.vocab.present) {
        odf_MetadataBlock *b = NULL;
        int rc = silt_ds_load_block(c->ds, c->ds->st.vocab.hash, a, &b);
        if (rc)
            return rc;
        if (b->event.type == ODF_MetadataEvent_SetVocab)
            dv = b->event.value;
    }
    const struct {
        const char *field, *src, *ds, *def;
    } cols[] = {
        {"offsetColumn", sv->offset_column, dv ? dv->offset_column : NULL, "offset"},
        {"operationTypeColumn", sv->operation_type_column, dv ? dv->operation_type_column : NULL, "op"},
        {"systemTimeColumn", sv->system_time_column, dv ? dv->system_time_column : NULL, "system_time"},
        {"eventTimeColumn", sv->event_time_column, dv ? dv->event_time_column : NULL, "event_time"},
    };
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++) {
        const char *want = or_default(cols[i].ds, cols[i].def);
        if (cols[i].src && *cols[i].src && strcmp(cols[i].src, want) != 0)
            return silt_err(SILT_EINVAL,
                            "pull '%s': source '%s': vocab.%s '%s' differs from the dataset's column '%s' "
                            "(give the dataset a SetVocab event instead)",
                            c->ds->name, source, cols[i].field, cols[i].src, want);
    }
    return 0;
}

/* Copies the prepare steps with rendered Pipe commands into `a`. */
static int render_prepare(pull_ctx *c, const odf_uvec *in, odf_uvec *outv, silt_arena *a)
{
    *outv = *in;
    if (!in->n)
        return 0;
    odf_union *items = silt_arena_alloc(a, in->n * sizeof *items);
    if (!items)
        return silt_err(SILT_ENOMEM, "pull: out of memory");
    for (size_t i = 0; i < in->n; i++) {
        items[i] = in->items[i];
        if (in->items[i].type != ODF_PrepStep_Pipe)
            continue;
        const odf_PrepStepPipe *p = in->items[i].value;
        odf_PrepStepPipe *np = silt_arena_alloc(a, sizeof *np);
        char **argv = silt_arena_alloc(a, (p->command.n + 1) * sizeof *argv);
        if (!np || !argv)
            return silt_err(SILT_ENOMEM, "pull: out of memory");
        for (size_t j = 0; j < p->command.n; j++) {
            char what[64];
            snprintf(what, sizeof what, "prepare[%zu].command[%zu]", i, j);
            int rc = render(c, what, p->command.items[j], &argv[j]);
            if (rc)
                return rc;
        }
        argv[p->command.n] = NULL;
        np->command = p->command;
        np->command.items = argv;
        items[i].value = np;
    }
    outv->items = items;
    return 0;
}

/* A buffered RestEndpoint source: `silt pull` flushes its buffer. */
static int flush_rest(pull_ctx *c, const silt_ingest_plan *plan, silt_pull_result *out)
{
    silt_push_flush_result f;
    int rc = silt_push_flush(&f, c->ds, plan->source_name);
    if (rc)
        return silt_err_context(rc, "pull '%s'", c->ds->name);
    if (f.committed) {
        out->num_ingests = 1;
        out->num_records = f.ingest.num_records;
        out->has_offsets = f.ingest.num_records > 0;
        out->first_offset = f.ingest.first_offset;
        out->last_offset = f.ingest.last_offset;
    }
    return 0;
}

static int run_flow(pull_ctx *c, const silt_ingest_plan *plan, silt_arena *a, silt_pull_result *out)
{
    const odf_SourceSpec *s = plan->source;
    const char *dsn = c->ds->name;
    c->state_name = plan->source_name;
    c->legacy = false;
    c->read = &s->read;
    c->preprocess = &s->preprocess;
    c->merge = &s->merge;
    c->target_records_per_slice =
        c->o->target_records_per_slice ? c->o->target_records_per_slice : plan->target_records_per_slice;
    int rc = silt_config_load(&c->cfg, c->ds->ws->root, s->config);
    if (rc)
        return silt_err_context(rc, "pull '%s': source '%s'", dsn, plan->source_name);
    rc = check_vocab(c, plan->source_name, s->vocab, a);
    odf_uvec *prep = silt_arena_alloc(a, sizeof *prep);
    if (!rc && !prep)
        rc = silt_err(SILT_ENOMEM, "pull: out of memory");
    if (!rc)
        rc = render_prepare(c, &s->prepare, prep, a);
    if (rc)
        return silt_err_context(rc, "pull '%s': source '%s'", dsn, plan->source_name);
    c->prepare = prep;
    switch (s->ingress.type) {
    case ODF_Ingress_Url: {
        const odf_IngressUrl *f = s->ingress.value;
        url_src u = {NULL, &f->event_time, &f->cache, NULL, NULL, 0};
        rc = render_url(c, "ingress", f->url, &f->headers, &u, a);
        if (rc)
            return silt_err_context(rc, "pull '%s': source '%s'", dsn, plan->source_name);
        return pull_url(c, &u, out);
    }
    case ODF_Ingress_FilesGlob: {
        const odf_IngressFilesGlob *f = s->ingress.value;
        char *path = NULL;
        rc = render(c, "ingress.path", f->path ? f->path : "", &path);
        if (rc)
            return silt_err_context(rc, "pull '%s': source '%s'", dsn, plan->source_name);
        glob_src g = {path, &f->event_time, &f->cache, f->has_order ? f->order : ODF_SourceOrdering_ByName};
        return pull_glob(c, &g, out);
    }
    case ODF_Ingress_EvmLogs: {
        const odf_IngressEvmLogs *f = s->ingress.value;
        char *url = NULL;
        rc = render(c, "ingress.nodeUrl", f->node_url ? f->node_url : "", &url);
        if (rc)
            return silt_err_context(rc, "pull '%s': source '%s'", dsn, plan->source_name);
        evm_src e = {f->has_chain_id, f->chain_id, url, f->filter, f->signature};
        return pull_evm(c, &e, out);
    }
    case ODF_Ingress_Container: {
        const odf_IngressContainer *f = s->ingress.value;
        ctr_src cs;
        rc = render_container(c, "ingress", f->image, &f->command, &f->args, &f->env, &cs, a);
        if (rc)
            return silt_err_context(rc, "pull '%s': source '%s'", dsn, plan->source_name);
        return pull_container(c, &cs, out);
    }
    case ODF_Ingress_RestEndpoint:
        if (((const odf_IngressRestEndpoint *)s->ingress.value)->buffer.type)
            return flush_rest(c, plan, out);
        return silt_err(SILT_EINVAL,
                        "pull '%s': source '%s' is a RestEndpoint source without a buffer (its pushes are "
                        "ingested at once; nothing to pull)", dsn, plan->source_name);
    case ODF_Ingress_Mqtt:
        rc = silt_mqtt_pull(c->ds, plan->source_name, (odf_SourceSpec *)s, s->ingress.value, c->cfg, c->o, out);
        return rc ? silt_err_context(rc, "pull '%s': source '%s'", dsn, plan->source_name) : 0;
    default:
        return silt_err(SILT_EINVAL, "pull '%s': source '%s' has no ingress", dsn, plan->source_name);
    }
}

/* ---- entry points ------------------------------------------------------------------ */

/* One AddData moving the watermark to `t`, built on ds->st. */
static int append_watermark(silt_dataset *ds, const char *text, silt_time t)
{
    if (ds->st.has_watermark) {
        silt_time cur = {ds->st.watermark.sec, ds->st.watermark.nsec};
        if (silt_time_cmp(t, cur) <= 0)
            return silt_err(SILT_EINVAL, "--set-watermark %s: the watermark of '%s' is already %s", text,
                            ds->name, ds->watermark);
    }
    odf_AddData ad;
    memset(&ad, 0, sizeof ad);
    odf_Checkpoint cp;
    silt_ds_add_data_continue(ds, &ad, &cp);
    ad.has_new_watermark = true;
    ad.new_watermark = (odf_time){t.sec, t.nsec};
    odf_union ev = {ODF_MetadataEvent_AddData, &ad};
    return silt_ds_append_events_n(ds, &ev, 1, NULL);
}

/* --set-watermark; a lost race is retried against the new head (the
 * watermark must still move forward there). */
static int set_watermark(silt_dataset *ds, const char *text, silt_pull_result *out)
{
    silt_time t;
    if (silt_time_parse(text, &t) != 0)
        return silt_err(SILT_EINVAL, "--set-watermark '%s': not an RFC 3339 time", text);
    int rc = 0;
    for (int attempt = 1;; attempt++) {
        rc = append_watermark(ds, text, t);
        if (rc != SILT_ECONFLICT || attempt >= SILT_PULL_ATTEMPTS)
            break;
        if ((rc = silt_ds_sync(ds)) != 0)
            break;
        silt_err_clear();
    }
    if (rc)
        return rc;
    out->num_ingests = 1;
    return 0;
}

/* Finds the Flow plan of the dataset: 1 = found, 0 = no flow targets it. */
static int find_plan(silt_ingest_plan *plan, silt_arena *a, silt_dataset *ds)
{
    silt_flow_def **flows = NULL;
    size_t n = 0;
    int rc = silt_res_flows_for_dataset(&flows, &n, a, ds->ws, ds->name);
    if (rc)
        return silt_err_context(rc, "pull '%s'", ds->name);
    bool any = false;
    for (size_t i = 0; i < n; i++)
        any = any || flows[i]->ntasks > 0;
    if (!any)
        return 0;
    rc = silt_res_ingest_plan(plan, a, ds->ws, ds->name);
    if (rc)
        return silt_err_context(rc, "pull '%s'", ds->name);
    return 1;
}

static int pull_unlocked(silt_pull_result *out, silt_dataset *ds, const silt_pull_opts *opts)
{
    memset(out, 0, sizeof *out);
    silt_pull_opts none = {0};
    const silt_pull_opts *o = opts ? opts : &none;
    int rc = silt_ds_sync(ds);
    if (rc)
        return rc;
    if (ds->st.dataset_kind != ODF_DatasetKind_Root)
        return silt_err(SILT_EINVAL, "pull '%s': a derivative dataset has no polling source", ds->name);
    if (o->set_watermark) {
        rc = set_watermark(ds, o->set_watermark, out);
        finish_result(out, ds);
        return rc;
    }
    silt_arena *a = silt_arena_new();
    if (!a)
        return silt_err(SILT_ENOMEM, "pull: out of memory");
    pull_ctx c;
    memset(&c, 0, sizeof c);
    c.ds = ds;
    c.o = o;
    c.prog.phase = "pull";
    c.prog.unit = "files";
    silt_ingest_plan plan;
    memset(&plan, 0, sizeof plan);
    int has_flow = find_plan(&plan, a, ds);
    rc = has_flow < 0 ? has_flow : 0;
    if (!rc && has_flow) {
        if (ds->st.polling_source.present && o->warn) {
            char msg[512];
            snprintf(msg, sizeof msg,
                     "pull '%s': flow '%s' (source '%s') supersedes the SetPollingSource of the dataset's chain",
                     ds->name, plan.flow, plan.source_name);
            o->warn(o->warn_ctx, msg);
        }
        rc = run_flow(&c, &plan, a, out);
    } else if (!rc && ds->st.polling_source.present) {
        odf_MetadataBlock *b = NULL;
        rc = silt_ds_load_block(ds, ds->st.polling_source.hash, a, &b);
        if (!rc && b->event.type != ODF_MetadataEvent_SetPollingSource)
            rc = silt_err(SILT_ECORRUPT, "summary of '%s' points at a block that is not a SetPollingSource",
                          ds->name);
        if (!rc)
            rc = run_legacy(&c, b->event.value, a, out);
    } else if (!rc) {
        rc = silt_err(SILT_EINVAL,
                      "pull '%s': the dataset has no polling source (no SetPollingSource in its chain and no "
                      "flow targeting it)",
                      ds->name);
    }
    int keep = rc;
    char msg[1024];
    if (rc) {
        char *r = silt_config_redact(c.cfg, silt_error_last());
        snprintf(msg, sizeof msg, "%s", r ? r : "error message withheld (out of memory while removing secrets)");
        free(r);
    }
    pull_ctx_free(&c);
    silt_arena_free(a);
    finish_result(out, ds);
    if (keep)
        return silt_err(keep, "%s", msg);
    return 0;
}

/* The pull lock info/pull.lock (exclusive flock) serializes the pulls of a
 * dataset across threads and processes: `silt pull` waits for it, the flow
 * scheduler (opts->no_wait) gives up at once. */
static int pull_lock(silt_dataset *ds, bool wait)
{
    char *dir = silt_path_join(ds->dir, "info", NULL);
    char *p = silt_path_join(ds->dir, "info", "pull.lock", NULL);
    int fd = dir && p ? silt_fs_mkdirs(dir) : silt_err(SILT_ENOMEM, "pull: out of memory");
    if (fd == 0)
        fd = wait ? silt_fs_lock(p, true) : silt_fs_trylock(p);
    free(dir);
    free(p);
    return fd;
}

int silt_dataset_pull(silt_pull_result *out, silt_dataset *ds, const silt_pull_opts *opts)
{
    memset(out, 0, sizeof *out);
    int fd = pull_lock(ds, !(opts && opts->no_wait));
    if (fd == SILT_ECONFLICT) {
        out->busy = true;
        return silt_err(SILT_ECONFLICT, "pull '%s': another pull of the dataset is running", ds->name);
    }
    if (fd < 0)
        return silt_err_context(fd, "pull '%s'", ds->name);
    int rc = pull_unlocked(out, ds, opts);
    silt_fs_unlock(fd);
    return rc;
}
