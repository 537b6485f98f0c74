/* test_push_buffer.c — the push buffer file format (ingest/push_buffer.h):
 * round trips of DATA and MARK frames with exact record numbering; every
 * truncation of a valid file parses as its longest whole-frame prefix
 * (a torn append); a flipped byte anywhere in a frame ends the valid prefix
 * before that frame; gaps in the numbering, a bad header and garbage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "ingest/push_buffer.h"
#include "util/error.h"

typedef struct seen {
    uint64_t seq[16];
    char rec[16][32];
    size_t n;
} seen;

static int record(void *ctx, uint64_t seq, const char *rec, size_t len)
{
    seen *s = ctx;
    assert_true(s->n < 16 && len < 32);
    s->seq[s->n] = seq;
    memcpy(s->rec[s->n], rec, len);
    s->rec[s->n][len] = '\0';
    s->n++;
    return 0;
}

/* header + DATA(0: a, bb) + DATA(2: ccc) + MARK(drop 1, total 1, next 3);
 * frame ends in ends[] (3 frames). */
static void build(silt_buf *b, size_t ends[3])
{
    const char *r1[] = {"a", "bb"}, *r2[] = {"ccc"};
    size_t l1[] = {1, 2}, l2[] = {3};
    assert_int_equal(silt_buf_append(b, SILT_PBUF_HEADER, SILT_PBUF_HEADER_LEN), 0);
    assert_int_equal(silt_pbuf_encode_data(b, 0, r1, l1, 2), 0);
    ends[0] = b->len;
    assert_int_equal(silt_pbuf_encode_data(b, 2, r2, l2, 1), 0);
    ends[1] = b->len;
    assert_int_equal(silt_pbuf_encode_mark(b, 1, 1, 3), 0);
    ends[2] = b->len;
}

static void test_roundtrip(void **state)
{
    (void)state;
    silt_buf b = SILT_BUF_INIT;
    size_t ends[3];
    build(&b, ends);
    silt_pbuf_scan sc;
    seen s = {0};
    assert_int_equal(silt_pbuf_parse((const uint8_t *)b.data, b.len, &sc, record, &s), 0);
    assert_int_equal(sc.valid_end, b.len);
    assert_false(sc.torn);
    assert_int_equal(sc.frames, 3);
    assert_int_equal(sc.base_seq, 0);
    assert_int_equal(sc.next_seq, 3);
    assert_int_equal(sc.drop_before, 1);
    assert_int_equal(sc.dropped_total, 1);
    assert_int_equal(s.n, 3);
    assert_int_equal(s.seq[0], 0);
    assert_int_equal(s.seq[2], 2);
    assert_string_equal(s.rec[0], "a");
    assert_string_equal(s.rec[1], "bb");
    assert_string_equal(s.rec[2], "ccc");
    silt_buf_free(&b);
}

/* A compacted file: MARK first, then records numbered from its next_seq. */
static void test_compacted(void **state)
{
    (void)state;
    silt_buf b = SILT_BUF_INIT;
    const char *r[] = {"x"};
    size_t l[] = {1};
    assert_int_equal(silt_buf_append(&b, SILT_PBUF_HEADER, SILT_PBUF_HEADER_LEN), 0);
    assert_int_equal(silt_pbuf_encode_mark(&b, 7, 2, 7), 0);
    assert_int_equal(silt_pbuf_encode_data(&b, 7, r, l, 1), 0);
    /* an older MARK copied from before the compaction never lowers drop_before */
    assert_int_equal(silt_pbuf_encode_mark(&b, 5, 2, 8), 0);
    silt_pbuf_scan sc;
    seen s = {0};
    assert_int_equal(silt_pbuf_parse((const uint8_t *)b.data, b.len, &sc, record, &s), 0);
    assert_int_equal(sc.frames, 3);
    assert_int_equal(sc.base_seq, 7);
    assert_int_equal(sc.next_seq, 8);
    assert_int_equal(sc.drop_before, 7);
    assert_int_equal(sc.dropped_total, 2);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.seq[0], 7);
    silt_buf_free(&b);
}

static void test_truncations(void **state)
{
    (void)state;
    silt_buf b = SILT_BUF_INIT;
    size_t ends[3];
    build(&b, ends);
    for (size_t len = 0; len <= b.len; len++) {
        silt_pbuf_scan sc;
        assert_int_equal(silt_pbuf_parse((const uint8_t *)b.data, len, &sc, NULL, NULL), 0);
        size_t want = len < SILT_PBUF_HEADER_LEN ? 0 : SILT_PBUF_HEADER_LEN;
        uint64_t frames = 0;
        for (int k = 0; k < 3; k++)
            if (len >= ends[k]) {
                want = ends[k];
                frames = (uint64_t)k + 1;
            }
        assert_int_equal(sc.valid_end, want);
        assert_int_equal(sc.frames, frames);
        assert_int_equal(sc.torn, len != want);
    }
    silt_buf_free(&b);
}

static void test_flipped_bytes(void **state)
{
    (void)state;
    silt_buf b = SILT_BUF_INIT;
    size_t ends[3];
    build(&b, ends);
    for (size_t i = SILT_PBUF_HEADER_LEN; i < b.len; i++) {
        b.data[i] ^= 0x5a;
        silt_pbuf_scan sc;
        assert_int_equal(silt_pbuf_parse((const uint8_t *)b.data, b.len, &sc, NULL, NULL), 0);
        size_t start = i < ends[0] ? SILT_PBUF_HEADER_LEN : i < ends[1] ? ends[0] : ends[1];
        assert_int_equal(sc.valid_end, start);
        assert_true(sc.torn);
        b.data[i] ^= 0x5a;
    }
    silt_buf_free(&b);
}

static void test_bad(void **state)
{
    (void)state;
    silt_pbuf_scan sc;
    assert_int_equal(silt_pbuf_parse((const uint8_t *)"garbage!garbage!", 16, &sc, NULL, NULL), SILT_ECORRUPT);
    assert_string_equal(silt_error_last(), "push buffer: not a silt push buffer file (bad header)");
    /* a header cut short: an empty buffer */
    assert_int_equal(silt_pbuf_parse((const uint8_t *)"SILT", 4, &sc, NULL, NULL), 0);
    assert_int_equal(sc.valid_end, 0);
    assert_true(sc.torn);
    assert_int_equal(silt_pbuf_parse((const uint8_t *)"", 0, &sc, NULL, NULL), 0);
    assert_false(sc.torn);
    /* a gap in the numbering ends the valid prefix */
    silt_buf b = SILT_BUF_INIT;
    const char *r[] = {"x"};
    size_t l[] = {1};
    assert_int_equal(silt_buf_append(&b, SILT_PBUF_HEADER, SILT_PBUF_HEADER_LEN), 0);
    assert_int_equal(silt_pbuf_encode_data(&b, 0, r, l, 1), 0);
    size_t one = b.len;
    assert_int_equal(silt_pbuf_encode_data(&b, 2, r, l, 1), 0);
    assert_int_equal(silt_pbuf_parse((const uint8_t *)b.data, b.len, &sc, NULL, NULL), 0);
    assert_int_equal(sc.valid_end, one);
    assert_int_equal(sc.next_seq, 1);
    assert_true(sc.torn);
    /* garbage after valid frames */
    b.len = one;
    assert_int_equal(silt_buf_append(&b, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 26), 0);
    assert_int_equal(silt_pbuf_parse((const uint8_t *)b.data, b.len, &sc, NULL, NULL), 0);
    assert_int_equal(sc.valid_end, one);
    assert_true(sc.torn);
    silt_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),   cmocka_unit_test(test_compacted), cmocka_unit_test(test_truncations),
        cmocka_unit_test(test_flipped_bytes), cmocka_unit_test(test_bad),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
