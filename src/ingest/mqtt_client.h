/* mqtt_client.h — one TCP connection to an MQTT broker: connect with a
 * timeout, send whole packets, receive decoded packets (mqtt_proto.h).
 *
 * Invariants: the socket is non-blocking and every wait is bounded by a
 * poll timeout; a packet returned by silt_mqtt_conn_next points into the
 * connection's input buffer and stays valid until the next call.
 * Memory: the connection owns its buffer; silt_mqtt_conn_close frees it.
 */
#ifndef SILT_INGEST_MQTT_CLIENT_H
#define SILT_INGEST_MQTT_CLIENT_H

#include "ingest/mqtt_proto.h"

typedef struct silt_mqtt_conn {
    int fd;
    silt_buf in;      /* bytes received */
    size_t used;      /* bytes of `in` already decoded */
    int io_timeout_ms; /* for connecting and for a send */
} silt_mqtt_conn;

/* Connects to host:port (name resolution included) within timeout_ms.
 * SILT_EIO "mqtt: cannot connect to HOST:PORT: REASON" otherwise. */
int silt_mqtt_conn_open(silt_mqtt_conn *c, const char *host, int port, int timeout_ms);
/* Sends all of `b` (SILT_EIO on a timeout or a closed connection). */
int silt_mqtt_conn_send(silt_mqtt_conn *c, const silt_buf *b);
/* The next packet, waiting at most wait_ms (0: only what has arrived):
 * 1 = *p, 0 = none yet, negative: SILT_EIO (the broker closed the
 * connection, a socket error) or the decoder's SILT_ECORRUPT. */
int silt_mqtt_conn_next(silt_mqtt_conn *c, silt_mqtt_pkt *p, int wait_ms);
void silt_mqtt_conn_close(silt_mqtt_conn *c);

#endif
