/* s3_xml.c — the few S3 XML responses silt reads (error bodies,
 * ListBucketResult, InitiateMultipartUploadResult), with a small strict
 * parser rather than a general XML library.
 *
 * Accepted: an optional <?xml ...?> prolog and comments, elements with
 * attributes (skipped; quoted values may hold '>'), self-closing elements,
 * character data with the five predefined entities and numeric character
 * references. Refused (SILT_EINVAL): DOCTYPE, CDATA, processing instructions
 * after the prolog, mismatched or unclosed tags, text outside the root,
 * nesting deeper than XML_MAX_DEPTH, names longer than XML_MAX_NAME.
 * Invariant: the parser never reads past xml[len-1] and never allocates
 * more than the input size for text. */
#include "store/s3_client.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"

#define XML_MAX_DEPTH 16
#define XML_MAX_NAME 64

/* Called when an element closes: its name, its parent's name ("" for the
 * root) and its own decoded character data. Non-zero stops the walk. */
typedef int (*xml_close_fn)(void *ctx, const char *parent, const char *name, const char *text,
                            size_t text_len);

typedef struct xml_walk {
    const char *p, *end;
    char stack[XML_MAX_DEPTH][XML_MAX_NAME + 1];
    size_t depth;
    bool seen_root;
    silt_buf text;
    xml_close_fn fn;
    void *ctx;
} xml_walk;

static int bad(const char *why) { return silt_err(SILT_EINVAL, "s3: malformed XML response: %s", why); }

static bool is_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.' || c == ':';
}

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

static int utf8_put(silt_buf *b, unsigned long cp)
{
    char u[4];
    size_t n;
    if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return bad("invalid character reference");
    if (cp < 0x80) {
        u[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | (cp >> 6));
        u[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | (cp >> 12));
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        u[0] = (char)(0xF0 | (cp >> 18));
        u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    return silt_buf_append(b, u, n);
}

/* Decodes one entity starting at w->p ('&'). */
static int entity(xml_walk *w)
{
    const char *semi = memchr(w->p, ';', (size_t)(w->end - w->p));
    if (!semi || semi - w->p > 12)
        return bad("unterminated entity");
    const char *e = w->p + 1;
    size_t n = (size_t)(semi - e);
    static const struct { const char *name; char c; } NAMED[] = {
        {"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''}};
    int rc = 1;
    for (size_t i = 0; i < sizeof NAMED / sizeof NAMED[0]; i++)
        if (strlen(NAMED[i].name) == n && memcmp(e, NAMED[i].name, n) == 0)
            rc = silt_buf_putc(&w->text, NAMED[i].c);
    if (rc == 1) {
        if (n < 2 || e[0] != '#')
            return bad("unknown entity");
        bool hex = e[1] == 'x';
        unsigned long cp = 0;
        size_t i = hex ? 2 : 1;
        if (i >= n)
            return bad("empty character reference");
        for (; i < n; i++) {
            char c = e[i];
            int d = (c >= '0' && c <= '9') ? c - '0'
                    : hex && c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : hex && c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
            if (d < 0)
                return bad("invalid character reference");
            cp = cp * (hex ? 16 : 10) + (unsigned long)d;
            if (cp > 0x10FFFF)
                return bad("invalid character reference");
        }
        rc = utf8_put(&w->text, cp);
    }
    w->p = semi + 1;
    return rc < 0 ? rc : 0;
}

/* Skips "<?...?>" or "<!--...-->" at w->p. */
static int skip_special(xml_walk *w, const char *close)
{
    size_t cl = strlen(close);
    for (const char *q = w->p; q + cl <= w->end; q++)
        if (memcmp(q, close, cl) == 0) {
            w->p = q + cl;
            return 0;
        }
    return bad("unterminated declaration or comment");
}

static int read_name(xml_walk *w, char name[XML_MAX_NAME + 1])
{
    size_t n = 0;
    while (w->p < w->end && is_name_char(*w->p)) {
        if (n == XML_MAX_NAME)
            return bad("element name too long");
        name[n++] = *w->p++;
    }
    name[n] = '\0';
    return n ? 0 : bad("missing element name");
}

static int close_element(xml_walk *w, const char *name)
{
    if (w->depth == 0 || strcmp(w->stack[w->depth - 1], name) != 0)
        return bad("mismatched closing tag");
    w->depth--;
    const char *parent = w->depth ? w->stack[w->depth - 1] : "";
    int rc = w->fn(w->ctx, parent, name, w->text.data ? w->text.data : "", w->text.len);
    silt_buf_clear(&w->text);
    return rc;
}

/* Parses an opening tag after '<' (attributes skipped). */
static int open_tag(xml_walk *w)
{
    if (w->depth == 0 && w->seen_root)
        return bad("content after the root element");
    if (w->depth == XML_MAX_DEPTH)
        return bad("nesting too deep");
    char name[XML_MAX_NAME + 1];
    int rc = read_name(w, name);
    if (rc < 0)
        return rc;
    char quote = 0;
    while (w->p < w->end && (quote || (*w->p != '>' && *w->p != '/'))) {
        if (quote && *w->p == quote)
            quote = 0;
        else if (!quote && (*w->p == '"' || *w->p == '\''))
            quote = *w->p;
        else if (!quote && *w->p == '<')
            return bad("'<' inside a tag");
        w->p++;
    }
    bool self_close = w->p < w->end && *w->p == '/';
    if (self_close)
        w->p++;
    if (w->p >= w->end || *w->p != '>')
        return bad("unterminated tag");
    w->p++;
    memcpy(w->stack[w->depth++], name, sizeof name);
    w->seen_root = true;
    silt_buf_clear(&w->text);
    return self_close ? close_element(w, name) : 0;
}

static int markup(xml_walk *w)
{
    w->p++; /* '<' */
    if (w->p < w->end && *w->p == '?') {
        if (w->seen_root)
            return bad("processing instruction inside the document");
        return skip_special(w, "?>");
    }
    if (w->end - w->p >= 3 && memcmp(w->p, "!--", 3) == 0)
        return skip_special(w, "-->");
    if (w->p < w->end && *w->p == '!')
        return bad("DOCTYPE and CDATA are not accepted");
    if (w->p < w->end && *w->p == '/') {
        w->p++;
        char name[XML_MAX_NAME + 1];
        int rc = read_name(w, name);
        while (rc == 0 && w->p < w->end && is_space(*w->p))
            w->p++;
        if (rc == 0 && (w->p >= w->end || *w->p != '>'))
            rc = bad("unterminated closing tag");
        if (rc < 0)
            return rc;
        w->p++;
        return close_element(w, name);
    }
    return open_tag(w);
}

static int xml_walk_run(const char *xml, size_t len, xml_close_fn fn, void *ctx)
{
    xml_walk *w = calloc(1, sizeof *w);
    if (!w)
        return silt_err(SILT_ENOMEM, "s3: out of memory");
    w->p = xml ? xml : "";
    w->end = w->p + (xml ? len : 0);
    w->fn = fn;
    w->ctx = ctx;
    int rc = 0;
    while (rc == 0 && w->p < w->end) {
        char c = *w->p;
        if (c == '<')
            rc = markup(w);
        else if (w->depth == 0 && !is_space(c))
            rc = bad("text outside the root element");
        else if (c == '&')
            rc = entity(w);
        else if (c == '\0')
            rc = bad("NUL byte");
        else
            rc = silt_buf_putc(&w->text, *w->p++);
    }
    if (rc == 0 && (w->depth || !w->seen_root))
        rc = bad(w->depth ? "unclosed element" : "no root element");
    silt_buf_free(&w->text);
    free(w);
    return rc;
}

static void copy_trunc(char *dst, size_t cap, const char *src, size_t n)
{
    if (!cap)
        return;
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

typedef struct err_ctx {
    char *code, *msg;
    size_t code_cap, msg_cap;
    bool root_is_error, saw_root;
} err_ctx;

static int on_error_close(void *ctx, const char *parent, const char *name, const char *text, size_t n)
{
    err_ctx *e = ctx;
    if (!*parent) {
        e->saw_root = true;
        e->root_is_error = strcmp(name, "Error") == 0;
    } else if (strcmp(parent, "Error") == 0 && strcmp(name, "Code") == 0) {
        copy_trunc(e->code, e->code_cap, text, n);
    } else if (strcmp(parent, "Error") == 0 && strcmp(name, "Message") == 0) {
        copy_trunc(e->msg, e->msg_cap, text, n);
    }
    return 0;
}

int silt_s3_parse_error(const char *xml, size_t len, char *code, size_t code_cap, char *msg, size_t msg_cap)
{
    err_ctx e = {code, msg, code_cap, msg_cap, false, false};
    copy_trunc(code, code_cap, "", 0);
    copy_trunc(msg, msg_cap, "", 0);
    int rc = xml_walk_run(xml, len, on_error_close, &e);
    if (rc == 0 && (!e.root_is_error || !code_cap || !*code))
        rc = silt_err(SILT_EINVAL, "s3: response is not an S3 error document");
    if (rc < 0) { /* nothing half-parsed is left behind */
        copy_trunc(code, code_cap, "", 0);
        copy_trunc(msg, msg_cap, "", 0);
    }
    return rc;
}

typedef struct list_ctx {
    silt_s3_list_fn fn;
    void *ctx;
    bool *truncated;
    silt_buf *next;
    silt_buf key;
    bool have_key, have_size, in_result;
    uint64_t size;
    int cb_rc;
} list_ctx;

static int parse_u64(const char *t, size_t n, uint64_t *out)
{
    if (n == 0 || n > 20)
        return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (t[i] < '0' || t[i] > '9')
            return -1;
        uint64_t d = (uint64_t)(t[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

static int on_contents_close(list_ctx *l)
{
    if (!l->have_key || !l->key.len || memchr(l->key.data, '\0', l->key.len))
        return bad("Contents without a Key");
    if (!l->have_size)
        return bad("Contents without a Size");
    int rc = l->fn ? l->fn(l->ctx, l->key.data, l->size) : 0;
    l->have_key = l->have_size = false;
    silt_buf_clear(&l->key);
    if (rc != 0)
        l->cb_rc = rc;
    return rc;
}

static int on_list_close(void *ctx, const char *parent, const char *name, const char *text, size_t n)
{
    list_ctx *l = ctx;
    if (!*parent) {
        l->in_result = strcmp(name, "ListBucketResult") == 0;
        return l->in_result ? 0 : bad("root is not ListBucketResult");
    }
    if (strcmp(parent, "Contents") == 0) {
        if (strcmp(name, "Key") == 0) {
            silt_buf_clear(&l->key);
            l->have_key = true;
            return silt_buf_append(&l->key, text, n);
        }
        if (strcmp(name, "Size") == 0) {
            l->have_size = true;
            return parse_u64(text, n, &l->size) == 0 ? 0 : bad("invalid Size");
        }
        return 0;
    }
    if (strcmp(parent, "ListBucketResult") != 0)
        return 0;
    if (strcmp(name, "Contents") == 0)
        return on_contents_close(l);
    if (strcmp(name, "IsTruncated") == 0) {
        if (n == 4 && memcmp(text, "true", 4) == 0)
            *l->truncated = true;
        else if (n == 5 && memcmp(text, "false", 5) == 0)
            *l->truncated = false;
        else
            return bad("invalid IsTruncated");
    } else if (strcmp(name, "NextContinuationToken") == 0) {
        silt_buf_clear(l->next);
        return silt_buf_append(l->next, text, n);
    }
    return 0;
}

int silt_s3_parse_list(const char *xml, size_t len, silt_s3_list_fn fn, void *ctx, bool *truncated,
                       silt_buf *next_token)
{
    list_ctx l = {.fn = fn, .ctx = ctx, .truncated = truncated, .next = next_token, .key = SILT_BUF_INIT};
    *truncated = false;
    int rc = xml_walk_run(xml, len, on_list_close, &l);
    silt_buf_free(&l.key);
    if (l.cb_rc)
        return l.cb_rc;
    if (rc == 0 && !l.in_result)
        rc = bad("root is not ListBucketResult");
    if (rc == 0 && *truncated && next_token->len == 0)
        rc = bad("IsTruncated without NextContinuationToken");
    return rc;
}

typedef struct find_ctx {
    const char *name;
    silt_buf *out;
    bool found;
} find_ctx;

static int on_find_close(void *ctx, const char *parent, const char *name, const char *text, size_t n)
{
    (void)parent;
    find_ctx *f = ctx;
    if (f->found || strcmp(name, f->name) != 0)
        return 0;
    f->found = true;
    return silt_buf_append(f->out, text, n);
}

int silt_s3_xml_find(const char *xml, size_t len, const char *name, silt_buf *out)
{
    find_ctx f = {name, out, false};
    int rc = xml_walk_run(xml, len, on_find_close, &f);
    if (rc < 0)
        return rc;
    return f.found ? 0 : silt_err(SILT_ENOTFOUND, "s3: response has no <%s>", name);
}
