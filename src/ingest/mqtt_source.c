/* mqtt_source.c — the subscriber session of an MQTT push source (see
 * mqtt_source.h, docs/ingestion.md "Mqtt").
 *
 * A PUBLISH is handled in this order: duplicate check against the packet-id
 * table; the payload read with the source's read step (an engine kept for
 * the session) into NDJSON records; one MSG frame appended to the wal and
 * fdatasync'ed under `<source>.lock`; only then PUBACK / PUBREC. A PUBREL
 * is recorded as a REL frame (fsynced) before PUBCOMP. The table (per
 * packet id: the newest MSG unless released) is rebuilt from the file
 * whenever the file is not the one this session last wrote (a flush
 * compacted it, or this is a new session). */
#include "ingest/mqtt_source.h"

#include "dataset/data_views.h"
#include "dataset/dataset_internal.h"
#include "engine/engine.h"
#include "engine/read.h"
#include "ingest/mqtt_client.h"
#include "ingest/push_buffer.h"
#include "util/error.h"
#include "util/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define KEEPALIVE_S 30
#define IO_TIMEOUT_MS 10000

typedef struct pid_ent {
    bool live;
    uint8_t qos;
    uint64_t hash;
} pid_ent;

typedef struct sess {
    silt_dataset *ds;
    const char *source;
    const odf_union *read;
    const silt_mqtt_run_opts *o;
    silt_mqtt_run_stats *st;
    silt_engine *e;
    char *tmp;      /* engine scratch dir */
    char *dir;      /* <.silt>/buffers/<dataset id> */
    char *wal;
    char *lock_path; /* <source>.lock: appends and flushes */
    int fd;         /* the wal as last written, -1: none */
    struct stat fst; /* of fd after our last write */
    silt_pbuf_scan sc;
    pid_ent *tab;   /* 65536 */
    silt_mqtt_conn conn;
    int64_t last_send_ms, last_msg_ms;
    bool subscribed, ping_out;
} sess;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

void silt_mqtt_client_id(const silt_dataset *ds, const char *source, char out[40])
{
    size_t l = strlen(ds->id);
    const char *tail = l > 16 ? ds->id + l - 16 : ds->id;
    unsigned h = (unsigned)(fnv(0xcbf29ce484222325ull, source, strlen(source)) & 0xffffffffu);
    snprintf(out, 40, "silt-%.16s-%08x", tail, h);
}

static void say(sess *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(sess *s, const char *fmt, ...)
{
    if (!s->o->log)
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    char *r = silt_config_redact(s->o->cfg, line);
    s->o->log(s->o->log_ctx, r ? r : "mqtt: (a message could not be redacted)");
    free(r);
}

/* ---- the wal --------------------------------------------------------------- */

static int note_msg(void *ctx, const silt_pbuf_msg *m)
{
    pid_ent *t = ctx;
    if (m->id == 0)
        return 0;
    if (m->rel)
        t[m->id].live = false;
    else
        t[m->id] = (pid_ent){true, m->qos, m->hash};
    return 0;
}

/* (Re)opens the wal and rebuilds scan and table from it, cutting a torn tail off. */
static int reload(sess *s)
{
    if (s->fd >= 0)
        close(s->fd);
    s->fd = open(s->wal, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (s->fd < 0)
        return silt_err(SILT_EIO, "%s: %s", s->wal, strerror(errno));
    silt_buf b = SILT_BUF_INIT;
    int rc = silt_fs_read(s->wal, &b);
    memset(s->tab, 0, 65536 * sizeof *s->tab);
    if (!rc)
        rc = silt_pbuf_parse_ex((const uint8_t *)b.data, b.len, &s->sc, NULL, NULL, note_msg, s->tab);
    silt_buf_free(&b);
    if (rc)
        return silt_err_context(rc, "%s", s->wal);
    if (s->sc.torn && ftruncate(s->fd, (off_t)s->sc.valid_end) != 0)
        return silt_err(SILT_EIO, "%s: cannot cut off a torn append: %s", s->wal, strerror(errno));
    if (fstat(s->fd, &s->fst) != 0)
        return silt_err(SILT_EIO, "%s: %s", s->wal, strerror(errno));
    return 0;
}

/* Whether the file at s->wal is still the one s->fd wrote last. */
static bool unchanged(const sess *s)
{
    struct stat st;
    return s->fd >= 0 && stat(s->wal, &st) == 0 && st.st_ino == s->fst.st_ino && st.st_dev == s->fst.st_dev &&
           st.st_size == s->fst.st_size;
}

static int write_at(int fd, const char *p, size_t n, off_t at, const char *path)
{
    while (n) {
        ssize_t w = pwrite(fd, p, n, at);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return silt_err(SILT_EIO, "%s: %s", path, strerror(errno));
        p += w;
        n -= (size_t)w;
        at += w;
    }
    return 0;
}

/* Appends the frame that `enc` encodes at the file's next seq, fsynced.
 * `rel`: a REL for id; else a MSG with recs. */
static int append(sess *s, bool rel, const silt_pbuf_msg *m, const char *const *recs, const size_t *lens, size_t n)
{
    int lk = silt_fs_lock(s->lock_path, true), rc = lk < 0 ? lk : 0;
    if (!rc && !unchanged(s))
        rc = reload(s);
    silt_buf b = SILT_BUF_INIT;
    if (!rc && s->sc.valid_end == 0 && silt_buf_append(&b, SILT_PBUF_HEADER, SILT_PBUF_HEADER_LEN))
        rc = silt_err(SILT_ENOMEM, "mqtt: out of memory");
    if (!rc)
        rc = rel ? silt_pbuf_encode_rel(&b, s->sc.next_seq, m->id)
                 : silt_pbuf_encode_msg(&b, s->sc.next_seq, m, recs, lens, n);
    if (!rc)
        rc = write_at(s->fd, b.data, b.len, (off_t)s->sc.valid_end, s->wal);
    if (!rc && fdatasync(s->fd) != 0)
        rc = silt_err(SILT_EIO, "%s: fsync: %s", s->wal, strerror(errno));
    if (!rc) {
        if (s->sc.valid_end == 0)
            s->sc.base_seq = s->sc.drop_before = s->sc.next_seq;
        s->sc.valid_end += b.len;
        s->sc.next_seq += n;
        s->sc.frames++;
        note_msg(s->tab, m);
        if (fstat(s->fd, &s->fst) != 0)
            rc = silt_err(SILT_EIO, "%s: %s", s->wal, strerror(errno));
    }
    if (rc && s->fd >= 0) { /* reload before the next append */
        close(s->fd);
        s->fd = -1;
    }
    silt_buf_free(&b);
    silt_fs_unlock(lk);
    return rc;
}

/* ---- payload -> records ----------------------------------------------------- */

typedef struct recs {
    silt_buf text;
    const char **v;
    size_t *len;
    size_t n;
} recs;

static void recs_free(recs *r)
{
    silt_buf_free(&r->text);
    free(r->v);
    free(r->len);
    memset(r, 0, sizeof *r);
}

static int split_lines(recs *r)
{
    size_t cap = 1;
    for (size_t i = 0; i < r->text.len; i++)
        cap += r->text.data[i] == '\n';
    r->v = malloc(cap * sizeof *r->v);
    r->len = malloc(cap * sizeof *r->len);
    if (!r->v || !r->len)
        return silt_err(SILT_ENOMEM, "mqtt: out of memory");
    const char *p = r->text.data, *end = p + r->text.len;
    while (p && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl ? nl : end;
        if (e > p) {
            r->v[r->n] = p;
            r->len[r->n++] = (size_t)(e - p);
        }
        p = nl ? nl + 1 : end;
    }
    return 0;
}

static int write_file(const char *path, const uint8_t *p, size_t n)
{
    FILE *f = fopen(path, "we");
    if (!f)
        return silt_err(SILT_EIO, "%s: %s", path, strerror(errno));
    bool ok = fwrite(p, 1, n, f) == n;
    if (fclose(f) != 0 || !ok)
        return silt_err(SILT_EIO, "%s: write failed", path);
    return 0;
}

/* The records of one payload, read with the source's read step. */
static int read_payload(sess *s, const uint8_t *payload, size_t len, recs *r)
{
    char *in = silt_path_join(s->tmp, "message", NULL), *out = silt_path_join(s->tmp, "records.ndjson", NULL);
    char *lit = out ? silt_sql_str(out) : NULL;
    silt_buf sql = SILT_BUF_INIT;
    int rc = !in || !lit || silt_buf_printf(&sql, "COPY (SELECT * FROM __silt_mqtt ORDER BY rowid) TO %s (FORMAT JSON)", lit)
                 ? silt_err(SILT_ENOMEM, "mqtt: out of memory")
                 : write_file(in, payload, len);
    const char *files[1] = {in}, *disp[1] = {"message"};
    if (!rc)
        rc = silt_read_files(s->e, s->read, files, disp, 1, "__silt_mqtt");
    if (!rc)
        rc = silt_engine_exec(s->e, sql.data);
    if (!rc)
        rc = silt_fs_read(out, &r->text);
    if (!rc)
        rc = split_lines(r);
    silt_buf_free(&sql);
    free(lit);
    free(in);
    free(out);
    return rc;
}

/* ---- protocol --------------------------------------------------------------- */

static int send_pkt(sess *s, silt_buf *b, int rc)
{
    if (!rc)
        rc = silt_mqtt_conn_send(&s->conn, b);
    silt_buf_free(b);
    if (!rc)
        s->last_send_ms = now_ms();
    return rc;
}

static int send_ack(sess *s, int type, uint16_t id)
{
    silt_buf b = SILT_BUF_INIT;
    return send_pkt(s, &b, silt_mqtt_encode_ack(&b, type, id));
}

static bool is_duplicate(const sess *s, const silt_mqtt_pkt *p, uint64_t h)
{
    const pid_ent *e = &s->tab[p->id];
    if (p->qos == 2)
        return e->live && e->qos == 2; /* not released: the broker re-sends it */
    return p->qos == 1 && p->dup && e->live && e->qos == 1 && e->hash == h;
}

/* Buffers one message; *stored = false when the payload was rejected. */
static int store_publish(sess *s, const silt_mqtt_pkt *p, uint64_t h)
{
    recs r;
    memset(&r, 0, sizeof r);
    int rc = read_payload(s, p->payload, p->payload_len, &r);
    if (rc == SILT_EINVAL || rc == SILT_EVALIDATION || rc == SILT_ECORRUPT) {
        say(s, "mqtt: source '%s': dropped a message on topic '%.*s' (its payload does not parse: %s)", s->source,
            (int)p->topic_len, p->topic, silt_error_last());
        silt_err_clear();
        s->st->rejected++;
        recs_free(&r);
        rc = 0;
    }
    silt_pbuf_msg m = {.id = p->id, .qos = (uint8_t)p->qos, .hash = h};
    if (!rc && (r.n || p->qos))
        rc = append(s, false, &m, r.v, r.len, r.n);
    if (!rc && r.n) {
        s->st->messages++;
        s->st->records += r.n;
    }
    recs_free(&r);
    return rc;
}

static int on_publish(sess *s, const silt_mqtt_pkt *p)
{
    uint64_t h = fnv(fnv(0xcbf29ce484222325ull, p->topic, p->topic_len), "", 1);
    h = fnv(h, p->payload, p->payload_len);
    s->last_msg_ms = now_ms();
    int rc = 0;
    if (p->qos && is_duplicate(s, p, h))
        s->st->duplicates++;
    else
        rc = store_publish(s, p, h);
    if (!rc && p->qos)
        rc = send_ack(s, p->qos == 1 ? SILT_MQTT_PUBACK : SILT_MQTT_PUBREC, p->id);
    return rc;
}

static int on_pubrel(sess *s, uint16_t id)
{
    int rc = 0;
    if (s->tab[id].live && s->tab[id].qos == 2) {
        silt_pbuf_msg m = {.rel = true, .id = id};
        rc = append(s, true, &m, NULL, NULL, 0);
    }
    return rc ? rc : send_ack(s, SILT_MQTT_PUBCOMP, id);
}

static const char *connack_reason(uint8_t code)
{
    switch (code) {
    case 1: return "unacceptable protocol version";
    case 2: return "client identifier rejected";
    case 3: return "server unavailable";
    case 4: return "bad user name or password";
    case 5: return "not authorized";
    default: return "unknown reason";
    }
}

static int on_packet(sess *s, const silt_mqtt_pkt *p, const silt_mqtt_target *t)
{
    switch (p->type) {
    case SILT_MQTT_PUBLISH:
        return on_publish(s, p);
    case SILT_MQTT_PUBREL:
        return on_pubrel(s, p->id);
    case SILT_MQTT_PINGRESP:
        s->ping_out = false;
        return 0;
    case SILT_MQTT_SUBACK:
        for (size_t i = 0; i < p->ngranted && i < t->ntopics; i++)
            if (p->granted[i] == 0x80)
                return silt_err(SILT_EINVAL, "mqtt: the broker refused the subscription to topic '%s'", t->topics[i]);
        if (p->id != 1 || p->ngranted != t->ntopics)
            return silt_err(SILT_ECORRUPT, "mqtt: unexpected SUBACK from the broker");
        s->subscribed = s->st->subscribed = true;
        s->last_msg_ms = now_ms();
        return 0;
    default:
        return silt_err(SILT_ECORRUPT, "mqtt: unexpected packet of type %d from the broker", p->type);
    }
}

/* CONNECT, CONNACK, SUBSCRIBE (the SUBACK arrives in the loop). */
static int handshake(sess *s, const silt_mqtt_target *t)
{
    char cid[40];
    silt_mqtt_client_id(s->ds, s->source, cid);
    int rc = silt_mqtt_conn_open(&s->conn, t->host, t->port, IO_TIMEOUT_MS);
    silt_buf b = SILT_BUF_INIT;
    if (!rc)
        rc = send_pkt(s, &b, silt_mqtt_encode_connect(&b, cid, t->username, t->password, KEEPALIVE_S, false));
    silt_mqtt_pkt p;
    if (!rc) {
        rc = silt_mqtt_conn_next(&s->conn, &p, IO_TIMEOUT_MS);
        if (rc == 0)
            rc = silt_err(SILT_EIO, "mqtt: %s:%d: no CONNACK within %d s", t->host, t->port, IO_TIMEOUT_MS / 1000);
        else if (rc == 1 && p.type != SILT_MQTT_CONNACK)
            rc = silt_err(SILT_ECORRUPT, "mqtt: %s:%d: the broker did not answer CONNECT with CONNACK", t->host, t->port);
        else if (rc == 1 && p.code)
            rc = silt_err(SILT_EINVAL, "mqtt: %s:%d: the broker refused the connection: %s", t->host, t->port,
                          connack_reason(p.code));
        else if (rc == 1)
            rc = 0;
    }
    if (!rc)
        rc = send_pkt(s, &b, silt_mqtt_encode_subscribe(&b, 1, t->topics, t->qos, t->ntopics));
    return rc;
}

/* Whether the drain / stop conditions hold. */
static bool done(const sess *s, int64_t start)
{
    int64_t now = now_ms();
    if (s->o->stop && s->o->stop(s->o->stop_ctx))
        return true;
    if (s->o->max_ms > 0 && now - start >= s->o->max_ms)
        return true;
    return s->subscribed && s->o->idle_ms > 0 && now - s->last_msg_ms >= s->o->idle_ms;
}

static int keepalive(sess *s)
{
    int64_t now = now_ms();
    if (s->ping_out && now - s->last_send_ms >= KEEPALIVE_S * 1000)
        return silt_err(SILT_EIO, "mqtt: the broker did not answer PINGREQ");
    if (s->ping_out || now - s->last_send_ms < KEEPALIVE_S * 500)
        return 0;
    silt_buf b = SILT_BUF_INIT;
    int rc = send_pkt(s, &b, silt_mqtt_encode_empty(&b, SILT_MQTT_PINGREQ));
    s->ping_out = rc == 0;
    return rc;
}

static int loop(sess *s, const silt_mqtt_target *t)
{
    int64_t start = now_ms();
    int rc = 0;
    while (!rc && !done(s, start)) {
        silt_mqtt_pkt p;
        rc = silt_mqtt_conn_next(&s->conn, &p, 100);
        if (rc == 1)
            rc = on_packet(s, &p, t);
        if (!rc)
            rc = keepalive(s);
    }
    if (!rc) {
        silt_buf b = SILT_BUF_INIT;
        rc = send_pkt(s, &b, silt_mqtt_encode_empty(&b, SILT_MQTT_DISCONNECT));
    }
    return rc;
}

/* ---- the session -------------------------------------------------------------- */

static int sess_open(sess *s, int *session_lock)
{
    s->fd = -1;
    s->tab = calloc(65536, sizeof *s->tab);
    s->dir = silt_path_join(s->ds->ws->root, "buffers", s->ds->id, NULL);
    silt_buf p = SILT_BUF_INIT;
    int rc = !s->tab || !s->dir ? silt_err(SILT_ENOMEM, "mqtt: out of memory") : silt_fs_mkdirs(s->dir);
    if (!rc && silt_buf_printf(&p, "%s/%s.session.lock", s->dir, s->source))
        rc = silt_err(SILT_ENOMEM, "mqtt: out of memory");
    if (!rc) {
        *session_lock = silt_fs_trylock(p.data);
        if (*session_lock < 0)
            rc = silt_err(SILT_ECONFLICT, "mqtt: source '%s' of '%s' is subscribed by another process (silt serve?)",
                          s->source, s->ds->name);
    }
    silt_buf_free(&p);
    silt_buf l = SILT_BUF_INIT;
    if (!rc && silt_buf_printf(&p, "%s/%s.wal", s->dir, s->source) == 0 &&
        silt_buf_printf(&l, "%s/%s.lock", s->dir, s->source) == 0) {
        s->wal = p.data;
        s->lock_path = l.data;
    } else if (!rc) {
        silt_buf_free(&p);
        silt_buf_free(&l);
        rc = silt_err(SILT_ENOMEM, "mqtt: out of memory");
    }
    if (!rc)
        rc = reload(s);
    if (!rc)
        rc = silt_ws_engine_open(s->ds->ws, &s->e, &s->tmp);
    return rc;
}

int silt_mqtt_run(silt_dataset *ds, const char *source, const odf_union *read, const silt_mqtt_target *t,
                  const silt_mqtt_run_opts *o, silt_mqtt_run_stats *st)
{
    sess s;
    memset(&s, 0, sizeof s);
    s.ds = ds;
    s.source = source;
    s.read = read;
    s.o = o;
    s.st = st;
    s.conn.fd = -1;
    int lock = -1;
    int rc = sess_open(&s, &lock);
    if (!rc)
        rc = handshake(&s, t);
    if (!rc)
        rc = loop(&s, t);
    silt_mqtt_conn_close(&s.conn);
    if (s.e)
        rc = silt_ws_engine_close(s.e, s.tmp, rc);
    if (s.fd >= 0)
        close(s.fd);
    silt_fs_unlock(lock);
    free(s.tab);
    free(s.dir);
    free(s.wal);
    free(s.lock_path);
    return rc ? silt_config_redact_error(o->cfg, rc) : 0;
}
