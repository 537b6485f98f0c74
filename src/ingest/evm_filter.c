/* evm_filter.c — parser, evaluator and eth_getLogs pushdown of the EVM
 * logs `filter` (evm_filter.h).
 *
 * Invariants: the parser is recursive descent with a depth limit, never
 * reads past the NUL of its input, and keeps its nodes in the filter's
 * arena; evaluation is SQL three-valued logic; pushdown only ever widens
 * (every log the WHERE clause accepts passes the pushed-down request).
 */
#include "ingest/evm_filter.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ingest/evm_abi.h"
#include "util/arena.h"
#include "util/error.h"

#define MAX_DEPTH 64
#define MAX_SET 10000 /* values of one pushed-down list */

enum { C_ADDRESS, C_TOPIC0, C_TOPIC1, C_TOPIC2, C_TOPIC3, C_BLOCK_NUMBER, C_BLOCK_HASH };
enum { N_AND, N_OR, N_NOT, N_CMP, N_IN, N_BETWEEN, N_ISNULL };
enum { OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE };
enum { T3_FALSE, T3_TRUE, T3_NULL };

typedef struct fval {
    uint64_t num;
    uint8_t bin[32];
} fval;

typedef struct fnode fnode;
struct fnode {
    int kind, col, op;
    bool negated;
    fnode *a, *b;
    fval *vals; /* CMP: 1, BETWEEN: 2, IN: n */
    size_t nvals;
};

struct silt_evm_filter {
    silt_arena *arena;
    fnode *root; /* NULL = no filter */
};

typedef struct fparser {
    const char *s, *p;
    silt_arena *a;
    int depth;
} fparser;

static int ferr(fparser *ps, const char *what)
{
    return silt_err(SILT_EINVAL, "filter: %s at position %zu", what, (size_t)(ps->p - ps->s) + 1);
}

static void ws(fparser *ps)
{
    while (*ps->p && isspace((unsigned char)*ps->p))
        ps->p++;
}

static size_t word_len(const char *p)
{
    size_t n = 0;
    if (!(isalpha((unsigned char)p[0]) || p[0] == '_'))
        return 0;
    while (isalnum((unsigned char)p[n]) || p[n] == '_')
        n++;
    return n;
}

/* Consumes keyword `kw` (case-insensitive, whole word). */
static bool kw(fparser *ps, const char *k)
{
    ws(ps);
    size_t n = word_len(ps->p);
    if (n != strlen(k) || strncasecmp(ps->p, k, n) != 0)
        return false;
    ps->p += n;
    return true;
}

static bool punct(fparser *ps, const char *t)
{
    ws(ps);
    size_t n = strlen(t);
    if (strncmp(ps->p, t, n) != 0)
        return false;
    ps->p += n;
    return true;
}

static int col_width(int col) { return col == C_ADDRESS ? 20 : 32; }

/* A column name at p: its id, -1 when p is not a column. */
static int parse_col(fparser *ps)
{
    static const char *const names[] = {"address", "topic0", "topic1", "topic2", "topic3", "block_number", "block_hash"};
    ws(ps);
    const char *p = ps->p;
    bool quoted = *p == '"';
    size_t n = quoted ? strcspn(p + 1, "\"") : word_len(p);
    if (quoted && p[1 + n] != '"')
        return -1;
    for (int i = 0; i < 7; i++) {
        if (strlen(names[i]) == n && (quoted ? strncmp(p + 1, names[i], n) : strncasecmp(p, names[i], n)) == 0) {
            ps->p += n + (quoted ? 2 : 0);
            return i;
        }
    }
    return -1;
}

/* A quoted string literal at p ('' escapes); malloc'd text in *out. */
static int parse_str(fparser *ps, char **out)
{
    ps->p++;
    size_t cap = strlen(ps->p) + 1, n = 0;
    char *s = malloc(cap);
    if (!s)
        return silt_err(SILT_ENOMEM, "out of memory");
    for (;;) {
        if (!*ps->p) {
            free(s);
            return ferr(ps, "unterminated string");
        }
        if (*ps->p == '\'') {
            if (ps->p[1] != '\'')
                break;
            ps->p++;
        }
        s[n++] = *ps->p++;
    }
    ps->p++;
    s[n] = '\0';
    *out = s;
    return 0;
}

/* A binary literal of `width` bytes for column `col`. */
static int parse_bin(fparser *ps, int col, fval *v)
{
    ws(ps);
    const char *at = ps->p;
    char *text = NULL;
    int rc;
    bool selector = false;
    if ((ps->p[0] == 'X' || ps->p[0] == 'x') && ps->p[1] == '\'') {
        ps->p++;
        rc = parse_str(ps, &text);
    } else if (*ps->p == '\'') {
        rc = parse_str(ps, &text);
        if (!rc && !(text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))) {
            free(text);
            ps->p = at;
            return ferr(ps, "a binary value is X'…' or '0x…'");
        }
    } else if (kw(ps, "eth_event_selector")) {
        selector = true;
        if (!punct(ps, "("))
            return ferr(ps, "expected '('");
        ws(ps);
        if (*ps->p != '\'')
            return ferr(ps, "eth_event_selector needs a signature string");
        rc = parse_str(ps, &text);
        if (!rc && !punct(ps, ")")) {
            free(text);
            return ferr(ps, "expected ')'");
        }
    } else {
        return ferr(ps, col == C_BLOCK_NUMBER ? "expected a block number" : "expected a binary value");
    }
    if (rc)
        return rc;
    memset(v, 0, sizeof *v);
    if (selector) {
        silt_arena *a = silt_arena_new();
        silt_evm_sig *sig = NULL;
        rc = a ? silt_evm_sig_parse(&sig, a, text) : SILT_ENOMEM;
        if (!rc && col != C_ADDRESS)
            memcpy(v->bin, sig->selector, 32);
        silt_arena_free(a);
        free(text);
        if (rc)
            return silt_err_context(rc, "filter: eth_event_selector");
        if (col == C_ADDRESS)
            return ferr(ps, "an event selector is 32 bytes, address has 20");
        return 0;
    }
    rc = silt_evm_hex_fixed(text, v->bin, (size_t)col_width(col));
    free(text);
    if (rc) {
        ps->p = at;
        return ferr(ps, col == C_ADDRESS ? "address needs a 20-byte hex value" : "this column needs a 32-byte hex value");
    }
    return 0;
}

static int parse_val(fparser *ps, int col, fval *v)
{
    if (col != C_BLOCK_NUMBER)
        return parse_bin(ps, col, v);
    ws(ps);
    if (!isdigit((unsigned char)*ps->p))
        return ferr(ps, "expected a block number");
    uint64_t x = 0;
    while (isdigit((unsigned char)*ps->p)) {
        unsigned d = (unsigned)(*ps->p - '0');
        if (x > (UINT64_MAX - d) / 10)
            return ferr(ps, "block number too large");
        x = x * 10 + d;
        ps->p++;
    }
    if (isalnum((unsigned char)*ps->p) || *ps->p == '_')
        return ferr(ps, "expected a block number");
    memset(v, 0, sizeof *v);
    v->num = x;
    return 0;
}

static fnode *node_new(fparser *ps, int kind)
{
    fnode *n = silt_arena_alloc(ps->a, sizeof *n);
    if (n)
        n->kind = kind;
    return n;
}

static int parse_op(fparser *ps, int *op)
{
    static const struct {
        const char *t;
        int op;
    } ops[] = {{"<>", OP_NE}, {"!=", OP_NE}, {"<=", OP_LE}, {">=", OP_GE}, {"==", OP_EQ},
               {"=", OP_EQ},  {"<", OP_LT},  {">", OP_GT}};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (punct(ps, ops[i].t)) {
            *op = ops[i].op;
            return 0;
        }
    return ferr(ps, "expected a comparison, IN, BETWEEN or IS");
}

static int check_op(fparser *ps, const char *at, int col, int op)
{
    if (col != C_BLOCK_NUMBER && op != OP_EQ && op != OP_NE) {
        ps->p = at;
        return ferr(ps, "binary columns compare only with = and <>");
    }
    return 0;
}

static int parse_in(fparser *ps, fnode *n)
{
    if (!punct(ps, "("))
        return ferr(ps, "expected '(' after IN");
    size_t cap = 4;
    n->vals = silt_arena_alloc(ps->a, cap * sizeof *n->vals);
    if (!n->vals)
        return SILT_ENOMEM;
    do {
        if (n->nvals == cap) {
            fval *nv = silt_arena_alloc(ps->a, 2 * cap * sizeof *nv);
            if (!nv)
                return SILT_ENOMEM;
            memcpy(nv, n->vals, cap * sizeof *nv);
            n->vals = nv;
            cap *= 2;
        }
        int rc = parse_val(ps, n->col, &n->vals[n->nvals++]);
        if (rc)
            return rc;
    } while (punct(ps, ","));
    return punct(ps, ")") ? 0 : ferr(ps, "expected ',' or ')'");
}

/* Predicate starting with column `col` (already consumed). */
static int parse_pred_col(fparser *ps, int col, fnode **out)
{
    const char *at = ps->p;
    bool neg = kw(ps, "not");
    fnode *n = node_new(ps, N_CMP);
    if (!n)
        return SILT_ENOMEM;
    n->col = col;
    n->negated = neg;
    *out = n;
    if (kw(ps, "in")) {
        n->kind = N_IN;
        return parse_in(ps, n);
    }
    if (kw(ps, "between")) {
        if (col != C_BLOCK_NUMBER)
            return ps->p = at, ferr(ps, "BETWEEN works on block_number only");
        n->kind = N_BETWEEN;
        if (!(n->vals = silt_arena_alloc(ps->a, 2 * sizeof *n->vals)))
            return SILT_ENOMEM;
        n->nvals = 2;
        int rc = parse_val(ps, col, &n->vals[0]);
        if (!rc && !kw(ps, "and"))
            rc = ferr(ps, "expected AND in BETWEEN");
        return rc ? rc : parse_val(ps, col, &n->vals[1]);
    }
    if (neg)
        return ferr(ps, "expected IN or BETWEEN after NOT");
    if (kw(ps, "is")) {
        n->kind = N_ISNULL;
        n->negated = kw(ps, "not");
        return kw(ps, "null") ? 0 : ferr(ps, "expected NULL");
    }
    at = ps->p;
    int rc = parse_op(ps, &n->op);
    if (!rc)
        rc = check_op(ps, at, col, n->op);
    if (!rc && !(n->vals = silt_arena_alloc(ps->a, sizeof *n->vals)))
        rc = SILT_ENOMEM;
    n->nvals = 1;
    return rc ? rc : parse_val(ps, col, &n->vals[0]);
}

/* `value op col`: the value's kind is known only from the column. */
static int parse_pred_rev(fparser *ps, fnode **out)
{
    const char *v0 = ps->p;
    /* skip the value to find the operator and column, then parse it typed */
    fparser probe = *ps;
    ws(&probe);
    if (*probe.p == '\'' || ((*probe.p == 'x' || *probe.p == 'X') && probe.p[1] == '\'')) {
        if (*probe.p != '\'')
            probe.p++;
        char *t = NULL;
        int rc = parse_str(&probe, &t);
        free(t);
        if (rc)
            return rc;
    } else if (isdigit((unsigned char)*probe.p)) {
        while (isalnum((unsigned char)*probe.p))
            probe.p++;
    } else {
        return ferr(ps, "expected a column, a value, NOT or '('");
    }
    int op = OP_EQ;
    const char *at = probe.p;
    int rc = parse_op(&probe, &op);
    if (rc)
        return rc;
    int col = parse_col(&probe);
    if (col < 0)
        return ferr(&probe, "expected a column");
    if ((rc = check_op(&probe, at, col, op)) != 0)
        return rc;
    static const int flip[] = {OP_EQ, OP_NE, OP_GT, OP_GE, OP_LT, OP_LE};
    fnode *n = node_new(ps, N_CMP);
    if (!n || !(n->vals = silt_arena_alloc(ps->a, sizeof *n->vals)))
        return SILT_ENOMEM;
    n->col = col;
    n->op = flip[op];
    n->nvals = 1;
    ps->p = v0;
    if ((rc = parse_val(ps, col, &n->vals[0])) != 0)
        return rc;
    ps->p = probe.p;
    *out = n;
    return 0;
}

static int parse_or(fparser *ps, fnode **out);

static int parse_unary(fparser *ps, fnode **out)
{
    if (++ps->depth > MAX_DEPTH)
        return ferr(ps, "nested too deeply");
    int rc;
    if (kw(ps, "not")) {
        fnode *n = node_new(ps, N_NOT);
        if (!n)
            return SILT_ENOMEM;
        rc = parse_unary(ps, &n->a);
        *out = n;
    } else if (punct(ps, "(")) {
        rc = parse_or(ps, out);
        if (!rc && !punct(ps, ")"))
            rc = ferr(ps, "expected ')'");
    } else {
        int col = parse_col(ps);
        rc = col >= 0 ? parse_pred_col(ps, col, out) : parse_pred_rev(ps, out);
    }
    ps->depth--;
    return rc;
}

static int parse_bin_op(fparser *ps, fnode **out, bool is_or)
{
    int rc = is_or ? parse_bin_op(ps, out, false) : parse_unary(ps, out);
    while (!rc && kw(ps, is_or ? "or" : "and")) {
        fnode *n = node_new(ps, is_or ? N_OR : N_AND);
        if (!n)
            return SILT_ENOMEM;
        n->a = *out;
        rc = is_or ? parse_bin_op(ps, &n->b, false) : parse_unary(ps, &n->b);
        *out = n;
    }
    return rc;
}

static int parse_or(fparser *ps, fnode **out) { return parse_bin_op(ps, out, true); }

int silt_evm_filter_parse(silt_evm_filter **out, const char *sql)
{
    *out = NULL;
    silt_evm_filter *f = calloc(1, sizeof *f);
    if (!f || !(f->arena = silt_arena_new())) {
        free(f);
        return silt_err(SILT_ENOMEM, "out of memory");
    }
    fparser ps = {sql ? sql : "", sql ? sql : "", f->arena, 0};
    ws(&ps);
    int rc = 0;
    if (*ps.p) {
        rc = parse_or(&ps, &f->root);
        if (!rc && !(ws(&ps), *ps.p == '\0' || (*ps.p == ';' && (ps.p++, ws(&ps), *ps.p == '\0'))))
            rc = ferr(&ps, "unexpected text");
    }
    if (rc == SILT_ENOMEM)
        rc = silt_err(SILT_ENOMEM, "out of memory");
    if (rc) {
        silt_evm_filter_free(f);
        return rc;
    }
    *out = f;
    return 0;
}

void silt_evm_filter_free(silt_evm_filter *f)
{
    if (!f)
        return;
    silt_arena_free(f->arena);
    free(f);
}

/* ---- evaluation ---------------------------------------------------------------- */

/* The column's value in the log: NULL (no such topic) -> false. */
static bool col_value(const silt_evm_log_view *l, int col, const uint8_t **bin)
{
    switch (col) {
    case C_ADDRESS: *bin = l->address; return true;
    case C_BLOCK_HASH: *bin = l->block_hash; return true;
    case C_BLOCK_NUMBER: *bin = NULL; return true;
    default: {
        size_t t = (size_t)(col - C_TOPIC0);
        if (t >= l->ntopics)
            return false;
        *bin = l->topics[t];
        return true;
    }
    }
}

static int cmp_val(const silt_evm_log_view *l, int col, const uint8_t *bin, const fval *v)
{
    if (col == C_BLOCK_NUMBER)
        return l->block_number < v->num ? -1 : l->block_number > v->num;
    return memcmp(bin, v->bin, (size_t)col_width(col));
}

static int eval(const fnode *n, const silt_evm_log_view *l)
{
    const uint8_t *bin = NULL;
    switch (n->kind) {
    case N_AND: {
        int a = eval(n->a, l), b = eval(n->b, l);
        return a == T3_FALSE || b == T3_FALSE ? T3_FALSE : a == T3_TRUE && b == T3_TRUE ? T3_TRUE : T3_NULL;
    }
    case N_OR: {
        int a = eval(n->a, l), b = eval(n->b, l);
        return a == T3_TRUE || b == T3_TRUE ? T3_TRUE : a == T3_FALSE && b == T3_FALSE ? T3_FALSE : T3_NULL;
    }
    case N_NOT: {
        int a = eval(n->a, l);
        return a == T3_NULL ? T3_NULL : a == T3_TRUE ? T3_FALSE : T3_TRUE;
    }
    case N_ISNULL: return col_value(l, n->col, &bin) == n->negated ? T3_TRUE : T3_FALSE;
    default: break;
    }
    if (!col_value(l, n->col, &bin))
        return T3_NULL;
    bool r = false;
    if (n->kind == N_IN) {
        for (size_t i = 0; i < n->nvals && !r; i++)
            r = cmp_val(l, n->col, bin, &n->vals[i]) == 0;
    } else if (n->kind == N_BETWEEN) {
        r = cmp_val(l, n->col, bin, &n->vals[0]) >= 0 && cmp_val(l, n->col, bin, &n->vals[1]) <= 0;
    } else {
        int c = cmp_val(l, n->col, bin, &n->vals[0]);
        r = n->op == OP_EQ ? c == 0 : n->op == OP_NE ? c != 0 : n->op == OP_LT ? c < 0 : n->op == OP_LE ? c <= 0
            : n->op == OP_GT ? c > 0 : c >= 0;
    }
    return r != n->negated ? T3_TRUE : T3_FALSE;
}

bool silt_evm_filter_match(const silt_evm_filter *f, const silt_evm_log_view *l)
{
    return !f || !f->root || eval(f->root, l) == T3_TRUE;
}

/* ---- pushdown ------------------------------------------------------------------ */

static void range_of(const fnode *n, uint64_t *lo, uint64_t *hi)
{
    *lo = 0;
    *hi = UINT64_MAX;
    uint64_t a1, b1, a2, b2;
    switch (n->kind) {
    case N_AND:
        range_of(n->a, &a1, &b1);
        range_of(n->b, &a2, &b2);
        *lo = a1 > a2 ? a1 : a2;
        *hi = b1 < b2 ? b1 : b2;
        return;
    case N_OR:
        range_of(n->a, &a1, &b1);
        range_of(n->b, &a2, &b2);
        if (a1 > b1) { /* empty */
            *lo = a2, *hi = b2;
        } else if (a2 > b2) {
            *lo = a1, *hi = b1;
        } else {
            *lo = a1 < a2 ? a1 : a2;
            *hi = b1 > b2 ? b1 : b2;
        }
        return;
    default: break;
    }
    if (n->col != C_BLOCK_NUMBER || n->negated || n->kind == N_NOT)
        return;
    if (n->kind == N_ISNULL) { /* block_number IS NULL: never */
        *lo = 1, *hi = 0;
        return;
    }
    if (n->kind == N_BETWEEN) {
        *lo = n->vals[0].num, *hi = n->vals[1].num;
        return;
    }
    if (n->kind == N_IN) {
        *lo = UINT64_MAX, *hi = 0;
        for (size_t i = 0; i < n->nvals; i++) {
            *lo = n->vals[i].num < *lo ? n->vals[i].num : *lo;
            *hi = n->vals[i].num > *hi ? n->vals[i].num : *hi;
        }
        return;
    }
    uint64_t v = n->vals[0].num;
    switch (n->op) {
    case OP_EQ: *lo = *hi = v; break;
    case OP_LT: if (v == 0) *lo = 1, *hi = 0; else *hi = v - 1; break;
    case OP_LE: *hi = v; break;
    case OP_GT: if (v == UINT64_MAX) *lo = 1, *hi = 0; else *lo = v + 1; break;
    case OP_GE: *lo = v; break;
    default: break;
    }
}

static void set_free(silt_evm_set *s)
{
    free(s->v);
    s->v = NULL;
    s->n = 0;
    s->any = true;
}

static bool set_has(const silt_evm_set *s, const uint8_t *v)
{
    for (size_t i = 0; i < s->n; i++)
        if (memcmp(s->v[i], v, 32) == 0)
            return true;
    return false;
}

static int set_add(silt_evm_set *s, const uint8_t *v)
{
    if (set_has(s, v))
        return 0;
    uint8_t(*nv)[32] = realloc(s->v, (s->n + 1) * sizeof *nv);
    if (!nv)
        return SILT_ENOMEM;
    s->v = nv;
    memcpy(s->v[s->n++], v, 32);
    return 0;
}

/* Values of column `col` the node allows (an over-approximation). */
static int set_of(const fnode *n, int col, silt_evm_set *out)
{
    memset(out, 0, sizeof *out);
    out->any = true;
    if (n->kind == N_AND || n->kind == N_OR) {
        silt_evm_set a, b;
        int rc = set_of(n->a, col, &a);
        if (!rc)
            rc = set_of(n->b, col, &b);
        else
            memset(&b, 0, sizeof b);
        bool and = n->kind == N_AND;
        if (!rc && (and ? (a.any || b.any) : !(a.any || b.any))) {
            /* AND with one side open: the other; OR of two lists: their union */
            silt_evm_set *keep = and ? (a.any ? &b : &a) : &a, *other = keep == &a ? &b : &a;
            for (size_t i = 0; !rc && !and && i < other->n; i++)
                rc = set_add(keep, other->v[i]);
            *out = *keep;
            keep->v = NULL;
        } else if (!rc && and) { /* both lists: the intersection */
            out->any = false;
            for (size_t i = 0; !rc && i < a.n; i++)
                if (set_has(&b, a.v[i]))
                    rc = set_add(out, a.v[i]);
        }
        set_free(&a);
        set_free(&b);
        if (!rc && out->n > MAX_SET)
            set_free(out);
        return rc;
    }
    if (n->col != col || n->negated || (n->kind != N_IN && !(n->kind == N_CMP && n->op == OP_EQ)))
        return 0;
    out->any = false;
    for (size_t i = 0; i < n->nvals; i++)
        if (set_add(out, n->vals[i].bin))
            return SILT_ENOMEM;
    return 0;
}

int silt_evm_filter_pushdown(const silt_evm_filter *f, silt_evm_pushdown *out)
{
    memset(out, 0, sizeof *out);
    out->hi = UINT64_MAX;
    out->address.any = true;
    for (int i = 0; i < 4; i++)
        out->topics[i].any = true;
    if (!f || !f->root)
        return 0;
    range_of(f->root, &out->lo, &out->hi);
    int rc = set_of(f->root, C_ADDRESS, &out->address);
    for (int i = 0; !rc && i < 4; i++)
        rc = set_of(f->root, C_TOPIC0 + i, &out->topics[i]);
    if (rc) {
        silt_evm_pushdown_free(out);
        return silt_err(SILT_ENOMEM, "out of memory");
    }
    return 0;
}

void silt_evm_pushdown_free(silt_evm_pushdown *p)
{
    set_free(&p->address);
    for (int i = 0; i < 4; i++)
        set_free(&p->topics[i]);
}

int silt_evm_set_restrict(silt_evm_set *s, const uint8_t v[32])
{
    bool had = s->any || set_has(s, v);
    set_free(s);
    s->any = false;
    if (had && set_add(s, v))
        return silt_err(SILT_ENOMEM, "out of memory");
    return 0;
}

bool silt_evm_pushdown_empty(const silt_evm_pushdown *p)
{
    if (p->lo > p->hi || (!p->address.any && p->address.n == 0))
        return true;
    for (int i = 0; i < 4; i++)
        if (!p->topics[i].any && p->topics[i].n == 0)
            return true;
    return false;
}
