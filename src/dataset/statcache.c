/* statcache.c — a process-wide cache of facts derived from small files and
 * directory layouts, each entry valid only while the paths it was derived
 * from still stat the same (silt serve's per-request opens; see
 * docs/decisions.md "silt serve: per-process caches").
 *
 * Invariants:
 *  - used only when silt_process_caches_on(): a CLI command reads the
 *    files themselves;
 *  - an entry stores the stat identities (device, inode, mode, size, mtime,
 *    ctime) taken BEFORE the fact was derived, so a change racing the
 *    derivation leaves an entry that no longer matches;
 *  - an identity is stored only when it is settled: its mtime and ctime are
 *    at least SETTLE_SECONDS old. File systems stamp times from a coarse
 *    clock (milliseconds), so two changes within one tick could keep a
 *    stat identical; a path changed that recently is read again instead
 *    (git's "racy" rule). Replacing a file (write + rename) gives it a new
 *    inode and changes its directory's mtime and ctime; so does replacing a
 *    directory entry by a symbolic link;
 *  - bounded (STAT_CACHE_N entries, round-robin), shared by threads under
 *    one mutex; values are copied out, never shared. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "dataset/dataset_internal.h"

#define STAT_CACHE_N 256
#define SETTLE_SECONDS 2

typedef struct stat_cached {
    char kind;
    char *key; /* owned; NULL = free slot */
    silt_stat_id ids[SILT_STAT_IDS];
    char *value; /* owned */
} stat_cached;

static stat_cached g_stat[STAT_CACHE_N];
static size_t g_stat_next;
static pthread_mutex_t g_stat_lock = PTHREAD_MUTEX_INITIALIZER;

int silt_stat_id_of(const char *path, silt_stat_id *id)
{
    struct stat st;
    memset(id, 0, sizeof *id);
    if (lstat(path, &st) != 0)
        return -1;
    id->dev = st.st_dev;
    id->ino = st.st_ino;
    id->mode = st.st_mode;
    id->size = st.st_size;
    id->mtim = st.st_mtim;
    id->ctim = st.st_ctim;
    id->valid = true;
    return 0;
}

static bool settled(const silt_stat_id *id, time_t now)
{
    return id->valid && id->mtim.tv_sec + SETTLE_SECONDS <= now && id->ctim.tv_sec + SETTLE_SECONDS <= now;
}

static bool same(const silt_stat_id *a, const silt_stat_id *b)
{
    return a->valid && b->valid && a->dev == b->dev && a->ino == b->ino && a->mode == b->mode &&
           a->size == b->size && a->mtim.tv_sec == b->mtim.tv_sec && a->mtim.tv_nsec == b->mtim.tv_nsec &&
           a->ctim.tv_sec == b->ctim.tv_sec && a->ctim.tv_nsec == b->ctim.tv_nsec;
}

char *silt_statcache_get(char kind, const char *key, const silt_stat_id ids[SILT_STAT_IDS])
{
    if (!silt_process_caches_on())
        return NULL;
    char *v = NULL;
    pthread_mutex_lock(&g_stat_lock);
    for (size_t i = 0; i < STAT_CACHE_N; i++) {
        stat_cached *c = &g_stat[i];
        if (!c->key || c->kind != kind || strcmp(c->key, key) != 0)
            continue;
        bool hit = true;
        for (size_t k = 0; k < SILT_STAT_IDS; k++)
            if (ids[k].valid != c->ids[k].valid || (ids[k].valid && !same(&ids[k], &c->ids[k])))
                hit = false;
        if (hit)
            v = strdup(c->value);
        break;
    }
    pthread_mutex_unlock(&g_stat_lock);
    return v;
}

void silt_statcache_put(char kind, const char *key, const silt_stat_id ids[SILT_STAT_IDS], const char *value)
{
    if (!silt_process_caches_on())
        return;
    time_t now = time(NULL);
    for (size_t k = 0; k < SILT_STAT_IDS; k++)
        if (ids[k].valid && !settled(&ids[k], now))
            return;
    char *k = strdup(key), *v = strdup(value);
    if (!k || !v) {
        free(k);
        free(v);
        return;
    }
    pthread_mutex_lock(&g_stat_lock);
    size_t slot = g_stat_next;
    for (size_t i = 0; i < STAT_CACHE_N; i++)
        if (g_stat[i].key && g_stat[i].kind == kind && strcmp(g_stat[i].key, key) == 0)
            slot = i;
    if (slot == g_stat_next)
        g_stat_next = (g_stat_next + 1) % STAT_CACHE_N;
    stat_cached old = g_stat[slot];
    g_stat[slot].kind = kind;
    g_stat[slot].key = k;
    memcpy(g_stat[slot].ids, ids, sizeof g_stat[slot].ids);
    g_stat[slot].value = v;
    pthread_mutex_unlock(&g_stat_lock);
    free(old.key);
    free(old.value);
}
