/* test_verify_data.c — silt_dataset_verify on data slices: size, physical
 * and logical hashes, missing/truncated/rewritten files, checkpoints, row
 * counts, offsets, op values, correction pairs and retractions of records
 * that are not present (multiset semantics over the whole history), with the
 * vocabulary's column names. Datasets come from push ingest (CSV, Snapshot
 * merge) or from slices written here with COPY and committed with
 * silt_ds_append_events_n. Every reported line is checked exactly. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dataset/dataset_internal.h"
#include "engine/engine.h"
#include "engine/parquet_meta.h"
#include "engine/schema.h"
#include "engine/writer.h"
#include "silt.h"
#include "util/error.h"

static char *g_dir;
static silt_workspace *g_ws;
static silt_engine *g_e;

/* ---- collected report lines -------------------------------------------------- */

#define MAXL 32
typedef struct lines {
    char *v[MAXL];
    size_t n;
} lines;

static void collect(void *ctx, const char *line)
{
    lines *l = ctx;
    if (l->n < MAXL)
        l->v[l->n] = strdup(line);
    l->n++;
}

static void lines_free(lines *l)
{
    for (size_t i = 0; i < l->n && i < MAXL; i++)
        free(l->v[i]);
    memset(l, 0, sizeof *l);
}

static int verify(const char *name, lines *l)
{
    memset(l, 0, sizeof *l);
    silt_dataset *ds = NULL;
    int rc = silt_dataset_open(&ds, g_ws, name);
    if (rc < 0)
        return rc;
    rc = silt_dataset_verify(ds, collect, l);
    silt_dataset_free(ds);
    return rc;
}

static void print_lines(const lines *l)
{
    for (size_t i = 0; i < l->n && i < MAXL; i++)
        fprintf(stderr, "  line %zu: %s\n", i, l->v[i]);
}

#define assert_line(l, i, expected)                                                                \
    do {                                                                                           \
        if ((l)->n <= (i) || strcmp((l)->v[i], (expected)) != 0)                                  \
            print_lines(l);                                                                        \
        assert_true((l)->n > (i));                                                                 \
        assert_string_equal((l)->v[i], (expected));                                                \
    } while (0)

#define assert_nlines(l, count)                                                                    \
    do {                                                                                           \
        if ((l)->n != (count))                                                                     \
            print_lines(l);                                                                        \
        assert_int_equal((l)->n, (count));                                                         \
    } while (0)

/* ---- datasets from push ingest ------------------------------------------------ */

static const char *MANIFEST = "kind: DatasetSnapshot\n"
                              "version: 1\n"
                              "content:\n"
                              "  name: %s\n"
                              "  kind: Root\n"
                              "  metadata:\n"
                              "    - kind: AddPushSource\n"
                              "      sourceName: default\n"
                              "      read:\n"
                              "        kind: Csv\n"
                              "        header: true\n"
                              "        ddlSchema:\n"
                              "          - \"city STRING\"\n"
                              "          - \"population BIGINT\"\n"
                              "          - \"event_time DATE\"\n"
                              "      merge:\n"
                              "        kind: Snapshot\n"
                              "        primaryKey:\n"
                              "          - city\n";

static void ingest_csv(silt_dataset *ds, const char *csv)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/in.csv", g_dir);
    assert_int_equal(tu_write_file(path, csv, strlen(csv)), 0);
    const char *files[] = {path};
    silt_ingest_opts o = {.files = files, .nfiles = 1, .format = "csv"};
    silt_ingest_result r;
    int rc = silt_dataset_ingest(&r, ds, &o);
    if (rc)
        fprintf(stderr, "ingest: %s\n", silt_error_last());
    assert_int_equal(rc, 0);
}

/* Dataset `name`: blocks 0 Seed, 1 AddPushSource, 2 SetDataSchema,
 * 3 AddData (offsets 0..2, +A ×3), 4 AddData (offsets 3..6: -C/+C, -R, +A). */
static void make_pushed(const char *name)
{
    char text[2048], path[4096];
    snprintf(text, sizeof text, MANIFEST, name);
    snprintf(path, sizeof path, "%s/%s.yaml", g_dir, name);
    assert_int_equal(tu_write_file(path, text, strlen(text)), 0);
    assert_int_equal(silt_dataset_add_manifest(NULL, g_ws, path), 0);
    silt_dataset *ds = NULL;
    assert_int_equal(silt_dataset_open(&ds, g_ws, name), 0);
    ingest_csv(ds, "city,population,event_time\nA,100,2020-01-01\nB,200,2020-01-01\nC,300,2020-01-01\n");
    ingest_csv(ds, "city,population,event_time\nA,110,2020-01-02\nC,300,2020-01-01\nD,400,2020-01-02\n");
    silt_dataset_free(ds);
}

/* The objects referenced by AddData block `seq` of dataset `name`. */
typedef struct objs {
    char data_hash[SILT_MH_TEXT_LEN + 1];
    char data_path[4096];
    uint64_t data_size;
    char logical[SILT_LOGICAL_HASH_LEN * 2 + 2];
    bool has_checkpoint;
    char cp_hash[SILT_MH_TEXT_LEN + 1];
    char cp_path[4096];
} objs;

static void block_objs(const char *name, uint64_t seq, objs *o)
{
    memset(o, 0, sizeof *o);
    silt_dataset *ds = NULL;
    assert_int_equal(silt_dataset_open(&ds, g_ws, name), 0);
    silt_arena *a = silt_arena_new();
    uint8_t h[SILT_MH_LEN];
    memcpy(h, ds->st.head, SILT_MH_LEN);
    odf_MetadataBlock *b = NULL;
    for (;;) {
        assert_int_equal(silt_ds_load_block(ds, h, a, &b), 0);
        if (b->sequence_number == seq)
            break;
        memcpy(h, b->prev_block_hash.data, SILT_MH_LEN);
    }
    assert_int_equal(b->event.type, ODF_MetadataEvent_AddData);
    const odf_AddData *ad = b->event.value;
    silt_multihash_to_text(ad->new_data->physical_hash.data, SILT_MH_LEN, o->data_hash);
    snprintf(o->data_path, sizeof o->data_path, "%s/data/%s", ds->dir, o->data_hash);
    o->data_size = ad->new_data->size;
    silt_multihash_to_text(ad->new_data->logical_hash.data, ad->new_data->logical_hash.len, o->logical);
    if (ad->new_checkpoint) {
        o->has_checkpoint = true;
        silt_multihash_to_text(ad->new_checkpoint->physical_hash.data, SILT_MH_LEN, o->cp_hash);
        snprintf(o->cp_path, sizeof o->cp_path, "%s/checkpoints/%s", ds->dir, o->cp_hash);
    }
    silt_arena_free(a);
    silt_dataset_free(ds);
}

static void file_mh_text(const char *path, char out[SILT_MH_TEXT_LEN + 1])
{
    size_t len = 0;
    char *bytes = tu_read_file(path, &len);
    assert_non_null(bytes);
    uint8_t mh[SILT_MH_LEN];
    assert_int_equal(silt_multihash_sha3(bytes, len, mh), 0);
    silt_multihash_to_text(mh, SILT_MH_LEN, out);
    free(bytes);
}

static const char NOT_CHECKED[] =
    "retractions and corrections were not checked against the history: 1 data file could not be read";

/* ---- tests ------------------------------------------------------------------ */

static void test_valid(void **state)
{
    (void)state;
    make_pushed("ok");
    lines l;
    assert_int_equal(verify("ok", &l), 0);
    assert_nlines(&l, 0);
    lines_free(&l);
}

static void test_flipped_byte(void **state)
{
    (void)state;
    make_pushed("flip");
    objs o;
    block_objs("flip", 3, &o);
    size_t len = 0;
    char *bytes = tu_read_file(o.data_path, &len);
    assert_non_null(bytes);
    assert_int_equal(len, o.data_size);
    /* a byte of the writer's name in the footer: values stay the same */
    char *dk = memmem(bytes, len, "DuckDB", 6);
    assert_non_null(dk);
    dk[1] ^= 0x20;
    assert_int_equal(tu_write_file(o.data_path, bytes, len), 0);
    free(bytes);
    char got[SILT_MH_TEXT_LEN + 1], want[8192];
    file_mh_text(o.data_path, got);
    lines l;
    assert_int_equal(verify("flip", &l), SILT_ECORRUPT);
    snprintf(want, sizeof want, "data file %s (block 3): physical hash mismatch: expected %s, got %s",
             o.data_hash, o.data_hash, got);
    assert_nlines(&l, 1);
    assert_line(&l, 0, want);
    assert_string_equal(silt_error_last(), "dataset 'flip': verification failed (1 problem)");
    lines_free(&l);
}

static void test_relayout(void **state)
{
    (void)state;
    make_pushed("relayout");
    objs o;
    block_objs("relayout", 4, &o);
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s/relayout.parquet", g_dir);
    /* same rows and Arrow types, other layout: uncompressed, Parquet v1,
     * row groups of 2 rows, timestamps MILLIS with the UTC flag patched */
    assert_int_equal(silt_engine_execf(g_e,
                                       "COPY (SELECT * REPLACE (CAST(CAST(system_time AS TIMESTAMP) AS "
                                       "TIMESTAMP_MS) AS system_time) FROM read_parquet('%s')) TO '%s' "
                                       "(FORMAT parquet, compression uncompressed, row_group_size 2)",
                                       o.data_path, tmp),
                     0);
    assert_true(silt_parquet_set_timestamps_utc(tmp, NULL, 0) >= 0);
    size_t len = 0;
    char *bytes = tu_read_file(tmp, &len);
    assert_non_null(bytes);
    assert_true(len != o.data_size);
    assert_int_equal(tu_write_file(o.data_path, bytes, len), 0);
    free(bytes);
    char got[SILT_MH_TEXT_LEN + 1], want[8192];
    file_mh_text(o.data_path, got);
    lines l;
    assert_int_equal(verify("relayout", &l), SILT_ECORRUPT);
    assert_nlines(&l, 2);
    snprintf(want, sizeof want, "data file %s (block 4): size %zu but the block says %llu", o.data_hash, len,
             (unsigned long long)o.data_size);
    assert_line(&l, 0, want);
    snprintf(want, sizeof want, "data file %s (block 4): physical hash mismatch: expected %s, got %s",
             o.data_hash, o.data_hash, got);
    assert_line(&l, 1, want); /* no logical hash mismatch: same records */
    lines_free(&l);
}

static void test_changed_types(void **state)
{
    (void)state;
    make_pushed("retyped");
    objs o;
    block_objs("retyped", 3, &o);
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s/retyped.parquet", g_dir);
    /* a plain COPY writes system_time as TIMESTAMP(MICROS): another record
     * digest */
    assert_int_equal(silt_engine_execf(g_e, "COPY (SELECT * FROM read_parquet('%s')) TO '%s' (FORMAT parquet)",
                                       o.data_path, tmp),
                     0);
    uint8_t phys[SILT_MH_LEN], logical[SILT_LOGICAL_HASH_LEN];
    uint64_t rows = 0, size = 0;
    assert_int_equal(silt_slice_hashes(g_e, tmp, phys, logical, &rows, &size), 0);
    assert_int_equal(rows, 3);
    char got_p[SILT_MH_TEXT_LEN + 1], got_l[SILT_LOGICAL_HASH_LEN * 2 + 2], want[8192];
    silt_multihash_to_text(phys, SILT_MH_LEN, got_p);
    silt_multihash_to_text(logical, SILT_LOGICAL_HASH_LEN, got_l);
    assert_string_not_equal(got_l, o.logical);
    assert_int_equal(rename(tmp, o.data_path), 0);
    lines l;
    assert_int_equal(verify("retyped", &l), SILT_ECORRUPT);
    size_t i = 0;
    if (size != o.data_size) {
        snprintf(want, sizeof want, "data file %s (block 3): size %llu but the block says %llu", o.data_hash,
                 (unsigned long long)size, (unsigned long long)o.data_size);
        assert_line(&l, i, want);
        i++;
    }
    snprintf(want, sizeof want, "data file %s (block 3): physical hash mismatch: expected %s, got %s",
             o.data_hash, o.data_hash, got_p);
    assert_line(&l, i, want);
    snprintf(want, sizeof want, "data file %s (block 3): logical hash mismatch: expected %s, got %s",
             o.data_hash, o.logical, got_l);
    assert_line(&l, i + 1, want);
    assert_nlines(&l, i + 2);
    lines_free(&l);
}

static void test_truncated(void **state)
{
    (void)state;
    make_pushed("trunc");
    objs o;
    block_objs("trunc", 3, &o);
    assert_int_equal(truncate(o.data_path, 500), 0);
    char got[SILT_MH_TEXT_LEN + 1], want[8192];
    file_mh_text(o.data_path, got);
    lines l;
    assert_int_equal(verify("trunc", &l), SILT_ECORRUPT);
    assert_nlines(&l, 4);
    snprintf(want, sizeof want, "data file %s (block 3): size 500 but the block says %llu", o.data_hash,
             (unsigned long long)o.data_size);
    assert_line(&l, 0, want);
    snprintf(want, sizeof want, "data file %s (block 3): physical hash mismatch: expected %s, got %s",
             o.data_hash, o.data_hash, got);
    assert_line(&l, 1, want);
    snprintf(want, sizeof want,
             "data file %s (block 3): cannot read as Parquet: Invalid Input Error: No magic bytes found "
             "at end of file '%s'",
             o.data_hash, o.data_path);
    assert_line(&l, 2, want);
    assert_line(&l, 3, NOT_CHECKED);
    assert_string_equal(silt_error_last(), "dataset 'trunc': verification failed (4 problems)");
    lines_free(&l);
}

static void test_missing(void **state)
{
    (void)state;
    make_pushed("gone");
    objs o3, o4;
    block_objs("gone", 3, &o3);
    block_objs("gone", 4, &o4);
    assert_true(o4.has_checkpoint);
    assert_int_equal(unlink(o3.data_path), 0);
    assert_int_equal(unlink(o4.cp_path), 0);
    lines l;
    assert_int_equal(verify("gone", &l), SILT_ECORRUPT);
    char want[8192];
    assert_nlines(&l, 3);
    /* the checkpoint is checked during the chain walk, slices after it */
    snprintf(want, sizeof want, "checkpoint file %s (block 4): missing", o4.cp_hash);
    assert_line(&l, 0, want);
    snprintf(want, sizeof want, "data file %s (block 3): missing", o3.data_hash);
    assert_line(&l, 1, want);
    assert_line(&l, 2, NOT_CHECKED);
    lines_free(&l);
}

/* ---- hand-made slices ---------------------------------------------------------- */

#define ST "TIMESTAMPTZ '2024-01-01 00:00:00+00'"

/* Commits the rows of `select` as the next slice of ds (offsets first..last
 * in the block), with a SetDataSchema first when `new_schema`, and the
 * correct hashes unless `logical_override` (37 bytes) is given. */
static void add_slice(silt_dataset *ds, const char *select, uint64_t first, uint64_t last, bool new_schema,
                      const uint8_t *logical_override)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/slice.parquet", g_dir);
    assert_int_equal(silt_engine_execf(g_e, "COPY (%s) TO '%s' (FORMAT parquet)", select, path), 0);
    uint8_t phys[SILT_MH_LEN], logical[SILT_LOGICAL_HASH_LEN];
    uint64_t rows = 0, size = 0;
    assert_int_equal(silt_slice_hashes(g_e, path, phys, logical, &rows, &size), 0);
    if (logical_override)
        memcpy(logical, logical_override, SILT_LOGICAL_HASH_LEN);
    silt_arena *a = silt_arena_new();
    odf_union ev[2];
    size_t n = 0;
    if (new_schema) {
        odf_DataSchema *schema = NULL;
        assert_int_equal(
            silt_engine_execf(g_e, "CREATE OR REPLACE TABLE __t AS SELECT * FROM read_parquet('%s')", path), 0);
        assert_int_equal(silt_schema_from_table(g_e, a, "__t", NULL, &schema), 0);
        odf_SetDataSchema *sds = silt_arena_alloc(a, sizeof *sds);
        memset(sds, 0, sizeof *sds);
        sds->schema = schema;
        ev[n++] = (odf_union){ODF_MetadataEvent_SetDataSchema, sds};
    }
    assert_int_equal(silt_store_adopt_file(ds->store, "data", phys, path), 0);
    odf_OffsetInterval *iv = silt_arena_alloc(a, sizeof *iv);
    odf_DataSlice *sl = silt_arena_alloc(a, sizeof *sl);
    odf_AddData *ad = silt_arena_alloc(a, sizeof *ad);
    memset(sl, 0, sizeof *sl);
    memset(ad, 0, sizeof *ad);
    iv->start = first;
    iv->end = last;
    sl->logical_hash = (odf_bytes){logical, SILT_LOGICAL_HASH_LEN};
    sl->physical_hash = (odf_bytes){phys, SILT_MH_LEN};
    sl->offset_interval = iv;
    sl->size = size;
    ad->new_data = sl;
    if (first > 0) {
        ad->has_prev_offset = true;
        ad->prev_offset = first - 1;
    }
    ev[n++] = (odf_union){ODF_MetadataEvent_AddData, ad};
    int rc = silt_ds_append_events_n(ds, ev, n, NULL);
    if (rc)
        fprintf(stderr, "append: %s\n", silt_error_last());
    assert_int_equal(rc, 0);
    silt_arena_free(a);
}

static silt_dataset *new_ds(const char *name)
{
    silt_dataset *ds = NULL;
    assert_int_equal(silt_dataset_create(&ds, g_ws, name, SILT_ROOT), 0);
    return ds;
}

/* rows (offset, op, event day, city, population) */
#define ROWS(values)                                                                               \
    "SELECT CAST(o AS UBIGINT) AS \"offset\", CAST(p AS UTINYINT) AS op, " ST " AS system_time, "  \
    "CAST(et AS DATE) AS event_time, city, CAST(pop AS BIGINT) AS population FROM (VALUES " values \
    ") v(o, p, et, city, pop)"

static void test_wrong_logical_hash(void **state)
{
    (void)state;
    silt_dataset *ds = new_ds("wronglh");
    uint8_t fake[SILT_LOGICAL_HASH_LEN] = {0x96, 0x80, 0xc0, 0x01, 0x20};
    memset(fake + 5, 0xab, 32);
    const char *sel = ROWS("(0, 0, '2020-01-01', 'A', 1), (1, 0, '2020-01-01', 'B', 2)");
    add_slice(ds, sel, 0, 1, true, fake);
    silt_dataset_free(ds);
    objs o;
    block_objs("wronglh", 2, &o);
    uint8_t phys[SILT_MH_LEN], logical[SILT_LOGICAL_HASH_LEN];
    assert_int_equal(silt_slice_hashes(g_e, o.data_path, phys, logical, NULL, NULL), 0);
    char got[SILT_LOGICAL_HASH_LEN * 2 + 2], want[8192];
    silt_multihash_to_text(logical, SILT_LOGICAL_HASH_LEN, got);
    lines l;
    assert_int_equal(verify("wronglh", &l), SILT_ECORRUPT);
    assert_nlines(&l, 1);
    snprintf(want, sizeof want,
             "data file %s (block 2): logical hash mismatch: expected "
             "f9680c00120abababababababababababababababababababababababababababababababab, got %s",
             o.data_hash, got);
    assert_line(&l, 0, want);
    assert_string_equal(o.logical, "f9680c00120abababababababababababababababababababababababababababababababab");
    lines_free(&l);
}

static void test_changelog_valid(void **state)
{
    (void)state;
    silt_dataset *ds = new_ds("clok");
    /* duplicates retracted as often as they were added; NULLs compare
     * equal; system_time does not matter; a -C/+C pair */
    add_slice(ds,
              ROWS("(0, 0, '2020-01-01', 'A', 1), (1, 0, '2020-01-01', 'A', 1), "
                   "(2, 0, '2020-01-01', NULL, 4), (3, 0, '2020-01-01', 'B', 2)"),
              0, 3, true, NULL);
    add_slice(ds,
              "SELECT * REPLACE (TIMESTAMPTZ '2024-03-01 00:00:00+00' AS system_time) FROM (" ROWS(
                  "(4, 1, '2020-01-01', 'A', 1), (5, 1, '2020-01-01', NULL, 4), "
                  "(6, 2, '2020-01-01', 'B', 2), (7, 3, '2020-01-02', 'B', 3), "
                  "(8, 1, '2020-01-01', 'A', 1), (9, 0, '2020-01-01', 'A', 1), "
                  "(10, 2, '2020-01-02', 'B', 3), (11, 3, '2020-01-02', 'B', 3)") ")",
              4, 11, false, NULL);
    silt_dataset_free(ds);
    lines l;
    assert_int_equal(verify("clok", &l), 0);
    assert_nlines(&l, 0);
    lines_free(&l);
}

static void test_changelog_invalid(void **state)
{
    (void)state;
    silt_dataset *ds = new_ds("clbad");
    /* block 2: offsets 0..3 */
    add_slice(ds,
              ROWS("(0, 0, '2020-01-01', 'A', 1), (1, 0, '2020-01-01', 'A', 1), "
                   "(2, 0, '2020-01-01', 'B', 2), (3, 0, '2020-01-01', 'C', 3)"),
              0, 3, true, NULL);
    /* block 3: offsets 4..9: A retracted 3 times (added twice), a +C
     * without its -C, an invalid op, a retraction of C with another event
     * time, a -C at the end of the slice */
    add_slice(ds,
              ROWS("(4, 1, '2020-01-01', 'A', 1), (5, 1, '2020-01-01', 'A', 1), "
                   "(6, 1, '2020-01-01', 'A', 1), (7, 3, '2020-01-01', 'B', 5), "
                   "(8, 7, '2020-01-01', 'X', 0), (9, 1, '2020-01-05', 'C', 3), "
                   "(10, 2, '2020-01-01', 'B', 2)"),
              4, 10, false, NULL);
    /* block 4: offsets 11..15 but written 11, 12, 20, 21 (one row short),
     * a +C whose -C is in the previous slice, another invalid op */
    add_slice(ds,
              ROWS("(11, 3, '2020-01-01', 'B', 9), (12, 0, '2020-01-01', 'D', 4), "
                   "(20, 0, '2020-01-01', 'E', 5), (21, 5, '2020-01-01', 'F', 6)"),
              11, 15, false, NULL);
    silt_dataset_free(ds);
    objs o3, o4;
    block_objs("clbad", 3, &o3);
    block_objs("clbad", 4, &o4);
    lines l;
    assert_int_equal(verify("clbad", &l), SILT_EVALIDATION);
    char want[8192];
    size_t i = 0;
#define EXPECT(...)                                                                                \
    do {                                                                                           \
        snprintf(want, sizeof want, __VA_ARGS__);                                                  \
        assert_line(&l, i, want);                                                                  \
        i++;                                                                                       \
    } while (0)
    EXPECT("data file %s (block 3): row 5 (offset 8): invalid op 7 (must be 0 +A, 1 -R, 2 -C or 3 +C)",
           o3.data_hash);
    EXPECT("data file %s (block 3): row 4 (offset 7): +C does not directly follow a -C", o3.data_hash);
    EXPECT("data file %s (block 3): row 7 (offset 10): -C is not directly followed by a +C", o3.data_hash);
    EXPECT("data file %s (block 4): 4 rows but offsetInterval 11..15 has 5", o4.data_hash);
    EXPECT("data file %s (block 4): row 3 has offset 20, expected 13 (offsets must be 11..15, dense and "
           "in order) (and 1 more row)",
           o4.data_hash);
    EXPECT("data file %s (block 4): row 4 (offset 21): invalid op 5 (must be 0 +A, 1 -R, 2 -C or 3 +C)",
           o4.data_hash);
    EXPECT("data file %s (block 4): row 1 (offset 11): +C does not directly follow a -C", o4.data_hash);
    /* A was added twice: the third -R fails; C was added with another
     * event time */
    EXPECT("data file %s (block 3): row 3 (offset 6): -R of a record that is not present", o3.data_hash);
    EXPECT("data file %s (block 3): row 6 (offset 9): -R of a record that is not present", o3.data_hash);
    assert_nlines(&l, i);
    assert_string_equal(silt_error_last(), "dataset 'clbad': verification failed (9 problems)");
#undef EXPECT
    lines_free(&l);
}

static void test_many_bad_retractions(void **state)
{
    (void)state;
    silt_dataset *ds = new_ds("many");
    add_slice(ds, ROWS("(0, 0, '2020-01-01', 'A', 1)"), 0, 0, true, NULL);
    /* 12 retractions of records never added, then a -C of one: 13 rows */
    add_slice(ds,
              "SELECT CAST(i AS UBIGINT) AS \"offset\", CAST(CASE WHEN i = 13 THEN 2 ELSE 1 END AS UTINYINT) "
              "AS op, " ST " AS system_time, DATE '2020-01-01' AS event_time, 'Z' || i AS city, "
              "CAST(i AS BIGINT) AS population FROM range(1, 14) r(i)",
              1, 13, false, NULL);
    /* the -C at the end is unpaired too */
    silt_dataset_free(ds);
    objs o;
    block_objs("many", 3, &o);
    lines l;
    assert_int_equal(verify("many", &l), SILT_EVALIDATION);
    char want[8192];
    snprintf(want, sizeof want, "data file %s (block 3): row 13 (offset 13): -C is not directly followed by a +C",
             o.data_hash);
    assert_line(&l, 0, want);
    for (int k = 1; k <= 10; k++) {
        snprintf(want, sizeof want, "data file %s (block 3): row %d (offset %d): -R of a record that is not present",
                 o.data_hash, k, k);
        assert_line(&l, (size_t)k, want);
    }
    assert_line(&l, 11, "3 more -R/-C rows of records that are not present");
    assert_nlines(&l, 12);
    lines_free(&l);
}

/* System columns named by SetVocab: checks use those names. */
static void test_vocab(void **state)
{
    (void)state;
    silt_dataset *ds = new_ds("vocab");
    silt_arena *a = silt_arena_new();
    odf_SetVocab *sv = silt_arena_alloc(a, sizeof *sv);
    memset(sv, 0, sizeof *sv);
    sv->offset_column = "o";
    sv->operation_type_column = "kind";
    sv->system_time_column = "st";
    sv->event_time_column = "et";
    odf_union ev = {ODF_MetadataEvent_SetVocab, sv};
    assert_int_equal(silt_ds_append_event(ds, &ev, NULL), 0);
    silt_arena_free(a);
#define VROWS(values)                                                                              \
    "SELECT CAST(o AS UBIGINT) AS o, CAST(p AS UTINYINT) AS kind, " ST " AS st, "                   \
    "CAST(e AS DATE) AS et, city FROM (VALUES " values ") v(o, p, e, city)"
    add_slice(ds, VROWS("(0, 0, '2020-01-01', 'A'), (1, 0, '2020-01-01', 'B')"), 0, 1, true, NULL);
    add_slice(ds, VROWS("(2, 1, '2020-01-01', 'A'), (3, 1, '2020-01-01', 'A'), (4, 2, '2020-01-01', 'B'), "
                        "(5, 3, '2020-01-02', 'B')"),
              2, 5, false, NULL);
#undef VROWS
    /* a slice with the default names: the vocabulary's columns are missing */
    add_slice(ds, ROWS("(6, 0, '2020-01-01', 'C', 1)"), 6, 6, false, NULL);
    silt_dataset_free(ds);
    objs o3, o4;
    block_objs("vocab", 4, &o3);
    block_objs("vocab", 5, &o4);
    lines l;
    assert_int_equal(verify("vocab", &l), SILT_EVALIDATION);
    char want[8192];
    snprintf(want, sizeof want, "data file %s (block 5): no column 'o' (vocab offsetColumn)", o4.data_hash);
    assert_line(&l, 0, want);
    snprintf(want, sizeof want, "data file %s (block 5): no column 'kind' (vocab operationTypeColumn)",
             o4.data_hash);
    assert_line(&l, 1, want);
    snprintf(want, sizeof want, "data file %s (block 5): no column 'st' (vocab systemTimeColumn)", o4.data_hash);
    assert_line(&l, 2, want);
    snprintf(want, sizeof want, "data file %s (block 5): no column 'et' (vocab eventTimeColumn)", o4.data_hash);
    assert_line(&l, 3, want);
    assert_line(&l, 4, NOT_CHECKED);
    assert_nlines(&l, 5);
    lines_free(&l);

    /* without the last slice (as of block 4): the second -R of A fails */
    assert_int_equal(silt_dataset_open(&ds, g_ws, "vocab"), 0);
    uint8_t head4[SILT_MH_LEN];
    silt_arena *b = silt_arena_new();
    odf_MetadataBlock *blk = NULL;
    assert_int_equal(silt_ds_load_block(ds, ds->st.head, b, &blk), 0);
    memcpy(head4, blk->prev_block_hash.data, SILT_MH_LEN);
    silt_arena_free(b);
    char text[SILT_MH_TEXT_LEN + 1];
    silt_multihash_to_text(head4, SILT_MH_LEN, text);
    char rp[4096];
    snprintf(rp, sizeof rp, "%s/refs/head", ds->dir);
    assert_int_equal(tu_write_file(rp, text, strlen(text)), 0);
    memset(&l, 0, sizeof l);
    assert_int_equal(silt_dataset_verify(ds, collect, &l), SILT_EVALIDATION);
    snprintf(want, sizeof want, "data file %s (block 4): row 2 (offset 3): -R of a record that is not present",
             o3.data_hash);
    assert_line(&l, 0, want);
    assert_nlines(&l, 1);
    lines_free(&l);
    silt_dataset_free(ds);
}

static int setup(void **state)
{
    (void)state;
    unsetenv("SILT_WORKSPACE");
    g_dir = tu_mkdtemp();
    if (!g_dir || silt_workspace_init(g_dir) != 0 || silt_workspace_open(&g_ws, g_dir) != 0)
        return -1;
    if (silt_engine_open(&g_e, NULL) != 0)
        return -1;
    return silt_engine_exec(g_e, "SET TimeZone = 'UTC'; SET enable_external_file_cache = false") == 0 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    silt_engine_free(g_e);
    g_e = NULL;
    silt_workspace_free(g_ws);
    g_ws = NULL;
    tu_rmrf(g_dir);
    free(g_dir);
    g_dir = NULL;
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_valid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_flipped_byte, setup, teardown),
        cmocka_unit_test_setup_teardown(test_relayout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_changed_types, setup, teardown),
        cmocka_unit_test_setup_teardown(test_truncated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wrong_logical_hash, setup, teardown),
        cmocka_unit_test_setup_teardown(test_changelog_valid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_changelog_invalid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_bad_retractions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_vocab, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
