/* fuzz_mqtt.c — libFuzzer target for the MQTT packet decoder
 * (ingest/mqtt_proto.h), fed as a stream the way mqtt_client.c reads it.
 * Invariants checked: no crash or read past the input; a decoded packet
 * uses at least 2 bytes and no more than what is left; topic and payload
 * lie inside the packet; "incomplete" stays incomplete for every shorter
 * prefix of the rest; a decoded PUBLISH re-encodes to a packet that decodes
 * to the same fields. */
#include <stdlib.h>
#include <string.h>

#include "ingest/mqtt_proto.h"
#include "util/error.h"

static void check_publish(const silt_mqtt_pkt *p)
{
    char topic[65536];
    memcpy(topic, p->topic, p->topic_len);
    topic[p->topic_len] = '\0';
    if (strlen(topic) != p->topic_len)
        abort(); /* NUL in a topic must have been refused */
    silt_buf b = SILT_BUF_INIT;
    if (silt_mqtt_encode_publish(&b, topic, p->payload, p->payload_len, p->qos, p->id, p->dup) != 0)
        abort();
    silt_mqtt_pkt q;
    size_t used;
    if (silt_mqtt_decode((const uint8_t *)b.data, b.len, &q, &used) != 1 || used != b.len || q.qos != p->qos ||
        q.id != p->id || q.payload_len != p->payload_len || memcmp(q.payload, p->payload, p->payload_len) != 0)
        abort();
    silt_buf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t off = 0;
    while (off < size) {
        silt_mqtt_pkt p;
        size_t used = 0;
        int rc = silt_mqtt_decode(data + off, size - off, &p, &used);
        if (rc < 0)
            break;
        if (rc == 0) {
            for (size_t n = 0; n < size - off && n < 64; n++)
                if (silt_mqtt_decode(data + off, n, &p, &used) == 1)
                    abort();
            break;
        }
        if (used < 2 || used > size - off)
            abort();
        if (p.type == SILT_MQTT_PUBLISH) {
            const uint8_t *lo = data + off, *hi = data + off + used;
            if ((const uint8_t *)p.topic < lo || (const uint8_t *)p.topic + p.topic_len > hi || p.payload < lo ||
                p.payload + p.payload_len > hi)
                abort();
            check_publish(&p);
        }
        off += used;
    }
    silt_err_clear();
    return 0;
}
