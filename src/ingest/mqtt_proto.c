/* mqtt_proto.c — MQTT 3.1.1 packet codec (see mqtt_proto.h). Pure
 * functions over bytes; the socket is in mqtt_client.c. Every length is
 * checked against the end of the packet before it is used. */
#include "ingest/mqtt_proto.h"

#include "util/error.h"

#include <string.h>

static int bad(const char *what) { return silt_err(SILT_ECORRUPT, "mqtt: malformed packet from the broker: %s", what); }

/* ---- decoding --------------------------------------------------------------- */

/* The remaining length at p[1..]: 1 = ok (*rl, *hl = fixed header size), 0 = more bytes needed. */
static int remaining_length(const uint8_t *p, size_t len, uint32_t *rl, size_t *hl)
{
    uint32_t v = 0;
    for (size_t i = 0; i < 4; i++) {
        if (1 + i >= len)
            return 0;
        uint8_t b = p[1 + i];
        v |= (uint32_t)(b & 0x7F) << (7 * i);
        if (!(b & 0x80)) {
            if (i > 0 && b == 0)
                return bad("non-minimal remaining length");
            *rl = v;
            *hl = 2 + i;
            return 1;
        }
    }
    return bad("remaining length longer than 4 bytes");
}

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }

static int decode_publish(uint8_t flags, const uint8_t *b, size_t n, silt_mqtt_pkt *o)
{
    o->dup = flags & 8;
    o->qos = (flags >> 1) & 3;
    o->retain = flags & 1;
    if (o->qos == 3)
        return bad("PUBLISH with QoS 3");
    if (o->qos == 0 && o->dup)
        return bad("PUBLISH with QoS 0 and DUP");
    if (n < 2)
        return bad("PUBLISH without topic");
    size_t tl = get16(b), off = 2 + tl;
    if (tl == 0 || n < off)
        return bad("PUBLISH topic length");
    o->topic = (const char *)b + 2;
    o->topic_len = tl;
    if (memchr(o->topic, '\0', tl) || memchr(o->topic, '+', tl) || memchr(o->topic, '#', tl))
        return bad("PUBLISH topic name with NUL or wildcard");
    if (o->qos) {
        if (n - off < 2)
            return bad("PUBLISH without packet id");
        o->id = get16(b + off);
        off += 2;
        if (o->id == 0)
            return bad("PUBLISH with packet id 0");
    }
    o->payload = b + off;
    o->payload_len = n - off;
    return 1;
}

static int decode_body(int type, uint8_t flags, const uint8_t *b, size_t n, silt_mqtt_pkt *o)
{
    switch (type) {
    case SILT_MQTT_CONNACK:
        if (flags || n != 2 || (b[0] & 0xFE))
            return bad("CONNACK");
        o->session_present = b[0] & 1;
        o->code = b[1];
        return 1;
    case SILT_MQTT_PUBLISH:
        return decode_publish(flags, b, n, o);
    case SILT_MQTT_PUBACK:
    case SILT_MQTT_PUBREC:
    case SILT_MQTT_PUBREL:
    case SILT_MQTT_PUBCOMP:
        if (flags != (type == SILT_MQTT_PUBREL ? 2 : 0) || n != 2)
            return bad("acknowledgement packet");
        o->id = get16(b);
        return 1;
    case SILT_MQTT_SUBACK:
        if (flags || n < 3 || n - 2 > SILT_MQTT_MAX_TOPICS)
            return bad("SUBACK");
        o->id = get16(b);
        o->ngranted = n - 2;
        for (size_t i = 0; i < o->ngranted; i++) {
            uint8_t g = b[2 + i];
            if (g > 2 && g != 0x80)
                return bad("SUBACK return code");
            o->granted[i] = g;
        }
        return 1;
    case SILT_MQTT_PINGRESP:
        if (flags || n)
            return bad("PINGRESP");
        return 1;
    default:
        return bad("unexpected packet type");
    }
}

int silt_mqtt_decode(const uint8_t *data, size_t len, silt_mqtt_pkt *out, size_t *used)
{
    memset(out, 0, sizeof *out);
    *used = 0;
    if (len < 2)
        return 0;
    uint32_t rl = 0;
    size_t hl = 0;
    int rc = remaining_length(data, len, &rl, &hl);
    if (rc <= 0)
        return rc;
    if (rl > SILT_MQTT_MAX_PACKET)
        return silt_err(SILT_ECORRUPT, "mqtt: a packet of %u bytes is larger than silt accepts (%u)", rl,
                        SILT_MQTT_MAX_PACKET);
    if (len - hl < rl)
        return 0;
    out->type = data[0] >> 4;
    rc = decode_body(out->type, data[0] & 0x0F, data + hl, rl, out);
    if (rc == 1)
        *used = hl + rl;
    return rc;
}

/* ---- encoding --------------------------------------------------------------- */

static int oom(void) { return silt_err(SILT_ENOMEM, "mqtt: out of memory"); }

static int put16(silt_buf *b, size_t v)
{
    uint8_t w[2] = {(uint8_t)(v >> 8), (uint8_t)v};
    return silt_buf_append(b, w, 2) ? oom() : 0;
}

static int put_str(silt_buf *b, const char *s, size_t n)
{
    if (n > 0xFFFF)
        return silt_err(SILT_EINVAL, "mqtt: a string of %zu bytes is longer than MQTT allows", n);
    int rc = put16(b, n);
    return rc ? rc : silt_buf_append(b, s, n) ? oom() : 0;
}

/* Prepends the fixed header (type|flags, remaining length) to `body`. */
static int finish(silt_buf *out, uint8_t first, const silt_buf *body)
{
    if (body->len > 268435455u)
        return silt_err(SILT_EINVAL, "mqtt: packet too large");
    uint8_t h[5];
    size_t hl = 1, v = body->len;
    h[0] = first;
    do {
        uint8_t d = v & 0x7F;
        v >>= 7;
        h[hl++] = (uint8_t)(d | (v ? 0x80 : 0));
    } while (v);
    return silt_buf_append(out, h, hl) || silt_buf_append(out, body->data, body->len) ? oom() : 0;
}

int silt_mqtt_encode_connect(silt_buf *out, const char *client_id, const char *user, const char *pass,
                             uint16_t keepalive_s, bool clean)
{
    silt_buf b = SILT_BUF_INIT;
    uint8_t flags = (uint8_t)((clean ? 0x02 : 0) | (user ? 0x80 : 0) | (user && pass ? 0x40 : 0));
    int rc = put_str(&b, "MQTT", 4);
    uint8_t lv[2] = {4, flags};
    if (!rc && silt_buf_append(&b, lv, 2))
        rc = oom();
    if (!rc)
        rc = put16(&b, keepalive_s);
    if (!rc)
        rc = put_str(&b, client_id, strlen(client_id));
    if (!rc && user)
        rc = put_str(&b, user, strlen(user));
    if (!rc && user && pass)
        rc = put_str(&b, pass, strlen(pass));
    if (!rc)
        rc = finish(out, SILT_MQTT_CONNECT << 4, &b);
    silt_buf_free(&b);
    return rc;
}

int silt_mqtt_encode_subscribe(silt_buf *out, uint16_t id, const char *const *topics, const int *qos, size_t n)
{
    silt_buf b = SILT_BUF_INIT;
    int rc = n == 0 || n > SILT_MQTT_MAX_TOPICS ? silt_err(SILT_EINVAL, "mqtt: 1 to %d topics per source",
                                                            SILT_MQTT_MAX_TOPICS)
                                                 : put16(&b, id);
    for (size_t i = 0; !rc && i < n; i++) {
        rc = put_str(&b, topics[i], strlen(topics[i]));
        uint8_t q = (uint8_t)qos[i];
        if (!rc && silt_buf_append(&b, &q, 1))
            rc = oom();
    }
    if (!rc)
        rc = finish(out, SILT_MQTT_SUBSCRIBE << 4 | 2, &b);
    silt_buf_free(&b);
    return rc;
}

int silt_mqtt_encode_ack(silt_buf *out, int type, uint16_t id)
{
    uint8_t p[4] = {(uint8_t)(type << 4 | (type == SILT_MQTT_PUBREL ? 2 : 0)), 2, (uint8_t)(id >> 8), (uint8_t)id};
    return silt_buf_append(out, p, 4) ? oom() : 0;
}

int silt_mqtt_encode_empty(silt_buf *out, int type)
{
    uint8_t p[2] = {(uint8_t)(type << 4), 0};
    return silt_buf_append(out, p, 2) ? oom() : 0;
}

int silt_mqtt_encode_publish(silt_buf *out, const char *topic, const uint8_t *payload, size_t len, int qos,
                             uint16_t id, bool dup)
{
    silt_buf b = SILT_BUF_INIT;
    int rc = put_str(&b, topic, strlen(topic));
    if (!rc && qos)
        rc = put16(&b, id);
    if (!rc && silt_buf_append(&b, payload, len))
        rc = oom();
    if (!rc)
        rc = finish(out, (uint8_t)(SILT_MQTT_PUBLISH << 4 | (dup ? 8 : 0) | qos << 1), &b);
    silt_buf_free(&b);
    return rc;
}

bool silt_mqtt_topic_match(const char *f, const char *t, size_t tl)
{
    size_t i = 0;
    for (;;) {
        if (*f == '#')
            return true;
        const char *fe = strchr(f, '/');
        size_t fl = fe ? (size_t)(fe - f) : strlen(f);
        size_t j = i;
        while (j < tl && t[j] != '/')
            j++;
        if (!(fl == 1 && *f == '+') && (fl != j - i || memcmp(f, t + i, fl) != 0))
            return false;
        if (!fe)
            return j == tl;
        if (j == tl) /* "a/#" matches "a" too */
            return strcmp(fe + 1, "#") == 0;
        f = fe + 1;
        i = j + 1;
    }
}
