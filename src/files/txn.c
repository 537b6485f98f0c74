/* txn.c — Foundry-style transactions on files datasets: start, put, rm,
 * commit, abort, list (see silt.h).
 *
 * On disk, in the dataset directory:
 *   txn/<rid>          the record, JSON {rid, type, branch, status, created,
 *                      closed, block}, always replaced atomically;
 *   txn/<rid>.staged   the staging journal, one line per put/rm
 *                      ("P\t<multihash>\t<size>\t<path>\n", "R\t-\t0\t<path>\n"),
 *                      appended with O_APPEND + fsync; a torn last line (no
 *                      newline) is ignored;
 *   txn/<rid>.committing  the commit intent, written before the AddData is
 *                      published and removed once the record is final;
 *   txn/open-<branch>  the rid of the branch's OPEN transaction;
 *   txn/lock-<branch>  flock'd for every state change of the branch's
 *                      transactions (released by the kernel even on SIGKILL).
 * Invariants:
 *  - at most one OPEN transaction per branch: start creates open-<branch>
 *    under the branch lock, BEFORE the record (a marker without an OPEN
 *    record is stale and is cleared by the next start);
 *  - the chain decides: an AddData carrying the rid is the commit. A crash
 *    between the ref compare-and-swap and the record update leaves the record
 *    OPEN (with its commit intent); every reader of such a record first looks
 *    for its AddData on the branch (newer than its creation) and completes
 *    the record (recover());
 *  - commit holds the branch lock throughout, so a transaction is committed
 *    at most once; a lost compare-and-swap (another writer on the branch) is
 *    retried from a fresh view.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <unistd.h>

#include "dataset/dataset_internal.h"
#include "files/files.h"
#include "files/txn.h"
#include "util/error.h"
#include "util/fsutil.h"
#include "util/hash.h"

typedef struct rec {
    silt_txn_info i;
} rec;

static char *txn_path(silt_dataset *ds, const char *name)
{
    char *p = silt_path_join(ds->dir, "txn", name, NULL);
    if (!p)
        silt_err(SILT_ENOMEM, "out of memory");
    return p;
}

static bool rid_valid(const char *rid)
{
    size_t pl = strlen(SILT_TXN_RID_PREFIX);
    if (!rid || strncmp(rid, SILT_TXN_RID_PREFIX, pl) != 0 || strlen(rid) != SILT_TXN_RID_LEN)
        return false;
    for (const char *p = rid + pl; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') || *p == '-'))
            return false;
    return true;
}

/* Takes the lock of `branch`'s transactions; returns the fd or < 0. */
static int lock_branch(silt_dataset *ds, const char *branch)
{
    char *dir = txn_path(ds, "");
    int rc = dir ? silt_fs_mkdirs(dir) : SILT_ENOMEM;
    free(dir);
    if (rc)
        return rc;
    char name[128];
    snprintf(name, sizeof name, "lock-%s", branch);
    char *p = txn_path(ds, name);
    if (!p)
        return SILT_ENOMEM;
    int fd = silt_fs_lock(p, true);
    free(p);
    return fd;
}

static void unlock_branch(int fd) { silt_fs_unlock(fd); }

static int rec_save(silt_dataset *ds, const rec *r)
{
    json_t *j = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "rid", r->i.rid, "type", silt_txn_type_name(r->i.type),
                          "branch", r->i.branch, "status", silt_txn_status_name(r->i.status), "created",
                          r->i.created, "closed", r->i.closed, "block", r->i.block);
    char *text = j ? json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(j);
    char *p = txn_path(ds, r->i.rid);
    int rc = text && p ? 0 : silt_err(SILT_ENOMEM, "out of memory");
    if (!rc)
        rc = silt_fs_write_atomic(p, text, strlen(text), false);
    free(text);
    free(p);
    return rc;
}

static int rec_load(silt_dataset *ds, const char *rid, rec *r)
{
    memset(r, 0, sizeof *r);
    if (!rid_valid(rid))
        return silt_err(SILT_EINVAL, "invalid transaction rid '%s' (expected %s<uuid>)", rid ? rid : "",
                        SILT_TXN_RID_PREFIX);
    char *p = txn_path(ds, rid);
    if (!p)
        return SILT_ENOMEM;
    silt_buf b = SILT_BUF_INIT;
    int rc = silt_fs_read(p, &b);
    free(p);
    if (rc == SILT_ENOTFOUND)
        rc = silt_err(SILT_ENOTFOUND, "transaction %s not found in dataset '%s'", rid, ds->name);
    json_t *j = NULL;
    if (!rc) {
        json_error_t e;
        j = json_loads(b.data, 0, &e);
        if (!j)
            rc = silt_err(SILT_ECORRUPT, "txn/%s: invalid JSON: %s", rid, e.text);
    }
    const char *ty = j ? json_string_value(json_object_get(j, "type")) : NULL;
    const char *st = j ? json_string_value(json_object_get(j, "status")) : NULL;
    const char *br = j ? json_string_value(json_object_get(j, "branch")) : NULL;
    if (!rc && (!ty || !st || !br || silt_txn_type_parse(&r->i.type, ty) < 0))
        rc = silt_err(SILT_ECORRUPT, "txn/%s: missing or invalid type/status/branch", rid);
    if (!rc) {
        snprintf(r->i.rid, sizeof r->i.rid, "%s", rid);
        snprintf(r->i.branch, sizeof r->i.branch, "%s", br);
        if (strcmp(st, "OPEN") == 0)
            r->i.status = SILT_TXN_OPEN;
        else if (strcmp(st, "COMMITTED") == 0)
            r->i.status = SILT_TXN_COMMITTED;
        else if (strcmp(st, "ABORTED") == 0)
            r->i.status = SILT_TXN_ABORTED;
        else
            rc = silt_err(SILT_ECORRUPT, "txn/%s: invalid status '%s'", rid, st);
        const char *c = json_string_value(json_object_get(j, "created"));
        const char *cl = json_string_value(json_object_get(j, "closed"));
        const char *bl = json_string_value(json_object_get(j, "block"));
        snprintf(r->i.created, sizeof r->i.created, "%s", c ? c : "");
        snprintf(r->i.closed, sizeof r->i.closed, "%s", cl ? cl : "");
        snprintf(r->i.block, sizeof r->i.block, "%s", bl ? bl : "");
    }
    json_decref(j);
    silt_buf_free(&b);
    return rc;
}

/* Reads the marker of `branch` into rid (64 bytes); 0 ok, ENOTFOUND none. */
static int marker_read(silt_dataset *ds, const char *branch, char *rid)
{
    char name[128];
    snprintf(name, sizeof name, "open-%s", branch);
    char *p = txn_path(ds, name);
    if (!p)
        return SILT_ENOMEM;
    silt_buf b = SILT_BUF_INIT;
    int rc = silt_fs_read(p, &b);
    free(p);
    if (!rc)
        snprintf(rid, 64, "%s", b.data ? b.data : "");
    silt_buf_free(&b);
    return rc;
}

static int marker_remove(silt_dataset *ds, const char *branch)
{
    char name[128];
    snprintf(name, sizeof name, "open-%s", branch);
    char *p = txn_path(ds, name);
    if (!p)
        return SILT_ENOMEM;
    int rc = 0;
    if (unlink(p) != 0 && errno != ENOENT)
        rc = silt_err(SILT_EIO, "%s: %s", p, strerror(errno));
    free(p);
    return rc;
}

/* Opens a second handle on the transaction's branch. */
static int open_branch(silt_dataset *ds, const char *branch, silt_dataset **out)
{
    return silt_ds_open_dir(out, ds->ws, ds->dir, branch);
}

/* Completes an OPEN record whose AddData is already on the branch (crash
 * after the compare-and-swap). Caller holds the branch lock. */
static int recover(silt_dataset *ds, rec *r)
{
    if (r->i.status != SILT_TXN_OPEN)
        return 0;
    /* only a transaction whose commit was attempted can be on the chain */
    char name[96];
    snprintf(name, sizeof name, "%s.committing", r->i.rid);
    char *ip = txn_path(ds, name);
    if (!ip)
        return SILT_ENOMEM;
    bool attempted = silt_fs_exists(ip);
    free(ip);
    if (!attempted)
        return 0;
    silt_dataset *b = NULL;
    int rc = open_branch(ds, r->i.branch, &b);
    if (rc == SILT_ENOTFOUND) { /* branch deleted: nothing can have been committed there */
        silt_err_clear();
        return 0;
    }
    silt_time created;
    int64_t nb = -1;
    if (!rc && silt_time_parse(r->i.created, &created) == 0)
        nb = silt_time_to_ms(created) - 1000;
    silt_err_clear();
    uint8_t blk[SILT_MH_LEN];
    int found = rc ? rc : silt_files_find_commit(b, r->i.rid, nb, blk);
    if (found < 0)
        rc = found;
    if (found == 1) {
        r->i.status = SILT_TXN_COMMITTED;
        silt_multihash_to_text(blk, SILT_MH_LEN, r->i.block);
        silt_time_format(silt_time_from_ms(silt_time_to_ms(silt_time_now())), r->i.closed);
        rc = rec_save(ds, r);
        char m[64];
        if (!rc && marker_read(ds, r->i.branch, m) == 0 && strcmp(m, r->i.rid) == 0)
            rc = marker_remove(ds, r->i.branch);
        silt_err_clear();
    }
    silt_dataset_free(b);
    return rc;
}

static int not_open(const rec *r)
{
    return silt_err(SILT_ECONFLICT, "TransactionNotOpen: transaction %s is %s", r->i.rid,
                    silt_txn_status_name(r->i.status));
}

static int gen_rid(char *out)
{
    uint8_t u[16];
    if (getrandom(u, sizeof u, 0) != (ssize_t)sizeof u)
        return silt_err(SILT_EIO, "cannot get random bytes: %s", strerror(errno));
    u[6] = (uint8_t)((u[6] & 0x0f) | 0x40);
    u[8] = (uint8_t)((u[8] & 0x3f) | 0x80);
    snprintf(out, 64,
             SILT_TXN_RID_PREFIX "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
             u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
    return 0;
}

int silt_txn_start(char **rid_out, silt_dataset *ds, silt_txn_type type)
{
    *rid_out = NULL;
    if (type < SILT_TXN_SNAPSHOT || type > SILT_TXN_DELETE)
        return silt_err(SILT_EINVAL, "invalid transaction type %d", (int)type);
    int rc = silt_files_require(ds);
    if (rc)
        return rc;
    int fd = lock_branch(ds, ds->branch);
    if (fd < 0)
        return fd;
    char cur[64];
    rc = marker_read(ds, ds->branch, cur);
    if (rc == 0) {
        rec o;
        int r2 = rec_load(ds, cur, &o);
        if (r2 == 0)
            r2 = recover(ds, &o);
        if (r2 == 0 && o.i.status == SILT_TXN_OPEN)
            rc = silt_err(SILT_ECONFLICT, "branch %s of %s already has an open transaction %s", ds->branch,
                          ds->name, cur);
        else if (r2 == 0 || r2 == SILT_ENOTFOUND || r2 == SILT_EINVAL)
            rc = marker_remove(ds, ds->branch); /* stale marker */
        else
            rc = r2;
    } else if (rc == SILT_ENOTFOUND) {
        silt_err_clear();
        rc = 0;
    }
    rec r;
    memset(&r, 0, sizeof r);
    if (!rc)
        rc = gen_rid(r.i.rid);
    if (!rc) {
        char name[128];
        snprintf(name, sizeof name, "open-%s", ds->branch);
        char *p = txn_path(ds, name);
        rc = p ? silt_fs_write_atomic(p, r.i.rid, strlen(r.i.rid), true) : SILT_ENOMEM;
        free(p);
    }
    if (!rc) {
        r.i.type = type;
        r.i.status = SILT_TXN_OPEN;
        snprintf(r.i.branch, sizeof r.i.branch, "%s", ds->branch);
        silt_time_format(silt_time_from_ms(silt_time_to_ms(silt_time_now())), r.i.created);
        rc = rec_save(ds, &r);
        if (rc)
            marker_remove(ds, ds->branch);
    }
    unlock_branch(fd);
    if (rc)
        return rc;
    *rid_out = strdup(r.i.rid);
    return *rid_out ? 0 : silt_err(SILT_ENOMEM, "out of memory");
}

/* Loads the record of rid (recovering it) under its branch lock: *fd_out
 * receives the lock. */
static int load_locked(silt_dataset *ds, const char *rid, rec *r, int *fd_out)
{
    *fd_out = -1;
    int rc = rec_load(ds, rid, r);
    if (rc)
        return rc;
    int fd = lock_branch(ds, r->i.branch);
    if (fd < 0)
        return fd;
    rc = rec_load(ds, rid, r);
    if (!rc)
        rc = recover(ds, r);
    if (rc) {
        unlock_branch(fd);
        return rc;
    }
    *fd_out = fd;
    return 0;
}

/* Appends one journal line (fsync'd). */
static int journal_append(silt_dataset *ds, const char *rid, const char *line)
{
    char name[96];
    snprintf(name, sizeof name, "%s.staged", rid);
    char *p = txn_path(ds, name);
    if (!p)
        return SILT_ENOMEM;
    int rc = 0;
    int fd = open(p, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    size_t len = strlen(line);
    if (fd < 0 || write(fd, line, len) != (ssize_t)len || fsync(fd) != 0)
        rc = silt_err(SILT_EIO, "%s: %s", p, strerror(errno));
    if (fd >= 0)
        close(fd);
    free(p);
    return rc;
}

int silt_txn_put(silt_dataset *ds, const char *rid, const char *local_file, const char *logical_path)
{
    const char *lp = logical_path;
    if (!lp) {
        lp = strrchr(local_file, '/');
        lp = lp ? lp + 1 : local_file;
    }
    char *norm = NULL;
    int rc = silt_files_path_normalize(&norm, lp);
    if (rc)
        return rc;
    rec r;
    rc = rec_load(ds, rid, &r);
    if (!rc && r.i.status != SILT_TXN_OPEN)
        rc = not_open(&r);
    if (!rc && r.i.type == SILT_TXN_DELETE)
        rc = silt_err(SILT_EINVAL, "transaction %s is a DELETE transaction: files cannot be put (use 'txn rm')", rid);
    /* the bytes first (content-addressed; garbage if the put never lands) */
    uint8_t digest[32], mh[SILT_MH_LEN];
    uint64_t size = 0;
    if (!rc)
        rc = silt_sha3_file(local_file, digest, &size);
    if (!rc) {
        silt_multihash_wrap_sha3(digest, mh);
        rc = silt_store_put_file(ds->store, "data", mh, local_file);
    }
    int fd = -1;
    if (!rc)
        rc = load_locked(ds, rid, &r, &fd);
    if (!rc && r.i.status != SILT_TXN_OPEN)
        rc = not_open(&r);
    if (!rc) {
        char text[SILT_MH_TEXT_LEN + 1];
        silt_multihash_to_text(mh, SILT_MH_LEN, text);
        silt_buf line = SILT_BUF_INIT;
        rc = silt_buf_printf(&line, "P\t%s\t%llu\t%s\n", text, (unsigned long long)size, norm);
        if (!rc)
            rc = journal_append(ds, rid, line.data);
        silt_buf_free(&line);
    }
    unlock_branch(fd);
    free(norm);
    return rc;
}

int silt_txn_rm(silt_dataset *ds, const char *rid, const char *logical_path)
{
    char *norm = NULL;
    int rc = silt_files_path_normalize(&norm, logical_path);
    if (rc)
        return rc;
    rec r;
    int fd = -1;
    rc = load_locked(ds, rid, &r, &fd);
    if (!rc && r.i.status != SILT_TXN_OPEN)
        rc = not_open(&r);
    if (!rc && r.i.type != SILT_TXN_DELETE)
        rc = silt_err(SILT_EINVAL, "transaction %s is a %s transaction: only DELETE transactions remove files", rid,
                      silt_txn_type_name(r.i.type));
    if (!rc) {
        silt_buf line = SILT_BUF_INIT;
        rc = silt_buf_printf(&line, "R\t-\t0\t%s\n", norm);
        if (!rc)
            rc = journal_append(ds, rid, line.data);
        silt_buf_free(&line);
    }
    unlock_branch(fd);
    free(norm);
    return rc;
}

/* Parses the journal into changes (strings point into *text). */
static int journal_read(silt_dataset *ds, const char *rid, silt_buf *text, silt_files_change **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    char name[96];
    snprintf(name, sizeof name, "%s.staged", rid);
    char *p = txn_path(ds, name);
    if (!p)
        return SILT_ENOMEM;
    int rc = silt_fs_read(p, text);
    free(p);
    if (rc == SILT_ENOTFOUND) {
        silt_err_clear();
        return 0;
    }
    if (rc)
        return rc;
    size_t cap = 0;
    char *s = text->data;
    while (s && *s) {
        char *nl = strchr(s, '\n');
        if (!nl)
            break; /* torn last line */
        *nl = '\0';
        char *f[4] = {s, NULL, NULL, NULL};
        for (int k = 1; k < 4; k++) {
            char *t = strchr(f[k - 1], '\t');
            if (!t)
                break;
            *t = '\0';
            f[k] = t + 1;
        }
        if (f[3] && (f[0][0] == 'P' || f[0][0] == 'R')) {
            if (*n == cap) {
                cap = cap ? cap * 2 : 64;
                silt_files_change *nc = realloc(*out, cap * sizeof *nc);
                if (!nc) {
                    free(*out);
                    *out = NULL;
                    return silt_err(SILT_ENOMEM, "out of memory");
                }
                *out = nc;
            }
            silt_files_change *c = &(*out)[(*n)++];
            c->remove = f[0][0] == 'R';
            c->content_hash = f[1];
            c->size = strtoull(f[2], NULL, 10);
            c->path = f[3];
        }
        s = nl + 1;
    }
    return 0;
}

int silt_txn_commit(silt_dataset *ds, const char *rid, char *block_out)
{
    rec r;
    int fd = -1;
    int rc = load_locked(ds, rid, &r, &fd);
    if (!rc && r.i.status != SILT_TXN_OPEN)
        rc = not_open(&r);
    bool loaded = rc == 0; /* later errors get the "commit of RID" context */
    silt_buf text = SILT_BUF_INIT;
    silt_files_change *ch = NULL;
    size_t n = 0;
    if (!rc)
        rc = journal_read(ds, rid, &text, &ch, &n);
    silt_dataset *b = NULL;
    if (!rc)
        rc = open_branch(ds, r.i.branch, &b);
    char *intent = NULL;
    if (!rc) { /* the commit intent: from now on readers look for the AddData */
        char name[96];
        snprintf(name, sizeof name, "%s.committing", rid);
        intent = txn_path(ds, name);
        rc = intent ? silt_fs_write_atomic(intent, "", 0, false) : SILT_ENOMEM;
    }
    uint8_t blk[SILT_MH_LEN];
    for (int attempt = 0; !rc; attempt++) {
        rc = silt_files_commit(b, rid, r.i.type, ch, n, blk);
        if (rc != SILT_ECONFLICT || attempt >= 20)
            break;
        int f = silt_files_find_commit(b, rid, -1, blk);
        if (f == 1) {
            rc = 0;
            break;
        }
        rc = f < 0 ? f : 0;
        char rnd[3]; /* jittered backoff, 1..20 ms */
        usleep(1000u * (unsigned)(1 + (silt_random_hex(rnd, 1) ? 0 : strtoul(rnd, NULL, 16) % 20)));
    }
    if (!rc) {
        r.i.status = SILT_TXN_COMMITTED;
        silt_multihash_to_text(blk, SILT_MH_LEN, r.i.block);
        silt_time_format(silt_time_from_ms(silt_time_to_ms(silt_time_now())), r.i.closed);
        rc = rec_save(ds, &r);
        if (!rc)
            rc = marker_remove(ds, r.i.branch);
        if (!rc && block_out)
            memcpy(block_out, r.i.block, SILT_MH_TEXT_LEN + 1);
    }
    if (intent && !rc)
        unlink(intent); /* the record is final */
    free(intent);
    if (rc && loaded)
        silt_err_context(rc, "commit of %s", rid);
    silt_dataset_free(b);
    free(ch);
    silt_buf_free(&text);
    unlock_branch(fd);
    return rc;
}

int silt_txn_abort(silt_dataset *ds, const char *rid)
{
    rec r;
    int fd = -1;
    int rc = load_locked(ds, rid, &r, &fd);
    if (!rc && r.i.status != SILT_TXN_OPEN)
        rc = not_open(&r);
    if (!rc) {
        r.i.status = SILT_TXN_ABORTED;
        silt_time_format(silt_time_from_ms(silt_time_to_ms(silt_time_now())), r.i.closed);
        rc = rec_save(ds, &r);
    }
    char m[64];
    if (!rc && marker_read(ds, r.i.branch, m) == 0 && strcmp(m, rid) == 0)
        rc = marker_remove(ds, r.i.branch);
    else if (!rc)
        silt_err_clear();
    unlock_branch(fd);
    return rc;
}

int silt_txn_get(silt_txn_info *out, silt_dataset *ds, const char *rid)
{
    rec r;
    int fd = -1;
    int rc = load_locked(ds, rid, &r, &fd);
    unlock_branch(fd);
    if (!rc)
        *out = r.i;
    return rc;
}

static int cmp_info(const void *a, const void *b)
{
    const silt_txn_info *x = a, *y = b;
    silt_time tx = {0, 0}, ty = {0, 0};
    silt_time_parse(x->created, &tx);
    silt_time_parse(y->created, &ty);
    int c = silt_time_cmp(tx, ty);
    return c ? c : strcmp(x->rid, y->rid);
}

int silt_txn_list(silt_txn_info **out, size_t *n_out, silt_dataset *ds)
{
    *out = NULL;
    *n_out = 0;
    char *dir = txn_path(ds, "");
    if (!dir)
        return SILT_ENOMEM;
    DIR *d = opendir(dir);
    free(dir);
    if (!d)
        return 0; /* no transaction yet */
    silt_txn_info *v = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    struct dirent *e;
    while (!rc && (e = readdir(d)) != NULL) {
        if (!rid_valid(e->d_name))
            continue;
        silt_txn_info i;
        rc = silt_txn_get(&i, ds, e->d_name);
        if (rc == SILT_ENOTFOUND || rc == SILT_ECORRUPT) {
            silt_err_clear(); /* vanished or unreadable: skipped (verify reports it) */
            rc = 0;
            continue;
        }
        if (rc)
            break;
        bool mine = strcmp(i.branch, ds->branch) == 0;
        if (!mine && i.status == SILT_TXN_COMMITTED) {
            uint8_t blk[SILT_MH_LEN];
            int f = silt_files_find_commit(ds, i.rid, -1, blk); /* inherited from the parent */
            if (f < 0) {
                rc = f;
                break;
            }
            mine = f == 1;
        }
        if (!mine)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 32;
            silt_txn_info *nv = realloc(v, cap * sizeof *nv);
            if (!nv) {
                rc = silt_err(SILT_ENOMEM, "out of memory");
                break;
            }
            v = nv;
        }
        v[n++] = i;
    }
    closedir(d);
    if (rc) {
        free(v);
        return rc;
    }
    if (n)
        qsort(v, n, sizeof *v, cmp_info);
    *out = v;
    *n_out = n;
    return 0;
}

/* For branch.c: rid of the branch's OPEN transaction into rid (64 bytes, ""
 * when none). Caller may hold the branch lock (lock_held). */
int silt_txn_open_on_branch(silt_dataset *ds, const char *branch, char *rid)
{
    rid[0] = '\0';
    char m[64];
    int rc = marker_read(ds, branch, m);
    if (rc == SILT_ENOTFOUND) {
        silt_err_clear();
        return 0;
    }
    if (rc)
        return rc;
    rec r;
    rc = rec_load(ds, m, &r);
    if (rc == SILT_ENOTFOUND || rc == SILT_EINVAL) {
        silt_err_clear();
        return 0;
    }
    if (!rc)
        rc = recover(ds, &r);
    if (!rc && r.i.status == SILT_TXN_OPEN)
        snprintf(rid, 64, "%s", m);
    return rc;
}

int silt_txn_lock_branch(silt_dataset *ds, const char *branch) { return lock_branch(ds, branch); }
void silt_txn_unlock_branch(int fd) { unlock_branch(fd); }

/* ---- read-only access for verify and gc --------------------------------- */

bool silt_txn_rid_valid(const char *rid) { return rid_valid(rid); }

int silt_txn_read_record(silt_dataset *ds, const char *rid, silt_txn_info *out)
{
    rec r;
    int rc = rec_load(ds, rid, &r);
    if (!rc)
        *out = r.i;
    return rc;
}

bool silt_txn_commit_attempted(silt_dataset *ds, const char *rid)
{
    char name[96];
    snprintf(name, sizeof name, "%s.committing", rid);
    char *p = txn_path(ds, name);
    bool yes = p && silt_fs_exists(p);
    free(p);
    silt_err_clear();
    return yes;
}

int silt_txn_staged(silt_dataset *ds, const char *rid, silt_buf *text, silt_files_change **out, size_t *n)
{
    return journal_read(ds, rid, text, out, n);
}
