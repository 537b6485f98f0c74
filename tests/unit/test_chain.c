/* test_chain.c — metadata chain rules (src/odf/chain.h).
 *
 * Blocks are built by hand as C structs; their hashes come from the canonical
 * encoding (odf_block_encode_hash) when it succeeds, otherwise from a fake but
 * distinct multihash. A small in-memory "store" backs the env callbacks. */
#include "testutil.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "odf/block.h"
#include "odf/chain.h"
#include "odf/schema_rules.h"
#include "util/arena.h"
#include "util/error.h"
#include "util/multiformats.h"

#define MAXB 128

typedef struct tctx {
    silt_arena *a;
    odf_chain_state st;
    odf_chain_env env;
    struct {
        uint8_t h[SILT_MH_LEN];
        odf_MetadataBlock *b;
    } blocks[MAXB];
    size_t nblocks;
    struct {
        char kind[16];
        uint8_t h[SILT_MH_LEN];
        uint64_t size;
    } objs[MAXB];
    size_t nobjs;
    uint8_t did[SILT_DID_LEN];
    int64_t t0;
    unsigned fake;
    uint8_t last_hash[SILT_MH_LEN];
} tctx;

/* ---- store callbacks ---- */

static int cb_load(void *ctx, const uint8_t hash[SILT_MH_LEN], silt_arena *a,
                   odf_MetadataBlock **out)
{
    (void)a;
    tctx *c = ctx;
    for (size_t i = 0; i < c->nblocks; i++)
        if (memcmp(c->blocks[i].h, hash, SILT_MH_LEN) == 0) {
            *out = c->blocks[i].b;
            return 0;
        }
    return silt_err(SILT_ENOTFOUND, "block not found");
}

static int cb_exists(void *ctx, const char *kind, const uint8_t hash[SILT_MH_LEN], uint64_t size)
{
    tctx *c = ctx;
    for (size_t i = 0; i < c->nobjs; i++)
        if (strcmp(c->objs[i].kind, kind) == 0 && memcmp(c->objs[i].h, hash, SILT_MH_LEN) == 0)
            return c->objs[i].size == size;
    return 0;
}

static int cb_exists_io(void *ctx, const char *kind, const uint8_t hash[SILT_MH_LEN],
                        uint64_t size)
{
    (void)ctx; (void)kind; (void)hash; (void)size;
    return silt_err(SILT_EIO, "disk on fire");
}

static int setup(void **state)
{
    tctx *c = calloc(1, sizeof *c);
    assert_non_null(c);
    c->a = silt_arena_new();
    assert_non_null(c->a);
    assert_int_equal(odf_chain_state_init(&c->st), 0);
    c->env = (odf_chain_env){c, cb_load, cb_exists};
    uint8_t seed[32];
    for (int i = 0; i < 32; i++)
        seed[i] = (uint8_t)(i * 7 + 1);
    assert_int_equal(silt_did_from_seed(seed, c->did), 0);
    c->t0 = 1577836800; /* 2020-01-01T00:00:00Z */
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    tctx *c = *state;
    odf_chain_state_free(&c->st);
    silt_arena_free(c->a);
    free(c);
    return 0;
}

/* ---- builders ---- */

static void *zalloc(tctx *c, size_t n)
{
    void *p = silt_arena_alloc(c->a, n);
    assert_non_null(p);
    return p;
}

static char *sdup(tctx *c, const char *s)
{
    char *p = silt_arena_strdup(c->a, s);
    assert_non_null(p);
    return p;
}

static void fake_mh(const char *name, uint8_t out[SILT_MH_LEN])
{
    assert_int_equal(silt_multihash_sha3(name, strlen(name), out), 0);
}

static odf_bytes mh_bytes(tctx *c, const char *name)
{
    odf_bytes b = {zalloc(c, SILT_MH_LEN), SILT_MH_LEN};
    fake_mh(name, b.data);
    return b;
}

static const char *mhtext(const uint8_t *h)
{
    static char buf[4][2 * SILT_MH_LEN + 2];
    static int i;
    i = (i + 1) % 4;
    silt_multihash_to_text(h, SILT_MH_LEN, buf[i]);
    return buf[i];
}

static void add_obj(tctx *c, const char *kind, const uint8_t *h, uint64_t size)
{
    assert_true(c->nobjs < MAXB);
    snprintf(c->objs[c->nobjs].kind, sizeof c->objs[0].kind, "%s", kind);
    memcpy(c->objs[c->nobjs].h, h, SILT_MH_LEN);
    c->objs[c->nobjs].size = size;
    c->nobjs++;
}

/* next block on top of the current head (seq, prev hash, time = t0 + seq) */
static odf_MetadataBlock *blk(tctx *c, uint8_t type, void *ev)
{
    odf_MetadataBlock *b = zalloc(c, sizeof *b);
    b->sequence_number = c->st.empty ? 0 : c->st.seq + 1;
    b->has_system_time = true;
    b->system_time = (odf_time){c->t0 + (int64_t)b->sequence_number, 0};
    if (!c->st.empty) {
        b->prev_block_hash.data = zalloc(c, SILT_MH_LEN);
        b->prev_block_hash.len = SILT_MH_LEN;
        memcpy(b->prev_block_hash.data, c->st.head, SILT_MH_LEN);
    }
    b->event = (odf_union){type, ev};
    return b;
}

static void hash_block(tctx *c, const odf_MetadataBlock *b, uint8_t h[SILT_MH_LEN])
{
    if (odf_block_encode_hash(NULL, b, h) == 0)
        return;
    char name[32];
    snprintf(name, sizeof name, "fake-block-%u", c->fake++);
    fake_mh(name, h);
}

static int try_block(tctx *c, const odf_MetadataBlock *b)
{
    hash_block(c, b, c->last_hash);
    silt_err_clear();
    return odf_chain_check(&c->st, b, c->last_hash, &c->env);
}

static void append(tctx *c, odf_MetadataBlock *b)
{
    int rc = try_block(c, b);
    if (rc != 0)
        fail_msg("append of block %llu failed: %s", (unsigned long long)b->sequence_number,
                 silt_error_last());
    assert_int_equal(odf_chain_apply(&c->st, b, c->last_hash), 0);
    assert_true(c->nblocks < MAXB);
    memcpy(c->blocks[c->nblocks].h, c->last_hash, SILT_MH_LEN);
    c->blocks[c->nblocks].b = b;
    c->nblocks++;
}

#define EXPECT_FAIL(c, b, msg)                                                                  \
    do {                                                                                        \
        int rc_ = try_block((c), (b));                                                          \
        assert_int_equal(rc_, SILT_EVALIDATION);                                                \
        assert_string_equal(silt_error_last(), (msg));                                          \
    } while (0)

static odf_Seed *ev_seed(tctx *c, int32_t kind)
{
    odf_Seed *s = zalloc(c, sizeof *s);
    s->dataset_id.data = zalloc(c, SILT_DID_LEN);
    s->dataset_id.len = SILT_DID_LEN;
    memcpy(s->dataset_id.data, c->did, SILT_DID_LEN);
    s->dataset_kind = kind;
    return s;
}

static void seed(tctx *c, int32_t kind)
{
    append(c, blk(c, ODF_MetadataEvent_Seed, ev_seed(c, kind)));
}

static odf_union dtype(tctx *c, const char *spec)
{
    if (spec[0] == '?') {
        odf_DataTypeOption *o = zalloc(c, sizeof *o);
        o->inner = dtype(c, spec + 1);
        return (odf_union){ODF_DataType_Option, o};
    }
    const odf_union_desc *u = &odf_udesc_DataType;
    for (size_t i = 0; i < u->nvariants; i++)
        if (strcmp(u->variants[i]->name + 8, spec) == 0)
            return (odf_union){(uint8_t)(i + 1), zalloc(c, u->variants[i]->size)};
    fail_msg("unknown type %s", spec);
    return (odf_union){0, NULL};
}

/* "a:Int64,b:String,c:?Int32" */
static odf_SetDataSchema *ev_schema(tctx *c, const char *spec)
{
    odf_SetDataSchema *e = zalloc(c, sizeof *e);
    e->schema = zalloc(c, sizeof *e->schema);
    e->schema->fields.present = true;
    e->schema->fields.items = zalloc(c, 16 * sizeof(void *));
    char buf[256];
    snprintf(buf, sizeof buf, "%s", spec);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(tok, ':');
        assert_non_null(colon);
        *colon = '\0';
        odf_DataField *f = zalloc(c, sizeof *f);
        f->name = sdup(c, tok);
        f->type = dtype(c, colon + 1);
        e->schema->fields.items[e->schema->fields.n++] = f;
    }
    return e;
}

static odf_AddData *ev_add(tctx *c)
{
    return zalloc(c, sizeof(odf_AddData));
}

static odf_DataSlice *slice(tctx *c, const char *name, uint64_t start, uint64_t end,
                            uint64_t size, bool stored)
{
    odf_DataSlice *d = zalloc(c, sizeof *d);
    char n2[64];
    snprintf(n2, sizeof n2, "logical-%s", name);
    d->logical_hash = mh_bytes(c, n2);
    d->physical_hash = mh_bytes(c, name);
    d->offset_interval = zalloc(c, sizeof *d->offset_interval);
    d->offset_interval->start = start;
    d->offset_interval->end = end;
    d->size = size;
    if (stored)
        add_obj(c, "data", d->physical_hash.data, size);
    return d;
}

static odf_Checkpoint *ckpt(tctx *c, const char *name, uint64_t size, bool stored)
{
    odf_Checkpoint *k = zalloc(c, sizeof *k);
    k->physical_hash = mh_bytes(c, name);
    k->size = size;
    if (stored)
        add_obj(c, "checkpoints", k->physical_hash.data, size);
    return k;
}

static odf_SourceState *sstate(tctx *c, const char *src, const char *kind, const char *value)
{
    odf_SourceState *s = zalloc(c, sizeof *s);
    s->source_name = sdup(c, src);
    s->kind = sdup(c, kind);
    s->value = sdup(c, value);
    return s;
}

static odf_SetPollingSource *ev_polling(tctx *c, const char *url)
{
    odf_SetPollingSource *e = zalloc(c, sizeof *e);
    odf_FetchStepUrl *f = zalloc(c, sizeof *f);
    f->url = sdup(c, url);
    e->fetch = (odf_union){ODF_FetchStep_Url, f};
    e->read = (odf_union){ODF_ReadStep_Csv, zalloc(c, sizeof(odf_ReadStepCsv))};
    e->merge = (odf_union){ODF_MergeStrategy_Append, zalloc(c, sizeof(odf_MergeStrategyAppend))};
    return e;
}

static odf_AddPushSource *ev_push(tctx *c, const char *name, uint8_t read)
{
    odf_AddPushSource *e = zalloc(c, sizeof *e);
    e->source_name = sdup(c, name);
    e->read = (odf_union){read, zalloc(c, odf_udesc_ReadStep.variants[read - 1]->size)};
    e->merge = (odf_union){ODF_MergeStrategy_Append, zalloc(c, sizeof(odf_MergeStrategyAppend))};
    return e;
}

static odf_DisablePushSource *ev_disable_push(tctx *c, const char *name)
{
    odf_DisablePushSource *e = zalloc(c, sizeof *e);
    e->source_name = sdup(c, name);
    return e;
}

static odf_SetVocab *ev_vocab(tctx *c, const char *offset_col)
{
    odf_SetVocab *e = zalloc(c, sizeof *e);
    e->offset_column = sdup(c, offset_col);
    return e;
}

static odf_SetInfo *ev_info(tctx *c, const char *desc)
{
    odf_SetInfo *e = zalloc(c, sizeof *e);
    e->description = sdup(c, desc);
    e->keywords.present = true;
    e->keywords.items = zalloc(c, sizeof(char *));
    e->keywords.items[0] = sdup(c, "test");
    e->keywords.n = 1;
    return e;
}

static odf_SetLicense *ev_license(tctx *c, const char *short_name)
{
    odf_SetLicense *e = zalloc(c, sizeof *e);
    e->short_name = sdup(c, short_name);
    e->name = sdup(c, "Some License");
    e->website_url = sdup(c, "https://example.org/license");
    return e;
}

static odf_SetAttachments *ev_attach(tctx *c, const char *content)
{
    odf_SetAttachments *e = zalloc(c, sizeof *e);
    odf_AttachmentsEmbedded *em = zalloc(c, sizeof *em);
    odf_AttachmentEmbedded *it = zalloc(c, sizeof *it);
    it->path = sdup(c, "README.md");
    it->content = sdup(c, content);
    em->items.present = true;
    em->items.items = zalloc(c, sizeof(void *));
    em->items.items[0] = it;
    em->items.n = 1;
    e->attachments = (odf_union){ODF_Attachments_Embedded, em};
    return e;
}

static odf_SetTransform *ev_transform(tctx *c, const char *query)
{
    odf_SetTransform *e = zalloc(c, sizeof *e);
    odf_TransformInput *in = zalloc(c, sizeof *in);
    char did[SILT_DID_TEXT_LEN + 1];
    silt_did_to_text(c->did, did);
    in->dataset_ref = sdup(c, did);
    in->alias = sdup(c, "src");
    e->inputs.present = true;
    e->inputs.items = zalloc(c, sizeof(void *));
    e->inputs.items[0] = in;
    e->inputs.n = 1;
    odf_TransformSql *sql = zalloc(c, sizeof *sql);
    odf_SqlQueryStep *q = zalloc(c, sizeof *q);
    q->query = sdup(c, query);
    sql->engine = sdup(c, "duckdb");
    sql->queries.present = true;
    sql->queries.items = zalloc(c, sizeof(void *));
    sql->queries.items[0] = q;
    sql->queries.n = 1;
    e->transform = (odf_union){ODF_Transform_Sql, sql};
    return e;
}

static odf_ExecuteTransform *ev_exec(tctx *c, const char *new_input_block)
{
    odf_ExecuteTransform *e = zalloc(c, sizeof *e);
    odf_ExecuteTransformInput *in = zalloc(c, sizeof *in);
    in->dataset_id.data = zalloc(c, SILT_DID_LEN);
    in->dataset_id.len = SILT_DID_LEN;
    memcpy(in->dataset_id.data, c->did, SILT_DID_LEN);
    if (new_input_block)
        in->new_block_hash = mh_bytes(c, new_input_block);
    e->query_inputs.present = true;
    e->query_inputs.items = zalloc(c, sizeof(void *));
    e->query_inputs.items[0] = in;
    e->query_inputs.n = 1;
    return e;
}

/* root chain: Seed, SetPollingSource, SetDataSchema (blocks 0..2) */
static void root_base(tctx *c)
{
    seed(c, ODF_DatasetKind_Root);
    append(c, blk(c, ODF_MetadataEvent_SetPollingSource, ev_polling(c, "http://x/data.csv")));
    append(c, blk(c, ODF_MetadataEvent_SetDataSchema, ev_schema(c, "event_time:Timestamp,city:String,population:Int64")));
}

/* root_base + one AddData with offsets 0..9, checkpoint "cp1", watermark t0+100 */
static void root_with_data(tctx *c)
{
    root_base(c);
    odf_AddData *e = ev_add(c);
    e->new_data = slice(c, "slice1", 0, 9, 1000, true);
    e->new_checkpoint = ckpt(c, "cp1", 50, true);
    e->has_new_watermark = true;
    e->new_watermark = (odf_time){c->t0 + 100, 0};
    e->new_source_state = sstate(c, "src", "odf/etag", "e1");
    append(c, blk(c, ODF_MetadataEvent_AddData, e));
}

/* AddData continuing root_with_data correctly (prev offset 9, prev checkpoint cp1) */
static odf_AddData *next_add(tctx *c)
{
    odf_AddData *e = ev_add(c);
    e->has_prev_offset = true;
    e->prev_offset = 9;
    e->prev_checkpoint = mh_bytes(c, "cp1");
    e->new_checkpoint = ckpt(c, "cp1", 50, false);
    e->has_new_watermark = true;
    e->new_watermark = (odf_time){c->t0 + 100, 0};
    return e;
}

/* ================================================================== */
/* positive paths                                                      */

static void test_realistic_root_chain(void **state)
{
    tctx *c = *state;
    root_base(c);
    assert_true(c->st.polling_source.present);
    assert_true(c->st.schema.present);
    uint8_t schema_block[SILT_MH_LEN];
    memcpy(schema_block, c->st.head, SILT_MH_LEN);

    for (int i = 0; i < 3; i++) {
        odf_AddData *e = ev_add(c);
        char name[16], cp[16], etag[16];
        snprintf(name, sizeof name, "slice%d", i);
        snprintf(cp, sizeof cp, "cp%d", i);
        snprintf(etag, sizeof etag, "etag-%d", i);
        if (i > 0) {
            e->has_prev_offset = true;
            e->prev_offset = (uint64_t)i * 10 - 1;
            snprintf(cp, sizeof cp, "cp%d", i - 1);
            e->prev_checkpoint = mh_bytes(c, cp);
            snprintf(cp, sizeof cp, "cp%d", i);
        }
        e->new_data = slice(c, name, (uint64_t)i * 10, (uint64_t)i * 10 + 9, 100 + (uint64_t)i, true);
        e->new_checkpoint = ckpt(c, cp, 7, true);
        e->has_new_watermark = true;
        e->new_watermark = (odf_time){c->t0 + 1000 * (i + 1), 500000000};
        e->new_source_state = sstate(c, "", "odf/etag", etag);
        append(c, blk(c, ODF_MetadataEvent_AddData, e));
    }
    assert_false(c->st.empty);
    assert_int_equal(c->st.seq, 5);
    assert_true(c->st.has_last_offset);
    assert_int_equal(c->st.last_offset, 29);
    assert_int_equal(c->st.num_records, 30);
    assert_int_equal(c->st.data_size, 100 + 101 + 102);
    assert_int_equal(c->st.num_data_blocks, 3);
    assert_true(c->st.has_watermark);
    assert_int_equal(c->st.watermark.sec, c->t0 + 3000);
    assert_int_equal(c->st.watermark.nsec, 500000000);
    assert_true(c->st.has_checkpoint);
    uint8_t cp2[SILT_MH_LEN];
    fake_mh("cp2", cp2);
    assert_memory_equal(c->st.checkpoint, cp2, SILT_MH_LEN);
    assert_int_equal(c->st.checkpoint_size, 7);
    assert_memory_equal(c->st.schema.hash, schema_block, SILT_MH_LEN);
    assert_true(c->st.last_data_block.present);
    assert_memory_equal(c->st.last_data_block.hash, c->st.head, SILT_MH_LEN);
    assert_memory_equal(c->st.dataset_id, c->did, SILT_DID_LEN);
    assert_int_equal(c->st.dataset_kind, ODF_DatasetKind_Root);
    assert_int_equal(c->st.last_system_time.sec, c->t0 + 5);
    assert_int_equal(c->st.num_source_states, 1);
    assert_string_equal(c->st.source_states[0].source_name, "");
    assert_string_equal(c->st.source_states[0].value, "etag-2");

    /* source-state-only and watermark-only updates are not no-ops */
    odf_AddData *e = ev_add(c);
    e->has_prev_offset = true;
    e->prev_offset = 29;
    e->prev_checkpoint = mh_bytes(c, "cp2");
    e->new_checkpoint = ckpt(c, "cp2", 7, false);
    e->has_new_watermark = true;
    e->new_watermark = c->st.watermark;
    e->new_source_state = sstate(c, "", "odf/etag", "etag-3");
    append(c, blk(c, ODF_MetadataEvent_AddData, e));
    assert_string_equal(c->st.source_states[0].value, "etag-3");
    assert_int_equal(c->st.num_data_blocks, 3);
    assert_int_equal(c->st.last_offset, 29);

    e = ev_add(c);
    e->has_prev_offset = true;
    e->prev_offset = 29;
    e->prev_checkpoint = mh_bytes(c, "cp2");
    e->new_checkpoint = ckpt(c, "cp2", 7, false);
    e->has_new_watermark = true;
    e->new_watermark = (odf_time){c->t0 + 9999, 0};
    append(c, blk(c, ODF_MetadataEvent_AddData, e));
    assert_int_equal(c->st.watermark.sec, c->t0 + 9999);

    /* metadata events and additive schema evolution */
    append(c, blk(c, ODF_MetadataEvent_SetVocab, ev_vocab(c, "offset")));
    append(c, blk(c, ODF_MetadataEvent_SetInfo, ev_info(c, "Population")));
    append(c, blk(c, ODF_MetadataEvent_SetLicense, ev_license(c, "CC0")));
    append(c, blk(c, ODF_MetadataEvent_SetAttachments, ev_attach(c, "hello")));
    append(c, blk(c, ODF_MetadataEvent_SetInfo, ev_info(c, "Population v2")));
    append(c, blk(c, ODF_MetadataEvent_SetDataSchema,
                  ev_schema(c, "event_time:Timestamp,city:String,population:Int64,area:?Float64")));
    assert_memory_equal(c->st.schema.hash, c->st.head, SILT_MH_LEN);
    assert_memory_equal(c->st.info.hash, c->blocks[c->nblocks - 2].h, SILT_MH_LEN);
    assert_true(c->st.vocab.present && c->st.license.present && c->st.attachments.present);
    /* a polling source with a different URL replaces the current one */
    append(c, blk(c, ODF_MetadataEvent_SetPollingSource, ev_polling(c, "http://y/data.csv")));
    /* disabling the polling source, then a push source may be added */
    append(c, blk(c, ODF_MetadataEvent_DisablePollingSource,
                  zalloc(c, sizeof(odf_DisablePollingSource))));
    assert_false(c->st.polling_source.present);
    append(c, blk(c, ODF_MetadataEvent_AddPushSource, ev_push(c, "", ODF_ReadStep_NdJson)));
    assert_int_equal(c->st.num_push_sources, 1);
}

static void test_derivative_chain(void **state)
{
    tctx *c = *state;
    seed(c, ODF_DatasetKind_Derivative);
    assert_int_equal(c->st.dataset_kind, ODF_DatasetKind_Derivative);
    append(c, blk(c, ODF_MetadataEvent_SetTransform, ev_transform(c, "select * from src")));
    assert_true(c->st.transform.present);
    /* an ExecuteTransform that only advances its inputs is allowed before a schema */
    append(c, blk(c, ODF_MetadataEvent_ExecuteTransform, ev_exec(c, "in-block-1")));
    assert_false(c->st.has_last_offset);
    append(c, blk(c, ODF_MetadataEvent_SetDataSchema, ev_schema(c, "a:Int64,b:?String")));
    odf_ExecuteTransform *e = ev_exec(c, "in-block-2");
    e->new_data = slice(c, "d-slice1", 0, 4, 77, true);
    e->new_checkpoint = ckpt(c, "d-cp1", 5, true);
    e->has_new_watermark = true;
    e->new_watermark = (odf_time){c->t0 + 50, 0};
    append(c, blk(c, ODF_MetadataEvent_ExecuteTransform, e));
    e = ev_exec(c, "in-block-3");
    e->has_prev_offset = true;
    e->prev_offset = 4;
    e->prev_checkpoint = mh_bytes(c, "d-cp1");
    e->new_data = slice(c, "d-slice2", 5, 5, 10, true);
    e->has_new_watermark = true;
    e->new_watermark = (odf_time){c->t0 + 60, 0};
    append(c, blk(c, ODF_MetadataEvent_ExecuteTransform, e));
    assert_int_equal(c->st.last_offset, 5);
    assert_int_equal(c->st.num_records, 6);
    assert_int_equal(c->st.data_size, 87);
    assert_int_equal(c->st.num_data_blocks, 2);
    assert_false(c->st.has_checkpoint); /* checkpoint dropped by the last block */
    append(c, blk(c, ODF_MetadataEvent_SetTransform, ev_transform(c, "select a from src")));
    assert_memory_equal(c->st.transform.hash, c->st.head, SILT_MH_LEN);
}

static void test_push_sources_and_source_states(void **state)
{
    tctx *c = *state;
    seed(c, ODF_DatasetKind_Root);
    append(c, blk(c, ODF_MetadataEvent_AddPushSource, ev_push(c, "a", ODF_ReadStep_NdJson)));
    uint8_t first_a[SILT_MH_LEN];
    memcpy(first_a, c->st.head, SILT_MH_LEN);
    append(c, blk(c, ODF_MetadataEvent_AddPushSource, ev_push(c, "b", ODF_ReadStep_Csv)));
    assert_int_equal(c->st.num_push_sources, 2);
    /* replacing "a" with a different definition */
    append(c, blk(c, ODF_MetadataEvent_AddPushSource, ev_push(c, "a", ODF_ReadStep_Json)));
    assert_int_equal(c->st.num_push_sources, 2);
    assert_string_equal(c->st.push_sources[0].name, "a");
    assert_memory_equal(c->st.push_sources[0].block, c->st.head, SILT_MH_LEN);
    assert_memory_not_equal(c->st.push_sources[0].block, first_a, SILT_MH_LEN);

    append(c, blk(c, ODF_MetadataEvent_SetDataSchema, ev_schema(c, "x:Int32")));
    odf_AddData *e = ev_add(c);
    e->new_data = slice(c, "ps1", 0, 9, 10, true);
    e->new_source_state = sstate(c, "a", "odf/etag", "a1");
    append(c, blk(c, ODF_MetadataEvent_AddData, e));
    e = ev_add(c);
    e->has_prev_offset = true;
    e->prev_offset = 9;
    e->new_data = slice(c, "ps2", 10, 19, 10, true);
    e->new_source_state = sstate(c, "b", "odf/last-modified", "b1");
    append(c, blk(c, ODF_MetadataEvent_AddData, e));
    e = ev_add(c);
    e->has_prev_offset = true;
    e->prev_offset = 19;
    e->new_source_state = sstate(c, "a", "odf/etag", "a2");
    append(c, blk(c, ODF_MetadataEvent_AddData, e));
    assert_int_equal(c->st.num_source_states, 2);
    assert_string_equal(c->st.source_states[0].source_name, "a");
    assert_string_equal(c->st.source_states[0].value, "a2");
    assert_string_equal(c->st.source_states[1].source_name, "b");
    assert_string_equal(c->st.source_states[1].kind, "odf/last-modified");
    assert_string_equal(c->st.source_states[1].value, "b1");
    assert_int_equal(c->st.last_offset, 19);
    assert_int_equal(c->st.num_records, 20);

    /* repeating a's last state is a no-op (states are compared per source name) */
    e = ev_add(c);
    e->has_prev_offset = true;
    e->prev_offset = 19;
    e->new_source_state = sstate(c, "a", "odf/etag", "a2");
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_AddData, e),
                "block 8 (AddData): the event changes nothing (no newData and the same "
                "checkpoint, watermark and source state) — no-op events are not allowed");

    append(c, blk(c, ODF_MetadataEvent_DisablePushSource, ev_disable_push(c, "a")));
    assert_int_equal(c->st.num_push_sources, 1);
    assert_string_equal(c->st.push_sources[0].name, "b");
    /* source states survive disabling */
    assert_int_equal(c->st.num_source_states, 2);
    append(c, blk(c, ODF_MetadataEvent_DisablePushSource, ev_disable_push(c, "b")));
    assert_int_equal(c->st.num_push_sources, 0);
    /* now a polling source is allowed */
    append(c, blk(c, ODF_MetadataEvent_SetPollingSource, ev_polling(c, "http://x")));
}

static void test_json_roundtrip(void **state)
{
    tctx *c = *state;
    root_with_data(c);
    append(c, blk(c, ODF_MetadataEvent_SetVocab, ev_vocab(c, "offset")));
    odf_AddData *e = next_add(c);
    e->new_watermark.nsec = 123456789;
    e->new_source_state = sstate(c, "other", "odf/etag", "o\"1\n");
    append(c, blk(c, ODF_MetadataEvent_AddData, e));

    char *json = NULL;
    assert_int_equal(odf_chain_state_to_json(&c->st, &json), 0);
    assert_non_null(json);
    assert_non_null(strstr(json, "\"datasetId\": \"did:odf:f"));
    assert_non_null(strstr(json, "\"watermark\": \"2020-01-01T00:01:40.123456789Z\""));
    assert_non_null(strstr(json, mhtext(c->st.head)));

    odf_chain_state s2;
    assert_int_equal(odf_chain_state_init(&s2), 0);
    assert_int_equal(odf_chain_state_from_json(&s2, json), 0);
    assert_int_equal(s2.empty, c->st.empty);
    assert_memory_equal(s2.head, c->st.head, SILT_MH_LEN);
    assert_int_equal(s2.seq, c->st.seq);
    assert_int_equal(s2.last_system_time.sec, c->st.last_system_time.sec);
    assert_memory_equal(s2.dataset_id, c->st.dataset_id, SILT_DID_LEN);
    assert_int_equal(s2.dataset_kind, c->st.dataset_kind);
    assert_int_equal(s2.has_last_offset, c->st.has_last_offset);
    assert_int_equal(s2.last_offset, c->st.last_offset);
    assert_int_equal(s2.num_records, c->st.num_records);
    assert_int_equal(s2.data_size, c->st.data_size);
    assert_int_equal(s2.num_data_blocks, c->st.num_data_blocks);
    assert_int_equal(s2.has_checkpoint, c->st.has_checkpoint);
    assert_memory_equal(s2.checkpoint, c->st.checkpoint, SILT_MH_LEN);
    assert_int_equal(s2.checkpoint_size, c->st.checkpoint_size);
    assert_int_equal(s2.has_watermark, c->st.has_watermark);
    assert_int_equal(s2.watermark.sec, c->st.watermark.sec);
    assert_int_equal(s2.watermark.nsec, 123456789);
    assert_true(s2.schema.present && s2.vocab.present && s2.polling_source.present);
    assert_memory_equal(s2.schema.hash, c->st.schema.hash, SILT_MH_LEN);
    assert_memory_equal(s2.vocab.hash, c->st.vocab.hash, SILT_MH_LEN);
    assert_memory_equal(s2.polling_source.hash, c->st.polling_source.hash, SILT_MH_LEN);
    assert_false(s2.transform.present || s2.info.present || s2.license.present ||
                 s2.attachments.present);
    assert_memory_equal(s2.last_data_block.hash, c->st.last_data_block.hash, SILT_MH_LEN);
    /* the blocks behind the values: Seed, last data event, source states */
    assert_true(s2.seed.present && s2.last_data_event.present);
    assert_memory_equal(s2.seed.hash, c->blocks[0].h, SILT_MH_LEN);
    assert_memory_equal(s2.last_data_event.hash, c->st.head, SILT_MH_LEN);
    assert_memory_equal(s2.source_states[0].block, c->blocks[3].h, SILT_MH_LEN);
    assert_memory_equal(s2.source_states[1].block, c->st.head, SILT_MH_LEN);
    assert_non_null(strstr(json, "\"version\": 2"));
    assert_int_equal(s2.num_source_states, 2);
    assert_string_equal(s2.source_states[1].source_name, "other");
    assert_string_equal(s2.source_states[1].value, "o\"1\n");

    /* the reloaded state continues the chain */
    char *json2 = NULL;
    assert_int_equal(odf_chain_state_to_json(&s2, &json2), 0);
    assert_string_equal(json, json2);
    free(json2);
    odf_chain_state_free(&c->st);
    c->st = s2;
    append(c, blk(c, ODF_MetadataEvent_SetInfo, ev_info(c, "after reload")));
    free(json);

    /* push sources, empty state, unknown keys, big numbers */
    odf_chain_state s3;
    assert_int_equal(odf_chain_state_init(&s3), 0);
    assert_int_equal(odf_chain_state_to_json(&s3, &json), 0);
    odf_chain_state s4;
    assert_int_equal(odf_chain_state_init(&s4), 0);
    assert_int_equal(odf_chain_state_from_json(&s4, json), 0);
    assert_true(s4.empty);
    free(json);
    char did[SILT_DID_TEXT_LEN + 1];
    silt_did_to_text(c->did, did);
    char text[2048];
    snprintf(text, sizeof text,
             "{\"version\":2,\"empty\":false,\"head\":\"%s\",\"sequenceNumber\":3,"
             "\"lastSystemTime\":\"2021-05-06T07:08:09.5Z\",\"datasetId\":\"%s\","
             "\"datasetKind\":\"Root\",\"lastOffset\":\"18446744073709551615\","
             "\"future\":[1,2],\"pushSources\":[{\"sourceName\":\"p\",\"block\":\"%s\"}]}",
             mhtext(c->st.head), did, mhtext(c->st.head));
    assert_int_equal(odf_chain_state_from_json(&s4, text), 0);
    assert_int_equal(s4.last_offset, UINT64_MAX);
    assert_int_equal(s4.num_push_sources, 1);
    assert_string_equal(s4.push_sources[0].name, "p");
    assert_int_equal(s4.last_system_time.nsec, 500000000);
    assert_int_equal(odf_chain_state_to_json(&s4, &json), 0);
    assert_non_null(strstr(json, "\"lastOffset\": \"18446744073709551615\""));
    free(json);
    /* bad input leaves the state untouched */
    assert_int_equal(odf_chain_state_from_json(&s4, "{\"empty\":false,\"head\":\"zz\"}"),
                     SILT_ECORRUPT);
    assert_int_equal(odf_chain_state_from_json(&s4, "[1"), SILT_ECORRUPT);
    /* a summary of the first format (no blocks behind the values) is refused */
    assert_int_equal(odf_chain_state_from_json(&s4, "{\"version\":1,\"empty\":true}"), SILT_ECORRUPT);
    assert_string_equal(silt_error_last(),
                        "chain state JSON: 'version' is not a supported version (expected 2)");
    assert_int_equal(odf_chain_state_from_json(&s4, "{\"empty\":true,\"numRecords\":-1}"), SILT_ECORRUPT);
    assert_string_equal(silt_error_last(), "chain state JSON: 'numRecords' is negative");
    assert_int_equal(s4.num_push_sources, 1);
    odf_chain_state_free(&s3);
    odf_chain_state_free(&s4);
}

/* ================================================================== */
/* rule violations                                                     */

static void test_first_block_must_be_seed(void **state)
{
    tctx *c = *state;
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_SetInfo, ev_info(c, "x")),
                "block 0 (SetInfo): the first block must be a Seed");
    odf_MetadataBlock *b = blk(c, ODF_MetadataEvent_Seed, ev_seed(c, ODF_DatasetKind_Root));
    b->sequence_number = 1;
    EXPECT_FAIL(c, b, "block 1 (Seed): sequenceNumber is 1 but the first block must have 0");
    b = blk(c, ODF_MetadataEvent_Seed, ev_seed(c, ODF_DatasetKind_Root));
    b->prev_block_hash = mh_bytes(c, "x");
    char msg[256];
    snprintf(msg, sizeof msg, "block 0 (Seed): prevBlockHash is %s but the first block must have none",
             mhtext(b->prev_block_hash.data));
    EXPECT_FAIL(c, b, msg);
    odf_Seed *s = ev_seed(c, ODF_DatasetKind_Root);
    s->dataset_id.len = 10;
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_Seed, s),
                "block 0 (Seed): datasetId is not a did:odf ed25519 key (10 bytes)");
    s = ev_seed(c, 5);
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_Seed, s),
                "block 0 (Seed): datasetKind 5 is neither Root nor Derivative");
    b = blk(c, ODF_MetadataEvent_Seed, NULL);
    EXPECT_FAIL(c, b, "block 0 (Seed): event is missing");
    b = blk(c, ODF_MetadataEvent_Seed, ev_seed(c, ODF_DatasetKind_Root));
    b->has_system_time = false;
    EXPECT_FAIL(c, b, "block 0 (Seed): systemTime is missing");
}

static void test_second_seed(void **state)
{
    tctx *c = *state;
    seed(c, ODF_DatasetKind_Root);
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_Seed, ev_seed(c, ODF_DatasetKind_Root)),
                "block 1 (Seed): a Seed may only be the first block");
}

static void test_sequence_and_prev_hash(void **state)
{
    tctx *c = *state;
    seed(c, ODF_DatasetKind_Root);
    append(c, blk(c, ODF_MetadataEvent_SetInfo, ev_info(c, "a")));
    odf_MetadataBlock *b = blk(c, ODF_MetadataEvent_SetInfo, ev_info(c, "b"));
    b->sequence_number = 5;
    EXPECT_FAIL(c, b, "block 5 (SetInfo): sequenceNumber is 5 but the previous block has 1");
    b = blk(c, ODF_MetadataEvent_SetInfo, ev_info(c, "b"));
    b->sequence_number = 1;
    EXPECT_FAIL(c, b, "block 1 (SetInfo): sequenceNumber is 1 but the previous block has 1");

    char msg[400];
    b = blk(c, ODF_MetadataEvent_SetInfo, ev_info(c, "b"));
    b->prev_block_hash = (odf_bytes){NULL, 0};
    snprintf(msg, sizeof msg, "block 2 (SetInfo): prevBlockHash is missing; the previous block is %s",
             mhtext(c->st.head));
    EXPECT_FAIL(c, b, msg);
    b = blk(c, ODF_MetadataEvent_SetInfo, ev_info(c, "b"));
    b->prev_block_hash = (odf_bytes){c->blocks[0].h, SILT_MH_LEN}; /* the seed, not the head */
    snprintf(msg, sizeof msg, "block 2 (SetInfo): prevBlockHash is %s but the previous block is %s",
             mhtext(c->blocks[0].h), mhtext(c->st.head));
    EXPECT_FAIL(c, b, msg);
}

static void test_system_time_monotonic(void **state)
{
    tctx *c = *state;
    seed(c, ODF_DatasetKind_Root);
    odf_MetadataBlock *b = blk(c, ODF_MetadataEvent_SetInfo, ev_info(c, "a"));
    b->system_time = (odf_time){c->t0 - 1, 999000000};
    EXPECT_FAIL(c, b, "block 1 (SetInfo): systemTime 2019-12-31T23:59:59.999Z is earlier than "
                      "the previous block's 2020-01-01T00:00:00Z");
    /* equal is fine */
    b = blk(c, ODF_MetadataEvent_SetInfo, ev_info(c, "a"));
    b->system_time = (odf_time){c->t0, 0};
    append(c, b);
    b = blk(c, ODF_MetadataEvent_SetInfo, ev_info(c, "b"));
    b->has_system_time = false;
    EXPECT_FAIL(c, b, "block 2 (SetInfo): systemTime is missing");
}

static void test_root_only_events_in_derivative(void **state)
{
    tctx *c = *state;
    seed(c, ODF_DatasetKind_Derivative);
    odf_AddData *e = ev_add(c);
    e->new_source_state = sstate(c, "", "k", "v");
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_AddData, e),
                "block 1 (AddData): AddData is not allowed in a derivative dataset");
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_SetPollingSource, ev_polling(c, "http://x")),
                "block 1 (SetPollingSource): SetPollingSource is not allowed in a derivative dataset");
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_AddPushSource, ev_push(c, "p", ODF_ReadStep_Csv)),
                "block 1 (AddPushSource): AddPushSource is not allowed in a derivative dataset");
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_DisablePushSource, ev_disable_push(c, "p")),
                "block 1 (DisablePushSource): DisablePushSource is not allowed in a derivative dataset");
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_DisablePollingSource,
                       zalloc(c, sizeof(odf_DisablePollingSource))),
                "block 1 (DisablePollingSource): DisablePollingSource is not allowed in a "
                "derivative dataset");
}

static void test_derivative_only_events_in_root(void **state)
{
    tctx *c = *state;
    seed(c, ODF_DatasetKind_Root);
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_ExecuteTransform, ev_exec(c, "in1")),
                "block 1 (ExecuteTransform): ExecuteTransform is not allowed in a root dataset");
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_SetTransform, ev_transform(c, "select 1")),
                "block 1 (SetTransform): SetTransform is not allowed in a root dataset");
}

static void test_prev_offset(void **state)
{
    tctx *c = *state;
    root_base(c);
    /* before any data prevOffset must be absent */
    odf_AddData *e = ev_add(c);
    e->has_prev_offset = true;
    e->prev_offset = 3;
    e->new_data = slice(c, "s", 4, 5, 1, true);
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_AddData, e),
                "block 3 (AddData): prevOffset is 3 but the chain has no data yet");
    odf_chain_state_free(&c->st);
    assert_int_equal(odf_chain_state_init(&c->st), 0);
    c->nblocks = 0;
    root_with_data(c);
    e = next_add(c);
    e->prev_offset = 7;
    e->new_data = slice(c, "s2", 10, 12, 1, true);
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_AddData, e),
                "block 4 (AddData): prevOffset is 7 but the last offset is 9");
    e = next_add(c);
    e->has_prev_offset = false;
    e->new_data = slice(c, "s2", 10, 12, 1, true);
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_AddData, e),
                "block 4 (AddData): prevOffset is missing but the last offset is 9");
}

static void test_offset_interval(void **state)
{
    tctx *c = *state;
    root_base(c);
    odf_AddData *e = ev_add(c);
    e->new_data = slice(c, "s", 1, 5, 1, true);
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_AddData, e),
                "block 3 (AddData): newData.offsetInterval.start is 1 but the next offset is 0");
    e = ev_add(c);
    e->new_data = slice(c, "s", 0, 5, 1, true);
    e->new_data->offset_interval = NULL;
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_AddData, e),
                "block 3 (AddData): newData.offsetInterval is missing");
    e = ev_add(c);
    e->new_data = slice(c, "s0", 0, 9, 1, true);
    append(c, blk(c, ODF_MetadataEvent_AddData, e));
    e = ev_add(c);
    e->has_prev_offset = true;
    e->prev_offset = 9;
    e->new_data = slice(c, "s1", 11, 20, 1, true);
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_AddData, e),
                "block 4 (AddData): newData.offsetInterval.start is 11 but the next offset is 10");
    e = ev_add(c);
    e->has_prev_offset = true;
    e->prev_offset = 9;
    e->new_data = slice(c, "s1", 10, 8, 1, true);
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_AddData, e),
                "block 4 (AddData): newData.offsetInterval.end 8 is before its start 10");
    e = ev_add(c);
    e->has_prev_offset = true;
    e->prev_offset = 9;
    e->new_data = slice(c, "s1", 10, 10, 1, true);
    e->new_data->physical_hash.len = 5;
    char short_mh[16], msg[200];
    silt_multihash_to_text(e->new_data->physical_hash.data, 5, short_mh);
    snprintf(msg, sizeof msg, "block 4 (AddData): newData.physicalHash %s is not a SHA3-256 multihash",
             short_mh);
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_AddData, e), msg);
}

static void test_prev_checkpoint(void **state)
{
    tctx *c = *state;
    root_base(c);
    odf_AddData *e = ev_add(c);
    e->prev_checkpoint = mh_bytes(c, "cpX");
    e->new_data = slice(c, "s", 0, 5, 1, true);
    char msg[400];
    snprintf(msg, sizeof msg, "block 3 (AddData): prevCheckpoint is %s but there is no checkpoint yet",
             mhtext(e->prev_checkpoint.data));
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_AddData, e), msg);

    odf_chain_state_free(&c->st);
    assert_int_equal(odf_chain_state_init(&c->st), 0);
    c->nblocks = 0;
    root_with_data(c);
    uint8_t cp1[SILT_MH_LEN];
    fake_mh("cp1", cp1);
    e = next_add(c);
    e->prev_checkpoint = mh_bytes(c, "cp0");
    e->new_data = slice(c, "s2", 10, 12, 1, true);
    snprintf(msg, sizeof msg, "block 4 (AddData): prevCheckpoint is %s but the last checkpoint is %s",
             mhtext(e->prev_checkpoint.data), mhtext(cp1));
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_AddData, e), msg);
    e = next_add(c);
    e->prev_checkpoint = (odf_bytes){NULL, 0};
    e->new_data = slice(c, "s2", 10, 12, 1, true);
    snprintf(msg, sizeof msg, "block 4 (AddData): prevCheckpoint is missing but the last checkpoint is %s",
             mhtext(cp1));
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_AddData, e), msg);
}

static void test_watermark(void **state)
{
    tctx *c = *state;
    root_with_data(c);
    odf_AddData *e = next_add(c);
    e->new_watermark = (odf_time){c->t0 + 99, 0};
    e->new_data = slice(c, "s2", 10, 12, 1, true);
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_AddData, e),
                "block 4 (AddData): newWatermark 2020-01-01T00:01:39Z is earlier than the last "
                "watermark 2020-01-01T00:01:40Z");
    e = next_add(c);
    e->has_new_watermark = false;
    e->new_data = slice(c, "s2", 10, 12, 1, true);
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_AddData, e),
                "block 4 (AddData): newWatermark is missing but the last watermark is "
                "2020-01-01T00:01:40Z");
}

static void test_data_needs_schema(void **state)
{
    tctx *c = *state;
    seed(c, ODF_DatasetKind_Root);
    odf_AddData *e = ev_add(c);
    e->new_data = slice(c, "s", 0, 5, 1, true);
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_AddData, e),
                "block 1 (AddData): newData requires a SetDataSchema earlier in the chain");
    /* without data it is fine (e.g. only source state) */
    e = ev_add(c);
    e->new_source_state = sstate(c, "", "odf/etag", "x");
    append(c, blk(c, ODF_MetadataEvent_AddData, e));

    odf_chain_state_free(&c->st);
    assert_int_equal(odf_chain_state_init(&c->st), 0);
    seed(c, ODF_DatasetKind_Derivative);
    append(c, blk(c, ODF_MetadataEvent_SetTransform, ev_transform(c, "select 1")));
    odf_ExecuteTransform *x = ev_exec(c, "in1");
    x->new_data = slice(c, "d", 0, 0, 1, true);
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_ExecuteTransform, x),
                "block 2 (ExecuteTransform): newData requires a SetDataSchema earlier in the chain");
}

static void test_noop_data_events(void **state)
{
    tctx *c = *state;
    root_with_data(c);
    odf_AddData *e = next_add(c);
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_AddData, e),
                "block 4 (AddData): the event changes nothing (no newData and the same "
                "checkpoint, watermark and source state) — no-op events are not allowed");
    e = next_add(c);
    e->new_source_state = sstate(c, "src", "odf/etag", "e1"); /* same as before */
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_AddData, e),
                "block 4 (AddData): the event changes nothing (no newData and the same "
                "checkpoint, watermark and source state) — no-op events are not allowed");
    /* a new checkpoint alone is a change */
    e = next_add(c);
    e->new_checkpoint = ckpt(c, "cp2", 1, true);
    append(c, blk(c, ODF_MetadataEvent_AddData, e));

    odf_chain_state_free(&c->st);
    assert_int_equal(odf_chain_state_init(&c->st), 0);
    seed(c, ODF_DatasetKind_Derivative);
    append(c, blk(c, ODF_MetadataEvent_SetTransform, ev_transform(c, "select 1")));
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_ExecuteTransform, ev_exec(c, NULL)),
                "block 2 (ExecuteTransform): the event changes nothing (no newData and the same "
                "checkpoint, watermark and input positions) — no-op events are not allowed");
}

static void test_objects_must_exist(void **state)
{
    tctx *c = *state;
    root_base(c);
    odf_AddData *e = ev_add(c);
    e->new_data = slice(c, "missing-slice", 0, 5, 42, false);
    char msg[400];
    snprintf(msg, sizeof msg, "block 3 (AddData): newData.physicalHash %s: data object of 42 bytes "
             "is missing from the store", mhtext(e->new_data->physical_hash.data));
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_AddData, e), msg);
    /* wrong size */
    e = ev_add(c);
    e->new_data = slice(c, "sized", 0, 5, 42, false);
    add_obj(c, "data", e->new_data->physical_hash.data, 41);
    snprintf(msg, sizeof msg, "block 3 (AddData): newData.physicalHash %s: data object of 42 bytes "
             "is missing from the store", mhtext(e->new_data->physical_hash.data));
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_AddData, e), msg);
    e = ev_add(c);
    e->new_data = slice(c, "ok", 0, 5, 42, true);
    e->new_checkpoint = ckpt(c, "missing-cp", 9, false);
    snprintf(msg, sizeof msg, "block 3 (AddData): newCheckpoint.physicalHash %s: checkpoint object "
             "of 9 bytes is missing from the store", mhtext(e->new_checkpoint->physical_hash.data));
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_AddData, e), msg);
    /* I/O errors from the callback propagate */
    c->env.object_exists = cb_exists_io;
    assert_int_equal(try_block(c, blk(c, ODF_MetadataEvent_AddData, e)), SILT_EIO);
    /* without callbacks the check is skipped */
    c->env.object_exists = NULL;
    assert_int_equal(try_block(c, blk(c, ODF_MetadataEvent_AddData, e)), 0);
}

static void test_schema_evolution(void **state)
{
    tctx *c = *state;
    root_base(c); /* event_time:Timestamp,city:String,population:Int64 */
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_SetDataSchema,
                       ev_schema(c, "event_time:Timestamp,city:String,population:Int64")),
                "block 3 (SetDataSchema): schema is identical to the current one (no-op)");
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_SetDataSchema, ev_schema(c, "event_time:Timestamp,city:String")),
                "block 3 (SetDataSchema): schema.fields: existing field 'population' (position 2) "
                "was removed");
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_SetDataSchema,
                       ev_schema(c, "event_time:Timestamp,town:String,population:Int64")),
                "block 3 (SetDataSchema): schema.fields[1]: name is 'town' but the existing field "
                "at this position is 'city' (fields may not be renamed, removed or reordered)");
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_SetDataSchema,
                       ev_schema(c, "event_time:Timestamp,population:Int64,city:String")),
                "block 3 (SetDataSchema): schema.fields[1]: name is 'population' but the existing "
                "field at this position is 'city' (fields may not be renamed, removed or reordered)");
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_SetDataSchema,
                       ev_schema(c, "event_time:Timestamp,city:String,population:Int32")),
                "block 3 (SetDataSchema): schema.fields[2] ('population'): type changed from Int64 "
                "to Int32 (existing field types may not change)");
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_SetDataSchema,
                       ev_schema(c, "event_time:Timestamp,city:?String,population:Int64")),
                "block 3 (SetDataSchema): schema.fields[1] ('city'): type changed from String "
                "to Option<String> (existing field types may not change)");
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_SetDataSchema,
                       ev_schema(c, "event_time:Timestamp,city:String,population:Int64,area:Float64")),
                "block 3 (SetDataSchema): schema.fields[3] ('area'): new field has type Float64 but "
                "added fields must be nullable (Option)");
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_SetDataSchema,
                       ev_schema(c, "event_time:Timestamp,city:String,population:Int64,city:?String")),
                "block 3 (SetDataSchema): schema.fields[3]: name 'city' duplicates the field 'city' at "
                "position 1");
    /* nested type change is detected too */
    odf_SetDataSchema *s = ev_schema(c, "event_time:Timestamp,city:String,population:Int64");
    ((odf_DataTypeTimestamp *)((odf_DataField *)s->schema->fields.items[0])->type.value)->timezone =
        sdup(c, "Europe/Rome");
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_SetDataSchema, s),
                "block 3 (SetDataSchema): schema.fields[0] ('event_time'): type changed from "
                "Timestamp(Millisecond, UTC) to Timestamp(Millisecond, Europe/Rome) (existing field types "
                "may not change)");
    odf_SetDataSchema *empty = zalloc(c, sizeof *empty);
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_SetDataSchema, empty),
                "block 3 (SetDataSchema): schema is missing (neither schema nor rawArrowSchema is set)");
    /* additive change with a nullable field works, then more */
    append(c, blk(c, ODF_MetadataEvent_SetDataSchema,
                  ev_schema(c, "event_time:Timestamp,city:String,population:Int64,area:?Float64")));
    append(c, blk(c, ODF_MetadataEvent_SetDataSchema,
                  ev_schema(c, "event_time:Timestamp,city:String,population:Int64,area:?Float64,"
                               "tags:?String")));
    /* a changed field extra alone is not a type change */
    s = ev_schema(c, "event_time:Timestamp,city:String,population:Int64,area:?Float64,tags:?String");
    odf_ExtraAttributes *x = zalloc(c, sizeof *x);
    x->entries = sdup(c, "{\"a/b\":1}");
    ((odf_DataField *)s->schema->fields.items[1])->extra = x;
    append(c, blk(c, ODF_MetadataEvent_SetDataSchema, s));
}

static void test_noop_metadata_events(void **state)
{
    tctx *c = *state;
    root_base(c);
    append(c, blk(c, ODF_MetadataEvent_SetVocab, ev_vocab(c, "offset")));
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_SetVocab, ev_vocab(c, "offset")),
                "block 4 (SetVocab): vocab is identical to the current one (no-op)");
    append(c, blk(c, ODF_MetadataEvent_SetInfo, ev_info(c, "d")));
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_SetInfo, ev_info(c, "d")),
                "block 5 (SetInfo): info is identical to the current one (no-op)");
    append(c, blk(c, ODF_MetadataEvent_SetLicense, ev_license(c, "MIT")));
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_SetLicense, ev_license(c, "MIT")),
                "block 6 (SetLicense): license is identical to the current one (no-op)");
    append(c, blk(c, ODF_MetadataEvent_SetAttachments, ev_attach(c, "x")));
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_SetAttachments, ev_attach(c, "x")),
                "block 7 (SetAttachments): attachments is identical to the current one (no-op)");
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_SetPollingSource, ev_polling(c, "http://x/data.csv")),
                "block 7 (SetPollingSource): polling source is identical to the current one (no-op)");
    /* a different value is fine */
    append(c, blk(c, ODF_MetadataEvent_SetLicense, ev_license(c, "Apache-2.0")));

    odf_chain_state_free(&c->st);
    assert_int_equal(odf_chain_state_init(&c->st), 0);
    seed(c, ODF_DatasetKind_Derivative);
    append(c, blk(c, ODF_MetadataEvent_SetTransform, ev_transform(c, "select 1")));
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_SetTransform, ev_transform(c, "select 1")),
                "block 2 (SetTransform): transform is identical to the current one (no-op)");

    odf_chain_state_free(&c->st);
    assert_int_equal(odf_chain_state_init(&c->st), 0);
    seed(c, ODF_DatasetKind_Root);
    append(c, blk(c, ODF_MetadataEvent_AddPushSource, ev_push(c, "p", ODF_ReadStep_Csv)));
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_AddPushSource, ev_push(c, "p", ODF_ReadStep_Csv)),
                "block 2 (AddPushSource): push source 'p' is identical to the current one (no-op)");
}

static void test_push_polling_exclusive(void **state)
{
    tctx *c = *state;
    root_base(c); /* has a polling source */
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_AddPushSource, ev_push(c, "p", ODF_ReadStep_Csv)),
                "block 3 (AddPushSource): a polling source is active; push and polling sources "
                "are mutually exclusive");
    odf_chain_state_free(&c->st);
    assert_int_equal(odf_chain_state_init(&c->st), 0);
    seed(c, ODF_DatasetKind_Root);
    append(c, blk(c, ODF_MetadataEvent_AddPushSource, ev_push(c, "p", ODF_ReadStep_Csv)));
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_SetPollingSource, ev_polling(c, "http://x")),
                "block 2 (SetPollingSource): push source 'p' is active; push and polling sources "
                "are mutually exclusive");
}

static void test_disable_sources(void **state)
{
    tctx *c = *state;
    seed(c, ODF_DatasetKind_Root);
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_DisablePollingSource,
                       zalloc(c, sizeof(odf_DisablePollingSource))),
                "block 1 (DisablePollingSource): there is no active polling source to disable");
    append(c, blk(c, ODF_MetadataEvent_AddPushSource, ev_push(c, "p", ODF_ReadStep_Csv)));
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_DisablePushSource, ev_disable_push(c, "q")),
                "block 2 (DisablePushSource): sourceName 'q' is not an active push source");
    append(c, blk(c, ODF_MetadataEvent_DisablePushSource, ev_disable_push(c, "p")));
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_DisablePushSource, ev_disable_push(c, "p")),
                "block 3 (DisablePushSource): sourceName 'p' is not an active push source");
    append(c, blk(c, ODF_MetadataEvent_SetPollingSource, ev_polling(c, "http://x")));
    append(c, blk(c, ODF_MetadataEvent_DisablePollingSource,
                  zalloc(c, sizeof(odf_DisablePollingSource))));
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_DisablePollingSource,
                       zalloc(c, sizeof(odf_DisablePollingSource))),
                "block 5 (DisablePollingSource): there is no active polling source to disable");
}

static void test_check_without_env(void **state)
{
    tctx *c = *state;
    root_with_data(c);
    /* state-only rules still apply with a NULL env */
    odf_AddData *e = next_add(c);
    e->prev_offset = 3;
    odf_MetadataBlock *b = blk(c, ODF_MetadataEvent_AddData, e);
    hash_block(c, b, c->last_hash);
    assert_int_equal(odf_chain_check(&c->st, b, c->last_hash, NULL), SILT_EVALIDATION);
    assert_string_equal(silt_error_last(),
                        "block 4 (AddData): prevOffset is 3 but the last offset is 9");
    b = blk(c, ODF_MetadataEvent_SetDataSchema,
            ev_schema(c, "event_time:Timestamp,city:String,population:Int64"));
    assert_int_equal(odf_chain_check(&c->st, b, c->last_hash, NULL), 0);
    assert_int_equal(odf_chain_check(NULL, b, c->last_hash, NULL), SILT_EINVAL);
}

static void test_value_equal_helpers(void **state)
{
    tctx *c = *state;
    odf_union a = dtype(c, "?Int64"), b = dtype(c, "?Int64"), d = dtype(c, "?Int32");
    assert_true(odf_data_type_equal(&a, &b));
    assert_false(odf_data_type_equal(&a, &d));
    assert_true(odf_data_type_is_nullable(&a));
    odf_union s = dtype(c, "String");
    assert_false(odf_data_type_is_nullable(&s));
    odf_AddData *x = ev_add(c), *y = ev_add(c);
    x->has_prev_offset = false;
    x->prev_offset = 5; /* ignored when absent */
    odf_union ex = {ODF_MetadataEvent_AddData, x}, ey = {ODF_MetadataEvent_AddData, y};
    assert_true(odf_event_equal(&ex, &ey));
    y->has_new_watermark = true;
    assert_false(odf_event_equal(&ex, &ey));
}

static void test_execute_transform_offsets(void **state)
{
    tctx *c = *state;
    seed(c, ODF_DatasetKind_Derivative);
    append(c, blk(c, ODF_MetadataEvent_SetTransform, ev_transform(c, "select 1")));
    append(c, blk(c, ODF_MetadataEvent_SetDataSchema, ev_schema(c, "a:Int64")));
    odf_ExecuteTransform *e = ev_exec(c, "i1");
    e->new_data = slice(c, "x0", 0, 9, 3, true);
    e->has_new_watermark = true;
    e->new_watermark = (odf_time){c->t0 + 10, 0};
    append(c, blk(c, ODF_MetadataEvent_ExecuteTransform, e));
    e = ev_exec(c, "i2");
    e->has_prev_offset = true;
    e->prev_offset = 8;
    e->has_new_watermark = true;
    e->new_watermark = (odf_time){c->t0 + 10, 0};
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_ExecuteTransform, e),
                "block 4 (ExecuteTransform): prevOffset is 8 but the last offset is 9");
    e->prev_offset = 9;
    e->has_new_watermark = false;
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_ExecuteTransform, e),
                "block 4 (ExecuteTransform): newWatermark is missing but the last watermark is "
                "2020-01-01T00:00:10Z");
    e->has_new_watermark = true;
    e->prev_checkpoint = mh_bytes(c, "nope");
    char msg[300];
    snprintf(msg, sizeof msg, "block 4 (ExecuteTransform): prevCheckpoint is %s but there is no "
             "checkpoint yet", mhtext(e->prev_checkpoint.data));
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_ExecuteTransform, e), msg);
    e->prev_checkpoint = (odf_bytes){NULL, 0};
    e->new_data = slice(c, "x1", 9, 12, 3, true);
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_ExecuteTransform, e),
                "block 4 (ExecuteTransform): newData.offsetInterval.start is 9 but the next "
                "offset is 10");
    e->new_data = slice(c, "x1", 10, 12, 3, true);
    append(c, blk(c, ODF_MetadataEvent_ExecuteTransform, e));
    assert_int_equal(c->st.last_offset, 12);
}

static void test_inconsistent_state_and_load_errors(void **state)
{
    tctx *c = *state;
    seed(c, ODF_DatasetKind_Root);
    append(c, blk(c, ODF_MetadataEvent_SetVocab, ev_vocab(c, "o")));
    /* the state claims the seed holds the current vocab */
    memcpy(c->st.vocab.hash, c->blocks[0].h, SILT_MH_LEN);
    assert_int_equal(try_block(c, blk(c, ODF_MetadataEvent_SetVocab, ev_vocab(c, "p"))),
                     SILT_ECORRUPT);
    char msg[300];
    snprintf(msg, sizeof msg, "chain state refers to block %s as the current SetVocab, but it "
             "holds Seed", mhtext(c->blocks[0].h));
    assert_string_equal(silt_error_last(), msg);
    /* an unknown block: the loader's error propagates */
    fake_mh("unknown", c->st.vocab.hash);
    assert_int_equal(try_block(c, blk(c, ODF_MetadataEvent_SetVocab, ev_vocab(c, "p"))),
                     SILT_ENOTFOUND);
}

/* SetVocab names: non-empty, four distinct columns, no clash with the data
 * columns of the current schema, fixed once there is a schema. A schema's
 * field names are unique (ASCII case ignored). */
static void test_vocab_rules(void **state)
{
    tctx *c = *state;
    seed(c, ODF_DatasetKind_Root);
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_SetVocab, ev_vocab(c, "")),
                "block 1 (SetVocab): offsetColumn is empty (omit it to use the default 'offset')");
    odf_SetVocab *v = ev_vocab(c, "off");
    v->event_time_column = sdup(c, "");
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_SetVocab, v),
                "block 1 (SetVocab): eventTimeColumn is empty (omit it to use the default 'event_time')");
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_SetVocab, ev_vocab(c, "event_time")),
                "block 1 (SetVocab): eventTimeColumn 'event_time' names the same column as offsetColumn "
                "'event_time' (system columns need distinct names)");
    v = ev_vocab(c, "off");
    v->system_time_column = sdup(c, "OP");
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_SetVocab, v),
                "block 1 (SetVocab): systemTimeColumn 'OP' names the same column as operationTypeColumn 'op' "
                "(system columns need distinct names)");
    /* before any schema, names may change freely */
    append(c, blk(c, ODF_MetadataEvent_SetVocab, ev_vocab(c, "o1")));
    append(c, blk(c, ODF_MetadataEvent_SetVocab, ev_vocab(c, "off")));
    /* a schema's names are unique, case ignored */
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_SetDataSchema,
                       ev_schema(c, "off:UInt64,op:UInt8,system_time:Timestamp,event_time:Timestamp,city:String,"
                                    "City:?String")),
                "block 3 (SetDataSchema): schema.fields[5]: name 'City' duplicates the field 'city' at position 4");
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_SetDataSchema,
                       ev_schema(c, "off:UInt64,op:UInt8,system_time:Timestamp,event_time:Timestamp,off:?String")),
                "block 3 (SetDataSchema): schema.fields[4]: name 'off' duplicates the field 'off' at position 0");
    append(c, blk(c, ODF_MetadataEvent_SetDataSchema,
                  ev_schema(c, "off:UInt64,op:UInt8,system_time:Timestamp,event_time:Timestamp,city:String,"
                               "offset:?Int64")));
    /* a data column cannot become a system column */
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_SetVocab, ev_vocab(c, "City")),
                "block 4 (SetVocab): offsetColumn 'City' clashes with the data column 'city' of the current schema");
    v = ev_vocab(c, "off");
    v->event_time_column = sdup(c, "offset");
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_SetVocab, v),
                "block 4 (SetVocab): eventTimeColumn 'offset' clashes with the data column 'offset' of the current "
                "schema");
    /* and system columns cannot be renamed under the existing schema */
    v = ev_vocab(c, "off");
    v->event_time_column = sdup(c, "ts");
    EXPECT_FAIL(c, blk(c, ODF_MetadataEvent_SetVocab, v),
                "block 4 (SetVocab): eventTimeColumn cannot change from 'event_time' to 'ts' once the dataset has a "
                "schema (its schema and data name the column 'event_time')");
    /* the same names, spelled out, are fine */
    v = ev_vocab(c, "off");
    v->operation_type_column = sdup(c, "op");
    v->system_time_column = sdup(c, "system_time");
    v->event_time_column = sdup(c, "event_time");
    append(c, blk(c, ODF_MetadataEvent_SetVocab, v));
    /* state-only checking (no env) still catches empty and clashing names */
    assert_int_equal(odf_chain_check(&c->st, blk(c, ODF_MetadataEvent_SetVocab, ev_vocab(c, "op")), c->last_hash,
                                     NULL),
                     SILT_EVALIDATION);
    assert_string_equal(silt_error_last(), "block 5 (SetVocab): operationTypeColumn 'op' names the same column as "
                                           "offsetColumn 'op' (system columns need distinct names)");
}

/* ================================================================== */
/* a state read back from a cache, checked against its blocks          */

/* root_with_data, a watermark-only AddData (last data event != last data
 * block), a SetInfo: blocks 0..5 */
static void validate_chain(tctx *c)
{
    root_with_data(c);
    odf_AddData *e = next_add(c);
    e->new_watermark = (odf_time){c->t0 + 200, 0};
    append(c, blk(c, ODF_MetadataEvent_AddData, e));
    append(c, blk(c, ODF_MetadataEvent_SetInfo, ev_info(c, "described")));
}

/* A copy of the state, changed by the caller, must fail validation with
 * `code` and message `msg` (NULL: any message). */
static void expect_invalid(tctx *c, const odf_chain_state *st, int code, const char *msg)
{
    silt_err_clear();
    assert_int_equal(odf_chain_state_validate(st, &c->env), code);
    if (msg)
        assert_string_equal(silt_error_last(), msg);
    (void)c;
}

static void test_state_validate(void **state)
{
    tctx *c = *state;
    validate_chain(c);
    assert_int_equal(odf_chain_state_validate(&c->st, &c->env), 0);
    odf_chain_state t;
    char msg[400];

#define TAMPER(stmt, code, text)                                                                   \
    do {                                                                                           \
        assert_int_equal(odf_chain_state_copy(&t, &c->st), 0);                                     \
        stmt;                                                                                      \
        expect_invalid(c, &t, (code), (text));                                                     \
        odf_chain_state_free(&t);                                                                  \
    } while (0)

    TAMPER(t.seq = 6, SILT_ECORRUPT, "chain state: sequenceNumber is 6 but the head block has 5");
    TAMPER(t.last_system_time.sec += 1, SILT_ECORRUPT,
           "chain state: lastSystemTime is 2020-01-01T00:00:06Z but the head block's is "
           "2020-01-01T00:00:05Z");
    TAMPER(t.last_offset = 1000, SILT_ECORRUPT,
           "chain state: lastOffset is 1000 but the last data event says 9");
    TAMPER(t.has_last_offset = false, SILT_ECORRUPT,
           "chain state: lastOffset is none but the last data event says 9");
    TAMPER(t.checkpoint_size = 51, SILT_ECORRUPT, NULL);
    snprintf(msg, sizeof msg, "chain state: checkpoint %s (50 bytes) differs from the last data "
             "event's %s", mhtext(c->blocks[0].h), mhtext(c->st.checkpoint));
    TAMPER(memcpy(t.checkpoint, c->blocks[0].h, SILT_MH_LEN), SILT_ECORRUPT, msg);
    TAMPER(t.has_checkpoint = false, SILT_ECORRUPT, NULL);
    TAMPER(t.watermark.sec += 1, SILT_ECORRUPT,
           "chain state: watermark 2020-01-01T00:03:21Z differs from the last data event's "
           "2020-01-01T00:03:20Z");
    TAMPER(t.has_watermark = false, SILT_ECORRUPT, NULL);
    snprintf(msg, sizeof msg, "chain state: schema block %s holds Seed, not SetDataSchema",
             mhtext(c->blocks[0].h));
    TAMPER(memcpy(t.schema.hash, c->blocks[0].h, SILT_MH_LEN), SILT_ECORRUPT, msg);
    TAMPER(t.schema.present = false, SILT_ECORRUPT, "chain state: data without a schema block");
    TAMPER(fake_mh("nowhere", t.vocab.hash); t.vocab.present = true, SILT_ENOTFOUND, NULL);
    TAMPER(t.dataset_kind = ODF_DatasetKind_Derivative, SILT_ECORRUPT,
           "chain state: datasetKind differs from the Seed's");
    TAMPER(t.dataset_id[5] ^= 1, SILT_ECORRUPT, "chain state: datasetId differs from the Seed's");
    TAMPER(t.seed.present = false, SILT_ECORRUPT, "chain state: the Seed block is not named");
    TAMPER(t.source_states[0].value = "e2", SILT_ECORRUPT,
           "chain state: source state of 'src' differs from its block's");
    TAMPER(t.last_data_event.present = false, SILT_ECORRUPT,
           "chain state: offsets, checkpoint, watermark or source states without an "
           "AddData/ExecuteTransform block");
    /* the last data event named as an older AddData: offsets still agree,
     * but the watermark does not */
    TAMPER(memcpy(t.last_data_event.hash, c->blocks[3].h, SILT_MH_LEN), SILT_ECORRUPT,
           "chain state: watermark 2020-01-01T00:03:20Z differs from the last data event's "
           "2020-01-01T00:01:40Z");
    TAMPER(t.last_data_block.present = false, SILT_ECORRUPT,
           "chain state: lastDataBlock is missing but lastOffset is 9");
    snprintf(msg, sizeof msg, "chain state: the last data block does not end at offset 9");
    TAMPER(memcpy(t.last_data_block.hash, c->blocks[4].h, SILT_MH_LEN), SILT_ECORRUPT, msg);
    /* a block after the head */
    TAMPER(t.seq = 4; t.last_system_time.sec -= 1; memcpy(t.head, c->blocks[4].h, SILT_MH_LEN);
           memcpy(t.info.hash, c->blocks[5].h, SILT_MH_LEN); t.info.present = true, SILT_ECORRUPT, NULL);
    snprintf(msg, sizeof msg, "chain state: info block %s has sequence number 5, after the head's 4",
             mhtext(c->blocks[5].h));
    assert_string_equal(silt_error_last(), msg);
    TAMPER(memcpy(t.head, c->blocks[4].h, SILT_MH_LEN), SILT_ECORRUPT,
           "chain state: sequenceNumber is 5 but the head block has 4");
#undef TAMPER

    /* push sources: the block must be the source's */
    odf_chain_state_free(&c->st);
    assert_int_equal(odf_chain_state_init(&c->st), 0);
    seed(c, ODF_DatasetKind_Root);
    append(c, blk(c, ODF_MetadataEvent_AddPushSource, ev_push(c, "a", ODF_ReadStep_Csv)));
    assert_int_equal(odf_chain_state_validate(&c->st, &c->env), 0);
    assert_int_equal(odf_chain_state_copy(&t, &c->st), 0);
    t.push_sources[0].name = "b";
    expect_invalid(c, &t, SILT_ECORRUPT, "chain state: push source 'b' names a block of source 'a'");
    odf_chain_state_free(&t);
    /* an empty state has nothing to check */
    odf_chain_state e;
    assert_int_equal(odf_chain_state_init(&e), 0);
    assert_int_equal(odf_chain_state_validate(&e, &c->env), 0);
    odf_chain_state_free(&e);
}

/* A summary that names an older real data event, consistent in every value
 * it derives from it, is still caught: the newest data event is found by
 * walking back from the head. */
static void test_state_validate_stale_data_event(void **state)
{
    tctx *c = *state;
    root_with_data(c); /* blocks 0..3, block 3 the last AddData */
    odf_chain_state old;
    assert_int_equal(odf_chain_state_copy(&old, &c->st), 0);
    odf_AddData *e = next_add(c);
    e->new_watermark = (odf_time){c->t0 + 200, 0};
    append(c, blk(c, ODF_MetadataEvent_AddData, e));
    append(c, blk(c, ODF_MetadataEvent_SetInfo, ev_info(c, "described")));
    /* the state of block 3, moved to the real head */
    old.seq = c->st.seq;
    old.last_system_time = c->st.last_system_time;
    memcpy(old.head, c->st.head, SILT_MH_LEN);
    old.info = c->st.info;
    char msg[400];
    snprintf(msg, sizeof msg, "chain state: the last data event is block %s, not %s", mhtext(c->blocks[4].h),
             mhtext(c->blocks[3].h));
    expect_invalid(c, &old, SILT_ECORRUPT, msg);
    odf_chain_state_free(&old);
}

static void test_state_copy(void **state)
{
    tctx *c = *state;
    validate_chain(c);
    odf_chain_state t;
    assert_int_equal(odf_chain_state_copy(&t, &c->st), 0);
    assert_true(t.arena != c->st.arena);
    assert_true(t.source_states != c->st.source_states);
    char *a = NULL, *b = NULL;
    assert_int_equal(odf_chain_state_to_json(&c->st, &a), 0);
    assert_int_equal(odf_chain_state_to_json(&t, &b), 0);
    assert_string_equal(a, b);
    free(b);
    /* the copy lives on its own: advancing it leaves the original alone */
    odf_chain_state_free(&c->st);
    c->st = t;
    append(c, blk(c, ODF_MetadataEvent_SetInfo, ev_info(c, "on the copy")));
    assert_int_equal(c->st.seq, 6);
    free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_realistic_root_chain, setup, teardown),
        cmocka_unit_test_setup_teardown(test_derivative_chain, setup, teardown),
        cmocka_unit_test_setup_teardown(test_push_sources_and_source_states, setup, teardown),
        cmocka_unit_test_setup_teardown(test_json_roundtrip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_first_block_must_be_seed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_second_seed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sequence_and_prev_hash, setup, teardown),
        cmocka_unit_test_setup_teardown(test_system_time_monotonic, setup, teardown),
        cmocka_unit_test_setup_teardown(test_root_only_events_in_derivative, setup, teardown),
        cmocka_unit_test_setup_teardown(test_derivative_only_events_in_root, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prev_offset, setup, teardown),
        cmocka_unit_test_setup_teardown(test_offset_interval, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prev_checkpoint, setup, teardown),
        cmocka_unit_test_setup_teardown(test_watermark, setup, teardown),
        cmocka_unit_test_setup_teardown(test_data_needs_schema, setup, teardown),
        cmocka_unit_test_setup_teardown(test_noop_data_events, setup, teardown),
        cmocka_unit_test_setup_teardown(test_objects_must_exist, setup, teardown),
        cmocka_unit_test_setup_teardown(test_schema_evolution, setup, teardown),
        cmocka_unit_test_setup_teardown(test_noop_metadata_events, setup, teardown),
        cmocka_unit_test_setup_teardown(test_push_polling_exclusive, setup, teardown),
        cmocka_unit_test_setup_teardown(test_disable_sources, setup, teardown),
        cmocka_unit_test_setup_teardown(test_check_without_env, setup, teardown),
        cmocka_unit_test_setup_teardown(test_value_equal_helpers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_execute_transform_offsets, setup, teardown),
        cmocka_unit_test_setup_teardown(test_inconsistent_state_and_load_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_vocab_rules, setup, teardown),
        cmocka_unit_test_setup_teardown(test_state_validate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_state_copy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_state_validate_stale_data_event, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
