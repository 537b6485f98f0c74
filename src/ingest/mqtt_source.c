/* mqtt_source.c — the subscriber session of an MQTT push source (see
 * mqtt_source.h, docs/ingestion.md "Mqtt").
 *
 * PUBLISH packets that arrive back to back form a batch (at most
 * BATCH_MAX), handled in this order: duplicate check against the packet-id
 * table; the payloads read with the source's read step (an engine kept for
 * the session) into NDJSON records; one MSG frame per message appended to
 * the wal with one write and one fdatasync under `<source>.lock`; only then
 * the PUBACKs / PUBRECs. A PUBREL
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
    if (s->sc.torn && ftruncate(s->fd, (long long)s->sc.valid_end) != 0)
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

/* One frame to append: a REL (m.rel) or a MSG with records. */
typedef struct frame {
    silt_pbuf_msg m;
    const char *const *recs;
    const size_t *lens;
    size_t n;
} frame;

static int encode_frames(sess *s, silt_buf *b, const frame *f, size_t nf)
{
    int rc = 0;
    if (s->sc.valid_end == 0 && silt_buf_append(b, SILT_PBUF_HEADER, SILT_PBUF_HEADER_LEN))
        rc = silt_err(SILT_ENOMEM, "mqtt: out of memory");
    uint64_t seq = s->sc.next_seq;
    for (size_t i = 0; !rc && i < nf; i++) {
        rc = f[i].m.rel ? silt_pbuf_encode_rel(b, seq, f[i].m.id)
                        : silt_pbuf_encode_msg(b, seq, &f[i].m, f[i].recs, f[i].lens, f[i].n);
        seq += f[i].n;
    }
    return rc;
}

/* Appends the frames with one write and one fdatasync under the source
 * lock, then applies them to the scan and the table. */
static int append(sess *s, const frame *f, size_t nf)
{
    if (nf == 0)
        return 0;
    int lk = silt_fs_lock(s->lock_path, true), rc = lk < 0 ? lk : 0;
    if (!rc && !unchanged(s))
        rc = reload(s);
    silt_buf b = SILT_BUF_INIT;
    if (!rc)
        rc = encode_frames(s, &b, f, nf);
    if (!rc)
        rc = silt_fs_pwrite_all(s->fd, b.data, b.len, (long long)s->sc.valid_end, s->wal);
    if (!rc && fdatasync(s->fd) != 0)
        rc = silt_err(SILT_EIO, "%s: fsync: %s", s->wal, strerror(errno));
    if (!rc) {
        if (s->sc.valid_end == 0)
            s->sc.base_seq = s->sc.drop_before = s->sc.next_seq;
        s->sc.valid_end += b.len;
        s->sc.frames += nf;
        for (size_t i = 0; i < nf; i++) {
            s->sc.next_seq += f[i].n;
            note_msg(s->tab, &f[i].m);
        }
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

typedef silt_pbuf_lines recs; /* push_buffer.h */

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
        rc = silt_pbuf_lines_split(r);
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

/* ---- batches of PUBLISH packets ------------------------------------------------- */

#define BATCH_MAX 64

/* A received PUBLISH, copied out of the connection's buffer. */
typedef struct bmsg {
    uint16_t id;
    int qos;
    bool dup_flag;
    char *topic;       /* NUL-terminated copy */
    uint8_t *payload;  /* copy */
    size_t len;
    uint64_t hash;     /* of topic and payload */
    bool duplicate;    /* a redelivery: acknowledge, store nothing */
    recs r;
} bmsg;

typedef struct batch {
    bmsg m[BATCH_MAX];
    size_t n;
} batch;

static void batch_clear(batch *b)
{
    for (size_t i = 0; i < b->n; i++) {
        free(b->m[i].topic);
        free(b->m[i].payload);
        silt_pbuf_lines_free(&b->m[i].r);
    }
    b->n = 0;
}

static int batch_add(batch *b, const silt_mqtt_pkt *p)
{
    bmsg *m = &b->m[b->n];
    memset(m, 0, sizeof *m);
    m->topic = malloc(p->topic_len + 1);
    m->payload = malloc(p->payload_len ? p->payload_len : 1);
    if (!m->topic || !m->payload) {
        free(m->topic);
        free(m->payload);
        return silt_err(SILT_ENOMEM, "mqtt: out of memory");
    }
    memcpy(m->topic, p->topic, p->topic_len);
    m->topic[p->topic_len] = '\0';
    memcpy(m->payload, p->payload, p->payload_len);
    m->len = p->payload_len;
    m->id = p->id;
    m->qos = p->qos;
    m->dup_flag = p->dup;
    uint64_t h = fnv(0xcbf29ce484222325ull, p->topic, p->topic_len);
    m->hash = fnv(fnv(h, "", 1), p->payload, p->payload_len);
    b->n++;
    return 0;
}

/* QoS 2: the id is held (stored, not released) — the broker re-sends the
 * PUBLISH until it sees PUBREC. QoS 1: a DUP whose topic and payload are
 * those of the newest message with the id (docs/ingestion.md, the
 * residual case). Earlier messages of the batch count as stored. */
static bool is_duplicate(const sess *s, const batch *b, size_t i)
{
    const bmsg *m = &b->m[i];
    pid_ent e = s->tab[m->id];
    for (size_t j = 0; j < i; j++)
        if (b->m[j].qos && b->m[j].id == m->id && !b->m[j].duplicate)
            e = (pid_ent){true, (uint8_t)b->m[j].qos, b->m[j].hash};
    if (m->qos == 2)
        return e.live && e.qos == 2;
    return m->qos == 1 && m->dup_flag && e.live && e.qos == 1 && e.hash == m->hash;
}

static bool parse_error(int rc) { return rc == SILT_EINVAL || rc == SILT_EVALIDATION || rc == SILT_ECORRUPT; }

static void reject(sess *s, const bmsg *m)
{
    say(s, "mqtt: source '%s': dropped a message on topic '%s' (its payload does not parse: %s)", s->source, m->topic,
        silt_error_last());
    silt_err_clear();
    s->st->rejected++;
}

/* Non-blank lines of an NdJson payload: the records it must give. */
static size_t ndjson_lines(const bmsg *m)
{
    size_t n = 0;
    bool blank = true;
    for (size_t i = 0; i <= m->len; i++) {
        if (i == m->len || m->payload[i] == '\n') {
            n += !blank;
            blank = true;
        } else if (m->payload[i] != ' ' && m->payload[i] != '\t' && m->payload[i] != '\r') {
            blank = false;
        }
    }
    return n;
}

/* Gives each new message of the batch its lines of `r` (in order); the
 * first new message takes ownership of the text. */
static int share_records(batch *b, recs *r)
{
    size_t k = 0;
    bool owner = false;
    for (size_t i = 0; i < b->n; i++) {
        bmsg *m = &b->m[i];
        if (m->duplicate)
            continue;
        size_t c = ndjson_lines(m);
        m->r.v = malloc((c ? c : 1) * sizeof *m->r.v);
        m->r.len = malloc((c ? c : 1) * sizeof *m->r.len);
        if (!m->r.v || !m->r.len)
            return silt_err(SILT_ENOMEM, "mqtt: out of memory");
        for (size_t j = 0; j < c; j++, k++) {
            m->r.v[j] = r->v[k];
            m->r.len[j] = r->len[k];
        }
        m->r.n = c;
        if (!owner) {
            m->r.text = r->text;
            r->text = (silt_buf)SILT_BUF_INIT;
            owner = true;
        }
    }
    return 0;
}

/* NdJson: every new payload of the batch read at once; 1 = done, 0 = read
 * them one by one (a payload failed, or the rows do not split by lines). */
static int read_together(sess *s, batch *b)
{
    if (s->read->type != ODF_ReadStep_NdJson)
        return 0;
    silt_buf all = SILT_BUF_INIT;
    size_t want = 0, fresh = 0;
    int rc = 0;
    for (size_t i = 0; !rc && i < b->n; i++)
        if (!b->m[i].duplicate) {
            fresh++;
            want += ndjson_lines(&b->m[i]);
            if (silt_buf_append(&all, b->m[i].payload, b->m[i].len) || silt_buf_putc(&all, '\n'))
                rc = silt_err(SILT_ENOMEM, "mqtt: out of memory");
        }
    recs r;
    memset(&r, 0, sizeof r);
    if (!rc && fresh)
        rc = read_payload(s, (const uint8_t *)all.data, all.len, &r);
    silt_buf_free(&all);
    if (!rc && fresh && r.n == want)
        rc = share_records(b, &r) ? -1 : 1;
    else if (parse_error(rc))
        rc = (silt_err_clear(), 0);
    else if (!rc)
        rc = fresh ? 0 : 1;
    silt_pbuf_lines_free(&r);
    return rc == -1 ? SILT_ENOMEM : rc;
}

static int read_batch(sess *s, batch *b)
{
    int rc = read_together(s, b);
    if (rc)
        return rc < 0 ? rc : 0;
    for (size_t i = 0; !rc && i < b->n; i++) {
        bmsg *m = &b->m[i];
        if (m->duplicate)
            continue;
        rc = read_payload(s, m->payload, m->len, &m->r);
        if (parse_error(rc)) {
            silt_pbuf_lines_free(&m->r);
            reject(s, m);
            rc = 0;
        }
    }
    return rc;
}

/* Stores the batch (one fsync) and only then acknowledges it. */
static int flush_batch(sess *s, batch *b)
{
    if (b->n == 0)
        return 0;
    frame f[BATCH_MAX];
    size_t nf = 0;
    for (size_t i = 0; i < b->n; i++) {
        b->m[i].duplicate = b->m[i].qos && is_duplicate(s, b, i);
        s->st->duplicates += b->m[i].duplicate;
    }
    int rc = read_batch(s, b);
    for (size_t i = 0; !rc && i < b->n; i++) {
        bmsg *m = &b->m[i];
        if (m->duplicate || (!m->r.n && !m->qos))
            continue;
        f[nf++] = (frame){{.id = m->id, .qos = (uint8_t)m->qos, .hash = m->hash}, m->r.v, m->r.len, m->r.n};
        s->st->messages += m->r.n > 0;
        s->st->records += m->r.n;
    }
    if (!rc)
        rc = append(s, f, nf);
    silt_buf acks = SILT_BUF_INIT;
    for (size_t i = 0; !rc && i < b->n; i++)
        if (b->m[i].qos)
            rc = silt_mqtt_encode_ack(&acks, b->m[i].qos == 1 ? SILT_MQTT_PUBACK : SILT_MQTT_PUBREC, b->m[i].id);
    if (!rc && acks.len)
        rc = send_pkt(s, &acks, 0);
    silt_buf_free(&acks);
    batch_clear(b);
    return rc;
}

static int on_pubrel(sess *s, uint16_t id)
{
    int rc = 0;
    if (s->tab[id].live && s->tab[id].qos == 2) {
        frame f = {{.rel = true, .id = id}, NULL, NULL, 0};
        rc = append(s, &f, 1);
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

/* Handles the packets that have arrived (waiting up to 100 ms for the
 * first): consecutive PUBLISH packets form one batch, stored before any
 * later packet (a PUBREL for one of them) is handled. */
static int step(sess *s, const silt_mqtt_target *t, batch *b)
{
    silt_mqtt_pkt p;
    int rc = silt_mqtt_conn_next(&s->conn, &p, 100);
    while (rc == 1) {
        if (p.type == SILT_MQTT_PUBLISH) {
            s->last_msg_ms = now_ms();
            rc = batch_add(b, &p);
            if (!rc && b->n == BATCH_MAX)
                rc = flush_batch(s, b);
        } else {
            rc = flush_batch(s, b);
            if (!rc)
                rc = on_packet(s, &p, t);
        }
        if (!rc)
            rc = silt_mqtt_conn_next(&s->conn, &p, 0);
    }
    int frc = flush_batch(s, b);
    return rc ? rc : frc;
}

static int loop(sess *s, const silt_mqtt_target *t)
{
    int64_t start = now_ms();
    int rc = 0;
    batch *b = calloc(1, sizeof *b);
    if (!b)
        return silt_err(SILT_ENOMEM, "mqtt: out of memory");
    while (!rc && !done(s, start)) {
        rc = step(s, t, b);
        if (!rc)
            rc = keepalive(s);
    }
    batch_clear(b);
    free(b);
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
