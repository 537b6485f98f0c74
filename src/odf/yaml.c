/* yaml.c — YAML <-> ODF structs, generic over the descriptors (see yaml.h).
 *
 * Parsing: libyaml events are first loaded into a small node tree in the
 * arena (depth-limited, aliases rejected, line numbers kept), which is then
 * walked together with the descriptors.
 *
 * Emitting: the libyaml emitter produces the text, with the scalar style
 * chosen the way serde_yaml does it (strings that would read back as
 * null/bool/number are single-quoted, multi-line strings use a literal
 * block, everything else is left to the emitter), unlimited line width and
 * unicode output — which is what the ODF reference implementation uses.
 */
#include "odf/yaml.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <yaml.h>

#include "odf/json.h"
#include "odf/odf_types.h"
#include "util/error.h"
#include "util/multiformats.h"
#include "util/timeutil.h"

#ifndef ODF_FMT_UUID
#define ODF_FMT_UUID 4
#endif
#ifndef ODF_F_MAP
#define ODF_F_MAP 0x04
#endif

#define FIELD_PTR(obj, off) ((void *)((char *)(obj) + (off)))
#define CFIELD_PTR(obj, off) ((const void *)((const char *)(obj) + (off)))

/* ======================================================================
 * Scalar type resolution (YAML 1.2 core schema, as serde_yaml does it)
 * ====================================================================== */

static bool text_is_null(const char *s, size_t n)
{
    return n == 0 || (n == 1 && s[0] == '~') ||
           (n == 4 && (!memcmp(s, "null", 4) || !memcmp(s, "Null", 4) || !memcmp(s, "NULL", 4)));
}

/* 1 = true, 0 = false, -1 = not a bool */
static int text_bool(const char *s, size_t n)
{
    if (n == 4 && (!memcmp(s, "true", 4) || !memcmp(s, "True", 4) || !memcmp(s, "TRUE", 4)))
        return 1;
    if (n == 5 && (!memcmp(s, "false", 5) || !memcmp(s, "False", 5) || !memcmp(s, "FALSE", 5)))
        return 0;
    return -1;
}

/* "0123", "-007": leading zero followed by digits only — a string in 1.2 */
static bool digits_but_not_number(const char *s, size_t n)
{
    if (n && (s[0] == '-' || s[0] == '+')) {
        s++;
        n--;
    }
    if (n <= 1 || s[0] != '0')
        return false;
    for (size_t i = 1; i < n; i++)
        if (!isdigit((unsigned char)s[i]))
            return false;
    return true;
}

static int digit_val(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return 99;
}

/* Integer syntax as serde_yaml accepts it: [+|-] then 0x/0o/0b digits or
 * decimal digits (no leading zeros). Returns 1 if the text is an integer
 * (possibly overflowing: *overflow set, i.e. does not fit 64 bits of
 * magnitude), 0 if it is not integer syntax. */
static int parse_int_text(const char *s, size_t n, bool *neg, uint64_t *mag, bool *overflow)
{
    *neg = false;
    *mag = 0;
    *overflow = false;
    if (n == 0)
        return 0;
    if (digits_but_not_number(s, n))
        return 0;
    size_t i = 0;
    if (s[0] == '+' || s[0] == '-') {
        *neg = s[0] == '-';
        i = 1;
    }
    unsigned radix = 10;
    if (n - i > 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'o' || s[i + 1] == 'b')) {
        radix = s[i + 1] == 'x' ? 16 : s[i + 1] == 'o' ? 8 : 2;
        i += 2;
    }
    if (i >= n)
        return 0;
    uint64_t v = 0;
    for (; i < n; i++) {
        int d = digit_val(s[i]);
        if (d >= (int)radix)
            return 0;
        if (v > (UINT64_MAX - (uint64_t)d) / radix)
            *overflow = true;
        else
            v = v * radix + (uint64_t)d;
    }
    *mag = v;
    return 1;
}

/* Rust's f64 grammar: [+-] (digits [. digits*] | . digits) [(e|E) [+-] digits]
 * plus serde_yaml's .inf/.nan spellings. Only finite values count (except
 * the dotted spellings). */
static bool text_is_float(const char *s, size_t n, double *out)
{
    const char *u = s;
    size_t un = n;
    if (un && u[0] == '+') {
        u++;
        un--;
        if (un && (u[0] == '+' || u[0] == '-'))
            return false;
    }
    if ((un == 4 && (!memcmp(u, ".inf", 4) || !memcmp(u, ".Inf", 4) || !memcmp(u, ".INF", 4)))) {
        if (out)
            *out = INFINITY;
        return true;
    }
    if (n == 5 && (!memcmp(s, "-.inf", 5) || !memcmp(s, "-.Inf", 5) || !memcmp(s, "-.INF", 5))) {
        if (out)
            *out = -INFINITY;
        return true;
    }
    if (n == 4 && (!memcmp(s, ".nan", 4) || !memcmp(s, ".NaN", 4) || !memcmp(s, ".NAN", 4))) {
        if (out)
            *out = NAN;
        return true;
    }
    size_t i = 0;
    if (i < un && (u[i] == '+' || u[i] == '-'))
        i++;
    size_t int_digits = 0, frac_digits = 0;
    while (i < un && isdigit((unsigned char)u[i])) {
        i++;
        int_digits++;
    }
    if (i < un && u[i] == '.') {
        i++;
        while (i < un && isdigit((unsigned char)u[i])) {
            i++;
            frac_digits++;
        }
    }
    if (int_digits + frac_digits == 0)
        return false;
    if (i < un && (u[i] == 'e' || u[i] == 'E')) {
        i++;
        if (i < un && (u[i] == '+' || u[i] == '-'))
            i++;
        size_t exp_digits = 0;
        while (i < un && isdigit((unsigned char)u[i])) {
            i++;
            exp_digits++;
        }
        if (!exp_digits)
            return false;
    }
    if (i != un)
        return false;
    char tmp[128];
    double v;
    if (un < sizeof tmp) {
        memcpy(tmp, u, un);
        tmp[un] = '\0';
        v = strtod(tmp, NULL);
    } else {
        char *heap = malloc(un + 1);
        if (!heap)
            return false;
        memcpy(heap, u, un);
        heap[un] = '\0';
        v = strtod(heap, NULL);
        free(heap);
    }
    if (!isfinite(v))
        return false;
    if (out)
        *out = v;
    return true;
}

/* Would serde_yaml read this plain text back as something other than a
 * string? Then it must be quoted. */
static bool text_needs_quotes(const char *s, size_t n)
{
    if (text_is_null(s, n) || text_bool(s, n) >= 0)
        return true;
    if (digits_but_not_number(s, n))
        return true;
    bool neg, ovf;
    uint64_t mag;
    if (parse_int_text(s, n, &neg, &mag, &ovf))
        return true;
    return text_is_float(s, n, NULL);
}

/* Kind/enum name matching: exact PascalCase, camelCase (first letter
 * lowered) or all lower case. */
static bool name_matches(const char *canon, const char *s, size_t n)
{
    size_t cn = strlen(canon);
    if (cn != n || n == 0)
        return false;
    if (!memcmp(canon, s, n))
        return true;
    if (s[0] == (char)tolower((unsigned char)canon[0]) && !memcmp(canon + 1, s + 1, n - 1))
        return true;
    for (size_t i = 0; i < n; i++)
        if (s[i] != (char)tolower((unsigned char)canon[i]))
            return false;
    return true;
}

/* ======================================================================
 * Input limits (see yaml.h): size, encoding, depth, anchors
 * ====================================================================== */

static int too_big(const char *file)
{
    return silt_err(SILT_EINVAL, "%s: larger than %s, the limit for YAML/JSON input", file, ODF_YAML_MAX_TEXT);
}

static int read_fd_max(int fd, const char *path, silt_buf *out)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return silt_err(SILT_EIO, "%s: cannot stat: %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode))
        return silt_err(SILT_EIO, "%s: is a directory", path);
    if (st.st_size > 0 && (uint64_t)st.st_size > ODF_YAML_MAX_BYTES)
        return too_big(path);
    size_t start = out->len;
    for (;;) {
        if (silt_buf_reserve(out, 65536) < 0)
            return SILT_ENOMEM;
        size_t room = out->cap - out->len - 1;
        ssize_t r = read(fd, out->data + out->len, room);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return silt_err(SILT_EIO, "%s: read failed: %s", path, strerror(errno));
        if (r == 0)
            break;
        out->len += (size_t)r;
        if (out->len - start > ODF_YAML_MAX_BYTES) /* it grew, or a pipe */
            return too_big(path);
    }
    out->data[out->len] = '\0';
    return 0;
}

int odf_yaml_read_file(const char *path, silt_buf *out)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return silt_err(SILT_ENOTFOUND, "%s: no such file", path);
        return silt_err(SILT_EIO, "%s: cannot open: %s", path, strerror(errno));
    }
    size_t start = out->len;
    int rc = read_fd_max(fd, path, out);
    close(fd);
    if (rc < 0) {
        out->len = start;
        if (out->data)
            out->data[start] = '\0';
    }
    return rc;
}

int odf_yaml_check_input(const char *text, size_t len, const char *filename, size_t *bom_out)
{
    const char *file = filename ? filename : "<input>";
    const unsigned char *t = (const unsigned char *)text;
    if (bom_out)
        *bom_out = 0;
    if (len > ODF_YAML_MAX_BYTES)
        return too_big(file);
    /* UTF-16/32: a BOM (FF FE, FE FF, 00 00 FE FF), or a NUL in the first two
     * bytes — YAML and JSON text starts with an ASCII character. */
    if (len >= 2 && ((t[0] == 0xFF && t[1] == 0xFE) || (t[0] == 0xFE && t[1] == 0xFF) || t[0] == 0 || t[1] == 0))
        return silt_err(SILT_EINVAL, "%s: UTF-16 or UTF-32 text is not supported: save the file as UTF-8", file);
    if (len >= 3 && t[0] == 0xEF && t[1] == 0xBB && t[2] == 0xBF && bom_out)
        *bom_out = 3;
    return 0;
}

int odf_yaml_parser_open(yaml_parser_t *p, const char *text, size_t len, const char *filename,
                         size_t *skip_out)
{
    size_t bom = 0;
    *skip_out = 0;
    int rc = odf_yaml_check_input(text, len, filename, &bom);
    if (rc < 0)
        return rc;
    if (!yaml_parser_initialize(p))
        return silt_err(SILT_ENOMEM, "%s: out of memory (YAML parser)", filename ? filename : "<input>");
    /* the BOM is skipped here: libyaml, told the encoding, would count it as
     * a character of the first line and misread its indentation */
    yaml_parser_set_input_string(p, (const unsigned char *)text + bom, len - bom);
    yaml_parser_set_encoding(p, YAML_UTF8_ENCODING);
    *skip_out = bom;
    return 0;
}

int odf_yaml_syntax_error(const yaml_parser_t *p, const char *filename, int line0)
{
    const char *file = filename ? filename : "<input>";
    if (p->error == YAML_MEMORY_ERROR)
        return silt_err(SILT_ENOMEM, "%s: out of memory while parsing YAML", file);
    size_t line = p->problem_mark.line;
    if (p->error == YAML_READER_ERROR) { /* bad UTF-8: only a byte offset is known */
        line = 0;
        const unsigned char *s = p->input.string.start, *e = p->input.string.end;
        for (size_t i = 0; s && i < p->problem_offset && s + i < e; i++)
            line += s[i] == '\n';
    }
    const char *problem = p->problem ? p->problem : "invalid YAML";
    if (p->context)
        return silt_err(SILT_EINVAL, "%s:%zu: YAML syntax error: %s %s", file, (size_t)line0 + line, problem,
                        p->context);
    return silt_err(SILT_EINVAL, "%s:%zu: YAML syntax error: %s", file, (size_t)line0 + line, problem);
}

int odf_yaml_guard_event(odf_yaml_guard *g, const yaml_event_t *ev)
{
    const yaml_char_t *anchor = NULL;
    int level;
    switch (ev->type) {
    case YAML_ALIAS_EVENT:
        anchor = ev->data.alias.anchor;
        level = g->depth + 1;
        break;
    case YAML_SCALAR_EVENT:
        anchor = ev->data.scalar.anchor;
        level = g->depth + 1;
        break;
    case YAML_SEQUENCE_START_EVENT:
        anchor = ev->data.sequence_start.anchor;
        level = ++g->depth;
        break;
    case YAML_MAPPING_START_EVENT:
        anchor = ev->data.mapping_start.anchor;
        level = ++g->depth;
        break;
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        g->depth--;
        return 0;
    default:
        return 0;
    }
    const char *file = g->file ? g->file : "<input>";
    size_t line = (size_t)(g->line0 ? g->line0 : 1) + ev->start_mark.line;
    if (anchor || ev->type == YAML_ALIAS_EVENT)
        return silt_err(SILT_EINVAL, "%s:%zu: YAML anchors and aliases are not supported", file, line);
    if (level > ODF_YAML_MAX_DEPTH)
        return silt_err(SILT_EINVAL, "%s:%zu: nesting deeper than %d levels", file, line, ODF_YAML_MAX_DEPTH);
    return 0;
}

int odf_yaml_check(const char *text, size_t len, const char *filename, int line)
{
    yaml_parser_t p;
    size_t skip;
    int rc = odf_yaml_parser_open(&p, text, len, filename, &skip);
    if (rc < 0)
        return rc;
    odf_yaml_guard g = {filename, line > 0 ? line : 1, 0};
    for (bool end = false; rc == 0 && !end;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev)) {
            rc = odf_yaml_syntax_error(&p, filename, g.line0);
            break;
        }
        end = ev.type == YAML_STREAM_END_EVENT;
        rc = odf_yaml_guard_event(&g, &ev);
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&p);
    return rc;
}

void odf_yaml_offsets_init(odf_yaml_offsets *o, const char *text, size_t len)
{
    o->text = (const unsigned char *)text;
    o->len = text ? len : 0;
    o->chars = 0;
    o->bytes = 0;
}

/* A character is a lead byte and the continuation bytes (10xxxxxx) after it;
 * libyaml has checked that the text it marked is valid UTF-8. */
size_t odf_yaml_offset(odf_yaml_offsets *o, size_t index)
{
    while (o->chars < index && o->bytes < o->len) {
        o->bytes++;
        while (o->bytes < o->len && (o->text[o->bytes] & 0xC0) == 0x80)
            o->bytes++;
        o->chars++;
    }
    while (o->chars > index && o->bytes > 0) {
        o->bytes--;
        while (o->bytes > 0 && (o->text[o->bytes] & 0xC0) == 0x80)
            o->bytes--;
        o->chars--;
    }
    return o->bytes;
}

/* ======================================================================
 * Node tree
 * ====================================================================== */

enum { YN_SCALAR = 1, YN_SEQ, YN_MAP };

typedef struct ynode ynode;
struct ynode {
    int type;
    int line;  /* 1-based */
    bool plain; /* untagged plain scalar: subject to type resolution */
    char *s;
    size_t len;
    ynode *first, *last, *next; /* children (map: key, value, key, value…) */
    size_t n;
};

typedef struct pctx {
    silt_arena *a;
    const char *file;
    int line0; /* file line of the text's first line */
    odf_yaml_guard guard;
    char path[1024];
    size_t plen;
} pctx;

static int perr(pctx *c, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int perr(pctx *c, int line, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (c->plen)
        return silt_err(SILT_EINVAL, "%s:%d: %s: %s", c->file, line, c->path, msg);
    return silt_err(SILT_EINVAL, "%s:%d: %s", c->file, line, msg);
}

/* Path helpers: push returns the previous length to restore. */
static size_t path_push(pctx *c, const char *name)
{
    size_t old = c->plen;
    size_t nl = strlen(name);
    size_t need = (old ? 1 : 0) + nl;
    if (old + need + 1 >= sizeof c->path)
        return old;
    if (old)
        c->path[c->plen++] = '.';
    memcpy(c->path + c->plen, name, nl);
    c->plen += nl;
    c->path[c->plen] = '\0';
    return old;
}

static size_t path_push_index(pctx *c, size_t i)
{
    size_t old = c->plen;
    int w = snprintf(c->path + c->plen, sizeof c->path - c->plen, "[%zu]", i);
    if (w > 0 && (size_t)w < sizeof c->path - c->plen)
        c->plen += (size_t)w;
    else
        c->path[old] = '\0';
    return old;
}

static size_t path_push_key(pctx *c, const char *key)
{
    /* map entries: key as a path component; shown as-is */
    return path_push(c, key);
}

static void path_pop(pctx *c, size_t old)
{
    c->plen = old;
    c->path[old] = '\0';
}

/* Short, printable rendering of a node for messages. */
static const char *show(const ynode *n, char *buf, size_t cap)
{
    if (n->type == YN_MAP)
        return "a mapping";
    if (n->type == YN_SEQ)
        return "a sequence";
    size_t max = n->len < 48 ? n->len : 48;
    size_t j = 0;
    buf[j++] = '\'';
    for (size_t i = 0; i < max && j + 5 < cap; i++) {
        unsigned char ch = (unsigned char)n->s[i];
        buf[j++] = (ch < 0x20 || ch == 0x7f) ? '?' : (char)ch;
    }
    if (max < n->len && j + 5 < cap) {
        memcpy(buf + j, "...", 3);
        j += 3;
    }
    buf[j++] = '\'';
    buf[j] = '\0';
    return buf;
}

static bool node_is_null(const ynode *n)
{
    return n->type == YN_SCALAR && n->plain && text_is_null(n->s, n->len);
}

/* Next event, checked against the input limits. */
static int next_event(pctx *c, yaml_parser_t *p, yaml_event_t *ev)
{
    memset(ev, 0, sizeof *ev);
    if (!yaml_parser_parse(p, ev))
        return odf_yaml_syntax_error(p, c->file, c->line0);
    int rc = odf_yaml_guard_event(&c->guard, ev);
    if (rc < 0)
        yaml_event_delete(ev);
    return rc;
}

static int mark_line(const pctx *c, yaml_mark_t m)
{
    return c->line0 + (int)m.line;
}

static ynode *new_node(pctx *c, int type, const yaml_event_t *ev)
{
    ynode *n = silt_arena_alloc(c->a, sizeof *n);
    if (!n)
        return NULL;
    n->type = type;
    n->line = mark_line(c, ev->start_mark);
    return n;
}

static void add_child(ynode *parent, ynode *child)
{
    if (parent->last)
        parent->last->next = child;
    else
        parent->first = child;
    parent->last = child;
    parent->n++;
}

#define YAML_TAG_PREFIX "tag:yaml.org,2002:"

/* Loads the node whose start event is *ev (consumed: deleted here). Depth
 * and aliases were checked by next_event's guard. */
static int load_node(pctx *c, yaml_parser_t *p, yaml_event_t *ev, ynode **out)
{
    int rc = 0;
    ynode *n = NULL;
    *out = NULL;
    switch (ev->type) {
    case YAML_SCALAR_EVENT: {
        n = new_node(c, YN_SCALAR, ev);
        if (!n) {
            rc = SILT_ENOMEM;
            goto done;
        }
        size_t len = ev->data.scalar.length;
        n->s = silt_arena_alloc(c->a, len + 1);
        if (!n->s) {
            rc = SILT_ENOMEM;
            goto done;
        }
        memcpy(n->s, ev->data.scalar.value, len);
        n->s[len] = '\0';
        n->len = len;
        const char *tag = (const char *)ev->data.scalar.tag;
        if (tag) {
            if (!strcmp(tag, YAML_TAG_PREFIX "str") || !strcmp(tag, "!"))
                n->plain = false;
            else if (!strncmp(tag, YAML_TAG_PREFIX, strlen(YAML_TAG_PREFIX)))
                n->plain = true;
            else {
                rc = perr(c, n->line, "unsupported YAML tag '%.40s'", tag);
                goto done;
            }
        } else {
            n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
        }
        break;
    }
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT: {
        bool is_map = ev->type == YAML_MAPPING_START_EVENT;
        const char *tag = is_map ? (const char *)ev->data.mapping_start.tag
                                 : (const char *)ev->data.sequence_start.tag;
        n = new_node(c, is_map ? YN_MAP : YN_SEQ, ev);
        if (!n) {
            rc = SILT_ENOMEM;
            goto done;
        }
        if (tag && strncmp(tag, YAML_TAG_PREFIX, strlen(YAML_TAG_PREFIX)) && strcmp(tag, "!")) {
            rc = perr(c, n->line, "unsupported YAML tag '%.40s'", tag);
            goto done;
        }
        yaml_event_type_t end = is_map ? YAML_MAPPING_END_EVENT : YAML_SEQUENCE_END_EVENT;
        for (;;) {
            yaml_event_t cev;
            rc = next_event(c, p, &cev);
            if (rc < 0)
                goto done;
            if (cev.type == end) {
                yaml_event_delete(&cev);
                break;
            }
            ynode *child;
            rc = load_node(c, p, &cev, &child);
            if (rc < 0)
                goto done;
            add_child(n, child);
        }
        break;
    }
    default:
        rc = perr(c, mark_line(c, ev->start_mark), "unexpected YAML event");
        goto done;
    }
    *out = n;
done:
    yaml_event_delete(ev);
    return rc;
}

/* Parses exactly one YAML document into a node tree. */
static int load_document(pctx *c, const char *text, size_t len, ynode **root)
{
    yaml_parser_t p;
    yaml_event_t ev;
    size_t skip;
    *root = NULL;
    int rc = odf_yaml_parser_open(&p, text, len, c->file, &skip);
    if (rc < 0)
        return rc;

    rc = next_event(c, &p, &ev); /* STREAM-START */
    if (rc < 0)
        goto out;
    yaml_event_delete(&ev);
    rc = next_event(c, &p, &ev);
    if (rc < 0)
        goto out;
    if (ev.type == YAML_STREAM_END_EVENT) {
        yaml_event_delete(&ev);
        rc = silt_err(SILT_EINVAL, "%s:%d: empty YAML document", c->file, c->line0);
        goto out;
    }
    yaml_event_delete(&ev); /* DOCUMENT-START */
    rc = next_event(c, &p, &ev);
    if (rc < 0)
        goto out;
    rc = load_node(c, &p, &ev, root); /* consumes ev */
    if (rc < 0)
        goto out;
    rc = next_event(c, &p, &ev); /* DOCUMENT-END */
    if (rc < 0)
        goto out;
    yaml_event_delete(&ev);
    rc = next_event(c, &p, &ev);
    if (rc < 0)
        goto out;
    if (ev.type != YAML_STREAM_END_EVENT) {
        int line = mark_line(c, ev.start_mark);
        yaml_event_delete(&ev);
        rc = silt_err(SILT_EINVAL, "%s:%d: more than one YAML document", c->file, line);
        goto out;
    }
    yaml_event_delete(&ev);
    rc = 0;
out:
    yaml_parser_delete(&p);
    if (rc < 0)
        *root = NULL;
    return rc;
}

/* ======================================================================
 * YAML node -> JSON (for JSON-valued fields)
 * ====================================================================== */

static int node_to_json(pctx *c, const ynode *n, json_t **out)
{
    *out = NULL;
    if (n->type == YN_SCALAR) {
        json_t *v = NULL;
        if (memchr(n->s, '\0', n->len))
            return perr(c, n->line, "string contains a NUL character");
        if (!n->plain) {
            v = json_stringn(n->s, n->len);
        } else if (text_is_null(n->s, n->len)) {
            v = json_null();
        } else if (text_bool(n->s, n->len) >= 0) {
            v = json_boolean(text_bool(n->s, n->len));
        } else if (digits_but_not_number(n->s, n->len)) {
            v = json_stringn(n->s, n->len);
        } else {
            bool neg, ovf;
            uint64_t mag;
            double d;
            if (parse_int_text(n->s, n->len, &neg, &mag, &ovf)) {
                if (ovf || (!neg && mag > (uint64_t)INT64_MAX) || (neg && mag > (uint64_t)INT64_MAX + 1)) {
                    char b[64];
                    return perr(c, n->line, "integer %s out of range", show(n, b, sizeof b));
                }
                json_int_t iv = neg ? (mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(json_int_t)mag)
                                    : (json_int_t)mag;
                v = json_integer(iv);
            } else if (text_is_float(n->s, n->len, &d)) {
                v = isfinite(d) ? json_real(d) : json_null();
            } else {
                v = json_stringn(n->s, n->len);
            }
        }
        if (!v)
            return silt_err(SILT_EINVAL, "%s:%d: invalid UTF-8 or out of memory in JSON value", c->file,
                            n->line);
        *out = v;
        return 0;
    }
    if (n->type == YN_SEQ) {
        json_t *arr = json_array();
        if (!arr)
            return silt_err(SILT_ENOMEM, "out of memory");
        size_t i = 0;
        for (const ynode *it = n->first; it; it = it->next, i++) {
            json_t *v;
            size_t old = path_push_index(c, i);
            int rc = node_to_json(c, it, &v);
            path_pop(c, old);
            if (rc < 0) {
                json_decref(arr);
                return rc;
            }
            if (json_array_append_new(arr, v)) {
                json_decref(arr);
                return silt_err(SILT_ENOMEM, "out of memory");
            }
        }
        *out = arr;
        return 0;
    }
    json_t *obj = json_object();
    if (!obj)
        return silt_err(SILT_ENOMEM, "out of memory");
    for (const ynode *k = n->first; k && k->next; k = k->next->next) {
        const ynode *v = k->next;
        if (k->type != YN_SCALAR) {
            json_decref(obj);
            return perr(c, k->line, "mapping keys must be strings");
        }
        if (memchr(k->s, '\0', k->len)) {
            json_decref(obj);
            return perr(c, k->line, "key contains a NUL character");
        }
        if (json_object_get(obj, k->s)) {
            json_decref(obj);
            size_t old = path_push_key(c, k->s);
            int rc = perr(c, k->line, "duplicate key '%.60s'", k->s);
            path_pop(c, old);
            return rc;
        }
        json_t *jv;
        size_t old = path_push_key(c, k->s);
        int rc = node_to_json(c, v, &jv);
        path_pop(c, old);
        if (rc < 0) {
            json_decref(obj);
            return rc;
        }
        if (json_object_set_new(obj, k->s, jv)) {
            json_decref(obj);
            return silt_err(SILT_EINVAL, "%s:%d: invalid key '%.60s'", c->file, k->line, k->s);
        }
    }
    *out = obj;
    return 0;
}

static int node_to_json_text(pctx *c, const ynode *n, char **out)
{
    json_t *v;
    int rc = node_to_json(c, n, &v);
    if (rc < 0)
        return rc;
    silt_buf b = SILT_BUF_INIT;
    rc = odf_json_canonical(&b, v);
    json_decref(v);
    if (rc < 0) {
        silt_buf_free(&b);
        return rc;
    }
    *out = silt_arena_strndup(c->a, b.data ? b.data : "", b.len);
    silt_buf_free(&b);
    return *out ? 0 : SILT_ENOMEM;
}

/* ======================================================================
 * Node tree -> structs
 * ====================================================================== */

static int parse_table(pctx *c, const odf_table_desc *d, const ynode *n, void **out, bool skip_kind,
                       int line);
static int parse_union(pctx *c, const odf_union_desc *u, const ynode *n, odf_union *out);

static bool is_scalar_kind(int k)
{
    return k >= ODF_K_BOOL && k <= ODF_K_ENUM;
}

static bool field_required(const odf_field_desc *f)
{
    if (f->flags & ODF_F_REQUIRED)
        return true;
    return is_scalar_kind(f->kind) && !(f->flags & ODF_F_OPTIONAL);
}

/* A table shown as its only field's value (ExtraAttributes, label maps). */
static bool table_is_transparent(const odf_table_desc *d)
{
    return d->nfields == 1 &&
           (d->fields[0].kind == ODF_K_JSON ||
            (d->fields[0].kind == ODF_K_VEC_TABLE && (d->fields[0].flags & ODF_F_MAP)));
}

static const char *kind_noun(int kind)
{
    switch (kind) {
    case ODF_K_BOOL:
        return "a boolean";
    case ODF_K_U8:
    case ODF_K_U16:
    case ODF_K_U32:
    case ODF_K_U64:
        return "an unsigned integer";
    case ODF_K_I8:
    case ODF_K_I16:
    case ODF_K_I32:
    case ODF_K_I64:
        return "an integer";
    case ODF_K_DURATION:
        return "a duration in nanoseconds";
    case ODF_K_ENUM:
        return "an enum value";
    case ODF_K_STRING:
        return "a string";
    case ODF_K_BYTES:
        return "a string";
    case ODF_K_TIMESTAMP:
        return "a timestamp";
    case ODF_K_TABLE:
    case ODF_K_UNION:
        return "a mapping";
    default:
        return "a sequence";
    }
}

static int expected(pctx *c, const ynode *n, const char *what)
{
    char b[64];
    return perr(c, n->line, "expected %s, got %s", what, show(n, b, sizeof b));
}

static int parse_integer(pctx *c, const odf_field_desc *f, const ynode *n, void *dst)
{
    const char *noun = kind_noun(f->kind);
    char b[64];
    if (n->type != YN_SCALAR || !n->plain)
        return n->type == YN_SCALAR ? perr(c, n->line, "expected %s, got a quoted string %s", noun,
                                           show(n, b, sizeof b))
                                    : expected(c, n, noun);
    bool neg, ovf;
    uint64_t mag;
    if (!parse_int_text(n->s, n->len, &neg, &mag, &ovf))
        return expected(c, n, noun);
    bool is_unsigned = f->kind == ODF_K_U8 || f->kind == ODF_K_U16 || f->kind == ODF_K_U32 ||
                       f->kind == ODF_K_U64 || f->kind == ODF_K_DURATION;
    if (is_unsigned && neg && mag != 0)
        return expected(c, n, noun);
    uint64_t umax = 0;
    int64_t smin = 0, smax = 0;
    switch (f->kind) {
    case ODF_K_U8: umax = UINT8_MAX; break;
    case ODF_K_U16: umax = UINT16_MAX; break;
    case ODF_K_U32: umax = UINT32_MAX; break;
    case ODF_K_U64:
    case ODF_K_DURATION: umax = UINT64_MAX; break;
    case ODF_K_I8: smin = INT8_MIN; smax = INT8_MAX; break;
    case ODF_K_I16: smin = INT16_MIN; smax = INT16_MAX; break;
    case ODF_K_I32: smin = INT32_MIN; smax = INT32_MAX; break;
    default: smin = INT64_MIN; smax = INT64_MAX; break;
    }
    if (is_unsigned) {
        if (ovf || mag > umax)
            return perr(c, n->line, "integer %s out of range (0..%" PRIu64 ")", show(n, b, sizeof b), umax);
        switch (f->kind) {
        case ODF_K_U8: *(uint8_t *)dst = (uint8_t)mag; break;
        case ODF_K_U16: *(uint16_t *)dst = (uint16_t)mag; break;
        case ODF_K_U32: *(uint32_t *)dst = (uint32_t)mag; break;
        default: *(uint64_t *)dst = mag; break;
        }
        return 0;
    }
    int64_t v;
    if (ovf)
        goto range;
    if (neg) {
        if (mag > (uint64_t)INT64_MAX + 1)
            goto range;
        v = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
    } else {
        if (mag > (uint64_t)INT64_MAX)
            goto range;
        v = (int64_t)mag;
    }
    if (v < smin || v > smax)
        goto range;
    switch (f->kind) {
    case ODF_K_I8: *(int8_t *)dst = (int8_t)v; break;
    case ODF_K_I16: *(int16_t *)dst = (int16_t)v; break;
    case ODF_K_I32: *(int32_t *)dst = (int32_t)v; break;
    default: *(int64_t *)dst = v; break;
    }
    return 0;
range:
    return perr(c, n->line, "integer %s out of range (%" PRId64 "..%" PRId64 ")", show(n, b, sizeof b), smin,
                smax);
}

static int scalar_text(pctx *c, const ynode *n, const char *what)
{
    if (n->type != YN_SCALAR)
        return expected(c, n, what);
    if (memchr(n->s, '\0', n->len))
        return perr(c, n->line, "string contains a NUL character");
    return 0;
}

static int parse_bytes(pctx *c, const odf_field_desc *f, const ynode *n, odf_bytes *dst)
{
    char b[64];
    int rc = scalar_text(c, n, f->fmt == ODF_FMT_MULTIHASH ? "a multihash" : f->fmt == ODF_FMT_DID ? "a DID" : "a string");
    if (rc < 0)
        return rc;
    silt_buf buf = SILT_BUF_INIT;
    switch (f->fmt) {
    case ODF_FMT_MULTIHASH:
        rc = silt_multihash_from_text(n->s, &buf);
        if (rc < 0) {
            silt_buf_free(&buf);
            if (rc == SILT_ENOMEM)
                return rc;
            return perr(c, n->line, "invalid multihash %s", show(n, b, sizeof b));
        }
        break;
    case ODF_FMT_DID: {
        uint8_t did[SILT_DID_LEN];
        if (n->len < 8 || memcmp(n->s, "did:odf:", 8))
            return perr(c, n->line, "invalid DID %s: expected 'did:odf:…'", show(n, b, sizeof b));
        rc = silt_did_from_text(n->s, did);
        if (rc < 0) {
            if (rc == SILT_ENOMEM)
                return rc;
            return perr(c, n->line, "invalid DID %s", show(n, b, sizeof b));
        }
        rc = silt_buf_append(&buf, did, sizeof did);
        break;
    }
    case ODF_FMT_UUID: {
        /* 8-4-4-4-12 hex */
        static const int groups[] = {8, 4, 4, 4, 12};
        const char *s = n->s;
        size_t pos = 0;
        uint8_t u[16];
        size_t k = 0;
        bool ok = n->len == 36;
        for (int g = 0; ok && g < 5; g++) {
            if (g) {
                if (s[pos] != '-') {
                    ok = false;
                    break;
                }
                pos++;
            }
            for (int j = 0; j < groups[g]; j += 2) {
                int hi = digit_val(s[pos]), lo = digit_val(s[pos + 1]);
                if (hi > 15 || lo > 15) {
                    ok = false;
                    break;
                }
                u[k++] = (uint8_t)(hi * 16 + lo);
                pos += 2;
            }
        }
        if (!ok)
            return perr(c, n->line, "invalid UUID %s", show(n, b, sizeof b));
        rc = silt_buf_append(&buf, u, sizeof u);
        break;
    }
    case ODF_FMT_BASE64:
        rc = silt_base64_decode(n->s, &buf);
        if (rc < 0) {
            silt_buf_free(&buf);
            if (rc == SILT_ENOMEM)
                return rc;
            return perr(c, n->line, "invalid base64 %s", show(n, b, sizeof b));
        }
        break;
    default:
        rc = silt_buf_append(&buf, n->s, n->len);
        break;
    }
    if (rc < 0) {
        silt_buf_free(&buf);
        return rc;
    }
    dst->data = silt_arena_memdup(c->a, buf.data ? buf.data : "", buf.len);
    dst->len = buf.len;
    silt_buf_free(&buf);
    return dst->data ? 0 : SILT_ENOMEM;
}

static int entry_cmp(const void *a, const void *b)
{
    /* entries are tables whose first field is the char *key at offset 0 of
     * the field desc; compared through a pair {key, ptr} */
    const char *const *ka = a, *const *kb = b;
    return strcmp(*ka, *kb);
}

/* ODF_F_MAP: YAML mapping {key: value} -> vector of Entry {key, value}. */
static int parse_map_vec(pctx *c, const odf_field_desc *f, const ynode *n, odf_vec *dst)
{
    const odf_table_desc *ed = f->table;
    if (n->type != YN_MAP)
        return expected(c, n, "a mapping");
    if (!ed || ed->nfields < 2 || ed->fields[0].kind != ODF_K_STRING)
        return perr(c, n->line, "internal: bad map entry descriptor");
    const odf_field_desc *vf = &ed->fields[1];
    size_t cnt = n->n / 2;
    struct pair {
        char *key;
        void *item;
    } *pairs = silt_arena_alloc(c->a, (cnt ? cnt : 1) * sizeof *pairs);
    if (!pairs)
        return SILT_ENOMEM;
    size_t i = 0;
    for (const ynode *k = n->first; k && k->next; k = k->next->next, i++) {
        const ynode *v = k->next;
        int rc = scalar_text(c, k, "a string key");
        if (rc < 0)
            return rc;
        for (size_t j = 0; j < i; j++)
            if (!strcmp(pairs[j].key, k->s)) {
                size_t old = path_push_key(c, k->s);
                rc = perr(c, k->line, "duplicate key '%.60s'", k->s);
                path_pop(c, old);
                return rc;
            }
        void *e = silt_arena_alloc(c->a, ed->size);
        char *key = silt_arena_strndup(c->a, k->s, k->len);
        if (!e || !key)
            return SILT_ENOMEM;
        *(char **)FIELD_PTR(e, ed->fields[0].offset) = key;
        size_t old = path_push_key(c, k->s);
        if (vf->kind == ODF_K_JSON) {
            rc = node_to_json_text(c, v, (char **)FIELD_PTR(e, vf->offset));
        } else if (vf->kind == ODF_K_TABLE) {
            rc = parse_table(c, vf->table, v, (void **)FIELD_PTR(e, vf->offset), false, 0);
        } else if (vf->kind == ODF_K_STRING) {
            rc = scalar_text(c, v, "a string");
            if (rc == 0) {
                char *s = silt_arena_strndup(c->a, v->s, v->len);
                rc = s ? 0 : SILT_ENOMEM;
                *(char **)FIELD_PTR(e, vf->offset) = s;
            }
        } else {
            rc = perr(c, v->line, "internal: unsupported map value kind");
        }
        path_pop(c, old);
        if (rc < 0)
            return rc;
        pairs[i].key = key;
        pairs[i].item = e;
    }
    qsort(pairs, cnt, sizeof *pairs, entry_cmp);
    dst->items = silt_arena_alloc(c->a, (cnt ? cnt : 1) * sizeof(void *));
    if (!dst->items)
        return SILT_ENOMEM;
    for (i = 0; i < cnt; i++)
        dst->items[i] = pairs[i].item;
    dst->n = cnt;
    dst->present = true;
    return 0;
}

/* Returns 0 = set, 1 = absent (null), < 0 error. */
static int parse_field(pctx *c, const odf_field_desc *f, const ynode *n, void *obj)
{
    void *dst = FIELD_PTR(obj, f->offset);
    int rc;
    if (node_is_null(n))
        return 1;
    switch (f->kind) {
    case ODF_K_BOOL: {
        int bv = n->type == YN_SCALAR && n->plain ? text_bool(n->s, n->len) : -1;
        if (bv < 0)
            return expected(c, n, "a boolean (true or false)");
        *(bool *)dst = bv == 1;
        break;
    }
    case ODF_K_I8:
    case ODF_K_U8:
    case ODF_K_I16:
    case ODF_K_U16:
    case ODF_K_I32:
    case ODF_K_U32:
    case ODF_K_I64:
    case ODF_K_U64:
    case ODF_K_DURATION:
        rc = parse_integer(c, f, n, dst);
        if (rc < 0)
            return rc;
        break;
    case ODF_K_ENUM: {
        const odf_enum_desc *e = f->enm;
        if (n->type != YN_SCALAR)
            return expected(c, n, "an enum value");
        size_t i;
        for (i = 0; e && i < e->nvalues; i++)
            if (e->names[i] && name_matches(e->names[i], n->s, n->len))
                break;
        if (!e || i == e->nvalues) {
            char b[64];
            return perr(c, n->line, "unknown value %s for %s", show(n, b, sizeof b), e ? e->name : "enum");
        }
        *(int32_t *)dst = (int32_t)i;
        break;
    }
    case ODF_K_STRING: {
        rc = scalar_text(c, n, "a string");
        if (rc < 0)
            return rc;
        char *s = silt_arena_strndup(c->a, n->s, n->len);
        if (!s)
            return SILT_ENOMEM;
        *(char **)dst = s;
        break;
    }
    case ODF_K_BYTES:
        rc = parse_bytes(c, f, n, (odf_bytes *)dst);
        if (rc < 0)
            return rc;
        break;
    case ODF_K_TIMESTAMP: {
        rc = scalar_text(c, n, "a timestamp");
        if (rc < 0)
            return rc;
        silt_time t;
        if (silt_time_parse(n->s, &t) < 0) {
            char b[64];
            return perr(c, n->line, "invalid timestamp %s (expected RFC 3339)", show(n, b, sizeof b));
        }
        odf_time *ot = dst;
        ot->sec = t.sec;
        ot->nsec = t.nsec;
        break;
    }
    case ODF_K_TABLE:
        rc = parse_table(c, f->table, n, (void **)dst, false, 0);
        if (rc < 0)
            return rc;
        break;
    case ODF_K_UNION:
        rc = parse_union(c, f->uni, n, (odf_union *)dst);
        if (rc < 0)
            return rc;
        break;
    case ODF_K_VEC_STRING: {
        odf_strvec *v = dst;
        if (n->type != YN_SEQ)
            return expected(c, n, "a sequence of strings");
        v->items = silt_arena_alloc(c->a, (n->n ? n->n : 1) * sizeof(char *));
        if (!v->items)
            return SILT_ENOMEM;
        size_t i = 0;
        for (const ynode *it = n->first; it; it = it->next, i++) {
            size_t old = path_push_index(c, i);
            rc = node_is_null(it) ? expected(c, it, "a string") : scalar_text(c, it, "a string");
            path_pop(c, old);
            if (rc < 0)
                return rc;
            v->items[i] = silt_arena_strndup(c->a, it->s, it->len);
            if (!v->items[i])
                return SILT_ENOMEM;
        }
        v->n = i;
        v->present = true;
        break;
    }
    case ODF_K_VEC_TABLE: {
        if (f->flags & ODF_F_MAP) {
            rc = parse_map_vec(c, f, n, (odf_vec *)dst);
            if (rc < 0)
                return rc;
            break;
        }
        odf_vec *v = dst;
        if (n->type != YN_SEQ)
            return expected(c, n, "a sequence");
        v->items = silt_arena_alloc(c->a, (n->n ? n->n : 1) * sizeof(void *));
        if (!v->items)
            return SILT_ENOMEM;
        size_t i = 0;
        for (const ynode *it = n->first; it; it = it->next, i++) {
            size_t old = path_push_index(c, i);
            rc = node_is_null(it) ? expected(c, it, "a mapping") : parse_table(c, f->table, it, &v->items[i], false, 0);
            path_pop(c, old);
            if (rc < 0)
                return rc;
        }
        v->n = i;
        v->present = true;
        break;
    }
    case ODF_K_VEC_UNION: {
        odf_uvec *v = dst;
        if (n->type != YN_SEQ)
            return expected(c, n, "a sequence");
        v->items = silt_arena_alloc(c->a, (n->n ? n->n : 1) * sizeof(odf_union));
        if (!v->items)
            return SILT_ENOMEM;
        size_t i = 0;
        for (const ynode *it = n->first; it; it = it->next, i++) {
            size_t old = path_push_index(c, i);
            rc = node_is_null(it) ? expected(c, it, "a mapping") : parse_union(c, f->uni, it, &v->items[i]);
            path_pop(c, old);
            if (rc < 0)
                return rc;
        }
        v->n = i;
        v->present = true;
        break;
    }
    case ODF_K_JSON:
        rc = node_to_json_text(c, n, (char **)dst);
        if (rc < 0)
            return rc;
        break;
    default:
        return perr(c, n->line, "internal: unsupported field kind %d", f->kind);
    }
    if ((f->kind == ODF_K_TIMESTAMP || f->kind == ODF_K_DURATION ||
         (is_scalar_kind(f->kind) && (f->flags & ODF_F_OPTIONAL))))
        *(bool *)FIELD_PTR(obj, f->has_offset) = true;
    return 0;
}

static int check_required(pctx *c, const odf_table_desc *d, const bool *seen, int line)
{
    for (size_t i = 0; i < d->nfields; i++) {
        const odf_field_desc *f = &d->fields[i];
        if (!seen[i] && field_required(f)) {
            size_t old = path_push(c, f->name);
            int rc = perr(c, line, "missing required field");
            path_pop(c, old);
            return rc;
        }
    }
    return 0;
}

/* Parses mapping `n` into a new struct of type `d`. For union variants the
 * `kind` key is skipped (skip_kind); n == NULL means "no fields" (short
 * form of a union), which still checks required fields. */
static int parse_table(pctx *c, const odf_table_desc *d, const ynode *n, void **out, bool skip_kind,
                       int line)
{
    *out = NULL;
    if (!d)
        return silt_err(SILT_EINTERNAL, "missing table descriptor");
    void *obj = silt_arena_alloc(c->a, d->size ? d->size : 1);
    if (!obj)
        return SILT_ENOMEM;
    if (n && table_is_transparent(d)) {
        int rc = parse_field(c, &d->fields[0], n, obj);
        if (rc < 0)
            return rc;
        *out = obj;
        return 0;
    }
    if (n && n->type != YN_MAP)
        return expected(c, n, "a mapping");
    bool *seen = silt_arena_alloc(c->a, d->nfields ? d->nfields : 1);    /* value set */
    bool *keyseen = silt_arena_alloc(c->a, d->nfields ? d->nfields : 1); /* key present */
    if (!seen || !keyseen)
        return SILT_ENOMEM;
    if (n)
        line = n->line;
    bool kind_seen = false;
    for (const ynode *k = n ? n->first : NULL; k && k->next; k = k->next->next) {
        const ynode *v = k->next;
        if (k->type != YN_SCALAR)
            return perr(c, k->line, "mapping keys must be strings");
        if (skip_kind && k->len == 4 && !memcmp(k->s, "kind", 4)) {
            if (kind_seen) {
                size_t old = path_push(c, "kind");
                int rc = perr(c, k->line, "duplicate field 'kind'");
                path_pop(c, old);
                return rc;
            }
            kind_seen = true;
            continue;
        }
        size_t i;
        for (i = 0; i < d->nfields; i++)
            if (strlen(d->fields[i].name) == k->len && !memcmp(d->fields[i].name, k->s, k->len))
                break;
        char kb[64];
        if (i == d->nfields) {
            size_t old = path_push(c, k->s);
            int rc = perr(c, k->line, "unknown field %s in %s", show(k, kb, sizeof kb), d->name);
            path_pop(c, old);
            return rc;
        }
        const odf_field_desc *f = &d->fields[i];
        size_t old = path_push(c, f->name);
        if (keyseen[i]) {
            int rc = perr(c, k->line, "duplicate field '%s'", f->name);
            path_pop(c, old);
            return rc;
        }
        keyseen[i] = true;
        int rc = parse_field(c, f, v, obj);
        path_pop(c, old);
        if (rc < 0)
            return rc;
        seen[i] = rc == 0; /* an explicit null leaves the field absent */
    }
    int rc = check_required(c, d, seen, line);
    if (rc < 0)
        return rc;
    *out = obj;
    return 0;
}

static int find_kind(const odf_union_desc *u, const char *s, size_t len)
{
    for (size_t i = 0; i < u->nvariants; i++)
        if (u->kinds[i] && name_matches(u->kinds[i], s, len))
            return (int)i;
    return -1;
}

static int parse_union(pctx *c, const odf_union_desc *u, const ynode *n, odf_union *out)
{
    char b[64];
    out->type = 0;
    out->value = NULL;
    if (!u)
        return silt_err(SILT_EINTERNAL, "missing union descriptor");
    const ynode *kn = NULL;
    if (n->type == YN_SCALAR) {
        kn = n; /* short form: `type: Timestamp` */
    } else if (n->type == YN_MAP) {
        for (const ynode *k = n->first; k && k->next; k = k->next->next)
            if (k->type == YN_SCALAR && k->len == 4 && !memcmp(k->s, "kind", 4)) {
                kn = k->next;
                break;
            }
        if (!kn)
            return perr(c, n->line, "missing 'kind' for %s", u->name);
        if (kn->type != YN_SCALAR) {
            size_t old = path_push(c, "kind");
            int rc = expected(c, kn, "a kind name");
            path_pop(c, old);
            return rc;
        }
    } else {
        return expected(c, n, "a mapping");
    }
    int idx = find_kind(u, kn->s, kn->len);
    if (idx < 0) {
        size_t old = kn == n ? c->plen : path_push(c, "kind");
        int rc = perr(c, kn->line, "unknown kind %s for %s", show(kn, b, sizeof b), u->name);
        path_pop(c, old);
        return rc;
    }
    void *v;
    int rc = parse_table(c, u->variants[idx], kn == n ? NULL : n, &v, true, n->line);
    if (rc < 0)
        return rc;
    out->type = (uint8_t)(idx + 1);
    out->value = v;
    return 0;
}

static const char *fname(const char *filename)
{
    return filename ? filename : "<input>";
}

static void pctx_init(pctx *c, silt_arena *a, const char *filename, int line)
{
    memset(c, 0, sizeof *c);
    c->a = a;
    c->file = fname(filename);
    c->line0 = line > 0 ? line : 1;
    c->guard.file = c->file;
    c->guard.line0 = c->line0;
}

int odf_yaml_parse(silt_arena *a, const char *text, size_t len, const char *filename,
                   const odf_table_desc *d, void **out)
{
    return odf_yaml_parse_at(a, text, len, filename, 1, d, out);
}

int odf_yaml_parse_at(silt_arena *a, const char *text, size_t len, const char *filename, int line,
                      const odf_table_desc *d, void **out)
{
    if (!a || !text || !d || !out)
        return silt_err(SILT_EINVAL, "odf_yaml_parse: bad argument");
    *out = NULL;
    pctx c;
    pctx_init(&c, a, filename, line);
    ynode *root;
    int rc = load_document(&c, text, len, &root);
    if (rc < 0)
        return rc;
    if (node_is_null(root))
        return perr(&c, root->line, "expected a mapping, got an empty document");
    return parse_table(&c, d, root, out, false, 0);
}

int odf_yaml_parse_event(silt_arena *a, const char *text, size_t len, const char *filename,
                         odf_union *out)
{
    return odf_yaml_parse_event_at(a, text, len, filename, 1, out);
}

int odf_yaml_parse_event_at(silt_arena *a, const char *text, size_t len, const char *filename,
                            int line, odf_union *out)
{
    if (!a || !text || !out)
        return silt_err(SILT_EINVAL, "odf_yaml_parse_event: bad argument");
    out->type = 0;
    out->value = NULL;
    const odf_union_desc *u = odf_find_union("MetadataEvent");
    if (!u)
        return silt_err(SILT_EINTERNAL, "MetadataEvent descriptor not found");
    pctx c;
    pctx_init(&c, a, filename, line);
    ynode *root;
    int rc = load_document(&c, text, len, &root);
    if (rc < 0)
        return rc;
    if (root->type != YN_MAP)
        return expected(&c, root, "a mapping");
    return parse_union(&c, u, root, out);
}

int odf_yaml_parse_manifest(silt_arena *a, const char *text, size_t len, const char *filename,
                            const char *expected_kind, int *version_out, void **out)
{
    return odf_yaml_parse_manifest_at(a, text, len, filename, 1, expected_kind, version_out, out);
}

int odf_yaml_parse_manifest_at(silt_arena *a, const char *text, size_t len, const char *filename,
                               int line, const char *expected_kind, int *version_out, void **out)
{
    if (!a || !text || !out)
        return silt_err(SILT_EINVAL, "odf_yaml_parse_manifest: bad argument");
    *out = NULL;
    pctx c;
    pctx_init(&c, a, filename, line);
    ynode *root;
    int rc = load_document(&c, text, len, &root);
    if (rc < 0)
        return rc;
    if (root->type != YN_MAP)
        return expected(&c, root, "a manifest mapping");
    const ynode *kind = NULL, *version = NULL, *content = NULL;
    for (const ynode *k = root->first; k && k->next; k = k->next->next) {
        const ynode **slot = NULL;
        if (k->type == YN_SCALAR) {
            if (!strcmp(k->s, "kind"))
                slot = &kind;
            else if (!strcmp(k->s, "version"))
                slot = &version;
            else if (!strcmp(k->s, "content"))
                slot = &content;
        }
        char b[64];
        if (!slot)
            return perr(&c, k->line, "unknown manifest field %s", show(k, b, sizeof b));
        if (*slot)
            return perr(&c, k->line, "duplicate manifest field '%s'", k->s);
        *slot = k->next;
    }
    if (!kind)
        return perr(&c, root->line, "kind: missing required field");
    if (!version)
        return perr(&c, root->line, "version: missing required field");
    if (!content)
        return perr(&c, root->line, "content: missing required field");
    const odf_table_desc *d = NULL;
    int vmin = 0, vmax = 0;
    const char *kname = NULL;
    char b[64];
    if (kind->type == YN_SCALAR && !strcmp(kind->s, "MetadataBlock")) {
        d = odf_find_table("MetadataBlock");
        vmin = 2;
        vmax = 3;
        kname = "MetadataBlock";
    } else if (kind->type == YN_SCALAR && !strcmp(kind->s, "DatasetSnapshot")) {
        d = odf_find_table("DatasetSnapshot");
        vmin = 1;
        vmax = 1;
        kname = "DatasetSnapshot";
    } else {
        return perr(&c, kind->line, "kind: unsupported manifest kind %s", show(kind, b, sizeof b));
    }
    if (!d)
        return silt_err(SILT_EINTERNAL, "%s descriptor not found", kname);
    if (expected_kind && strcmp(expected_kind, kname))
        return perr(&c, kind->line, "kind: expected a %s manifest, got '%s'", expected_kind, kname);
    bool neg, ovf;
    uint64_t mag;
    if (version->type != YN_SCALAR || !version->plain ||
        !parse_int_text(version->s, version->len, &neg, &mag, &ovf))
        return perr(&c, version->line, "version: expected an integer, got %s", show(version, b, sizeof b));
    if (neg || ovf || mag < (uint64_t)vmin || mag > (uint64_t)vmax) {
        if (vmin == vmax)
            return perr(&c, version->line, "version: unsupported %s version %s (supported: %d)", kname,
                        show(version, b, sizeof b), vmin);
        return perr(&c, version->line, "version: unsupported %s version %s (supported: %d..%d)", kname,
                    show(version, b, sizeof b), vmin, vmax);
    }
    if (version_out)
        *version_out = (int)mag;
    path_push(&c, "content");
    if (node_is_null(content))
        return perr(&c, content->line, "expected a mapping, got null");
    return parse_table(&c, d, content, out, false, 0);
}

/* ======================================================================
 * Emitting
 * ====================================================================== */

typedef struct ectx {
    yaml_emitter_t em;
    int depth;
} ectx;

#define EMIT_MAX_DEPTH (ODF_YAML_MAX_DEPTH * 2)

static int em_fail(ectx *e)
{
    if (e->em.error == YAML_MEMORY_ERROR)
        return silt_err(SILT_ENOMEM, "out of memory (YAML emitter)");
    return silt_err(SILT_EINVAL, "YAML emitter: %s", e->em.problem ? e->em.problem : "error");
}

static int em_event(ectx *e, yaml_event_t *ev)
{
    if (!yaml_emitter_emit(&e->em, ev))
        return em_fail(e);
    return 0;
}

static int em_scalar_style(ectx *e, const char *s, size_t len, yaml_scalar_style_t style)
{
    yaml_event_t ev;
    if (len > INT32_MAX)
        return silt_err(SILT_EINVAL, "string too long for YAML");
    if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)len, 1, 1, style))
        return silt_err(SILT_EINVAL, "cannot emit string (invalid UTF-8?)");
    return em_event(e, &ev);
}

/* serde_yaml's choice of style for a string. */
static int em_str(ectx *e, const char *s, size_t len)
{
    yaml_scalar_style_t style = YAML_ANY_SCALAR_STYLE;
    if (memchr(s, '\n', len))
        style = YAML_LITERAL_SCALAR_STYLE;
    else if (text_needs_quotes(s, len))
        style = YAML_SINGLE_QUOTED_SCALAR_STYLE;
    return em_scalar_style(e, s, len, style);
}

static int em_cstr(ectx *e, const char *s)
{
    return em_str(e, s, strlen(s));
}

static int em_plain(ectx *e, const char *s)
{
    return em_scalar_style(e, s, strlen(s), YAML_PLAIN_SCALAR_STYLE);
}

static int em_map_start(ectx *e)
{
    yaml_event_t ev;
    if (!yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_ANY_MAPPING_STYLE))
        return silt_err(SILT_ENOMEM, "out of memory");
    return em_event(e, &ev);
}

static int em_map_end(ectx *e)
{
    yaml_event_t ev;
    if (!yaml_mapping_end_event_initialize(&ev))
        return silt_err(SILT_ENOMEM, "out of memory");
    return em_event(e, &ev);
}

static int em_seq_start(ectx *e)
{
    yaml_event_t ev;
    if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_ANY_SEQUENCE_STYLE))
        return silt_err(SILT_ENOMEM, "out of memory");
    return em_event(e, &ev);
}

static int em_seq_end(ectx *e)
{
    yaml_event_t ev;
    if (!yaml_sequence_end_event_initialize(&ev))
        return silt_err(SILT_ENOMEM, "out of memory");
    return em_event(e, &ev);
}

static int key_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int em_json(ectx *e, json_t *v)
{
    int rc = 0;
    char num[64];
    if (++e->depth > EMIT_MAX_DEPTH) {
        e->depth--;
        return silt_err(SILT_EINVAL, "JSON value nested too deeply");
    }
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        size_t n = json_object_size(v);
        const char **keys = malloc((n ? n : 1) * sizeof *keys);
        if (!keys) {
            rc = silt_err(SILT_ENOMEM, "out of memory");
            break;
        }
        size_t i = 0;
        const char *k;
        json_t *val;
        json_object_foreach(v, k, val) keys[i++] = k;
        qsort(keys, i, sizeof *keys, key_cmp);
        rc = em_map_start(e);
        for (size_t j = 0; rc == 0 && j < i; j++) {
            rc = em_cstr(e, keys[j]);
            if (rc == 0)
                rc = em_json(e, json_object_get(v, keys[j]));
        }
        if (rc == 0)
            rc = em_map_end(e);
        free(keys);
        break;
    }
    case JSON_ARRAY: {
        rc = em_seq_start(e);
        size_t i;
        json_t *val;
        json_array_foreach(v, i, val)
        {
            if (rc == 0)
                rc = em_json(e, val);
        }
        if (rc == 0)
            rc = em_seq_end(e);
        break;
    }
    case JSON_STRING:
        rc = em_str(e, json_string_value(v), json_string_length(v));
        break;
    case JSON_INTEGER:
        snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        rc = em_plain(e, num);
        break;
    case JSON_REAL:
        odf_json_format_double(json_real_value(v), num);
        rc = em_plain(e, num);
        break;
    case JSON_TRUE:
        rc = em_plain(e, "true");
        break;
    case JSON_FALSE:
        rc = em_plain(e, "false");
        break;
    default:
        rc = em_plain(e, "null");
        break;
    }
    e->depth--;
    return rc;
}

static int em_json_text(ectx *e, const char *text)
{
    json_error_t jerr;
    json_t *v = json_loads(text, JSON_DECODE_ANY, &jerr);
    if (!v)
        return silt_err(SILT_EINVAL, "invalid JSON value: %s", jerr.text);
    int rc = em_json(e, v);
    json_decref(v);
    return rc;
}

static int em_table(ectx *e, const odf_table_desc *d, const void *obj, const char *kind);
static int em_union(ectx *e, const odf_union_desc *u, const odf_union *v);

static bool field_present(const odf_field_desc *f, const void *obj)
{
    const void *p = CFIELD_PTR(obj, f->offset);
    switch (f->kind) {
    case ODF_K_STRING:
    case ODF_K_JSON:
        return *(char *const *)p != NULL;
    case ODF_K_BYTES:
        return ((const odf_bytes *)p)->data != NULL;
    case ODF_K_TIMESTAMP:
    case ODF_K_DURATION:
        return *(const bool *)CFIELD_PTR(obj, f->has_offset);
    case ODF_K_TABLE:
        return *(void *const *)p != NULL;
    case ODF_K_UNION:
        return ((const odf_union *)p)->type != 0;
    case ODF_K_VEC_STRING:
        return ((const odf_strvec *)p)->present;
    case ODF_K_VEC_TABLE:
        return ((const odf_vec *)p)->present;
    case ODF_K_VEC_UNION:
        return ((const odf_uvec *)p)->present;
    default:
        if (f->flags & ODF_F_OPTIONAL)
            return *(const bool *)CFIELD_PTR(obj, f->has_offset);
        return true;
    }
}

static int em_bytes(ectx *e, const odf_field_desc *f, const odf_bytes *b)
{
    int rc;
    switch (f->fmt) {
    case ODF_FMT_MULTIHASH: {
        char *txt = malloc(2 * b->len + 2);
        if (!txt)
            return silt_err(SILT_ENOMEM, "out of memory");
        silt_multihash_to_text(b->data, b->len, txt);
        rc = em_cstr(e, txt);
        free(txt);
        return rc;
    }
    case ODF_FMT_DID: {
        if (b->len != SILT_DID_LEN)
            return silt_err(SILT_EINVAL, "%s: DID must be %d bytes, got %zu", f->name, SILT_DID_LEN, b->len);
        char txt[SILT_DID_TEXT_LEN + 1];
        silt_did_to_text(b->data, txt);
        return em_cstr(e, txt);
    }
    case ODF_FMT_UUID: {
        if (b->len != 16)
            return silt_err(SILT_EINVAL, "%s: UUID must be 16 bytes, got %zu", f->name, b->len);
        char txt[40];
        const uint8_t *u = b->data;
        snprintf(txt, sizeof txt,
                 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2],
                 u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
        return em_cstr(e, txt);
    }
    case ODF_FMT_BASE64: {
        silt_buf out = SILT_BUF_INIT;
        rc = silt_base64_encode(b->data, b->len, &out);
        if (rc == 0)
            rc = em_str(e, out.data ? out.data : "", out.len);
        silt_buf_free(&out);
        return rc;
    }
    default:
        return em_str(e, (const char *)b->data, b->len);
    }
}

static int em_map_vec(ectx *e, const odf_field_desc *f, const odf_vec *v)
{
    const odf_table_desc *ed = f->table;
    if (!ed || ed->nfields < 2)
        return silt_err(SILT_EINTERNAL, "bad map entry descriptor");
    const odf_field_desc *vf = &ed->fields[1];
    int rc = em_map_start(e);
    for (size_t i = 0; rc == 0 && i < v->n; i++) {
        const void *it = v->items[i];
        if (!it)
            return silt_err(SILT_EINVAL, "%s: NULL map entry", f->name);
        const char *key = *(char *const *)CFIELD_PTR(it, ed->fields[0].offset);
        rc = em_cstr(e, key ? key : "");
        if (rc < 0)
            break;
        const void *vp = CFIELD_PTR(it, vf->offset);
        if (vf->kind == ODF_K_JSON) {
            const char *t = *(char *const *)vp;
            rc = t ? em_json_text(e, t) : em_plain(e, "null");
        } else if (vf->kind == ODF_K_TABLE) {
            const void *t = *(void *const *)vp;
            rc = t ? em_table(e, vf->table, t, NULL) : em_plain(e, "null");
        } else if (vf->kind == ODF_K_STRING) {
            const char *t = *(char *const *)vp;
            rc = t ? em_cstr(e, t) : em_plain(e, "null");
        } else {
            rc = silt_err(SILT_EINTERNAL, "unsupported map value kind");
        }
    }
    if (rc == 0)
        rc = em_map_end(e);
    return rc;
}

static int em_field_value(ectx *e, const odf_field_desc *f, const void *obj)
{
    const void *p = CFIELD_PTR(obj, f->offset);
    char num[64];
    switch (f->kind) {
    case ODF_K_BOOL:
        return em_plain(e, *(const bool *)p ? "true" : "false");
    case ODF_K_I8:
        snprintf(num, sizeof num, "%d", (int)*(const int8_t *)p);
        return em_plain(e, num);
    case ODF_K_U8:
        snprintf(num, sizeof num, "%u", (unsigned)*(const uint8_t *)p);
        return em_plain(e, num);
    case ODF_K_I16:
        snprintf(num, sizeof num, "%d", (int)*(const int16_t *)p);
        return em_plain(e, num);
    case ODF_K_U16:
        snprintf(num, sizeof num, "%u", (unsigned)*(const uint16_t *)p);
        return em_plain(e, num);
    case ODF_K_I32:
        snprintf(num, sizeof num, "%" PRId32, *(const int32_t *)p);
        return em_plain(e, num);
    case ODF_K_U32:
        snprintf(num, sizeof num, "%" PRIu32, *(const uint32_t *)p);
        return em_plain(e, num);
    case ODF_K_I64:
        snprintf(num, sizeof num, "%" PRId64, *(const int64_t *)p);
        return em_plain(e, num);
    case ODF_K_U64:
    case ODF_K_DURATION:
        snprintf(num, sizeof num, "%" PRIu64, *(const uint64_t *)p);
        return em_plain(e, num);
    case ODF_K_ENUM: {
        int32_t v = *(const int32_t *)p;
        if (!f->enm || v < 0 || (size_t)v >= f->enm->nvalues || !f->enm->names[v])
            return silt_err(SILT_EINVAL, "%s: invalid %s value %" PRId32, f->name,
                            f->enm ? f->enm->name : "enum", v);
        return em_cstr(e, f->enm->names[v]);
    }
    case ODF_K_STRING:
        return em_cstr(e, *(char *const *)p);
    case ODF_K_BYTES:
        return em_bytes(e, f, (const odf_bytes *)p);
    case ODF_K_TIMESTAMP: {
        const odf_time *t = p;
        silt_time st = {t->sec, t->nsec};
        char txt[64];
        silt_time_format(st, txt);
        return em_cstr(e, txt);
    }
    case ODF_K_TABLE:
        return em_table(e, f->table, *(void *const *)p, NULL);
    case ODF_K_UNION:
        return em_union(e, f->uni, (const odf_union *)p);
    case ODF_K_VEC_STRING: {
        const odf_strvec *v = p;
        int rc = em_seq_start(e);
        for (size_t i = 0; rc == 0 && i < v->n; i++)
            rc = v->items[i] ? em_cstr(e, v->items[i]) : silt_err(SILT_EINVAL, "%s: NULL string", f->name);
        return rc ? rc : em_seq_end(e);
    }
    case ODF_K_VEC_TABLE: {
        const odf_vec *v = p;
        if (f->flags & ODF_F_MAP)
            return em_map_vec(e, f, v);
        int rc = em_seq_start(e);
        for (size_t i = 0; rc == 0 && i < v->n; i++)
            rc = v->items[i] ? em_table(e, f->table, v->items[i], NULL)
                             : silt_err(SILT_EINVAL, "%s: NULL item", f->name);
        return rc ? rc : em_seq_end(e);
    }
    case ODF_K_VEC_UNION: {
        const odf_uvec *v = p;
        int rc = em_seq_start(e);
        for (size_t i = 0; rc == 0 && i < v->n; i++)
            rc = em_union(e, f->uni, &v->items[i]);
        return rc ? rc : em_seq_end(e);
    }
    case ODF_K_JSON:
        return em_json_text(e, *(char *const *)p);
    default:
        return silt_err(SILT_EINTERNAL, "unsupported field kind %d", f->kind);
    }
}

static int em_table(ectx *e, const odf_table_desc *d, const void *obj, const char *kind)
{
    int rc;
    if (!d || !obj)
        return silt_err(SILT_EINVAL, "cannot emit a NULL table");
    if (++e->depth > EMIT_MAX_DEPTH) {
        e->depth--;
        return silt_err(SILT_EINVAL, "%s nested too deeply", d->name);
    }
    if (!kind && table_is_transparent(d)) {
        const odf_field_desc *f = &d->fields[0];
        if (field_present(f, obj))
            rc = em_field_value(e, f, obj);
        else if ((rc = em_map_start(e)) == 0)
            rc = em_map_end(e);
        e->depth--;
        return rc;
    }
    rc = em_map_start(e);
    if (rc == 0 && kind) {
        rc = em_cstr(e, "kind");
        if (rc == 0)
            rc = em_cstr(e, kind);
    }
    for (size_t i = 0; rc == 0 && i < d->nfields; i++) {
        const odf_field_desc *f = &d->fields[i];
        if (!field_present(f, obj))
            continue;
        rc = em_cstr(e, f->name);
        if (rc == 0)
            rc = em_field_value(e, f, obj);
    }
    if (rc == 0)
        rc = em_map_end(e);
    e->depth--;
    return rc;
}

static int em_union(ectx *e, const odf_union_desc *u, const odf_union *v)
{
    if (!u || v->type == 0 || v->type > u->nvariants || !v->value)
        return silt_err(SILT_EINVAL, "invalid %s union value (type %u)", u ? u->name : "?", v->type);
    return em_table(e, u->variants[v->type - 1], v->value, u->kinds[v->type - 1]);
}

static int write_handler(void *data, unsigned char *buffer, size_t size)
{
    return silt_buf_append((silt_buf *)data, buffer, size) == 0;
}

static int em_begin(ectx *e, silt_buf *tmp)
{
    memset(e, 0, sizeof *e);
    if (!yaml_emitter_initialize(&e->em))
        return silt_err(SILT_ENOMEM, "out of memory (YAML emitter)");
    yaml_emitter_set_unicode(&e->em, 1);
    yaml_emitter_set_width(&e->em, -1);
    yaml_emitter_set_indent(&e->em, 2);
    yaml_emitter_set_output(&e->em, write_handler, tmp);
    yaml_event_t ev;
    if (!yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING))
        return silt_err(SILT_ENOMEM, "out of memory");
    int rc = em_event(e, &ev);
    if (rc < 0)
        return rc;
    if (!yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1))
        return silt_err(SILT_ENOMEM, "out of memory");
    return em_event(e, &ev);
}

static int em_end(ectx *e)
{
    yaml_event_t ev;
    if (!yaml_document_end_event_initialize(&ev, 1))
        return silt_err(SILT_ENOMEM, "out of memory");
    int rc = em_event(e, &ev);
    if (rc < 0)
        return rc;
    if (!yaml_stream_end_event_initialize(&ev))
        return silt_err(SILT_ENOMEM, "out of memory");
    rc = em_event(e, &ev);
    if (rc < 0)
        return rc;
    if (!yaml_emitter_flush(&e->em))
        return em_fail(e);
    return 0;
}

/* Appends `src` to `out`, prefixing every non-empty line with `indent`
 * spaces. */
static int append_indented(silt_buf *out, const silt_buf *src, int indent)
{
    if (indent <= 0)
        return silt_buf_append(out, src->data ? src->data : "", src->len);
    size_t i = 0;
    while (i < src->len) {
        const char *nl = memchr(src->data + i, '\n', src->len - i);
        size_t end = nl ? (size_t)(nl - src->data) + 1 : src->len;
        if (end - i > 1 || src->data[i] != '\n') {
            for (int k = 0; k < indent; k++)
                if (silt_buf_putc(out, ' ') < 0)
                    return SILT_ENOMEM;
        }
        if (silt_buf_append(out, src->data + i, end - i) < 0)
            return SILT_ENOMEM;
        i = end;
    }
    return 0;
}

int odf_yaml_emit(silt_buf *out, const odf_table_desc *d, const void *obj, int indent)
{
    if (!out || !d || !obj)
        return silt_err(SILT_EINVAL, "odf_yaml_emit: bad argument");
    silt_buf tmp = SILT_BUF_INIT;
    ectx e;
    int rc = em_begin(&e, &tmp);
    if (rc == 0)
        rc = em_table(&e, d, obj, NULL);
    if (rc == 0)
        rc = em_end(&e);
    yaml_emitter_delete(&e.em);
    if (rc == 0)
        rc = append_indented(out, &tmp, indent);
    silt_buf_free(&tmp);
    return rc;
}

int odf_yaml_emit_union(silt_buf *out, const odf_union_desc *u, const odf_union *v, int indent)
{
    if (!out || !u || !v)
        return silt_err(SILT_EINVAL, "odf_yaml_emit_union: bad argument");
    silt_buf tmp = SILT_BUF_INIT;
    ectx e;
    int rc = em_begin(&e, &tmp);
    if (rc == 0)
        rc = em_union(&e, u, v);
    if (rc == 0)
        rc = em_end(&e);
    yaml_emitter_delete(&e.em);
    if (rc == 0)
        rc = append_indented(out, &tmp, indent);
    silt_buf_free(&tmp);
    return rc;
}

int odf_yaml_emit_manifest(silt_buf *out, const char *kind, int version, const odf_table_desc *d,
                           const void *obj)
{
    if (!out || !kind || !d || !obj)
        return silt_err(SILT_EINVAL, "odf_yaml_emit_manifest: bad argument");
    silt_buf tmp = SILT_BUF_INIT;
    ectx e;
    char num[32];
    snprintf(num, sizeof num, "%d", version);
    int rc = em_begin(&e, &tmp);
    if (rc == 0)
        rc = em_map_start(&e);
    if (rc == 0)
        rc = em_cstr(&e, "kind");
    if (rc == 0)
        rc = em_cstr(&e, kind);
    if (rc == 0)
        rc = em_cstr(&e, "version");
    if (rc == 0)
        rc = em_plain(&e, num);
    if (rc == 0)
        rc = em_cstr(&e, "content");
    if (rc == 0)
        rc = em_table(&e, d, obj, NULL);
    if (rc == 0)
        rc = em_map_end(&e);
    if (rc == 0)
        rc = em_end(&e);
    yaml_emitter_delete(&e.em);
    if (rc == 0)
        rc = silt_buf_append(out, tmp.data ? tmp.data : "", tmp.len);
    silt_buf_free(&tmp);
    return rc;
}
