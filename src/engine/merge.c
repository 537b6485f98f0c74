/* merge.c — ODF merge strategies as set-based SQL over DuckDB TEMP tables.
 *
 * Role: turns a batch of read + preprocessed rows (TEMP TABLE `input`) and the
 * previous merge state into the changelog rows to append (`out`) and the new
 * state (`out_state`). The contract, the state formats and the exact
 * semantics are documented in merge.h.
 *
 * Invariants:
 *  - No C loop ever walks data rows: every step is one SQL statement whose
 *    cost is linear (or n log n) in |input| + |state|. Input order is the
 *    input's rowid; windows without PARTITION BY are avoided (only used to
 *    densify rowids when the input had deletions, ChangelogStream only).
 *  - Work tables are TEMP tables named __silt_merge_*; they are dropped on
 *    every exit path. Results are built under work names and renamed to
 *    `out`/`out_state` only at the very end, so a failed merge leaves nothing.
 *  - All produced columns carry the input's types: the previous state is used
 *    directly only if its columns have exactly those types, otherwise it is
 *    copied into an empty table created from the input's schema (the INSERT
 *    converts Parquet-widened types back; missing columns stay NULL).
 *  - Input copies are avoided in the common case: Ledger/Snapshot/Upsert only
 *    materialize a deduplicated input when some key occurs more than once.
 *  - SQL text is built in a sticky-error buffer (msql); every identifier goes
 *    through silt_sql_ident and every literal through silt_sql_str.
 */
#include "engine/merge.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "odf/odf_types.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/timeutil.h"

#define W_PREV "__silt_merge_prev"
#define W_NEW "__silt_merge_new"
#define W_SRC "__silt_merge_src"
#define W_OUT "__silt_merge_out"
#define W_STATE "__silt_merge_state"
#define W_CHK "__silt_merge_chk"

/* ---- sticky-error SQL builder ------------------------------------------ */

typedef struct msql {
    silt_buf b;
    int err;
} msql;

static void mq_puts(msql *q, const char *s)
{
    if (!q->err)
        q->err = silt_buf_puts(&q->b, s);
}

static void mq_printf(msql *q, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void mq_printf(msql *q, const char *fmt, ...)
{
    if (q->err)
        return;
    va_list ap;
    va_start(ap, fmt);
    char tmp[512];
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) {
        q->err = silt_err(SILT_EINTERNAL, "merge: format error");
        return;
    }
    if ((size_t)n < sizeof tmp) {
        q->err = silt_buf_append(&q->b, tmp, (size_t)n);
        return;
    }
    q->err = silt_buf_reserve(&q->b, (size_t)n + 1);
    if (q->err)
        return;
    va_start(ap, fmt);
    vsnprintf(q->b.data + q->b.len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    q->b.len += (size_t)n;
}

static void mq_reset(msql *q)
{
    silt_buf_clear(&q->b);
    q->err = 0;
}

/* ---- merge context ------------------------------------------------------ */

typedef struct mcol {
    char *name;  /* as DuckDB reports it; owned */
    char *qname; /* quoted identifier; owned */
    char *type;  /* DuckDB type text; owned */
} mcol;

typedef struct mctx {
    silt_engine *e;
    const silt_merge_spec *s;
    const char *et_name, *op_name;
    char *qin, *qop_out; /* quoted input table, quoted output op column name */
    mcol *in;            /* input columns */
    size_t nin;
    size_t et;          /* index of the event time column in `in` */
    long op;            /* index of the op column in `in`, -1 if none */
    size_t *data;       /* indices of the data columns (not op, not event time) */
    size_t ndata;
    size_t *pk; /* indices of the primary key columns */
    size_t *cmp; /* Snapshot/Upsert compare columns */
    size_t ncmp;
    bool cmp_et; /* the event time is in the compare set (with the NULL rule) */
    const char *P; /* quoted previous state relation (user table or W_PREV) */
    char *qprev;   /* quoted user prev_state, NULL if none */
    const char *src; /* ChangelogStream: relation with __silt_r positions */
    char *src_owned;
    const char *newrel; /* Ledger/Snapshot: deduplicated input rows with __silt_r */
    char *newrel_owned;
} mctx;

static void free_cols(mcol *c, size_t n)
{
    for (size_t i = 0; c && i < n; i++) {
        free(c[i].name);
        free(c[i].qname);
        free(c[i].type);
    }
    free(c);
}

typedef struct cols_acc {
    mcol *c;
    size_t n, cap;
} cols_acc;

static int describe_row(void *ctx, size_t ncols, const char *const *names, const char *const *values)
{
    cols_acc *a = ctx;
    const char *name = NULL, *type = NULL;
    for (size_t i = 0; i < ncols; i++) {
        if (!strcmp(names[i], "column_name"))
            name = values[i];
        else if (!strcmp(names[i], "column_type"))
            type = values[i];
    }
    if (!name || !type)
        return silt_err(SILT_EINTERNAL, "merge: unexpected DESCRIBE output");
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 16;
        mcol *c = realloc(a->c, cap * sizeof *c);
        if (!c)
            return silt_err(SILT_ENOMEM, "out of memory");
        a->c = c;
        a->cap = cap;
    }
    mcol *m = &a->c[a->n];
    m->name = strdup(name);
    m->type = strdup(type);
    m->qname = silt_sql_ident(name);
    a->n++;
    if (!m->name || !m->type || !m->qname)
        return silt_err(SILT_ENOMEM, "out of memory");
    return 0;
}

/* Columns of relation `qrel` (quoted). Caller frees with free_cols. */
static int describe(silt_engine *e, const char *qrel, const char *what, mcol **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    msql q = {SILT_BUF_INIT, 0};
    mq_printf(&q, "DESCRIBE %s", qrel);
    cols_acc a = {NULL, 0, 0};
    int rc = q.err ? q.err : silt_engine_query_rows(e, q.b.data, describe_row, &a);
    silt_buf_free(&q.b);
    if (rc) {
        free_cols(a.c, a.n);
        if (rc == SILT_ENOMEM)
            return rc;
        return silt_err_context(rc, "merge: cannot read the %s table", what);
    }
    *out = a.c;
    *n = a.n;
    return 0;
}

static long find_col(const mcol *c, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcasecmp(c[i].name, name))
            return (long)i;
    return -1;
}

static void ctx_free(mctx *c)
{
    free(c->qin);
    free(c->qop_out);
    free_cols(c->in, c->nin);
    free(c->data);
    free(c->pk);
    free(c->cmp);
    free(c->qprev);
    free(c->src_owned);
    free(c->newrel_owned);
}

#define DROP_WORK_SQL                                                                                              \
    "DROP TABLE IF EXISTS " W_PREV "; DROP TABLE IF EXISTS " W_NEW "; DROP TABLE IF EXISTS " W_SRC                 \
    "; DROP TABLE IF EXISTS " W_OUT "; DROP TABLE IF EXISTS " W_STATE "; DROP TABLE IF EXISTS " W_CHK ";"

/* Drops all work tables after a failure with code rc; a failure of the drop
 * itself must not mask the original message. */
static void drop_work(silt_engine *e, int rc)
{
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", silt_error_last());
    if (silt_engine_exec(e, DROP_WORK_SQL))
        silt_err(rc, "%s", msg);
}

/* ---- SQL fragments ------------------------------------------------------ */

/* "<pfx>c1, <pfx>c2" for the event time + data columns (the state / output
 * column order). pfx may be "" or e.g. "o.". */
static void put_row_cols(msql *q, const mctx *c, const char *pfx)
{
    mq_printf(q, "%s%s", pfx, c->in[c->et].qname);
    for (size_t i = 0; i < c->ndata; i++)
        mq_printf(q, ", %s%s", pfx, c->in[c->data[i]].qname);
}

static void put_pk_cols(msql *q, const mctx *c, const char *pfx)
{
    for (size_t i = 0; i < c->s->npk; i++)
        mq_printf(q, "%s%s%s", i ? ", " : "", pfx, c->in[c->pk[i]].qname);
}

/* a.k1 = b.k1 AND … */
static void put_pk_eq(msql *q, const mctx *c, const char *a, const char *b)
{
    for (size_t i = 0; i < c->s->npk; i++) {
        const char *k = c->in[c->pk[i]].qname;
        mq_printf(q, "%s%s.%s = %s.%s", i ? " AND " : "", a, k, b, k);
    }
}

/* SQL expression rendering the key as "(country='CA', city='Vancouver')". */
static void put_key_text(msql *q, const mctx *c, const char *pfx)
{
    mq_puts(q, "('(' || ");
    for (size_t i = 0; i < c->s->npk; i++) {
        const mcol *k = &c->in[c->pk[i]];
        char lbl[1024];
        snprintf(lbl, sizeof lbl, "%s%s=", i ? ", " : "", c->s->primary_key[i]);
        char *ql = silt_sql_str(lbl);
        if (!ql) {
            if (!q->err)
                q->err = SILT_ENOMEM;
            return;
        }
        mq_printf(q, "%s || coalesce('''' || CAST(%s%s AS VARCHAR) || '''', 'NULL') || ", ql, pfx, k->qname);
        free(ql);
    }
    mq_puts(q, "')')");
}

/* OR-chain "changed" predicate between o.* and n.* over the compare set. */
static void put_changed(msql *q, const mctx *c)
{
    mq_puts(q, "(false");
    if (c->cmp_et) {
        const char *k = c->in[c->et].qname;
        mq_printf(q, " OR (n.%s IS NOT NULL AND o.%s IS DISTINCT FROM n.%s)", k, k, k);
    }
    for (size_t i = 0; i < c->ncmp; i++) {
        const char *k = c->in[c->cmp[i]].qname;
        mq_printf(q, " OR o.%s IS DISTINCT FROM n.%s", k, k);
    }
    mq_puts(q, ")");
}

/* ---- queries ------------------------------------------------------------ */

typedef struct first_row {
    char *v[4];
    size_t n;
    bool found;
} first_row;

static int first_row_cb(void *ctx, size_t ncols, const char *const *names, const char *const *values)
{
    (void)names;
    first_row *f = ctx;
    f->found = true;
    for (size_t i = 0; i < ncols && i < 4; i++) {
        if (values[i] && !(f->v[i] = strdup(values[i])))
            return silt_err(SILT_ENOMEM, "out of memory");
        f->n = i + 1;
    }
    return 1; /* stop after the first row */
}

static void first_row_free(first_row *f)
{
    for (size_t i = 0; i < 4; i++)
        free(f->v[i]);
}

/* Runs q (then resets it); fills *f with the first row (if any). */
static int query_first(mctx *c, msql *q, first_row *f)
{
    memset(f, 0, sizeof *f);
    if (q->err)
        return q->err;
    int rc = silt_engine_query_rows(c->e, q->b.data, first_row_cb, f);
    mq_reset(q);
    if (rc == 1)
        rc = 0;
    return rc;
}

static int exec_q(mctx *c, msql *q)
{
    if (q->err)
        return q->err;
    int rc = silt_engine_exec(c->e, q->b.data);
    mq_reset(q);
    return rc;
}

/* 1-based position of the input row with this rowid (error paths only). */
static int input_row_number(mctx *c, const char *rowid, uint64_t *out)
{
    msql q = {SILT_BUF_INIT, 0};
    mq_printf(&q, "SELECT count(*) + 1 FROM %s WHERE rowid < %s", c->qin, rowid);
    int rc = q.err ? q.err : silt_engine_query_u64(c->e, out, q.b.data);
    silt_buf_free(&q.b);
    return rc;
}

/* ---- validation --------------------------------------------------------- */

static int check_null_keys(mctx *c, msql *q)
{
    mq_printf(q, "SELECT CAST(rowid AS VARCHAR), CASE");
    for (size_t i = 0; i < c->s->npk; i++) {
        char *lit = silt_sql_str(c->s->primary_key[i]);
        if (!lit)
            return SILT_ENOMEM;
        mq_printf(q, " WHEN %s IS NULL THEN %s", c->in[c->pk[i]].qname, lit);
        free(lit);
    }
    mq_printf(q, " END FROM %s WHERE ", c->qin);
    for (size_t i = 0; i < c->s->npk; i++)
        mq_printf(q, "%s%s IS NULL", i ? " OR " : "", c->in[c->pk[i]].qname);
    mq_puts(q, " ORDER BY rowid LIMIT 1");
    first_row f;
    int rc = query_first(c, q, &f);
    if (!rc && f.found) {
        uint64_t row = 0;
        rc = input_row_number(c, f.v[0] ? f.v[0] : "0", &row);
        if (!rc)
            rc = silt_err(SILT_EINVAL, "NULL primary key column '%s' in row %llu", f.v[1] ? f.v[1] : "?",
                          (unsigned long long)row);
    }
    first_row_free(&f);
    return rc;
}

static bool is_int_type(const char *t)
{
    static const char *const ok[] = {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT",
                                     "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT", "UHUGEINT"};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
        if (!strcmp(t, ok[i]))
            return true;
    return false;
}

/* op column: integer type, values 0..3, not NULL. */
static int check_ops(mctx *c, msql *q)
{
    const mcol *op = &c->in[c->op];
    if (!is_int_type(op->type))
        return silt_err(SILT_EINVAL, "op column '%s' has type %s, expected an integer type", c->op_name, op->type);
    mq_printf(q, "SELECT CAST(rowid AS VARCHAR), CAST(%s AS VARCHAR) FROM %s WHERE %s IS NULL OR %s NOT BETWEEN 0 AND 3 "
                 "ORDER BY rowid LIMIT 1",
              op->qname, c->qin, op->qname, op->qname);
    first_row f;
    int rc = query_first(c, q, &f);
    if (!rc && f.found) {
        uint64_t row = 0;
        rc = input_row_number(c, f.v[0] ? f.v[0] : "0", &row);
        if (!rc)
            rc = silt_err(SILT_EINVAL, "invalid op %s in row %llu (expected 0..3)", f.v[1] ? f.v[1] : "NULL",
                          (unsigned long long)row);
    }
    first_row_free(&f);
    return rc;
}

/* Ledger/Snapshot: c->newrel = the input rows with __silt_r (input order),
 * fully identical duplicates collapsed into their first occurrence; error
 * when a key has several distinct rows. The common case (no duplicate keys)
 * costs one aggregation over the key columns and no copy. */
static int dedupe_input(mctx *c, msql *q)
{
    mq_printf(q, "SELECT 1 FROM %s GROUP BY ", c->qin);
    put_pk_cols(q, c, "");
    mq_puts(q, " HAVING count(*) > 1 LIMIT 1");
    first_row f;
    int rc = query_first(c, q, &f);
    bool dups = f.found;
    first_row_free(&f);
    if (rc)
        return rc;
    if (!dups) {
        mq_printf(q, "(SELECT rowid AS __silt_r, * FROM %s)", c->qin);
        if (q->err)
            return q->err;
        c->newrel_owned = silt_buf_detach(&q->b);
        mq_reset(q);
        if (!c->newrel_owned)
            return SILT_ENOMEM;
        c->newrel = c->newrel_owned;
        return 0;
    }
    mq_printf(q, "CREATE TEMP TABLE " W_NEW " AS SELECT min(rowid) AS __silt_r, ");
    put_row_cols(q, c, "");
    mq_printf(q, " FROM %s GROUP BY ALL", c->qin);
    c->newrel = W_NEW;
    if ((rc = exec_q(c, q)))
        return rc;
    mq_puts(q, "SELECT ");
    put_key_text(q, c, "");
    mq_puts(q, " FROM " W_NEW " GROUP BY ");
    put_pk_cols(q, c, "");
    mq_puts(q, " HAVING count(*) > 1 ORDER BY min(__silt_r) LIMIT 1");
    rc = query_first(c, q, &f);
    if (!rc && f.found)
        rc = silt_err(SILT_EINVAL, "duplicate primary key %s with different values", f.v[0] ? f.v[0] : "?");
    first_row_free(&f);
    return rc;
}

/* ---- previous state ----------------------------------------------------- */

/* Sets c->P: the user's prev_state when its needed columns have exactly the
 * input's types, else a copy converted to them (W_PREV); an empty W_PREV when
 * there is no previous state. keys_only: Ledger state (primary key only). */
static int prepare_prev(mctx *c, msql *q, const char *prev_state, bool keys_only)
{
    if (!prev_state) {
        mq_puts(q, "CREATE TEMP TABLE " W_PREV " AS SELECT ");
        keys_only ? put_pk_cols(q, c, "") : put_row_cols(q, c, "");
        mq_printf(q, " FROM %s LIMIT 0", c->qin);
        c->P = W_PREV;
        return exec_q(c, q);
    }
    c->qprev = silt_sql_ident(prev_state);
    if (!c->qprev)
        return SILT_ENOMEM;
    mcol *st = NULL;
    size_t nst = 0;
    int rc = describe(c->e, c->qprev, "previous state", &st, &nst);
    if (rc)
        return rc;
    /* Needed columns: the key columns, or event time + data columns. */
    size_t nneed = keys_only ? c->s->npk : 1 + c->ndata;
    bool same = true;
    for (size_t i = 0; !rc && i < nneed; i++) {
        size_t ci = keys_only ? c->pk[i] : (i == 0 ? c->et : c->data[i - 1]);
        long si = find_col(st, nst, c->in[ci].name);
        bool is_key = false;
        for (size_t k = 0; k < c->s->npk; k++)
            is_key |= c->pk[k] == ci;
        if (si < 0 && is_key)
            rc = silt_err(SILT_EINVAL, "merge: previous state table '%s' has no primary key column '%s'", prev_state,
                          c->in[ci].name);
        else if (si < 0 || strcmp(st[si].type, c->in[ci].type))
            same = false;
    }
    if (!rc && same) {
        c->P = c->qprev;
    } else if (!rc) {
        mq_puts(q, "CREATE TEMP TABLE " W_PREV " AS SELECT ");
        keys_only ? put_pk_cols(q, c, "") : put_row_cols(q, c, "");
        mq_printf(q, " FROM %s LIMIT 0; INSERT INTO " W_PREV " (", c->qin);
        bool first = true;
        for (size_t i = 0; i < nneed; i++) {
            size_t ci = keys_only ? c->pk[i] : (i == 0 ? c->et : c->data[i - 1]);
            if (find_col(st, nst, c->in[ci].name) < 0)
                continue;
            mq_printf(q, "%s%s", first ? "" : ", ", c->in[ci].qname);
            first = false;
        }
        mq_puts(q, ") SELECT ");
        first = true;
        for (size_t i = 0; i < nneed; i++) {
            size_t ci = keys_only ? c->pk[i] : (i == 0 ? c->et : c->data[i - 1]);
            if (find_col(st, nst, c->in[ci].name) < 0)
                continue;
            mq_printf(q, "%s%s", first ? "" : ", ", c->in[ci].qname);
            first = false;
        }
        mq_printf(q, " FROM %s", c->qprev);
        c->P = W_PREV;
        rc = exec_q(c, q);
        if (rc && rc != SILT_ENOMEM)
            rc = silt_err_context(rc, "merge: previous state table '%s' does not match the input", prev_state);
    }
    free_cols(st, nst);
    return rc;
}

/* ---- strategies --------------------------------------------------------- */

static int merge_append(mctx *c, msql *q)
{
    mq_printf(q, "CREATE TEMP TABLE " W_OUT " AS SELECT CAST(0 AS UTINYINT) AS %s, ", c->qop_out);
    put_row_cols(q, c, "");
    mq_printf(q, " FROM %s ORDER BY rowid", c->qin);
    return exec_q(c, q);
}

static int merge_ledger(mctx *c, msql *q, const char *prev_state)
{
    int rc = check_null_keys(c, q);
    if (!rc)
        rc = dedupe_input(c, q);
    if (!rc)
        rc = prepare_prev(c, q, prev_state, true);
    if (rc)
        return rc;
    mq_printf(q, "CREATE TEMP TABLE " W_OUT " AS SELECT CAST(0 AS UTINYINT) AS %s, ", c->qop_out);
    put_row_cols(q, c, "n.");
    mq_printf(q, " FROM %s n WHERE NOT EXISTS (SELECT 1 FROM %s p WHERE ", c->newrel, c->P);
    put_pk_eq(q, c, "p", "n");
    mq_printf(q, ") ORDER BY n.%s ASC NULLS FIRST, n.__silt_r", c->in[c->et].qname);
    if ((rc = exec_q(c, q)))
        return rc;
    mq_puts(q, "CREATE TEMP TABLE " W_STATE " AS SELECT ");
    put_pk_cols(q, c, "");
    mq_printf(q, " FROM %s UNION ALL SELECT ", c->P);
    put_pk_cols(q, c, "");
    mq_puts(q, " FROM " W_OUT);
    return exec_q(c, q);
}

/* "(SELECT true AS __silt_p, <row cols> FROM P) o" */
static void put_prev_rel(msql *q, const mctx *c, const char *alias)
{
    mq_puts(q, "(SELECT true AS __silt_p, ");
    put_row_cols(q, c, "");
    mq_printf(q, " FROM %s) %s", c->P, alias);
}

/* Projection of the output columns (op excluded) choosing old or new values:
 * old when `old_cond` holds. */
static void put_pick_cols(msql *q, const mctx *c, const char *old_cond)
{
    for (size_t i = 0; i <= c->ndata; i++) {
        const char *k = c->in[i == 0 ? c->et : c->data[i - 1]].qname;
        mq_printf(q, ", CASE WHEN %s THEN o.%s ELSE n.%s END AS %s", old_cond, k, k, k);
    }
}

/* Snapshot/Upsert new state from the changelog just produced: previous rows
 * of keys the changelog did not retract or correct, plus the +A/+C rows.
 * (Costs one scan of the state and an anti-join against `out`, which is
 * usually small, instead of a second join with the whole input.) */
static int state_from_out(mctx *c, msql *q)
{
    mq_puts(q, "CREATE TEMP TABLE " W_STATE " AS SELECT ");
    put_row_cols(q, c, "p.");
    mq_printf(q, " FROM %s p WHERE NOT EXISTS (SELECT 1 FROM " W_OUT " x WHERE x.%s IN (1, 2) AND ", c->P, c->qop_out);
    put_pk_eq(q, c, "x", "p");
    mq_puts(q, ") UNION ALL SELECT ");
    put_row_cols(q, c, "");
    mq_printf(q, " FROM " W_OUT " WHERE %s IN (0, 3)", c->qop_out);
    return exec_q(c, q);
}

static int merge_snapshot(mctx *c, msql *q, const char *prev_state)
{
    int rc = check_null_keys(c, q);
    if (!rc)
        rc = dedupe_input(c, q);
    if (!rc)
        rc = prepare_prev(c, q, prev_state, false);
    if (rc)
        return rc;
    /* One full outer join; the 2-row VALUES table doubles changed keys into
     * the -C (t.__silt_i = 1) and +C rows. */
    mq_printf(q, "CREATE TEMP TABLE " W_OUT " AS SELECT * FROM (SELECT CAST(CASE WHEN t.__silt_i = 1 THEN 2 "
                 "WHEN o.__silt_p IS NULL THEN 0 WHEN n.__silt_p IS NULL THEN 1 ELSE 3 END AS UTINYINT) AS %s",
              c->qop_out);
    put_pick_cols(q, c, "t.__silt_i = 1 OR n.__silt_p IS NULL");
    mq_puts(q, " FROM ");
    put_prev_rel(q, c, "o");
    mq_puts(q, " FULL OUTER JOIN (SELECT true AS __silt_p, ");
    put_row_cols(q, c, "");
    mq_printf(q, " FROM %s) n ON ", c->newrel);
    put_pk_eq(q, c, "o", "n");
    mq_puts(q, " CROSS JOIN (VALUES (0), (1)) t(__silt_i) WHERE (o.__silt_p IS NULL OR n.__silt_p IS NULL OR ");
    put_changed(q, c);
    mq_puts(q, ") AND (t.__silt_i = 0 OR (o.__silt_p IS NOT NULL AND n.__silt_p IS NOT NULL))) ORDER BY ");
    put_pk_cols(q, c, "");
    mq_printf(q, ", %s", c->qop_out);
    if ((rc = exec_q(c, q)))
        return rc;
    /* New state: the new snapshot, except that unchanged keys keep their
     * old row (old event time, old values of columns outside the compare
     * set): that is what the dataset holds for them. */
    return state_from_out(c, q);
}

/* ChangelogStream: c->src = relation (input rows + dense 0-based __silt_r). */
static int prepare_src(mctx *c, msql *q)
{
    uint64_t dense = 0;
    mq_printf(q, "SELECT CAST(count(*) = coalesce(max(rowid) + 1, 0) AS INTEGER) FROM %s", c->qin);
    int rc = q->err ? q->err : silt_engine_query_u64(c->e, &dense, q->b.data);
    mq_reset(q);
    if (rc)
        return rc;
    if (dense) {
        mq_printf(q, "(SELECT rowid AS __silt_r, * FROM %s)", c->qin);
        if (q->err)
            return q->err;
        c->src_owned = silt_buf_detach(&q->b);
        mq_reset(q);
        if (!c->src_owned)
            return SILT_ENOMEM;
        c->src = c->src_owned;
        return 0;
    }
    /* Rowids have gaps (rows were deleted): number the rows once. */
    mq_printf(q, "CREATE TEMP TABLE " W_SRC " AS SELECT row_number() OVER (ORDER BY rowid) - 1 AS __silt_r, * FROM %s "
                 "ORDER BY rowid",
              c->qin);
    c->src = W_SRC;
    return exec_q(c, q);
}

/* Data columns of row x equal to those of the current record (the previous
 * row y of the key in the batch, or the state row s), the event time
 * excluded. */
static void put_same_data(msql *q, const mctx *c)
{
    mq_puts(q, "(CASE WHEN c.__silt_pr IS NULL THEN (true");
    for (size_t i = 0; i < c->ndata; i++) {
        const char *k = c->in[c->data[i]].qname;
        mq_printf(q, " AND s.%s IS NOT DISTINCT FROM x.%s", k, k);
    }
    mq_puts(q, ") ELSE (true");
    for (size_t i = 0; i < c->ndata; i++) {
        const char *k = c->in[c->data[i]].qname;
        mq_printf(q, " AND y.%s IS NOT DISTINCT FROM x.%s", k, k);
    }
    mq_puts(q, ") END)");
}

/* RFC 3339 text of a microsecond count since the epoch (from SQL text). */
static void us_text(const char *v, char out[48])
{
    long long us = strtoll(v ? v : "0", NULL, 10);
    long long sec = us / 1000000, rem = us % 1000000;
    if (rem < 0) {
        rem += 1000000;
        sec--;
    }
    silt_time_format((silt_time){sec, (uint32_t)(rem * 1000)}, out);
}

/* A -R/-C row (`r`, 0-based, op `on`) that does not carry the current values:
 * when only its event time differs, says so with both event times; else 1
 * (the caller reports the generic message). */
static int stale_event_time(mctx *c, msql *q, const char *r, const char *on, unsigned long long row,
                            const char *key)
{
    const char *et = c->in[c->et].qname, *type = c->in[c->et].type;
    /* timestamps and dates as RFC 3339 (from microseconds), anything else as text */
    bool temporal = strncmp(type, "TIMESTAMP", 9) == 0 || strcmp(type, "DATE") == 0;
    const char *pre = temporal ? "CAST(epoch_us(CAST(" : "CAST((", *post = temporal ? " AS TIMESTAMP)) AS VARCHAR)" : ") AS VARCHAR)";
    mq_printf(q, "SELECT %sx.%s%s, %sCASE WHEN c.__silt_pr IS NULL THEN s.%s ELSE y.%s END%s, CAST(", pre, et, post,
              pre, et, et, post);
    put_same_data(q, c);
    mq_printf(q, " AS INTEGER) FROM " W_CHK " c JOIN %s x ON x.__silt_r = c.__silt_r LEFT JOIN %s y ON "
                 "y.__silt_r = c.__silt_pr LEFT JOIN %s s ON ",
              c->src, c->src, c->P);
    put_pk_eq(q, c, "s", "c");
    mq_printf(q, " WHERE c.__silt_r = %s", r);
    first_row t;
    int rc = query_first(c, q, &t);
    if (!rc && t.found && t.v[0] && t.v[1] && t.v[2] && strcmp(t.v[2], "1") == 0 && strcmp(t.v[0], t.v[1]) != 0) {
        char mine[48], theirs[48];
        if (temporal) {
            us_text(t.v[0], mine);
            us_text(t.v[1], theirs);
        } else {
            snprintf(mine, sizeof mine, "%s", t.v[0]);
            snprintf(theirs, sizeof theirs, "%s", t.v[1]);
        }
        bool retract = strcmp(on, "-R") == 0;
        rc = silt_err(SILT_EINVAL,
                      "%s in row %llu for key %s: %s %s must equal the %s record's event time exactly (%s)", on,
                      row, key, c->et_name, mine, retract ? "retracted" : "corrected", theirs);
    } else if (!rc) {
        rc = 1;
    }
    first_row_free(&t);
    return rc;
}

/* The message of the first invalid changelog row `f` (row, op, error code
 * as found by merge_changelog). Returns the error. */
static int changelog_error(mctx *c, msql *q, const first_row *f)
{
    const char *r = f->v[0] ? f->v[0] : "0";
    unsigned long long row = strtoull(r, NULL, 10) + 1;
    static const char *const opn[] = {"+A", "-R", "-C", "+C"};
    int o = atoi(f->v[1] ? f->v[1] : "0");
    const char *on = o >= 0 && o <= 3 ? opn[o] : "?";
    int err = atoi(f->v[2] ? f->v[2] : "0");
    first_row kf;
    mq_puts(q, "SELECT ");
    put_key_text(q, c, "");
    mq_printf(q, " FROM %s WHERE __silt_r = %s", c->src, r);
    int rc = query_first(c, q, &kf);
    const char *key = kf.v[0] ? kf.v[0] : "?";
    if (!rc) {
        switch (err) {
        case 1:
            rc = silt_err(SILT_EINVAL, "+C in row %llu does not directly follow a -C of the same key %s", row, key);
            break;
        case 2:
            rc = silt_err(SILT_EINVAL, "-C in row %llu is not directly followed by a +C of the same key %s", row,
                          key);
            break;
        case 3:
            rc = silt_err(SILT_EINVAL, "+A in row %llu for key %s that is already present", row, key);
            break;
        case 4:
            rc = silt_err(SILT_EINVAL, "%s in row %llu for key %s that is not present", on, row, key);
            break;
        default:
            rc = stale_event_time(c, q, r, on, row, key);
            if (rc == 1)
                rc = silt_err(SILT_EINVAL, "%s in row %llu for key %s does not carry the current values", on, row,
                              key);
            break;
        }
    }
    first_row_free(&kf);
    return rc;
}

static int merge_changelog(mctx *c, msql *q, const char *prev_state)
{
    int rc = check_ops(c, q);
    if (!rc)
        rc = check_null_keys(c, q);
    if (!rc)
        rc = prepare_src(c, q);
    if (!rc)
        rc = prepare_prev(c, q, prev_state, false);
    if (rc)
        return rc;
    const char *op = c->in[c->op].qname;
    /* Neighbours of every row among the rows of the same key, over a narrow
     * projection (positions, op, key) so the window stays small. */
    mq_printf(q, "CREATE TEMP TABLE " W_CHK " AS SELECT __silt_r, %s AS __silt_op, ", op);
    put_pk_cols(q, c, "");
    mq_printf(q, ", lag(%s) OVER w AS __silt_pop, lag(__silt_r) OVER w AS __silt_pr, lead(%s) OVER w AS __silt_nop, "
                 "lead(__silt_r) OVER w AS __silt_nr FROM %s WINDOW w AS (PARTITION BY ",
              op, op, c->src);
    put_pk_cols(q, c, "");
    mq_puts(q, " ORDER BY __silt_r)");
    if ((rc = exec_q(c, q)))
        return rc;
    /* err 1 = +C not right after a -C of the key, 2 = -C not right before a
     * +C of the key, 3 = +A of a present key, 4 = -R/-C of an absent key,
     * 5 = -R/-C with values other than the current ones. "Present" and
     * "current values" come from the previous row of the same key in the
     * batch, or from the state when there is none. The first offending row
     * (then the lowest code) is reported. */
    mq_printf(q, "SELECT CAST(__silt_r AS VARCHAR), CAST(__silt_op AS VARCHAR), CAST(__silt_err AS VARCHAR) FROM ("
                 "SELECT c.__silt_r, c.__silt_op, CASE "
                 "WHEN c.__silt_op = 3 AND (c.__silt_pop IS DISTINCT FROM 2 OR c.__silt_pr IS DISTINCT FROM c.__silt_r - 1) THEN 1 "
                 "WHEN c.__silt_op = 2 AND (c.__silt_nop IS DISTINCT FROM 3 OR c.__silt_nr IS DISTINCT FROM c.__silt_r + 1) THEN 2 "
                 "WHEN c.__silt_op = 0 AND %s THEN 3 WHEN c.__silt_op IN (1, 2) AND NOT %s THEN 4 ELSE 0 END AS __silt_err "
                 "FROM " W_CHK " c LEFT JOIN (SELECT true AS __silt_p, ",
              "(CASE WHEN c.__silt_pr IS NULL THEN s.__silt_p IS NOT NULL ELSE c.__silt_pop IN (0, 3) END)",
              "(CASE WHEN c.__silt_pr IS NULL THEN s.__silt_p IS NOT NULL ELSE c.__silt_pop IN (0, 3) END)");
    put_pk_cols(q, c, "");
    mq_printf(q, " FROM %s) s ON ", c->P);
    put_pk_eq(q, c, "s", "c");
    mq_puts(q, " UNION ALL SELECT c.__silt_r, c.__silt_op, 5 FROM " W_CHK " c JOIN ");
    mq_printf(q, "%s x ON x.__silt_r = c.__silt_r LEFT JOIN %s y ON y.__silt_r = c.__silt_pr LEFT JOIN %s s ON ", c->src,
              c->src, c->P);
    put_pk_eq(q, c, "s", "c");
    mq_puts(q, " WHERE c.__silt_op IN (1, 2) AND NOT (CASE WHEN c.__silt_pr IS NULL THEN (true");
    for (size_t i = 0; i <= c->ndata; i++) {
        const char *k = c->in[i == 0 ? c->et : c->data[i - 1]].qname;
        mq_printf(q, " AND s.%s IS NOT DISTINCT FROM x.%s", k, k);
    }
    mq_puts(q, ") ELSE (true");
    for (size_t i = 0; i <= c->ndata; i++) {
        const char *k = c->in[i == 0 ? c->et : c->data[i - 1]].qname;
        mq_printf(q, " AND y.%s IS NOT DISTINCT FROM x.%s", k, k);
    }
    mq_puts(q, ") END)) WHERE __silt_err <> 0 ORDER BY __silt_r, __silt_err LIMIT 1");
    first_row f;
    rc = query_first(c, q, &f);
    if (!rc && f.found)
        rc = changelog_error(c, q, &f);
    first_row_free(&f);
    if (rc)
        return rc;

    mq_printf(q, "CREATE TEMP TABLE " W_OUT " AS SELECT CAST(%s AS UTINYINT) AS %s, ", op, c->qop_out);
    put_row_cols(q, c, "");
    mq_printf(q, " FROM %s ORDER BY __silt_r", c->src);
    if ((rc = exec_q(c, q)))
        return rc;
    /* State: untouched keys keep their row; touched keys take their last row
     * of the batch unless it was a -R. */
    mq_puts(q, "CREATE TEMP TABLE " W_STATE " AS SELECT ");
    put_row_cols(q, c, "p.");
    mq_printf(q, " FROM %s p WHERE NOT EXISTS (SELECT 1 FROM %s x WHERE ", c->P, c->src);
    put_pk_eq(q, c, "x", "p");
    mq_puts(q, ") UNION ALL SELECT ");
    put_row_cols(q, c, "");
    mq_printf(q, " FROM %s WHERE __silt_r IN (SELECT __silt_r FROM " W_CHK " WHERE __silt_nr IS NULL AND "
                 "__silt_op IN (0, 3))",
              c->src);
    return exec_q(c, q);
}

static int merge_upsert(mctx *c, msql *q, const char *prev_state)
{
    int rc = c->op >= 0 ? check_ops(c, q) : 0;
    if (!rc)
        rc = check_null_keys(c, q);
    if (!rc)
        rc = prepare_prev(c, q, prev_state, false);
    if (rc)
        return rc;
    /* Last row per key wins (n = the winners, __silt_op 1 = delete). */
    mq_printf(q, "SELECT 1 FROM %s GROUP BY ", c->qin);
    put_pk_cols(q, c, "");
    mq_puts(q, " HAVING count(*) > 1 LIMIT 1");
    first_row f;
    rc = query_first(c, q, &f);
    bool dups = f.found;
    first_row_free(&f);
    if (rc)
        return rc;
    mq_puts(q, dups ? "CREATE TEMP TABLE " W_NEW " AS SELECT " : "(SELECT ");
    if (c->op >= 0)
        mq_printf(q, "CAST(%s AS INTEGER)", c->in[c->op].qname);
    else
        mq_puts(q, "0");
    mq_puts(q, " AS __silt_op, ");
    put_row_cols(q, c, "");
    mq_printf(q, " FROM %s", c->qin);
    if (dups) {
        mq_printf(q, " WHERE rowid IN (SELECT max(rowid) FROM %s GROUP BY ", c->qin);
        put_pk_cols(q, c, "");
        mq_puts(q, ")");
        c->newrel = W_NEW;
        if ((rc = exec_q(c, q)))
            return rc;
    } else {
        mq_puts(q, ")");
        if (q->err)
            return q->err;
        c->newrel_owned = silt_buf_detach(&q->b);
        mq_reset(q);
        if (!c->newrel_owned)
            return SILT_ENOMEM;
        c->newrel = c->newrel_owned;
    }

    mq_printf(q, "CREATE TEMP TABLE " W_OUT " AS SELECT * FROM (SELECT CAST(CASE WHEN t.__silt_i = 1 THEN 2 "
                 "WHEN n.__silt_op = 1 THEN 1 WHEN o.__silt_p IS NULL THEN 0 ELSE 3 END AS UTINYINT) AS %s",
              c->qop_out);
    put_pick_cols(q, c, "t.__silt_i = 1 OR n.__silt_op = 1");
    mq_printf(q, " FROM %s n LEFT JOIN ", c->newrel);
    put_prev_rel(q, c, "o");
    mq_puts(q, " ON ");
    put_pk_eq(q, c, "o", "n");
    mq_puts(q, " CROSS JOIN (VALUES (0), (1)) t(__silt_i) WHERE ((n.__silt_op = 1 AND o.__silt_p IS NOT NULL) OR "
               "(n.__silt_op <> 1 AND (o.__silt_p IS NULL OR ");
    put_changed(q, c);
    mq_puts(q, "))) AND (t.__silt_i = 0 OR (n.__silt_op <> 1 AND o.__silt_p IS NOT NULL))) ORDER BY ");
    put_pk_cols(q, c, "");
    mq_printf(q, ", %s", c->qop_out);
    if ((rc = exec_q(c, q)))
        return rc;

    return state_from_out(c, q);
}

/* ---- entry point -------------------------------------------------------- */

static const char *strategy_name(int s)
{
    switch (s) {
    case ODF_MergeStrategy_Append: return "Append";
    case ODF_MergeStrategy_Ledger: return "Ledger";
    case ODF_MergeStrategy_Snapshot: return "Snapshot";
    case ODF_MergeStrategy_ChangelogStream: return "ChangelogStream";
    case ODF_MergeStrategy_UpsertStream: return "UpsertStream";
    default: return NULL;
    }
}

/* Resolves columns and validates the spec against the input. */
static int resolve(mctx *c, const char *input)
{
    const silt_merge_spec *s = c->s;
    int rc = describe(c->e, c->qin, "input", &c->in, &c->nin);
    if (rc)
        return rc;
    long et = find_col(c->in, c->nin, c->et_name);
    if (et < 0)
        return silt_err(SILT_EINVAL, "merge: event time column '%s' not found in input '%s'", c->et_name, input);
    c->et = (size_t)et;
    c->op = find_col(c->in, c->nin, c->op_name);
    if (c->op == et)
        return silt_err(SILT_EINVAL, "merge: op column '%s' is also the event time column", c->op_name);
    if (c->op >= 0 && s->strategy != ODF_MergeStrategy_ChangelogStream && s->strategy != ODF_MergeStrategy_UpsertStream)
        return silt_err(SILT_EINVAL, "merge: input column '%s' is reserved for the operation type (%s strategy)",
                        c->in[c->op].name, strategy_name(s->strategy));
    if (c->op < 0 && s->strategy == ODF_MergeStrategy_ChangelogStream)
        return silt_err(SILT_EINVAL, "merge: input '%s' has no op column '%s' (ChangelogStream strategy)", input,
                        c->op_name);
    c->data = calloc(c->nin ? c->nin : 1, sizeof *c->data);
    c->pk = calloc(s->npk ? s->npk : 1, sizeof *c->pk);
    c->cmp = calloc(c->nin + s->ncompare + 1, sizeof *c->cmp);
    if (!c->data || !c->pk || !c->cmp)
        return silt_err(SILT_ENOMEM, "out of memory");
    for (size_t i = 0; i < c->nin; i++)
        if ((long)i != et && (long)i != c->op)
            c->data[c->ndata++] = i;
    if (s->strategy == ODF_MergeStrategy_Append)
        return 0;
    if (s->npk == 0 || !s->primary_key)
        return silt_err(SILT_EINVAL, "merge: the %s strategy needs a primary key", strategy_name(s->strategy));
    for (size_t i = 0; i < s->npk; i++) {
        if (!s->primary_key[i])
            return silt_err(SILT_EINVAL, "merge: primary key column %zu has no name", i);
        long k = find_col(c->in, c->nin, s->primary_key[i]);
        if (k < 0)
            return silt_err(SILT_EINVAL, "merge: primary key column '%s' not found in input '%s'", s->primary_key[i],
                            input);
        if (k == c->op)
            return silt_err(SILT_EINVAL, "merge: primary key column '%s' is the op column", s->primary_key[i]);
        for (size_t j = 0; j < i; j++)
            if (c->pk[j] == (size_t)k)
                return silt_err(SILT_EINVAL, "merge: primary key column '%s' is listed twice", s->primary_key[i]);
        c->pk[i] = (size_t)k;
    }
    /* Compare set: explicit list (Snapshot) or all non-key data columns. */
    if (s->strategy == ODF_MergeStrategy_Snapshot && s->ncompare > 0) {
        if (!s->compare_columns)
            return silt_err(SILT_EINVAL, "merge: compare columns missing");
        for (size_t i = 0; i < s->ncompare; i++) {
            long k = s->compare_columns[i] ? find_col(c->in, c->nin, s->compare_columns[i]) : -1;
            if (k < 0)
                return silt_err(SILT_EINVAL, "merge: compare column '%s' not found in input '%s'",
                                s->compare_columns[i] ? s->compare_columns[i] : "(null)", input);
            if (k == c->op)
                return silt_err(SILT_EINVAL, "merge: compare column '%s' is the op column", s->compare_columns[i]);
            if (k == et)
                c->cmp_et = true;
            else
                c->cmp[c->ncmp++] = (size_t)k;
        }
    } else {
        for (size_t i = 0; i < c->ndata; i++) {
            bool key = false;
            for (size_t j = 0; j < s->npk; j++)
                key |= c->pk[j] == c->data[i];
            if (!key)
                c->cmp[c->ncmp++] = c->data[i];
        }
    }
    return 0;
}

int silt_merge(silt_engine *e, const silt_merge_spec *spec, const char *input, const char *prev_state,
               const char *out, const char *out_state, uint64_t *out_rows)
{
    if (out_rows)
        *out_rows = 0;
    if (!e || !spec || !input || !out)
        return silt_err(SILT_EINVAL, "merge: missing engine, spec, input or output table");
    if (!strategy_name(spec->strategy))
        return silt_err(SILT_EINVAL, "merge: unknown merge strategy %d", spec->strategy);
    bool stateful = spec->strategy != ODF_MergeStrategy_Append;
    if (stateful && !out_state)
        return silt_err(SILT_EINVAL, "merge: the %s strategy needs an output state table", strategy_name(spec->strategy));

    mctx c;
    memset(&c, 0, sizeof c);
    c.e = e;
    c.s = spec;
    c.op = -1;
    c.et_name = spec->event_time_column ? spec->event_time_column : "event_time";
    c.op_name = spec->op_column ? spec->op_column : "op";
    c.qin = silt_sql_ident(input);
    c.qop_out = silt_sql_ident(c.op_name);
    char *qout = silt_sql_ident(out);
    char *qstate = stateful ? silt_sql_ident(out_state) : NULL;
    msql q = {SILT_BUF_INIT, 0};
    int rc = 0;
    if (!c.qin || !c.qop_out || !qout || (stateful && !qstate))
        rc = silt_err(SILT_ENOMEM, "out of memory");

    silt_err_clear();
    if (!rc) {
        /* Leftovers of an interrupted merge on this connection. */
        rc = silt_engine_exec(e, DROP_WORK_SQL);
    }
    if (!rc)
        rc = resolve(&c, input);
    if (!rc) {
        switch (spec->strategy) {
        case ODF_MergeStrategy_Append: rc = merge_append(&c, &q); break;
        case ODF_MergeStrategy_Ledger: rc = merge_ledger(&c, &q, prev_state); break;
        case ODF_MergeStrategy_Snapshot: rc = merge_snapshot(&c, &q, prev_state); break;
        case ODF_MergeStrategy_ChangelogStream: rc = merge_changelog(&c, &q, prev_state); break;
        default: rc = merge_upsert(&c, &q, prev_state); break;
        }
    }
    if (rc == SILT_ENOMEM && !*silt_error_last())
        silt_err(SILT_ENOMEM, "out of memory");

    uint64_t n = 0;
    if (!rc)
        rc = silt_engine_query_u64(e, &n, "SELECT count(*) FROM " W_OUT);
    /* Publish: replace out / out_state by the work tables. */
    if (!rc) {
        mq_printf(&q, "DROP TABLE IF EXISTS %s; ", qout);
        if (stateful)
            mq_printf(&q, "DROP TABLE IF EXISTS %s; ", qstate);
        mq_printf(&q, "ALTER TABLE " W_OUT " RENAME TO %s;", qout);
        rc = exec_q(&c, &q);
        if (!rc && stateful) {
            mq_printf(&q, "ALTER TABLE " W_STATE " RENAME TO %s;", qstate);
            rc = exec_q(&c, &q);
            if (rc) {
                mq_printf(&q, "DROP TABLE IF EXISTS %s", qout);
                if (!q.err)
                    silt_engine_exec(e, q.b.data);
                mq_reset(&q);
            }
        }
    }
    if (rc)
        drop_work(e, rc);
    else
        silt_engine_exec(e, "DROP TABLE IF EXISTS " W_PREV "; DROP TABLE IF EXISTS " W_NEW
                            "; DROP TABLE IF EXISTS " W_SRC "; DROP TABLE IF EXISTS " W_CHK ";");
    if (!rc && out_rows)
        *out_rows = n;
    silt_buf_free(&q.b);
    ctx_free(&c);
    free(qout);
    free(qstate);
    return rc;
}
