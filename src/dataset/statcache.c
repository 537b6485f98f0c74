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
 *  - bounded: SETS sets of WAYS entries, an entry's set chosen by a hash of
 *    (kind, key), round-robin within the set; each set has its own mutex,
 *    so a lookup compares at most WAYS keys and threads asking for
 *    different keys rarely meet; values (bytes, with their length) are
 *    copied out, never shared. Object contents (kind 'c', up to
 *    SILT_STATCACHE_VALUE_MAX bytes) live in a table of their own, so they
 *    never evict the small facts. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "dataset/dataset_internal.h"

#define SETS 64
#define WAYS 4
#define SETTLE_SECONDS 2

typedef struct stat_cached {
    char kind;
    char *key; /* owned; NULL = free slot */
    silt_stat_id ids[SILT_STAT_IDS];
    char *value; /* owned, value_len bytes + a NUL */
    size_t value_len;
} stat_cached;

typedef struct stat_set {
    pthread_mutex_t lock;
    stat_cached way[WAYS];
    size_t next;
} stat_set;

#define SET_INIT {PTHREAD_MUTEX_INITIALIZER, {{0}}, 0}
#define SET_INIT8 SET_INIT, SET_INIT, SET_INIT, SET_INIT, SET_INIT, SET_INIT, SET_INIT, SET_INIT
/* facts (every kind but 'c') and object contents ('c') */
static stat_set g_facts[SETS] = {SET_INIT8, SET_INIT8, SET_INIT8, SET_INIT8, SET_INIT8, SET_INIT8, SET_INIT8, SET_INIT8};
static stat_set g_blobs[SETS] = {SET_INIT8, SET_INIT8, SET_INIT8, SET_INIT8, SET_INIT8, SET_INIT8, SET_INIT8, SET_INIT8};

static stat_set *set_of(char kind, const char *key)
{
    uint64_t h = 1469598103934665603ull ^ (unsigned char)kind; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)key; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    return &(kind == 'c' ? g_blobs : g_facts)[(h ^ (h >> 32)) % SETS];
}

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

static bool ids_match(const silt_stat_id a[SILT_STAT_IDS], const silt_stat_id b[SILT_STAT_IDS])
{
    for (size_t k = 0; k < SILT_STAT_IDS; k++)
        if (a[k].valid != b[k].valid || (a[k].valid && !same(&a[k], &b[k])))
            return false;
    return true;
}

char *silt_statcache_get_bytes(char kind, const char *key, const silt_stat_id ids[SILT_STAT_IDS], size_t *len)
{
    if (len)
        *len = 0;
    if (!silt_process_caches_on())
        return NULL;
    stat_set *set = set_of(kind, key);
    char *v = NULL;
    pthread_mutex_lock(&set->lock);
    for (size_t i = 0; i < WAYS; i++) {
        stat_cached *c = &set->way[i];
        if (!c->key || c->kind != kind || strcmp(c->key, key) != 0)
            continue;
        if (ids_match(ids, c->ids) && (v = malloc(c->value_len + 1)) != NULL) {
            memcpy(v, c->value, c->value_len + 1);
            if (len)
                *len = c->value_len;
        }
        break;
    }
    pthread_mutex_unlock(&set->lock);
    return v;
}

char *silt_statcache_get(char kind, const char *key, const silt_stat_id ids[SILT_STAT_IDS])
{
    return silt_statcache_get_bytes(kind, key, ids, NULL);
}

void silt_statcache_put_bytes(char kind, const char *key, const silt_stat_id ids[SILT_STAT_IDS], const void *value,
                              size_t len)
{
    if (!silt_process_caches_on() || len > SILT_STATCACHE_VALUE_MAX)
        return;
    time_t now = time(NULL);
    for (size_t k = 0; k < SILT_STAT_IDS; k++)
        if (ids[k].valid && !settled(&ids[k], now))
            return;
    char *k = strdup(key), *v = malloc(len + 1);
    if (!k || !v) {
        free(k);
        free(v);
        return;
    }
    if (len)
        memcpy(v, value, len);
    v[len] = '\0';
    stat_set *set = set_of(kind, key);
    pthread_mutex_lock(&set->lock);
    size_t slot = set->next;
    for (size_t i = 0; i < WAYS; i++)
        if (set->way[i].key && set->way[i].kind == kind && strcmp(set->way[i].key, key) == 0)
            slot = i;
    if (slot == set->next)
        set->next = (set->next + 1) % WAYS;
    stat_cached old = set->way[slot];
    set->way[slot].kind = kind;
    set->way[slot].key = k;
    memcpy(set->way[slot].ids, ids, sizeof set->way[slot].ids);
    set->way[slot].value = v;
    set->way[slot].value_len = len;
    pthread_mutex_unlock(&set->lock);
    free(old.key);
    free(old.value);
}

void silt_statcache_put(char kind, const char *key, const silt_stat_id ids[SILT_STAT_IDS], const char *value)
{
    silt_statcache_put_bytes(kind, key, ids, value, strlen(value));
}
