/* test_mqtt_proto.c — the MQTT 3.1.1 codec (ingest/mqtt_proto.h) with exact
 * bytes: CONNECT (clean-session off, user/password flags), SUBSCRIBE with
 * per-topic QoS, the acknowledgements; decoding CONNACK, SUBACK, PUBLISH
 * (QoS 0/1/2, DUP, multi-byte remaining length), PUBREL, PINGRESP; every
 * truncation is "incomplete"; malformed packets (bad flags, QoS 3, topic
 * longer than the packet, packet id 0, wildcard in a topic name, a 5-byte
 * remaining length) are errors. Topic filter matching. And the MQTT
 * frames of the push buffer (MSG / REL, the carry over a compaction). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "ingest/mqtt_proto.h"
#include "ingest/push_buffer.h"
#include "util/error.h"

static void expect_bytes(const silt_buf *b, const uint8_t *want, size_t n)
{
    assert_int_equal(b->len, n);
    assert_memory_equal(b->data, want, n);
}

static void test_connect(void **st)
{
    (void)st;
    silt_buf b = SILT_BUF_INIT;
    assert_int_equal(silt_mqtt_encode_connect(&b, "c1", "u", "pw", 30, false), 0);
    const uint8_t want[] = {0x10, 21, 0, 4, 'M', 'Q', 'T', 'T', 4, 0xC0, 0, 30, 0, 2, 'c', '1',
                            0, 1, 'u', 0, 2, 'p', 'w'};
    expect_bytes(&b, want, sizeof want);
    b.len = 0;
    assert_int_equal(silt_mqtt_encode_connect(&b, "c1", NULL, NULL, 30, true), 0);
    const uint8_t want2[] = {0x10, 14, 0, 4, 'M', 'Q', 'T', 'T', 4, 0x02, 0, 30, 0, 2, 'c', '1'};
    expect_bytes(&b, want2, sizeof want2);
    silt_buf_free(&b);
}

static void test_subscribe_acks(void **st)
{
    (void)st;
    silt_buf b = SILT_BUF_INIT;
    const char *t[] = {"a/+", "b/#"};
    int q[] = {1, 2};
    assert_int_equal(silt_mqtt_encode_subscribe(&b, 1, t, q, 2), 0);
    const uint8_t want[] = {0x82, 14, 0, 1, 0, 3, 'a', '/', '+', 1, 0, 3, 'b', '/', '#', 2};
    expect_bytes(&b, want, sizeof want);
    b.len = 0;
    assert_int_equal(silt_mqtt_encode_ack(&b, SILT_MQTT_PUBACK, 0x1234), 0);
    assert_int_equal(silt_mqtt_encode_ack(&b, SILT_MQTT_PUBREC, 7), 0);
    assert_int_equal(silt_mqtt_encode_ack(&b, SILT_MQTT_PUBCOMP, 7), 0);
    assert_int_equal(silt_mqtt_encode_empty(&b, SILT_MQTT_PINGREQ), 0);
    const uint8_t acks[] = {0x40, 2, 0x12, 0x34, 0x50, 2, 0, 7, 0x70, 2, 0, 7, 0xC0, 0};
    expect_bytes(&b, acks, sizeof acks);
    assert_int_equal(silt_mqtt_encode_subscribe(&b, 1, t, q, 0), SILT_EINVAL);
    silt_buf_free(&b);
}

static void test_decode(void **st)
{
    (void)st;
    silt_mqtt_pkt p;
    size_t used;
    const uint8_t connack[] = {0x20, 2, 1, 5};
    assert_int_equal(silt_mqtt_decode(connack, sizeof connack, &p, &used), 1);
    assert_int_equal(p.type, SILT_MQTT_CONNACK);
    assert_true(p.session_present);
    assert_int_equal(p.code, 5);
    assert_int_equal(used, 4);
    const uint8_t suback[] = {0x90, 4, 0, 1, 1, 0x80};
    assert_int_equal(silt_mqtt_decode(suback, sizeof suback, &p, &used), 1);
    assert_int_equal(p.ngranted, 2);
    assert_int_equal(p.granted[1], 0x80);
    const uint8_t pub2[] = {0x3C, 9, 0, 3, 'a', '/', 'b', 0, 9, 'h', 'i'};
    assert_int_equal(silt_mqtt_decode(pub2, sizeof pub2, &p, &used), 1);
    assert_int_equal(p.qos, 2);
    assert_true(p.dup);
    assert_int_equal(p.id, 9);
    assert_int_equal(p.topic_len, 3);
    assert_memory_equal(p.topic, "a/b", 3);
    assert_int_equal(p.payload_len, 2);
    assert_memory_equal(p.payload, "hi", 2);
    const uint8_t rel[] = {0x62, 2, 0, 9, 0xD0, 0};
    assert_int_equal(silt_mqtt_decode(rel, sizeof rel, &p, &used), 1);
    assert_int_equal(p.type, SILT_MQTT_PUBREL);
    assert_int_equal(used, 4);
    assert_int_equal(silt_mqtt_decode(rel + 4, 2, &p, &used), 1);
    assert_int_equal(p.type, SILT_MQTT_PINGRESP);
    /* every truncation is incomplete */
    for (size_t n = 0; n < sizeof pub2; n++)
        assert_int_equal(silt_mqtt_decode(pub2, n, &p, &used), 0);
}

static void test_big_publish_roundtrip(void **st)
{
    (void)st;
    size_t n = 200000;
    uint8_t *pl = malloc(n);
    assert_non_null(pl);
    memset(pl, 'x', n);
    silt_buf b = SILT_BUF_INIT;
    assert_int_equal(silt_mqtt_encode_publish(&b, "t", pl, n, 1, 300, false), 0);
    assert_int_equal((uint8_t)b.data[0], 0x32);
    assert_int_equal(b.len, 1 + 3 + 3 + 2 + n); /* 3-byte remaining length */
    silt_mqtt_pkt p;
    size_t used;
    assert_int_equal(silt_mqtt_decode((const uint8_t *)b.data, b.len, &p, &used), 1);
    assert_int_equal(used, b.len);
    assert_int_equal(p.id, 300);
    assert_int_equal(p.payload_len, n);
    silt_buf_free(&b);
    free(pl);
}

static void test_malformed(void **st)
{
    (void)st;
    silt_mqtt_pkt p;
    size_t used;
    const uint8_t *bad[] = {
        (const uint8_t[]){0x21, 2, 0, 0},                     /* CONNACK flags */
        (const uint8_t[]){0x36, 5, 0, 1, 't', 0, 1},          /* QoS 3 */
        (const uint8_t[]){0x30, 3, 0, 9, 't'},                /* topic longer than the packet */
        (const uint8_t[]){0x32, 5, 0, 1, 't', 0, 0},          /* packet id 0 */
        (const uint8_t[]){0x30, 3, 0, 1, '#'},                /* wildcard in a topic name */
        (const uint8_t[]){0x38, 3, 0, 1, 't'},                /* QoS 0 with DUP */
        (const uint8_t[]){0x60, 2, 0, 1},                     /* PUBREL without its flags */
        (const uint8_t[]){0x30, 0xFF, 0xFF, 0xFF, 0xFF, 1},   /* 5-byte remaining length */
        (const uint8_t[]){0x10, 0},                           /* CONNECT from a broker */
        (const uint8_t[]){0x90, 3, 0, 1, 3},                  /* SUBACK code 3 */
    };
    const size_t len[] = {4, 7, 5, 7, 5, 5, 4, 6, 2, 5};
    for (size_t i = 0; i < sizeof len / sizeof len[0]; i++) {
        assert_int_equal(silt_mqtt_decode(bad[i], len[i], &p, &used), SILT_ECORRUPT);
        assert_non_null(strstr(silt_error_last(), "mqtt: "));
    }
}

static void test_topic_match(void **st)
{
    (void)st;
    assert_true(silt_mqtt_topic_match("a/+/c", "a/b/c", 5));
    assert_false(silt_mqtt_topic_match("a/+/c", "a/b/d", 5));
    assert_true(silt_mqtt_topic_match("a/#", "a", 1));
    assert_true(silt_mqtt_topic_match("a/#", "a/b/c", 5));
    assert_true(silt_mqtt_topic_match("#", "x/y", 3));
    assert_false(silt_mqtt_topic_match("a/b", "a/b/c", 5));
    assert_false(silt_mqtt_topic_match("a/b/c", "a/b", 3));
}

typedef struct msgs {
    silt_pbuf_msg m[8];
    size_t n;
} msgs;

static int note(void *ctx, const silt_pbuf_msg *m)
{
    msgs *s = ctx;
    assert_true(s->n < 8);
    s->m[s->n++] = *m;
    return 0;
}

/* MSG(id 5, qos 2, 2 records) + MSG(id 6, qos 1, 0 records) + REL(5) +
 * MSG(id 7, qos 2, 1 record): numbering, the carry keeps ids 6 and 7 only. */
static void test_pbuf_mqtt_frames(void **st)
{
    (void)st;
    silt_buf b = SILT_BUF_INIT;
    const char *r[] = {"{\"a\":1}", "{\"a\":2}"};
    size_t l[] = {7, 7};
    assert_int_equal(silt_buf_append(&b, SILT_PBUF_HEADER, SILT_PBUF_HEADER_LEN), 0);
    silt_pbuf_msg m5 = {.id = 5, .qos = 2, .hash = 0xABCDEF}, m6 = {.id = 6, .qos = 1, .hash = 66},
                  m7 = {.id = 7, .qos = 2, .hash = 77};
    assert_int_equal(silt_pbuf_encode_msg(&b, 0, &m5, r, l, 2), 0);
    assert_int_equal(silt_pbuf_encode_msg(&b, 2, &m6, NULL, NULL, 0), 0);
    assert_int_equal(silt_pbuf_encode_rel(&b, 2, 5), 0);
    assert_int_equal(silt_pbuf_encode_msg(&b, 2, &m7, r, l, 1), 0);
    silt_pbuf_scan sc;
    msgs got = {0};
    assert_int_equal(silt_pbuf_parse_ex((const uint8_t *)b.data, b.len, &sc, NULL, NULL, note, &got), 0);
    assert_false(sc.torn);
    assert_int_equal(sc.next_seq, 3);
    assert_int_equal(sc.frames, 4);
    assert_int_equal(got.n, 4);
    assert_int_equal(got.m[0].id, 5);
    assert_int_equal(got.m[0].hash, 0xABCDEF);
    assert_int_equal(got.m[0].count, 2);
    assert_true(got.m[2].rel);
    assert_int_equal(got.m[3].first_seq, 2);
    /* a torn MSG is cut off like a torn DATA frame */
    assert_int_equal(silt_pbuf_parse((const uint8_t *)b.data, b.len - 1, &sc, NULL, NULL), 0);
    assert_true(sc.torn);
    assert_int_equal(sc.next_seq, 2);
    /* the carry: MARK + record-less MSGs for the ids still held */
    silt_buf c = SILT_BUF_INIT;
    assert_int_equal(silt_buf_append(&c, SILT_PBUF_HEADER, SILT_PBUF_HEADER_LEN), 0);
    assert_int_equal(silt_pbuf_encode_mark(&c, 3, 0, 3), 0);
    assert_int_equal(silt_pbuf_encode_carry(&c, (const uint8_t *)b.data, b.len, 3), 0);
    msgs carried = {0};
    assert_int_equal(silt_pbuf_parse_ex((const uint8_t *)c.data, c.len, &sc, NULL, NULL, note, &carried), 0);
    assert_false(sc.torn);
    assert_int_equal(sc.next_seq, 3);
    assert_int_equal(carried.n, 2);
    assert_int_equal(carried.m[0].id, 6);
    assert_int_equal(carried.m[0].qos, 1);
    assert_int_equal(carried.m[0].hash, 66);
    assert_int_equal(carried.m[1].id, 7);
    assert_int_equal(carried.m[1].count, 0);
    silt_buf_free(&b);
    silt_buf_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_connect),          cmocka_unit_test(test_subscribe_acks),
        cmocka_unit_test(test_decode),           cmocka_unit_test(test_big_publish_roundtrip),
        cmocka_unit_test(test_malformed),        cmocka_unit_test(test_topic_match),
        cmocka_unit_test(test_pbuf_mqtt_frames),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
