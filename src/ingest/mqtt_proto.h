/* mqtt_proto.h — the MQTT 3.1.1 packets a silt subscriber sends and
 * receives (OASIS MQTT 3.1.1; docs/ingestion.md "Mqtt", docs/decisions.md
 * for why silt does not use libmosquitto).
 *
 * Encoders append one whole packet to the caller's silt_buf. The decoder
 * reads one packet from the front of a byte range and never reads past
 * it: it checks the remaining length (at most 4 bytes, at most
 * SILT_MQTT_MAX_PACKET), the fixed-header flags each type requires, and
 * every length field against the packet's end. Decoded strings and the
 * payload point into the input (no copies; valid while the input is).
 */
#ifndef SILT_INGEST_MQTT_PROTO_H
#define SILT_INGEST_MQTT_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

#define SILT_MQTT_MAX_PACKET (64u << 20) /* bytes after the fixed header that silt accepts */
#define SILT_MQTT_MAX_TOPICS 64          /* SUBACK return codes decoded */

enum {
    SILT_MQTT_CONNECT = 1,
    SILT_MQTT_CONNACK = 2,
    SILT_MQTT_PUBLISH = 3,
    SILT_MQTT_PUBACK = 4,
    SILT_MQTT_PUBREC = 5,
    SILT_MQTT_PUBREL = 6,
    SILT_MQTT_PUBCOMP = 7,
    SILT_MQTT_SUBSCRIBE = 8,
    SILT_MQTT_SUBACK = 9,
    SILT_MQTT_PINGREQ = 12,
    SILT_MQTT_PINGRESP = 13,
    SILT_MQTT_DISCONNECT = 14,
};

/* A decoded packet from the broker. */
typedef struct silt_mqtt_pkt {
    int type;              /* SILT_MQTT_* */
    uint16_t id;           /* packet id: PUBLISH qos > 0, PUBACK..PUBCOMP, SUBACK */
    /* CONNACK */
    bool session_present;
    uint8_t code;          /* CONNACK return code (0 = accepted) */
    /* PUBLISH */
    bool dup, retain;
    int qos;
    const char *topic;     /* into the input, not NUL-terminated */
    size_t topic_len;
    const uint8_t *payload; /* into the input */
    size_t payload_len;
    /* SUBACK */
    uint8_t granted[SILT_MQTT_MAX_TOPICS];
    size_t ngranted;
} silt_mqtt_pkt;

/* Decodes the packet at the front of data[0..len): 1 = decoded (*used =
 * its size), 0 = incomplete (read more), a negative error
 * (SILT_ECORRUPT with a message) when the bytes cannot be a valid packet
 * from a broker. */
int silt_mqtt_decode(const uint8_t *data, size_t len, silt_mqtt_pkt *out, size_t *used);

/* CONNECT, protocol level 4, with clean-session=false when `clean` is
 * false; `user` / `pass` may be NULL. */
int silt_mqtt_encode_connect(silt_buf *out, const char *client_id, const char *user, const char *pass,
                             uint16_t keepalive_s, bool clean);
/* SUBSCRIBE packet `id` for n topic filters with their requested QoS. */
int silt_mqtt_encode_subscribe(silt_buf *out, uint16_t id, const char *const *topics, const int *qos, size_t n);
/* PUBACK / PUBREC / PUBREL / PUBCOMP for `id` (type SILT_MQTT_PUB*). */
int silt_mqtt_encode_ack(silt_buf *out, int type, uint16_t id);
/* PINGREQ or DISCONNECT (type). */
int silt_mqtt_encode_empty(silt_buf *out, int type);
/* PUBLISH (used by tests and the fuzz corpus; silt itself only subscribes). */
int silt_mqtt_encode_publish(silt_buf *out, const char *topic, const uint8_t *payload, size_t len, int qos,
                             uint16_t id, bool dup);

/* Whether a topic name matches a subscription filter (`+`, `#`). */
bool silt_mqtt_topic_match(const char *filter, const char *topic, size_t topic_len);

#endif
