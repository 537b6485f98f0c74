/* compat_fmt.c — datetime pattern translators of the compatibility layer
 * (compat.h): chrono (DataFusion) and Java DateTimeFormatter / Spark
 * datetime patterns (Spark, Flink) to DuckDB's strftime / strptime
 * specifiers, and the C scalar functions silt_chrono_fmt / silt_java_fmt
 * that apply them inside a query.
 *
 * Invariants:
 *  - a translation is total or refused: a specifier DuckDB cannot express
 *    is an error naming it, never silently dropped or approximated;
 *  - literal text of a pattern stays literal ('%' becomes "%%");
 *  - the scalar functions are consistent (not volatile), so DuckDB folds
 *    them on a constant pattern at bind time, where strptime needs it.
 */
#include "engine/compat.h"
#include "engine/engine_internal.h"
#include "util/buf.h"
#include "util/error.h"

#include <stdlib.h>
#include <string.h>

/* ---- chrono ------------------------------------------------------------- */

/* chrono's plain specifiers and their DuckDB spelling (docs.rs chrono::format::strftime). */
static const char *const CHRONO[128] = {
    ['Y'] = "%Y", ['y'] = "%y", ['m'] = "%m", ['b'] = "%b", ['h'] = "%b", ['B'] = "%B",
    ['d'] = "%d", ['e'] = "%-d", ['a'] = "%a", ['A'] = "%A", ['w'] = "%w", ['U'] = "%U",
    ['W'] = "%W", ['j'] = "%j", ['D'] = "%m/%d/%y", ['x'] = "%m/%d/%y", ['F'] = "%Y-%m-%d",
    ['v'] = "%-d-%b-%Y", ['H'] = "%H", ['k'] = "%-H", ['I'] = "%I", ['l'] = "%-I", ['P'] = "%p",
    ['p'] = "%p", ['M'] = "%M", ['S'] = "%S", ['f'] = "%n", ['R'] = "%H:%M", ['T'] = "%H:%M:%S",
    ['X'] = "%H:%M:%S", ['r'] = "%I:%M:%S %p", ['Z'] = "%Z", ['z'] = "%z",
    ['c'] = "%a %b %-d %H:%M:%S %Y", ['+'] = "%Y-%m-%dT%H:%M:%S.%n%z", ['t'] = "\t", ['n'] = "\n",
    ['%'] = "%%",
};

/* Specifiers with a '-' (no padding) form in DuckDB. */
static bool has_unpadded(char c) { return c && strchr("dmHIMSjy", c) != NULL; }

/* One chrono specifier at s (after '%'): appends its translation, returns
 * its length, 0 when it is not one DuckDB can express. */
static size_t chrono_spec(const char *s, silt_buf *o)
{
    static const struct { const char *in, *out; } LONG[] = {
        {".3f", ".%g"}, {".6f", ".%f"}, {".9f", ".%n"}, {".f", ".%n"}, {"3f", "%g"},
        {"6f", "%f"}, {"9f", "%n"}, {":::z", "%z"}, {"::z", "%z"}, {":z", "%z"}, {"#z", "%z"},
    };
    for (size_t i = 0; i < sizeof LONG / sizeof LONG[0]; i++) {
        size_t n = strlen(LONG[i].in);
        if (strncmp(s, LONG[i].in, n) == 0)
            return silt_buf_puts(o, LONG[i].out) ? 0 : n;
    }
    if ((s[0] == '-' || s[0] == '_') && has_unpadded(s[1]))
        return silt_buf_printf(o, "%%-%c", s[1]) ? 0 : 2;
    if (s[0] == '0' && has_unpadded(s[1]))
        return silt_buf_printf(o, "%%%c", s[1]) ? 0 : 2;
    unsigned char c = (unsigned char)s[0];
    if (c < 128 && CHRONO[c])
        return silt_buf_puts(o, CHRONO[c]) ? 0 : 1;
    return 0;
}

int silt_compat_chrono_to_strftime(const char *fmt, char **out)
{
    *out = NULL;
    silt_buf o = SILT_BUF_INIT;
    int rc = 0;
    for (const char *p = fmt; !rc && *p; p++) {
        if (*p != '%') {
            rc = silt_buf_putc(&o, *p);
            continue;
        }
        size_t n = chrono_spec(p + 1, &o);
        if (n == 0) {
            int len = p[1] ? ((p[1] == '-' || p[1] == '_' || p[1] == '0' || p[1] == '.' || p[1] == ':' ||
                              p[1] == '#') && p[2] ? 3 : 2) : 1;
            rc = silt_err(SILT_EINVAL, "unsupported chrono specifier '%.*s' in '%s'", len, p, fmt);
        }
        p += n;
    }
    if (!rc)
        rc = silt_buf_putc(&o, '\0');
    if (rc) {
        silt_buf_free(&o);
        return rc == SILT_ENOMEM ? silt_err(SILT_ENOMEM, "out of memory") : rc;
    }
    *out = o.data;
    return 0;
}

/* ---- Java / Spark ------------------------------------------------------ */

/* Letters DuckDB has no specifier for, with their meaning (Spark's
 * sql-ref-datetime-pattern.md). */
static const char *java_unsupported(char c)
{
    switch (c) {
    case 'G': return "era";
    case 'Q': case 'q': return "quarter";
    case 'F': return "aligned week of month";
    case 'K': return "hour of am-pm (0-11)";
    case 'k': return "clock hour of day (1-24)";
    case 'V': return "time-zone id";
    case 'O': return "localized zone offset";
    case 'w': return "week of week-based year";
    case 'W': return "week of month";
    case 'u': return "day of week number";
    case 'e': case 'c': return "localized day of week";
    case 'Y': return "week-based year";
    case 'n': return "nano of second";
    case 'N': return "nano of day";
    case 'A': return "milli of day";
    case 'B': return "period of day";
    default: return "unknown letter";
    }
}

/* The DuckDB specifier of a run of n letters c, or NULL. */
static const char *java_run(char c, size_t n)
{
    switch (c) {
    case 'y': return n == 2 ? "%y" : "%Y";
    case 'M': case 'L': return n == 1 ? "%-m" : n == 2 ? "%m" : n == 3 ? "%b" : n == 4 ? "%B" : NULL;
    case 'd': return n == 1 ? "%-d" : n == 2 ? "%d" : NULL;
    case 'D': return n == 1 ? "%-j" : n == 3 ? "%j" : NULL;
    case 'E': return n <= 3 ? "%a" : n == 4 ? "%A" : NULL;
    case 'a': return n == 1 ? "%p" : NULL;
    case 'h': return n == 1 ? "%-I" : n == 2 ? "%I" : NULL;
    case 'H': return n == 1 ? "%-H" : n == 2 ? "%H" : NULL;
    case 'm': return n == 1 ? "%-M" : n == 2 ? "%M" : NULL;
    case 's': return n == 1 ? "%-S" : n == 2 ? "%S" : NULL;
    case 'S': return n == 3 ? "%g" : n == 6 ? "%f" : n == 9 ? "%n" : NULL;
    case 'X': case 'x': case 'Z': return n <= 3 ? "%z" : NULL;
    case 'z': return n <= 3 ? "%Z" : NULL;
    default: return NULL;
    }
}

static bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

/* 'text' at *pp (after the opening quote): appends the text; '' inside is a quote. */
static int java_quoted(const char **pp, const char *fmt, silt_buf *o)
{
    const char *p = *pp;
    for (;;) {
        if (!*p)
            return silt_err(SILT_EINVAL, "unterminated quoted text in pattern '%s'", fmt);
        if (*p == '\'' && p[1] == '\'') {
            p += 2;
            if (silt_buf_putc(o, '\''))
                return SILT_ENOMEM;
            continue;
        }
        if (*p == '\'')
            break;
        if ((*p == '%' && silt_buf_putc(o, '%')) || silt_buf_putc(o, *p))
            return SILT_ENOMEM;
        p++;
    }
    *pp = p;
    return 0;
}

static int java_step(const char **pp, const char *fmt, silt_buf *o)
{
    const char *p = *pp;
    if (*p == '\'' && p[1] == '\'') {
        *pp = p + 1;
        return silt_buf_putc(o, '\'');
    }
    if (*p == '\'') {
        *pp = p + 1;
        return java_quoted(pp, fmt, o);
    }
    if (*p == '[' || *p == ']')
        return silt_err(SILT_EINVAL, "unsupported optional section '%c' in pattern '%s'", *p, fmt);
    if (!is_letter(*p))
        return *p == '%' ? silt_buf_puts(o, "%%") : silt_buf_putc(o, *p);
    size_t n = 1;
    while (p[n] == *p)
        n++;
    const char *spec = java_run(*p, n);
    if (!spec) {
        const char *why = java_run(*p, 1) || java_run(*p, 2) || java_run(*p, 3) ? "unsupported width"
                                                                              : java_unsupported(*p);
        return silt_err(SILT_EINVAL, "unsupported pattern letter '%.*s' (%s) in '%s'", (int)n, p, why, fmt);
    }
    *pp = p + n - 1;
    return silt_buf_puts(o, spec);
}

int silt_compat_java_to_strftime(const char *fmt, char **out)
{
    *out = NULL;
    silt_buf o = SILT_BUF_INIT;
    int rc = 0;
    for (const char *p = fmt; !rc && *p; p++)
        rc = java_step(&p, fmt, &o);
    if (!rc)
        rc = silt_buf_putc(&o, '\0');
    if (rc) {
        silt_buf_free(&o);
        return rc == SILT_ENOMEM ? silt_err(SILT_ENOMEM, "out of memory") : rc;
    }
    *out = o.data;
    return 0;
}

/* ---- the scalar functions ---------------------------------------------- */

typedef int (*translate_fn)(const char *, char **);

static void fmt_function(duckdb_function_info info, duckdb_data_chunk input, duckdb_vector output)
{
    translate_fn tr = (translate_fn)duckdb_scalar_function_get_extra_info(info);
    idx_t n = duckdb_data_chunk_get_size(input);
    duckdb_vector in = duckdb_data_chunk_get_vector(input, 0);
    duckdb_string_t *vals = (duckdb_string_t *)duckdb_vector_get_data(in);
    uint64_t *valid = duckdb_vector_get_validity(in);
    for (idx_t r = 0; r < n; r++) {
        if (valid && !duckdb_validity_row_is_valid(valid, r)) {
            duckdb_vector_ensure_validity_writable(output);
            duckdb_validity_set_row_invalid(duckdb_vector_get_validity(output), r);
            continue;
        }
        uint32_t len = duckdb_string_t_length(vals[r]);
        char *s = malloc((size_t)len + 1);
        char *t = NULL;
        int rc = s ? 0 : silt_err(SILT_ENOMEM, "out of memory");
        if (s) {
            memcpy(s, duckdb_string_t_data(&vals[r]), len);
            s[len] = '\0';
            rc = strlen(s) == len ? tr(s, &t) : silt_err(SILT_EINVAL, "a pattern cannot hold a NUL byte");
        }
        free(s);
        if (rc) {
            duckdb_scalar_function_set_error(info, silt_error_last());
            return;
        }
        duckdb_vector_assign_string_element(output, r, t);
        free(t);
    }
}

static int register_fmt(silt_engine *e, const char *name, translate_fn tr)
{
    duckdb_scalar_function f = duckdb_create_scalar_function();
    duckdb_logical_type v = duckdb_create_logical_type(DUCKDB_TYPE_VARCHAR);
    duckdb_scalar_function_set_name(f, name);
    duckdb_scalar_function_add_parameter(f, v);
    duckdb_scalar_function_set_return_type(f, v);
    duckdb_scalar_function_set_extra_info(f, (void *)tr, NULL);
    duckdb_scalar_function_set_function(f, fmt_function);
    duckdb_state st = duckdb_register_scalar_function(silt_engine_conn(e), f);
    duckdb_destroy_logical_type(&v);
    duckdb_destroy_scalar_function(&f);
    return st == DuckDBError ? silt_err(SILT_EINTERNAL, "engine: cannot register %s", name) : 0;
}

int silt_compat_register_fmt(silt_engine *e);
int silt_compat_register_fmt(silt_engine *e)
{
    int rc = register_fmt(e, "silt_chrono_fmt", silt_compat_chrono_to_strftime);
    return rc ? rc : register_fmt(e, "silt_java_fmt", silt_compat_java_to_strftime);
}
