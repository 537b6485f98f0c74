/* compat_rewrite.c — the token-level rewrite of a query written for
 * DataFusion, Spark, Flink or RisingWave into DuckDB SQL (compat.h).
 *
 * The tokenizer knows the dialect's string literals ('…' with '' escapes;
 * E'…' and $tag$…$tag$ where the dialect has them; Spark's '…' and "…" with
 * backslash escapes), quoted identifiers ("…", and `…` in Spark and Flink),
 * line and block comments. The rules, applied to tokens only:
 *  - a backtick identifier becomes a double-quoted one;
 *  - a DuckDB-reserved word the dialect allows as a column name (RESERVED)
 *    is double-quoted where it stands for a value: after a comma, an opening
 *    bracket, a dot, an operator or a keyword that starts an expression,
 *    and not before '(' — after a value (LIMIT 5 OFFSET 1, SIMILAR TO) it is
 *    the keyword and stays;
 *  - calls of the dialect's functions whose DuckDB namesake differs become
 *    calls of silt's macros; their pattern arguments are wrapped in
 *    silt_chrono_fmt(…) / silt_java_fmt(…), never edited;
 *  - arrow_cast(x, 'Type') becomes CAST(x AS <DuckDB type>);
 *  - a pattern argument that is a literal is translated once here, so a
 *    specifier DuckDB cannot express fails the rewrite (naming the call).
 * Invariant: comments, and literals other than an arrow_cast type, keep
 * their value; they keep their text too except Spark's literals, which are
 * re-spelled for DuckDB when their spelling differs.
 */
#include "engine/compat.h"
#include "util/buf.h"
#include "util/error.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- dialects --------------------------------------------------------------- */

silt_dialect silt_dialect_of(const char *engine)
{
    static const struct { const char *name; silt_dialect d; } NAMES[] = {
        {"datafusion", SILT_DIALECT_DATAFUSION}, {"spark", SILT_DIALECT_SPARK},
        {"flink", SILT_DIALECT_FLINK}, {"risingwave", SILT_DIALECT_RISINGWAVE},
    };
    for (size_t i = 0; engine && i < sizeof NAMES / sizeof NAMES[0]; i++)
        if (strcasecmp(engine, NAMES[i].name) == 0)
            return NAMES[i].d;
    return SILT_DIALECT_DUCKDB;
}

bool silt_compat_is_foreign(const char *engine) { return silt_dialect_of(engine) != SILT_DIALECT_DUCKDB; }

static bool backticks(silt_dialect d) { return d == SILT_DIALECT_SPARK || d == SILT_DIALECT_FLINK; }
static bool spark_strings(silt_dialect d) { return d == SILT_DIALECT_SPARK; }

/* ---- tokenizer -------------------------------------------------------------- */

static bool word_start(unsigned char c) { return isalpha(c) || c == '_' || c >= 0x80; }
static bool word_char(unsigned char c) { return isalnum(c) || c == '_' || c == '$' || c >= 0x80; }

/* Length of the quoted token at s with quote q: doubled q escapes it;
 * with `bs` a backslash escapes the next byte. 0 when unterminated. */
static size_t quoted_len(const char *s, char q, bool bs)
{
    for (size_t i = 1; s[i]; i++) {
        if (bs && s[i] == '\\' && s[i + 1]) {
            i++;
        } else if (s[i] == q) {
            if (s[i + 1] != q || bs)
                return i + 1;
            i++;
        }
    }
    return 0;
}

/* $tag$…$tag$ at s: its length, 0 when s is no dollar quote or unterminated. */
static size_t dollar_len(const char *s)
{
    size_t t = 1;
    while (word_start((unsigned char)s[t]) || (t > 1 && isdigit((unsigned char)s[t])))
        t++;
    if (s[t] != '$')
        return 0;
    t++;
    for (const char *p = s + t; (p = strstr(p, "$")) != NULL; p++)
        if (strncmp(p, s, t) == 0)
            return (size_t)(p - s) + t;
    return 0;
}

/* The token at s: kind and length (0 = unterminated). */
static size_t token_at(silt_dialect d, const char *s, silt_sqltok_kind *k)
{
    unsigned char c = (unsigned char)*s;
    size_t n = 0;
    if (isspace(c)) {
        *k = SILT_TOK_SPACE;
        while (s[n] && isspace((unsigned char)s[n]))
            n++;
        return n;
    }
    *k = SILT_TOK_COMMENT;
    if (c == '-' && s[1] == '-')
        return strcspn(s, "\n");
    if (c == '/' && s[1] == '*') {
        const char *e = strstr(s + 2, "*/");
        return e ? (size_t)(e - s) + 2 : 0;
    }
    *k = SILT_TOK_STRING;
    if (c == '\'')
        return quoted_len(s, '\'', spark_strings(d));
    if (c == '"')
        *k = spark_strings(d) ? SILT_TOK_STRING : SILT_TOK_QIDENT;
    if (c == '"')
        return quoted_len(s, '"', spark_strings(d));
    if ((c == 'E' || c == 'e') && s[1] == '\'' && !spark_strings(d)) {
        size_t q = quoted_len(s + 1, '\'', true);
        return q ? q + 1 : 0;
    }
    if (c == '$' && (n = dollar_len(s)) > 0) /* DuckDB reads it as one, in every dialect */
        return n;
    *k = SILT_TOK_BACKTICK;
    if (c == '`' && backticks(d))
        return quoted_len(s, '`', false);
    *k = SILT_TOK_WORD;
    if (word_start(c)) {
        while (word_char((unsigned char)s[n]))
            n++;
        return n;
    }
    *k = SILT_TOK_NUMBER;
    if (isdigit(c)) {
        while (isalnum((unsigned char)s[n]) || s[n] == '_' || s[n] == '.')
            n++;
        return n;
    }
    *k = SILT_TOK_PUNCT;
    return 1;
}

int silt_compat_tokenize(silt_dialect d, const char *sql, silt_sqltok **toks, size_t *n)
{
    *toks = NULL;
    *n = 0;
    size_t cap = 0;
    for (size_t off = 0; sql[off];) {
        silt_sqltok_kind k;
        size_t len = token_at(d, sql + off, &k);
        if (len == 0) {
            free(*toks);
            *toks = NULL;
            return silt_err(SILT_EINVAL, "unterminated %s at offset %zu",
                            k == SILT_TOK_COMMENT ? "comment" : k == SILT_TOK_STRING ? "string literal"
                                                                                     : "quoted identifier",
                            off);
        }
        if (*n == cap) {
            cap = cap ? 2 * cap : 64;
            silt_sqltok *t = realloc(*toks, cap * sizeof *t);
            if (!t) {
                free(*toks);
                *toks = NULL;
                return silt_err(SILT_ENOMEM, "out of memory");
            }
            *toks = t;
        }
        (*toks)[(*n)++] = (silt_sqltok){k, off, len};
        off += len;
    }
    return 0;
}

/* ---- string values ---------------------------------------------------------- */

static char unescape(char c)
{
    switch (c) {
    case 'n': return '\n';
    case 't': return '\t';
    case 'r': return '\r';
    case 'b': return '\b';
    case 'Z': return 26;
    case '0': return '0'; /* a NUL cannot be in a DuckDB literal: kept as the digit */
    default: return c;
    }
}

char *silt_compat_string_value(silt_dialect d, const char *tok, size_t len)
{
    bool bs = spark_strings(d);
    if (len >= 2 && (tok[0] == 'E' || tok[0] == 'e') && tok[1] == '\'') {
        bs = true;
        tok++;
        len--;
    }
    if (len >= 2 && tok[0] == '$') {
        size_t t = 1 + strcspn(tok + 1, "$") + 1;
        return len >= 2 * t ? strndup(tok + t, len - 2 * t) : NULL;
    }
    char *v = malloc(len + 1);
    if (!v || len < 2)
        return v ? (free(v), NULL) : NULL;
    char q = tok[0];
    size_t w = 0;
    for (size_t i = 1; i + 1 < len; i++) {
        if (bs && tok[i] == '\\' && i + 2 < len)
            v[w++] = unescape(tok[++i]);
        else if (!bs && tok[i] == q)
            v[w++] = tok[i++];
        else
            v[w++] = tok[i];
    }
    v[w] = '\0';
    return v;
}

/* ---- the rewrite ------------------------------------------------------------ */

typedef struct rw {
    silt_dialect d;
    const char *sql;
    silt_sqltok *t;
    size_t n;
    silt_compat_stats st;
} rw;

static bool is_punct(const rw *r, size_t i, char c)
{
    return i < r->n && r->t[i].kind == SILT_TOK_PUNCT && r->sql[r->t[i].off] == c;
}

static bool insignificant(const rw *r, size_t i)
{
    return r->t[i].kind == SILT_TOK_SPACE || r->t[i].kind == SILT_TOK_COMMENT;
}

/* Next / previous significant token (r->n / SIZE_MAX when none). */
static size_t next_sig(const rw *r, size_t i)
{
    for (i++; i < r->n && insignificant(r, i); i++) {
    }
    return i;
}

static size_t prev_sig(const rw *r, size_t i)
{
    while (i-- > 0)
        if (!insignificant(r, i))
            return i;
    return SIZE_MAX;
}

static bool word_is(const rw *r, size_t i, const char *w)
{
    return r->t[i].kind == SILT_TOK_WORD && strlen(w) == r->t[i].len &&
           strncasecmp(r->sql + r->t[i].off, w, r->t[i].len) == 0;
}

static bool word_in(const rw *r, size_t i, const char *const *list)
{
    for (; *list; list++)
        if (word_is(r, i, *list))
            return true;
    return false;
}

/* DuckDB-reserved words (duckdb_keywords(), category 'reserved') that the
 * other dialects accept as column names and that cannot start an
 * expression in DuckDB either. */
static const char *const RESERVED[] = {"offset", "to", "window", "qualify", "returning", "fetch", "only",
                                       "do", "placing", "column", "constraint", "deferrable", "initially",
                                       NULL};
/* Keywords after which a value follows. */
static const char *const EXPR_KW[] = {"select", "distinct", "where", "and", "or", "not", "by", "on",
                                      "when", "then", "else", "as", "having", "between", "case", "like",
                                      "ilike", "in", "is", "returning", NULL};

static bool value_position(const rw *r, size_t i)
{
    size_t p = prev_sig(r, i);
    if (p == SIZE_MAX)
        return true;
    if (r->t[p].kind == SILT_TOK_PUNCT)
        return strchr(",([.=<>+-*/%|!^&~:", r->sql[r->t[p].off]) != NULL;
    return word_in(r, p, EXPR_KW);
}

static int emit(silt_buf *o, const rw *r, size_t i)
{
    return silt_buf_append(o, r->sql + r->t[i].off, r->t[i].len);
}

/* `…` → "…" */
static int emit_backtick(silt_buf *o, rw *r, size_t i)
{
    const char *s = r->sql + r->t[i].off;
    size_t len = r->t[i].len;
    int rc = silt_buf_putc(o, '"');
    for (size_t k = 1; !rc && k + 1 < len; k++) {
        if (s[k] == '`')
            k++; /* `` is one backtick */
        rc = s[k] == '"' ? silt_buf_puts(o, "\"\"") : silt_buf_putc(o, s[k]);
    }
    r->st.quoted++;
    return rc ? rc : silt_buf_putc(o, '"');
}

/* A Spark literal in DuckDB's spelling ('…', '' escapes); unchanged when
 * that is how it is written already. */
static int emit_spark_string(silt_buf *o, rw *r, size_t i)
{
    const char *s = r->sql + r->t[i].off;
    size_t len = r->t[i].len;
    /* Spark's adjacent literals (and X"…", E"…") are separate tokens: keep them apart */
    if (i > 0 && (r->t[i - 1].kind == SILT_TOK_STRING || r->t[i - 1].kind == SILT_TOK_WORD) && silt_buf_putc(o, ' '))
        return SILT_ENOMEM;
    if (s[0] == '\'' && !memchr(s, '\\', len))
        return emit(o, r, i);
    char *v = silt_compat_string_value(r->d, s, len);
    if (!v)
        return SILT_ENOMEM;
    int rc = silt_buf_putc(o, '\'');
    for (char *p = v; !rc && *p; p++)
        rc = *p == '\'' ? silt_buf_puts(o, "''") : silt_buf_putc(o, *p);
    free(v);
    r->st.respelled++;
    return rc ? rc : silt_buf_putc(o, '\'');
}

static int emit_range(silt_buf *o, rw *r, size_t i, size_t end);

/* ---- function calls --------------------------------------------------------- */

enum call_kind { CALL_DF_TS, CALL_DF_PLAIN, CALL_ARROW_CAST, CALL_JAVA, CALL_JAVA_FMT2 };

typedef struct call_rule {
    const char *name; /* as written (case-insensitive) */
    const char *target; /* silt's macro without its prefix */
    enum call_kind kind;
    bool java; /* rule of the Java-pattern dialects (Spark, Flink), else DataFusion's */
} call_rule;

static const call_rule CALLS[] = {
    {"to_timestamp", "to_timestamp", CALL_DF_TS, false},
    {"to_timestamp_seconds", "to_timestamp_seconds", CALL_DF_TS, false},
    {"to_timestamp_millis", "to_timestamp_millis", CALL_DF_TS, false},
    {"to_timestamp_micros", "to_timestamp_micros", CALL_DF_TS, false},
    {"to_timestamp_nanos", "to_timestamp_nanos", CALL_DF_TS, false},
    {"to_date", "to_date", CALL_DF_TS, false},
    {"date_part", "date_part", CALL_DF_PLAIN, false},
    {"datepart", "date_part", CALL_DF_PLAIN, false},
    {"date_trunc", "date_trunc", CALL_DF_PLAIN, false},
    {"datetrunc", "date_trunc", CALL_DF_PLAIN, false},
    {"make_date", "make_date", CALL_DF_PLAIN, false},
    {"arrow_cast", NULL, CALL_ARROW_CAST, false},
    {"unix_timestamp", "unix_timestamp", CALL_JAVA, true},
    {"to_date", "to_date", CALL_JAVA, true},
    {"to_timestamp", "to_timestamp", CALL_JAVA, true},
    {"from_unixtime", "from_unixtime", CALL_JAVA, true},
    {"date_format", "date_format", CALL_JAVA_FMT2, true},
};

static const call_rule *call_rule_of(const rw *r, size_t i)
{
    bool java = backticks(r->d);
    if (r->d == SILT_DIALECT_RISINGWAVE)
        return NULL; /* PostgreSQL's functions: DuckDB's namesakes agree or fail loudly */
    for (size_t k = 0; k < sizeof CALLS / sizeof CALLS[0]; k++)
        if (CALLS[k].java == java && word_is(r, i, CALLS[k].name))
            return &CALLS[k];
    return NULL;
}

/* The tokens of the argument list of the call whose '(' is at `open`:
 * argument k spans [a[k], a[k+1]-1) (the -1 skips the comma); *close is the
 * ')'. false when the list does not close or has more than `cap` arguments. */
static bool split_args(const rw *r, size_t open, size_t *a, size_t cap, size_t *nargs, size_t *close)
{
    int depth = 0;
    size_t n = 0;
    a[n++] = open + 1;
    for (size_t i = open; i < r->n; i++) {
        if (r->t[i].kind != SILT_TOK_PUNCT)
            continue;
        char c = r->sql[r->t[i].off];
        if (c == '(' || c == '[' || c == '{')
            depth++;
        else if ((c == ')' || c == ']' || c == '}') && --depth == 0) {
            a[n] = i + 1;
            *close = i;
            *nargs = next_sig(r, open) == i ? 0 : n;
            return true;
        } else if (c == ',' && depth == 1) {
            if (n + 1 >= cap)
                return false;
            a[n++] = i + 1;
        }
    }
    return false;
}

#define MAX_ARGS 64

typedef struct call {
    const call_rule *rule;
    size_t a[MAX_ARGS + 1], nargs, close;
} call;

static int emit_arg(silt_buf *o, rw *r, const call *c, size_t k)
{
    return emit_range(o, r, c->a[k], c->a[k + 1] - 1);
}

/* A pattern argument that is one string literal is translated now, so a
 * specifier DuckDB cannot express is refused by the rewrite (at `silt add`,
 * before anything runs); any other expression is translated at bind time. */
static int check_pattern(rw *r, const call *c, size_t k)
{
    size_t lit = next_sig(r, c->a[k] - 1);
    if (lit >= r->n || r->t[lit].kind != SILT_TOK_STRING || next_sig(r, lit) != c->a[k + 1] - 1)
        return 0;
    char *v = silt_compat_string_value(r->d, r->sql + r->t[lit].off, r->t[lit].len);
    if (!v)
        return silt_err(SILT_ENOMEM, "out of memory");
    char *t = NULL;
    int rc = backticks(r->d) ? silt_compat_java_to_strftime(v, &t) : silt_compat_chrono_to_strftime(v, &t);
    free(v);
    free(t);
    return rc ? silt_err_context(rc, "%s", c->rule->name) : 0;
}

static int emit_wrapped(silt_buf *o, rw *r, const call *c, size_t k, const char *fn)
{
    int rc = check_pattern(r, c, k);
    if (rc)
        return rc;
    rc = silt_buf_printf(o, "%s(", fn);
    if (!rc)
        rc = emit_arg(o, r, c, k);
    return rc ? rc : silt_buf_putc(o, ')');
}

/* silt_df_X(arg) or silt_df_X_fmt(arg, [silt_chrono_fmt(f1), …]) */
static int emit_df_ts(silt_buf *o, rw *r, const call *c)
{
    bool fmt = c->nargs > 1;
    int rc = silt_buf_printf(o, "silt_df_%s%s(", c->rule->target, fmt ? "_fmt" : "");
    if (!rc && c->nargs)
        rc = emit_arg(o, r, c, 0);
    if (!fmt)
        return rc ? rc : silt_buf_putc(o, ')');
    if (!rc)
        rc = silt_buf_puts(o, ", [");
    for (size_t k = 1; !rc && k < c->nargs; k++) {
        rc = k > 1 ? silt_buf_puts(o, ", ") : 0;
        if (!rc)
            rc = emit_wrapped(o, r, c, k, "silt_chrono_fmt");
    }
    return rc ? rc : silt_buf_puts(o, "])");
}

/* silt_java_X_now(), silt_java_X(a), silt_java_X_fmt(a, silt_java_fmt(f));
 * date_format(a, f) → silt_java_date_format(a, silt_java_fmt(f)). */
static int emit_java(silt_buf *o, rw *r, const call *c)
{
    bool fmt2 = c->rule->kind == CALL_JAVA_FMT2;
    const char *suffix = c->nargs == 0 ? "_now" : c->nargs == 2 && !fmt2 ? "_fmt" : "";
    int rc = silt_buf_printf(o, "silt_java_%s%s(", c->rule->target, suffix);
    for (size_t k = 0; !rc && k < c->nargs; k++) {
        rc = k ? silt_buf_puts(o, ", ") : 0;
        if (!rc)
            rc = k == 1 ? emit_wrapped(o, r, c, k, "silt_java_fmt") : emit_arg(o, r, c, k);
    }
    return rc ? rc : silt_buf_putc(o, ')');
}

int silt_compat_arrow_type(const char *arrow, char **out);

/* arrow_cast(x, 'T') → CAST(x AS <type>) */
static int emit_arrow_cast(silt_buf *o, rw *r, const call *c)
{
    size_t lit = c->nargs == 2 ? next_sig(r, c->a[1] - 1) : r->n;
    if (lit >= r->n || r->t[lit].kind != SILT_TOK_STRING || next_sig(r, lit) != c->close)
        return silt_err(SILT_EINVAL, "arrow_cast: the type must be one string literal (arrow_cast(value, 'Int64'))");
    char *v = silt_compat_string_value(r->d, r->sql + r->t[lit].off, r->t[lit].len);
    char *type = NULL;
    int rc = v ? silt_compat_arrow_type(v, &type) : silt_err(SILT_ENOMEM, "out of memory");
    free(v);
    if (rc)
        return rc;
    rc = silt_buf_puts(o, "CAST(");
    if (!rc)
        rc = emit_arg(o, r, c, 0);
    if (!rc)
        rc = silt_buf_printf(o, " AS %s)", type);
    free(type);
    r->st.arrow_casts++;
    return rc;
}

/* A call at word i (its '(' at `open`): emitted, *next = the token after ')'.
 * 1 when the call is not one of the rules (emit the word as is). */
static int emit_call(silt_buf *o, rw *r, size_t i, size_t open, size_t *next)
{
    call c;
    c.rule = call_rule_of(r, i);
    if (!c.rule || !split_args(r, open, c.a, MAX_ARGS, &c.nargs, &c.close))
        return 1;
    *next = c.close + 1;
    r->st.renamed++;
    switch (c.rule->kind) {
    case CALL_DF_TS: return emit_df_ts(o, r, &c);
    case CALL_DF_PLAIN: {
        int rc = silt_buf_printf(o, "silt_df_%s", c.rule->target);
        return rc ? rc : emit_range(o, r, open, *next);
    }
    case CALL_ARROW_CAST: return emit_arrow_cast(o, r, &c);
    default: return emit_java(o, r, &c);
    }
}

static int emit_word(silt_buf *o, rw *r, size_t i, size_t *next)
{
    size_t nx = next_sig(r, i);
    size_t pv = prev_sig(r, i);
    bool qualified = pv != SIZE_MAX && is_punct(r, pv, '.');
    if (is_punct(r, nx, '(') && !qualified) {
        int rc = emit_call(o, r, i, nx, next);
        if (rc <= 0)
            return rc;
    }
    *next = i + 1;
    if (!is_punct(r, nx, '(') && word_in(r, i, RESERVED) && value_position(r, i)) {
        r->st.quoted++;
        int rc = silt_buf_putc(o, '"');
        if (!rc)
            rc = emit(o, r, i);
        return rc ? rc : silt_buf_putc(o, '"');
    }
    return emit(o, r, i);
}

static int emit_range(silt_buf *o, rw *r, size_t i, size_t end)
{
    int rc = 0;
    while (!rc && i < end) {
        size_t next = i + 1;
        switch (r->t[i].kind) {
        case SILT_TOK_WORD: rc = emit_word(o, r, i, &next); break;
        case SILT_TOK_BACKTICK: rc = emit_backtick(o, r, i); break;
        case SILT_TOK_STRING: rc = spark_strings(r->d) ? emit_spark_string(o, r, i) : emit(o, r, i); break;
        default: rc = emit(o, r, i); break;
        }
        i = next;
    }
    return rc;
}

int silt_compat_rewrite(silt_dialect d, const char *sql, char **out, silt_compat_stats *stats)
{
    *out = NULL;
    rw r = {.d = d, .sql = sql};
    if (stats)
        memset(stats, 0, sizeof *stats);
    if (d == SILT_DIALECT_DUCKDB) {
        *out = strdup(sql);
        return *out ? 0 : silt_err(SILT_ENOMEM, "out of memory");
    }
    int rc = silt_compat_tokenize(d, sql, &r.t, &r.n);
    if (rc)
        return rc;
    silt_buf o = SILT_BUF_INIT;
    rc = emit_range(&o, &r, 0, r.n);
    if (!rc)
        rc = silt_buf_putc(&o, '\0');
    free(r.t);
    if (rc) {
        silt_buf_free(&o);
        return rc == SILT_ENOMEM ? silt_err(SILT_ENOMEM, "out of memory") : rc;
    }
    if (stats)
        *stats = r.st;
    *out = o.data;
    return 0;
}
