/* txn.c — Foundry-style transactions on files datasets: start, put, rm,
 * commit, abort, list (see silt.h).
 *
 * On disk, in the dataset directory:
 *   txn/<rid>          the record, JSON {rid, type, branch, status, created,
 *                      closed, block[, owner {pid, start, host, boot}]
 *                      [, reason]}, always replaced atomically; `owner` is
 *                      the process that started the transaction for itself
 *                      (silt_txn_upload), absent for `silt txn start`;
 *   txn/<rid>.staged   the staging journal, one line per put/rm
 *                      ("P\t<multihash>\t<size>\t<path>\n", "R\t-\t0\t<path>\n"),
 *                      appended with O_APPEND + fsync; a torn last line (no
 *                      newline) is ignored;
 *   txn/<rid>.committing  the commit intent, written before the AddData is
 *                      published and removed once the record is final;
 *   txn/open-<branch>  the rid of the branch's OPEN transaction;
 *   txn/lock-<branch>  flock'd for every state change of the branch's
 *                      transactions (released by the kernel even on SIGKILL);
 *   txn/objects.lock   flock'd shared by a put from storing its objects until
 *                      their journal lines are durable, exclusive by the
 *                      removal of objects a failed put/upload created (so an
 *                      object another put found already there and staged is
 *                      never removed); always taken before a branch lock.
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
 *    retried from a fresh view;
 *  - an OPEN transaction with an owner whose process is gone (no such pid,
 *    a zombie, another start time or another boot, on the owner's host) is
 *    abandoned: nobody will commit it, so the next start on its branch (and
 *    `silt txn recover`) aborts it, under the branch lock, after recover()
 *    had the chain's say (a commit that landed before the kill completes);
 *  - a failed silt_txn_upload leaves nothing (discard()): marker, journal,
 *    intent and record are removed, and the objects it created that no
 *    journal stages. A crash in the middle leaves an abandoned OPEN record
 *    (or none) and unreferenced objects for gc, never a dangling reference.
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
#include <sys/stat.h>
#include <unistd.h>

#include "dataset/dataset_internal.h"
#include "files/files.h"
#include "files/txn.h"
#include "util/error.h"
#include "util/fsutil.h"
#include "util/hash.h"

typedef struct rec {
    silt_txn_info i;
    char boot[40]; /* boot id of the owner's host ("" when unknown) */
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
    if (j && r->i.owner_pid > 0 &&
        json_object_set_new(j, "owner",
                            json_pack("{s:I,s:I,s:s,s:s}", "pid", (json_int_t)r->i.owner_pid, "start",
                                      (json_int_t)r->i.owner_start, "host", r->i.owner_host, "boot", r->boot)) != 0) {
        json_decref(j);
        j = NULL;
    }
    if (j && r->i.reason[0] && json_object_set_new(j, "reason", json_string(r->i.reason)) != 0) {
        json_decref(j);
        j = NULL;
    }
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
    if (!rc && (!ty || !st || !br || silt_txn_type_parse(&r->i.type, ty) < 0 ||
                (strcmp(br, "master") != 0 && !silt_store_valid_branch_name(br))))
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
        json_t *o = json_object_get(j, "owner");
        json_int_t pid = json_integer_value(json_object_get(o, "pid"));
        json_int_t start = json_integer_value(json_object_get(o, "start"));
        const char *host = json_string_value(json_object_get(o, "host"));
        const char *boot = json_string_value(json_object_get(o, "boot"));
        const char *why = json_string_value(json_object_get(j, "reason"));
        if (pid > 0 && start >= 0 && host) {
            r->i.owner_pid = (long)pid;
            r->i.owner_start = (unsigned long long)start;
            snprintf(r->i.owner_host, sizeof r->i.owner_host, "%s", host);
            snprintf(r->boot, sizeof r->boot, "%s", boot ? boot : "");
        }
        snprintf(r->i.reason, sizeof r->i.reason, "%s", why ? why : "");
    }
    json_decref(j);
    silt_buf_free(&b);
    return rc;
}

/* ---- owners ---------------------------------------------------------------- */

/* State (field 3) and start time (field 22, clock ticks after boot) of
 * process pid from /proc/<pid>/stat. 1 found, 0 no such process, -1 cannot
 * tell (no /proc, unreadable). No silt error is set. */
static int proc_stat(long pid, char *state, unsigned long long *start)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return errno == ENOENT || errno == ESRCH ? 0 : -1;
    char buf[1024];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')'); /* the command name (field 2) may hold spaces and parentheses */
    if (!p)
        return -1;
    char *save = NULL;
    int field = 2;
    for (char *t = strtok_r(p + 1, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        field++;
        if (field == 3)
            *state = t[0];
        if (field == 22) {
            *start = strtoull(t, NULL, 10);
            return 1;
        }
    }
    return -1;
}

static void host_name(char *out, size_t n)
{
    if (gethostname(out, n) != 0)
        out[0] = '\0';
    out[n - 1] = '\0';
}

/* Boot id of this host ("" when unknown). */
static void boot_id(char *out, size_t n)
{
    out[0] = '\0';
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
    if (!f)
        return;
    if (!fgets(out, (int)n, f))
        out[0] = '\0';
    fclose(f);
    out[strcspn(out, "\n")] = '\0';
}

/* Makes this process the owner of r. */
static void owner_self(rec *r)
{
    r->i.owner_pid = (long)getpid();
    char st;
    if (proc_stat(r->i.owner_pid, &st, &r->i.owner_start) != 1)
        r->i.owner_start = 0; /* unknown: a live pid then counts as the owner */
    host_name(r->i.owner_host, sizeof r->i.owner_host);
    boot_id(r->boot, sizeof r->boot);
}

/* Is r's owner certainly gone? false for user-owned transactions and for
 * owners on another host (their processes cannot be seen from here). */
static bool owner_gone(const rec *r)
{
    if (r->i.owner_pid <= 0)
        return false;
    char host[256];
    host_name(host, sizeof host);
    if (strcmp(host, r->i.owner_host) != 0)
        return false;
    char boot[40];
    boot_id(boot, sizeof boot);
    if (boot[0] && r->boot[0] && strcmp(boot, r->boot) != 0)
        return true; /* the host rebooted since */
    char st = '?';
    unsigned long long start = 0;
    int f = proc_stat(r->i.owner_pid, &st, &start);
    if (f <= 0)
        return f == 0;
    if (st == 'Z' || st == 'X' || st == 'x')
        return true; /* dead, not yet reaped */
    return r->i.owner_start && start != r->i.owner_start; /* the pid was recycled */
}

/* Sets r->i.abandoned. */
static void mark_abandoned(rec *r) { r->i.abandoned = r->i.status == SILT_TXN_OPEN && owner_gone(r); }

static void abandoned_reason(const rec *r, char *out, size_t n)
{
    snprintf(out, n, "abandoned: process %ld on host %s is gone", r->i.owner_pid, r->i.owner_host);
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

/* OPEN -> ABORTED under the branch lock; `reason` (may be NULL) says why
 * silt did it. Removes the branch's marker when it names r. */
static int abort_locked(silt_dataset *ds, rec *r, const char *reason)
{
    r->i.status = SILT_TXN_ABORTED;
    r->i.abandoned = false;
    snprintf(r->i.reason, sizeof r->i.reason, "%s", reason ? reason : "");
    silt_time_format(silt_time_from_ms(silt_time_to_ms(silt_time_now())), r->i.closed);
    int rc = rec_save(ds, r);
    char m[64];
    if (!rc && marker_read(ds, r->i.branch, m) == 0 && strcmp(m, r->i.rid) == 0)
        rc = marker_remove(ds, r->i.branch);
    else if (!rc)
        silt_err_clear();
    return rc;
}

/* Under the branch lock: makes sure the branch has no OPEN transaction. A
 * stale marker is cleared; an abandoned transaction is aborted (the next
 * writer of the branch recovers it); a live one is SILT_ECONFLICT. */
static int branch_free(silt_dataset *ds)
{
    char cur[64];
    int rc = marker_read(ds, ds->branch, cur);
    if (rc == SILT_ENOTFOUND) {
        silt_err_clear();
        return 0;
    }
    if (rc)
        return rc;
    rec o;
    rc = rec_load(ds, cur, &o);
    if (rc == 0)
        rc = recover(ds, &o);
    if (rc == SILT_ENOTFOUND || rc == SILT_EINVAL) {
        silt_err_clear();
        return marker_remove(ds, ds->branch); /* stale marker */
    }
    if (rc)
        return rc;
    if (o.i.status != SILT_TXN_OPEN)
        return marker_remove(ds, ds->branch);
    if (owner_gone(&o)) {
        char why[320];
        abandoned_reason(&o, why, sizeof why);
        return abort_locked(ds, &o, why);
    }
    return silt_err(SILT_ECONFLICT, "branch %s of %s already has an open transaction %s", ds->branch, ds->name,
                    cur);
}

/* Starts a transaction; with `owned` this process is recorded as its owner. */
static int start_txn(char **rid_out, silt_dataset *ds, silt_txn_type type, bool owned)
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
    rc = branch_free(ds);
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
        if (owned)
            owner_self(&r);
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

int silt_txn_start(char **rid_out, silt_dataset *ds, silt_txn_type type)
{
    return start_txn(rid_out, ds, type, false);
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
    mark_abandoned(r);
    *fd_out = fd;
    return 0;
}

/* Appends journal lines (one write of the whole text, fsync'd). */
static int journal_append(silt_dataset *ds, const char *rid, const char *text)
{
    char name[96];
    snprintf(name, sizeof name, "%s.staged", rid);
    char *p = txn_path(ds, name);
    if (!p)
        return SILT_ENOMEM;
    int rc = 0;
    int fd = open(p, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    size_t len = strlen(text), off = 0;
    while (fd >= 0 && off < len) {
        ssize_t w = write(fd, text + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    if (fd < 0 || off < len || fsync(fd) != 0)
        rc = silt_err(SILT_EIO, "%s: %s", p, strerror(errno));
    if (fd >= 0)
        close(fd);
    free(p);
    return rc;
}

/* ---- staging file objects ------------------------------------------------ */

/* One object stored by a put. */
typedef struct staged_obj {
    uint8_t mh[SILT_MH_LEN];
    uint64_t size;
    bool created; /* absent before this put moved it into data/ */
} staged_obj;

/* Takes txn/objects.lock (see the file comment); fd or < 0. */
static int lock_objects(silt_dataset *ds, bool exclusive)
{
    char *dir = txn_path(ds, "");
    int rc = dir ? silt_fs_mkdirs(dir) : SILT_ENOMEM;
    free(dir);
    if (rc)
        return rc;
    char *p = txn_path(ds, "objects.lock");
    if (!p)
        return SILT_ENOMEM;
    int fd = silt_fs_lock(p, exclusive);
    free(p);
    return fd;
}

/* Copies `src` (open fd) to the new file `dst` while hashing it. */
static int copy_hashed(int in, const char *src, const char *dst, uint8_t digest[32], uint64_t *size)
{
    int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (out < 0)
        return silt_err(SILT_EIO, "%s: %s", dst, strerror(errno));
    silt_sha3_ctx *h = silt_sha3_new();
    char *buf = malloc(1 << 16);
    int rc = h && buf ? 0 : silt_err(SILT_ENOMEM, "out of memory");
    *size = 0;
    while (!rc) {
        ssize_t r = read(in, buf, 1 << 16);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            rc = silt_err(SILT_EIO, "%s: read error: %s", src, strerror(errno));
        if (r <= 0)
            break;
        for (ssize_t off = 0; !rc && off < r;) {
            ssize_t w = write(out, buf + off, (size_t)(r - off));
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                rc = silt_err(SILT_EIO, "%s: %s", dst, w < 0 ? strerror(errno) : "short write");
            else
                off += w;
        }
        if (!rc)
            rc = silt_sha3_update(h, buf, (size_t)r);
        *size += (uint64_t)r;
    }
    if (close(out) != 0 && !rc) /* silt_store_adopt_file fsyncs it before the rename */
        rc = silt_err(SILT_EIO, "%s: %s", dst, strerror(errno));
    if (!rc)
        rc = silt_sha3_final(h, digest);
    silt_sha3_free(h);
    free(buf);
    return rc;
}

/* Stores the bytes of regular file `local` as data/<multihash>: copied to a
 * temporary object and hashed in one pass (the object always matches its
 * name, even if the file changes meanwhile), then moved into place unless
 * that object exists. Caller holds txn/objects.lock (shared). */
static int store_object(silt_dataset *ds, const char *local, staged_obj *o)
{
    memset(o, 0, sizeof *o);
    int in = open(local, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return silt_err(errno == ENOENT || errno == ENOTDIR ? SILT_ENOTFOUND : SILT_EIO, "%s: %s", local,
                        strerror(errno));
    struct stat st;
    int rc = 0;
    if (fstat(in, &st) != 0)
        rc = silt_err(SILT_EIO, "%s: %s", local, strerror(errno));
    else if (!S_ISREG(st.st_mode))
        rc = silt_err(SILT_EINVAL, "'%s' is not a regular file", local);
    char hex[17];
    if (!rc)
        rc = silt_random_hex(hex, 8);
    char name[64];
    snprintf(name, sizeof name, ".tmp-%ld-%s", (long)getpid(), hex);
    char *tmp = rc ? NULL : silt_path_join(ds->dir, "data", name, NULL);
    if (!rc && !tmp)
        rc = silt_err(SILT_ENOMEM, "out of memory");
    uint8_t digest[32];
    if (!rc)
        rc = copy_hashed(in, local, tmp, digest, &o->size);
    close(in);
    int exists = 0;
    if (!rc) {
        silt_multihash_wrap_sha3(digest, o->mh);
        exists = silt_store_stat(ds->store, "data", o->mh, NULL);
        if (exists < 0)
            rc = exists;
    }
    if (!rc && exists == 0) {
        rc = silt_store_adopt_file(ds->store, "data", o->mh, tmp);
        o->created = rc == 0;
    }
    if (tmp)
        unlink(tmp); /* gone already when adopted */
    free(tmp);
    return rc;
}

static int cmp_text(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Marks in `ref` the hashes of `texts` (sorted) that journal `p` stages. */
static int journal_refs(const char *p, char **texts, size_t n, bool *ref)
{
    silt_buf b = SILT_BUF_INIT;
    int rc = silt_fs_read(p, &b);
    if (rc == SILT_ENOTFOUND) {
        silt_err_clear();
        return 0;
    }
    char *save = NULL;
    for (char *line = rc || !b.data ? NULL : strtok_r(b.data, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        if (line[0] != 'P' || line[1] != '\t')
            continue;
        char *h = line + 2, *tab = strchr(h, '\t');
        if (tab)
            *tab = '\0';
        char **hit = bsearch(&h, texts, n, sizeof *texts, cmp_text);
        if (hit)
            ref[hit - texts] = true;
    }
    silt_buf_free(&b);
    return rc;
}

/* Removes the objects of `objs` this command created that no journal of the
 * dataset stages (any transaction, any status: a committed one's rows link
 * them). Caller holds txn/objects.lock exclusively, so no put can be
 * between finding such an object and staging it. */
static int drop_created(silt_dataset *ds, const staged_obj *objs, size_t n)
{
    char **texts = calloc(n ? n : 1, sizeof *texts);
    bool *ref = calloc(n ? n : 1, sizeof *ref);
    size_t k = 0;
    int rc = texts && ref ? 0 : silt_err(SILT_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < n; i++) {
        if (!objs[i].created)
            continue;
        if (!(texts[k] = malloc(SILT_MH_TEXT_LEN + 1)))
            rc = silt_err(SILT_ENOMEM, "out of memory");
        else
            silt_multihash_to_text(objs[i].mh, SILT_MH_LEN, texts[k++]);
    }
    if (!rc && k > 1)
        qsort(texts, k, sizeof *texts, cmp_text);
    char *dir = !rc && k ? txn_path(ds, "") : NULL;
    DIR *d = dir ? opendir(dir) : NULL;
    struct dirent *e;
    while (d && !rc && (e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l <= 7 || strcmp(e->d_name + l - 7, ".staged") != 0)
            continue;
        char *p = silt_path_join(dir, e->d_name, NULL);
        rc = p ? journal_refs(p, texts, k, ref) : silt_err(SILT_ENOMEM, "out of memory");
        free(p);
    }
    if (d)
        closedir(d);
    for (size_t i = 0; !rc && i < k; i++) {
        if (ref[i])
            continue;
        silt_buf mh = SILT_BUF_INIT;
        char *p = NULL;
        if (silt_multihash_from_text(texts[i], &mh) == 0 && mh.len == SILT_MH_LEN)
            p = silt_store_object_path(ds->store, "data", (const uint8_t *)mh.data);
        if (p && unlink(p) != 0 && errno != ENOENT)
            rc = silt_err(SILT_EIO, "%s: %s", p, strerror(errno));
        free(p);
        silt_buf_free(&mh);
    }
    free(dir);
    for (size_t i = 0; i < k; i++)
        free(texts[i]);
    free(texts);
    free(ref);
    return rc;
}

/* Removes what a failed put created: objects no journal stages. Keeps the
 * error of the failure (rc) as the current one. */
static int undo_objects(silt_dataset *ds, const staged_obj *objs, size_t n, int rc)
{
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", silt_error_last());
    int ofd = lock_objects(ds, true);
    if (ofd >= 0)
        drop_created(ds, objs, n);
    silt_fs_unlock(ofd);
    return silt_err(rc, "%s", msg);
}

/* Stages n files (logical paths already normalised) in OPEN transaction
 * rid: every object first, then one journal write with every entry. On
 * failure nothing is staged and the objects created are removed again;
 * objs (n entries) receives what was stored. */
/* Upload progress through ds's callback (silt_dataset_set_progress):
 * SILT_ECANCELED when it asks to stop. */
static int put_tick(silt_dataset *ds, silt_progress *p, const char *item)
{
    p->item = item;
    if (silt_ds_progress(ds, p) == 0)
        return 0;
    return silt_err(SILT_ECANCELED, "interrupted%s%s%s", item ? " before '" : "", item ? item : "", item ? "'" : "");
}

static void put_totals(silt_dataset *ds, const char *const *locals, size_t n, silt_progress *p)
{
    *p = (silt_progress){.phase = "upload", .unit = "files", .total = n};
    for (size_t i = 0; ds->progress && i < n; i++) {
        struct stat st;
        if (stat(locals[i], &st) == 0)
            p->total_bytes += (uint64_t)st.st_size;
    }
}

static int put_many(silt_dataset *ds, const char *rid, const char *const *locals, char *const *paths, size_t n,
                    staged_obj *objs)
{
    rec r;
    int rc = rec_load(ds, rid, &r);
    if (!rc && r.i.status != SILT_TXN_OPEN)
        rc = not_open(&r);
    if (!rc && r.i.type == SILT_TXN_DELETE)
        rc = silt_err(SILT_EINVAL, "transaction %s is a DELETE transaction: files cannot be put (use 'txn rm')", rid);
    if (rc)
        return rc;
    int ofd = lock_objects(ds, false);
    if (ofd < 0)
        return ofd;
    size_t stored = 0;
    silt_progress prog;
    put_totals(ds, locals, n, &prog);
    for (; !rc && stored < n; stored++) {
        rc = put_tick(ds, &prog, paths[stored]);
        if (!rc)
            rc = store_object(ds, locals[stored], &objs[stored]);
        if (rc)
            break;
        prog.done++;
        prog.bytes += objs[stored].size;
    }
    if (!rc)
        rc = put_tick(ds, &prog, NULL); /* stored: the last chance to stop before staging */
    int fd = -1;
    if (!rc)
        rc = load_locked(ds, rid, &r, &fd);
    if (!rc && r.i.status != SILT_TXN_OPEN)
        rc = not_open(&r);
    silt_buf lines = SILT_BUF_INIT;
    for (size_t i = 0; !rc && i < n; i++) {
        char text[SILT_MH_TEXT_LEN + 1];
        silt_multihash_to_text(objs[i].mh, SILT_MH_LEN, text);
        rc = silt_buf_printf(&lines, "P\t%s\t%llu\t%s\n", text, (unsigned long long)objs[i].size, paths[i]);
    }
    if (!rc)
        rc = journal_append(ds, rid, lines.data);
    silt_buf_free(&lines);
    unlock_branch(fd);
    silt_fs_unlock(ofd);
    if (rc)
        rc = undo_objects(ds, objs, stored, rc);
    return rc;
}

int silt_txn_put(silt_dataset *ds, const char *rid, const char *local_file, const char *logical_path)
{
    char *norm = NULL;
    int rc = silt_files_path_normalize(&norm, logical_path ? logical_path : local_file);
    if (rc)
        return rc;
    staged_obj o;
    rc = put_many(ds, rid, &local_file, &norm, 1, &o);
    free(norm);
    return rc;
}

/* The list as arrays for put_many (borrowed strings); *objs zeroed. */
static int list_arrays(const silt_put_list *l, const char ***locals, char ***paths, staged_obj **objs)
{
    size_t n = silt_put_list_count(l);
    *locals = calloc(n ? n : 1, sizeof **locals);
    *paths = calloc(n ? n : 1, sizeof **paths);
    *objs = calloc(n ? n : 1, sizeof **objs);
    if (!*locals || !*paths || !*objs)
        return silt_err(SILT_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        (*locals)[i] = silt_put_list_local(l, i);
        (*paths)[i] = (char *)silt_put_list_path(l, i);
    }
    return 0;
}

int silt_txn_put_list(silt_dataset *ds, const char *rid, const silt_put_list *l)
{
    if (!silt_put_list_count(l))
        return silt_err(SILT_EINVAL, "no input files");
    const char **locals = NULL;
    char **paths = NULL;
    staged_obj *objs = NULL;
    int rc = list_arrays(l, &locals, &paths, &objs);
    if (!rc)
        rc = put_many(ds, rid, locals, paths, silt_put_list_count(l), objs);
    free(locals);
    free(paths);
    free(objs);
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
    if (!rc)
        rc = abort_locked(ds, &r, NULL);
    unlock_branch(fd);
    return rc;
}

/* ---- upload: all or nothing -------------------------------------------------- */

/* Removes txn/<rid><suffix> (missing is fine). */
static int txn_unlink(silt_dataset *ds, const char *rid, const char *suffix)
{
    char name[96];
    snprintf(name, sizeof name, "%s%s", rid, suffix);
    char *p = txn_path(ds, name);
    if (!p)
        return SILT_ENOMEM;
    int rc = 0;
    if (unlink(p) != 0 && errno != ENOENT)
        rc = silt_err(SILT_EIO, "%s: %s", p, strerror(errno));
    free(p);
    return rc;
}

/* Undoes a failed upload: unless the chain holds its commit (then
 * *committed, and block receives the AddData), the transaction disappears —
 * marker, journal, intent, record, in that order, so a crash leaves at
 * worst an abandoned OPEN record — and so do the objects it created that no
 * journal stages. Lock order: objects, then branch. */
static int discard(silt_dataset *ds, const char *rid, const staged_obj *objs, size_t n, bool *committed,
                   char *block)
{
    *committed = false;
    int ofd = lock_objects(ds, true);
    if (ofd < 0)
        return ofd;
    rec r;
    int fd = -1;
    int rc = load_locked(ds, rid, &r, &fd);
    if (!rc && r.i.status == SILT_TXN_COMMITTED) {
        *committed = true;
        memcpy(block, r.i.block, SILT_MH_TEXT_LEN + 1);
    } else if (!rc) {
        char m[64];
        if (marker_read(ds, r.i.branch, m) == 0 && strcmp(m, rid) == 0)
            rc = marker_remove(ds, r.i.branch);
        silt_err_clear();
        if (!rc)
            rc = txn_unlink(ds, rid, ".staged");
        if (!rc)
            rc = txn_unlink(ds, rid, ".committing");
        if (!rc)
            rc = txn_unlink(ds, rid, "");
        if (!rc)
            rc = drop_created(ds, objs, n);
    }
    unlock_branch(fd);
    silt_fs_unlock(ofd);
    return rc;
}

int silt_txn_upload(char **rid_out, char *block_out, silt_dataset *ds, silt_txn_type type, const silt_put_list *l)
{
    *rid_out = NULL;
    size_t n = silt_put_list_count(l);
    if (type == SILT_TXN_DELETE)
        return silt_err(SILT_EINVAL, "an upload cannot be a DELETE transaction");
    if (n == 0)
        return silt_err(SILT_EINVAL, "no input files");
    const char **locals = NULL;
    char **paths = NULL;
    staged_obj *objs = NULL;
    char *rid = NULL;
    char block[SILT_MH_TEXT_LEN + 1] = "";
    int rc = list_arrays(l, &locals, &paths, &objs);
    if (!rc)
        rc = start_txn(&rid, ds, type, true);
    bool staged = false;
    if (!rc)
        rc = put_many(ds, rid, locals, paths, n, objs); /* undoes its own objects on failure */
    staged = rc == 0;
    if (!rc)
        rc = silt_txn_commit(ds, rid, block);
    if (rc && rid) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", silt_error_last());
        bool committed = false;
        int d = discard(ds, rid, objs, staged ? n : 0, &committed, block);
        if (committed) {
            rc = 0; /* the commit landed; only its bookkeeping failed */
            silt_err_clear();
        } else {
            if (d < 0) /* the failure is reported; gc finds the rest */
                silt_err_clear();
            silt_err(rc, "upload rolled back, nothing written: %s", msg);
        }
    }
    free(locals);
    free(paths);
    free(objs);
    if (rc) {
        free(rid);
        return rc;
    }
    if (block_out)
        memcpy(block_out, block, SILT_MH_TEXT_LEN + 1);
    *rid_out = rid;
    return 0;
}

/* ---- lists of records ------------------------------------------------------ */

static int cmp_info(const void *a, const void *b)
{
    const silt_txn_info *x = a, *y = b;
    silt_time tx = {0, 0}, ty = {0, 0};
    silt_time_parse(x->created, &tx);
    silt_time_parse(y->created, &ty);
    int c = silt_time_cmp(tx, ty);
    return c ? c : strcmp(x->rid, y->rid);
}

/* A growing list of records, handed out sorted (oldest first). */
typedef struct info_vec {
    silt_txn_info *v;
    size_t n, cap;
} info_vec;

static int info_push(info_vec *iv, const silt_txn_info *i)
{
    if (iv->n == iv->cap) {
        size_t cap = iv->cap ? iv->cap * 2 : 32;
        silt_txn_info *nv = realloc(iv->v, cap * sizeof *nv);
        if (!nv)
            return silt_err(SILT_ENOMEM, "out of memory");
        iv->v = nv;
        iv->cap = cap;
    }
    iv->v[iv->n++] = *i;
    return 0;
}

/* On success hands the sorted list out; on failure frees it. */
static int info_finish(info_vec *iv, int rc, silt_txn_info **out, size_t *n_out)
{
    if (rc) {
        free(iv->v);
        return rc;
    }
    if (iv->n)
        qsort(iv->v, iv->n, sizeof *iv->v, cmp_info);
    *out = iv->v;
    *n_out = iv->n;
    return 0;
}

/* Calls fn(ctx, rid) for every record name of txn/ (a dataset without txn/
 * has none); stops at the first error. */
static int each_record(silt_dataset *ds, int (*fn)(void *ctx, const char *rid), void *ctx)
{
    char *dir = txn_path(ds, "");
    if (!dir)
        return SILT_ENOMEM;
    DIR *d = opendir(dir);
    free(dir);
    if (!d)
        return 0; /* no transaction yet */
    int rc = 0;
    struct dirent *e;
    while (!rc && (e = readdir(d)) != NULL)
        if (rid_valid(e->d_name))
            rc = fn(ctx, e->d_name);
    closedir(d);
    return rc;
}

/* ---- abandoned transactions ------------------------------------------------- */

typedef struct recover_ctx {
    silt_dataset *ds;
    bool all_branches;
    info_vec done;
} recover_ctx;

static int recover_one(void *ctx, const char *rid)
{
    recover_ctx *c = ctx;
    rec r;
    int fd = -1;
    int rc = load_locked(c->ds, rid, &r, &fd);
    if (rc == SILT_ENOTFOUND || rc == SILT_ECORRUPT) {
        silt_err_clear(); /* vanished or unreadable: skipped (verify reports it) */
        return 0;
    }
    if (!rc && r.i.abandoned && (c->all_branches || strcmp(r.i.branch, c->ds->branch) == 0)) {
        char why[320];
        abandoned_reason(&r, why, sizeof why);
        rc = abort_locked(c->ds, &r, why);
        if (!rc)
            rc = info_push(&c->done, &r.i);
    }
    unlock_branch(fd);
    return rc;
}

int silt_txn_recover(silt_txn_info **out, size_t *n_out, silt_dataset *ds, bool all_branches)
{
    *out = NULL;
    *n_out = 0;
    int rc = silt_files_require(ds);
    if (rc)
        return rc;
    recover_ctx c = {ds, all_branches, {0}};
    rc = each_record(ds, recover_one, &c);
    return info_finish(&c.done, rc, out, n_out);
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

typedef struct list_ctx {
    silt_dataset *ds;
    info_vec found;
} list_ctx;

/* A record of ds's branch, or a committed one the branch inherited. */
static int list_one(void *ctx, const char *rid)
{
    list_ctx *c = ctx;
    silt_txn_info i;
    int rc = silt_txn_get(&i, c->ds, rid);
    if (rc == SILT_ENOTFOUND || rc == SILT_ECORRUPT) {
        silt_err_clear(); /* vanished or unreadable: skipped (verify reports it) */
        return 0;
    }
    if (rc)
        return rc;
    bool mine = strcmp(i.branch, c->ds->branch) == 0;
    if (!mine && i.status == SILT_TXN_COMMITTED) {
        uint8_t blk[SILT_MH_LEN];
        int f = silt_files_find_commit(c->ds, i.rid, -1, blk); /* inherited from the parent */
        if (f < 0)
            return f;
        mine = f == 1;
    }
    return mine ? info_push(&c->found, &i) : 0;
}

int silt_txn_list(silt_txn_info **out, size_t *n_out, silt_dataset *ds)
{
    *out = NULL;
    *n_out = 0;
    list_ctx c = {ds, {0}};
    int rc = each_record(ds, list_one, &c);
    return info_finish(&c.found, rc, out, n_out);
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

int silt_txn_lock_objects(silt_dataset *ds, bool exclusive) { return lock_objects(ds, exclusive); }

/* ---- every transaction of the dataset ----------------------------------------- */

static int list_any(void *ctx, const char *rid)
{
    list_ctx *c = ctx;
    silt_txn_info i;
    int rc = silt_txn_get(&i, c->ds, rid);
    if (rc == SILT_ENOTFOUND || rc == SILT_ECORRUPT) {
        silt_err_clear(); /* vanished or unreadable: skipped (verify reports it) */
        return 0;
    }
    return rc ? rc : info_push(&c->found, &i);
}

int silt_txn_list_all(silt_txn_info **out, size_t *n_out, silt_dataset *ds)
{
    *out = NULL;
    *n_out = 0;
    list_ctx c = {ds, {0}};
    int rc = each_record(ds, list_any, &c);
    return info_finish(&c.found, rc, out, n_out);
}
