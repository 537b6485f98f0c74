/* fuzz_sql_rewrite.c — libFuzzer target for the token rewrite of the SQL
 * compatibility layer (engine/compat.h), which runs on the queries of
 * every manifest whose engine is not DuckDB.
 *
 * The first byte picks the dialect, the rest (to the first NUL) is the
 * query. Invariants checked: no crash; an error is SILT_EINVAL with a
 * one-line message; on success the comments of the input appear in the
 * output unchanged and in order, and the values of its string literals
 * appear in order among the output's literals, missing exactly the
 * arrow_cast type literals the rewrite reports consuming.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/compat.h"
#include "util/error.h"

typedef struct item {
    char *text;
    int kind;
} item;

static size_t items(silt_dialect d, const char *sql, item **out)
{
    silt_sqltok *t = NULL;
    size_t n = 0, m = 0;
    *out = NULL;
    if (silt_compat_tokenize(d, sql, &t, &n) < 0)
        abort(); /* the output of a rewrite always tokenizes */
    *out = calloc(n + 1, sizeof **out);
    if (!*out)
        abort();
    for (size_t i = 0; i < n; i++) {
        if (t[i].kind == SILT_TOK_COMMENT)
            (*out)[m++] = (item){strndup(sql + t[i].off, t[i].len), 0};
        else if (t[i].kind == SILT_TOK_STRING)
            (*out)[m++] = (item){silt_compat_string_value(d, sql + t[i].off, t[i].len), 1};
    }
    free(t);
    return m;
}

static void free_items(item *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i].text);
    free(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 4096)
        return 0;
    silt_dialect d = (silt_dialect)(data[0] % 5);
    char *sql = strndup((const char *)data + 1, size - 1);
    if (!sql)
        return 0;
    char *out = NULL;
    silt_compat_stats st;
    int rc = silt_compat_rewrite(d, sql, &out, &st);
    if (rc != 0) {
        if (rc != SILT_EINVAL || strchr(silt_error_last(), '\n'))
            abort();
        free(sql);
        return 0;
    }
    if (d == SILT_DIALECT_DUCKDB) {
        if (strcmp(out, sql) != 0)
            abort(); /* DuckDB's own SQL is never rewritten */
        free(out);
        free(sql);
        return 0;
    }
    item *in = NULL, *got = NULL;
    size_t nin = items(d, sql, &in);
    size_t ngot = items(SILT_DIALECT_DATAFUSION, out, &got) /* DuckDB's tokens */;
    size_t j = 0, missing = 0;
    for (size_t i = 0; i < nin; i++) {
        if (!in[i].text)
            continue;
        size_t k = j;
        while (k < ngot && !(got[k].kind == in[i].kind && got[k].text && strcmp(got[k].text, in[i].text) == 0))
            k++;
        if (k == ngot) {
            if (in[i].kind == 0)
                abort(); /* a comment lost or changed */
            missing++;
        } else {
            j = k + 1;
        }
    }
    if (missing > st.arrow_casts)
        abort(); /* a literal lost or changed */
    free_items(in, nin);
    free_items(got, ngot);
    free(out);
    free(sql);
    return 0;
}
