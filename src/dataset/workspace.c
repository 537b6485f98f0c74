/* workspace.c — the `.silt/` workspace: creation, discovery (explicit dir,
 * $SILT_WORKSPACE, nearest `.silt/` upward from the working directory), the
 * workspace-wide lock and name lookup.
 *
 * Invariants: a dataset is visible only as a complete directory
 * `.silt/datasets/<did-multibase>/` (built elsewhere and renamed in);
 * creating, renaming and deleting datasets happen under an exclusive flock
 * on `.silt/lock`, so two datasets never share a name (info/alias). Names
 * are looked up by scanning datasets/ (dot-entries are skipped).
 *
 * Scratch space: every temporary directory of a command is
 * `.silt/<sub>/<owner>-<random>/` (util/scratch.h: the name records the
 * pid and start time of the process that created it). Creating one first
 * removes the leftovers of processes that are gone (tmp/, tmp/spill/,
 * trash/), so a killed command's files do not outlive the next command;
 * a live process' directory is never touched.
 *
 * Open cache: resolving an explicit directory (realpath, is-dir checks,
 * creating datasets/) is done once per process and directory string; a
 * later open of the same string reuses the result when `.silt/datasets`
 * still is the same directory (stat: device and inode) and, unless the
 * string is canonical (its own realpath, so it maps to the same `.silt`
 * string whatever happens to its components), `dir` and the cached `.silt`
 * still are those directories. Anything else (moved, removed, replaced by
 * a symlink to elsewhere) resolves afresh. Relative paths are never cached
 * (they depend on the working directory).
 *
 * Lookup cache: name -> dataset directory and RID -> dataset directory
 * (silt_ws_dircache_*), process-wide, shared by threads under a mutex. An
 * entry is only a hint: the caller validates it on every use (a name's
 * directory must still hold that name in info/alias — names are unique —
 * and a RID's directory must still exist, its name being the id the RID
 * is derived from) and falls back to the scan, so a rename, delete or
 * re-creation by another process is seen by the next lookup. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dataset/dataset_internal.h"
#include "util/arena.h"
#include "util/error.h"
#include "util/fsutil.h"
#include "util/scratch.h"

/* ODF DatasetName = Hostname (spec "Dataset Identity"):
 *   Hostname  = Subdomain ("." Subdomain)*
 *   Subdomain = [a-zA-Z0-9]+ ("-" [a-zA-Z0-9]+)*
 * i.e. ASCII letters and digits; '.' and '-' only between two of them.
 * silt adds one bound, SILT_DS_NAME_MAX characters (docs/decisions.md). */
static bool is_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool silt_ds_name_valid(const char *name)
{
    if (!name)
        return false;
    size_t n = strlen(name);
    if (n == 0 || n > SILT_DS_NAME_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (is_alnum(c))
            continue;
        if (c != '.' && c != '-')
            return false;
        /* a separator needs a letter or digit on both sides */
        if (i == 0 || i + 1 == n || !is_alnum(name[i - 1]) || !is_alnum(name[i + 1]))
            return false;
    }
    return true;
}

bool silt_ds_name_ref_ok(const char *name)
{
    /* names of datasets created before the ODF rule (e.g. with '_') still
     * resolve, so they can be renamed or deleted */
    return silt_ds_name_valid(name) || silt_store_valid_branch_name(name);
}

int silt_workspace_init(const char *dir)
{
    if (!dir || !*dir)
        return silt_err(SILT_EINVAL, "workspace: empty directory");
    if (!silt_fs_is_dir(dir))
        return silt_err(SILT_ENOTFOUND, "%s: directory does not exist", dir);
    char *root = silt_path_join(dir, ".silt", NULL);
    char *ds = root ? silt_path_join(root, "datasets", NULL) : NULL;
    if (!ds) {
        free(root);
        return silt_err(SILT_ENOMEM, "workspace: out of memory");
    }
    int rc = 0;
    if (mkdir(root, 0755) != 0) {
        rc = errno == EEXIST ? silt_err(SILT_EEXISTS, "%s: workspace already exists", root)
                             : silt_err(SILT_EIO, "%s: mkdir: %s", root, strerror(errno));
    } else {
        rc = silt_fs_mkdirs(ds);
        if (rc == 0)
            rc = silt_fs_fsync_dir(dir);
    }
    free(ds);
    free(root);
    return rc;
}

/* Resolves `dir` (holding `.silt`, or the `.silt` dir itself) to the
 * absolute `.silt` path. ENOTFOUND if there is no workspace. */
static int resolve_root(const char *dir, char **out)
{
    char real[PATH_MAX];
    if (!realpath(dir, real))
        return silt_err(SILT_ENOTFOUND, "%s: no such directory", dir);
    const char *base = strrchr(real, '/');
    base = base ? base + 1 : real;
    char *root;
    if (strcmp(base, ".silt") == 0 && silt_fs_is_dir(real))
        root = strdup(real);
    else
        root = silt_path_join(real, ".silt", NULL);
    if (!root)
        return silt_err(SILT_ENOMEM, "workspace: out of memory");
    if (!silt_fs_is_dir(root)) {
        free(root);
        return silt_err(SILT_ENOTFOUND, "%s: not a silt workspace (run `silt init`)", dir);
    }
    *out = root;
    return 0;
}

/* Nearest `.silt/` upward from the working directory. */
static int discover_root(char **out)
{
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        return silt_err(SILT_EIO, "workspace: getcwd: %s", strerror(errno));
    for (;;) {
        char *cand = silt_path_join(strcmp(cwd, "/") == 0 ? "" : cwd, ".silt", NULL);
        if (!cand)
            return silt_err(SILT_ENOMEM, "workspace: out of memory");
        if (silt_fs_is_dir(cand)) {
            *out = cand;
            return 0;
        }
        free(cand);
        char *slash = strrchr(cwd, '/');
        if (!slash || strcmp(cwd, "/") == 0)
            break;
        if (slash == cwd)
            slash[1] = '\0';
        else
            *slash = '\0';
    }
    return silt_err(SILT_ENOTFOUND,
                    "no silt workspace found in the working directory or above (run `silt init`, "
                    "or use --workspace / SILT_WORKSPACE)");
}

/* ---- the open cache (see the head comment) ------------------------------- */

#define WS_CACHE_N 8

typedef struct ws_cached {
    char *dir;  /* the directory string given to open (absolute; owned) */
    char *root; /* its `.silt` (owned) */
    dev_t dir_dev, root_dev, ds_dev;
    ino_t dir_ino, root_ino, ds_ino;
    bool canonical; /* root is dir or dir/.silt: dir is an absolute path without symlinks, . or .. */
} ws_cached;

static pthread_mutex_t g_ws_lock = PTHREAD_MUTEX_INITIALIZER;
static ws_cached g_ws[WS_CACHE_N];
static size_t g_ws_next;

static bool stat_dir(const char *p, dev_t *dev, ino_t *ino)
{
    struct stat st;
    if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode))
        return false;
    *dev = st.st_dev;
    *ino = st.st_ino;
    return true;
}

/* The cached `.silt` of `dir` (malloc'd) if every check still holds, else
 * NULL. The entry is copied under the lock and checked outside it: the
 * server calls this on every request from every connection thread. */
static char *ws_cache_get(const char *dir)
{
    ws_cached c = {0};
    char *root = NULL, *ds = NULL;
    pthread_mutex_lock(&g_ws_lock);
    for (size_t i = 0; i < WS_CACHE_N && !root; i++) {
        if (!g_ws[i].dir || strcmp(g_ws[i].dir, dir) != 0)
            continue;
        c = g_ws[i];
        root = strdup(c.root); /* NULL on ENOMEM: resolved afresh */
        ds = root ? silt_path_join(c.root, "datasets", NULL) : NULL;
    }
    pthread_mutex_unlock(&g_ws_lock);
    if (!root || !ds) {
        free(root);
        free(ds);
        return NULL;
    }
    dev_t d;
    ino_t n;
    /* a canonical dir string resolves to the same root string whatever
     * replaced a component since: its datasets/ being the same directory
     * is then all the cache stands for */
    bool ok = c.canonical || (stat_dir(dir, &d, &n) && d == c.dir_dev && n == c.dir_ino &&
                              stat_dir(root, &d, &n) && d == c.root_dev && n == c.root_ino);
    ok = ok && stat_dir(ds, &d, &n) && d == c.ds_dev && n == c.ds_ino;
    free(ds);
    if (!ok) {
        free(root);
        return NULL;
    }
    return root;
}

/* Remembers dir -> root (best effort: nothing is cached on any failure). */
static void ws_cache_put(const char *dir, const char *root, const char *datasets)
{
    ws_cached c = {0};
    if (dir[0] != '/' || !stat_dir(dir, &c.dir_dev, &c.dir_ino) || !stat_dir(root, &c.root_dev, &c.root_ino) ||
        !stat_dir(datasets, &c.ds_dev, &c.ds_ino))
        return;
    char real[PATH_MAX];
    size_t dl = strlen(dir);
    c.canonical = realpath(dir, real) && strcmp(real, dir) == 0 &&
                  (strcmp(root, dir) == 0 || (strncmp(root, dir, dl) == 0 && strcmp(root + dl, "/.silt") == 0));
    c.dir = strdup(dir);
    c.root = strdup(root);
    if (!c.dir || !c.root) {
        free(c.dir);
        free(c.root);
        return;
    }
    pthread_mutex_lock(&g_ws_lock);
    size_t slot = g_ws_next;
    for (size_t i = 0; i < WS_CACHE_N; i++)
        if (g_ws[i].dir && strcmp(g_ws[i].dir, dir) == 0)
            slot = i;
    if (slot == g_ws_next)
        g_ws_next = (g_ws_next + 1) % WS_CACHE_N;
    free(g_ws[slot].dir);
    free(g_ws[slot].root);
    g_ws[slot] = c;
    pthread_mutex_unlock(&g_ws_lock);
}

/* Resolves an explicit directory through the cache. *cached tells whether
 * the answer came from it (then datasets/ exists and needs no mkdirs). */
static int resolve_cached(const char *dir, char **root, bool *cached)
{
    *cached = false;
    if (dir[0] == '/' && (*root = ws_cache_get(dir)) != NULL) {
        *cached = true;
        return 0;
    }
    return resolve_root(dir, root);
}

int silt_workspace_open(silt_workspace **out, const char *dir)
{
    *out = NULL;
    char *root = NULL;
    int rc;
    bool cached = false;
    const char *env = dir && *dir ? NULL : getenv("SILT_WORKSPACE");
    const char *given = dir && *dir ? dir : env && *env ? env : NULL;
    if (given)
        rc = resolve_cached(given, &root, &cached);
    else
        rc = discover_root(&root);
    if (rc < 0)
        return rc;
    silt_workspace *ws = silt_zalloc(sizeof *ws);
    char *ds = silt_path_join(root, "datasets", NULL);
    if (!ws || !ds) {
        free(ws);
        free(ds);
        free(root);
        return silt_err(SILT_ENOMEM, "workspace: out of memory");
    }
    ws->root = root;
    ws->datasets = ds;
    rc = cached ? 0 : silt_fs_mkdirs(ds);
    if (rc < 0) {
        silt_workspace_free(ws);
        return rc;
    }
    if (given && !cached)
        ws_cache_put(given, root, ds);
    *out = ws;
    return 0;
}

void silt_workspace_free(silt_workspace *ws)
{
    if (!ws)
        return;
    free(ws->root);
    free(ws->datasets);
    free(ws);
}

const char *silt_workspace_path(const silt_workspace *ws)
{
    return ws ? ws->root : NULL;
}

int silt_ws_lock(silt_workspace *ws)
{
    char *p = silt_path_join(ws->root, "lock", NULL);
    if (!p)
        return silt_err(SILT_ENOMEM, "workspace: out of memory");
    int fd = silt_fs_lock(p, true);
    free(p);
    return fd;
}

void silt_ws_unlock(int fd) { silt_fs_unlock(fd); }

/* In a long-running process the alias is taken from the stat cache while
 * the file stats the same: a rename writes a new file (new inode) and
 * renames it over the old one. */
int silt_ws_read_alias(const char *dir, char **out)
{
    char *p = silt_path_join(dir, "info", "alias", NULL);
    if (!p)
        return silt_err(SILT_ENOMEM, "workspace: out of memory");
    silt_stat_id ids[SILT_STAT_IDS] = {{0}};
    if (silt_process_caches_on() && silt_stat_id_of(p, &ids[0]) == 0 && (*out = silt_statcache_get('a', p, ids))) {
        free(p);
        return 0;
    }
    silt_buf b = SILT_BUF_INIT;
    int rc = silt_fs_read(p, &b);
    if (rc < 0) {
        free(p);
        silt_buf_free(&b);
        return rc;
    }
    while (b.len > 0 && (b.data[b.len - 1] == '\n' || b.data[b.len - 1] == '\r'))
        b.data[--b.len] = '\0';
    *out = silt_buf_detach(&b);
    if (*out && ids[0].valid)
        silt_statcache_put('a', p, ids, *out);
    free(p);
    return *out ? 0 : silt_err(SILT_ENOMEM, "workspace: out of memory");
}

/* ---- lookup cache (see the head comment) ---------------------------------- */

#define DIR_CACHE_N 256

typedef struct dir_cached {
    char *key; /* "<kind>\n<datasets dir>\n<name or RID>" (owned) */
    char *dir; /* the dataset directory (owned) */
} dir_cached;

static pthread_mutex_t g_dir_lock = PTHREAD_MUTEX_INITIALIZER;
static dir_cached g_dir[DIR_CACHE_N];
static size_t g_dir_next;

static char *dir_key(const silt_workspace *ws, char kind, const char *key)
{
    size_t n = strlen(ws->datasets) + strlen(key) + 5;
    char *k = malloc(n);
    if (k)
        snprintf(k, n, "%c\n%s\n%s", kind, ws->datasets, key);
    return k;
}

char *silt_ws_dircache_get(const silt_workspace *ws, char kind, const char *key)
{
    char *k = dir_key(ws, kind, key), *dir = NULL;
    if (!k)
        return NULL;
    pthread_mutex_lock(&g_dir_lock);
    for (size_t i = 0; i < DIR_CACHE_N && !dir; i++)
        if (g_dir[i].key && strcmp(g_dir[i].key, k) == 0)
            dir = strdup(g_dir[i].dir);
    pthread_mutex_unlock(&g_dir_lock);
    free(k);
    return dir;
}

void silt_ws_dircache_put(const silt_workspace *ws, char kind, const char *key, const char *dir)
{
    char *k = dir_key(ws, kind, key), *d = strdup(dir);
    if (!k || !d) {
        free(k);
        free(d);
        return;
    }
    pthread_mutex_lock(&g_dir_lock);
    size_t slot = g_dir_next;
    for (size_t i = 0; i < DIR_CACHE_N; i++)
        if (g_dir[i].key && strcmp(g_dir[i].key, k) == 0)
            slot = i;
    if (slot == g_dir_next)
        g_dir_next = (g_dir_next + 1) % DIR_CACHE_N;
    free(g_dir[slot].key);
    free(g_dir[slot].dir);
    g_dir[slot] = (dir_cached){k, d};
    pthread_mutex_unlock(&g_dir_lock);
}

/* The cached directory of `name` if it still holds that name, else NULL. */
static char *name_cache_get(silt_workspace *ws, const char *name)
{
    char *dir = silt_ws_dircache_get(ws, 'n', name), *alias = NULL;
    if (!dir)
        return NULL;
    bool ok = silt_ws_read_alias(dir, &alias) == 0 && strcmp(alias, name) == 0;
    free(alias);
    if (ok)
        return dir;
    silt_err_clear();
    free(dir);
    return NULL;
}

static int find_by_name_scan(silt_workspace *ws, const char *name, char **dir_out);

int silt_ws_find_by_name(silt_workspace *ws, const char *name, char **dir_out)
{
    *dir_out = name_cache_get(ws, name);
    if (*dir_out)
        return 0;
    int rc = find_by_name_scan(ws, name, dir_out);
    if (rc == 0)
        silt_ws_dircache_put(ws, 'n', name, *dir_out);
    return rc;
}

static int find_by_name_scan(silt_workspace *ws, const char *name, char **dir_out)
{
    *dir_out = NULL;
    DIR *d = opendir(ws->datasets);
    if (!d)
        return silt_err(SILT_EIO, "%s: cannot list datasets: %s", ws->datasets, strerror(errno));
    int rc = silt_err(SILT_ENOTFOUND, "dataset '%s' not found", name);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char *dir = silt_path_join(ws->datasets, e->d_name, NULL);
        if (!dir) {
            rc = silt_err(SILT_ENOMEM, "workspace: out of memory");
            break;
        }
        char *alias = NULL;
        if (silt_ws_read_alias(dir, &alias) == 0 && strcmp(alias, name) == 0) {
            free(alias);
            *dir_out = dir;
            rc = 0;
            break;
        }
        free(alias);
        free(dir);
    }
    closedir(d);
    if (rc == SILT_ENOTFOUND) /* an unreadable alias may have overwritten the message */
        silt_err(SILT_ENOTFOUND, "dataset '%s' not found", name);
    return rc;
}

/* Removes the scratch directories under `dir` whose owner process is gone
 * (best effort: errors are ignored, the next command or gc tries again).
 * Directories of live processes, and those whose owner cannot be checked,
 * are left alone (gc removes the latter after its grace period). */
static void remove_dead_scratch(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (silt_scratch_owner(e->d_name, NULL) != SILT_OWNER_GONE)
            continue;
        char *p = silt_path_join(dir, e->d_name, NULL);
        if (p && silt_fs_remove_tree(p) < 0)
            silt_err_clear();
        free(p);
    }
    closedir(d);
}

static void remove_leftovers(silt_workspace *ws)
{
    static const char *const DIRS[] = {"tmp", "tmp/spill", "trash"};
    for (size_t i = 0; i < sizeof DIRS / sizeof DIRS[0]; i++) {
        char *dir = silt_path_join(ws->root, DIRS[i], NULL);
        if (dir)
            remove_dead_scratch(dir);
        free(dir);
    }
}

int silt_ws_mktemp(silt_workspace *ws, const char *sub, char **out)
{
    *out = NULL;
    char *base = silt_path_join(ws->root, sub, NULL);
    if (!base)
        return silt_err(SILT_ENOMEM, "workspace: out of memory");
    remove_leftovers(ws);
    int rc = silt_scratch_mkdir(base, out);
    free(base);
    return rc;
}

int silt_workspace_mktemp(silt_workspace *ws, char **out)
{
    return silt_ws_mktemp(ws, "tmp", out);
}
