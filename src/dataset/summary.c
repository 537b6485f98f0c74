/* summary.c — the rebuildable per-ref summary of a dataset.
 *
 * `<dataset>/summary/head.json` (branch b: `summary/branches/<b>.json`) is
 * {"head": "<multihash>", "state": <odf_chain_state_to_json>} and describes
 * the chain ending at that head. It is a cache: on open, if it is missing,
 * unreadable, or describes another head than the ref, it is caught up by
 * walking back from the ref head to the summary head and applying the new
 * blocks forward; if the summary head is not an ancestor of the ref head,
 * the state is rebuilt from the seed. The summary is a cache, never trusted:
 * a state read from it is checked against the blocks it names
 * (odf_chain_state_validate: the head, the Seed, the last data event, the
 * block of each current event and source state) and any mismatch silently
 * rebuilds it from the seed. Opening a dataset whose summary is current
 * therefore reads the summary and a handful of small blocks, independent of
 * chain length.
 * Every block is loaded through silt_ds_load_block, which checks that its
 * bytes hash to its name.
 * Invariants: the summary is only ever written atomically and only as the
 * state of a head that was the ref's value; failing to save it is not an
 * error (it will be rebuilt next time); the in-memory state of a handle is
 * only ever a validated summary, a rebuild from the seed, or either advanced
 * by odf_chain_apply over loaded blocks.
 *
 * State cache: a process-wide table (dataset directory, ref, head) -> a
 * copy of the state reached there, filled by every sync that loaded,
 * validated or rebuilt the state for a head. Opening a handle whose ref
 * still reads that head takes a copy instead of reading and validating
 * the summary again. It cannot go stale: the state is a function of the
 * chain, and the head's multihash names the whole chain (blocks are
 * immutable objects); a commit moves the ref, so the next open misses and
 * catches up as before. Entries are immutable once published; the table
 * is shared by threads under a mutex and holds at most STATE_CACHE_N.
 *
 * Head reads: in a long-running process the ref's value is taken from the
 * stat cache (statcache.c) while refs/<ref> stats as when it was read: a
 * ref is only ever replaced by a rename (store/localfs.c), which gives it
 * a new inode. One lstat instead of an open, a read and a close per sync.
 * A write still compares the ref it read under the ref lock (the store's
 * compare-and-swap), so a head taken from here can never fork the chain. */
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dataset/dataset_internal.h"
#include "odf/block.h"
#include "util/error.h"
#include "util/fsutil.h"
#include "util/hash.h"
#include "util/timeutil.h"

char *silt_ds_summary_path(silt_dataset *ds)
{
    if (strcmp(ds->ref, "head") == 0)
        return silt_path_join(ds->dir, "summary", "head.json", NULL);
    char file[160];
    snprintf(file, sizeof file, "%s.json", ds->branch);
    return silt_path_join(ds->dir, "summary", "branches", file, NULL);
}

int silt_ds_load_block(silt_dataset *ds, const uint8_t hash[SILT_MH_LEN], silt_arena *a,
                       odf_MetadataBlock **out)
{
    silt_buf b = SILT_BUF_INIT;
    char text[SILT_MH_TEXT_LEN + 1];
    silt_multihash_to_text(hash, SILT_MH_LEN, text);
    int rc = silt_store_get(ds->store, "blocks", hash, &b);
    if (rc == SILT_ENOTFOUND)
        rc = silt_err(SILT_ECORRUPT, "block %s is missing; run 'silt verify %s'", text, ds->name);
    if (rc == 0) {
        uint8_t digest[SILT_SHA3_256_LEN], mh[SILT_MH_LEN];
        rc = silt_sha3_256(b.data ? b.data : "", b.len, digest);
        if (rc == 0) {
            silt_multihash_wrap_sha3(digest, mh);
            if (memcmp(mh, hash, SILT_MH_LEN) != 0)
                rc = silt_err(SILT_ECORRUPT,
                              "block %s does not match its hash (damaged or replaced); run 'silt verify %s'",
                              text, ds->name);
        }
    }
    if (rc == 0) {
        rc = odf_block_decode(a, (const uint8_t *)b.data, b.len, out, NULL);
        if (rc < 0)
            rc = silt_err_context(SILT_ECORRUPT, "block %s", text);
    }
    silt_buf_free(&b);
    return rc;
}

static int env_load_block(void *ctx, const uint8_t hash[SILT_MH_LEN], silt_arena *a,
                          odf_MetadataBlock **out)
{
    return silt_ds_load_block(ctx, hash, a, out);
}

static int env_object_exists(void *ctx, const char *kind, const uint8_t hash[SILT_MH_LEN], uint64_t size)
{
    silt_dataset *ds = ctx;
    uint64_t actual = 0;
    int rc = silt_store_stat(ds->store, kind, hash, &actual);
    if (rc <= 0)
        return rc;
    return actual == size ? 1 : 0;
}

void silt_ds_chain_env(silt_dataset *ds, odf_chain_env *env)
{
    env->ctx = ds;
    env->load_block = env_load_block;
    env->object_exists = env_object_exists;
}

static bool same_time(odf_time a, odf_time b)
{
    return a.sec == b.sec && a.nsec == b.nsec;
}

/* Formats head, last_system_time and watermark from ds->st; a state that
 * shows the same values as last time (a sync that found the head where it
 * was) is not formatted again. */
void silt_ds_refresh_info(silt_dataset *ds)
{
    odf_time wm = ds->st.has_watermark ? ds->st.watermark : (odf_time){-1, UINT32_MAX};
    odf_time lst = ds->st.empty ? (odf_time){-1, UINT32_MAX} : ds->st.last_system_time;
    char head[SILT_MH_TEXT_LEN + 1] = "";
    if (!ds->st.empty)
        silt_multihash_to_text(ds->st.head, SILT_MH_LEN, head);
    if (ds->shown && same_time(wm, ds->shown_wm) && same_time(lst, ds->shown_lst) && strcmp(head, ds->head) == 0)
        return;
    ds->shown = true;
    ds->shown_wm = wm;
    ds->shown_lst = lst;
    if (ds->st.empty) {
        ds->head[0] = '\0';
        ds->last_system_time[0] = '\0';
    } else {
        silt_multihash_to_text(ds->st.head, SILT_MH_LEN, ds->head);
        silt_time_format((silt_time){ds->st.last_system_time.sec, ds->st.last_system_time.nsec},
                         ds->last_system_time);
    }
    if (ds->st.has_watermark)
        silt_time_format((silt_time){ds->st.watermark.sec, ds->st.watermark.nsec}, ds->watermark);
    else
        ds->watermark[0] = '\0';
}

int silt_ds_summary_save(silt_dataset *ds)
{
    if (ds->st.empty)
        return 0;
    char *state = NULL;
    int rc = odf_chain_state_to_json(&ds->st, &state);
    if (rc < 0)
        return rc;
    char head[SILT_MH_TEXT_LEN + 1];
    silt_multihash_to_text(ds->st.head, SILT_MH_LEN, head);
    silt_buf b = SILT_BUF_INIT;
    rc = silt_buf_printf(&b, "{\"head\":\"%s\",\"state\":%s}\n", head, state);
    free(state);
    char *path = rc == 0 ? silt_ds_summary_path(ds) : NULL;
    if (rc == 0 && !path)
        rc = silt_err(SILT_ENOMEM, "summary: out of memory");
    if (rc == 0) {
        char *slash = strrchr(path, '/');
        *slash = '\0';
        rc = silt_fs_mkdirs(path);
        *slash = '/';
        if (rc == 0)
            rc = silt_fs_write_atomic(path, b.data, b.len, false);
    }
    free(path);
    silt_buf_free(&b);
    return rc;
}

/* Loads the summary file into ds->st and checks it against the blocks it
 * names. 0 on success; any failure (missing, unreadable, corrupt, or a state
 * its blocks contradict) returns < 0 and leaves ds->st empty. */
static int summary_load(silt_dataset *ds)
{
    char *path = silt_ds_summary_path(ds);
    if (!path)
        return silt_err(SILT_ENOMEM, "summary: out of memory");
    silt_buf b = SILT_BUF_INIT;
    int rc = silt_fs_read(path, &b);
    json_t *root = NULL;
    char *state_text = NULL;
    if (rc == 0) {
        json_error_t jerr;
        root = json_loadb(b.data ? b.data : "", b.len, 0, &jerr);
        json_t *state = root ? json_object_get(root, "state") : NULL;
        const char *head = root ? json_string_value(json_object_get(root, "head")) : NULL;
        if (!state || !head || !json_is_object(state)) {
            rc = silt_err(SILT_ECORRUPT, "%s: not a summary", path);
        } else {
            state_text = json_dumps(state, JSON_COMPACT);
            if (!state_text)
                rc = silt_err(SILT_ENOMEM, "summary: out of memory");
            else
                rc = odf_chain_state_from_json(&ds->st, state_text);
            if (rc == 0) {
                char sh[SILT_MH_TEXT_LEN + 1];
                silt_multihash_to_text(ds->st.head, SILT_MH_LEN, sh);
                if (ds->st.empty || strcmp(sh, head) != 0)
                    rc = silt_err(SILT_ECORRUPT, "%s: head does not match its state", path);
            }
            if (rc == 0) {
                odf_chain_env env;
                silt_ds_chain_env(ds, &env);
                rc = odf_chain_state_validate(&ds->st, &env);
            }
        }
    }
    free(state_text);
    json_decref(root);
    silt_buf_free(&b);
    free(path);
    if (rc < 0) {
        odf_chain_state_free(&ds->st);
        int rc2 = odf_chain_state_init(&ds->st);
        if (rc2 < 0)
            return rc2;
    }
    return rc;
}

/* Resets ds->st to an empty state. */
static int state_reset(silt_dataset *ds)
{
    odf_chain_state_free(&ds->st);
    return odf_chain_state_init(&ds->st);
}

typedef struct walked {
    uint8_t hash[SILT_MH_LEN];
    odf_MetadataBlock *blk;
} walked;

/* Advances ds->st to `target`: walks back from target until the state head
 * (or the seed), then applies the walked blocks forward. */
static int catch_up(silt_dataset *ds, const uint8_t target[SILT_MH_LEN])
{
    silt_arena *a = silt_arena_new();
    if (!a)
        return SILT_ENOMEM;
    walked *list = NULL;
    size_t n = 0, cap = 0;
    bool rebuild = ds->st.empty;
    uint8_t cur[SILT_MH_LEN];
    memcpy(cur, target, SILT_MH_LEN);
    uint64_t expect_seq = UINT64_MAX; /* sequence number the next block must have */
    int rc = 0;
    for (;;) {
        if (!rebuild && memcmp(cur, ds->st.head, SILT_MH_LEN) == 0)
            break;
        odf_MetadataBlock *blk = NULL;
        rc = silt_ds_load_block(ds, cur, a, &blk);
        if (rc < 0)
            break;
        if (expect_seq != UINT64_MAX && blk->sequence_number != expect_seq) {
            char t[SILT_MH_TEXT_LEN + 1];
            silt_multihash_to_text(cur, SILT_MH_LEN, t);
            rc = silt_err(SILT_ECORRUPT, "block %s: sequenceNumber is %llu, expected %llu", t,
                          (unsigned long long)blk->sequence_number, (unsigned long long)expect_seq);
            break;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            walked *nl = realloc(list, cap * sizeof *nl);
            if (!nl) {
                rc = silt_err(SILT_ENOMEM, "summary: out of memory");
                break;
            }
            list = nl;
        }
        memcpy(list[n].hash, cur, SILT_MH_LEN);
        list[n].blk = blk;
        n++;
        if (!rebuild && blk->sequence_number <= ds->st.seq)
            rebuild = true; /* the summary head is not an ancestor */
        if (!blk->prev_block_hash.data)
            break; /* reached the seed */
        if (blk->sequence_number == 0 || blk->prev_block_hash.len != SILT_MH_LEN) {
            char t[SILT_MH_TEXT_LEN + 1];
            silt_multihash_to_text(cur, SILT_MH_LEN, t);
            rc = silt_err(SILT_ECORRUPT, "block %s: invalid prevBlockHash", t);
            break;
        }
        expect_seq = blk->sequence_number - 1;
        memcpy(cur, blk->prev_block_hash.data, SILT_MH_LEN);
    }
    if (rc == 0 && rebuild)
        rc = state_reset(ds);
    for (size_t i = n; rc == 0 && i-- > 0;)
        rc = odf_chain_apply(&ds->st, list[i].blk, list[i].hash);
    free(list);
    silt_arena_free(a);
    return rc;
}

/* ---- state cache (see the head comment) ------------------------------- */

#define STATE_CACHE_N 64

typedef struct state_cached {
    char *key; /* "<dir>\n<ref>" (owned), NULL = free slot */
    odf_chain_state st; /* st.head is the head it describes */
} state_cached;

static pthread_mutex_t g_state_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool g_caches_on; /* silt_process_caches_enable: long-running processes only */

void silt_process_caches_enable(void)
{
    atomic_store(&g_caches_on, true);
}

bool silt_process_caches_on(void)
{
    return atomic_load(&g_caches_on);
}
static state_cached g_state[STATE_CACHE_N];
static size_t g_state_next;

static char *state_key(const silt_dataset *ds)
{
    size_t n = strlen(ds->dir) + strlen(ds->ref) + 2;
    char *k = malloc(n);
    if (k)
        snprintf(k, n, "%s\n%s", ds->dir, ds->ref);
    return k;
}

/* Copies the cached state of ds's ref at `head` into ds->st (empty on
 * entry). true on a hit; false (ds->st untouched) otherwise. */
static bool state_cache_get(silt_dataset *ds, const uint8_t head[SILT_MH_LEN])
{
    if (!silt_process_caches_on())
        return false;
    char *k = state_key(ds);
    if (!k)
        return false;
    bool hit = false;
    odf_chain_state copy;
    pthread_mutex_lock(&g_state_lock);
    for (size_t i = 0; i < STATE_CACHE_N; i++) {
        state_cached *c = &g_state[i];
        if (c->key && strcmp(c->key, k) == 0 && memcmp(c->st.head, head, SILT_MH_LEN) == 0) {
            hit = odf_chain_state_copy(&copy, &c->st) == 0;
            break;
        }
    }
    pthread_mutex_unlock(&g_state_lock);
    free(k);
    if (hit) {
        odf_chain_state_free(&ds->st);
        ds->st = copy;
    }
    return hit;
}

/* Publishes a copy of ds->st (best effort). */
static void state_cache_put(const silt_dataset *ds)
{
    if (ds->st.empty || !silt_process_caches_on())
        return;
    char *k = state_key(ds);
    odf_chain_state copy;
    if (!k || odf_chain_state_copy(&copy, &ds->st) < 0) {
        free(k);
        return;
    }
    pthread_mutex_lock(&g_state_lock);
    size_t slot = g_state_next;
    for (size_t i = 0; i < STATE_CACHE_N; i++)
        if (g_state[i].key && strcmp(g_state[i].key, k) == 0)
            slot = i;
    if (slot == g_state_next)
        g_state_next = (g_state_next + 1) % STATE_CACHE_N;
    state_cached old = g_state[slot];
    g_state[slot].key = k;
    g_state[slot].st = copy;
    pthread_mutex_unlock(&g_state_lock);
    if (old.key) {
        free(old.key);
        odf_chain_state_free(&old.st);
    }
}

/* The value of ds's ref (see "Head reads" above). */
static int read_head(silt_dataset *ds, uint8_t head[SILT_MH_LEN])
{
    if (!silt_process_caches_on())
        return silt_store_ref_read_hash(ds->store, ds->ref, head);
    char *p = silt_path_join(ds->dir, "refs", ds->ref, NULL);
    silt_stat_id ids[SILT_STAT_IDS] = {{0}};
    bool have = p && silt_stat_id_of(p, &ids[0]) == 0 && S_ISREG(ids[0].mode);
    char *hit = have ? silt_statcache_get('h', p, ids) : NULL;
    silt_buf mh = SILT_BUF_INIT;
    if (hit && silt_multihash_from_text(hit, &mh) == 0 && mh.len == SILT_MH_LEN) {
        memcpy(head, mh.data, SILT_MH_LEN);
        silt_buf_free(&mh);
        free(hit);
        free(p);
        return 0;
    }
    if (hit)
        silt_err_clear(); /* an entry that does not parse: read the file */
    silt_buf_free(&mh);
    free(hit);
    int rc = silt_store_ref_read_hash(ds->store, ds->ref, head);
    if (rc == 0 && have) {
        char text[SILT_MH_TEXT_LEN + 1];
        silt_multihash_to_text(head, SILT_MH_LEN, text);
        silt_statcache_put('h', p, ids, text);
    }
    free(p);
    return rc;
}

int silt_ds_sync(silt_dataset *ds)
{
    if (ds->pinned && !ds->st.empty)
        return 0; /* a snapshot handle: the state read at open (silt_dataset_pin) */
    uint8_t head[SILT_MH_LEN];
    int rc = read_head(ds, head);
    if (rc == SILT_ENOTFOUND)
        return silt_err(SILT_ENOTFOUND, "dataset '%s': branch %s has no head", ds->name, ds->branch);
    if (rc < 0)
        return silt_err_context(rc, "dataset '%s'", ds->name);
    if (!ds->st.empty && memcmp(ds->st.head, head, SILT_MH_LEN) == 0) {
        silt_ds_refresh_info(ds);
        return 0;
    }
    if (ds->st.empty && state_cache_get(ds, head)) {
        silt_ds_refresh_info(ds);
        return 0;
    }
    if (ds->st.empty && summary_load(ds) < 0)
        silt_err_clear(); /* any failure: rebuild; the summary is only a cache */
    if (!ds->st.empty && memcmp(ds->st.head, head, SILT_MH_LEN) == 0) {
        silt_ds_refresh_info(ds);
        state_cache_put(ds);
        return 0;
    }
    rc = catch_up(ds, head);
    if (rc < 0) {
        int rc2 = state_reset(ds);
        silt_ds_refresh_info(ds);
        return rc2 < 0 ? rc2 : silt_err_context(rc, "dataset '%s'", ds->name);
    }
    silt_ds_refresh_info(ds);
    state_cache_put(ds);
    if (silt_ds_summary_save(ds) < 0)
        silt_err_clear(); /* not fatal: the summary is a cache */
    return 0;
}
