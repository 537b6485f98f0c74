/* transfer_ws.c — repositories of a workspace and push / pull of datasets
 * (silt.h: silt_repo_*, silt_remote_pull, silt_remote_push), on top of the
 * store-to-store transfer of transfer.c.
 *
 * .silt/repos.yaml lists the repositories (name, url, tokenEnv) in the
 * fixed form this file writes; secrets are never stored, only the name of
 * the variable holding a token. A clone remembers where it came from in
 * <dataset>/info/remote (one line: REPO/NAME or the dataset URL).
 * Invariants: a clone is built in .silt/tmp/clone-<name>/ (a stable name, so
 * that an interrupted clone resumes with the objects it verified) and
 * appears by one rename once complete; an update writes objects and blocks
 * into the dataset and moves refs/head last, by compare-and-swap.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dataset/dataset_internal.h"
#include "ops/transfer.h"
#include "util/error.h"
#include "util/fsutil.h"

/* ---- repos.yaml --------------------------------------------------------------- */

static char *repos_path(silt_workspace *ws) { return silt_path_join(ws->root, "repos.yaml", NULL); }

void silt_repos_free(silt_repo *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++) {
        free(v[i].name);
        free(v[i].url);
        free(v[i].token_env);
    }
    free(v);
}

static bool url_ok(const char *u)
{
    if (!u || !*u || strlen(u) > 900)
        return false;
    for (const char *p = u; *p; p++)
        if ((unsigned char)*p <= ' ' || *p == '"' || *p == '#')
            return false;
    return strncmp(u, "file:///", 8) == 0 || strncmp(u, "http://", 7) == 0 || strncmp(u, "https://", 8) == 0 ||
           strncmp(u, "s3://", 5) == 0 || strncmp(u, "s3+http://", 10) == 0 || strncmp(u, "s3+https://", 11) == 0;
}

static bool env_name_ok(const char *v)
{
    if (!v || !*v || strlen(v) > 100 || isdigit((unsigned char)v[0]))
        return false;
    for (const char *p = v; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_')
            return false;
    return true;
}

static int repo_push(silt_repo **v, size_t *n, const char *name, const char *url, const char *env)
{
    silt_repo *nv = realloc(*v, (*n + 1) * sizeof *nv);
    if (!nv)
        return silt_err(SILT_ENOMEM, "repos: out of memory");
    *v = nv;
    silt_repo *r = &nv[*n];
    r->name = strdup(name);
    r->url = strdup(url);
    r->token_env = env ? strdup(env) : NULL;
    (*n)++;
    if (!r->name || !r->url || (env && !r->token_env))
        return silt_err(SILT_ENOMEM, "repos: out of memory");
    return 0;
}

/* Parses one "key: value" line of an entry into the entry being built. */
static int parse_line(const char *path, int lineno, char *line, char **name, char **url, char **env)
{
    char *p = line;
    while (*p == ' ')
        p++;
    if (*p == '-') {
        p++;
        while (*p == ' ')
            p++;
    }
    char *colon = strchr(p, ':');
    if (!colon)
        return silt_err(SILT_EINVAL, "%s:%d: expected 'key: value'", path, lineno);
    *colon = '\0';
    char *val = colon + 1;
    while (*val == ' ')
        val++;
    char **slot = strcmp(p, "name") == 0 ? name : strcmp(p, "url") == 0 ? url : strcmp(p, "tokenEnv") == 0 ? env : NULL;
    if (!slot)
        return silt_err(SILT_EINVAL, "%s:%d: unknown key '%s'", path, lineno, p);
    if (*slot)
        return silt_err(SILT_EINVAL, "%s:%d: '%s' given twice in one entry", path, lineno, p);
    *slot = val;
    return 0;
}

static int check_entry(const char *path, int lineno, const char *name, const char *url, const char *env)
{
    if (!name || !silt_ds_name_valid(name))
        return silt_err(SILT_EINVAL, "%s:%d: invalid repository name", path, lineno);
    if (!url_ok(url))
        return silt_err(SILT_EINVAL, "%s:%d: invalid url", path, lineno);
    if (env && !env_name_ok(env))
        return silt_err(SILT_EINVAL, "%s:%d: invalid tokenEnv", path, lineno);
    return 0;
}

int silt_repos_parse(char *text, const char *path, silt_repo **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    char *name = NULL, *url = NULL, *env = NULL;
    int lineno = 0, start = 0, rc = 0;
    char *save = NULL;
    for (char *line = text ? strtok_r(text, "\n", &save) : NULL; rc == 0 && line; line = strtok_r(NULL, "\n", &save)) {
        lineno++;
        if (line[0] == '#' || strcmp(line, "repos:") == 0 || strspn(line, " ") == strlen(line))
            continue;
        bool item = strstr(line, "- ") == line + strspn(line, " ");
        if (item && (name || url || env)) {
            rc = check_entry(path, start, name, url, env);
            if (rc == 0)
                rc = repo_push(out, n, name, url, env);
            name = url = env = NULL;
        }
        if (rc == 0 && item)
            start = lineno;
        if (rc == 0)
            rc = parse_line(path, lineno, line, &name, &url, &env);
    }
    if (rc == 0 && (name || url || env)) {
        rc = check_entry(path, start, name, url, env);
        if (rc == 0)
            rc = repo_push(out, n, name, url, env);
    }
    if (rc < 0) {
        silt_repos_free(*out, *n);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

static int repos_load(silt_workspace *ws, silt_repo **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    char *path = repos_path(ws);
    if (!path)
        return silt_err(SILT_ENOMEM, "repos: out of memory");
    silt_buf b = SILT_BUF_INIT;
    int rc = silt_fs_read(path, &b);
    if (rc == SILT_ENOTFOUND) {
        silt_err_clear();
        rc = 0;
    } else if (rc == 0 && b.data && strlen(b.data) != b.len) {
        rc = silt_err(SILT_EINVAL, "%s: holds a NUL byte", path);
    } else if (rc == 0) {
        rc = silt_repos_parse(b.data, path, out, n);
    }
    silt_buf_free(&b);
    free(path);
    return rc;
}

static int cmp_repo(const void *a, const void *b)
{
    return strcmp(((const silt_repo *)a)->name, ((const silt_repo *)b)->name);
}

int silt_repos_format(silt_buf *b, silt_repo *v, size_t n)
{
    if (n) /* (qsort's array must not be NULL, even when empty) */
        qsort(v, n, sizeof *v, cmp_repo);
    int rc = silt_buf_puts(b, "# silt repositories (silt repo add); tokens are never stored here, only the\n"
                              "# name of the environment variable that holds one (tokenEnv)\nrepos:\n");
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rc = silt_buf_printf(b, "  - name: %s\n    url: %s\n", v[i].name, v[i].url);
        if (rc == 0 && v[i].token_env)
            rc = silt_buf_printf(b, "    tokenEnv: %s\n", v[i].token_env);
    }
    return rc;
}

static int repos_save(silt_workspace *ws, silt_repo *v, size_t n)
{
    silt_buf b = SILT_BUF_INIT;
    int rc = silt_repos_format(&b, v, n);
    char *path = repos_path(ws);
    if (rc == 0 && !path)
        rc = silt_err(SILT_ENOMEM, "repos: out of memory");
    if (rc == 0)
        rc = silt_fs_write_atomic(path, b.data, b.len, false);
    free(path);
    silt_buf_free(&b);
    return rc;
}

int silt_repo_add(silt_workspace *ws, const char *name, const char *url, const char *token_env)
{
    if (!name || !silt_ds_name_valid(name))
        return silt_err(SILT_EINVAL, "invalid repository name '%s': " SILT_DS_NAME_RULE, name ? name : "");
    if (!url_ok(url))
        return silt_err(SILT_EINVAL,
                        "invalid repository URL '%s': expected file:///path, http(s)://host[:port]/odf, "
                        "s3://bucket/prefix or s3+http(s)://host[:port]/bucket/prefix",
                        url ? url : "");
    if (token_env && !env_name_ok(token_env))
        return silt_err(SILT_EINVAL, "invalid --token-env '%s': an environment variable name", token_env);
    int fd = silt_ws_lock(ws);
    if (fd < 0)
        return fd;
    silt_repo *v = NULL;
    size_t n = 0;
    int rc = repos_load(ws, &v, &n);
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (strcmp(v[i].name, name) == 0)
            rc = silt_err(SILT_EEXISTS, "repository '%s' already exists", name);
    if (rc == 0)
        rc = repo_push(&v, &n, name, url, token_env);
    if (rc == 0)
        rc = repos_save(ws, v, n);
    silt_repos_free(v, n);
    silt_ws_unlock(fd);
    return rc;
}

int silt_repo_list(silt_repo **out, size_t *n, silt_workspace *ws)
{
    int rc = repos_load(ws, out, n);
    if (rc == 0 && *n)
        qsort(*out, *n, sizeof **out, cmp_repo);
    return rc;
}

int silt_repo_delete(silt_workspace *ws, const char *name)
{
    int fd = silt_ws_lock(ws);
    if (fd < 0)
        return fd;
    silt_repo *v = NULL;
    size_t n = 0;
    int rc = repos_load(ws, &v, &n);
    size_t i = 0;
    while (rc == 0 && i < n && strcmp(v[i].name, name ? name : "") != 0)
        i++;
    if (rc == 0 && i == n)
        rc = silt_err(SILT_ENOTFOUND, "repository '%s' not found", name ? name : "");
    if (rc == 0) {
        silt_repo gone = v[i];
        memmove(&v[i], &v[i + 1], (n - i - 1) * sizeof *v);
        n--;
        free(gone.name);
        free(gone.url);
        free(gone.token_env);
        rc = repos_save(ws, v, n);
    }
    silt_repos_free(v, n);
    silt_ws_unlock(fd);
    return rc;
}

/* ---- remote references -------------------------------------------------------- */

typedef struct remote {
    char url[1024];   /* repository URL */
    char name[128];   /* dataset name in it */
    char env[128];    /* token variable */
} remote;

static int resolve_remote(silt_workspace *ws, const char *arg, const char *token_env, remote *r)
{
    memset(r, 0, sizeof *r);
    const char *slash = arg ? strrchr(arg, '/') : NULL;
    if (!arg || !slash || !slash[1] || strlen(arg) >= sizeof r->url)
        return silt_err(SILT_EINVAL, "'%s' is not REPO/NAME or a dataset URL", arg ? arg : "");
    if (strstr(arg, "://")) {
        snprintf(r->url, sizeof r->url, "%.*s", (int)(slash - arg), arg);
        snprintf(r->name, sizeof r->name, "%s", slash + 1);
        snprintf(r->env, sizeof r->env, "%s", token_env ? token_env : "SILT_TOKEN");
        return 0;
    }
    const char *first = strchr(arg, '/');
    if (first != slash)
        return silt_err(SILT_EINVAL, "'%s' is not REPO/NAME or a dataset URL", arg);
    silt_repo *v = NULL;
    size_t n = 0;
    int rc = repos_load(ws, &v, &n);
    size_t i = 0;
    while (rc == 0 && i < n && (strlen(v[i].name) != (size_t)(slash - arg) || strncmp(v[i].name, arg, slash - arg)))
        i++;
    if (rc == 0 && i == n)
        rc = silt_err(SILT_ENOTFOUND, "unknown repository '%.*s' (see silt repo list)", (int)(slash - arg), arg);
    if (rc == 0) {
        snprintf(r->url, sizeof r->url, "%s", v[i].url);
        snprintf(r->name, sizeof r->name, "%s", slash + 1);
        snprintf(r->env, sizeof r->env, "%s",
                 token_env ? token_env : v[i].token_env ? v[i].token_env : "SILT_TOKEN");
    }
    silt_repos_free(v, n);
    return rc;
}

bool silt_remote_ref_is(silt_workspace *ws, const char *arg)
{
    (void)ws; /* a dataset name never holds '/': REPO/NAME or a URL */
    return arg && strchr(arg, '/') != NULL;
}

static int open_remote(silt_store **out, const remote *r, bool create)
{
    silt_store_remote_opts ro = {.token = getenv(r->env)};
    return silt_store_open_url(out, r->url, r->name, &ro, create);
}

static void fill_result(silt_transfer_result *out, const silt_xfer_result *x)
{
    out->up_to_date = x->up_to_date;
    snprintf(out->old_head, sizeof out->old_head, "%s", x->old_head);
    snprintf(out->new_head, sizeof out->new_head, "%s", x->new_head);
    out->blocks = x->blocks;
    out->objects = x->objects;
    out->bytes = x->bytes;
    out->skipped = x->skipped;
    out->dropped = x->dropped;
}

static int write_remote(const char *dir, const char *ref)
{
    char *p = silt_path_join(dir, "info", "remote", NULL);
    if (!p)
        return silt_err(SILT_ENOMEM, "pull: out of memory");
    int rc = silt_fs_write_atomic(p, ref, strlen(ref), false);
    free(p);
    return rc;
}

/* Transfers src -> the local store on `dir`, downloads in a scratch dir. */
static int xfer_into(silt_workspace *ws, silt_store *src, const char *dir, const char *src_label,
                     const char *dst_label, const silt_transfer_opts *o, silt_xfer_result *xr)
{
    silt_store *dst = NULL;
    char *tmp = NULL;
    int rc = silt_store_open_local(&dst, dir, true);
    if (rc == 0)
        rc = silt_ws_mktemp(ws, "tmp", &tmp);
    if (rc == 0) {
        silt_xfer_opts xo = {.jobs = o ? o->jobs : 0, .force = o && o->force, .tmp_dir = tmp,
                             .src_label = src_label, .dst_label = dst_label,
                             .note = o ? o->note : NULL, .note_ctx = o ? o->note_ctx : NULL};
        rc = silt_xfer_run(src, dst, &xo, xr);
    }
    if (tmp) {
        silt_fs_remove_tree(tmp);
        free(tmp);
    }
    silt_store_free(dst);
    return rc;
}

/* Clone into .silt/tmp/clone-<local>/, then publish it as `local`. */
static int clone_remote(silt_transfer_result *out, silt_workspace *ws, silt_store *src, const char *ref,
                        const char *local, const silt_transfer_opts *o)
{
    char leaf[160];
    snprintf(leaf, sizeof leaf, "clone-%s", local);
    char *stage = silt_path_join(ws->root, "tmp", leaf, NULL);
    if (!stage)
        return silt_err(SILT_ENOMEM, "pull: out of memory");
    char dl[200];
    snprintf(dl, sizeof dl, "local dataset '%s'", local);
    silt_xfer_result xr;
    int rc = xfer_into(ws, src, stage, ref, dl, o, &xr);
    char *alias = rc == 0 ? silt_path_join(stage, "info", "alias", NULL) : NULL;
    char *info = rc == 0 ? silt_path_join(stage, "info", NULL) : NULL;
    if (rc == 0 && (!alias || !info))
        rc = silt_err(SILT_ENOMEM, "pull: out of memory");
    if (rc == 0)
        rc = silt_fs_mkdirs(info);
    if (rc == 0)
        rc = silt_fs_write_atomic(alias, local, strlen(local), false);
    if (rc == 0)
        rc = write_remote(stage, ref);
    silt_dataset *ds = NULL;
    char id[SILT_DID_TEXT_LEN + 1] = "";
    if (rc == 0)
        rc = silt_ds_open_dir(&ds, ws, stage, NULL);
    if (rc == 0)
        memcpy(id, ds->id, sizeof id);
    silt_dataset_free(ds);
    char *home = rc == 0 ? silt_path_join(ws->datasets, id + 8, NULL) : NULL;
    if (rc == 0 && home && silt_fs_is_dir(home)) {
        char *other = NULL;
        silt_ws_read_alias(home, &other);
        rc = silt_err(SILT_EEXISTS, "pull %s: dataset %s is already here as '%s'", ref, id, other ? other : "?");
        free(other);
    }
    if (rc == 0)
        rc = silt_ds_publish_staged(ws, stage, local, id, NULL);
    fill_result(out, &xr);
    out->cloned = rc == 0;
    free(home);
    free(alias);
    free(info);
    free(stage);
    return rc;
}

static int update_local(silt_transfer_result *out, silt_workspace *ws, silt_store *src, const char *ref,
                        const char *dir, const char *local, const silt_transfer_opts *o)
{
    char dl[200];
    snprintf(dl, sizeof dl, "local dataset '%s'", local);
    silt_xfer_result xr;
    int rc = xfer_into(ws, src, dir, ref, dl, o, &xr);
    fill_result(out, &xr);
    if (rc == 0 && !xr.up_to_date) {
        silt_dataset *ds = NULL; /* brings the summary up to the new head */
        rc = silt_ds_open_dir(&ds, ws, dir, NULL);
        silt_dataset_free(ds);
    }
    return rc;
}

int silt_remote_pull(silt_transfer_result *out, silt_workspace *ws, const char *ref, const silt_transfer_opts *o)
{
    memset(out, 0, sizeof *out);
    remote r;
    int rc = resolve_remote(ws, ref, o ? o->token_env : NULL, &r);
    if (rc < 0)
        return rc;
    const char *local = o && o->as ? o->as : r.name;
    snprintf(out->name, sizeof out->name, "%s", local);
    snprintf(out->remote, sizeof out->remote, "%s", ref);
    if (!silt_ds_name_valid(local))
        return silt_err(SILT_EINVAL, "invalid dataset name '%s': " SILT_DS_NAME_RULE, local);
    silt_store *src = NULL;
    rc = open_remote(&src, &r, false);
    if (rc < 0)
        return silt_err_context(rc, "pull %s", ref);
    char *dir = NULL;
    rc = silt_ws_find_by_name(ws, local, &dir);
    if (rc == SILT_ENOTFOUND) {
        silt_err_clear();
        rc = clone_remote(out, ws, src, ref, local, o);
    } else if (rc == 0) {
        rc = update_local(out, ws, src, ref, dir, local, o);
    }
    free(dir);
    silt_store_free(src);
    return rc;
}

int silt_dataset_remote_get(char **out, silt_dataset *ds)
{
    *out = NULL;
    char *p = silt_path_join(ds->dir, "info", "remote", NULL);
    if (!p)
        return silt_err(SILT_ENOMEM, "out of memory");
    silt_buf b = SILT_BUF_INIT;
    int rc = silt_fs_read(p, &b);
    free(p);
    if (rc == SILT_ENOTFOUND) {
        silt_err_clear();
        silt_buf_free(&b);
        return 0;
    }
    if (rc < 0) {
        silt_buf_free(&b);
        return rc;
    }
    while (b.len && (b.data[b.len - 1] == '\n' || b.data[b.len - 1] == ' '))
        b.data[--b.len] = '\0';
    *out = silt_buf_detach(&b);
    if (!*out)
        return silt_err(SILT_ENOMEM, "out of memory");
    return 0;
}

int silt_remote_push(silt_transfer_result *out, silt_workspace *ws, const char *name, const char *ref,
                     const silt_transfer_opts *o)
{
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", name ? name : "");
    silt_dataset *ds = NULL;
    int rc = silt_dataset_open(&ds, ws, name);
    if (rc < 0)
        return rc;
    char *remembered = NULL;
    if (!ref) {
        rc = silt_dataset_remote_get(&remembered, ds);
        if (rc == 0 && !remembered)
            rc = silt_err(SILT_EINVAL, "push '%s': no remote known for it; give REPO/NAME or a dataset URL", name);
        ref = remembered;
    }
    remote r;
    silt_store *src = NULL, *dst = NULL;
    if (rc == 0)
        rc = resolve_remote(ws, ref, o ? o->token_env : NULL, &r);
    if (rc == 0)
        snprintf(out->remote, sizeof out->remote, "%s", ref);
    if (rc == 0)
        rc = silt_store_open_local(&src, ds->dir, false);
    if (rc == 0 && (rc = open_remote(&dst, &r, true)) < 0)
        rc = silt_err_context(rc, "push %s", ref);
    if (rc == 0) {
        char sl[200];
        snprintf(sl, sizeof sl, "local dataset '%s'", name);
        silt_xfer_opts xo = {.jobs = o ? o->jobs : 0, .force = o && o->force, .src_label = sl,
                             .dst_label = ref, .note = o ? o->note : NULL, .note_ctx = o ? o->note_ctx : NULL};
        silt_xfer_result xr;
        rc = silt_xfer_run(src, dst, &xo, &xr);
        fill_result(out, &xr);
    }
    silt_store_free(src);
    silt_store_free(dst);
    free(remembered);
    silt_dataset_free(ds);
    return rc;
}
