/* mqtt_client.c — the TCP side of the MQTT subscriber (see mqtt_client.h). */
#include "ingest/mqtt_client.h"

#include "util/error.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int wait_fd(int fd, short ev, int ms)
{
    struct pollfd p = {fd, ev, 0};
    for (;;) {
        int r = poll(&p, 1, ms);
        if (r < 0 && errno == EINTR)
            continue;
        return r < 0 ? -1 : r;
    }
}

static int try_addr(const struct addrinfo *ai, int timeout_ms, int *err)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
        *err = errno;
        return -1;
    }
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
        return fd;
    if (errno == EINPROGRESS) {
        int r = wait_fd(fd, POLLOUT, timeout_ms);
        socklen_t l = sizeof *err;
        if (r == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, err, &l) == 0 && *err == 0)
            return fd;
        if (r == 0)
            *err = ETIMEDOUT;
    } else {
        *err = errno;
    }
    close(fd);
    return -1;
}

int silt_mqtt_conn_open(silt_mqtt_conn *c, const char *host, int port, int timeout_ms)
{
    memset(c, 0, sizeof *c);
    c->fd = -1;
    c->io_timeout_ms = timeout_ms;
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_family = AF_UNSPEC}, *res = NULL;
    int g = getaddrinfo(host, ps, &hints, &res);
    if (g)
        return silt_err(SILT_EIO, "mqtt: cannot connect to %s:%d: %s", host, port, gai_strerror(g));
    int err = ECONNREFUSED;
    for (struct addrinfo *ai = res; ai && c->fd < 0; ai = ai->ai_next)
        c->fd = try_addr(ai, timeout_ms, &err);
    freeaddrinfo(res);
    if (c->fd < 0)
        return silt_err(SILT_EIO, "mqtt: cannot connect to %s:%d: %s", host, port, strerror(err));
    return 0;
}

int silt_mqtt_conn_send(silt_mqtt_conn *c, const silt_buf *b)
{
    size_t off = 0;
    while (off < b->len) {
        ssize_t w = send(c->fd, b->data + off, b->len - off, MSG_NOSIGNAL);
        if (w > 0) {
            off += (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && wait_fd(c->fd, POLLOUT, c->io_timeout_ms) == 1)
            continue;
        return silt_err(SILT_EIO, "mqtt: sending to the broker: %s", w < 0 ? strerror(errno) : "timed out");
    }
    return 0;
}

/* Reads what the socket has (waiting up to ms): 1 = bytes read, 0 = none. */
static int fill(silt_mqtt_conn *c, int ms)
{
    if (c->used) { /* drop the decoded prefix */
        memmove(c->in.data, c->in.data + c->used, c->in.len - c->used);
        c->in.len -= c->used;
        c->used = 0;
    }
    int r = wait_fd(c->fd, POLLIN, ms);
    if (r < 0)
        return silt_err(SILT_EIO, "mqtt: waiting for the broker: %s", strerror(errno));
    if (r == 0)
        return 0;
    if (silt_buf_reserve(&c->in, 65536))
        return silt_err(SILT_ENOMEM, "mqtt: out of memory");
    ssize_t n = recv(c->fd, c->in.data + c->in.len, 65536, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
        return 0;
    if (n < 0)
        return silt_err(SILT_EIO, "mqtt: reading from the broker: %s", strerror(errno));
    if (n == 0)
        return silt_err(SILT_EIO, "mqtt: the broker closed the connection");
    c->in.len += (size_t)n;
    return 1;
}

int silt_mqtt_conn_next(silt_mqtt_conn *c, silt_mqtt_pkt *p, int wait_ms)
{
    for (;;) {
        size_t used = 0;
        int rc = c->in.data ? silt_mqtt_decode((const uint8_t *)c->in.data + c->used, c->in.len - c->used, p, &used)
                            : 0;
        if (rc < 0)
            return rc;
        if (rc == 1) {
            c->used += used;
            return 1;
        }
        rc = fill(c, wait_ms);
        if (rc <= 0)
            return rc;
    }
}

void silt_mqtt_conn_close(silt_mqtt_conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    silt_buf_free(&c->in);
}
