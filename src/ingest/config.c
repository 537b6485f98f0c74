/* config.c — resolves a Source's `config` (literals, SecretSet and
 * VariableSet references) and renders templates (`${{ config.NAME }}`,
 * `${{ env.A || env.B || 'default' }}`).
 *
 * Invariants: a silt_config owns malloc'd copies of every key and value; the
 * values of secrets are remembered (with their URL-encoded forms) so that
 * silt_config_redact can remove them from any text. No error message built
 * here contains a value: only config keys, set names, keys and file paths.
 * The secrets file is read only when a SecretSet reference is not satisfied
 * by the environment, and its mode is checked before it is parsed. Values a
 * template takes from the environment become secret entries "env.NAME" of
 * the config (added while rendering), so they are redacted and sealed too.
 */
#include "ingest/config.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "odf/yaml.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/fsutil.h"

typedef struct centry {
    char *key;
    char *value;
    bool secret;
} centry;

/* A text that is removed from messages and sealed in source states: a
 * secret value, or its URL-encoded form, of config entry `item`. */
typedef struct rentry {
    char *text;
    size_t item;
    bool url;
} rentry;

struct silt_config {
    centry *items;
    size_t n;
    rentry *redact; /* secret values and their URL-encoded forms, longest first */
    size_t nredact;
};

/* ---- references ---------------------------------------------------------- */

static bool ends_with_type(const char *s, size_t n, const char *type)
{
    size_t tl = strlen(type);
    if (n == tl)
        return memcmp(s, type, tl) == 0;
    return n > tl && s[n - tl - 1] == '/' && memcmp(s + n - tl, type, tl) == 0;
}

int silt_config_parse_ref(const char *s, silt_valueref_kind *kind, const char **name,
                          size_t *name_len, const char **path, size_t *path_len)
{
    *kind = SILT_VREF_LITERAL;
    *name = *path = NULL;
    *name_len = *path_len = 0;
    /* the type ends at the first ':' that is not part of "scheme://" */
    const char *colon = NULL;
    for (const char *p = s; *p; p++)
        if (*p == ':' && p[1] != '/') {
            colon = p;
            break;
        }
    if (!colon)
        return 0;
    size_t tl = (size_t)(colon - s);
    silt_valueref_kind k;
    if (ends_with_type(s, tl, "SecretSet"))
        k = SILT_VREF_SECRET;
    else if (ends_with_type(s, tl, "VariableSet"))
        k = SILT_VREF_VARIABLE;
    else
        return 0;
    const char *n = colon + 1;
    const char *hash = strchr(n, '#');
    if (!hash || hash == n || !hash[1])
        return silt_err(SILT_EINVAL, "expected %s:NAME#key",
                        k == SILT_VREF_SECRET ? "SecretSet" : "VariableSet");
    *kind = k;
    *name = n;
    *name_len = (size_t)(hash - n);
    *path = hash + 1;
    *path_len = strlen(hash + 1);
    return 0;
}

/* ---- sets files ---------------------------------------------------------- */

typedef struct setfile {
    bool loaded;
    bool present;
    yaml_document_t doc;
} setfile;

static int load_setfile(setfile *f, const char *path, bool secret)
{
    if (f->loaded)
        return 0;
    f->loaded = true;
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT)
            return 0;
        return silt_err(SILT_EIO, "%s: %s", path, strerror(errno));
    }
    if (secret && (st.st_mode & 077))
        return silt_err(SILT_EINVAL,
                        "%s: mode %04o is too open: a secrets file must not be accessible by group "
                        "or others (chmod 600)",
                        path, (unsigned)(st.st_mode & 07777));
    silt_buf text = SILT_BUF_INIT;
    int rc = odf_yaml_read_file(path, &text); /* the YAML input limits of odf/yaml.h */
    const char *t = text.data ? text.data : "";
    yaml_parser_t parser;
    size_t skip;
    if (rc == 0)
        rc = odf_yaml_check(t, text.len, path, 1); /* before the (quadratic) loader */
    if (rc == 0)
        rc = odf_yaml_parser_open(&parser, t, text.len, path, &skip);
    if (rc < 0) {
        silt_buf_free(&text);
        return rc;
    }
    if (!yaml_parser_load(&parser, &f->doc)) {
        /* never quote the problem context: it could hold a secret */
        rc = silt_err(SILT_EINVAL, "%s:%zu: yaml syntax error", path, parser.problem_mark.line + 1);
    } else {
        f->present = true;
        yaml_node_t *root = yaml_document_get_root_node(&f->doc);
        if (root && root->type != YAML_MAPPING_NODE &&
            !(root->type == YAML_SCALAR_NODE && root->data.scalar.length == 0))
            rc = silt_err(SILT_EINVAL, "%s:%zu: expected a mapping NAME: {key: value, ...}", path,
                          root->start_mark.line + 1);
    }
    yaml_parser_delete(&parser);
    silt_buf_free(&text);
    return rc;
}

static yaml_node_t *map_get(yaml_document_t *doc, yaml_node_t *map, const char *key, size_t klen)
{
    if (!map || map->type != YAML_MAPPING_NODE)
        return NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(doc, p->key);
        if (k && k->type == YAML_SCALAR_NODE && k->data.scalar.length == klen &&
            memcmp(k->data.scalar.value, key, klen) == 0)
            return yaml_document_get_node(doc, p->value);
    }
    return NULL;
}

/* Value of NAME / dotted path in the file, or NULL. */
static const char *setfile_lookup(setfile *f, const char *name, size_t nl, const char *path, size_t pl)
{
    if (!f->present)
        return NULL;
    yaml_node_t *n = map_get(&f->doc, yaml_document_get_root_node(&f->doc), name, nl);
    const char *p = path, *end = path + pl;
    while (n && p < end) {
        const char *dot = memchr(p, '.', (size_t)(end - p));
        size_t sl = dot ? (size_t)(dot - p) : (size_t)(end - p);
        n = map_get(&f->doc, n, p, sl);
        p += sl + (dot ? 1 : 0);
        if (!dot)
            break;
    }
    if (!n || n->type != YAML_SCALAR_NODE)
        return NULL;
    return (const char *)n->data.scalar.value;
}

static char *env_name(const char *prefix, const char *name, size_t nl, const char *path, size_t pl)
{
    size_t len = strlen(prefix) + nl + 1 + pl;
    char *s = malloc(len + 1);
    if (!s)
        return NULL;
    size_t o = strlen(prefix);
    memcpy(s, prefix, o);
    for (size_t i = 0; i < nl; i++)
        s[o++] = isalnum((unsigned char)name[i]) ? (char)toupper((unsigned char)name[i]) : '_';
    s[o++] = '_';
    for (size_t i = 0; i < pl; i++)
        s[o++] = isalnum((unsigned char)path[i]) ? (char)toupper((unsigned char)path[i]) : '_';
    s[o] = '\0';
    return s;
}

/* ---- load ---------------------------------------------------------------- */

/* URL-encoded form of `v` (RFC 3986 unreserved characters kept; upper-case
 * hex), malloc'd; *differs tells whether it differs from `v`. NULL on ENOMEM. */
static char *url_encode(const char *v, bool *differs)
{
    silt_buf enc = SILT_BUF_INIT;
    *differs = false;
    for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
        int rc;
        if (isalnum(*p) || *p == '-' || *p == '.' || *p == '_' || *p == '~')
            rc = silt_buf_putc(&enc, (char)*p);
        else {
            rc = silt_buf_printf(&enc, "%%%02X", *p);
            *differs = true;
        }
        if (rc < 0) {
            if (enc.data)
                memset(enc.data, 0, enc.len);
            silt_buf_free(&enc);
            return NULL;
        }
    }
    char *s = silt_buf_detach(&enc);
    silt_buf_free(&enc);
    return s ? s : strdup("");
}

static void scrub_free(char *s)
{
    if (s)
        memset(s, 0, strlen(s));
    free(s);
}

/* Remembers the secret value of config entry `item` and its URL-encoded form. */
static int add_redaction(silt_config *c, size_t item, const char *v)
{
    if (!*v)
        return 0;
    bool differs = false;
    char *raw = strdup(v), *enc = raw ? url_encode(v, &differs) : NULL;
    rentry *nr = enc ? realloc(c->redact, (c->nredact + 2) * sizeof *nr) : NULL;
    if (!nr) {
        scrub_free(raw);
        scrub_free(enc);
        return silt_err(SILT_ENOMEM, "config: out of memory");
    }
    c->redact = nr;
    c->redact[c->nredact++] = (rentry){raw, item, false};
    if (differs)
        c->redact[c->nredact++] = (rentry){enc, item, true};
    else
        scrub_free(enc);
    return 0;
}

static int cmp_len_desc(const void *a, const void *b)
{
    size_t la = strlen(((const rentry *)a)->text), lb = strlen(((const rentry *)b)->text);
    return la < lb ? 1 : la > lb ? -1 : 0;
}

int silt_config_load(silt_config **out, const char *silt_dir, const odf_ValueRefs *refs)
{
    *out = NULL;
    silt_config *c = calloc(1, sizeof *c);
    if (!c)
        return silt_err(SILT_ENOMEM, "config: out of memory");
    size_t n = refs ? refs->entries.n : 0;
    if (n && !(c->items = calloc(n, sizeof *c->items))) {
        free(c);
        return silt_err(SILT_ENOMEM, "config: out of memory");
    }
    setfile sets[2];
    memset(sets, 0, sizeof sets);
    char *paths[2] = {silt_path_join(silt_dir, "secrets.yaml", NULL),
                      silt_path_join(silt_dir, "variables.yaml", NULL)};
    int rc = (!paths[0] || !paths[1]) ? silt_err(SILT_ENOMEM, "config: out of memory") : 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const odf_ValueRefsEntry *e = refs->entries.items[i];
        const odf_ValueRef *r = e->value;
        centry *ce = &c->items[c->n];
        if (!(ce->key = strdup(e->key))) {
            rc = silt_err(SILT_ENOMEM, "config: out of memory");
            break;
        }
        c->n++;
        const char *type = r->type ? r->type : "";
        size_t tl = strlen(type);
        const char *value = NULL;
        char *owned = NULL;
        if (strcmp(type, SILT_CONFIG_LITERAL) == 0) {
            value = r->path ? r->path : "";
        } else {
            bool secret;
            if (ends_with_type(type, tl, "SecretSet"))
                secret = true;
            else if (ends_with_type(type, tl, "VariableSet"))
                secret = false;
            else {
                rc = silt_err(SILT_EINVAL, "config.%s: unsupported value type '%s' (expected SecretSet "
                                           "or VariableSet)", e->key, type);
                break;
            }
            if (!r->name || !r->path || !*r->name || !*r->path) {
                rc = silt_err(SILT_EINVAL, "config.%s: a %s reference needs a name and a key", e->key,
                              secret ? "SecretSet" : "VariableSet");
                break;
            }
            size_t nl = strlen(r->name), pl = strlen(r->path);
            char *ev = env_name(secret ? "SILT_SECRET_" : "SILT_VARIABLE_", r->name, nl, r->path, pl);
            if (!ev) {
                rc = silt_err(SILT_ENOMEM, "config: out of memory");
                break;
            }
            value = getenv(ev);
            if (!value) {
                setfile *f = &sets[secret ? 0 : 1];
                rc = load_setfile(f, paths[secret ? 0 : 1], secret);
                if (rc == 0)
                    value = setfile_lookup(f, r->name, nl, r->path, pl);
                if (rc == 0 && !value)
                    rc = silt_err(SILT_ENOTFOUND, "config.%s: %s '%s#%s' not found: set %s or add it to %s",
                                  e->key, secret ? "secret" : "variable", r->name, r->path, ev,
                                  paths[secret ? 0 : 1]);
            }
            free(ev);
            if (rc < 0)
                break;
            ce->secret = secret;
        }
        if (!(owned = strdup(value)) || (ce->secret && add_redaction(c, c->n - 1, value) < 0)) {
            free(owned);
            rc = silt_err(SILT_ENOMEM, "config: out of memory");
            break;
        }
        ce->value = owned;
    }
    for (int i = 0; i < 2; i++) {
        if (sets[i].present)
            yaml_document_delete(&sets[i].doc);
        free(paths[i]);
    }
    if (rc < 0) {
        silt_config_free(c);
        return rc;
    }
    if (c->nredact)
        qsort(c->redact, c->nredact, sizeof *c->redact, cmp_len_desc);
    *out = c;
    return 0;
}

void silt_config_free(silt_config *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++) {
        if (c->items[i].value && c->items[i].secret) /* scrub secrets before freeing */
            memset(c->items[i].value, 0, strlen(c->items[i].value));
        free(c->items[i].key);
        free(c->items[i].value);
    }
    for (size_t i = 0; i < c->nredact; i++) {
        memset(c->redact[i].text, 0, strlen(c->redact[i].text));
        free(c->redact[i].text);
    }
    free(c->redact);
    free(c->items);
    free(c);
}

size_t silt_config_count(const silt_config *c)
{
    return c ? c->n : 0;
}

const char *silt_config_key(const silt_config *c, size_t i)
{
    return c && i < c->n ? c->items[i].key : NULL;
}

/* ---- templates -----------------------------------------------------------
 * Grammar of one expression (between "${{" and "}}", spaces optional):
 *   expr := alt ( "||" alt )*
 *   alt  := "config." KEY | "env." NAME | "'" text "'" | number
 * KEY: [A-Za-z0-9_.-]+, NAME: [A-Za-z0-9_-]+, text: anything but "'",
 * number: -?[0-9]+(.[0-9]+)?. The first alternative that has a value wins.
 * The closing "}}" is the first one outside a quoted text. */

typedef enum alt_kind { ALT_CONFIG, ALT_ENV, ALT_LITERAL } alt_kind;

static bool name_chars(const char *s, size_t n, bool dots)
{
    if (!n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '-' || (dots && s[i] == '.')))
            return false;
    return true;
}

static bool is_number(const char *s, size_t n)
{
    size_t i = n && s[0] == '-' ? 1 : 0, d = 0;
    while (i < n && isdigit((unsigned char)s[i]))
        i++, d++;
    if (!d)
        return false;
    if (i == n)
        return true;
    if (s[i] != '.' || i + 1 == n)
        return false;
    for (i++; i < n; i++)
        if (!isdigit((unsigned char)s[i]))
            return false;
    return true;
}

/* Classifies the alternative s[0..n) (trimmed); *v / *vl: the key, name or
 * literal text. SILT_EINVAL for anything else. */
static int parse_alt(const char *s, size_t n, const char *what, alt_kind *k, const char **v, size_t *vl)
{
    if (n > 7 && memcmp(s, "config.", 7) == 0 && name_chars(s + 7, n - 7, true)) {
        *k = ALT_CONFIG, *v = s + 7, *vl = n - 7;
    } else if (n > 4 && memcmp(s, "env.", 4) == 0 && name_chars(s + 4, n - 4, false)) {
        *k = ALT_ENV, *v = s + 4, *vl = n - 4;
    } else if (n >= 2 && s[0] == '\'' && s[n - 1] == '\'' && !memchr(s + 1, '\'', n - 2)) {
        *k = ALT_LITERAL, *v = s + 1, *vl = n - 2;
    } else if (is_number(s, n)) {
        *k = ALT_LITERAL, *v = s, *vl = n;
    } else {
        return silt_err(SILT_EINVAL,
                        "invalid template expression '%.*s' in %s: expected config.NAME, env.NAME, 'text' or a "
                        "number",
                        (int)(n > 80 ? 80 : n), s, what);
    }
    return 0;
}

static const centry *config_find(const silt_config *c, const char *key, size_t kl)
{
    for (size_t i = 0; c && i < c->n; i++)
        if (strlen(c->items[i].key) == kl && memcmp(c->items[i].key, key, kl) == 0)
            return &c->items[i];
    return NULL;
}

/* The value of environment variable NAME (nl bytes), or NULL. A value found
 * is remembered in `c` (when given) as the secret entry "env.NAME": every
 * value a template takes from the environment is redacted and sealed like a
 * secret, as silt cannot tell which variables hold one. */
static int env_value(silt_config *c, const char *name, size_t nl, const char **out)
{
    *out = NULL;
    char key[256];
    if (nl + 4 >= sizeof key)
        return 0; /* no such variable name is ever set by anyone sane: treat as unset */
    memcpy(key, "env.", 4);
    memcpy(key + 4, name, nl);
    key[nl + 4] = '\0';
    const char *v = getenv(key + 4);
    if (!v)
        return 0;
    *out = v;
    if (!c || config_find(c, key, nl + 4))
        return 0;
    centry *ni = realloc(c->items, (c->n + 1) * sizeof *ni);
    if (!ni)
        return silt_err(SILT_ENOMEM, "config: out of memory");
    c->items = ni;
    centry *e = &c->items[c->n];
    e->key = strdup(key);
    e->value = strdup(v);
    e->secret = true;
    if (!e->key || !e->value) {
        free(e->key);
        scrub_free(e->value);
        return silt_err(SILT_ENOMEM, "config: out of memory");
    }
    c->n++;
    if (add_redaction(c, c->n - 1, v) < 0)
        return SILT_ENOMEM;
    qsort(c->redact, c->nredact, sizeof *c->redact, cmp_len_desc);
    return 0;
}

/* End of the expression that starts at `s` (just after "${{"): the first
 * "}}" outside a quoted text, or NULL. */
static const char *expr_end(const char *s)
{
    bool quoted = false;
    for (const char *p = s; *p; p++) {
        if (*p == '\'')
            quoted = !quoted;
        else if (!quoted && p[0] == '}' && p[1] == '}')
            return p;
    }
    return NULL;
}

static void trim(const char **s, const char **e)
{
    while (*s < *e && isspace((unsigned char)**s))
        (*s)++;
    while (*e > *s && isspace((unsigned char)(*e)[-1]))
        (*e)--;
}

/* Appends the value of expression [s, e) to b. */
static int render_expr(silt_config *c, const char *what, const char *s, const char *e, silt_buf *b)
{
    trim(&s, &e);
    const char *value = NULL;
    size_t vlen = 0, nalts = 0;
    alt_kind first_kind = ALT_LITERAL;
    const char *first_v = NULL;
    size_t first_vl = 0;
    for (const char *p = s; p <= e;) {
        /* the next "||" outside quotes */
        const char *q = p;
        bool quoted = false;
        while (q < e && (quoted || !(q[0] == '|' && q + 1 < e && q[1] == '|'))) {
            if (*q == '\'')
                quoted = !quoted;
            q++;
        }
        const char *as = p, *ae = q;
        trim(&as, &ae);
        alt_kind k = ALT_LITERAL;
        const char *v = NULL;
        size_t vl = 0;
        int rc = parse_alt(as, (size_t)(ae - as), what, &k, &v, &vl);
        if (rc)
            return rc;
        if (nalts++ == 0)
            first_kind = k, first_v = v, first_vl = vl;
        if (!value && k == ALT_LITERAL) {
            value = v, vlen = vl;
        } else if (!value && k == ALT_CONFIG) {
            const centry *f = config_find(c, v, vl);
            if (f)
                value = f->value, vlen = strlen(f->value);
        } else if (!value && k == ALT_ENV) {
            if ((rc = env_value(c, v, vl, &value)) != 0)
                return rc;
            vlen = value ? strlen(value) : 0;
        }
        p = q + 2;
    }
    if (value)
        return silt_buf_append(b, value, vlen);
    if (nalts == 1 && first_kind == ALT_CONFIG)
        return silt_err(SILT_EINVAL, "unknown config key '%.*s' in %s", (int)first_vl, first_v, what);
    size_t n = (size_t)(e - s);
    return silt_err(SILT_EINVAL, "missing values for variable(s): '%.*s' in %s", (int)(n > 200 ? 200 : n), s,
                    what);
}

int silt_config_render(silt_config *c, const char *what, const char *tmpl, char **out)
{
    *out = NULL;
    if (!what)
        what = "template";
    silt_buf b = SILT_BUF_INIT;
    const char *p = tmpl ? tmpl : "";
    int rc = 0;
    for (;;) {
        const char *open = strstr(p, "${{");
        if (!open) {
            rc = silt_buf_puts(&b, p);
            break;
        }
        if ((rc = silt_buf_append(&b, p, (size_t)(open - p))) < 0)
            break;
        const char *close = expr_end(open + 3);
        if (!close) {
            rc = silt_err(SILT_EINVAL, "unterminated template expression in %s", what);
            break;
        }
        if ((rc = render_expr(c, what, open + 3, close, &b)) < 0)
            break;
        p = close + 2;
    }
    if (rc == 0 && !(*out = silt_buf_detach(&b)))
        rc = SILT_ENOMEM;
    if (rc < 0) {
        if (rc == SILT_ENOMEM)
            silt_err(SILT_ENOMEM, "config: out of memory rendering %s", what);
        if (b.data)
            memset(b.data, 0, b.len); /* may hold a secret */
        silt_buf_free(&b);
        return rc;
    }
    return 0;
}

char *silt_config_redact(const silt_config *c, const char *text)
{
    if (!text)
        text = "";
    silt_buf b = SILT_BUF_INIT;
    if (silt_buf_reserve(&b, strlen(text) + 1) < 0)
        return NULL;
    const char *p = text;
    while (*p) {
        size_t hit = 0;
        for (size_t i = 0; c && i < c->nredact && !hit; i++) {
            size_t l = strlen(c->redact[i].text);
            if (strncmp(p, c->redact[i].text, l) == 0)
                hit = l;
        }
        int rc = hit ? silt_buf_puts(&b, "***") : silt_buf_putc(&b, *p);
        if (rc < 0) {
            silt_buf_free(&b);
            return NULL;
        }
        p += hit ? hit : 1;
    }
    return silt_buf_detach(&b);
}

int silt_config_redact_error(const silt_config *c, int code)
{
    char *msg = silt_config_redact(c, silt_error_last());
    if (!msg)
        return silt_err(code, "error message withheld (out of memory while removing secrets)");
    silt_err(code, "%s", msg);
    free(msg);
    return code;
}

/* ---- source state ---------------------------------------------------------- */

/* The secret text of `c` that starts at `p`, or NULL. */
static const rentry *secret_at(const silt_config *c, const char *p, size_t *len)
{
    for (size_t i = 0; c && i < c->nredact; i++) {
        size_t l = strlen(c->redact[i].text);
        if (strncmp(p, c->redact[i].text, l) == 0) {
            *len = l;
            return &c->redact[i];
        }
    }
    return NULL;
}

static bool key_char_plain(unsigned char ch) { return isalnum(ch) || ch == '_' || ch == '-' || ch == '.'; }

/* Appends the marker of `r`: "${KEY}" or "${KEY:url}". */
static int put_marker(silt_buf *b, const silt_config *c, const rentry *r)
{
    int rc = silt_buf_puts(b, "${");
    for (const unsigned char *k = (const unsigned char *)c->items[r->item].key; !rc && *k; k++)
        rc = key_char_plain(*k) ? silt_buf_putc(b, (char)*k) : silt_buf_printf(b, "%%%02X", *k);
    return rc ? rc : silt_buf_puts(b, r->url ? ":url}" : "}");
}

int silt_config_seal(const silt_config *c, const char *value, char **out)
{
    *out = NULL;
    const char *v = value ? value : "";
    bool seal = strncmp(v, SILT_STATE_SEALED_PREFIX, strlen(SILT_STATE_SEALED_PREFIX)) == 0;
    size_t len;
    for (const char *p = v; *p && !seal; p++)
        seal = secret_at(c, p, &len) != NULL;
    if (!seal) {
        *out = strdup(v);
        return *out ? 0 : silt_err(SILT_ENOMEM, "config: out of memory");
    }
    silt_buf b = SILT_BUF_INIT;
    int rc = silt_buf_puts(&b, SILT_STATE_SEALED_PREFIX);
    for (const char *p = v; !rc && *p;) {
        const rentry *r = secret_at(c, p, &len);
        if (r) {
            rc = put_marker(&b, c, r);
            p += len;
        } else {
            rc = *p == '$' ? silt_buf_puts(&b, "$$") : silt_buf_putc(&b, *p);
            p++;
        }
    }
    if (!rc && !(*out = silt_buf_detach(&b)))
        rc = SILT_ENOMEM;
    silt_buf_free(&b);
    return rc ? silt_err(SILT_ENOMEM, "config: out of memory") : 0;
}

static int hexval(char ch)
{
    return ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
                                             : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
}

/* Parses the marker body "KEY" / "KEY:url" (n bytes at m) and appends the
 * value it stands for. */
static int put_unsealed(silt_buf *b, const silt_config *c, const char *m, size_t n)
{
    bool url = n >= 4 && memcmp(m + n - 4, ":url", 4) == 0;
    if (url)
        n -= 4;
    silt_buf key = SILT_BUF_INIT;
    int rc = 0;
    for (size_t i = 0; !rc && i < n; i++) {
        if (m[i] == '%' && i + 2 < n && hexval(m[i + 1]) >= 0 && hexval(m[i + 2]) >= 0) {
            rc = silt_buf_putc(&key, (char)(hexval(m[i + 1]) * 16 + hexval(m[i + 2])));
            i += 2;
        } else if (key_char_plain((unsigned char)m[i])) {
            rc = silt_buf_putc(&key, m[i]);
        } else {
            rc = SILT_EINVAL;
        }
    }
    if (rc == 0 && key.len == 0)
        rc = SILT_EINVAL;
    if (rc == SILT_EINVAL)
        rc = silt_err(SILT_EINVAL, "source state: malformed sealed value (bad marker)");
    const centry *e = NULL;
    for (size_t i = 0; rc == 0 && c && i < c->n && !e; i++)
        if (strcmp(c->items[i].key, key.data) == 0)
            e = &c->items[i];
    if (rc == 0 && !e && strncmp(key.data, "env.", 4) == 0)
        rc = silt_err(SILT_ENOTFOUND,
                      "source state: the stored state stands for %s, which the source's templates no longer use "
                      "or which is not set (set %s, or start the source afresh under a new name)",
                      key.data, key.data + 4);
    if (rc == 0 && !e)
        rc = silt_err(SILT_ENOTFOUND,
                      "source state: the stored state stands for config.%s, which the source no longer defines "
                      "(restore config.%s, or start the source afresh under a new name)",
                      key.data, key.data);
    silt_buf_free(&key);
    if (rc)
        return rc;
    if (!url)
        return silt_buf_puts(b, e->value) ? silt_err(SILT_ENOMEM, "config: out of memory") : 0;
    bool differs;
    char *enc = url_encode(e->value, &differs);
    rc = enc ? silt_buf_puts(b, enc) : SILT_ENOMEM;
    scrub_free(enc);
    return rc ? silt_err(SILT_ENOMEM, "config: out of memory") : 0;
}

int silt_config_unseal(const silt_config *c, const char *stored, char **out)
{
    *out = NULL;
    const char *v = stored ? stored : "";
    size_t pl = strlen(SILT_STATE_SEALED_PREFIX);
    if (strncmp(v, SILT_STATE_SEALED_PREFIX, pl) != 0) {
        *out = strdup(v);
        return *out ? 0 : silt_err(SILT_ENOMEM, "config: out of memory");
    }
    silt_buf b = SILT_BUF_INIT;
    int rc = 0;
    for (const char *p = v + pl; !rc && *p;) {
        if (*p != '$') {
            rc = silt_buf_putc(&b, *p++) ? silt_err(SILT_ENOMEM, "config: out of memory") : 0;
        } else if (p[1] == '$') {
            rc = silt_buf_putc(&b, '$') ? silt_err(SILT_ENOMEM, "config: out of memory") : 0;
            p += 2;
        } else if (p[1] == '{' && strchr(p + 2, '}')) {
            const char *end = strchr(p + 2, '}');
            rc = put_unsealed(&b, c, p + 2, (size_t)(end - (p + 2)));
            p = end + 1;
        } else {
            rc = silt_err(SILT_EINVAL, "source state: malformed sealed value (a lone '$')");
        }
    }
    if (!rc && !(*out = silt_buf_detach(&b)))
        rc = silt_err(SILT_ENOMEM, "config: out of memory");
    if (b.data)
        memset(b.data, 0, b.len); /* may hold a secret */
    silt_buf_free(&b);
    return rc;
}
