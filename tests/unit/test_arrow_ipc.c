/* test_arrow_ipc.c — the Arrow IPC stream writer (src/engine/arrow_ipc.c):
 * a tiny fixed batch (Int32, Utf8, Bool, naive Timestamp(ms) written as
 * UTC, List<Int64>, Struct<Decimal128>, Null, NULLs in each) byte for byte
 * against tests/fixtures/arrow/tiny.arrows, a stream this writer produced
 * once and npm apache-arrow decoded (tests/fixtures/arrow/README.md); and
 * the refusals (unsupported types, sliced arrays) that leave the output as
 * it was.
 *
 * SILT_ARROW_WRITE_GOLDEN=1 rewrites the golden file instead of comparing.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "engine/arrow_ipc.h"
#include "util/buf.h"
#include "util/error.h"

/* ---- hand-made C Data Interface structs (static; release is never called) ---- */

#define NROWS 3

static struct ArrowSchema sch(const char *fmt, const char *name, int64_t nchildren, struct ArrowSchema **children)
{
    return (struct ArrowSchema){fmt, name, NULL, ARROW_FLAG_NULLABLE, nchildren, children, NULL, NULL, NULL};
}

static struct ArrowArray arr(int64_t len, int64_t nulls, int64_t nbuf, const void **bufs, int64_t nchildren,
                             struct ArrowArray **children)
{
    return (struct ArrowArray){len, nulls, 0, nbuf, nchildren, bufs, children, NULL, NULL, NULL};
}

/* validity 0b101: rows 0 and 2 valid */
static const uint8_t VALID_02[1] = {0x05};
static const uint8_t VALID_01[1] = {0x03};
static const int32_t I32[NROWS] = {1, 0, -3};
static const int32_t STR_OFFS[NROWS + 1] = {0, 5, 5, 5};
static const char STR_DATA[] = "héll";
static const uint8_t BOOLS[1] = {0x01};
static const int64_t TS[NROWS] = {1704164645678, 0, -1};
static const int32_t LIST_OFFS[NROWS + 1] = {0, 2, 2, 2};
static const int64_t LIST_ITEMS[2] = {7, -9007199254740993};
static const uint8_t DEC[NROWS][16] = {{0x39, 0x30}, {0}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                                         0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}};

typedef struct tiny {
    struct ArrowSchema root, a, s, b, ts, l, item, st, dec, n;
    struct ArrowSchema *cols[7], *litem[1], *sfields[1];
    struct ArrowArray rroot, ra, rs, rb, rts, rl, ritem, rst, rdec, rn;
    struct ArrowArray *rcols[7], *ritems[1], *rsfields[1];
    const void *ba[2], *bs[3], *bb[2], *bts[2], *bl[2], *bitem[2], *bst[1], *bdec[2], *broot[1];
} tiny;

static void tiny_init(tiny *t)
{
    t->a = sch("i", "a", 0, NULL);
    t->s = sch("u", "s", 0, NULL);
    t->b = sch("b", "b", 0, NULL);
    t->ts = sch("tsm:", "ts", 0, NULL);
    t->item = sch("l", "item", 0, NULL);
    t->litem[0] = &t->item;
    t->l = sch("+l", "l", 1, t->litem);
    t->dec = sch("d:5,2", "dec", 0, NULL);
    t->sfields[0] = &t->dec;
    t->st = sch("+s", "st", 1, t->sfields);
    t->n = sch("n", "n", 0, NULL);
    struct ArrowSchema *cols[7] = {&t->a, &t->s, &t->b, &t->ts, &t->l, &t->st, &t->n};
    memcpy(t->cols, cols, sizeof cols);
    t->root = sch("+s", "", 7, t->cols);

    t->ba[0] = VALID_02, t->ba[1] = I32;
    t->ra = arr(NROWS, -1, 2, t->ba, 0, NULL); /* null count left to the writer */
    t->bs[0] = VALID_01, t->bs[1] = STR_OFFS, t->bs[2] = STR_DATA;
    t->rs = arr(NROWS, 1, 3, t->bs, 0, NULL);
    t->bb[0] = NULL, t->bb[1] = BOOLS;
    t->rb = arr(NROWS, 0, 2, t->bb, 0, NULL);
    t->bts[0] = VALID_02, t->bts[1] = TS;
    t->rts = arr(NROWS, 1, 2, t->bts, 0, NULL);
    t->bitem[0] = NULL, t->bitem[1] = LIST_ITEMS;
    t->ritem = arr(2, 0, 2, t->bitem, 0, NULL);
    t->ritems[0] = &t->ritem;
    t->bl[0] = VALID_01, t->bl[1] = LIST_OFFS;
    t->rl = arr(NROWS, 1, 2, t->bl, 1, t->ritems);
    t->bdec[0] = VALID_02, t->bdec[1] = DEC;
    t->rdec = arr(NROWS, 1, 2, t->bdec, 0, NULL);
    t->rsfields[0] = &t->rdec;
    t->bst[0] = NULL;
    t->rst = arr(NROWS, 0, 1, t->bst, 1, t->rsfields);
    t->rn = arr(NROWS, NROWS, 0, NULL, 0, NULL);
    struct ArrowArray *rcols[7] = {&t->ra, &t->rs, &t->rb, &t->rts, &t->rl, &t->rst, &t->rn};
    memcpy(t->rcols, rcols, sizeof rcols);
    t->broot[0] = NULL;
    t->rroot = arr(NROWS, 0, 1, t->broot, 7, t->rcols);
}

static void test_tiny_golden(void **state)
{
    (void)state;
    tiny t;
    tiny_init(&t);
    silt_buf out = SILT_BUF_INIT;
    const char *kv[2] = {"metadata", "{\"columns\":[\"a\"]}"};
    assert_int_equal(silt_arrow_ipc_schema(&out, &t.root, SILT_ARROW_NAIVE_UTC, kv, 1), 0);
    assert_int_equal(out.len % 8, 0);
    assert_int_equal(silt_arrow_ipc_batch(&out, &t.root, &t.rroot), 0);
    assert_int_equal(out.len % 8, 0);
    assert_int_equal(silt_arrow_ipc_eos(&out), 0);
    const char *golden = tu_fixture("arrow/tiny.arrows");
    if (getenv("SILT_ARROW_WRITE_GOLDEN")) {
        assert_int_equal(tu_write_file(golden, out.data, out.len), 0);
    } else {
        size_t len = 0;
        char *want = tu_read_file(golden, &len);
        assert_non_null(want);
        assert_int_equal(out.len, len);
        assert_memory_equal(out.data, want, len);
        free(want);
    }
    silt_buf_free(&out);
}

static void test_refusals(void **state)
{
    (void)state;
    tiny t;
    tiny_init(&t);
    silt_buf out = SILT_BUF_INIT;
    assert_int_equal(silt_buf_puts(&out, "keep"), 0);
    t.s.format = "vu"; /* string view */
    assert_int_equal(silt_arrow_ipc_schema(&out, &t.root, 0, NULL, 0), SILT_EUNSUPPORTED);
    assert_string_equal(silt_error_last(), "arrow: column 's': Arrow type 'vu' is not supported");
    assert_int_equal(out.len, 4);
    t.s.format = "U"; /* large string */
    assert_int_equal(silt_arrow_ipc_batch(&out, &t.root, &t.rroot), SILT_EUNSUPPORTED);
    assert_int_equal(out.len, 4);
    t.s.format = "u";
    t.ra.offset = 1;
    assert_int_equal(silt_arrow_ipc_batch(&out, &t.root, &t.rroot), SILT_EUNSUPPORTED);
    assert_string_equal(silt_error_last(), "arrow: column 'a': sliced array of type 'i' is not supported");
    assert_int_equal(out.len, 4);
    t.ra.offset = 0;
    t.item.format = "+ud:0,1";
    assert_int_equal(silt_arrow_ipc_schema(&out, &t.root, 0, NULL, 0), SILT_EUNSUPPORTED);
    assert_string_equal(silt_error_last(), "arrow: column 'item': Arrow type '+ud:0,1' is not supported");
    t.item.format = "l";
    t.root.format = "i";
    assert_int_equal(silt_arrow_ipc_schema(&out, &t.root, 0, NULL, 0), SILT_EINVAL);
    assert_int_equal(out.len, 4);
    silt_buf_free(&out);
}

/* A schema-only stream with no time zone flag: the Timestamp keeps no zone. */
static void test_naive_timestamp(void **state)
{
    (void)state;
    tiny t;
    tiny_init(&t);
    silt_buf a = SILT_BUF_INIT, b = SILT_BUF_INIT;
    assert_int_equal(silt_arrow_ipc_schema(&a, &t.root, 0, NULL, 0), 0);
    assert_int_equal(silt_arrow_ipc_schema(&b, &t.root, SILT_ARROW_NAIVE_UTC, NULL, 0), 0);
    assert_null(memmem(a.data, a.len, "UTC", 3));
    assert_non_null(memmem(b.data, b.len, "UTC", 3));
    silt_buf_free(&a);
    silt_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tiny_golden),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_naive_timestamp),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
