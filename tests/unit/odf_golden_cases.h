/* odf_golden_cases.h — the reference blocks of tests/fixtures/odf-golden,
 * built by hand as C structs (header-only; shared by test_golden.c,
 * test_flatbuf.c and test_flatc.c).
 *
 * Every block: systemTime 2020-01-01T12:00:00Z, prevBlockHash =
 * multihash(sha3("prev")), sequenceNumber 117; events as in caseN.yaml.
 */
#ifndef SILT_TEST_ODF_GOLDEN_CASES_H
#define SILT_TEST_ODF_GOLDEN_CASES_H

#include <stdint.h>
#include <string.h>

#include "odf/odf_types.h"
#include "util/arena.h"
#include "util/multiformats.h"

#define GOLDEN_NCASES 10
#define GOLDEN_TIME 1577880000 /* 2020-01-01T12:00:00Z */

#define GNEW(a, T) ((T *)silt_arena_alloc((a), sizeof(T)))

static inline odf_bytes golden_mh(silt_arena *a, const char *text)
{
    odf_bytes b = {NULL, 0};
    uint8_t *p = silt_arena_alloc(a, SILT_MH_LEN);
    if (p && silt_multihash_sha3(text, strlen(text), p) == 0) {
        b.data = p;
        b.len = SILT_MH_LEN;
    }
    return b;
}

static inline uint64_t golden_rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

/* DatasetID::new_seeded_ed25519(seed) of the reference implementation: the
 * 32 "public key" bytes are drawn from SmallRng (xoshiro256++ on 64-bit)
 * seeded with the seed bytes zero-padded to 32; each next_u64() output is
 * written little-endian. DID bytes = 0xed 0x01 + key. */
static inline void golden_seeded_did(const char *seed, uint8_t did[34])
{
    uint8_t sb[32] = {0};
    size_t n = strlen(seed);
    memcpy(sb, seed, n > 32 ? 32 : n);
    uint64_t s[4];
    for (int i = 0; i < 4; i++) {
        s[i] = 0;
        for (int j = 0; j < 8; j++)
            s[i] |= (uint64_t)sb[8 * i + j] << (8 * j);
    }
    did[0] = 0xed;
    did[1] = 0x01;
    for (int k = 0; k < 4; k++) {
        uint64_t r = golden_rotl(s[0] + s[3], 23) + s[0];
        uint64_t t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = golden_rotl(s[3], 45);
        for (int j = 0; j < 8; j++)
            did[2 + 8 * k + j] = (uint8_t)(r >> (8 * j));
    }
}

static inline odf_bytes golden_did(silt_arena *a, const char *seed)
{
    odf_bytes b = {NULL, 0};
    uint8_t *p = silt_arena_alloc(a, 34);
    if (p) {
        golden_seeded_did(seed, p);
        b.data = p;
        b.len = 34;
    }
    return b;
}

static inline char *golden_did_text(silt_arena *a, const char *seed)
{
    uint8_t did[34];
    golden_seeded_did(seed, did);
    char *out = silt_arena_alloc(a, 9 + 2 * 34 + 2);
    if (!out)
        return NULL;
    memcpy(out, "did:odf:", 8);
    silt_multibase_encode_f(did, 34, out + 8);
    return out;
}

static inline odf_strvec golden_strvec(silt_arena *a, int n, const char *const *items)
{
    odf_strvec v = {NULL, 0, true};
    v.items = silt_arena_alloc(a, sizeof(char *) * (size_t)(n ? n : 1));
    if (!v.items)
        return v;
    for (int i = 0; i < n; i++)
        v.items[i] = silt_arena_strdup(a, items[i]);
    v.n = (size_t)n;
    return v;
}

static inline odf_DataSlice *golden_slice(silt_arena *a, const char *lh, const char *ph,
                                          uint64_t start, uint64_t end, uint64_t size)
{
    odf_DataSlice *s = GNEW(a, odf_DataSlice);
    odf_OffsetInterval *oi = GNEW(a, odf_OffsetInterval);
    if (!s || !oi)
        return NULL;
    s->logical_hash = golden_mh(a, lh);
    s->physical_hash = golden_mh(a, ph);
    oi->start = start;
    oi->end = end;
    s->offset_interval = oi;
    s->size = size;
    return s;
}

static inline odf_SetPollingSource *golden_polling_source(silt_arena *a, bool with_schema)
{
    odf_SetPollingSource *e = GNEW(a, odf_SetPollingSource);
    odf_FetchStepFilesGlob *fg = GNEW(a, odf_FetchStepFilesGlob);
    odf_PrepStepDecompress *dec = GNEW(a, odf_PrepStepDecompress);
    odf_ReadStepGeoJson *rd = GNEW(a, odf_ReadStepGeoJson);
    odf_TransformSql *sql = GNEW(a, odf_TransformSql);
    odf_MergeStrategyLedger *led = GNEW(a, odf_MergeStrategyLedger);
    odf_union *prep = silt_arena_alloc(a, sizeof(odf_union));
    if (!e || !fg || !dec || !rd || !sql || !led || !prep)
        return NULL;
    fg->path = "./*.csv";
    fg->event_time.type = ODF_EventTimeSource_FromMetadata;
    fg->event_time.value = GNEW(a, odf_EventTimeSourceFromMetadata);
    fg->cache.type = ODF_SourceCaching_Forever;
    fg->cache.value = GNEW(a, odf_SourceCachingForever);
    fg->has_order = true;
    fg->order = ODF_SourceOrdering_ByName;
    e->fetch.type = ODF_FetchStep_FilesGlob;
    e->fetch.value = fg;
    dec->format = ODF_CompressionFormat_Gzip;
    prep[0].type = ODF_PrepStep_Decompress;
    prep[0].value = dec;
    e->prepare.items = prep;
    e->prepare.n = 1;
    e->prepare.present = true;
    if (with_schema) {
        odf_DataSchema *sc = GNEW(a, odf_DataSchema);
        void **fields = silt_arena_alloc(a, 2 * sizeof(void *));
        if (!sc || !fields)
            return NULL;
        const char *names[2] = {"a", "b"};
        for (int i = 0; i < 2; i++) {
            odf_DataField *f = GNEW(a, odf_DataField);
            if (!f)
                return NULL;
            f->name = (char *)names[i];
            f->type.type = ODF_DataType_Int32;
            f->type.value = GNEW(a, odf_DataTypeInt32);
            fields[i] = f;
        }
        sc->fields.items = fields;
        sc->fields.n = 2;
        sc->fields.present = true;
        rd->schema = sc;
    } else {
        static const char *const ddl[] = {"a: INT", "b: INT"};
        rd->ddl_schema = golden_strvec(a, 2, ddl);
    }
    e->read.type = ODF_ReadStep_GeoJson;
    e->read.value = rd;
    sql->engine = "spark";
    sql->version = "1.0.0";
    sql->query = "SELECT * FROM input";
    e->preprocess.type = ODF_Transform_Sql;
    e->preprocess.value = sql;
    static const char *const pk[] = {"a"};
    led->primary_key = golden_strvec(a, 1, pk);
    e->merge.type = ODF_MergeStrategy_Ledger;
    e->merge.value = led;
    return e;
}

/* Builds golden case n (0..9) in arena a; NULL on failure. */
static inline odf_MetadataBlock *golden_case_block(silt_arena *a, int n)
{
    odf_MetadataBlock *b = GNEW(a, odf_MetadataBlock);
    if (!b)
        return NULL;
    b->system_time.sec = GOLDEN_TIME;
    b->has_system_time = true;
    b->prev_block_hash = golden_mh(a, "prev");
    b->sequence_number = 117;

    if (n <= 3 || n == 6 || n == 7) {
        odf_AddData *e = GNEW(a, odf_AddData);
        if (!e)
            return NULL;
        if (n >= 1) {
            e->prev_checkpoint = golden_mh(a, n >= 6 ? "checkpoint" : "prev");
            e->has_prev_offset = true;
            e->prev_offset = 9;
        }
        if (n == 2 || n == 3) {
            e->has_new_watermark = true;
            e->new_watermark.sec = GOLDEN_TIME;
        }
        if (n == 3 || n == 6 || n == 7)
            e->new_data = golden_slice(a, "logical", "physical", 10, 99, 100);
        if (n == 6 || n == 7) {
            odf_SourceState *ss = GNEW(a, odf_SourceState);
            if (!ss)
                return NULL;
            ss->source_name = "push-source-1";
            ss->kind = "kamu/kafka-offset";
            ss->value = "SOME_OFFSET";
            e->new_source_state = ss;
        }
        if (n == 7) {
            odf_ExtraAttributes *x = GNEW(a, odf_ExtraAttributes);
            if (!x)
                return NULL;
            x->entries = "{\"opendatafabric.org/linkedObjects\":"
                         "{\"numObjectsNaive\":10,\"sizeNaive\":100}}";
            e->extra = x;
        }
        b->event.type = ODF_MetadataEvent_AddData;
        b->event.value = e;
    } else if (n == 4 || n == 5) {
        b->event.type = ODF_MetadataEvent_SetPollingSource;
        b->event.value = golden_polling_source(a, n == 5);
    } else if (n == 8) {
        odf_SetTransform *e = GNEW(a, odf_SetTransform);
        odf_TransformInput *i1 = GNEW(a, odf_TransformInput);
        odf_TransformInput *i2 = GNEW(a, odf_TransformInput);
        odf_TransformSql *sql = GNEW(a, odf_TransformSql);
        void **items = silt_arena_alloc(a, 2 * sizeof(void *));
        if (!e || !i1 || !i2 || !sql || !items)
            return NULL;
        i1->dataset_ref = golden_did_text(a, "input1");
        i1->alias = "input1";
        i2->dataset_ref = "input2";
        i2->alias = "input2";
        items[0] = i1;
        items[1] = i2;
        e->inputs.items = items;
        e->inputs.n = 2;
        e->inputs.present = true;
        sql->engine = "spark";
        sql->query = "SELECT * FROM input1 UNION ALL SELECT * FROM input2";
        e->transform.type = ODF_Transform_Sql;
        e->transform.value = sql;
        b->event.type = ODF_MetadataEvent_SetTransform;
        b->event.value = e;
    } else if (n == 9) {
        odf_ExecuteTransform *e = GNEW(a, odf_ExecuteTransform);
        odf_ExecuteTransformInput *q1 = GNEW(a, odf_ExecuteTransformInput);
        odf_ExecuteTransformInput *q2 = GNEW(a, odf_ExecuteTransformInput);
        void **items = silt_arena_alloc(a, 2 * sizeof(void *));
        if (!e || !q1 || !q2 || !items)
            return NULL;
        q1->dataset_id = golden_did(a, "input1");
        q1->prev_block_hash = golden_mh(a, "a");
        q1->new_block_hash = golden_mh(a, "b");
        q1->has_prev_offset = true;
        q1->prev_offset = 9;
        q1->has_new_offset = true;
        q1->new_offset = 20;
        q2->dataset_id = golden_did(a, "input2");
        q2->prev_block_hash = golden_mh(a, "a");
        q2->new_block_hash = golden_mh(a, "b");
        items[0] = q1;
        items[1] = q2;
        e->query_inputs.items = items;
        e->query_inputs.n = 2;
        e->query_inputs.present = true;
        e->prev_checkpoint = golden_mh(a, "checkpoint");
        e->has_prev_offset = true;
        e->prev_offset = 9;
        e->new_data = golden_slice(a, "foo", "bar", 10, 19, 10);
        e->has_new_watermark = true;
        e->new_watermark.sec = GOLDEN_TIME;
        b->event.type = ODF_MetadataEvent_ExecuteTransform;
        b->event.value = e;
    } else {
        return NULL;
    }
    if (!b->event.value)
        return NULL;
    return b;
}

#endif
