/* sql.c — `silt sql`: one SQL statement over the datasets of a workspace.
 *
 * Invariants:
 *  - only datasets whose names occur in the query (as a bare identifier, a
 *    "quoted identifier" or a 'string literal', optionally with @branch and
 *    :current) get a view; the dataset list is read once per call;
 *  - ledger datasets are views over their slices (src/dataset/data_views.c),
 *    files datasets over the files of their view read with their tabular
 *    schema (src/files/files_schema.c);
 *  - one engine per call (silt_ws_engine_open), freed before returning;
 *    nothing is ever written to a dataset;
 *  - unless opts->unsafe_file_access, the engine is confined after the views
 *    are made and before the query is prepared (silt_engine_confine): the
 *    query is one read-only statement and reads only the slice files of the
 *    views (files datasets are materialised while the views are made), and
 *    for --format parquet writes only the output file;
 *  - opts->visible hides datasets before the query is looked at, so a
 *    hidden dataset is exactly an unknown table; the per-query limits
 *    (memory_limit set before confinement locks the settings, the timeout
 *    watchdog around the run) turn into one-line SILT_EINVAL errors.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "dataset/data_views.h"
#include "dataset/dataset_internal.h"
#include "engine/arrow_stream.h"
#include "engine/query.h"
#include "files/files.h"
#include "files/files_schema.h"
#include "util/buf.h"
#include "util/error.h"

/* ---- references in a query ---------------------------------------------------- */

typedef struct qref {
    char *ref;     /* "name" or "name@branch" (owned) */
    bool current;  /* "<ref>:current" or current_state('<ref>') is used */
    bool has_as_of;
    uint8_t as_of[SILT_MH_LEN];
} qref;

typedef struct qrefs {
    qref *v;
    size_t n, cap;
} qrefs;

static void qrefs_free(qrefs *r)
{
    for (size_t i = 0; i < r->n; i++)
        free(r->v[i].ref);
    free(r->v);
    memset(r, 0, sizeof *r);
}

static int cmp_name(const void *k, const void *e)
{
    return strcmp((const char *)k, *(char *const *)e);
}

/* Adds candidate `text` (len bytes) if it names a dataset of `names`
 * (sorted, n entries). */
static int consider(qrefs *r, char **names, size_t n, const char *text, size_t len, bool literal)
{
    if (len == 0 || len > 400)
        return 0;
    char buf[401];
    memcpy(buf, text, len);
    buf[len] = '\0';
    bool current = literal; /* a string literal can only be current_state('x') */
    size_t bl = len;
    if (bl > 8 && strcmp(buf + bl - 8, ":current") == 0) {
        bl -= 8;
        buf[bl] = '\0';
        current = true;
    }
    char name[401];
    memcpy(name, buf, bl + 1);
    char *at = strchr(name, '@');
    if (at)
        *at = '\0';
    if (!bsearch(name, names, n, sizeof *names, cmp_name))
        return 0;
    for (size_t i = 0; i < r->n; i++) {
        if (strcmp(r->v[i].ref, buf) == 0) {
            r->v[i].current |= current;
            return 0;
        }
    }
    if (r->n == r->cap) {
        size_t nc = r->cap ? 2 * r->cap : 8;
        qref *nv = realloc(r->v, nc * sizeof *nv);
        if (!nv)
            return silt_err(SILT_ENOMEM, "sql: out of memory");
        r->v = nv;
        r->cap = nc;
    }
    qref *q = &r->v[r->n];
    memset(q, 0, sizeof *q);
    q->ref = strdup(buf);
    if (!q->ref)
        return silt_err(SILT_ENOMEM, "sql: out of memory");
    q->current = current;
    r->n++;
    return 0;
}

static bool is_word_start(unsigned char c)
{
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80;
}

static bool is_word_char(unsigned char c)
{
    return is_word_start(c) || c == '$' || (c >= '0' && c <= '9');
}

/* Tokenizes `sql` (comments, 'strings', "identifiers", bare words) and
 * collects the references to datasets of `names`. */
static int find_refs(const char *sql, char **names, size_t n, qrefs *out)
{
    const char *p = sql;
    silt_buf tok = SILT_BUF_INIT;
    int rc = 0;
    while (*p && rc == 0) {
        unsigned char c = (unsigned char)*p;
        if (c == '-' && p[1] == '-') {
            p += strcspn(p, "\n");
        } else if (c == '/' && p[1] == '*') {
            const char *end = strstr(p + 2, "*/");
            p = end ? end + 2 : p + strlen(p);
        } else if (c == '"' || c == '\'') {
            silt_buf_clear(&tok);
            p++;
            while (*p && rc == 0) {
                if (*p == (char)c) {
                    if (p[1] == (char)c) {
                        rc = silt_buf_putc(&tok, (char)c);
                        p += 2;
                        continue;
                    }
                    p++;
                    break;
                }
                rc = silt_buf_putc(&tok, *p++);
            }
            if (rc == 0 && tok.len)
                rc = consider(out, names, n, tok.data, tok.len, c == '\'');
        } else if (is_word_start(c)) {
            const char *s = p;
            while (*p && is_word_char((unsigned char)*p))
                p++;
            rc = consider(out, names, n, s, (size_t)(p - s), false);
        } else if (c >= '0' && c <= '9') {
            while (*p && (is_word_char((unsigned char)*p) || *p == '.'))
                p++;
        } else {
            p++;
        }
    }
    silt_buf_free(&tok);
    if (rc == SILT_ENOMEM)
        rc = silt_err(SILT_ENOMEM, "sql: out of memory");
    return rc;
}

/* ---- statements of a script ---------------------------------------------------- */

static bool is_ident_char(unsigned char c) { return is_word_char(c) && c != '$'; }

/* End of the quoted token (string, identifier, comment, $tag$ string) that
 * starts at p, or NULL when p starts none; *open is set when the token is
 * not closed before the end of the text. */
static const char *skip_quoted(const char *start, const char *p, bool *open)
{
    *open = false;
    if (p[0] == '-' && p[1] == '-') {
        return p + strcspn(p, "\n");
    } else if (p[0] == '/' && p[1] == '*') {
        int depth = 0;
        while (*p) {
            if (p[0] == '/' && p[1] == '*') {
                depth++;
                p += 2;
            } else if (p[0] == '*' && p[1] == '/') {
                p += 2;
                if (--depth == 0)
                    return p;
            } else {
                p++;
            }
        }
    } else if (*p == '\'' || *p == '"') {
        char q = *p;
        bool backslash = q == '\'' && p > start && (p[-1] == 'E' || p[-1] == 'e') &&
                         !(p - 1 > start && is_word_char((unsigned char)p[-2]));
        for (p++; *p; p++) {
            if (backslash && *p == '\\' && p[1]) {
                p++;
            } else if (*p == q) {
                if (p[1] != q)
                    return p + 1;
                p++; /* doubled quote */
            }
        }
    } else if (*p == '$' && (p[1] == '$' || (is_word_start((unsigned char)p[1]) && (unsigned char)p[1] < 0x80))) {
        const char *t = p + 1;
        while (is_ident_char((unsigned char)*t) && (unsigned char)*t < 0x80)
            t++;
        if (*t != '$')
            return NULL; /* a parameter such as $name */
        size_t tl = (size_t)(t - p) + 1; /* "$tag$" */
        for (const char *end = t + 1; *end; end++)
            if (*end == '$' && strncmp(end, p, tl) == 0)
                return end + tl;
    } else {
        return NULL;
    }
    *open = true;
    return p + strlen(p);
}

/* Calls emit(text, len, arg) for every statement of `s` holding more than
 * spaces and comments (the text between top-level ';'); returns 0, emit's
 * error, or 1 when the text ends inside a quoted token or has a statement
 * after its last ';' (*unfinished, for silt_sql_complete). */
typedef int (*stmt_fn)(const char *text, size_t len, void *arg);

static int scan_statements(const char *s, stmt_fn emit, void *arg, bool *unfinished)
{
    const char *p = s, *begin = s;
    bool sig = false, open = false;
    int rc = 0;
    while (*p && rc == 0) {
        bool comment = (p[0] == '-' && p[1] == '-') || (p[0] == '/' && p[1] == '*');
        const char *q = skip_quoted(s, p, &open);
        if (q) {
            sig |= !comment;
            p = q;
        } else if (*p == ';') {
            if (sig && emit)
                rc = emit(begin, (size_t)(p - begin), arg);
            begin = ++p;
            sig = false;
        } else {
            sig |= !(*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f' || *p == '\v');
            p++;
        }
    }
    if (rc == 0 && sig && emit)
        rc = emit(begin, (size_t)(p - begin), arg);
    if (unfinished)
        *unfinished = open || sig;
    return rc;
}

typedef struct stmt_list {
    char **v;
    size_t n, cap;
} stmt_list;

static int add_stmt(const char *text, size_t len, void *arg)
{
    stmt_list *l = arg;
    if (l->n + 2 > l->cap) {
        size_t nc = l->cap ? 2 * l->cap : 8;
        char **nv = realloc(l->v, nc * sizeof *nv);
        if (!nv)
            return SILT_ENOMEM;
        l->v = nv;
        l->cap = nc;
    }
    if (!(l->v[l->n] = strndup(text, len)))
        return SILT_ENOMEM;
    l->v[++l->n] = NULL;
    return 0;
}

int silt_sql_split(char ***out, const char *script)
{
    stmt_list l = {.v = calloc(1, sizeof(char *)), .cap = 1};
    int rc = l.v ? scan_statements(script, add_stmt, &l, NULL) : SILT_ENOMEM;
    if (rc < 0) {
        silt_strv_free(l.v);
        *out = NULL;
        return silt_err(SILT_ENOMEM, "sql: out of memory");
    }
    *out = l.v;
    return (int)l.n;
}

bool silt_sql_complete(const char *text)
{
    bool unfinished = false;
    scan_statements(text, NULL, NULL, &unfinished);
    return !unfinished;
}

/* ---- SHOW TABLES ------------------------------------------------------------------ */

/* Skips spaces and comments. */
static const char *skip_space(const char *p)
{
    for (;;) {
        bool open;
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f' || *p == '\v')
            p++;
        if (!((p[0] == '-' && p[1] == '-') || (p[0] == '/' && p[1] == '*')))
            return p;
        p = skip_quoted(p, p, &open);
    }
}

static bool is_show_tables(const char *q)
{
    const char *p = skip_space(q);
    if (strncasecmp(p, "show", 4) != 0 || is_word_char((unsigned char)p[4]))
        return false;
    p = skip_space(p + 4);
    if (strncasecmp(p, "tables", 6) != 0 || is_word_char((unsigned char)p[6]))
        return false;
    for (p = skip_space(p + 6); *p == ';'; p = skip_space(p + 1))
        ;
    return *p == '\0';
}

/* The query answering SHOW TABLES: name and kind of every dataset of `names`. */
static int show_tables_query(silt_workspace *ws, char **names, size_t n, char **out)
{
    silt_buf b = SILT_BUF_INIT;
    int rc = silt_buf_puts(&b, n ? "SELECT name, kind FROM (VALUES "
                                 : "SELECT CAST(NULL AS VARCHAR) AS name, CAST(NULL AS VARCHAR) AS kind "
                                   "WHERE false");
    for (size_t i = 0; rc == 0 && i < n; i++) {
        silt_dataset *ds = NULL;
        silt_dataset_info info;
        int isf = 0;
        rc = silt_dataset_open(&ds, ws, names[i]);
        if (rc == 0)
            rc = silt_dataset_info_get(&info, ds);
        if (rc == 0 && (isf = silt_files_is_files(ds)) < 0)
            rc = isf;
        silt_dataset_free(ds);
        char *qn = rc == 0 ? silt_sql_str(names[i]) : NULL;
        if (rc == 0)
            rc = qn ? silt_buf_printf(&b, "%s(%s, '%s')", i ? ", " : "", qn,
                                      isf ? "Files" : info.kind == SILT_ROOT ? "Root" : "Derivative")
                    : silt_err(SILT_ENOMEM, "sql: out of memory");
        free(qn);
    }
    if (rc == 0 && n)
        rc = silt_buf_puts(&b, ") AS t(name, kind) ORDER BY name");
    if (rc == SILT_ENOMEM)
        rc = silt_err(SILT_ENOMEM, "sql: out of memory");
    if (rc < 0) {
        silt_buf_free(&b);
        return rc;
    }
    *out = silt_buf_detach(&b);
    return *out ? 0 : silt_err(SILT_ENOMEM, "sql: out of memory");
}

/* View of any kind of dataset: files datasets through their tabular schema
 * ("name:current" does not apply to them), ledgers over their slices. */
static int create_view(silt_engine *e, silt_dataset *ds, const char *view, const uint8_t *upto, bool current)
{
    int isf = silt_files_is_files(ds);
    if (isf < 0)
        return isf;
    if (isf == 1)
        return silt_files_create_sql_view(e, ds, view, upto);
    return silt_ds_create_view(e, ds, view, upto, current);
}

static int parse_block(const char *text, uint8_t out[SILT_MH_LEN])
{
    silt_buf b = SILT_BUF_INIT;
    int rc = silt_multihash_from_text(text, &b);
    if (rc == 0 && b.len != SILT_MH_LEN)
        rc = SILT_EINVAL;
    if (rc == 0)
        memcpy(out, b.data, SILT_MH_LEN);
    silt_buf_free(&b);
    if (rc == SILT_ENOMEM)
        return silt_err(SILT_ENOMEM, "out of memory");
    if (rc < 0)
        return silt_err(SILT_EINVAL, "as-of: '%s' is not a block hash (multihash f1620…)", text);
    return 0;
}

/* Applies the as-of items to the references (opening datasets for bare
 * block lookups). */
static int apply_as_of(silt_workspace *ws, qrefs *refs, const silt_sql_opts *o)
{
    for (size_t i = 0; o && i < o->n_as_of; i++) {
        const char *item = o->as_of[i];
        const char *eq = strchr(item, '=');
        uint8_t h[SILT_MH_LEN];
        int rc = parse_block(eq ? eq + 1 : item, h);
        if (rc < 0)
            return rc;
        bool applied = false;
        for (size_t k = 0; k < refs->n; k++) {
            qref *q = &refs->v[k];
            if (eq) {
                if (strlen(q->ref) != (size_t)(eq - item) || strncmp(q->ref, item, (size_t)(eq - item)) != 0)
                    continue;
            } else {
                silt_dataset *ds = NULL;
                rc = silt_dataset_open(&ds, ws, q->ref);
                int st = rc == 0 ? silt_store_stat(ds->store, "blocks", h, NULL) : rc;
                silt_dataset_free(ds);
                if (st < 0)
                    return st;
                if (st == 0)
                    continue;
            }
            if (q->has_as_of && memcmp(q->as_of, h, SILT_MH_LEN) != 0)
                return silt_err(SILT_EINVAL, "as-of: two different blocks given for '%s'", q->ref);
            q->has_as_of = true;
            memcpy(q->as_of, h, SILT_MH_LEN);
            applied = true;
        }
        if (!applied && eq)
            return silt_err(SILT_EINVAL, "as-of '%s': the query does not use dataset '%.*s'", item,
                            (int)(eq - item), item);
        if (!applied)
            return silt_err(SILT_ENOTFOUND, "as-of: block %s is not in any dataset of the query", item);
    }
    return 0;
}

/* Drops the names the caller may not see (opts->visible) from the sorted,
 * NULL-terminated list `names` (kept sorted); returns the new count. */
static size_t keep_visible(char **names, size_t n, const silt_sql_opts *o)
{
    if (!o || !o->visible)
        return n;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (o->visible(o->visible_ctx, names[i]))
            names[k++] = names[i];
        else
            free(names[i]);
    }
    names[k] = NULL;
    return k;
}

/* Records the dataset of a view the query reads (opts->inputs_out). */
static int add_input(silt_sql_input **v, size_t *n, const char *ref, silt_dataset *ds, const uint8_t *as_of)
{
    silt_sql_input *nv = realloc(*v, (*n + 1) * sizeof *nv);
    if (!nv)
        return silt_err(SILT_ENOMEM, "sql: out of memory");
    *v = nv;
    silt_sql_input *in = &nv[(*n)++];
    memset(in, 0, sizeof *in);
    snprintf(in->ref, sizeof in->ref, "%s", ref);
    snprintf(in->name, sizeof in->name, "%s", ds->name);
    snprintf(in->id, sizeof in->id, "%s", ds->id);
    if (as_of)
        silt_multihash_to_text(as_of, SILT_MH_LEN, in->block);
    else
        snprintf(in->block, sizeof in->block, "%s", ds->head);
    return 0;
}

/* Runs the checked query with the per-query limits of opts (timeout
 * watchdog; the memory limit was set before confinement). */
static int run_limited(silt_engine *e, const char *query, silt_qfmt fmt, const silt_sql_opts *opts)
{
    silt_query_page page = {0};
    if (opts) {
        page.skip = opts->skip;
        page.has_limit = opts->has_limit;
        page.limit = opts->limit;
    }
    silt_engine_watch *w = NULL;
    int rc = opts && opts->timeout_ms ? silt_engine_watch_start(&w, e, opts->timeout_ms) : 0;
    silt_query_out qo = {.fmt = fmt,
                         .out = opts ? opts->out : NULL,
                         .path = opts ? opts->output : NULL,
                         .rows_out = opts ? opts->rows_out : NULL,
                         .max_width = opts ? opts->max_width : 0,
                         .page = &page,
                         .progress = opts ? opts->progress : NULL,
                         .progress_ctx = opts ? opts->progress_ctx : NULL,
                         .phase = "sql"};
    if (rc == 0)
        rc = silt_query_exec(e, query, &qo);
    bool fired = silt_engine_watch_stop(w);
    if (rc < 0 && fired)
        return silt_err(SILT_EINVAL, "sql: query timed out after %u ms", opts->timeout_ms);
    if (rc == SILT_EIO && opts && opts->memory_limit && silt_engine_last_error_was_oom()) {
        char msg[768];
        const char *m = silt_error_last();
        snprintf(msg, sizeof msg, "%s", strncmp(m, "sql: ", 5) == 0 ? m + 5 : m);
        return silt_err(SILT_EINVAL, "sql: query exceeded the memory limit of %llu MiB: %s",
                        (unsigned long long)(opts->memory_limit >> 20), msg);
    }
    return rc;
}

/* Confines the engine of a `silt sql` call; `output` (NULL when the result
 * is text, which silt writes itself) is the Parquet file DuckDB writes. */
static int confine_for_sql(silt_engine *e, const char *output, bool remote)
{
    silt_confine_opts c = {
        .files = output ? &output : NULL,
        .n_files = output ? 1 : 0,
        .hint_write = remote ? "queries are read-only" : "use --format/--output to write results, or --unsafe-file-access",
        .hint_other = remote ? "only SELECT queries are allowed" : "only SELECT queries are allowed, or use --unsafe-file-access",
        .hint_files = remote ? "query datasets by name" : "query datasets by name, or use --unsafe-file-access",
    };
    return silt_engine_confine(e, &c);
}

/* An engine with the views of one query made (and confined): what
 * silt_sql and silt_query_arrow share. */
typedef struct sql_env {
    silt_engine *e;
    char *tmpdir;
    char *shown; /* the query answering SHOW TABLES, or NULL */
    int deferred; /* a view that could not be made: its error if the query fails */
    char deferred_msg[512];
    silt_sql_input *inputs;
    size_t ninputs;
} sql_env;

/* Views of the datasets named in `query` (see the head comment). */
static int make_views(silt_workspace *ws, sql_env *v, const qrefs *refs, const silt_sql_opts *opts)
{
    int rc = 0;
    bool macro = false;
    for (size_t i = 0; rc == 0 && i < refs->n; i++) {
        silt_dataset *ds = NULL;
        int vr = silt_dataset_open(&ds, ws, refs->v[i].ref);
        if (vr == 0)
            vr = create_view(v->e, ds, refs->v[i].ref, refs->v[i].has_as_of ? refs->v[i].as_of : NULL,
                             refs->v[i].current);
        if (vr == 0 && opts && opts->inputs_out)
            vr = add_input(&v->inputs, &v->ninputs, refs->v[i].ref, ds,
                           refs->v[i].has_as_of ? refs->v[i].as_of : NULL);
        silt_dataset_free(ds);
        if (vr == SILT_ENOMEM) {
            rc = vr;
        } else if (vr < 0 && refs->v[i].has_as_of) {
            rc = vr; /* explicitly asked for: always an error */
        } else if (vr < 0) {
            if (!v->deferred) {
                v->deferred = vr;
                snprintf(v->deferred_msg, sizeof v->deferred_msg, "%s", silt_error_last());
            }
            silt_err_clear();
        }
        if (rc == 0 && vr == 0 && refs->v[i].current && !macro) {
            rc = silt_query_create_current_macro(v->e);
            macro = true;
        }
    }
    return rc;
}

/* Opens the engine of one query: references, as-of, views, limits and the
 * confinement (output: the Parquet file DuckDB writes, or NULL). On error
 * everything is released. */
static int sql_env_open(sql_env *v, silt_workspace *ws, const char *query, const silt_sql_opts *opts,
                        const char *output)
{
    memset(v, 0, sizeof *v);
    char **names = NULL;
    int rc = silt_dataset_list(&names, ws);
    if (rc < 0)
        return rc;
    size_t nnames = keep_visible(names, (size_t)rc, opts);
    qrefs refs = {0};
    rc = is_show_tables(query) ? show_tables_query(ws, names, nnames, &v->shown)
                               : find_refs(query, names, nnames, &refs);
    silt_strv_free(names);
    if (rc == 0)
        rc = apply_as_of(ws, &refs, opts);
    if (rc == 0)
        rc = silt_ws_engine_open(ws, &v->e, &v->tmpdir);
    /* A name in the query may not be meant as a dataset (a column or a
     * string that happens to equal a dataset name): a view that cannot be
     * made is skipped, and its error is reported only if the query fails. */
    if (rc == 0 && opts && opts->memory_limit)
        rc = silt_engine_execf(v->e, "SET memory_limit = '%lluB'", (unsigned long long)opts->memory_limit);
    if (rc == 0)
        rc = make_views(ws, v, &refs, opts);
    if (rc == 0 && !(opts && opts->unsafe_file_access))
        rc = confine_for_sql(v->e, output, opts && opts->remote);
    qrefs_free(&refs);
    if (rc && v->e)
        (void)silt_ws_engine_close(v->e, v->tmpdir, rc);
    if (rc) {
        free(v->shown);
        free(v->inputs);
        memset(v, 0, sizeof *v);
    }
    return rc;
}

/* The error of a failed query: a deferred view error explains it better. */
static int sql_env_error(const sql_env *v, int rc)
{
    return rc < 0 && rc != SILT_ENOMEM && v->deferred ? silt_err(v->deferred, "%s", v->deferred_msg) : rc;
}

/* Closes the engine; rc is the call's result so far (returned, or the
 * close's error). */
static int sql_env_close(sql_env *v, int rc)
{
    if (v->e)
        rc = silt_ws_engine_close(v->e, v->tmpdir, rc);
    free(v->shown);
    free(v->inputs);
    memset(v, 0, sizeof *v);
    return rc;
}

int silt_sql(silt_workspace *ws, const char *query, const silt_sql_opts *opts)
{
    if (opts && opts->rows_out)
        *opts->rows_out = 0;
    if (opts && opts->inputs_out) {
        *opts->inputs_out = NULL;
        if (opts->n_inputs_out)
            *opts->n_inputs_out = 0;
    }
    if (!query)
        return silt_err(SILT_EINVAL, "sql: no query");
    silt_qfmt fmt;
    int rc = silt_qfmt_parse(opts ? opts->format : NULL, &fmt);
    if (rc < 0)
        return rc;
    if (fmt == SILT_QFMT_PARQUET && !(opts && opts->output))
        return silt_err(SILT_EINVAL, "sql: format parquet needs an output file");
    sql_env v;
    rc = sql_env_open(&v, ws, query, opts, fmt == SILT_QFMT_PARQUET ? opts->output : NULL);
    if (rc)
        return rc;
    rc = sql_env_error(&v, run_limited(v.e, v.shown ? v.shown : query, fmt, opts));
    if (rc == 0 && opts && opts->inputs_out) {
        *opts->inputs_out = v.inputs;
        if (opts->n_inputs_out)
            *opts->n_inputs_out = v.ninputs;
        v.inputs = NULL;
    }
    return sql_env_close(&v, rc);
}

/* ---- the Arrow C stream (silt_query_arrow) ---------------------------------------- */

typedef struct arrow_cstream {
    sql_env env;
    silt_rstream *rs;
    char error[1024]; /* the last error of get_schema / get_next */
} arrow_cstream;

static int cstream_fail(struct ArrowArrayStream *st, int rc)
{
    arrow_cstream *c = st->private_data;
    snprintf(c->error, sizeof c->error, "%s", silt_error_last());
    return rc == SILT_ENOMEM ? ENOMEM : EIO;
}

static int cstream_get_schema(struct ArrowArrayStream *st, struct ArrowSchema *out)
{
    arrow_cstream *c = st->private_data;
    int rc = silt_rstream_arrow_schema(c->rs, out);
    return rc ? cstream_fail(st, rc) : 0;
}

static int cstream_get_next(struct ArrowArrayStream *st, struct ArrowArray *out)
{
    arrow_cstream *c = st->private_data;
    int rc = silt_rstream_next_array(c->rs, out);
    if (rc < 0)
        return cstream_fail(st, rc);
    if (rc == 0)
        memset(out, 0, sizeof *out); /* the end: release == NULL */
    return 0;
}

static const char *cstream_last_error(struct ArrowArrayStream *st)
{
    arrow_cstream *c = st->private_data;
    return c->error[0] ? c->error : NULL;
}

static void cstream_release(struct ArrowArrayStream *st)
{
    arrow_cstream *c = st->private_data;
    silt_rstream_free(c->rs);
    (void)sql_env_close(&c->env, 0);
    free(c);
    memset(st, 0, sizeof *st);
}

int silt_query_arrow(struct ArrowArrayStream *out, silt_workspace *ws, const char *query, const silt_sql_opts *opts)
{
    memset(out, 0, sizeof *out);
    if (!query)
        return silt_err(SILT_EINVAL, "sql: no query");
    arrow_cstream *c = calloc(1, sizeof *c);
    if (!c)
        return silt_err(SILT_ENOMEM, "sql: out of memory");
    int rc = sql_env_open(&c->env, ws, query, opts, NULL);
    if (rc) {
        free(c);
        return rc;
    }
    rc = sql_env_error(&c->env, silt_query_stream_open(&c->rs, c->env.e, c->env.shown ? c->env.shown : query));
    if (rc) {
        rc = sql_env_close(&c->env, rc);
        free(c);
        return rc;
    }
    out->get_schema = cstream_get_schema;
    out->get_next = cstream_get_next;
    out->get_last_error = cstream_last_error;
    out->release = cstream_release;
    out->private_data = c;
    return 0;
}

int silt_dataset_read_arrow(struct ArrowArrayStream *out, silt_workspace *ws, const char *ref, const char *as_of)
{
    memset(out, 0, sizeof *out);
    if (!ref || !*ref)
        return silt_err(SILT_EINVAL, "read: empty dataset reference");
    silt_buf q = SILT_BUF_INIT, a = SILT_BUF_INIT;
    char *qi = silt_sql_ident(ref);
    int rc = qi && silt_buf_printf(&q, "SELECT * FROM %s ORDER BY \"offset\"", qi) == 0 ? 0 : SILT_ENOMEM;
    if (rc == 0 && as_of)
        rc = silt_buf_printf(&a, "%s=%s", ref, as_of) == 0 ? 0 : SILT_ENOMEM;
    free(qi);
    if (rc) {
        silt_buf_free(&q);
        silt_buf_free(&a);
        return silt_err(SILT_ENOMEM, "read: out of memory");
    }
    const char *aov[1] = {a.data};
    silt_sql_opts o = {.as_of = as_of ? aov : NULL, .n_as_of = as_of ? 1 : 0};
    rc = silt_query_arrow(out, ws, q.data, &o);
    silt_buf_free(&q);
    silt_buf_free(&a);
    return rc;
}

/* Runs statement i of n; in the table format an empty line follows every
 * result but the last; the compact JSON shapes (which end without a
 * newline) are followed by one each: one document a line. */
static int script_statement(silt_workspace *ws, const char *stmt, size_t i, size_t n, silt_qfmt fmt,
                            const silt_sql_opts *o)
{
    int rc = silt_sql(ws, stmt, o);
    if (rc < 0)
        return silt_err_context(rc, "statement %zu", i + 1);
    if ((fmt == SILT_QFMT_TABLE && i + 1 < n) || fmt >= SILT_QFMT_JSON_AOS)
        fputc('\n', o->out ? o->out : stdout);
    return 0;
}

int silt_sql_script(silt_workspace *ws, const char *script, const silt_sql_opts *opts)
{
    silt_sql_opts o = opts ? *opts : (silt_sql_opts){0};
    if (o.rows_out)
        *o.rows_out = 0;
    silt_qfmt fmt;
    int rc = silt_qfmt_parse(o.format, &fmt);
    if (rc < 0)
        return rc;
    char **stmts = NULL;
    int n = silt_sql_split(&stmts, script);
    if (n < 0)
        return n;
    if (n == 0)
        rc = silt_err(SILT_EINVAL, "sql: no statement");
    else if (fmt == SILT_QFMT_PARQUET && n != 1)
        rc = silt_err(SILT_EINVAL, "sql: format parquet needs a script of one statement (got %d)", n);
    FILE *f = NULL;
    if (rc == 0 && fmt != SILT_QFMT_PARQUET && o.output) {
        if (!(f = fopen(o.output, "w")))
            rc = silt_err(SILT_EIO, "%s: cannot create: %s", o.output, strerror(errno));
        o.out = f;
        o.output = NULL;
    }
    for (size_t i = 0; rc == 0 && i < (size_t)n; i++)
        rc = script_statement(ws, stmts[i], i, (size_t)n, fmt, &o);
    if (f) {
        bool bad = ferror(f) != 0;
        if ((fclose(f) != 0 || bad) && rc == 0)
            rc = silt_err(SILT_EIO, "%s: write error: %s", opts->output, strerror(errno));
        if (rc < 0)
            unlink(opts->output);
    }
    silt_strv_free(stmts);
    return rc;
}
