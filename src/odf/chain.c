/* chain.c — ODF metadata chain rules (see chain.h).
 *
 * odf_chain_check() never modifies the state; everything it needs beyond the
 * state (the current schema / source / vocab ... events for the no-op and
 * schema evolution rules) it loads through env->load_block. When env or one
 * of its callbacks is NULL the rules that need it are skipped (state-only
 * validation), so check() is usable on a bare state too.
 *
 * odf_chain_state_from_json() replaces the contents of a state that was set
 * up with odf_chain_state_init() (or zeroed); on failure the state is left
 * untouched. Malformed JSON is SILT_ECORRUPT (the summary can be rebuilt).
 *
 * Violations: SILT_EVALIDATION with one line
 *   "block <seq> (<Event>): <field> <what is wrong>".
 */
#include "odf/chain.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>

#include <jansson.h>

#include "odf/schema_rules.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/timeutil.h"

/* ------------------------------------------------------------------ */
/* helpers                                                             */

static const char *event_name_of(uint8_t type)
{
    const odf_union_desc *u = &odf_udesc_MetadataEvent;
    if (type >= 1 && type <= u->nvariants && u->variants[type - 1])
        return u->variants[type - 1]->name;
    return "unknown event";
}

static int vfail(const odf_MetadataBlock *blk, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int vfail(const odf_MetadataBlock *blk, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return silt_err(SILT_EVALIDATION, "block %" PRIu64 " (%s): %s", blk->sequence_number,
                    event_name_of(blk->event.type), msg);
}

/* text of a multihash (or any byte string) for messages; out >= 160 bytes */
#define HTEXT 160
static const char *htext(const uint8_t *p, size_t len, char out[HTEXT])
{
    if (!p) {
        snprintf(out, HTEXT, "(none)");
    } else if (len == 0) {
        snprintf(out, HTEXT, "(empty)");
    } else if (len > 64) {
        snprintf(out, HTEXT, "(%zu-byte value)", len);
    } else {
        silt_multihash_to_text(p, len, out);
    }
    return out;
}

#define TTEXT 48
static const char *ttext(odf_time t, char out[TTEXT])
{
    silt_time st = {t.sec, t.nsec};
    silt_time_format(st, out);
    return out;
}

static int time_cmp(odf_time a, odf_time b)
{
    if (a.sec != b.sec)
        return a.sec < b.sec ? -1 : 1;
    if (a.nsec != b.nsec)
        return a.nsec < b.nsec ? -1 : 1;
    return 0;
}

static bool mh_eq(const odf_bytes *b, const uint8_t mh[SILT_MH_LEN])
{
    return b->data && b->len == SILT_MH_LEN && memcmp(b->data, mh, SILT_MH_LEN) == 0;
}

static bool is_mh(const odf_bytes *b)
{
    return b->data && b->len == SILT_MH_LEN && b->data[0] == SILT_MH_SHA3_256 &&
           b->data[1] == 32;
}

static const odf_source_state_ref *find_state(const odf_chain_state *st, const char *name)
{
    for (size_t i = 0; i < st->num_source_states; i++)
        if (strcmp(st->source_states[i].source_name, name) == 0)
            return &st->source_states[i];
    return NULL;
}

static ssize_t find_push(const odf_chain_state *st, const char *name)
{
    for (size_t i = 0; i < st->num_push_sources; i++)
        if (strcmp(st->push_sources[i].name, name) == 0)
            return (ssize_t)i;
    return -1;
}

static const char *nz(const char *s)
{
    return s ? s : "";
}

/* ------------------------------------------------------------------ */
/* state lifecycle                                                     */

int odf_chain_state_init(odf_chain_state *st)
{
    if (!st)
        return silt_err(SILT_EINVAL, "odf_chain_state_init: state is NULL");
    memset(st, 0, sizeof *st);
    st->arena = silt_arena_new();
    if (!st->arena)
        return SILT_ENOMEM;
    st->empty = true;
    return 0;
}

void odf_chain_state_free(odf_chain_state *st)
{
    if (!st)
        return;
    silt_arena_free(st->arena);
    memset(st, 0, sizeof *st);
    st->empty = true;
}

/* ------------------------------------------------------------------ */
/* check                                                               */

/* Loads the event of the block `ref` and checks it has `type`. *out = NULL
 * when it cannot be loaded because the env has no loader. */
static int load_event(const odf_chain_env *env, const odf_block_ref *ref, uint8_t type,
                      silt_arena *a, const void **out)
{
    *out = NULL;
    if (!ref->present || !env || !env->load_block)
        return 0;
    odf_MetadataBlock *b = NULL;
    int rc = env->load_block(env->ctx, ref->hash, a, &b);
    if (rc < 0)
        return rc;
    char h[HTEXT];
    if (!b || b->event.type != type || !b->event.value)
        return silt_err(SILT_ECORRUPT, "chain state refers to block %s as the current %s, but it "
                        "holds %s", htext(ref->hash, SILT_MH_LEN, h), event_name_of(type),
                        b ? event_name_of(b->event.type) : "nothing");
    *out = b->event.value;
    return 0;
}

typedef struct data_view {
    const odf_bytes *prev_checkpoint;
    bool has_prev_offset;
    uint64_t prev_offset;
    const odf_DataSlice *new_data;
    const odf_Checkpoint *new_checkpoint;
    bool has_new_watermark;
    odf_time new_watermark;
    const odf_SourceState *new_source_state; /* AddData only */
    const odf_vec *query_inputs;             /* ExecuteTransform only */
} data_view;

static int check_data(const odf_chain_state *st, const odf_MetadataBlock *blk,
                      const data_view *v, const odf_chain_env *env)
{
    char h1[HTEXT], h2[HTEXT], t1[TTEXT], t2[TTEXT];

    /* prevOffset */
    if (st->has_last_offset) {
        if (!v->has_prev_offset)
            return vfail(blk, "prevOffset is missing but the last offset is %" PRIu64,
                         st->last_offset);
        if (v->prev_offset != st->last_offset)
            return vfail(blk, "prevOffset is %" PRIu64 " but the last offset is %" PRIu64,
                         v->prev_offset, st->last_offset);
    } else if (v->has_prev_offset) {
        return vfail(blk, "prevOffset is %" PRIu64 " but the chain has no data yet",
                     v->prev_offset);
    }

    /* newData */
    if (v->new_data) {
        const odf_DataSlice *d = v->new_data;
        if (!st->schema.present)
            return vfail(blk, "newData requires a SetDataSchema earlier in the chain");
        if (!d->offset_interval)
            return vfail(blk, "newData.offsetInterval is missing");
        uint64_t expect = st->has_last_offset ? st->last_offset + 1 : 0;
        if (st->has_last_offset && st->last_offset == UINT64_MAX)
            return vfail(blk, "newData: the offset space is exhausted");
        if (d->offset_interval->start != expect)
            return vfail(blk, "newData.offsetInterval.start is %" PRIu64
                         " but the next offset is %" PRIu64,
                         d->offset_interval->start, expect);
        if (d->offset_interval->end < d->offset_interval->start)
            return vfail(blk, "newData.offsetInterval.end %" PRIu64
                         " is before its start %" PRIu64,
                         d->offset_interval->end, d->offset_interval->start);
        if (!is_mh(&d->physical_hash))
            return vfail(blk, "newData.physicalHash %s is not a SHA3-256 multihash",
                         htext(d->physical_hash.data, d->physical_hash.len, h1));
        if (!d->logical_hash.data || silt_multihash_check(d->logical_hash.data,
                                                          d->logical_hash.len) < 0)
            return vfail(blk, "newData.logicalHash %s is not a valid multihash",
                         htext(d->logical_hash.data, d->logical_hash.len, h1));
    }

    /* prevCheckpoint */
    if (st->has_checkpoint) {
        if (!v->prev_checkpoint->data)
            return vfail(blk, "prevCheckpoint is missing but the last checkpoint is %s",
                         htext(st->checkpoint, SILT_MH_LEN, h1));
        if (!mh_eq(v->prev_checkpoint, st->checkpoint))
            return vfail(blk, "prevCheckpoint is %s but the last checkpoint is %s",
                         htext(v->prev_checkpoint->data, v->prev_checkpoint->len, h1),
                         htext(st->checkpoint, SILT_MH_LEN, h2));
    } else if (v->prev_checkpoint->data) {
        return vfail(blk, "prevCheckpoint is %s but there is no checkpoint yet",
                     htext(v->prev_checkpoint->data, v->prev_checkpoint->len, h1));
    }
    if (v->new_checkpoint && !is_mh(&v->new_checkpoint->physical_hash))
        return vfail(blk, "newCheckpoint.physicalHash %s is not a SHA3-256 multihash",
                     htext(v->new_checkpoint->physical_hash.data,
                           v->new_checkpoint->physical_hash.len, h1));

    /* newWatermark */
    if (st->has_watermark) {
        if (!v->has_new_watermark)
            return vfail(blk, "newWatermark is missing but the last watermark is %s",
                         ttext(st->watermark, t1));
        if (time_cmp(v->new_watermark, st->watermark) < 0)
            return vfail(blk, "newWatermark %s is earlier than the last watermark %s",
                         ttext(v->new_watermark, t1), ttext(st->watermark, t2));
    }

    /* newSourceState */
    const odf_SourceState *ss = v->new_source_state;
    if (ss) {
        if (!ss->source_name)
            return vfail(blk, "newSourceState.sourceName is missing");
        if (!ss->kind)
            return vfail(blk, "newSourceState.kind is missing");
        if (!ss->value)
            return vfail(blk, "newSourceState.value is missing");
    }

    /* no-op */
    bool changed = v->new_data != NULL;
    if (!changed) {
        bool had = st->has_checkpoint, has = v->new_checkpoint != NULL;
        changed = had != has || (has && !mh_eq(&v->new_checkpoint->physical_hash,
                                               st->checkpoint));
    }
    if (!changed && v->has_new_watermark)
        changed = !st->has_watermark || time_cmp(v->new_watermark, st->watermark) != 0;
    if (!changed && ss) {
        const odf_source_state_ref *old = find_state(st, ss->source_name);
        changed = !old || strcmp(old->kind, ss->kind) != 0 || strcmp(old->value, ss->value) != 0;
    }
    if (!changed && v->query_inputs) {
        for (size_t i = 0; i < v->query_inputs->n && !changed; i++) {
            const odf_ExecuteTransformInput *in = v->query_inputs->items[i];
            changed = in && in->new_block_hash.data != NULL;
        }
    }
    if (!changed)
        return vfail(blk, "the event changes nothing (no newData and the same checkpoint, "
                     "watermark%s) — no-op events are not allowed",
                     v->query_inputs ? " and input positions" : " and source state");

    /* referenced objects */
    if (env && env->object_exists) {
        if (v->new_data) {
            int rc = env->object_exists(env->ctx, "data", v->new_data->physical_hash.data,
                                        v->new_data->size);
            if (rc < 0)
                return rc;
            if (rc == 0)
                return vfail(blk, "newData.physicalHash %s: data object of %" PRIu64
                             " bytes is missing from the store",
                             htext(v->new_data->physical_hash.data, SILT_MH_LEN, h1),
                             v->new_data->size);
        }
        if (v->new_checkpoint) {
            int rc = env->object_exists(env->ctx, "checkpoints",
                                        v->new_checkpoint->physical_hash.data,
                                        v->new_checkpoint->size);
            if (rc < 0)
                return rc;
            if (rc == 0)
                return vfail(blk, "newCheckpoint.physicalHash %s: checkpoint object of %" PRIu64
                             " bytes is missing from the store",
                             htext(v->new_checkpoint->physical_hash.data, SILT_MH_LEN, h1),
                             v->new_checkpoint->size);
        }
    }
    return 0;
}

/* Field names of a schema are unique, ignoring ASCII case (the engine's
 * identifiers are case-insensitive: "a" and "A" cannot both be columns). */
static int check_unique_fields(const odf_MetadataBlock *blk, const odf_DataSchema *s)
{
    for (size_t i = 1; i < s->fields.n; i++) {
        const odf_DataField *f = s->fields.items[i];
        for (size_t j = 0; j < i; j++) {
            const odf_DataField *g = s->fields.items[j];
            if (strcasecmp(f->name, g->name) == 0)
                return vfail(blk, "schema.fields[%zu]: name '%s' duplicates the field '%s' at position %zu", i,
                             f->name, g->name, j);
        }
    }
    return 0;
}

static int check_schema(const odf_chain_state *st, const odf_MetadataBlock *blk,
                        const odf_SetDataSchema *e, const odf_chain_env *env, silt_arena *a)
{
    if (!e->schema && !e->raw_arrow_schema.data)
        return vfail(blk, "schema is missing (neither schema nor rawArrowSchema is set)");
    if (e->schema) {
        for (size_t i = 0; i < e->schema->fields.n; i++) {
            const odf_DataField *f = e->schema->fields.items[i];
            if (!f || !f->name || !f->type.type || !f->type.value)
                return vfail(blk, "schema.fields[%zu]: %s is missing", i,
                             !f || !f->name ? "name" : "type");
        }
    }
    if (e->schema) {
        int rc = check_unique_fields(blk, e->schema);
        if (rc)
            return rc;
    }
    const void *cur = NULL;
    int rc = load_event(env, &st->schema, ODF_MetadataEvent_SetDataSchema, a, &cur);
    if (rc < 0)
        return rc;
    if (!cur)
        return 0;
    const odf_SetDataSchema *old = cur;
    if (odf_table_equal(&odf_desc_SetDataSchema, old, e))
        return vfail(blk, "schema is identical to the current one (no-op)");
    if (old->schema && !e->schema)
        return vfail(blk, "schema is missing but the current SetDataSchema has one");
    if (old->schema && e->schema) {
        char msg[700];
        if (odf_schema_check_evolution(old->schema, e->schema, msg, sizeof msg))
            return vfail(blk, "%s", msg);
    }
    return 0;
}

static int check_same(const odf_chain_state *st, const odf_MetadataBlock *blk,
                      const odf_block_ref *ref, const odf_table_desc *d,
                      const odf_chain_env *env, silt_arena *a, const char *what)
{
    const void *cur = NULL;
    int rc = load_event(env, ref, blk->event.type, a, &cur);
    if (rc < 0)
        return rc;
    if (cur && odf_table_equal(d, cur, blk->event.value))
        return vfail(blk, "%s is identical to the current one (no-op)", what);
    return 0;
}

/* ---- SetVocab -------------------------------------------------------- */

enum { VOCAB_N = 4 };
static const char *const VOCAB_FIELD[VOCAB_N] = {"offsetColumn", "operationTypeColumn", "systemTimeColumn",
                                                  "eventTimeColumn"};
static const char *const VOCAB_DEFAULT[VOCAB_N] = {"offset", "op", "system_time", "event_time"};

/* The names a vocab gives (NULL where absent; v may be NULL). */
static void vocab_given(const odf_SetVocab *v, const char *out[VOCAB_N])
{
    out[0] = v ? v->offset_column : NULL;
    out[1] = v ? v->operation_type_column : NULL;
    out[2] = v ? v->system_time_column : NULL;
    out[3] = v ? v->event_time_column : NULL;
}

/* The system column names in effect under a vocab (defaults where absent). */
static void vocab_names(const odf_SetVocab *v, const char *out[VOCAB_N])
{
    vocab_given(v, out);
    for (int i = 0; i < VOCAB_N; i++)
        if (!out[i])
            out[i] = VOCAB_DEFAULT[i];
}

/* Names are non-empty and name four distinct columns (ASCII case ignored). */
static int check_vocab_names(const odf_MetadataBlock *blk, const odf_SetVocab *e, const char *n[VOCAB_N])
{
    const char *given[VOCAB_N];
    vocab_given(e, given);
    for (int i = 0; i < VOCAB_N; i++)
        if (given[i] && !*given[i])
            return vfail(blk, "%s is empty (omit it to use the default '%s')", VOCAB_FIELD[i], VOCAB_DEFAULT[i]);
    for (int i = 1; i < VOCAB_N; i++)
        for (int j = 0; j < i; j++)
            if (strcasecmp(n[i], n[j]) == 0)
                return vfail(blk, "%s '%s' names the same column as %s '%s' (system columns need distinct names)",
                             VOCAB_FIELD[i], n[i], VOCAB_FIELD[j], n[j]);
    return 0;
}

/* Against the current schema: a new name may not be a data column of it,
 * and once there is a schema (its fields, and the slices, carry the system
 * columns under the current names) the names may not change. */
static int check_vocab_vs_schema(const odf_chain_state *st, const odf_MetadataBlock *blk,
                                 const char *n[VOCAB_N], const odf_chain_env *env, silt_arena *a)
{
    const void *sv = NULL, *cv = NULL;
    int rc = load_event(env, &st->schema, ODF_MetadataEvent_SetDataSchema, a, &sv);
    if (!rc)
        rc = load_event(env, &st->vocab, ODF_MetadataEvent_SetVocab, a, &cv);
    if (rc < 0)
        return rc;
    if (!sv)
        return 0;
    const char *cur[VOCAB_N];
    vocab_names(cv, cur);
    const odf_DataSchema *schema = ((const odf_SetDataSchema *)sv)->schema;
    for (size_t f = 0; schema && f < schema->fields.n; f++) {
        const char *name = ((const odf_DataField *)schema->fields.items[f])->name;
        bool system = false;
        for (int i = 0; i < VOCAB_N; i++)
            system = system || strcasecmp(name, cur[i]) == 0;
        for (int i = 0; !system && i < VOCAB_N; i++)
            if (strcasecmp(n[i], name) == 0)
                return vfail(blk, "%s '%s' clashes with the data column '%s' of the current schema",
                             VOCAB_FIELD[i], n[i], name);
    }
    for (int i = 0; i < VOCAB_N; i++)
        if (strcmp(n[i], cur[i]) != 0)
            return vfail(blk, "%s cannot change from '%s' to '%s' once the dataset has a schema (its schema "
                         "and data name the column '%s')",
                         VOCAB_FIELD[i], cur[i], n[i], cur[i]);
    return 0;
}

static int check_vocab(const odf_chain_state *st, const odf_MetadataBlock *blk, const odf_SetVocab *e,
                       const odf_chain_env *env, silt_arena *a)
{
    const char *n[VOCAB_N];
    vocab_names(e, n);
    int rc = check_vocab_names(blk, e, n);
    if (!rc)
        rc = check_vocab_vs_schema(st, blk, n, env, a);
    if (!rc)
        rc = check_same(st, blk, &st->vocab, &odf_desc_SetVocab, env, a, "vocab");
    return rc;
}

static int check_event(const odf_chain_state *st, const odf_MetadataBlock *blk,
                       const odf_chain_env *env, silt_arena *a)
{
    const void *ev = blk->event.value;
    bool root = st->dataset_kind == ODF_DatasetKind_Root;
    switch (blk->event.type) {
    case ODF_MetadataEvent_Seed:
        return vfail(blk, "a Seed may only be the first block");
    case ODF_MetadataEvent_AddData: {
        if (!root)
            return vfail(blk, "AddData is not allowed in a derivative dataset");
        const odf_AddData *e = ev;
        data_view v = {&e->prev_checkpoint, e->has_prev_offset, e->prev_offset, e->new_data,
                       e->new_checkpoint, e->has_new_watermark, e->new_watermark,
                       e->new_source_state, NULL};
        return check_data(st, blk, &v, env);
    }
    case ODF_MetadataEvent_ExecuteTransform: {
        if (root)
            return vfail(blk, "ExecuteTransform is not allowed in a root dataset");
        const odf_ExecuteTransform *e = ev;
        data_view v = {&e->prev_checkpoint, e->has_prev_offset, e->prev_offset, e->new_data,
                       e->new_checkpoint, e->has_new_watermark, e->new_watermark, NULL,
                       &e->query_inputs};
        return check_data(st, blk, &v, env);
    }
    case ODF_MetadataEvent_SetDataSchema:
        return check_schema(st, blk, ev, env, a);
    case ODF_MetadataEvent_SetPollingSource: {
        if (!root)
            return vfail(blk, "SetPollingSource is not allowed in a derivative dataset");
        if (st->num_push_sources > 0)
            return vfail(blk, "push source '%s' is active; push and polling sources are "
                         "mutually exclusive", st->push_sources[0].name);
        return check_same(st, blk, &st->polling_source, &odf_desc_SetPollingSource, env, a,
                          "polling source");
    }
    case ODF_MetadataEvent_AddPushSource: {
        if (!root)
            return vfail(blk, "AddPushSource is not allowed in a derivative dataset");
        if (st->polling_source.present)
            return vfail(blk, "a polling source is active; push and polling sources are "
                         "mutually exclusive");
        const odf_AddPushSource *e = ev;
        ssize_t i = find_push(st, nz(e->source_name));
        if (i < 0)
            return 0;
        odf_block_ref ref = {true, {0}};
        memcpy(ref.hash, st->push_sources[i].block, SILT_MH_LEN);
        char what[300];
        snprintf(what, sizeof what, "push source '%.200s'", nz(e->source_name));
        return check_same(st, blk, &ref, &odf_desc_AddPushSource, env, a, what);
    }
    case ODF_MetadataEvent_DisablePushSource: {
        if (!root)
            return vfail(blk, "DisablePushSource is not allowed in a derivative dataset");
        const odf_DisablePushSource *e = ev;
        if (find_push(st, nz(e->source_name)) < 0)
            return vfail(blk, "sourceName '%s' is not an active push source", nz(e->source_name));
        return 0;
    }
    case ODF_MetadataEvent_DisablePollingSource:
        if (!root)
            return vfail(blk, "DisablePollingSource is not allowed in a derivative dataset");
        if (!st->polling_source.present)
            return vfail(blk, "there is no active polling source to disable");
        return 0;
    case ODF_MetadataEvent_SetTransform:
        if (root)
            return vfail(blk, "SetTransform is not allowed in a root dataset");
        return check_same(st, blk, &st->transform, &odf_desc_SetTransform, env, a, "transform");
    case ODF_MetadataEvent_SetVocab:
        return check_vocab(st, blk, ev, env, a);
    case ODF_MetadataEvent_SetInfo:
        return check_same(st, blk, &st->info, &odf_desc_SetInfo, env, a, "info");
    case ODF_MetadataEvent_SetLicense:
        return check_same(st, blk, &st->license, &odf_desc_SetLicense, env, a, "license");
    case ODF_MetadataEvent_SetAttachments:
        return check_same(st, blk, &st->attachments, &odf_desc_SetAttachments, env, a,
                          "attachments");
    default:
        return vfail(blk, "unknown event type %u", (unsigned)blk->event.type);
    }
}

int odf_chain_check(const odf_chain_state *st, const odf_MetadataBlock *blk,
                    const uint8_t hash[SILT_MH_LEN], const odf_chain_env *env)
{
    if (!st || !blk)
        return silt_err(SILT_EINVAL, "odf_chain_check: state or block is NULL");
    char h1[HTEXT], h2[HTEXT], t1[TTEXT], t2[TTEXT];
    uint8_t type = blk->event.type;

    if (type == 0 || !blk->event.value)
        return vfail(blk, "event is missing");
    if (type > odf_udesc_MetadataEvent.nvariants)
        return vfail(blk, "unknown event type %u", (unsigned)type);
    if (!blk->has_system_time)
        return vfail(blk, "systemTime is missing");

    if (st->empty) {
        if (type != ODF_MetadataEvent_Seed)
            return vfail(blk, "the first block must be a Seed");
        if (blk->sequence_number != 0)
            return vfail(blk, "sequenceNumber is %" PRIu64 " but the first block must have 0",
                         blk->sequence_number);
        if (blk->prev_block_hash.data)
            return vfail(blk, "prevBlockHash is %s but the first block must have none",
                         htext(blk->prev_block_hash.data, blk->prev_block_hash.len, h1));
        const odf_Seed *s = blk->event.value;
        if (s->dataset_id.len != SILT_DID_LEN || !s->dataset_id.data ||
            s->dataset_id.data[0] != 0xed || s->dataset_id.data[1] != 0x01)
            return vfail(blk, "datasetId is not a did:odf ed25519 key (%zu bytes)",
                         s->dataset_id.data ? s->dataset_id.len : 0);
        if (s->dataset_kind != ODF_DatasetKind_Root &&
            s->dataset_kind != ODF_DatasetKind_Derivative)
            return vfail(blk, "datasetKind %" PRId32 " is neither Root nor Derivative",
                         s->dataset_kind);
        return 0;
    }

    if (st->seq == UINT64_MAX || blk->sequence_number != st->seq + 1)
        return vfail(blk, "sequenceNumber is %" PRIu64 " but the previous block has %" PRIu64,
                     blk->sequence_number, st->seq);
    if (!blk->prev_block_hash.data)
        return vfail(blk, "prevBlockHash is missing; the previous block is %s",
                     htext(st->head, SILT_MH_LEN, h1));
    if (!mh_eq(&blk->prev_block_hash, st->head))
        return vfail(blk, "prevBlockHash is %s but the previous block is %s",
                     htext(blk->prev_block_hash.data, blk->prev_block_hash.len, h1),
                     htext(st->head, SILT_MH_LEN, h2));
    if (time_cmp(blk->system_time, st->last_system_time) < 0)
        return vfail(blk, "systemTime %s is earlier than the previous block's %s",
                     ttext(blk->system_time, t1), ttext(st->last_system_time, t2));
    (void)hash;

    silt_arena *a = NULL;
    if (env && env->load_block) {
        a = silt_arena_new();
        if (!a)
            return SILT_ENOMEM;
    }
    int rc = check_event(st, blk, env, a);
    silt_arena_free(a);
    return rc;
}

/* ------------------------------------------------------------------ */
/* apply                                                               */

static void set_ref(odf_block_ref *r, const uint8_t hash[SILT_MH_LEN])
{
    r->present = true;
    memcpy(r->hash, hash, SILT_MH_LEN);
}

static int upsert_state(odf_chain_state *st, const odf_SourceState *ss,
                        const uint8_t hash[SILT_MH_LEN])
{
    const char *name = nz(ss->source_name), *kind = nz(ss->kind), *value = nz(ss->value);
    odf_source_state_ref *cur = (odf_source_state_ref *)find_state(st, name);
    if (cur && strcmp(cur->kind, kind) == 0 && strcmp(cur->value, value) == 0) {
        memcpy(cur->block, hash, SILT_MH_LEN);
        return 0;
    }
    char *k = silt_arena_strdup(st->arena, kind);
    char *v = silt_arena_strdup(st->arena, value);
    if (!k || !v)
        return SILT_ENOMEM;
    if (cur) {
        cur->kind = k;
        cur->value = v;
        memcpy(cur->block, hash, SILT_MH_LEN);
        return 0;
    }
    char *n = silt_arena_strdup(st->arena, name);
    odf_source_state_ref *arr =
        silt_arena_alloc(st->arena, (st->num_source_states + 1) * sizeof *arr);
    if (!n || !arr)
        return SILT_ENOMEM;
    if (st->num_source_states)
        memcpy(arr, st->source_states, st->num_source_states * sizeof *arr);
    arr[st->num_source_states] = (odf_source_state_ref){n, k, v, {0}};
    memcpy(arr[st->num_source_states].block, hash, SILT_MH_LEN);
    st->source_states = arr;
    st->num_source_states++;
    return 0;
}

static int upsert_push(odf_chain_state *st, const char *name, const uint8_t hash[SILT_MH_LEN])
{
    ssize_t i = find_push(st, name);
    if (i >= 0) {
        memcpy(st->push_sources[i].block, hash, SILT_MH_LEN);
        return 0;
    }
    char *n = silt_arena_strdup(st->arena, name);
    odf_push_source_ref *arr =
        silt_arena_alloc(st->arena, (st->num_push_sources + 1) * sizeof *arr);
    if (!n || !arr)
        return SILT_ENOMEM;
    if (st->num_push_sources)
        memcpy(arr, st->push_sources, st->num_push_sources * sizeof *arr);
    arr[st->num_push_sources].name = n;
    memcpy(arr[st->num_push_sources].block, hash, SILT_MH_LEN);
    st->push_sources = arr;
    st->num_push_sources++;
    return 0;
}

static void apply_data(odf_chain_state *st, const odf_DataSlice *d, const odf_Checkpoint *cp,
                       bool has_wm, odf_time wm, const uint8_t hash[SILT_MH_LEN])
{
    set_ref(&st->last_data_event, hash);
    if (d && d->offset_interval) {
        uint64_t s = d->offset_interval->start, e = d->offset_interval->end;
        st->has_last_offset = true;
        st->last_offset = e;
        st->num_records += e >= s ? e - s + 1 : 0;
        st->data_size += d->size;
        st->num_data_blocks++;
        set_ref(&st->last_data_block, hash);
    }
    if (cp && cp->physical_hash.data && cp->physical_hash.len == SILT_MH_LEN) {
        st->has_checkpoint = true;
        memcpy(st->checkpoint, cp->physical_hash.data, SILT_MH_LEN);
        st->checkpoint_size = cp->size;
    } else {
        st->has_checkpoint = false;
        memset(st->checkpoint, 0, SILT_MH_LEN);
        st->checkpoint_size = 0;
    }
    if (has_wm) {
        st->has_watermark = true;
        st->watermark = wm;
    }
}

int odf_chain_apply(odf_chain_state *st, const odf_MetadataBlock *blk,
                    const uint8_t hash[SILT_MH_LEN])
{
    if (!st || !st->arena || !blk || !hash)
        return silt_err(SILT_EINVAL, "odf_chain_apply: state, block or hash is NULL");
    const void *ev = blk->event.value;
    if (!ev)
        return silt_err(SILT_EINVAL, "odf_chain_apply: block %" PRIu64 " has no event",
                        blk->sequence_number);
    int rc = 0;
    switch (blk->event.type) {
    case ODF_MetadataEvent_Seed: {
        const odf_Seed *s = ev;
        memset(st->dataset_id, 0, SILT_DID_LEN);
        if (s->dataset_id.data)
            memcpy(st->dataset_id, s->dataset_id.data,
                   s->dataset_id.len < SILT_DID_LEN ? s->dataset_id.len : SILT_DID_LEN);
        st->dataset_kind = s->dataset_kind;
        set_ref(&st->seed, hash);
        break;
    }
    case ODF_MetadataEvent_AddData: {
        const odf_AddData *e = ev;
        apply_data(st, e->new_data, e->new_checkpoint, e->has_new_watermark, e->new_watermark,
                   hash);
        if (e->new_source_state)
            rc = upsert_state(st, e->new_source_state, hash);
        break;
    }
    case ODF_MetadataEvent_ExecuteTransform: {
        const odf_ExecuteTransform *e = ev;
        apply_data(st, e->new_data, e->new_checkpoint, e->has_new_watermark, e->new_watermark,
                   hash);
        break;
    }
    case ODF_MetadataEvent_SetDataSchema: set_ref(&st->schema, hash); break;
    case ODF_MetadataEvent_SetVocab: set_ref(&st->vocab, hash); break;
    case ODF_MetadataEvent_SetPollingSource: set_ref(&st->polling_source, hash); break;
    case ODF_MetadataEvent_SetTransform: set_ref(&st->transform, hash); break;
    case ODF_MetadataEvent_SetInfo: set_ref(&st->info, hash); break;
    case ODF_MetadataEvent_SetLicense: set_ref(&st->license, hash); break;
    case ODF_MetadataEvent_SetAttachments: set_ref(&st->attachments, hash); break;
    case ODF_MetadataEvent_AddPushSource:
        rc = upsert_push(st, nz(((const odf_AddPushSource *)ev)->source_name), hash);
        break;
    case ODF_MetadataEvent_DisablePushSource: {
        ssize_t i = find_push(st, nz(((const odf_DisablePushSource *)ev)->source_name));
        if (i >= 0) {
            memmove(&st->push_sources[i], &st->push_sources[i + 1],
                    (st->num_push_sources - (size_t)i - 1) * sizeof *st->push_sources);
            st->num_push_sources--;
        }
        break;
    }
    case ODF_MetadataEvent_DisablePollingSource:
        st->polling_source.present = false;
        memset(st->polling_source.hash, 0, SILT_MH_LEN);
        break;
    default:
        return silt_err(SILT_EINVAL, "odf_chain_apply: block %" PRIu64 " has unknown event type %u",
                        blk->sequence_number, (unsigned)blk->event.type);
    }
    if (rc < 0)
        return rc;
    st->empty = false;
    memcpy(st->head, hash, SILT_MH_LEN);
    st->seq = blk->sequence_number;
    if (blk->has_system_time)
        st->last_system_time = blk->system_time;
    return 0;
}

/* ------------------------------------------------------------------ */
/* copy                                                                */

int odf_chain_state_copy(odf_chain_state *dst, const odf_chain_state *src)
{
    if (!dst || !src)
        return silt_err(SILT_EINVAL, "odf_chain_state_copy: state is NULL");
    odf_chain_state t = *src;
    t.arena = silt_arena_new();
    t.push_sources = NULL;
    t.source_states = NULL;
    if (!t.arena)
        return SILT_ENOMEM;
    if (src->num_push_sources) {
        t.push_sources = silt_arena_alloc(t.arena, src->num_push_sources * sizeof *t.push_sources);
        for (size_t i = 0; t.push_sources && i < src->num_push_sources; i++) {
            t.push_sources[i] = src->push_sources[i];
            if (!(t.push_sources[i].name = silt_arena_strdup(t.arena, nz(src->push_sources[i].name))))
                t.push_sources = NULL;
        }
    }
    if (src->num_source_states) {
        t.source_states = silt_arena_alloc(t.arena, src->num_source_states * sizeof *t.source_states);
        for (size_t i = 0; t.source_states && i < src->num_source_states; i++) {
            const odf_source_state_ref *s = &src->source_states[i];
            odf_source_state_ref *d = &t.source_states[i];
            *d = *s;
            d->source_name = silt_arena_strdup(t.arena, nz(s->source_name));
            d->kind = silt_arena_strdup(t.arena, nz(s->kind));
            d->value = silt_arena_strdup(t.arena, nz(s->value));
            if (!d->source_name || !d->kind || !d->value)
                t.source_states = NULL;
        }
    }
    if ((src->num_push_sources && !t.push_sources) || (src->num_source_states && !t.source_states)) {
        silt_arena_free(t.arena);
        return SILT_ENOMEM;
    }
    *dst = t;
    return 0;
}

/* ------------------------------------------------------------------ */
/* validate (a state read back from a cache, against its blocks)      */

#define VCACHE 16

typedef struct vctx {
    const odf_chain_state *st;
    const odf_chain_env *env;
    silt_arena *a;
    struct {
        uint8_t hash[SILT_MH_LEN];
        odf_MetadataBlock *blk;
    } cache[VCACHE];
    size_t ncache;
} vctx;

static int vbad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int vbad(const char *fmt, ...)
{
    char msg[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return silt_err(SILT_ECORRUPT, "chain state: %s", msg);
}

/* Loads the block `hash` that the state names as `what` (cached); it may
 * not come after the head. */
static int vload(vctx *c, const uint8_t hash[SILT_MH_LEN], const char *what,
                 odf_MetadataBlock **out)
{
    for (size_t i = 0; i < c->ncache; i++) {
        if (memcmp(c->cache[i].hash, hash, SILT_MH_LEN) == 0) {
            *out = c->cache[i].blk;
            return 0;
        }
    }
    char h[HTEXT];
    odf_MetadataBlock *b = NULL;
    int rc = c->env->load_block(c->env->ctx, hash, c->a, &b);
    if (rc < 0)
        return silt_err_context(rc, "chain state: %s block %s", what, htext(hash, SILT_MH_LEN, h));
    if (!b || !b->event.value)
        return vbad("%s block %s has no event", what, htext(hash, SILT_MH_LEN, h));
    if (b->sequence_number > c->st->seq)
        return vbad("%s block %s has sequence number %" PRIu64 ", after the head's %" PRIu64, what,
                    htext(hash, SILT_MH_LEN, h), b->sequence_number, c->st->seq);
    if (c->ncache < VCACHE) {
        memcpy(c->cache[c->ncache].hash, hash, SILT_MH_LEN);
        c->cache[c->ncache++].blk = b;
    }
    *out = b;
    return 0;
}

/* The event of the block named `what` must be of `type`. */
static int vload_event(vctx *c, const uint8_t hash[SILT_MH_LEN], uint8_t type, const char *what,
                       odf_MetadataBlock **out)
{
    int rc = vload(c, hash, what, out);
    if (rc < 0)
        return rc;
    char h[HTEXT];
    if ((*out)->event.type != type)
        return vbad("%s block %s holds %s, not %s", what, htext(hash, SILT_MH_LEN, h),
                    event_name_of((*out)->event.type), event_name_of(type));
    return 0;
}

static int validate_head_seed(vctx *c)
{
    const odf_chain_state *st = c->st;
    odf_MetadataBlock *b = NULL;
    int rc = vload(c, st->head, "head", &b);
    if (rc < 0)
        return rc;
    char t1[TTEXT], t2[TTEXT];
    if (b->sequence_number != st->seq)
        return vbad("sequenceNumber is %" PRIu64 " but the head block has %" PRIu64, st->seq,
                    b->sequence_number);
    if (!b->has_system_time || time_cmp(b->system_time, st->last_system_time) != 0)
        return vbad("lastSystemTime is %s but the head block's is %s",
                    ttext(st->last_system_time, t1), b->has_system_time ? ttext(b->system_time, t2)
                                                                        : "missing");
    if (!st->seed.present)
        return vbad("the Seed block is not named");
    rc = vload_event(c, st->seed.hash, ODF_MetadataEvent_Seed, "seed", &b);
    if (rc < 0)
        return rc;
    const odf_Seed *s = b->event.value;
    if (b->sequence_number != 0)
        return vbad("the Seed block has sequence number %" PRIu64, b->sequence_number);
    if (s->dataset_id.len != SILT_DID_LEN || !s->dataset_id.data ||
        memcmp(s->dataset_id.data, st->dataset_id, SILT_DID_LEN) != 0)
        return vbad("datasetId differs from the Seed's");
    if (s->dataset_kind != st->dataset_kind)
        return vbad("datasetKind differs from the Seed's");
    return 0;
}

static int validate_refs(vctx *c)
{
    const odf_chain_state *st = c->st;
    const struct {
        const odf_block_ref *ref;
        uint8_t type;
        const char *what;
    } refs[] = {
        {&st->schema, ODF_MetadataEvent_SetDataSchema, "schema"},
        {&st->vocab, ODF_MetadataEvent_SetVocab, "vocab"},
        {&st->polling_source, ODF_MetadataEvent_SetPollingSource, "pollingSource"},
        {&st->transform, ODF_MetadataEvent_SetTransform, "transform"},
        {&st->info, ODF_MetadataEvent_SetInfo, "info"},
        {&st->license, ODF_MetadataEvent_SetLicense, "license"},
        {&st->attachments, ODF_MetadataEvent_SetAttachments, "attachments"},
    };
    for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++) {
        odf_MetadataBlock *b = NULL;
        int rc = refs[i].ref->present
                     ? vload_event(c, refs[i].ref->hash, refs[i].type, refs[i].what, &b)
                     : 0;
        if (rc < 0)
            return rc;
    }
    for (size_t i = 0; i < st->num_push_sources; i++) {
        odf_MetadataBlock *b = NULL;
        int rc = vload_event(c, st->push_sources[i].block, ODF_MetadataEvent_AddPushSource,
                             "push source", &b);
        if (rc < 0)
            return rc;
        const odf_AddPushSource *e = b->event.value;
        if (strcmp(nz(e->source_name), nz(st->push_sources[i].name)) != 0)
            return vbad("push source '%s' names a block of source '%s'",
                        nz(st->push_sources[i].name), nz(e->source_name));
    }
    for (size_t i = 0; i < st->num_source_states; i++) {
        const odf_source_state_ref *r = &st->source_states[i];
        odf_MetadataBlock *b = NULL;
        int rc = vload_event(c, r->block, ODF_MetadataEvent_AddData, "source state", &b);
        if (rc < 0)
            return rc;
        const odf_SourceState *ss = ((const odf_AddData *)b->event.value)->new_source_state;
        if (!ss || strcmp(nz(ss->source_name), nz(r->source_name)) != 0 ||
            strcmp(nz(ss->kind), nz(r->kind)) != 0 || strcmp(nz(ss->value), nz(r->value)) != 0)
            return vbad("source state of '%s' differs from its block's", nz(r->source_name));
    }
    return 0;
}

/* The data fields of an AddData / ExecuteTransform block (NULL otherwise). */
static bool data_fields(const odf_MetadataBlock *b, data_view *v)
{
    memset(v, 0, sizeof *v);
    if (b->event.type == ODF_MetadataEvent_AddData) {
        const odf_AddData *e = b->event.value;
        *v = (data_view){&e->prev_checkpoint, e->has_prev_offset, e->prev_offset, e->new_data,
                         e->new_checkpoint, e->has_new_watermark, e->new_watermark,
                         e->new_source_state, NULL};
        return true;
    }
    if (b->event.type == ODF_MetadataEvent_ExecuteTransform) {
        const odf_ExecuteTransform *e = b->event.value;
        *v = (data_view){&e->prev_checkpoint, e->has_prev_offset, e->prev_offset, e->new_data,
                         e->new_checkpoint, e->has_new_watermark, e->new_watermark, NULL,
                         &e->query_inputs};
        return true;
    }
    return false;
}

static const char *otext(bool has, uint64_t v, char out[32])
{
    if (has)
        snprintf(out, 32, "%" PRIu64, v);
    else
        snprintf(out, 32, "none");
    return out;
}

/* Offsets, checkpoint and watermark against the last data event. */
/* The named last data event must be the newest AddData/ExecuteTransform:
 * walking back from the head, no other data event comes first. The walk
 * covers the blocks after it (few: metadata after the last ingest) and at
 * most VALIDATE_WALK of them, so its cost does not grow with the chain. */
#define VALIDATE_WALK 64

static int validate_newest_data(vctx *c)
{
    const odf_chain_state *st = c->st;
    uint8_t cur[SILT_MH_LEN];
    memcpy(cur, st->head, SILT_MH_LEN);
    char h1[HTEXT], h2[HTEXT];
    for (int i = 0; i < VALIDATE_WALK; i++) {
        if (st->last_data_event.present && memcmp(cur, st->last_data_event.hash, SILT_MH_LEN) == 0)
            return 0;
        odf_MetadataBlock *b = NULL;
        int rc = vload(c, cur, "walked", &b);
        if (rc < 0)
            return rc;
        data_view v;
        if (data_fields(b, &v))
            return vbad("the last data event is block %s, not %s", htext(cur, SILT_MH_LEN, h1),
                        st->last_data_event.present ? htext(st->last_data_event.hash, SILT_MH_LEN, h2) : "(none)");
        if (!b->prev_block_hash.data || b->prev_block_hash.len != SILT_MH_LEN)
            return st->last_data_event.present ? vbad("the last data event %s is not on the chain of the head",
                                                      htext(st->last_data_event.hash, SILT_MH_LEN, h2))
                                               : 0;
        memcpy(cur, b->prev_block_hash.data, SILT_MH_LEN);
    }
    return 0;
}

static int validate_data_fields(vctx *c)
{
    const odf_chain_state *st = c->st;
    if (!st->last_data_event.present) {
        if (st->has_last_offset || st->has_checkpoint || st->has_watermark ||
            st->last_data_block.present || st->num_source_states)
            return vbad("offsets, checkpoint, watermark or source states without an "
                        "AddData/ExecuteTransform block");
        return 0;
    }
    odf_MetadataBlock *b = NULL;
    int rc = vload(c, st->last_data_event.hash, "last data event", &b);
    if (rc < 0)
        return rc;
    data_view v;
    if (!data_fields(b, &v))
        return vbad("the last data event holds %s", event_name_of(b->event.type));
    bool has_off = v.has_prev_offset;
    uint64_t off = v.prev_offset;
    if (v.new_data && v.new_data->offset_interval) {
        has_off = true;
        off = v.new_data->offset_interval->end;
    }
    char o1[32], o2[32], h1[HTEXT], h2[HTEXT], t1[TTEXT], t2[TTEXT];
    if (has_off != st->has_last_offset || (has_off && off != st->last_offset))
        return vbad("lastOffset is %s but the last data event says %s",
                    otext(st->has_last_offset, st->last_offset, o1), otext(has_off, off, o2));
    if (has_off && !st->schema.present)
        return vbad("data without a schema block");
    bool has_cp = v.new_checkpoint && is_mh(&v.new_checkpoint->physical_hash);
    if (has_cp != st->has_checkpoint ||
        (has_cp && (!mh_eq(&v.new_checkpoint->physical_hash, st->checkpoint) ||
                    v.new_checkpoint->size != st->checkpoint_size)))
        return vbad("checkpoint %s (%" PRIu64 " bytes) differs from the last data event's %s",
                    st->has_checkpoint ? htext(st->checkpoint, SILT_MH_LEN, h1) : "(none)",
                    st->checkpoint_size,
                    has_cp ? htext(v.new_checkpoint->physical_hash.data, SILT_MH_LEN, h2)
                           : "(none)");
    if (v.has_new_watermark != st->has_watermark ||
        (st->has_watermark && time_cmp(v.new_watermark, st->watermark) != 0))
        return vbad("watermark %s differs from the last data event's %s",
                    st->has_watermark ? ttext(st->watermark, t1) : "(none)",
                    v.has_new_watermark ? ttext(v.new_watermark, t2) : "(none)");
    /* the last block with newData ends at the last offset */
    if (v.new_data && v.new_data->offset_interval) {
        if (!st->last_data_block.present ||
            memcmp(st->last_data_block.hash, st->last_data_event.hash, SILT_MH_LEN) != 0)
            return vbad("the last data event has newData but is not the last data block");
        return 0;
    }
    if (st->last_data_block.present != has_off)
        return vbad("lastDataBlock is %s but lastOffset is %s",
                    st->last_data_block.present ? "set" : "missing", otext(has_off, off, o1));
    if (!has_off)
        return 0;
    rc = vload(c, st->last_data_block.hash, "last data", &b);
    if (rc < 0)
        return rc;
    if (!data_fields(b, &v) || !v.new_data || !v.new_data->offset_interval ||
        v.new_data->offset_interval->end != st->last_offset)
        return vbad("the last data block does not end at offset %" PRIu64, st->last_offset);
    return 0;
}

static int validate_data(vctx *c)
{
    int rc = validate_data_fields(c);
    return rc < 0 ? rc : validate_newest_data(c);
}

int odf_chain_state_validate(const odf_chain_state *st, const odf_chain_env *env)
{
    if (!st || !env || !env->load_block)
        return silt_err(SILT_EINVAL, "odf_chain_state_validate: state or loader is NULL");
    if (st->empty)
        return 0;
    vctx c;
    memset(&c, 0, sizeof c);
    c.st = st;
    c.env = env;
    c.a = silt_arena_new();
    if (!c.a)
        return SILT_ENOMEM;
    int rc = validate_head_seed(&c);
    if (rc == 0)
        rc = validate_refs(&c);
    if (rc == 0)
        rc = validate_data(&c);
    silt_arena_free(c.a);
    return rc;
}

/* ------------------------------------------------------------------ */
/* JSON                                                                */

#define JSON_STATE_VERSION 2

static int jset(json_t *o, const char *k, json_t *v)
{
    if (!v || json_object_set_new(o, k, v) < 0)
        return silt_err(SILT_ENOMEM, "out of memory building chain state JSON");
    return 0;
}

static json_t *ju64(uint64_t v)
{
    if (v <= (uint64_t)INT64_MAX)
        return json_integer((json_int_t)v);
    char s[32];
    snprintf(s, sizeof s, "%" PRIu64, v);
    return json_string(s);
}

static json_t *jmh(const uint8_t mh[SILT_MH_LEN])
{
    char s[2 * SILT_MH_LEN + 2];
    silt_multihash_to_text(mh, SILT_MH_LEN, s);
    return json_string(s);
}

static json_t *jtime(odf_time t)
{
    char s[TTEXT];
    return json_string(ttext(t, s));
}

static const char *const ref_keys[] = {"seed", "schema", "vocab", "pollingSource", "transform",
                                       "info", "license", "attachments", "lastDataBlock",
                                       "lastDataEvent"};

static odf_block_ref *ref_at(odf_chain_state *st, size_t i)
{
    odf_block_ref *r[] = {&st->seed, &st->schema, &st->vocab, &st->polling_source,
                          &st->transform, &st->info, &st->license, &st->attachments,
                          &st->last_data_block, &st->last_data_event};
    return r[i];
}

#define NREFS (sizeof ref_keys / sizeof ref_keys[0])

int odf_chain_state_to_json(const odf_chain_state *st, char **out)
{
    if (!st || !out)
        return silt_err(SILT_EINVAL, "odf_chain_state_to_json: state or out is NULL");
    *out = NULL;
    json_t *o = json_object();
    if (!o)
        return silt_err(SILT_ENOMEM, "out of memory building chain state JSON");
    int rc = jset(o, "version", json_integer(JSON_STATE_VERSION));
    if (!rc)
        rc = jset(o, "empty", json_boolean(st->empty));
    if (!rc && !st->empty) {
        char did[SILT_DID_TEXT_LEN + 1];
        silt_did_to_text(st->dataset_id, did);
        rc = jset(o, "head", jmh(st->head));
        if (!rc)
            rc = jset(o, "sequenceNumber", ju64(st->seq));
        if (!rc)
            rc = jset(o, "lastSystemTime", jtime(st->last_system_time));
        if (!rc)
            rc = jset(o, "datasetId", json_string(did));
        if (!rc)
            rc = jset(o, "datasetKind", json_string(st->dataset_kind == ODF_DatasetKind_Derivative
                                                        ? "Derivative" : "Root"));
    }
    if (!rc && st->has_last_offset)
        rc = jset(o, "lastOffset", ju64(st->last_offset));
    if (!rc)
        rc = jset(o, "numRecords", ju64(st->num_records));
    if (!rc)
        rc = jset(o, "dataSize", ju64(st->data_size));
    if (!rc)
        rc = jset(o, "numDataBlocks", ju64(st->num_data_blocks));
    if (!rc && st->has_checkpoint) {
        json_t *c = json_object();
        rc = c ? jset(o, "checkpoint", c) : jset(o, "checkpoint", NULL);
        if (!rc)
            rc = jset(c, "physicalHash", jmh(st->checkpoint));
        if (!rc)
            rc = jset(c, "size", ju64(st->checkpoint_size));
    }
    if (!rc && st->has_watermark)
        rc = jset(o, "watermark", jtime(st->watermark));
    for (size_t i = 0; !rc && i < NREFS; i++) {
        const odf_block_ref *r = ref_at((odf_chain_state *)st, i);
        if (r->present)
            rc = jset(o, ref_keys[i], jmh(r->hash));
    }
    if (!rc) {
        json_t *arr = json_array();
        rc = jset(o, "pushSources", arr);
        for (size_t i = 0; !rc && i < st->num_push_sources; i++) {
            json_t *p = json_object();
            if (!p || json_array_append_new(arr, p) < 0) {
                rc = silt_err(SILT_ENOMEM, "out of memory building chain state JSON");
                break;
            }
            rc = jset(p, "sourceName", json_string(nz(st->push_sources[i].name)));
            if (!rc)
                rc = jset(p, "block", jmh(st->push_sources[i].block));
        }
    }
    if (!rc) {
        json_t *arr = json_array();
        rc = jset(o, "sourceStates", arr);
        for (size_t i = 0; !rc && i < st->num_source_states; i++) {
            json_t *p = json_object();
            if (!p || json_array_append_new(arr, p) < 0) {
                rc = silt_err(SILT_ENOMEM, "out of memory building chain state JSON");
                break;
            }
            const odf_source_state_ref *s = &st->source_states[i];
            rc = jset(p, "sourceName", json_string(nz(s->source_name)));
            if (!rc)
                rc = jset(p, "kind", json_string(nz(s->kind)));
            if (!rc)
                rc = jset(p, "value", json_string(nz(s->value)));
            if (!rc)
                rc = jset(p, "block", jmh(s->block));
        }
    }
    if (!rc) {
        *out = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        if (!*out)
            rc = silt_err(SILT_ENOMEM, "out of memory serialising chain state JSON");
    }
    json_decref(o);
    return rc;
}

static int bad(const char *key, const char *what)
{
    return silt_err(SILT_ECORRUPT, "chain state JSON: '%s' %s", key, what);
}

static int get_u64(json_t *o, const char *key, bool *has, uint64_t *out)
{
    json_t *v = json_object_get(o, key);
    if (has)
        *has = v != NULL && !json_is_null(v);
    if (!v || json_is_null(v)) {
        if (!has)
            *out = 0;
        return 0;
    }
    if (json_is_integer(v)) {
        json_int_t i = json_integer_value(v);
        if (i < 0)
            return bad(key, "is negative");
        *out = (uint64_t)i;
        return 0;
    }
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        char *end = NULL;
        if (!*s || *s == '-' || *s == '+')
            return bad(key, "is not an unsigned integer");
        errno = 0;
        unsigned long long x = strtoull(s, &end, 10);
        if (*end || errno == ERANGE)
            return bad(key, "is not an unsigned integer");
        *out = (uint64_t)x;
        return 0;
    }
    return bad(key, "is not an unsigned integer");
}

static int get_mh(json_t *v, const char *key, uint8_t out[SILT_MH_LEN])
{
    if (!json_is_string(v))
        return bad(key, "is not a multihash string");
    silt_buf b = SILT_BUF_INIT;
    int rc = silt_multihash_from_text(json_string_value(v), &b);
    if (rc == 0 && b.len != SILT_MH_LEN)
        rc = bad(key, "is not a SHA3-256 multihash");
    else if (rc < 0)
        rc = silt_err_context(SILT_ECORRUPT, "chain state JSON: '%s'", key);
    if (rc == 0)
        memcpy(out, b.data, SILT_MH_LEN);
    silt_buf_free(&b);
    return rc;
}

static int get_time(json_t *v, const char *key, odf_time *out)
{
    silt_time t;
    if (!json_is_string(v))
        return bad(key, "is not an RFC 3339 time string");
    if (silt_time_parse(json_string_value(v), &t) < 0)
        return silt_err_context(SILT_ECORRUPT, "chain state JSON: '%s'", key);
    out->sec = t.sec;
    out->nsec = t.nsec;
    return 0;
}

static const char *get_str(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static int parse_state(odf_chain_state *st, json_t *o)
{
    int rc;
    json_t *v;
    if (!json_is_object(o))
        return silt_err(SILT_ECORRUPT, "chain state JSON: not an object");
    v = json_object_get(o, "version");
    if (v && (!json_is_integer(v) || json_integer_value(v) != JSON_STATE_VERSION))
        return bad("version", "is not a supported version (expected 2)");
    v = json_object_get(o, "empty");
    if (v && !json_is_boolean(v))
        return bad("empty", "is not a boolean");
    st->empty = v ? json_is_true(v) : json_object_get(o, "head") == NULL;
    if (!st->empty) {
        if ((rc = get_mh(json_object_get(o, "head"), "head", st->head)) < 0)
            return rc;
        bool has = false;
        if ((rc = get_u64(o, "sequenceNumber", &has, &st->seq)) < 0)
            return rc;
        if (!has)
            return bad("sequenceNumber", "is missing");
        if ((rc = get_time(json_object_get(o, "lastSystemTime"), "lastSystemTime",
                           &st->last_system_time)) < 0)
            return rc;
        const char *did = get_str(o, "datasetId");
        if (!did)
            return bad("datasetId", "is missing or not a string");
        if (silt_did_from_text(did, st->dataset_id) < 0)
            return silt_err_context(SILT_ECORRUPT, "chain state JSON: 'datasetId'");
        const char *kind = get_str(o, "datasetKind");
        if (kind && strcmp(kind, "Root") == 0)
            st->dataset_kind = ODF_DatasetKind_Root;
        else if (kind && strcmp(kind, "Derivative") == 0)
            st->dataset_kind = ODF_DatasetKind_Derivative;
        else
            return bad("datasetKind", "is not Root or Derivative");
    }
    if ((rc = get_u64(o, "lastOffset", &st->has_last_offset, &st->last_offset)) < 0 ||
        (rc = get_u64(o, "numRecords", NULL, &st->num_records)) < 0 ||
        (rc = get_u64(o, "dataSize", NULL, &st->data_size)) < 0 ||
        (rc = get_u64(o, "numDataBlocks", NULL, &st->num_data_blocks)) < 0)
        return rc;
    v = json_object_get(o, "checkpoint");
    if (v && !json_is_null(v)) {
        if (!json_is_object(v))
            return bad("checkpoint", "is not an object");
        if ((rc = get_mh(json_object_get(v, "physicalHash"), "checkpoint.physicalHash",
                         st->checkpoint)) < 0 ||
            (rc = get_u64(v, "size", NULL, &st->checkpoint_size)) < 0)
            return rc;
        st->has_checkpoint = true;
    }
    v = json_object_get(o, "watermark");
    if (v && !json_is_null(v)) {
        if ((rc = get_time(v, "watermark", &st->watermark)) < 0)
            return rc;
        st->has_watermark = true;
    }
    for (size_t i = 0; i < NREFS; i++) {
        v = json_object_get(o, ref_keys[i]);
        if (!v || json_is_null(v))
            continue;
        odf_block_ref *r = ref_at(st, i);
        if ((rc = get_mh(v, ref_keys[i], r->hash)) < 0)
            return rc;
        r->present = true;
    }
    v = json_object_get(o, "pushSources");
    if (v && !json_is_null(v)) {
        if (!json_is_array(v))
            return bad("pushSources", "is not an array");
        size_t n = json_array_size(v);
        if (n) {
            st->push_sources = silt_arena_alloc(st->arena, n * sizeof *st->push_sources);
            if (!st->push_sources)
                return SILT_ENOMEM;
        }
        for (size_t i = 0; i < n; i++) {
            json_t *p = json_array_get(v, i);
            const char *name = get_str(p, "sourceName");
            if (!name)
                return bad("pushSources", "has an entry without sourceName");
            if ((rc = get_mh(json_object_get(p, "block"), "pushSources.block",
                             st->push_sources[i].block)) < 0)
                return rc;
            if (!(st->push_sources[i].name = silt_arena_strdup(st->arena, name)))
                return SILT_ENOMEM;
            st->num_push_sources++;
        }
    }
    v = json_object_get(o, "sourceStates");
    if (v && !json_is_null(v)) {
        if (!json_is_array(v))
            return bad("sourceStates", "is not an array");
        size_t n = json_array_size(v);
        if (n) {
            st->source_states = silt_arena_alloc(st->arena, n * sizeof *st->source_states);
            if (!st->source_states)
                return SILT_ENOMEM;
        }
        for (size_t i = 0; i < n; i++) {
            json_t *p = json_array_get(v, i);
            const char *name = get_str(p, "sourceName"), *kind = get_str(p, "kind"),
                       *value = get_str(p, "value");
            if (!name || !kind || !value)
                return bad("sourceStates", "has an entry without sourceName, kind or value");
            odf_source_state_ref *s = &st->source_states[i];
            if ((rc = get_mh(json_object_get(p, "block"), "sourceStates.block", s->block)) < 0)
                return rc;
            s->source_name = silt_arena_strdup(st->arena, name);
            s->kind = silt_arena_strdup(st->arena, kind);
            s->value = silt_arena_strdup(st->arena, value);
            if (!s->source_name || !s->kind || !s->value)
                return SILT_ENOMEM;
            st->num_source_states++;
        }
    }
    return 0;
}

int odf_chain_state_from_json(odf_chain_state *st, const char *json)
{
    if (!st || !json)
        return silt_err(SILT_EINVAL, "odf_chain_state_from_json: state or text is NULL");
    json_error_t jerr;
    json_t *o = json_loads(json, JSON_REJECT_DUPLICATES, &jerr);
    if (!o)
        return silt_err(SILT_ECORRUPT, "chain state JSON: %s (line %d)", jerr.text, jerr.line);
    odf_chain_state tmp;
    int rc = odf_chain_state_init(&tmp);
    if (rc == 0)
        rc = parse_state(&tmp, o);
    json_decref(o);
    if (rc < 0) {
        odf_chain_state_free(&tmp);
        return rc;
    }
    /* replace the contents of st (which must be initialised or zeroed) */
    silt_arena_free(st->arena);
    *st = tmp;
    return 0;
}
