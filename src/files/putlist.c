/* putlist.c — which local files a `silt upload` / `silt txn put` stages, and
 * under which logical paths (see silt.h, silt_put_list_build).
 *
 * Building a list reads the file system but writes nothing, so every
 * problem with the inputs (a missing file, a path outside the base, two
 * inputs for one logical path, a symbolic link inside a directory) is
 * reported before a transaction or an object exists.
 *
 * Rules:
 *  - the logical path of an input is its path relative to the base
 *    directory (the working directory unless a base is given). Paths are
 *    compared as written, after lexical normalisation (like `realpath -s`:
 *    "." and empty segments dropped, "x/.." removed; symbolic links in the
 *    names are not resolved); a relative path is taken against getcwd();
 *  - without a base an absolute input is an error; with or without one an
 *    input outside the base ("../x") is an error; `as` (one file only)
 *    gives the logical path explicitly;
 *  - a directory input stands for every regular file below it, recursively,
 *    in byte order of the names; a directory named ".silt" (a workspace) is
 *    skipped, as git skips .git; a symbolic link met inside a directory is
 *    an error (it is not followed: it could leave the tree or loop, and
 *    skipping it would lose a file silently); an input named on the command
 *    line is followed like `cp -H` does, and must be a regular file or a
 *    directory; other file types (FIFOs, devices, sockets) are errors;
 *  - every logical path then passes silt_files_path_normalize;
 *  - two inputs that map to one logical path are an error naming both.
 * Invariant: a built list is non-empty, its logical paths are normalised and
 * distinct, and it is sorted by logical path.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files/files.h"
#include "util/buf.h"
#include "util/error.h"

#define MAX_DEPTH 256

typedef struct item {
    char *local; /* path to open (as given, or input + "/" + names) */
    char *path;  /* logical path */
    size_t seq;  /* order of discovery (for messages) */
} item;

struct silt_put_list {
    item *v;
    size_t n, cap;
};

size_t silt_put_list_count(const silt_put_list *l) { return l ? l->n : 0; }
const char *silt_put_list_local(const silt_put_list *l, size_t i) { return l && i < l->n ? l->v[i].local : NULL; }
const char *silt_put_list_path(const silt_put_list *l, size_t i) { return l && i < l->n ? l->v[i].path : NULL; }

void silt_put_list_free(silt_put_list *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].local);
        free(l->v[i].path);
    }
    free(l->v);
    free(l);
}

static int oom(void) { return silt_err(SILT_ENOMEM, "out of memory"); }

/* Lexical normalisation of `path` into a malloc'd string: "/a/b" for an
 * absolute path ("/" for the root), "a/b" or "" for a relative one, with
 * leading ".." segments kept for a relative path that climbs out. */
static char *lex_norm(const char *path)
{
    bool abs = path[0] == '/';
    size_t len = strlen(path);
    char *out = malloc(len + 2);
    if (!out)
        return NULL;
    size_t o = 0;  /* length of out */
    size_t up = 0; /* leading ".." segments in out (relative paths) */
    const char *s = path;
    while (*s) {
        while (*s == '/')
            s++;
        const char *e = strchr(s, '/');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if (n == 0)
            break;
        if (n == 1 && s[0] == '.') {
            /* nothing */
        } else if (n == 2 && s[0] == '.' && s[1] == '.') {
            if (o > up * 3) { /* pop the last real segment */
                while (o > 0 && out[o - 1] != '/')
                    o--;
                if (o > 0)
                    o--;
            } else if (!abs) {
                if (o)
                    out[o++] = '/';
                memcpy(out + o, "..", 2);
                o += 2;
                up++;
            }
        } else {
            if (o)
                out[o++] = '/';
            memcpy(out + o, s, n);
            o += n;
        }
        s += n;
    }
    out[o] = '\0';
    if (abs) {
        memmove(out + 1, out, o + 1);
        out[0] = '/';
    }
    return out;
}

/* Absolute lexical form of `path` (relative ones against the working
 * directory); malloc'd. */
static int lex_abs(const char *path, char **out)
{
    *out = NULL;
    if (path[0] == '/') {
        *out = lex_norm(path);
        return *out ? 0 : oom();
    }
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd))
        return silt_err(SILT_EIO, "cannot get the working directory: %s", strerror(errno));
    silt_buf b = SILT_BUF_INIT;
    int rc = silt_buf_printf(&b, "%s/%s", cwd, path);
    if (!rc && !(*out = lex_norm(b.data)))
        rc = oom();
    silt_buf_free(&b);
    return rc;
}

/* `p` relative to `base` (both absolute and lexically normal) into *out
 * (malloc'd, "" when equal); 1 when p is not inside base. */
static int rel_to(const char *base, const char *p, char **out)
{
    *out = NULL;
    size_t bl = strcmp(base, "/") == 0 ? 0 : strlen(base);
    if (strncmp(p, base, bl) != 0 || (p[bl] != '\0' && p[bl] != '/'))
        return 1;
    const char *r = p + bl;
    while (*r == '/')
        r++;
    *out = strdup(r);
    return *out ? 0 : oom();
}

/* Adds local -> rel; `given`: rel is the caller's logical path (its error
 * needs no name of the input). */
static int add_item(silt_put_list *l, const char *local, const char *rel, bool given)
{
    char *norm = NULL;
    int rc = silt_files_path_normalize(&norm, rel);
    if (rc)
        return given ? rc : silt_err_context(rc, "input '%s'", local);
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        item *nv = realloc(l->v, cap * sizeof *nv);
        if (!nv) {
            free(norm);
            return oom();
        }
        l->v = nv;
        l->cap = cap;
    }
    item *it = &l->v[l->n];
    it->local = strdup(local);
    it->path = norm;
    it->seq = l->n;
    if (!it->local) {
        free(norm);
        return oom();
    }
    l->n++;
    return 0;
}

static int cmp_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Sorted entry names of directory `dir` (without "." and ".."); *names is
 * malloc'd, each name too. */
static int dir_names(const char *dir, char ***names, size_t *n)
{
    *names = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return silt_err(errno == ENOENT ? SILT_ENOTFOUND : SILT_EIO, "input '%s': %s", dir, strerror(errno));
    size_t cap = 0;
    int rc = 0;
    struct dirent *e;
    errno = 0;
    while (!rc && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 32;
            char **nv = realloc(*names, cap * sizeof *nv);
            if (!nv) {
                rc = oom();
                break;
            }
            *names = nv;
        }
        if (!((*names)[*n] = strdup(e->d_name)))
            rc = oom();
        else
            (*n)++;
    }
    if (!rc && errno)
        rc = silt_err(SILT_EIO, "input '%s': %s", dir, strerror(errno));
    closedir(d);
    if (!rc && *n)
        qsort(*names, *n, sizeof **names, cmp_name);
    return rc;
}

static void names_free(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

/* Adds every regular file below directory `local` (logical prefix `rel`). */
static int walk_dir(silt_put_list *l, const char *local, const char *rel, int depth)
{
    if (depth > MAX_DEPTH)
        return silt_err(SILT_EINVAL, "input '%s': directories nested deeper than %d levels", local, MAX_DEPTH);
    char **names = NULL;
    size_t n = 0;
    int rc = dir_names(local, &names, &n);
    silt_buf lp = SILT_BUF_INIT, rp = SILT_BUF_INIT;
    size_t ll = strlen(local);
    bool slash = ll > 0 && local[ll - 1] == '/';
    for (size_t i = 0; !rc && i < n; i++) {
        silt_buf_clear(&lp);
        silt_buf_clear(&rp);
        rc = silt_buf_printf(&lp, "%s%s%s", local, slash ? "" : "/", names[i]);
        if (!rc)
            rc = silt_buf_printf(&rp, "%s%s%s", rel, *rel ? "/" : "", names[i]);
        struct stat st;
        if (!rc && lstat(lp.data, &st) != 0)
            rc = silt_err(SILT_EIO, "input '%s': %s", lp.data, strerror(errno));
        if (rc)
            break;
        if (S_ISLNK(st.st_mode))
            rc = silt_err(SILT_EINVAL,
                          "'%s' is a symbolic link inside directory '%s': links in a tree are not followed "
                          "(name its target as an input of its own, or remove it)",
                          lp.data, local);
        else if (S_ISDIR(st.st_mode) && strcmp(names[i], ".silt") == 0)
            continue; /* a workspace: never uploaded */
        else if (S_ISDIR(st.st_mode))
            rc = walk_dir(l, lp.data, rp.data, depth + 1);
        else if (S_ISREG(st.st_mode))
            rc = add_item(l, lp.data, rp.data, false);
        else
            rc = silt_err(SILT_EINVAL, "'%s' is not a regular file (only regular files are uploaded)", lp.data);
    }
    silt_buf_free(&lp);
    silt_buf_free(&rp);
    names_free(names, n);
    return rc;
}

/* Stats an input named by the user (following a link): a regular file or
 * a directory. */
static int stat_input(const char *input, struct stat *st)
{
    if (stat(input, st) != 0)
        return silt_err(errno == ENOENT || errno == ENOTDIR ? SILT_ENOTFOUND : SILT_EIO, "input '%s': %s", input,
                        strerror(errno));
    if (!S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode))
        return silt_err(SILT_EINVAL, "input '%s' is not a regular file or a directory", input);
    return 0;
}

/* Adds one input named by the user: where it maps is decided from its name
 * first (absolute, outside the base), then the file system is asked. */
static int add_input(silt_put_list *l, const char *input, const char *abs_base, const char *base, const char *as)
{
    struct stat st;
    int rc;
    if (as) {
        rc = stat_input(input, &st);
        if (!rc && S_ISDIR(st.st_mode))
            rc = silt_err(SILT_EINVAL, "input '%s' is a directory: a logical path given with --as names one file "
                                       "(use --base DIR for a directory)",
                          input);
        return rc ? rc : add_item(l, input, as, true);
    }
    if (input[0] == '/' && !base)
        return silt_err(SILT_EINVAL,
                        "input '%s' is an absolute path: logical paths are relative; give a base directory (--base "
                        "DIR) or the logical path (--as PATH)",
                        input);
    char *abs = NULL, *rel = NULL;
    rc = lex_abs(input, &abs);
    if (!rc && rel_to(abs_base, abs, &rel) == 1)
        rc = silt_err(SILT_EINVAL,
                      "input '%s' is outside the base directory '%s': give a base directory that contains it "
                      "(--base DIR) or the logical path (--as PATH)",
                      input, base ? base : ".");
    if (!rc)
        rc = stat_input(input, &st);
    if (!rc && S_ISDIR(st.st_mode))
        rc = walk_dir(l, input, rel, 0);
    else if (!rc && !*rel)
        rc = silt_err(SILT_EINVAL, "input '%s' has an empty logical path", input);
    else if (!rc)
        rc = add_item(l, input, rel, false);
    free(abs);
    free(rel);
    return rc;
}

static int cmp_path(const void *a, const void *b)
{
    const item *x = a, *y = b;
    int c = strcmp(x->path, y->path);
    return c ? c : (x->seq > y->seq) - (x->seq < y->seq);
}

/* Sorts by logical path; two entries with one path are an error. */
static int check_distinct(silt_put_list *l)
{
    if (l->n > 1)
        qsort(l->v, l->n, sizeof *l->v, cmp_path);
    for (size_t i = 1; i < l->n; i++)
        if (strcmp(l->v[i - 1].path, l->v[i].path) == 0)
            return silt_err(SILT_EINVAL, "inputs '%s' and '%s' both map to logical path '%s'", l->v[i - 1].local,
                            l->v[i].local, l->v[i].path);
    return 0;
}

int silt_put_list_build(silt_put_list **out, const char *const *inputs, size_t n, const char *base, const char *as)
{
    *out = NULL;
    if (n == 0)
        return silt_err(SILT_EINVAL, "no input files");
    if (as && n != 1)
        return silt_err(SILT_EINVAL, "a logical path (--as) names exactly one input, got %zu", n);
    if (as && base)
        return silt_err(SILT_EINVAL, "give either a logical path (--as) or a base directory (--base), not both");
    if (base) {
        struct stat st;
        if (stat(base, &st) != 0)
            return silt_err(errno == ENOENT ? SILT_ENOTFOUND : SILT_EIO, "base directory '%s': %s", base,
                            strerror(errno));
        if (!S_ISDIR(st.st_mode))
            return silt_err(SILT_EINVAL, "base directory '%s': not a directory", base);
    }
    silt_put_list *l = calloc(1, sizeof *l);
    char *abs_base = NULL;
    int rc = l ? lex_abs(base ? base : ".", &abs_base) : oom();
    for (size_t i = 0; !rc && i < n; i++)
        rc = add_input(l, inputs[i], abs_base, base, as);
    if (!rc && l->n == 0 && n == 1)
        rc = silt_err(SILT_EINVAL, "nothing to upload: '%s' contains no regular file", inputs[0]);
    else if (!rc && l->n == 0)
        rc = silt_err(SILT_EINVAL, "nothing to upload: the inputs contain no regular file");
    if (!rc)
        rc = check_distinct(l);
    free(abs_base);
    if (rc) {
        silt_put_list_free(l);
        return rc;
    }
    *out = l;
    return 0;
}
