/* evm_abi.c — Solidity event signature parser and ABI decoder (evm_abi.h).
 *
 * Invariants: the parser never reads past the NUL of its input and keeps
 * every allocation in the caller's arena; the decoder checks every offset
 * and length against the data before reading (sizes are computed with
 * overflow checks), bounds recursion by SILT_EVM_MAX_DEPTH and the output of
 * one log by a multiple of its input (no ABI "zip bomb"), and leaves `out`
 * as it was on error.
 */
#include "ingest/evm_abi.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/error.h"
#include "util/hash.h"
#include "util/multiformats.h"

#define MAX_STATIC_LEN 65536 /* of a fixed array T[k] */
#define MAX_PARAMS 256

/* ---- signature parser ------------------------------------------------------- */

typedef struct parser {
    const char *s, *p;
    silt_arena *a;
    int depth;
} parser;

static int perr(parser *ps, const char *what)
{
    return silt_err(SILT_EINVAL, "signature: %s at position %zu", what, (size_t)(ps->p - ps->s) + 1);
}

static void skip_ws(parser *ps)
{
    while (*ps->p && isspace((unsigned char)*ps->p))
        ps->p++;
}

/* After an item of a parenthesised list: a ',' followed by another item,
 * or the closing ')' (not consumed). */
static int list_sep(parser *ps)
{
    skip_ws(ps);
    if (*ps->p == ',') {
        ps->p++;
        skip_ws(ps);
        return *ps->p == ')' ? perr(ps, "expected a type") : 0;
    }
    if (*ps->p != ')')
        return perr(ps, *ps->p ? "expected ',' or ')'" : "missing ')'");
    return 0;
}

static bool ident_start(char c) { return isalpha((unsigned char)c) || c == '_' || c == '$'; }
static bool ident_char(char c) { return isalnum((unsigned char)c) || c == '_' || c == '$'; }

/* An identifier at p (after whitespace); its length, 0 when none. */
static size_t peek_ident(parser *ps)
{
    skip_ws(ps);
    size_t n = 0;
    if (!ident_start(ps->p[0]))
        return 0;
    while (ident_char(ps->p[n]))
        n++;
    return n;
}

static bool word_is(const char *p, size_t n, const char *w) { return strlen(w) == n && memcmp(p, w, n) == 0; }

/* "uint256" etc: N after `prefix`, 0 without digits, -1 if invalid. */
static long suffix_num(const char *p, size_t n, size_t plen)
{
    if (n == plen)
        return 0;
    long v = 0;
    for (size_t i = plen; i < n; i++) {
        if (!isdigit((unsigned char)p[i]) || v > 100000 || (i == plen && p[i] == '0'))
            return -1;
        v = v * 10 + (p[i] - '0');
    }
    return v;
}

static silt_evm_type *type_new(parser *ps, silt_evm_kind k)
{
    silt_evm_type *t = silt_arena_alloc(ps->a, sizeof *t);
    if (t)
        t->kind = k;
    return t;
}

static int parse_type(parser *ps, silt_evm_type **out);

/* Components "(T a, U b)" of a tuple; p at '('. */
static int parse_tuple(parser *ps, silt_evm_type **out)
{
    if (++ps->depth > SILT_EVM_MAX_DEPTH)
        return perr(ps, "types nested too deeply");
    ps->p++; /* '(' */
    silt_evm_type *t = type_new(ps, SILT_EVM_TUPLE);
    silt_evm_type **comps = silt_arena_alloc(ps->a, MAX_PARAMS * sizeof *comps);
    char **names = silt_arena_alloc(ps->a, MAX_PARAMS * sizeof *names);
    if (!t || !comps || !names)
        return SILT_ENOMEM;
    skip_ws(ps);
    while (*ps->p != ')') {
        if (t->ncomps == MAX_PARAMS)
            return perr(ps, "too many tuple components");
        int rc = parse_type(ps, &comps[t->ncomps]);
        if (rc)
            return rc;
        size_t n = peek_ident(ps);
        names[t->ncomps] = n ? silt_arena_strndup(ps->a, ps->p, n) : silt_arena_printf(ps->a, "_%zu", t->ncomps);
        if (!names[t->ncomps])
            return SILT_ENOMEM;
        ps->p += n;
        t->ncomps++;
        if ((rc = list_sep(ps)) != 0)
            return rc;
    }
    ps->p++;
    if (t->ncomps == 0)
        return perr(ps, "empty tuple");
    t->comps = comps;
    t->names = names;
    ps->depth--;
    *out = t;
    return 0;
}

static int parse_base(parser *ps, silt_evm_type **out)
{
    skip_ws(ps);
    size_t n = peek_ident(ps);
    const char *w = ps->p;
    if (n == 5 && memcmp(w, "tuple", 5) == 0 && w[5] == '(') {
        ps->p += 5;
        return parse_tuple(ps, out);
    }
    if (*ps->p == '(')
        return parse_tuple(ps, out);
    if (!n)
        return perr(ps, "expected a type");
    silt_evm_type *t = NULL;
    long v;
    if (word_is(w, n, "address"))
        t = type_new(ps, SILT_EVM_ADDRESS);
    else if (word_is(w, n, "bool"))
        t = type_new(ps, SILT_EVM_BOOL);
    else if (word_is(w, n, "string"))
        t = type_new(ps, SILT_EVM_STRING);
    else if (word_is(w, n, "bytes"))
        t = type_new(ps, SILT_EVM_BYTES);
    else if (n >= 4 && memcmp(w, "uint", 4) == 0 && (v = suffix_num(w, n, 4)) >= 0) {
        if (v == 0)
            v = 256;
        if (v % 8 || v > 256)
            return perr(ps, "uintN needs N in 8..256, a multiple of 8");
        if ((t = type_new(ps, SILT_EVM_UINT)))
            t->bits = (unsigned)v;
    } else if (n >= 3 && memcmp(w, "int", 3) == 0 && (v = suffix_num(w, n, 3)) >= 0) {
        if (v == 0)
            v = 256;
        if (v % 8 || v > 256)
            return perr(ps, "intN needs N in 8..256, a multiple of 8");
        if ((t = type_new(ps, SILT_EVM_INT)))
            t->bits = (unsigned)v;
    } else if (n > 5 && memcmp(w, "bytes", 5) == 0 && (v = suffix_num(w, n, 5)) > 0) {
        if (v > 32)
            return perr(ps, "bytesN needs N in 1..32");
        if ((t = type_new(ps, SILT_EVM_FBYTES)))
            t->bits = (unsigned)v;
    } else {
        return perr(ps, "unknown type");
    }
    if (!t)
        return SILT_ENOMEM;
    ps->p += n;
    *out = t;
    return 0;
}

/* A type with its array suffixes. */
static int parse_type(parser *ps, silt_evm_type **out)
{
    int rc = parse_base(ps, out);
    if (rc)
        return rc;
    int dims = 0;
    for (;;) {
        skip_ws(ps);
        if (*ps->p != '[')
            return 0;
        if (++dims > SILT_EVM_MAX_DEPTH)
            return perr(ps, "types nested too deeply");
        ps->p++;
        skip_ws(ps);
        size_t len = 0;
        if (isdigit((unsigned char)*ps->p)) {
            while (isdigit((unsigned char)*ps->p)) {
                len = len * 10 + (size_t)(*ps->p++ - '0');
                if (len > MAX_STATIC_LEN)
                    return perr(ps, "array length too large");
            }
            if (len == 0)
                return perr(ps, "array length 0");
            skip_ws(ps);
        }
        if (*ps->p != ']')
            return perr(ps, "expected ']'");
        ps->p++;
        silt_evm_type *a = type_new(ps, SILT_EVM_ARRAY);
        if (!a)
            return SILT_ENOMEM;
        a->len = len;
        a->elem = *out;
        *out = a;
    }
}

static int canon_type(silt_buf *b, const silt_evm_type *t)
{
    switch (t->kind) {
    case SILT_EVM_ADDRESS: return silt_buf_puts(b, "address");
    case SILT_EVM_BOOL: return silt_buf_puts(b, "bool");
    case SILT_EVM_STRING: return silt_buf_puts(b, "string");
    case SILT_EVM_BYTES: return silt_buf_puts(b, "bytes");
    case SILT_EVM_UINT: return silt_buf_printf(b, "uint%u", t->bits);
    case SILT_EVM_INT: return silt_buf_printf(b, "int%u", t->bits);
    case SILT_EVM_FBYTES: return silt_buf_printf(b, "bytes%u", t->bits);
    case SILT_EVM_ARRAY: {
        int rc = canon_type(b, t->elem);
        if (rc)
            return rc;
        return t->len ? silt_buf_printf(b, "[%zu]", t->len) : silt_buf_puts(b, "[]");
    }
    case SILT_EVM_TUPLE: {
        int rc = silt_buf_putc(b, '(');
        for (size_t i = 0; !rc && i < t->ncomps; i++) {
            if (i)
                rc = silt_buf_putc(b, ',');
            if (!rc)
                rc = canon_type(b, t->comps[i]);
        }
        return rc ? rc : silt_buf_putc(b, ')');
    }
    }
    return SILT_EINTERNAL;
}

/* One event parameter: type [indexed] [name]. */
static int parse_param(parser *ps, silt_evm_sig *s, silt_evm_param *p)
{
    int rc = parse_type(ps, &p->type);
    if (rc)
        return rc;
    size_t n = peek_ident(ps);
    if (n == 7 && memcmp(ps->p, "indexed", 7) == 0) {
        p->indexed = true;
        s->nindexed++;
        ps->p += 7;
        n = peek_ident(ps);
    }
    p->name = n ? silt_arena_strndup(ps->a, ps->p, n) : silt_arena_printf(ps->a, "_%zu", s->nparams);
    ps->p += n;
    return p->name ? 0 : SILT_ENOMEM;
}

static int parse_params(parser *ps, silt_evm_sig *s)
{
    s->params = silt_arena_alloc(ps->a, MAX_PARAMS * sizeof *s->params);
    if (!s->params)
        return SILT_ENOMEM;
    skip_ws(ps);
    while (*ps->p != ')') {
        if (s->nparams == MAX_PARAMS)
            return perr(ps, "too many parameters");
        int rc = parse_param(ps, s, &s->params[s->nparams]);
        if (rc)
            return rc;
        s->nparams++;
        if ((rc = list_sep(ps)) != 0)
            return rc;
    }
    ps->p++;
    return 0;
}

/* Names must be unique (DuckDB compares struct fields case-insensitively). */
static int check_names(const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < i; j++)
            if (strcasecmp(names[i], names[j]) == 0)
                return silt_err(SILT_EINVAL, "signature: parameter name '%s' is used twice", names[i]);
    return 0;
}

static int check_tuple_names(const silt_evm_type *t)
{
    if (t->kind == SILT_EVM_ARRAY)
        return check_tuple_names(t->elem);
    if (t->kind != SILT_EVM_TUPLE)
        return 0;
    int rc = check_names((const char *const *)t->names, t->ncomps);
    for (size_t i = 0; !rc && i < t->ncomps; i++)
        rc = check_tuple_names(t->comps[i]);
    return rc;
}

static int sig_finish(silt_evm_sig *s, silt_arena *a)
{
    const char **names = silt_arena_alloc(a, (s->nparams + 1) * sizeof *names);
    if (!names)
        return SILT_ENOMEM;
    for (size_t i = 0; i < s->nparams; i++)
        names[i] = s->params[i].name;
    int rc = check_names(names, s->nparams);
    for (size_t i = 0; !rc && i < s->nparams; i++)
        rc = check_tuple_names(s->params[i].type);
    if (rc)
        return rc;
    if (s->nindexed > (s->anonymous ? 4u : 3u))
        return silt_err(SILT_EINVAL, "signature: %zu indexed parameters (at most %d)", s->nindexed,
                        s->anonymous ? 4 : 3);
    silt_buf b = SILT_BUF_INIT;
    rc = silt_buf_printf(&b, "%s(", s->name);
    for (size_t i = 0; !rc && i < s->nparams; i++) {
        if (i)
            rc = silt_buf_putc(&b, ',');
        if (!rc)
            rc = canon_type(&b, s->params[i].type);
    }
    if (!rc)
        rc = silt_buf_putc(&b, ')');
    if (!rc && !(s->canonical = silt_arena_strdup(a, b.data)))
        rc = SILT_ENOMEM;
    if (!rc)
        rc = silt_keccak256(b.data, b.len, s->selector);
    silt_buf_free(&b);
    return rc;
}

int silt_evm_sig_parse(silt_evm_sig **out, silt_arena *a, const char *text)
{
    *out = NULL;
    parser ps = {text, text, a, 0};
    silt_evm_sig *s = silt_arena_alloc(a, sizeof *s);
    if (!s)
        return SILT_ENOMEM;
    size_t n = peek_ident(&ps);
    if (n == 5 && memcmp(ps.p, "event", 5) == 0 && (isspace((unsigned char)ps.p[5]))) {
        ps.p += 5;
        n = peek_ident(&ps);
    }
    if (!n)
        return perr(&ps, "expected the event name");
    if (!(s->name = silt_arena_strndup(a, ps.p, n)))
        return SILT_ENOMEM;
    ps.p += n;
    skip_ws(&ps);
    if (*ps.p != '(')
        return perr(&ps, "expected '('");
    ps.p++;
    int rc = parse_params(&ps, s);
    if (rc)
        return rc;
    n = peek_ident(&ps);
    if (n == 9 && memcmp(ps.p, "anonymous", 9) == 0) {
        s->anonymous = true;
        ps.p += 9;
    }
    skip_ws(&ps);
    if (*ps.p == ';')
        ps.p++;
    skip_ws(&ps);
    if (*ps.p)
        return perr(&ps, "unexpected text after the signature");
    if ((rc = sig_finish(s, a)) != 0)
        return rc;
    *out = s;
    return 0;
}

/* ---- SQL types ----------------------------------------------------------------- */

static bool is_binary_kind(silt_evm_kind k)
{
    return k == SILT_EVM_ADDRESS || k == SILT_EVM_FBYTES || k == SILT_EVM_BYTES;
}

static bool has_binary(const silt_evm_type *t)
{
    if (is_binary_kind(t->kind))
        return true;
    if (t->kind == SILT_EVM_ARRAY)
        return has_binary(t->elem);
    for (size_t i = 0; t->kind == SILT_EVM_TUPLE && i < t->ncomps; i++)
        if (has_binary(t->comps[i]))
            return true;
    return false;
}

static bool is_dynamic(const silt_evm_type *t)
{
    switch (t->kind) {
    case SILT_EVM_BYTES:
    case SILT_EVM_STRING: return true;
    case SILT_EVM_ARRAY: return t->len == 0 || is_dynamic(t->elem);
    case SILT_EVM_TUPLE:
        for (size_t i = 0; i < t->ncomps; i++)
            if (is_dynamic(t->comps[i]))
                return true;
        return false;
    default: return false;
    }
}

/* Indexed values of these types are only their Keccak hash in the topic. */
static bool indexed_as_hash(const silt_evm_type *t)
{
    return is_dynamic(t) || t->kind == SILT_EVM_ARRAY || t->kind == SILT_EVM_TUPLE;
}

static const char *int_sql(bool u, unsigned bits)
{
    if (bits <= 8)
        return u ? "UTINYINT" : "TINYINT";
    if (bits <= 16)
        return u ? "USMALLINT" : "SMALLINT";
    if (bits <= 32)
        return u ? "UINTEGER" : "INTEGER";
    if (bits <= 64)
        return u ? "UBIGINT" : "BIGINT";
    if (bits <= 120)
        return "DECIMAL(38,0)";
    return "VARCHAR";
}

static int put_ident(silt_buf *b, const char *name)
{
    int rc = silt_buf_putc(b, '"');
    for (const char *p = name; !rc && *p; p++)
        rc = *p == '"' ? silt_buf_puts(b, "\"\"") : silt_buf_putc(b, *p);
    return rc ? rc : silt_buf_putc(b, '"');
}

static int sql_type(silt_buf *b, const silt_evm_type *t, bool wire)
{
    switch (t->kind) {
    case SILT_EVM_ADDRESS:
    case SILT_EVM_FBYTES:
    case SILT_EVM_BYTES: return silt_buf_puts(b, wire ? "VARCHAR" : "BLOB");
    case SILT_EVM_BOOL: return silt_buf_puts(b, "BOOLEAN");
    case SILT_EVM_STRING: return silt_buf_puts(b, "VARCHAR");
    case SILT_EVM_UINT: return silt_buf_puts(b, int_sql(true, t->bits));
    case SILT_EVM_INT: return silt_buf_puts(b, int_sql(false, t->bits));
    case SILT_EVM_ARRAY: {
        int rc = sql_type(b, t->elem, wire);
        return rc ? rc : silt_buf_puts(b, "[]");
    }
    case SILT_EVM_TUPLE: {
        int rc = silt_buf_puts(b, "STRUCT(");
        for (size_t i = 0; !rc && i < t->ncomps; i++) {
            if (i)
                rc = silt_buf_puts(b, ", ");
            if (!rc)
                rc = put_ident(b, t->names[i]);
            if (!rc)
                rc = silt_buf_putc(b, ' ');
            if (!rc)
                rc = sql_type(b, t->comps[i], wire);
        }
        return rc ? rc : silt_buf_putc(b, ')');
    }
    }
    return SILT_EINTERNAL;
}

int silt_evm_sql_type(silt_buf *out, const silt_evm_sig *s, bool wire)
{
    int rc = silt_buf_puts(out, "STRUCT(");
    for (size_t i = 0; !rc && i < s->nparams; i++) {
        const silt_evm_param *p = &s->params[i];
        if (i)
            rc = silt_buf_puts(out, ", ");
        if (!rc)
            rc = put_ident(out, p->name);
        if (!rc)
            rc = silt_buf_putc(out, ' ');
        if (!rc)
            rc = p->indexed && indexed_as_hash(p->type) ? silt_buf_puts(out, wire ? "VARCHAR" : "BLOB")
                                                         : sql_type(out, p->type, wire);
    }
    return rc ? rc : silt_buf_putc(out, ')');
}

/* Conversion of wire expression `expr` of type t (depth names lambdas). */
static int sql_conv(silt_buf *b, const silt_evm_type *t, const char *expr, int depth)
{
    if (!has_binary(t))
        return silt_buf_puts(b, expr);
    if (is_binary_kind(t->kind))
        return silt_buf_printf(b, "unhex(%s)", expr);
    if (t->kind == SILT_EVM_ARRAY) {
        char var[16];
        snprintf(var, sizeof var, "x%d", depth);
        int rc = silt_buf_printf(b, "list_transform(%s, lambda %s: ", expr, var);
        if (!rc)
            rc = sql_conv(b, t->elem, var, depth + 1);
        return rc ? rc : silt_buf_putc(b, ')');
    }
    int rc = silt_buf_puts(b, "struct_pack(");
    for (size_t i = 0; !rc && i < t->ncomps; i++) {
        silt_buf f = SILT_BUF_INIT;
        rc = silt_buf_printf(&f, "(%s).", expr);
        if (!rc)
            rc = put_ident(&f, t->names[i]);
        if (!rc && i)
            rc = silt_buf_puts(b, ", ");
        if (!rc)
            rc = put_ident(b, t->names[i]);
        if (!rc)
            rc = silt_buf_puts(b, " := ");
        if (!rc)
            rc = sql_conv(b, t->comps[i], f.data, depth + 1);
        silt_buf_free(&f);
    }
    return rc ? rc : silt_buf_putc(b, ')');
}

int silt_evm_sql_convert(silt_buf *out, const silt_evm_sig *s, const char *col)
{
    int rc = silt_buf_puts(out, "struct_pack(");
    for (size_t i = 0; !rc && i < s->nparams; i++) {
        const silt_evm_param *p = &s->params[i];
        silt_buf f = SILT_BUF_INIT;
        rc = silt_buf_printf(&f, "%s.", col);
        if (!rc)
            rc = put_ident(&f, p->name);
        if (!rc && i)
            rc = silt_buf_puts(out, ", ");
        if (!rc)
            rc = put_ident(out, p->name);
        if (!rc)
            rc = silt_buf_puts(out, " := ");
        if (!rc && p->indexed && indexed_as_hash(p->type))
            rc = silt_buf_printf(out, "unhex(%s)", f.data);
        else if (!rc)
            rc = sql_conv(out, p->type, f.data, 0);
        silt_buf_free(&f);
    }
    return rc ? rc : silt_buf_putc(out, ')');
}

/* ---- hex ----------------------------------------------------------------------- */

int silt_evm_hex_append(silt_buf *out, const uint8_t *p, size_t n)
{
    static const char hx[] = "0123456789abcdef";
    int rc = silt_buf_reserve(out, n * 2);
    for (size_t i = 0; !rc && i < n; i++) {
        out->data[out->len++] = hx[p[i] >> 4];
        out->data[out->len++] = hx[p[i] & 15];
    }
    if (!rc)
        out->data[out->len] = '\0';
    return rc;
}

static const char *hex_body(const char *s)
{
    return s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? s + 2 : s;
}

static int hex_decode(const char *h, size_t nbytes, uint8_t *out)
{
    for (size_t i = 0; i < nbytes; i++) {
        int hi = silt_hex_digit(h[2 * i]), lo = silt_hex_digit(h[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

int silt_evm_hex_fixed(const char *s, uint8_t *out, size_t n)
{
    if (!s)
        return -1;
    const char *h = hex_body(s);
    if (strlen(h) != 2 * n)
        return -1;
    return hex_decode(h, n, out);
}

int silt_evm_hex_alloc(const char *s, uint8_t **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    const char *h = s ? hex_body(s) : "";
    size_t n = strlen(h);
    if (!s || n % 2)
        return silt_err(SILT_EINVAL, "not a hex string");
    uint8_t *b = malloc(n / 2 + 1);
    if (!b)
        return silt_err(SILT_ENOMEM, "out of memory");
    if (hex_decode(h, n / 2, b) != 0) {
        free(b);
        return silt_err(SILT_EINVAL, "not a hex string");
    }
    *out = b;
    *len = n / 2;
    return 0;
}

/* ---- decoder ------------------------------------------------------------------- */

typedef struct dec {
    const uint8_t *d;
    size_t len;
    silt_buf *out;
    size_t limit; /* of out->len */
    const char *where; /* "data" or "topic N" */
} dec;

static int derr(const dec *c, const char *what, size_t at)
{
    return silt_err(SILT_EINVAL, "%s: %s at byte %zu", c->where, what, at);
}

/* Head size of a static type (32 for dynamic ones); SIZE_MAX on overflow. */
static size_t head_size(const silt_evm_type *t)
{
    if (is_dynamic(t))
        return 32;
    if (t->kind == SILT_EVM_ARRAY) {
        size_t e = head_size(t->elem);
        return e == SIZE_MAX || e > SIZE_MAX / t->len ? SIZE_MAX : e * t->len;
    }
    if (t->kind == SILT_EVM_TUPLE) {
        size_t s = 0;
        for (size_t i = 0; i < t->ncomps; i++) {
            size_t e = head_size(t->comps[i]);
            if (e == SIZE_MAX || s > SIZE_MAX - e)
                return SIZE_MAX;
            s += e;
        }
        return s;
    }
    return 32;
}

/* A 32-byte word at `at` as a size (offset / length); -1 when out of range. */
static int word_size(const dec *c, size_t at, size_t *v)
{
    if (at > c->len || c->len - at < 32)
        return derr(c, "data too short", at);
    const uint8_t *w = c->d + at;
    for (int i = 0; i < 24; i++)
        if (w[i])
            return derr(c, "offset or length out of range", at);
    uint64_t x = 0;
    for (int i = 24; i < 32; i++)
        x = x << 8 | w[i];
    if (x > c->len)
        return derr(c, "offset or length out of range", at);
    *v = (size_t)x;
    return 0;
}

/* Decimal text of the 256-bit big-endian magnitude `w` into out (>= 80 bytes). */
static void u256_dec(const uint8_t w[32], char *out)
{
    uint8_t v[32];
    memcpy(v, w, 32);
    char tmp[80];
    size_t n = 0;
    for (;;) {
        unsigned rem = 0;
        bool zero = true;
        for (int i = 0; i < 32; i++) {
            unsigned cur = rem << 8 | v[i];
            v[i] = (uint8_t)(cur / 10);
            rem = cur % 10;
            zero = zero && v[i] == 0;
        }
        tmp[n++] = (char)('0' + rem);
        if (zero)
            break;
    }
    for (size_t i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    out[n] = '\0';
}

static int dec_int(dec *c, const silt_evm_type *t, const uint8_t *w, size_t at)
{
    size_t pad = 32 - t->bits / 8;
    bool neg = t->kind == SILT_EVM_INT && (w[pad] & 0x80);
    uint8_t fill = neg ? 0xff : 0x00;
    for (size_t i = 0; i < pad; i++)
        if (w[i] != fill)
            return derr(c, t->kind == SILT_EVM_INT ? "intN not sign-extended" : "uintN has high bits set", at);
    if (t->bits <= 64) {
        uint64_t x = 0;
        for (int i = 24; i < 32; i++)
            x = x << 8 | w[i];
        if (t->kind == SILT_EVM_UINT)
            return silt_buf_printf(c->out, "%llu", (unsigned long long)x);
        return silt_buf_printf(c->out, "%lld", (long long)(int64_t)x);
    }
    uint8_t mag[32];
    memcpy(mag, w, 32);
    if (neg) { /* two's complement magnitude */
        unsigned carry = 1;
        for (int i = 31; i >= 0; i--) {
            unsigned v = (uint8_t)~mag[i] + carry;
            mag[i] = (uint8_t)v;
            carry = v >> 8;
        }
    }
    char txt[82];
    txt[0] = '-';
    u256_dec(mag, txt + 1);
    return silt_buf_printf(c->out, "\"%s\"", neg ? txt : txt + 1);
}

/* One static word-sized value at `at`. */
static int dec_word(dec *c, const silt_evm_type *t, size_t at)
{
    if (at > c->len || c->len - at < 32)
        return derr(c, "data too short", at);
    const uint8_t *w = c->d + at;
    switch (t->kind) {
    case SILT_EVM_ADDRESS:
        for (int i = 0; i < 12; i++)
            if (w[i])
                return derr(c, "address has high bits set", at);
        return silt_buf_putc(c->out, '"') || silt_evm_hex_append(c->out, w + 12, 20) || silt_buf_putc(c->out, '"')
                   ? SILT_ENOMEM
                   : 0;
    case SILT_EVM_BOOL:
        for (int i = 0; i < 31; i++)
            if (w[i])
                return derr(c, "bool is not 0 or 1", at);
        if (w[31] > 1)
            return derr(c, "bool is not 0 or 1", at);
        return silt_buf_puts(c->out, w[31] ? "true" : "false");
    case SILT_EVM_FBYTES:
        for (unsigned i = t->bits; i < 32; i++)
            if (w[i])
                return derr(c, "bytesN has dirty padding", at);
        return silt_buf_putc(c->out, '"') || silt_evm_hex_append(c->out, w, t->bits) || silt_buf_putc(c->out, '"')
                   ? SILT_ENOMEM
                   : 0;
    case SILT_EVM_UINT:
    case SILT_EVM_INT: return dec_int(c, t, w, at);
    default: return SILT_EINTERNAL;
    }
}

/* JSON string of possibly invalid UTF-8 (replaced by U+FFFD). */
static int put_json_str(silt_buf *b, const uint8_t *s, size_t n)
{
    int rc = silt_buf_putc(b, '"');
    for (size_t i = 0; !rc && i < n;) {
        uint8_t ch = s[i];
        if (ch < 0x80) {
            if (ch == '"' || ch == '\\')
                rc = silt_buf_printf(b, "\\%c", ch);
            else if (ch < 0x20)
                rc = silt_buf_printf(b, "\\u%04x", ch);
            else
                rc = silt_buf_putc(b, (char)ch);
            i++;
            continue;
        }
        size_t len = ch >= 0xf0 && ch <= 0xf4 ? 4 : ch >= 0xe0 ? 3 : ch >= 0xc2 && ch < 0xe0 ? 2 : 0;
        bool ok = len && i + len <= n;
        uint32_t cp = len == 4 ? ch & 7u : len == 3 ? ch & 15u : ch & 31u;
        for (size_t k = 1; ok && k < len; k++) {
            ok = (s[i + k] & 0xc0) == 0x80;
            cp = cp << 6 | (s[i + k] & 0x3fu);
        }
        ok = ok && !(len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) &&
             !(len == 4 && (cp < 0x10000 || cp > 0x10ffff));
        if (ok) {
            rc = silt_buf_append(b, s + i, len);
            i += len;
        } else {
            rc = silt_buf_puts(b, "\xef\xbf\xbd");
            i++;
        }
    }
    return rc ? rc : silt_buf_putc(b, '"');
}

static int dec_value(dec *c, const silt_evm_type *t, size_t at, int depth);

/* `n` values of types `types[i]` (or `n` of `*same`) encoded as a tuple at `at`. */
static int dec_seq(dec *c, silt_evm_type *const *types, const silt_evm_type *same, size_t n, size_t at,
                   int depth, char **names)
{
    int rc = silt_buf_putc(c->out, names ? '{' : '[');
    size_t head = at;
    for (size_t i = 0; !rc && i < n; i++) {
        const silt_evm_type *t = same ? same : types[i];
        if (i)
            rc = silt_buf_putc(c->out, ',');
        if (!rc && names)
            rc = put_json_str(c->out, (const uint8_t *)names[i], strlen(names[i])) || silt_buf_putc(c->out, ':')
                     ? SILT_ENOMEM
                     : 0;
        if (rc)
            break;
        size_t hs = head_size(t);
        if (hs == SIZE_MAX || head > c->len || c->len - head < hs)
            return derr(c, "data too short", head);
        if (is_dynamic(t)) {
            size_t off;
            if ((rc = word_size(c, head, &off)) != 0)
                return rc;
            if (off > c->len - at)
                return derr(c, "offset or length out of range", head);
            rc = dec_value(c, t, at + off, depth + 1);
        } else {
            rc = dec_value(c, t, head, depth + 1);
        }
        head += hs;
        if (!rc && c->out->len > c->limit)
            return silt_err(SILT_EINVAL, "%s: the decoded value is too large", c->where);
    }
    return rc ? rc : silt_buf_putc(c->out, names ? '}' : ']');
}

static int dec_value(dec *c, const silt_evm_type *t, size_t at, int depth)
{
    if (depth > 2 * SILT_EVM_MAX_DEPTH + 2)
        return derr(c, "nested too deeply", at);
    switch (t->kind) {
    case SILT_EVM_BYTES:
    case SILT_EVM_STRING: {
        size_t n;
        int rc = word_size(c, at, &n);
        if (rc)
            return rc;
        if (c->len - at - 32 < n)
            return derr(c, "length out of range", at);
        if (t->kind == SILT_EVM_STRING)
            return put_json_str(c->out, c->d + at + 32, n);
        return silt_buf_putc(c->out, '"') || silt_evm_hex_append(c->out, c->d + at + 32, n) ||
                       silt_buf_putc(c->out, '"')
                   ? SILT_ENOMEM
                   : 0;
    }
    case SILT_EVM_ARRAY: {
        size_t n = t->len;
        if (!n) {
            int rc = word_size(c, at, &n);
            if (rc)
                return rc;
            at += 32;
            if (n > (c->len - at) / 32)
                return derr(c, "array length out of range", at - 32);
        }
        return dec_seq(c, NULL, t->elem, n, at, depth, NULL);
    }
    case SILT_EVM_TUPLE: return dec_seq(c, t->comps, NULL, t->ncomps, at, depth, t->names);
    default: return dec_word(c, t, at);
    }
}

static int dec_topic(dec *c, const silt_evm_param *p, const uint8_t *topic)
{
    if (indexed_as_hash(p->type))
        return silt_buf_putc(c->out, '"') || silt_evm_hex_append(c->out, topic, 32) || silt_buf_putc(c->out, '"')
                   ? SILT_ENOMEM
                   : 0;
    dec tc = {topic, 32, c->out, SIZE_MAX, c->where};
    return dec_word(&tc, p->type, 0);
}

/* The next non-indexed parameter: its head at *head of the data tuple. */
static int dec_data(dec *c, const silt_evm_param *p, size_t *head)
{
    size_t hs = head_size(p->type);
    if (hs == SIZE_MAX || *head > c->len || c->len - *head < hs)
        return derr(c, "data too short", *head);
    int rc;
    if (is_dynamic(p->type)) {
        size_t off;
        if ((rc = word_size(c, *head, &off)) != 0)
            return rc;
        rc = dec_value(c, p->type, off, 1);
    } else {
        rc = dec_value(c, p->type, *head, 1);
    }
    *head += hs;
    return rc;
}

int silt_evm_decode(silt_buf *out, const silt_evm_sig *s, const uint8_t (*topics)[32], size_t ntopics,
                    const uint8_t *data, size_t len)
{
    size_t want = s->nindexed + (s->anonymous ? 0 : 1);
    if (ntopics != want)
        return silt_err(SILT_EINVAL, "%zu topics, the signature has %zu indexed parameters%s", ntopics,
                        s->nindexed, s->anonymous ? "" : " (plus topic0)");
    if (!s->anonymous && memcmp(topics[0], s->selector, 32) != 0)
        return silt_err(SILT_EINVAL, "topic0 is not keccak256('%s')", s->canonical);
    size_t start = out->len;
    dec c = {data ? data : (const uint8_t *)"", len, out, start + 64 * len + 65536, "data"};
    size_t ti = s->anonymous ? 0 : 1, head = 0;
    int rc = silt_buf_putc(out, '{');
    for (size_t i = 0; !rc && i < s->nparams; i++) {
        const silt_evm_param *p = &s->params[i];
        if (i)
            rc = silt_buf_putc(out, ',');
        if (!rc)
            rc = put_json_str(out, (const uint8_t *)p->name, strlen(p->name)) || silt_buf_putc(out, ':') ? SILT_ENOMEM
                                                                                                            : 0;
        char where[16];
        snprintf(where, sizeof where, "topic%zu", ti);
        c.where = p->indexed ? where : "data";
        if (!rc && p->indexed)
            rc = dec_topic(&c, p, topics[ti++]);
        else if (!rc)
            rc = dec_data(&c, p, &head);
        if (!rc && out->len > c.limit)
            rc = silt_err(SILT_EINVAL, "data: the decoded value is too large");
    }
    if (!rc)
        rc = silt_buf_putc(out, '}');
    if (rc) {
        out->len = start;
        if (out->data)
            out->data[start] = '\0';
        if (rc == SILT_ENOMEM)
            return silt_err(SILT_ENOMEM, "out of memory");
    }
    return rc;
}
