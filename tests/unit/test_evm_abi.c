/* test_evm_abi.c — Solidity signature parser, ABI decoder and filter of the
 * EVM logs ingress: exact JSON of decoded vectors (negative intN, uint256
 * max, dynamic arrays, strings), malformed data as one-line errors, the
 * selector of Transfer, filter pushdown and three-valued evaluation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ingest/evm_abi.h"
#include "ingest/evm_filter.h"
#include "util/error.h"

static void word(uint8_t *w, uint64_t v)
{
    memset(w, 0, 32);
    for (int i = 0; i < 8; i++)
        w[31 - i] = (uint8_t)(v >> (8 * i));
}

static silt_evm_sig *parse(silt_arena *a, const char *s)
{
    silt_evm_sig *sig = NULL;
    assert_int_equal(silt_evm_sig_parse(&sig, a, s), 0);
    return sig;
}

static void test_selector(void **st)
{
    (void)st;
    silt_arena *a = silt_arena_new();
    silt_evm_sig *s = parse(a, "event Transfer(address indexed from,\n address indexed to, uint value);");
    assert_string_equal(s->canonical, "Transfer(address,address,uint256)");
    silt_buf b = SILT_BUF_INIT;
    silt_evm_hex_append(&b, s->selector, 32);
    assert_string_equal(b.data, "ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef");
    silt_buf_clear(&b);
    assert_int_equal(silt_evm_sql_type(&b, s, false), 0);
    assert_string_equal(b.data, "STRUCT(\"from\" BLOB, \"to\" BLOB, \"value\" VARCHAR)");
    silt_buf_free(&b);
    s = parse(a, "E((uint8 a, bytes b)[] xs, int72 d)");
    assert_string_equal(s->canonical, "E((uint8,bytes)[],int72)");
    silt_buf c = SILT_BUF_INIT;
    silt_evm_sql_type(&c, s, false);
    assert_string_equal(c.data, "STRUCT(\"xs\" STRUCT(\"a\" UTINYINT, \"b\" BLOB)[], \"d\" DECIMAL(38,0))");
    silt_buf_free(&c);
    silt_arena_free(a);
}

static void test_sig_errors(void **st)
{
    (void)st;
    silt_arena *a = silt_arena_new();
    silt_evm_sig *s = NULL;
    assert_int_equal(silt_evm_sig_parse(&s, a, "T(uint7 x)"), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "signature: uintN needs N in 8..256, a multiple of 8 at position 3");
    assert_int_equal(silt_evm_sig_parse(&s, a, "T(address a, address a)"), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "signature: parameter name 'a' is used twice");
    assert_int_equal(silt_evm_sig_parse(&s, a, "T(uint a"), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "signature: missing ')' at position 9");
    assert_int_equal(silt_evm_sig_parse(&s, a, "T(uint indexed a, uint indexed b, uint indexed c, uint indexed d)"),
                     SILT_EINVAL);
    assert_string_equal(silt_error_last(), "signature: 4 indexed parameters (at most 3)");
    silt_arena_free(a);
}

static void test_decode(void **st)
{
    (void)st;
    silt_arena *a = silt_arena_new();
    silt_evm_sig *s = parse(a, "E(int8 indexed n, uint256 m, int256 neg, uint256[] xs, string t, bool f)");
    uint8_t topics[2][32];
    memcpy(topics[0], s->selector, 32);
    memset(topics[1], 0xff, 32); /* int8 -1 */
    uint8_t d[32 * 11];
    memset(d, 0xff, 32);                  /* m = uint256 max */
    memset(d + 32, 0xff, 32);             /* neg = -1 ... */
    d[63] = 0x85;                         /* -123 */
    word(d + 64, 160);                    /* xs at 160 */
    word(d + 96, 256);                    /* t at 256 */
    word(d + 128, 1);                     /* f */
    word(d + 160, 2);                     /* xs.length */
    word(d + 192, 5);
    word(d + 224, 0);
    word(d + 256, 2);                     /* t.length */
    memset(d + 288, 0, 32);
    memcpy(d + 288, "\"\xff", 2);         /* quote + invalid UTF-8 */
    silt_buf b = SILT_BUF_INIT;
    assert_int_equal(silt_evm_decode(&b, s, (const uint8_t(*)[32])topics, 2, d, 320), 0);
    assert_string_equal(b.data, "{\"n\":-1,\"m\":\"115792089237316195423570985008687907853269984665640564039457584007913129639935\","
                                "\"neg\":\"-123\",\"xs\":[\"5\",\"0\"],\"t\":\"\\\"\xef\xbf\xbd\",\"f\":true}");
    /* malformed: truncated, offset out of range, dirty bool, wrong topic count */
    silt_buf_clear(&b);
    assert_int_equal(silt_evm_decode(&b, s, (const uint8_t(*)[32])topics, 2, d, 287), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "data: data too short at byte 256");
    assert_int_equal(b.len, 0);
    word(d + 64, 100000);
    assert_int_equal(silt_evm_decode(&b, s, (const uint8_t(*)[32])topics, 2, d, 320), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "data: offset or length out of range at byte 64");
    word(d + 64, 160);
    word(d + 128, 2);
    assert_int_equal(silt_evm_decode(&b, s, (const uint8_t(*)[32])topics, 2, d, 320), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "data: bool is not 0 or 1 at byte 128");
    assert_int_equal(silt_evm_decode(&b, s, (const uint8_t(*)[32])topics, 1, d, 320), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "1 topics, the signature has 1 indexed parameters (plus topic0)");
    topics[1][0] = 0x7f; /* int8 not sign-extended */
    word(d + 128, 1);
    assert_int_equal(silt_evm_decode(&b, s, (const uint8_t(*)[32])topics, 2, d, 320), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "topic1: intN not sign-extended at byte 0");
    silt_buf_free(&b);
    silt_arena_free(a);
}

static void test_filter(void **st)
{
    (void)st;
    silt_evm_filter *f = NULL;
    assert_int_equal(silt_evm_filter_parse(&f, "(address = X'0000000000000000000000000000000000000001' or "
                                               "address in ('0x0000000000000000000000000000000000000002')) and "
                                               "block_number between 10 and 20 and 15 > block_number and "
                                               "topic1 is not null"),
                     0);
    silt_evm_pushdown p;
    assert_int_equal(silt_evm_filter_pushdown(f, &p), 0);
    assert_int_equal(p.lo, 10);
    assert_int_equal(p.hi, 14);
    assert_false(p.address.any);
    assert_int_equal(p.address.n, 2);
    assert_true(p.topics[0].any && p.topics[1].any);
    uint8_t addr[20] = {0}, hash[32] = {0}, topics[2][32] = {{0}};
    addr[19] = 2;
    silt_evm_log_view v = {12, hash, addr, (const uint8_t(*)[32])topics, 2};
    assert_true(silt_evm_filter_match(f, &v));
    v.ntopics = 1; /* topic1 NULL */
    assert_false(silt_evm_filter_match(f, &v));
    v.ntopics = 2;
    v.block_number = 15;
    assert_false(silt_evm_filter_match(f, &v));
    silt_evm_pushdown_free(&p);
    silt_evm_filter_free(f);
    /* NOT over a NULL topic stays unknown: not matched */
    assert_int_equal(silt_evm_filter_parse(&f, "not topic3 = X'0000000000000000000000000000000000000000000000000000000000000000'"), 0);
    v.ntopics = 1;
    assert_false(silt_evm_filter_match(f, &v));
    silt_evm_filter_free(f);
    assert_int_equal(silt_evm_filter_parse(&f, "address = X'01'"), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "filter: address needs a 20-byte hex value at position 11");
    assert_int_equal(silt_evm_filter_parse(&f, "block_number > 1 or"), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "filter: expected a column, a value, NOT or '(' at position 20");
    assert_int_equal(silt_evm_filter_parse(&f, "gas = 1"), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "filter: expected a column, a value, NOT or '(' at position 1");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_selector),
        cmocka_unit_test(test_sig_errors),
        cmocka_unit_test(test_decode),
        cmocka_unit_test(test_filter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
