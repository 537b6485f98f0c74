/* read.c — the Read phase of ODF ingestion (ReadStep -> DuckDB TEMP TABLE).
 *
 * Fast path (see "fast path" below): CSV with a schema or inferSchema off,
 * Json/NdJson with a schema and Parquet are read by ONE native DuckDB scan
 * per file straight into the target table (typed read_csv columns where
 * DuckDB's parsing equals ours, strict casts otherwise; files appended in
 * order). Any error there drops the table and reruns the slow path below,
 * whose results and messages are the reference (verify mode compares both).
 *
 * Slow path: every input file goes through the same three steps:
 *  1. prepare: non-UTF-8 text is transcoded with iconv(3) into a temp file;
 *     Json documents (optionally at `subPath`), GeoJson FeatureCollections,
 *     NdGeoJson lines and Shapefiles (read_shp.c) are rewritten as NDJSON,
 *     one object per output row, so DuckDB reads them with read_json;
 *  2. stage: the file is loaded into a private staging table
 *     (__silt_rd_<n>) whose rowid order is the file order. CSV is read with
 *     auto-detection off: the column count comes from our own scan of the
 *     first record, every column is VARCHAR, ragged rows land in a DuckDB
 *     rejects table and become an error naming the line. When a schema is
 *     declared, JSON is staged as VARCHAR too;
 *  3. convert: each column gets a TRY_CAST/TRY_STRPTIME expression to its
 *     target type (schema, inferred for CSV inferSchema, or none). A single
 *     scan finds the first row whose non-null value did not convert and the
 *     error names file, row, CSV/NDJSON line and column.
 * Finally one CREATE OR REPLACE TEMP TABLE … AS SELECT unions the converted
 * files, ordered by (file index, rowid) when there is more than one file.
 *
 * Row-count cross-check: every file's records are also counted by our own
 * parsers (read_count.c for CSV and NDJSON, the rewrite for Json / GeoJSON,
 * the footer for Parquet); the rows DuckDB produced from the file must be
 * exactly that many (fast path: per INSERT; slow path: per staging table,
 * then the combined table), else SILT_EINTERNAL naming the file and both
 * counts. The CSV pass also sizes DuckDB's line buffer (csv_read_opts).
 *
 * Invariants: option values reach SQL only through silt_sql_str /
 * silt_sql_ident (never spliced raw) and are validated first; every staging
 * and rejects table, and the temp directory, are removed on every path; on
 * error the target table does not exist; no row is dropped or added without
 * an error (the cross-check).
 */
#include "engine/read.h"

#include "engine/engine_internal.h"
#include "engine/parquet_meta.h"
#include "engine/schema.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/fsutil.h"
#include "util/scratch.h"

#include <ctype.h>
#include <errno.h>
#include <iconv.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- small helpers ------------------------------------------------------ */

static const char *opt_or(const char *v, const char *dflt) { return v ? v : dflt; }

static int buf_sql_str(silt_buf *b, const char *s)
{
    char *q = silt_sql_str(s);
    if (!q)
        return SILT_ENOMEM;
    int rc = silt_buf_puts(b, q);
    free(q);
    return rc;
}

static int buf_sql_ident(silt_buf *b, const char *s)
{
    char *q = silt_sql_ident(s);
    if (!q)
        return SILT_ENOMEM;
    int rc = silt_buf_puts(b, q);
    free(q);
    return rc;
}

/* A string list owned by the caller (each item and the array malloc'd). */
typedef struct strlist {
    char **v;
    size_t n, cap;
} strlist;

static int strlist_push(strlist *l, const char *s, size_t len)
{
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 8;
        char **nv = realloc(l->v, nc * sizeof *nv);
        if (!nv)
            return silt_err(SILT_ENOMEM, "out of memory");
        l->v = nv;
        l->cap = nc;
    }
    char *c = malloc(len + 1);
    if (!c)
        return silt_err(SILT_ENOMEM, "out of memory");
    memcpy(c, s, len);
    c[len] = '\0';
    l->v[l->n++] = c;
    return 0;
}

static void strlist_free(strlist *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

/* Printable rendering of an option value for messages (truncated). */
static const char *shown(const char *s, char *tmp, size_t cap)
{
    size_t w = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p && w + 5 < cap; p++) {
        if (*p < 0x20 || *p == 0x7f)
            w += (size_t)snprintf(tmp + w, cap - w, "\\x%02x", *p);
        else
            tmp[w++] = (char)*p;
    }
    tmp[w] = '\0';
    return tmp;
}

/* ---- option validation -------------------------------------------------- */

static int check_char_opt(const char *what, const char *v, bool allow_empty)
{
    char tmp[64];
    size_t n = strlen(v);
    if (n == 0 && allow_empty)
        return 0;
    if (n != 1)
        return silt_err(SILT_EINVAL, "%s must be a single character, got '%s'", what, shown(v, tmp, sizeof tmp));
    unsigned char c = (unsigned char)v[0];
    if (c >= 0x80 || c == '\n' || c == '\r')
        return silt_err(SILT_EINVAL, "%s must be a single ASCII character other than a line break, got '%s'",
                        what, shown(v, tmp, sizeof tmp));
    return 0;
}

/* Canonical iconv name of an ODF encoding, or NULL for UTF-8 (no transcoding).
 * Returns the code through *rc on invalid names. */
static const char *encoding_iconv_name(const char *what, const char *enc, int *rc, char *buf, size_t cap)
{
    *rc = 0;
    char tmp[64];
    size_t n = strlen(enc);
    if (n == 0 || n > 40) {
        *rc = silt_err(SILT_EINVAL, "%s: invalid encoding '%s'", what, shown(enc, tmp, sizeof tmp));
        return NULL;
    }
    char norm[48];
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)enc[i];
        if (!isalnum(c) && c != '-' && c != '_' && c != '.' && c != ':') {
            *rc = silt_err(SILT_EINVAL, "%s: invalid encoding '%s'", what, shown(enc, tmp, sizeof tmp));
            return NULL;
        }
        if (c != '-' && c != '_')
            norm[w++] = (char)tolower(c);
    }
    norm[w] = '\0';
    if (!strcmp(norm, "utf8"))
        return NULL;
    if (!strcmp(norm, "latin1") || !strcmp(norm, "iso88591"))
        return "ISO-8859-1";
    if (!strcmp(norm, "utf16"))
        return "UTF-16";
    if (!strcmp(norm, "utf16le"))
        return "UTF-16LE";
    if (!strcmp(norm, "utf16be"))
        return "UTF-16BE";
    if (!strcmp(norm, "windows1252") || !strcmp(norm, "cp1252"))
        return "WINDOWS-1252";
    snprintf(buf, cap, "%s", enc);
    iconv_t cd = iconv_open("UTF-8", buf);
    if (cd == (iconv_t)-1) {
        *rc = silt_err(SILT_EUNSUPPORTED, "%s: unsupported encoding '%s'", what, enc);
        return NULL;
    }
    iconv_close(cd);
    return buf;
}

/* strftime specifiers DuckDB's strptime understands. */
static bool duck_spec_ok(char c, bool dash)
{
    if (dash)
        return c && strchr("dmyHIMSj", c);
    return c && strchr("aAwudbBhmyYHIpMSfgnzZjUWcxXGVu%", c);
}

int silt_read_translate_datefmt(silt_buf *out, const char *fmt, const char *what)
{
    char tmp[96];
    if (!fmt || !strcmp(fmt, "rfc3339") || !strcmp(fmt, "RFC3339"))
        return 0;
    if (!*fmt)
        return silt_err(SILT_EINVAL, "%s must not be empty", what);
    for (const unsigned char *p = (const unsigned char *)fmt; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return silt_err(SILT_EINVAL, "%s '%s' contains a control character", what, shown(fmt, tmp, sizeof tmp));
    int rc = 0;
    if (strchr(fmt, '%')) {
        /* strftime style: validate every specifier */
        for (const char *p = fmt; *p; p++) {
            if (*p != '%')
                continue;
            bool dash = p[1] == '-';
            char c = dash ? p[2] : p[1];
            if (!duck_spec_ok(c, dash))
                return silt_err(SILT_EINVAL, "%s '%s': unsupported specifier '%%%s%c'", what,
                                shown(fmt, tmp, sizeof tmp), dash ? "-" : "", c ? c : ' ');
            p += dash ? 2 : 1;
        }
        return silt_buf_puts(out, fmt);
    }
    /* Java SimpleDateFormat pattern */
    for (const char *p = fmt; *p && !rc;) {
        char c = *p;
        if (c == '\'') {
            if (p[1] == '\'') {
                rc = silt_buf_putc(out, '\'');
                p += 2;
                continue;
            }
            const char *q = p + 1;
            while (*q && !(*q == '\'' && q[1] != '\''))
                q += (*q == '\'') ? 2 : 1;
            if (!*q)
                return silt_err(SILT_EINVAL, "%s '%s': unterminated quoted literal", what, shown(fmt, tmp, sizeof tmp));
            for (const char *r = p + 1; r < q && !rc; r++) {
                if (*r == '\'' && r[1] == '\'')
                    r++;
                rc = *r == '%' ? silt_buf_puts(out, "%%") : silt_buf_putc(out, *r);
            }
            p = q + 1;
            continue;
        }
        if (!isalpha((unsigned char)c)) {
            rc = c == '%' ? silt_buf_puts(out, "%%") : silt_buf_putc(out, c);
            p++;
            continue;
        }
        size_t n = 1;
        while (p[n] == c)
            n++;
        const char *s = NULL;
        switch (c) {
        case 'y': case 'u': s = n == 2 ? "%y" : "%Y"; break;
        case 'M': case 'L': s = n == 1 ? "%-m" : n == 2 ? "%m" : n == 3 ? "%b" : "%B"; break;
        case 'd': s = n == 1 ? "%-d" : "%d"; break;
        case 'H': s = n == 1 ? "%-H" : "%H"; break;
        case 'h': s = n == 1 ? "%-I" : "%I"; break;
        case 'm': s = n == 1 ? "%-M" : "%M"; break;
        case 's': s = n == 1 ? "%-S" : "%S"; break;
        case 'S': s = n <= 3 ? "%g" : n <= 6 ? "%f" : "%n"; break;
        case 'a': s = "%p"; break;
        case 'E': s = n <= 3 ? "%a" : "%A"; break;
        case 'D': s = "%j"; break;
        case 'X': case 'x': case 'Z': s = "%z"; break;
        case 'z': s = "%Z"; break;
        default:
            return silt_err(SILT_EINVAL, "%s '%s': unsupported pattern letter '%c'", what, shown(fmt, tmp, sizeof tmp), c);
        }
        rc = silt_buf_puts(out, s);
        p += n;
    }
    return rc;
}

int silt_read_csv_check_options(const odf_ReadStepCsv *csv)
{
    int rc;
    const char *sep = opt_or(csv->separator, ",");
    const char *quote = opt_or(csv->quote, "\"");
    const char *esc = opt_or(csv->escape, "\\");
    if ((rc = check_char_opt("Csv.separator", sep, false)) || (rc = check_char_opt("Csv.quote", quote, true)) ||
        (rc = check_char_opt("Csv.escape", esc, true)))
        return rc;
    if (*quote && sep[0] == quote[0])
        return silt_err(SILT_EINVAL, "Csv.separator and Csv.quote must differ, both are '%s'", sep);
    if (*quote && *esc && sep[0] == esc[0])
        return silt_err(SILT_EINVAL, "Csv.separator and Csv.escape must differ, both are '%s'", sep);
    const char *nv = opt_or(csv->null_value, "");
    for (const unsigned char *p = (const unsigned char *)nv; *p; p++)
        if (*p == '\n' || *p == '\r') {
            char tmp[64];
            return silt_err(SILT_EINVAL, "Csv.nullValue must not contain a line break, got '%s'", shown(nv, tmp, sizeof tmp));
        }
    struct { const char *opt; const char *v; } clash[] = {
        {"separator", sep}, {"quote", quote}, {"escape", *quote ? esc : ""}};
    for (size_t i = 0; i < 3; i++)
        if (*clash[i].v && strchr(nv, clash[i].v[0]))
            return silt_err(SILT_EINVAL, "Csv.nullValue must not contain the %s character '%c'", clash[i].opt,
                            clash[i].v[0]);
    char encbuf[64];
    encoding_iconv_name("Csv.encoding", opt_or(csv->encoding, "utf8"), &rc, encbuf, sizeof encbuf);
    if (rc)
        return rc;
    silt_buf tmp = SILT_BUF_INIT;
    rc = silt_read_translate_datefmt(&tmp, csv->date_format, "Csv.dateFormat");
    silt_buf_clear(&tmp);
    if (!rc)
        rc = silt_read_translate_datefmt(&tmp, csv->timestamp_format, "Csv.timestampFormat");
    silt_buf_free(&tmp);
    return rc;
}

/* ---- JSON output (NDJSON rewriting) ------------------------------------- */

int silt_read_json_number(silt_buf *out, double v)
{
    if (!isfinite(v))
        return silt_buf_puts(out, "null");
    /* shortest digits that round-trip, then laid out as ryu/serde_json do:
     * decimal notation for 1e-5 <= |v| < 1e21, scientific otherwise */
    char s[40];
    for (int p = 0; p <= 17; p++) {
        snprintf(s, sizeof s, "%.*e", p, v);
        if (strtod(s, NULL) == v)
            break;
    }
    const char *m = s;
    bool neg = *m == '-';
    if (neg)
        m++;
    char digits[24];
    size_t n = 0;
    const char *e = m;
    for (; *e && *e != 'e'; e++)
        if (isdigit((unsigned char)*e) && n < sizeof digits - 1)
            digits[n++] = *e;
    while (n > 1 && digits[n - 1] == '0')
        n--;
    digits[n] = '\0';
    int kk = (*e == 'e' ? atoi(e + 1) : 0) + 1;
    if (v == 0)
        n = 1, kk = 1;
    int rc = neg ? silt_buf_putc(out, '-') : 0;
    if (rc)
        return rc;
    if (kk > 0 && kk <= 21) {
        if ((int)n <= kk) {
            rc = silt_buf_append(out, digits, n);
            for (int i = (int)n; i < kk && !rc; i++)
                rc = silt_buf_putc(out, '0');
            return rc ? rc : silt_buf_puts(out, ".0");
        }
        rc = silt_buf_append(out, digits, (size_t)kk);
        rc = rc ? rc : silt_buf_putc(out, '.');
        return rc ? rc : silt_buf_puts(out, digits + kk);
    }
    if (kk <= 0 && kk > -5) {
        rc = silt_buf_puts(out, "0.");
        for (int i = 0; i < -kk && !rc; i++)
            rc = silt_buf_putc(out, '0');
        return rc ? rc : silt_buf_puts(out, digits);
    }
    rc = silt_buf_putc(out, digits[0]);
    if (!rc && n > 1)
        rc = silt_buf_printf(out, ".%s", digits + 1);
    return rc ? rc : silt_buf_printf(out, "e%d", kk - 1);
}

static int json_put_string(silt_buf *b, const char *s, size_t n)
{
    int rc = silt_buf_putc(b, '"');
    for (size_t i = 0; i < n && !rc; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"': rc = silt_buf_puts(b, "\\\""); break;
        case '\\': rc = silt_buf_puts(b, "\\\\"); break;
        case '\n': rc = silt_buf_puts(b, "\\n"); break;
        case '\r': rc = silt_buf_puts(b, "\\r"); break;
        case '\t': rc = silt_buf_puts(b, "\\t"); break;
        case '\b': rc = silt_buf_puts(b, "\\b"); break;
        case '\f': rc = silt_buf_puts(b, "\\f"); break;
        default:
            rc = c < 0x20 ? silt_buf_printf(b, "\\u%04x", c) : silt_buf_putc(b, (char)c);
        }
    }
    return rc ? rc : silt_buf_putc(b, '"');
}

static int cmp_cstr(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* Compact JSON of `v`; object keys in document order, or sorted (as serde_json
 * renders a map) when `sorted`. Depth is bounded by jansson's parser. */
static int json_write(silt_buf *b, json_t *v, bool sorted)
{
    int rc = 0;
    switch (json_typeof(v)) {
    case JSON_NULL: return silt_buf_puts(b, "null");
    case JSON_TRUE: return silt_buf_puts(b, "true");
    case JSON_FALSE: return silt_buf_puts(b, "false");
    case JSON_INTEGER: return silt_buf_printf(b, "%lld", (long long)json_integer_value(v));
    case JSON_REAL: return silt_read_json_number(b, json_real_value(v));
    case JSON_STRING: return json_put_string(b, json_string_value(v), json_string_length(v));
    case JSON_ARRAY:
        rc = silt_buf_putc(b, '[');
        for (size_t i = 0; i < json_array_size(v) && !rc; i++) {
            if (i)
                rc = silt_buf_putc(b, ',');
            if (!rc)
                rc = json_write(b, json_array_get(v, i), sorted);
        }
        return rc ? rc : silt_buf_putc(b, ']');
    case JSON_OBJECT: {
        size_t n = json_object_size(v), k = 0;
        const char **keys = malloc((n ? n : 1) * sizeof *keys);
        if (!keys)
            return silt_err(SILT_ENOMEM, "out of memory");
        const char *key;
        json_t *val;
        json_object_foreach(v, key, val) keys[k++] = key;
        if (sorted)
            qsort(keys, k, sizeof *keys, cmp_cstr);
        rc = silt_buf_putc(b, '{');
        for (size_t i = 0; i < k && !rc; i++) {
            if (i)
                rc = silt_buf_putc(b, ',');
            if (!rc)
                rc = json_put_string(b, keys[i], strlen(keys[i]));
            if (!rc)
                rc = silt_buf_putc(b, ':');
            if (!rc)
                rc = json_write(b, json_object_get(v, keys[i]), sorted);
        }
        free(keys);
        return rc ? rc : silt_buf_putc(b, '}');
    }
    }
    return silt_err(SILT_EINTERNAL, "unknown JSON value type");
}

/* ---- per-call context --------------------------------------------------- */

typedef enum { SRC_CSV, SRC_NDJSON, SRC_PARQUET } src_kind;

typedef struct rd {
    silt_engine *e;
    int kind;                   /* ODF_ReadStep_* */
    const odf_ReadStepCsv *csv; /* Csv only */
    const char *sub_path;
    const char *encoding;       /* iconv name, NULL = UTF-8 */
    char encbuf[64];
    silt_buf datefmt, tsfmt;    /* translated; empty = rfc3339 */
    const odf_DataSchema *schema;
    strlist sc_names, sc_types; /* schema columns (DuckDB types) */
    char *tmpdir;
    unsigned tmpseq;
    unsigned id;                /* unique per call: table name prefix */
    /* per file */
    const char *display;
    size_t nrecords_hint;       /* records written by a JSON rewrite */
    bool rows_have_lines;       /* CSV / direct NDJSON: row -> line mapping */
    silt_csv_stats cst;         /* CSV: our own scan of the file */
    uint64_t expect;            /* records of the file, counted without DuckDB */
} rd;

static unsigned g_read_seq;

static char *tmp_path(rd *r, const char *ext)
{
    char name[64];
    snprintf(name, sizeof name, "f%u.%s", r->tmpseq++, ext);
    char *p = silt_path_join(r->tmpdir, name, NULL);
    if (!p)
        silt_err(SILT_ENOMEM, "out of memory");
    return p;
}

static int check_input_file(const char *path, const char *display, off_t *size)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        int en = errno;
        return silt_err(en == ENOENT || en == ENOTDIR ? SILT_ENOTFOUND : SILT_EIO, "%s: %s", display, strerror(en));
    }
    if (S_ISDIR(st.st_mode))
        return silt_err(SILT_EINVAL, "%s: is a directory, not a file", display);
    if (size)
        *size = st.st_size;
    return 0;
}

/* Transcodes `in` from r->encoding to UTF-8 into a new temp file. */
static int transcode(rd *r, const char *in, char **out)
{
    *out = NULL;
    FILE *fi = fopen(in, "rb");
    if (!fi)
        return silt_err(SILT_EIO, "%s: %s", r->display, strerror(errno));
    char *op = tmp_path(r, "txt");
    FILE *fo = op ? fopen(op, "wb") : NULL;
    iconv_t cd = iconv_open("UTF-8", r->encoding);
    int rc = 0;
    if (!op)
        rc = SILT_ENOMEM;
    else if (!fo)
        rc = silt_err(SILT_EIO, "%s: cannot create temp file: %s", r->display, strerror(errno));
    else if (cd == (iconv_t)-1)
        rc = silt_err(SILT_EUNSUPPORTED, "%s: unsupported encoding '%s'", r->display, r->encoding);
    static const size_t icap = 65536;
    char *ibuf = malloc(icap), *obuf = malloc(icap * 4);
    if (!rc && (!ibuf || !obuf))
        rc = silt_err(SILT_ENOMEM, "out of memory");
    size_t have = 0;
    unsigned long long consumed = 0;
    bool eof = false;
    while (!rc && !(eof && have == 0)) {
        if (!eof && have < icap) {
            size_t got = fread(ibuf + have, 1, icap - have, fi);
            if (got == 0) {
                if (ferror(fi))
                    rc = silt_err(SILT_EIO, "%s: read error", r->display);
                eof = true;
            }
            have += got;
        }
        char *ip = ibuf, *opp = obuf;
        size_t il = have, ol = icap * 4;
        size_t res = have ? iconv(cd, &ip, &il, &opp, &ol) : 0;
        int en = errno;
        if (!rc && eof && res != (size_t)-1) /* flush shift state */
            iconv(cd, NULL, NULL, &opp, &ol);
        if (!rc && opp > obuf && fwrite(obuf, 1, (size_t)(opp - obuf), fo) != (size_t)(opp - obuf))
            rc = silt_err(SILT_EIO, "%s: cannot write temp file", r->display);
        consumed += (unsigned long long)(ip - ibuf);
        bool stuck = ip == ibuf && opp == obuf && (eof || have == icap);
        if (!rc && res == (size_t)-1 && (en == EILSEQ || (en == EINVAL && eof) || stuck))
            rc = silt_err(SILT_EINVAL, "%s: invalid %s byte sequence at byte offset %llu", r->display, r->encoding,
                          consumed);
        memmove(ibuf, ip, il);
        have = il;
    }
    free(ibuf);
    free(obuf);
    if (cd != (iconv_t)-1)
        iconv_close(cd);
    fclose(fi);
    if (fo && fclose(fo) != 0 && !rc)
        rc = silt_err(SILT_EIO, "%s: cannot write temp file", r->display);
    if (rc) {
        free(op);
        return rc;
    }
    *out = op;
    return 0;
}

/* ---- CSV scanning (first record, row -> line mapping) ------------------- */

typedef struct csv_it {
    FILE *f;
    int delim, quote, esc; /* -1 = none */
    size_t line;           /* current 1-based line */
} csv_it;

/* Next record. Returns 1 (record), 0 (EOF). `fields` (may be NULL) receives
 * the values separated by '\0'; *empty is true for an empty line. */
static int csv_next(csv_it *it, silt_buf *fields, size_t *nfields, size_t *start_line, bool *empty)
{
    size_t nf = 1;
    bool in_q = false, any = false, content = false; /* content: a byte before the line break */
    *start_line = it->line;
    if (fields)
        silt_buf_clear(fields);
    for (;;) {
        int c = getc(it->f);
        if (c == EOF) {
            if (!any)
                return 0;
            break;
        }
        any = true;
        if (in_q || (c != '\r' && c != '\n'))
            content = true;
        if (in_q) {
            if (c == it->esc && it->esc != it->quote) {
                int n = getc(it->f);
                if (n == it->quote || n == it->esc) {
                    c = n;
                } else if (n != EOF) {
                    ungetc(n, it->f);
                }
            } else if (c == it->quote) {
                int n = getc(it->f);
                if (n == it->quote) {
                    c = n;
                } else {
                    if (n != EOF)
                        ungetc(n, it->f);
                    in_q = false;
                    continue;
                }
            } else if (c == '\n') {
                it->line++;
            }
            if (fields && silt_buf_putc(fields, (char)c))
                return -1;
            continue;
        }
        if (c == it->quote) {
            in_q = true;
            continue;
        }
        if (c == it->delim) {
            nf++;
            if (fields && silt_buf_putc(fields, '\0'))
                return -1;
            continue;
        }
        if (c == '\r' || c == '\n') {
            if (c == '\r') {
                int n = getc(it->f);
                if (n != '\n' && n != EOF)
                    ungetc(n, it->f);
            }
            it->line++;
            break;
        }
        if (fields && silt_buf_putc(fields, (char)c))
            return -1;
    }
    *nfields = nf;
    *empty = !content;
    return 1;
}

static int csv_open(rd *r, const char *path, csv_it *it)
{
    const char *sep = opt_or(r->csv->separator, ",");
    const char *quote = opt_or(r->csv->quote, "\"");
    const char *esc = opt_or(r->csv->escape, "\\");
    it->delim = (unsigned char)sep[0];
    it->quote = *quote ? (unsigned char)quote[0] : -1;
    it->esc = *quote && *esc ? (unsigned char)esc[0] : -1;
    it->line = 1;
    it->f = fopen(path, "rb");
    if (!it->f)
        return silt_err(SILT_EIO, "%s: %s", r->display, strerror(errno));
    unsigned char bom[3];
    size_t n = fread(bom, 1, 3, it->f);
    if (!(n == 3 && bom[0] == 0xEF && bom[1] == 0xBB && bom[2] == 0xBF))
        rewind(it->f);
    return 0;
}

/* 1-based line where data row `row0` (0-based) of a CSV file starts. */
static size_t csv_row_line(rd *r, const char *path, size_t ncols, size_t row0)
{
    csv_it it;
    if (csv_open(r, path, &it))
        return 0;
    bool header = r->csv->has_header && r->csv->header;
    size_t idx = 0, nf, line = 0;
    bool empty, first = true;
    int got;
    while ((got = csv_next(&it, NULL, &nf, &line, &empty)) == 1) {
        if (empty && (ncols > 1 || (first && header))) /* as silt_read_csv_rows */
            continue;
        if (first && header) {
            first = false;
            continue;
        }
        first = false;
        if (idx++ == row0)
            break;
    }
    fclose(it.f);
    return got == 1 ? line : 0;
}

/* 1-based line of the `row0`-th non-blank line of an NDJSON file. */
static size_t ndjson_row_line(const char *path, size_t row0)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    char *ln = NULL;
    size_t cap = 0, line = 0, idx = 0, res = 0;
    ssize_t n;
    while ((n = getline(&ln, &cap, f)) >= 0) {
        line++;
        bool blank = true;
        for (ssize_t i = 0; i < n; i++)
            if (!isspace((unsigned char)ln[i]))
                blank = false;
        if (blank)
            continue;
        if (idx++ == row0) {
            res = line;
            break;
        }
    }
    free(ln);
    fclose(f);
    return res;
}

/* ---- staging ------------------------------------------------------------ */

static int exec_ctx(rd *r, const char *sql)
{
    int rc = silt_engine_exec(r->e, sql);
    if (rc)
        return silt_err_context(rc, "%s", r->display);
    return 0;
}

typedef struct reject_row {
    bool found;
    size_t line;
    char type[40];
    char msg[256];
} reject_row;

static int reject_cb(void *ctx, size_t ncols, const char *const *names, const char *const *vals)
{
    reject_row *rr = ctx;
    rr->found = true;
    rr->line = vals[0] ? (size_t)strtoull(vals[0], NULL, 10) : 0;
    snprintf(rr->type, sizeof rr->type, "%s", vals[1] ? vals[1] : "");
    snprintf(rr->msg, sizeof rr->msg, "%s", vals[2] ? vals[2] : "");
    return 1;
}

/* Scans the first non-empty record of a CSV file and fills `cols` with the
 * output column names: the schema's (whose field count must match) or the
 * header's / Spark's _cN. Errors: empty file, field count mismatch. */
static int csv_columns(rd *r, const char *path, strlist *cols)
{
    csv_it it;
    int rc = csv_open(r, path, &it);
    if (rc)
        return rc;
    silt_buf fields = SILT_BUF_INIT;
    size_t nf = 0, line = 0;
    bool empty = true;
    int got;
    while ((got = csv_next(&it, &fields, &nf, &line, &empty)) == 1 && empty)
        ;
    fclose(it.f);
    if (got < 0) {
        silt_buf_free(&fields);
        return silt_err(SILT_ENOMEM, "out of memory");
    }
    if (got == 0) {
        silt_buf_free(&fields);
        return silt_err(SILT_EINVAL, "%s: file is empty", r->display);
    }
    bool header = r->csv->has_header && r->csv->header;
    /* column names */
    if (r->schema) {
        if (nf != r->sc_names.n) {
            silt_buf_free(&fields);
            return silt_err(SILT_EINVAL, "%s: line %zu: expected %zu fields (as in the schema), found %zu", r->display,
                            line, r->sc_names.n, nf);
        }
        for (size_t i = 0; i < nf && !rc; i++)
            rc = strlist_push(cols, r->sc_names.v[i], strlen(r->sc_names.v[i]));
    } else {
        const char *p = fields.data ? fields.data : "";
        for (size_t i = 0; i < nf && !rc; i++) {
            size_t len = header ? strlen(p) : 0;
            char nm[32];
            snprintf(nm, sizeof nm, "_c%zu", i);
            bool dup = false;
            for (size_t j = 0; j < cols->n && len; j++)
                if (strlen(cols->v[j]) == len && !strncasecmp(cols->v[j], p, len))
                    dup = true;
            if (len && !dup) {
                rc = strlist_push(cols, p, len);
            } else if (len) { /* Spark: duplicate names get their index appended */
                char *d = malloc(len + 24);
                if (!d)
                    rc = silt_err(SILT_ENOMEM, "out of memory");
                else {
                    memcpy(d, p, len);
                    snprintf(d + len, 24, "%zu", i);
                    rc = strlist_push(cols, d, strlen(d));
                    free(d);
                }
            } else {
                rc = strlist_push(cols, nm, strlen(nm));
            }
            if (header)
                p += strlen(p) + 1;
        }
    }
    silt_buf_free(&fields);
    return rc;
}

/* DuckDB 1.4's default max_line_size; its read buffer is 16 times that. */
#define DUCK_CSV_MAX_LINE 2000000ULL

/* Our own pass over a CSV file (silt_read_csv_scan): the record count for
 * the cross-check, the empty lines before the header and the longest
 * record, which must fit the reader's buffer (see csv_read_opts). */
static int csv_prescan(rd *r, const char *path)
{
    int rc = silt_read_csv_scan(path, r->csv, r->display, &r->cst);
    if (rc)
        return rc;
    if (r->cst.max_len > SILT_READ_CSV_MAX_RECORD)
        return silt_err(SILT_EINVAL, "%s: line %llu: a record of %llu bytes is longer than the limit of %llu bytes",
                        r->display, (unsigned long long)r->cst.max_line, (unsigned long long)r->cst.max_len,
                        (unsigned long long)SILT_READ_CSV_MAX_RECORD);
    return 0;
}

/* Appends "read_csv('<path>', <dialect options>" (no closing parenthesis) to
 * `sql`: the reader options shared by the staging and the fast path, so both
 * tokenize every input identically. Needs csv_prescan's results:
 *  - skip: the empty lines before the header (DuckDB takes the first
 *    physical line as the header, we the first record, as Spark does);
 *  - max_line_size / buffer_size: DuckDB 1.4 cannot read a line longer than
 *    max_line_size that crosses one of its buffer boundaries, and when errors
 *    are stored (store_rejects) it drops such a line without a word. Lines up
 *    to max_line_size are read wherever they lie as long as the buffer holds
 *    two of them, so a file whose longest record exceeds the default gets
 *    max_line_size = that record (+ line break) and a buffer twice as big. */
static int csv_read_opts(rd *r, silt_buf *sql, const char *path)
{
    bool header = r->csv->has_header && r->csv->header;
    const char *quote = opt_or(r->csv->quote, "\"");
    const char *esc = *quote ? opt_or(r->csv->escape, "\\") : "";
    unsigned long long need = (unsigned long long)r->cst.max_len + 2;
    int rc = silt_buf_puts(sql, "read_csv(");
    rc = rc ? rc : buf_sql_str(sql, path);
    rc = rc ? rc : silt_buf_printf(sql, ", auto_detect=false, strict_mode=true, null_padding=false, comment='', skip=%llu, "
                                        "encoding='utf-8'", header ? (unsigned long long)r->cst.leading_empty : 0ULL);
    if (!rc && need > DUCK_CSV_MAX_LINE)
        rc = silt_buf_printf(sql, ", max_line_size=%llu, buffer_size=%llu", need, 2 * need);
    rc = rc ? rc : silt_buf_puts(sql, ", header=");
    rc = rc ? rc : silt_buf_puts(sql, header ? "true" : "false");
    rc = rc ? rc : silt_buf_puts(sql, ", delim=");
    rc = rc ? rc : buf_sql_str(sql, opt_or(r->csv->separator, ","));
    rc = rc ? rc : silt_buf_puts(sql, ", quote=");
    rc = rc ? rc : buf_sql_str(sql, quote);
    rc = rc ? rc : silt_buf_puts(sql, ", escape=");
    rc = rc ? rc : buf_sql_str(sql, esc);
    rc = rc ? rc : silt_buf_puts(sql, ", nullstr=");
    rc = rc ? rc : buf_sql_str(sql, opt_or(r->csv->null_value, ""));
    return rc;
}

static int stage_csv(rd *r, const char *path, const char *stg, strlist *cols)
{
    int rc = csv_prescan(r, path);
    rc = rc ? rc : csv_columns(r, path, cols);
    if (rc)
        return rc;
    r->expect = silt_read_csv_rows(&r->cst, r->csv->has_header && r->csv->header, cols->n);

    char rj[64], rs[64];
    snprintf(rj, sizeof rj, "__silt_rd%u_rj", r->id);
    snprintf(rs, sizeof rs, "__silt_rd%u_rs", r->id);
    silt_buf sql = SILT_BUF_INIT;
    rc = silt_buf_puts(&sql, "CREATE TEMP TABLE ");
    rc = rc ? rc : buf_sql_ident(&sql, stg);
    rc = rc ? rc : silt_buf_puts(&sql, " AS SELECT * FROM ");
    rc = rc ? rc : csv_read_opts(r, &sql, path);
    rc = rc ? rc : silt_buf_printf(&sql, ", store_rejects=true, rejects_table='%s', rejects_scan='%s', columns={", rj, rs);
    for (size_t i = 0; i < cols->n && !rc; i++) {
        rc = silt_buf_puts(&sql, i ? ", " : "");
        rc = rc ? rc : buf_sql_str(&sql, cols->v[i]);
        rc = rc ? rc : silt_buf_puts(&sql, ": 'VARCHAR'");
    }
    rc = rc ? rc : silt_buf_puts(&sql, "})");
    if (!rc)
        rc = exec_ctx(r, sql.data);
    silt_buf_free(&sql);
    if (!rc) {
        reject_row rr = {0};
        char q[256];
        snprintf(q, sizeof q,
                 "SELECT line, CAST(error_type AS VARCHAR), error_message FROM \"%s\" ORDER BY line, column_idx LIMIT 1",
                 rj);
        int qrc = silt_engine_query_rows(r->e, q, reject_cb, &rr);
        if (qrc < 0)
            rc = silt_err_context(qrc, "%s", r->display);
        else if (rr.found) {
            const char *f = strstr(rr.msg, "Found: ");
            if (!strcmp(rr.type, "MISSING COLUMNS") || !strcmp(rr.type, "TOO MANY COLUMNS"))
                rc = silt_err(SILT_EINVAL, "%s: line %zu: expected %zu fields, found %llu", r->display, rr.line,
                              cols->n, f ? strtoull(f + 7, NULL, 10) : 0ULL);
            else if (!strcmp(rr.type, "UNQUOTED VALUE"))
                rc = silt_err(SILT_EINVAL, "%s: line %zu: unterminated quoted value or stray quote character", r->display,
                              rr.line);
            else if (!strcmp(rr.type, "INVALID UNICODE") || !strcmp(rr.type, "INVALID ENCODING"))
                rc = silt_err(SILT_EINVAL, "%s: line %zu: invalid UTF-8 (set the encoding option)", r->display, rr.line);
            else
                rc = silt_err(SILT_EINVAL, "%s: line %zu: %s", r->display, rr.line, rr.msg);
        }
    }
    silt_engine_execf(r->e, "DROP TABLE IF EXISTS \"%s\"; DROP TABLE IF EXISTS \"%s\"", rj, rs);
    r->rows_have_lines = true;
    return rc;
}

/* First bad line of an NDJSON file, for a readable error after DuckDB failed. */
static int ndjson_diagnose(rd *r, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return silt_err(SILT_EIO, "%s: %s", r->display, strerror(errno));
    char *ln = NULL;
    size_t cap = 0, line = 0;
    ssize_t n;
    int rc = 0;
    while (!rc && (n = getline(&ln, &cap, f)) >= 0) {
        line++;
        bool blank = true;
        for (ssize_t i = 0; i < n; i++)
            if (!isspace((unsigned char)ln[i]))
                blank = false;
        if (blank)
            continue;
        json_error_t je;
        json_t *v = json_loadb(ln, (size_t)n, JSON_DECODE_ANY, &je);
        if (!v)
            rc = silt_err(SILT_EINVAL, "%s: line %zu: invalid JSON: %s", r->display, line, je.text);
        else if (!json_is_object(v))
            rc = silt_err(SILT_EINVAL, "%s: line %zu: expected a JSON object", r->display, line);
        json_decref(v);
    }
    free(ln);
    fclose(f);
    return rc;
}

static int stage_ndjson(rd *r, const char *path, const char *stg, const char *typed_cols, bool direct)
{
    silt_buf sql = SILT_BUF_INIT;
    int rc = silt_buf_puts(&sql, "CREATE TEMP TABLE ");
    rc = rc ? rc : buf_sql_ident(&sql, stg);
    if (r->schema && r->nrecords_hint == 0 && !direct) {
        /* nothing to read: an empty table with the schema's columns */
        rc = rc ? rc : silt_buf_puts(&sql, " AS SELECT ");
        for (size_t i = 0; i < r->sc_names.n && !rc; i++) {
            rc = silt_buf_puts(&sql, i ? ", CAST(NULL AS VARCHAR) AS " : "CAST(NULL AS VARCHAR) AS ");
            rc = rc ? rc : buf_sql_ident(&sql, r->sc_names.v[i]);
        }
        rc = rc ? rc : silt_buf_puts(&sql, " LIMIT 0");
    } else {
        rc = rc ? rc : silt_buf_puts(&sql, " AS SELECT * FROM read_json(");
        rc = rc ? rc : buf_sql_str(&sql, path);
        rc = rc ? rc : silt_buf_puts(&sql, ", format='newline_delimited', records=true, maximum_object_size=268435456");
        if (r->schema) {
            rc = rc ? rc : silt_buf_puts(&sql, ", columns={");
            for (size_t i = 0; i < r->sc_names.n && !rc; i++) {
                rc = silt_buf_puts(&sql, i ? ", " : "");
                rc = rc ? rc : buf_sql_str(&sql, r->sc_names.v[i]);
                rc = rc ? rc : silt_buf_puts(&sql, ": 'VARCHAR'");
            }
            rc = rc ? rc : silt_buf_puts(&sql, "}");
        } else if (typed_cols) {
            rc = rc ? rc : silt_buf_printf(&sql, ", columns={%s}", typed_cols);
        } else {
            rc = rc ? rc : silt_buf_puts(&sql, ", sample_size=-1");
            if (!rc && r->datefmt.len) {
                rc = silt_buf_puts(&sql, ", dateformat=");
                rc = rc ? rc : buf_sql_str(&sql, r->datefmt.data);
            }
            if (!rc && r->tsfmt.len) {
                rc = silt_buf_puts(&sql, ", timestampformat=");
                rc = rc ? rc : buf_sql_str(&sql, r->tsfmt.data);
            }
        }
        rc = rc ? rc : silt_buf_puts(&sql, ")");
    }
    if (!rc) {
        rc = silt_engine_exec(r->e, sql.data);
        if (rc == SILT_ENOMEM || rc == SILT_EIO)
            rc = silt_err_context(rc, "%s", r->display);
        else if (rc) {
            /* DuckDB's JSON errors name the temp file: find the line ourselves */
            char *msg = strdup(silt_error_last());
            int d = direct ? ndjson_diagnose(r, path) : 0;
            if (!d)
                rc = msg ? silt_err(rc, "%s: %s", r->display, msg) : silt_err(SILT_ENOMEM, "out of memory");
            else
                rc = d;
            free(msg);
        }
    }
    silt_buf_free(&sql);
    r->rows_have_lines = direct;
    return rc;
}

static int stage_parquet(rd *r, const char *path, const char *stg)
{
    silt_buf sql = SILT_BUF_INIT;
    int rc = silt_buf_puts(&sql, "CREATE TEMP TABLE ");
    rc = rc ? rc : buf_sql_ident(&sql, stg);
    rc = rc ? rc : silt_buf_puts(&sql, " AS SELECT * FROM read_parquet(");
    rc = rc ? rc : buf_sql_str(&sql, path);
    rc = rc ? rc : silt_buf_puts(&sql, ")");
    if (!rc && (rc = silt_engine_exec(r->e, sql.data))) {
        const char *m = silt_error_last();
        if (strstr(m, "magic bytes") || strstr(m, "too small to be a Parquet file"))
            rc = silt_err(SILT_EINVAL, "%s: not a Parquet file", r->display);
        else
            rc = silt_err_context(rc, "%s", r->display);
    }
    silt_buf_free(&sql);
    r->rows_have_lines = false;
    return rc;
}

/* ---- JSON-family rewriting to NDJSON ------------------------------------ */

static int load_json_doc(rd *r, const char *path, json_t **out)
{
    json_error_t je;
    *out = json_load_file(path, JSON_DECODE_ANY, &je);
    if (!*out)
        return silt_err(SILT_EINVAL, "%s: invalid JSON at line %d, column %d: %s", r->display, je.line, je.column,
                        je.text);
    return 0;
}

static int write_file_buf(rd *r, const char *path, const silt_buf *b)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return silt_err(SILT_EIO, "%s: cannot create temp file: %s", r->display, strerror(errno));
    bool ok = b->len == 0 || fwrite(b->data, 1, b->len, f) == b->len;
    if (fclose(f) != 0)
        ok = false;
    return ok ? 0 : silt_err(SILT_EIO, "%s: cannot write temp file", r->display);
}

static const char *json_type_name(json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER:
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

static int json_doc_to_ndjson(rd *r, const char *in, const char *out)
{
    json_t *root;
    int rc = load_json_doc(r, in, &root);
    if (rc)
        return rc;
    json_t *arr = root;
    if (r->sub_path && *r->sub_path) {
        const char *p = r->sub_path;
        while (!rc) {
            const char *dot = strchr(p, '.');
            size_t n = dot ? (size_t)(dot - p) : strlen(p);
            if (!json_is_object(arr)) {
                rc = silt_err(SILT_EINVAL, "%s: subPath '%s' not found (%.*s is not inside an object)", r->display,
                              r->sub_path, (int)(p - r->sub_path + n), r->sub_path);
                break;
            }
            arr = json_object_getn(arr, p, n);
            if (!arr) {
                rc = silt_err(SILT_EINVAL, "%s: subPath '%s' not found", r->display, r->sub_path);
                break;
            }
            if (!dot)
                break;
            p = dot + 1;
        }
        if (!rc && !json_is_array(arr))
            rc = silt_err(SILT_EINVAL, "%s: subPath '%s' is %s, not an array of objects", r->display, r->sub_path,
                          json_type_name(arr));
    } else if (!json_is_array(arr)) {
        rc = silt_err(SILT_EINVAL, "%s: expected an array of objects at the root, got %s (set subPath?)", r->display,
                      json_type_name(arr));
    }
    silt_buf b = SILT_BUF_INIT;
    size_t n = rc ? 0 : json_array_size(arr);
    for (size_t i = 0; i < n && !rc; i++) {
        json_t *rec = json_array_get(arr, i);
        if (!json_is_object(rec))
            rc = silt_err(SILT_EINVAL, "%s: record %zu is %s, not an object", r->display, i + 1, json_type_name(rec));
        else if (!(rc = json_write(&b, rec, false)))
            rc = silt_buf_putc(&b, '\n');
    }
    json_decref(root);
    if (!rc)
        rc = write_file_buf(r, out, &b);
    silt_buf_free(&b);
    r->nrecords_hint = n;
    return rc;
}

/* One GeoJSON Feature -> one NDJSON row ({properties..., "geometry": text}). */
static int feature_row(rd *r, silt_buf *b, json_t *feat, const char *where)
{
    if (!json_is_object(feat))
        return silt_err(SILT_EINVAL, "%s: %s is %s, not a Feature object", r->display, where, json_type_name(feat));
    json_t *props = json_object_get(feat, "properties");
    json_t *geom = json_object_get(feat, "geometry");
    if (props && !json_is_object(props) && !json_is_null(props))
        return silt_err(SILT_EINVAL, "%s: %s: 'properties' is %s, not an object", r->display, where, json_type_name(props));
    if (geom && !json_is_object(geom) && !json_is_null(geom))
        return silt_err(SILT_EINVAL, "%s: %s: 'geometry' is %s, not an object", r->display, where, json_type_name(geom));
    int rc = silt_buf_putc(b, '{');
    bool first = true;
    const char *key;
    json_t *val;
    if (json_is_object(props)) {
        json_object_foreach(props, key, val)
        {
            if (!strcmp(key, "geometry"))
                continue;
            rc = rc ? rc : silt_buf_puts(b, first ? "" : ",");
            rc = rc ? rc : json_put_string(b, key, strlen(key));
            rc = rc ? rc : silt_buf_putc(b, ':');
            rc = rc ? rc : json_write(b, val, false);
            first = false;
        }
    }
    rc = rc ? rc : silt_buf_puts(b, first ? "\"geometry\":" : ",\"geometry\":");
    if (!rc && json_is_object(geom)) {
        silt_buf g = SILT_BUF_INIT;
        rc = json_write(&g, geom, true);
        rc = rc ? rc : json_put_string(b, g.data, g.len);
        silt_buf_free(&g);
    } else if (!rc) {
        rc = silt_buf_puts(b, "null");
    }
    rc = rc ? rc : silt_buf_puts(b, "}\n");
    return rc;
}

static int geojson_to_ndjson(rd *r, const char *in, const char *out)
{
    json_t *root;
    int rc = load_json_doc(r, in, &root);
    if (rc)
        return rc;
    json_t *type = json_is_object(root) ? json_object_get(root, "type") : NULL;
    json_t *feats = json_is_object(root) ? json_object_get(root, "features") : NULL;
    if (!json_is_string(type) || strcmp(json_string_value(type), "FeatureCollection"))
        rc = silt_err(SILT_EINVAL, "%s: expected a GeoJSON FeatureCollection, got %s%s%s", r->display,
                      json_is_string(type) ? "type '" : json_type_name(root),
                      json_is_string(type) ? json_string_value(type) : "", json_is_string(type) ? "'" : "");
    else if (!json_is_array(feats))
        rc = silt_err(SILT_EINVAL, "%s: FeatureCollection has no 'features' array", r->display);
    silt_buf b = SILT_BUF_INIT;
    size_t n = rc ? 0 : json_array_size(feats);
    for (size_t i = 0; i < n && !rc; i++) {
        char where[48];
        snprintf(where, sizeof where, "feature %zu", i + 1);
        rc = feature_row(r, &b, json_array_get(feats, i), where);
    }
    json_decref(root);
    if (!rc)
        rc = write_file_buf(r, out, &b);
    silt_buf_free(&b);
    r->nrecords_hint = n;
    return rc;
}

static int ndgeojson_to_ndjson(rd *r, const char *in, const char *out)
{
    FILE *f = fopen(in, "rb");
    if (!f)
        return silt_err(SILT_EIO, "%s: %s", r->display, strerror(errno));
    char *ln = NULL;
    size_t cap = 0, line = 0, n = 0;
    ssize_t len;
    int rc = 0;
    silt_buf b = SILT_BUF_INIT;
    while (!rc && (len = getline(&ln, &cap, f)) >= 0) {
        line++;
        bool blank = true;
        for (ssize_t i = 0; i < len; i++)
            if (!isspace((unsigned char)ln[i]))
                blank = false;
        if (blank)
            continue;
        json_error_t je;
        json_t *v = json_loadb(ln, (size_t)len, JSON_DECODE_ANY, &je);
        if (!v) {
            rc = silt_err(SILT_EINVAL, "%s: line %zu: invalid JSON: %s", r->display, line, je.text);
            break;
        }
        char where[48];
        snprintf(where, sizeof where, "line %zu", line);
        rc = feature_row(r, &b, v, where);
        json_decref(v);
        n++;
    }
    free(ln);
    fclose(f);
    if (!rc)
        rc = write_file_buf(r, out, &b);
    silt_buf_free(&b);
    r->nrecords_hint = n;
    return rc;
}

/* ---- conversion to target types ----------------------------------------- */

#define TS_OFFSET_RE "'\\d:\\d\\d(:\\d\\d(\\.\\d+)?)?\\s*([Zz]|[+-]\\d\\d(:?\\d\\d)?)\\s*$'"

static bool type_is(const char *t, const char *prefix)
{
    size_t n = strlen(prefix);
    return !strncmp(t, prefix, n) && (t[n] == '\0' || t[n] == '(');
}

/* Appends the conversion of value expression `v` (a VARCHAR when `from_text`)
 * to DuckDB type `t`. Lenient form (`strict` false): NULL where the value does
 * not convert. Strict form: the same expression built from CAST/STRPTIME
 * instead of TRY_CAST/TRY_STRPTIME, so it yields exactly the lenient value
 * wherever that is not NULL and raises a DuckDB error otherwise (the fast
 * path relies on this equivalence). */
static int conv_expr(rd *r, silt_buf *b, const char *v, const char *t, bool from_text, bool strict)
{
    const char *cast = strict ? "CAST" : "TRY_CAST";
    const char *strp = strict ? "STRPTIME" : "TRY_STRPTIME";
    if (!from_text)
        return silt_buf_printf(b, "%s(%s AS %s)", cast, v, t);
    if (type_is(t, "VARCHAR"))
        return silt_buf_puts(b, v);
    int rc = 0;
    bool is_ts = !strncmp(t, "TIMESTAMP", 9) && strcmp(t, "TIMESTAMPTZ") != 0;
    if (type_is(t, "DATE") && r->datefmt.len) {
        rc = silt_buf_printf(b, "%s(%s(%s, ", cast, strp, v);
        rc = rc ? rc : buf_sql_str(b, r->datefmt.data);
        rc = rc ? rc : silt_buf_puts(b, ") AS DATE)");
    } else if ((is_ts || !strcmp(t, "TIMESTAMPTZ")) && r->tsfmt.len) {
        bool tz = strstr(r->tsfmt.data, "%z") || strstr(r->tsfmt.data, "%Z");
        rc = silt_buf_printf(b, "%s(%s%s(%s, ", cast, tz && is_ts ? "timezone('UTC', " : "", strp, v);
        rc = rc ? rc : buf_sql_str(b, r->tsfmt.data);
        rc = rc ? rc : silt_buf_printf(b, ")%s AS %s)", tz && is_ts ? ")" : "", t);
    } else if (is_ts) {
        rc = silt_buf_printf(b,
                             "CASE WHEN regexp_matches(%s, " TS_OFFSET_RE ") THEN %s(timezone('UTC', "
                             "%s(%s AS TIMESTAMPTZ)) AS %s) ELSE %s(%s(%s AS TIMESTAMP) AS %s) END",
                             v, cast, cast, v, t, cast, cast, v, t);
    } else if (r->kind != ODF_ReadStep_Csv && (strchr(t, '[') || !strncmp(t, "STRUCT", 6) || !strncmp(t, "MAP", 3))) {
        rc = silt_buf_printf(b, "%s(%s(%s AS JSON) AS %s)", cast, cast, v, t);
    } else {
        rc = silt_buf_printf(b, "%s(%s AS %s)", cast, v, t);
    }
    return rc;
}

/* The value expression of a column: text is trimmed, "" is NULL for
 * non-string targets. */
static int value_expr(silt_buf *b, const char *ident, const char *t, bool from_text)
{
    if (!from_text || type_is(t, "VARCHAR"))
        return silt_buf_puts(b, ident);
    return silt_buf_printf(b, "NULLIF(trim(%s), '')", ident);
}

typedef struct stg_col {
    char *ident;      /* quoted identifier in the staging table */
    char *name;       /* output column name */
    const char *type; /* target type or NULL (keep) */
} stg_col;

typedef struct first_bad {
    bool found;
    unsigned long long row;
    size_t col;
} first_bad;

static int first_bad_cb(void *ctx, size_t ncols, const char *const *names, const char *const *vals)
{
    first_bad *fb = ctx;
    fb->found = true;
    fb->row = vals[0] ? strtoull(vals[0], NULL, 10) : 0;
    fb->col = vals[1] ? (size_t)strtoull(vals[1], NULL, 10) : 0;
    return 1;
}

/* CSV inferSchema looks at the first SILT_INFER_SAMPLE_ROWS rows (DuckDB's
 * read_csv default sample_size); every later row is still checked against
 * the chosen types (check_inferred), so a value that does not fit is an
 * error naming its row and column, never a NULL or a rounded number. */
#define SILT_INFER_SAMPLE_ROWS 20480

static int report_bad_value(rd *r, const char *stg_ident, const char *path, stg_col *cols, size_t n,
                            const first_bad *fb, bool misfit);

/* Checks that every non-null value converts; errors name the first bad one. */
static int check_conversions(rd *r, const char *stg_ident, const char *path, stg_col *cols, size_t n, bool from_text)
{
    silt_buf q = SILT_BUF_INIT;
    int rc = silt_buf_puts(&q, "SELECT r, k FROM (SELECT rowid AS r, CASE");
    size_t nchecks = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        if (!cols[i].type || (from_text && type_is(cols[i].type, "VARCHAR")))
            continue;
        silt_buf v = SILT_BUF_INIT;
        rc = value_expr(&v, cols[i].ident, cols[i].type, from_text);
        rc = rc ? rc : silt_buf_printf(&q, " WHEN (%s) IS NOT NULL AND (", v.data);
        rc = rc ? rc : conv_expr(r, &q, v.data, cols[i].type, from_text, false);
        rc = rc ? rc : silt_buf_printf(&q, ") IS NULL THEN %zu", i);
        silt_buf_free(&v);
        nchecks++;
    }
    rc = rc ? rc : silt_buf_printf(&q, " END AS k FROM %s) WHERE k IS NOT NULL ORDER BY r LIMIT 1", stg_ident);
    first_bad fb = {0};
    if (!rc && nchecks) {
        int qrc = silt_engine_query_rows(r->e, q.data, first_bad_cb, &fb);
        if (qrc < 0)
            rc = silt_err_context(qrc, "%s", r->display);
    }
    silt_buf_free(&q);
    if (rc || !fb.found)
        return rc;
    return report_bad_value(r, stg_ident, path, cols, n, &fb, false);
}

/* The error of the first bad value `fb`: row, line, column, value; with
 * `misfit`, a value that does not fit the type inferSchema chose. */
static int report_bad_value(rd *r, const char *stg_ident, const char *path, stg_col *cols, size_t n,
                            const first_bad *fb, bool misfit)
{
    int rc = 0;
    stg_col *c = &cols[fb->col];
    char *val = NULL;
    silt_buf vq = SILT_BUF_INIT;
    rc = silt_buf_printf(&vq, "SELECT CAST(%s AS VARCHAR) FROM %s WHERE rowid = %llu", c->ident, stg_ident, fb->row);
    if (!rc)
        silt_engine_query_text(r->e, &val, vq.data);
    silt_buf_free(&vq);
    if (rc)
        return rc;
    size_t line = 0;
    if (r->rows_have_lines)
        line = r->kind == ODF_ReadStep_Csv ? csv_row_line(r, path, n, (size_t)fb->row) : ndjson_row_line(path, (size_t)fb->row);
    char lbuf[48] = "";
    if (line)
        snprintf(lbuf, sizeof lbuf, " (line %zu)", line);
    char vbuf[128];
    if (misfit)
        rc = silt_err(SILT_EINVAL,
                      "%s: row %llu%s, column '%s': '%s' is not a %s value (inferSchema chose %s from the first %d "
                      "rows: declare the types instead, with ddlSchema or `silt new NAME --push-source csv --schema "
                      "'name TYPE, ...'`)",
                      r->display, fb->row + 1, lbuf, c->name, val ? shown(val, vbuf, 100) : "", c->type, c->type,
                      SILT_INFER_SAMPLE_ROWS);
    else
        rc = silt_err(SILT_EINVAL, "%s: row %llu%s, column '%s': cannot convert '%s' to %s", r->display, fb->row + 1,
                      lbuf, c->name, val ? shown(val, vbuf, 100) : "", c->type);
    free(val);
    return rc;
}

typedef struct infer_res {
    size_t ncols;
    const char **types;
} infer_res;

static const char *const INFER_CAND[] = {"BIGINT", "DOUBLE", "BOOLEAN", "DATE", "TIMESTAMP"};

static int infer_cb(void *ctx, size_t ncols, const char *const *names, const char *const *vals)
{
    infer_res *ir = ctx;
    const char *const *cand = INFER_CAND;
    for (size_t i = 0; i < ir->ncols; i++) {
        const char *cnt = vals[i * 6];
        ir->types[i] = "VARCHAR";
        if (!cnt || !strcmp(cnt, "0"))
            continue;
        for (size_t k = 0; k < 5; k++)
            if (vals[i * 6 + 1 + k] && !strcmp(vals[i * 6 + 1 + k], "true")) {
                ir->types[i] = cand[k];
                break;
            }
    }
    return 0;
}

/* Appends the inferSchema test of candidate INFER_CAND[k] for the text value
 * expression `v` (non-NULL): stricter than the conversion for BIGINT (no
 * "1.5", which the cast would round), BOOLEAN and DATE. */
static int infer_pred(rd *r, silt_buf *q, const char *v, size_t k)
{
    if (k == 0)
        return silt_buf_printf(q, "(regexp_full_match(%s, '[+-]?[0-9]+') AND TRY_CAST(%s AS BIGINT) IS NOT NULL)", v, v);
    if (k == 2)
        return silt_buf_printf(q, "(lower(%s) IN ('true', 'false'))", v);
    if (k == 3 && !r->datefmt.len)
        return silt_buf_printf(q, "(regexp_full_match(%s, '[0-9]{4}-[0-9]{2}-[0-9]{2}') AND TRY_CAST(%s AS DATE) IS NOT NULL)", v, v);
    int rc = silt_buf_puts(q, "((");
    rc = rc ? rc : conv_expr(r, q, v, INFER_CAND[k], true, false);
    return rc ? rc : silt_buf_puts(q, ") IS NOT NULL)");
}

/* Index of an inferred type in INFER_CAND, or -1 (VARCHAR). */
static int infer_cand(const char *t)
{
    for (int k = 0; t && k < 5; k++)
        if (t == INFER_CAND[k])
            return k;
    return -1;
}

/* CSV inferSchema: per column the first of BIGINT, DOUBLE, BOOLEAN, DATE,
 * TIMESTAMP that every non-empty value of the sample converts to, else
 * VARCHAR. */
static int infer_types(rd *r, const char *stg_ident, stg_col *cols, size_t n)
{
    silt_buf q = SILT_BUF_INIT;
    int rc = silt_buf_puts(&q, "SELECT ");
    for (size_t i = 0; i < n && !rc; i++) {
        silt_buf v = SILT_BUF_INIT;
        rc = value_expr(&v, cols[i].ident, "BIGINT", true);
        rc = rc ? rc : silt_buf_printf(&q, "%scount(%s)", i ? ", " : "", v.data);
        for (size_t k = 0; k < 5 && !rc; k++) {
            rc = silt_buf_printf(&q, ", coalesce(bool_and(CASE WHEN (%s) IS NULL THEN NULL ELSE ", v.data);
            rc = rc ? rc : infer_pred(r, &q, v.data, k);
            rc = rc ? rc : silt_buf_puts(&q, " END), true)");
        }
        silt_buf_free(&v);
    }
    rc = rc ? rc : silt_buf_printf(&q, " FROM %s WHERE rowid < %d", stg_ident, SILT_INFER_SAMPLE_ROWS);
    const char **types = calloc(n ? n : 1, sizeof *types);
    if (!types && !rc)
        rc = silt_err(SILT_ENOMEM, "out of memory");
    infer_res ir = {n, types};
    if (!rc) {
        int qrc = silt_engine_query_rows(r->e, q.data, infer_cb, &ir);
        if (qrc < 0)
            rc = silt_err_context(qrc, "%s", r->display);
    }
    for (size_t i = 0; i < n && !rc; i++)
        cols[i].type = types[i] ? types[i] : "VARCHAR";
    free(types);
    silt_buf_free(&q);
    return rc;
}

/* Checks the rows after the sample against the types inferSchema chose
 * (the same tests as the inference); errors name the first misfit. */
static int check_inferred(rd *r, const char *stg_ident, const char *path, stg_col *cols, size_t n)
{
    silt_buf q = SILT_BUF_INIT;
    int rc = silt_buf_puts(&q, "SELECT r, k FROM (SELECT rowid AS r, CASE");
    size_t nchecks = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        int k = infer_cand(cols[i].type);
        if (k < 0)
            continue;
        silt_buf v = SILT_BUF_INIT;
        rc = value_expr(&v, cols[i].ident, "BIGINT", true);
        rc = rc ? rc : silt_buf_printf(&q, " WHEN (%s) IS NOT NULL AND NOT ", v.data);
        rc = rc ? rc : infer_pred(r, &q, v.data, (size_t)k);
        rc = rc ? rc : silt_buf_printf(&q, " THEN %zu", i);
        silt_buf_free(&v);
        nchecks++;
    }
    rc = rc ? rc : silt_buf_printf(&q, " END AS k FROM %s WHERE rowid >= %d) WHERE k IS NOT NULL ORDER BY r LIMIT 1",
                                   stg_ident, SILT_INFER_SAMPLE_ROWS);
    first_bad fb = {0};
    if (!rc && nchecks) {
        int qrc = silt_engine_query_rows(r->e, q.data, first_bad_cb, &fb);
        if (qrc < 0)
            rc = silt_err_context(qrc, "%s", r->display);
    }
    silt_buf_free(&q);
    if (rc || !fb.found)
        return rc;
    return report_bad_value(r, stg_ident, path, cols, n, &fb, true);
}

/* Fast path of CSV inferSchema: the types chosen from the first
 * SILT_INFER_SAMPLE_ROWS rows, read as text (*types_out: static strings,
 * malloc'd array). The slow path chooses the same ones from the same
 * rows. */
static int fast_csv_infer(rd *r, const char *src, const strlist *names, const char ***types_out)
{
    static const char SMP[] = "__silt_infer_sample";
    silt_buf sql = SILT_BUF_INIT;
    int rc = silt_buf_printf(&sql, "CREATE OR REPLACE TEMP TABLE %s AS SELECT * FROM ", SMP);
    rc = rc ? rc : csv_read_opts(r, &sql, src);
    rc = rc ? rc : silt_buf_puts(&sql, ", columns={");
    for (size_t i = 0; i < names->n && !rc; i++) {
        rc = silt_buf_puts(&sql, i ? ", " : "");
        rc = rc ? rc : buf_sql_str(&sql, names->v[i]);
        rc = rc ? rc : silt_buf_puts(&sql, ": 'VARCHAR'");
    }
    rc = rc ? rc : silt_buf_printf(&sql, "}) LIMIT %d", SILT_INFER_SAMPLE_ROWS);
    rc = rc ? rc : silt_engine_exec(r->e, sql.data);
    silt_buf_free(&sql);
    stg_col *cols = calloc(names->n ? names->n : 1, sizeof *cols);
    if (!rc && !cols)
        rc = silt_err(SILT_ENOMEM, "out of memory");
    for (size_t i = 0; i < names->n && !rc; i++)
        if (!(cols[i].ident = silt_sql_ident(names->v[i])))
            rc = silt_err(SILT_ENOMEM, "out of memory");
    char ident[64];
    snprintf(ident, sizeof ident, "temp.main.%s", SMP);
    rc = rc ? rc : infer_types(r, ident, cols, names->n);
    const char **types = rc ? NULL : calloc(names->n ? names->n : 1, sizeof *types);
    if (!rc && !types)
        rc = silt_err(SILT_ENOMEM, "out of memory");
    for (size_t i = 0; i < names->n; i++) {
        if (types)
            types[i] = cols[i].type;
        if (cols)
            free(cols[i].ident);
    }
    free(cols);
    silt_engine_execf(r->e, "DROP TABLE IF EXISTS temp.main.%s", SMP);
    *types_out = types;
    return rc;
}

static int names_cb(void *ctx, size_t ncols, const char *const *names, const char *const *vals)
{
    strlist *l = ctx;
    return strlist_push(l, vals[0] ? vals[0] : "", vals[0] ? strlen(vals[0]) : 0);
}

/* Appends to `sel` the converted select list of one staged file. */
static int convert_file(rd *r, const char *path, const char *stg, silt_buf *sel)
{
    char *stg_ident = silt_sql_ident(stg);
    if (!stg_ident)
        return SILT_ENOMEM;
    strlist names = {0};
    silt_buf q = SILT_BUF_INIT;
    int rc = silt_buf_puts(&q, "SELECT name FROM pragma_table_info(");
    rc = rc ? rc : buf_sql_str(&q, stg);
    rc = rc ? rc : silt_buf_puts(&q, ") ORDER BY cid");
    if (!rc)
        rc = silt_engine_query_rows(r->e, q.data, names_cb, &names);
    silt_buf_free(&q);
    size_t n = r->schema ? r->sc_names.n : names.n;
    stg_col *cols = calloc(n ? n : 1, sizeof *cols);
    if (!rc && !cols)
        rc = silt_err(SILT_ENOMEM, "out of memory");
    bool from_text = r->kind != ODF_ReadStep_Parquet;
    for (size_t i = 0; i < n && !rc; i++) {
        if (r->schema) {
            size_t j = 0;
            while (j < names.n && strcasecmp(names.v[j], r->sc_names.v[i]))
                j++;
            if (j == names.n) {
                rc = silt_err(SILT_EINVAL, "%s: column '%s' of the schema not found in the file", r->display,
                              r->sc_names.v[i]);
                break;
            }
            cols[i].ident = silt_sql_ident(names.v[j]);
            cols[i].name = r->sc_names.v[i];
            cols[i].type = r->sc_types.v[i];
        } else {
            cols[i].ident = silt_sql_ident(names.v[i]);
            cols[i].name = names.v[i];
            cols[i].type = NULL;
        }
        if (!cols[i].ident)
            rc = SILT_ENOMEM;
    }
    if (!rc && !n)
        rc = silt_err(SILT_EINVAL, "%s: no columns", r->display);
    bool inferred = !r->schema && r->kind == ODF_ReadStep_Csv && r->csv->has_infer_schema && r->csv->infer_schema;
    if (!rc && inferred)
        rc = infer_types(r, stg_ident, cols, n);
    if (!rc && r->schema)
        rc = check_conversions(r, stg_ident, path, cols, n, from_text);
    if (!rc && inferred)
        rc = check_inferred(r, stg_ident, path, cols, n);
    for (size_t i = 0; i < n && !rc; i++) {
        rc = silt_buf_puts(sel, i ? ", " : "");
        if (!rc && cols[i].type && !(from_text && type_is(cols[i].type, "VARCHAR"))) {
            silt_buf v = SILT_BUF_INIT;
            rc = value_expr(&v, cols[i].ident, cols[i].type, from_text);
            rc = rc ? rc : conv_expr(r, sel, v.data, cols[i].type, from_text, false);
            silt_buf_free(&v);
        } else if (!rc) {
            rc = silt_buf_puts(sel, cols[i].ident);
        }
        rc = rc ? rc : silt_buf_puts(sel, " AS ");
        rc = rc ? rc : buf_sql_ident(sel, cols[i].name);
    }
    for (size_t i = 0; i < n && cols; i++)
        free(cols[i].ident);
    free(cols);
    strlist_free(&names);
    free(stg_ident);
    return rc;
}

/* ---- row count cross-check ---------------------------------------------- */

/* Row count of a Parquet file from its footer (our own decoder). */
static int parquet_rows(rd *r, const char *path, uint64_t *out)
{
    silt_parquet_meta *m = NULL;
    int rc = silt_parquet_read_meta(path, &m);
    if (rc) {
        /* the decoder's messages start with the path: show the display name */
        const char *msg = silt_error_last();
        size_t n = strlen(path);
        if (!strncmp(msg, path, n) && !strncmp(msg + n, ": ", 2))
            msg += n + 2;
        char *copy = strdup(msg);
        rc = copy ? silt_err(rc, "%s: %s", r->display, copy) : silt_err(SILT_ENOMEM, "out of memory");
        free(copy);
        return rc;
    }
    if (m->num_rows < 0)
        rc = silt_err(SILT_ECORRUPT, "%s: the Parquet footer has a negative row count", r->display);
    else
        *out = (uint64_t)m->num_rows;
    silt_parquet_meta_free(m);
    return rc;
}

static int table_rows(rd *r, const char *qualified, uint64_t *out)
{
    silt_buf b = SILT_BUF_INIT;
    int rc = silt_buf_printf(&b, "SELECT count(*) FROM %s", qualified);
    rc = rc ? rc : silt_engine_query_u64(r->e, out, b.data);
    silt_buf_free(&b);
    return rc;
}

/* The reader produced `got` rows from the current file; its records were
 * counted independently into r->expect. */
static int check_count(rd *r, uint64_t got)
{
    if (got == r->expect)
        return 0;
    return silt_err(SILT_EINTERNAL,
                    "%s: row count cross-check failed: the reader produced %llu rows, the file has %llu records",
                    r->display, (unsigned long long)got, (unsigned long long)r->expect);
}

/* ---- one file ----------------------------------------------------------- */

static int read_one(rd *r, const char *path, const char *stg, silt_buf *sel)
{
    off_t size = 0;
    int rc = check_input_file(path, r->display, &size);
    if (rc)
        return rc;
    if (size == 0)
        return silt_err(SILT_EINVAL, "%s: file is empty", r->display);
    r->nrecords_hint = 0;
    r->rows_have_lines = false;
    r->expect = 0;
    char *conv = NULL, *nd = NULL;
    const char *src = path;
    bool text = r->kind != ODF_ReadStep_Parquet && r->kind != ODF_ReadStep_EsriShapefile;
    if (text && r->encoding) {
        rc = transcode(r, path, &conv);
        src = conv;
    }
    if (!rc && text && r->kind != ODF_ReadStep_Csv) {
        /* whitespace-only JSON text counts as empty */
        FILE *f = fopen(src, "rb");
        int c = EOF;
        if (f) {
            while ((c = getc(f)) != EOF && (isspace(c) || c == 0xEF || c == 0xBB || c == 0xBF))
                ;
            fclose(f);
        }
        if (c == EOF)
            rc = silt_err(SILT_EINVAL, "%s: file is empty", r->display);
    }
    silt_buf typed = SILT_BUF_INIT;
    if (!rc) {
        switch (r->kind) {
        case ODF_ReadStep_Csv: {
            strlist cols = {0};
            rc = stage_csv(r, src, stg, &cols);
            strlist_free(&cols);
            break;
        }
        case ODF_ReadStep_NdJson:
            rc = silt_read_ndjson_count(src, r->display, &r->expect);
            rc = rc ? rc : stage_ndjson(r, src, stg, NULL, true);
            break;
        case ODF_ReadStep_Json:
        case ODF_ReadStep_GeoJson:
        case ODF_ReadStep_NdGeoJson:
            nd = tmp_path(r, "ndjson");
            if (!nd) {
                rc = SILT_ENOMEM;
                break;
            }
            rc = r->kind == ODF_ReadStep_Json      ? json_doc_to_ndjson(r, src, nd)
                 : r->kind == ODF_ReadStep_GeoJson ? geojson_to_ndjson(r, src, nd)
                                                   : ndgeojson_to_ndjson(r, src, nd);
            if (!rc && r->nrecords_hint == 0 && !r->schema)
                rc = silt_err(SILT_EINVAL, "%s: no records to read and no schema to define the columns", r->display);
            r->expect = r->nrecords_hint; /* array elements / features / lines */
            if (!rc)
                rc = stage_ndjson(r, nd, stg, NULL, false);
            break;
        case ODF_ReadStep_EsriShapefile: {
            nd = tmp_path(r, "ndjson");
            char sub[32];
            snprintf(sub, sizeof sub, "shp%u", r->tmpseq++);
            char *dir = silt_path_join(r->tmpdir, sub, NULL);
            if (!nd || !dir) {
                free(dir);
                rc = silt_err(SILT_ENOMEM, "out of memory");
                break;
            }
            rc = silt_read_shp_to_ndjson(path, r->display, r->sub_path, dir, nd, &typed);
            free(dir);
            rc = rc ? rc : silt_read_ndjson_count(nd, r->display, &r->expect); /* one line per shape */
            if (!rc) {
                FILE *f = fopen(nd, "rb");
                int c = f ? getc(f) : EOF;
                if (f)
                    fclose(f);
                r->nrecords_hint = c == EOF ? 0 : 1;
                if (r->nrecords_hint == 0 && !r->schema) {
                    /* no records: a typed empty table */
                    silt_buf sql = SILT_BUF_INIT;
                    rc = silt_buf_puts(&sql, "CREATE TEMP TABLE ");
                    rc = rc ? rc : buf_sql_ident(&sql, stg);
                    rc = rc ? rc : silt_buf_printf(&sql, " AS SELECT * FROM read_json('/dev/null', format='newline_delimited', columns={%s})", typed.data);
                    if (!rc)
                        rc = exec_ctx(r, sql.data);
                    silt_buf_free(&sql);
                } else {
                    rc = stage_ndjson(r, nd, stg, typed.data, false);
                }
            }
            break;
        }
        case ODF_ReadStep_Parquet:
            rc = stage_parquet(r, src, stg);
            rc = rc ? rc : parquet_rows(r, src, &r->expect);
            break;
        default: rc = silt_err(SILT_EINVAL, "unsupported ReadStep kind %d", r->kind);
        }
    }
    if (!rc) {
        uint64_t got = 0;
        char qs[80];
        snprintf(qs, sizeof qs, "temp.main.\"%s\"", stg);
        rc = table_rows(r, qs, &got);
        rc = rc ? rc : check_count(r, got);
    }
    if (!rc)
        rc = convert_file(r, src, stg, sel);
    silt_buf_free(&typed);
    free(conv);
    free(nd);
    return rc;
}

/* ---- fast path ----------------------------------------------------------
 *
 * One native DuckDB scan per file, straight into the target table: CSV with a
 * schema (or inferSchema off), NdJson/Json with a schema, Parquet. The select
 * list of a file is the slow path's conversion with strict casts (conv_expr
 * strict form) or, for CSV columns whose DuckDB CSV parsing is known to equal
 * TRY_CAST(NULLIF(trim(v), '') AS T) wherever it succeeds, the native typed
 * column itself. The reader options are the staging ones (csv_read_opts), so
 * tokenizing (quotes, escapes, nullValue, BOM, CRLF, blank lines) is the same.
 * Any failure (DuckDB error, ragged row, empty file, field count, ...) makes
 * the caller drop the table and run the slow path, which then produces the
 * exact diagnostic (or, where DuckDB was stricter than the slow path, e.g. a
 * whitespace-only number, the same result). */

static _Thread_local silt_read_mode g_read_mode = SILT_READ_AUTO;
static _Thread_local bool g_last_fast;

void silt_read_set_mode(silt_read_mode mode) { g_read_mode = mode; }
bool silt_read_last_was_fast(void) { return g_last_fast; }

#define FAST_NA 1 /* fast path not applicable (no error recorded) */

/* Target types whose native DuckDB CSV conversion matches the slow path's
 * (verified value by value in test_read.c): integers, floats, decimals,
 * booleans, DATE without a dateFormat, VARCHAR. TIMESTAMPs are not (DuckDB's
 * CSV TIMESTAMP parser drops UTC offsets, the slow path converts them). */
static bool csv_native_type(const rd *r, const char *t)
{
    static const char *const ok[] = {"BIGINT", "INTEGER", "SMALLINT", "TINYINT", "UBIGINT", "UINTEGER",
                                     "USMALLINT", "UTINYINT", "DOUBLE", "FLOAT", "BOOLEAN", "VARCHAR", "DECIMAL"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (type_is(t, ok[i]))
            return true;
    return type_is(t, "DATE") && !r->datefmt.len;
}

/* Appends "<expr> AS <name>" for a text column `name` converted to `t`
 * (strict; t NULL or VARCHAR: the column itself). */
static int fast_text_col(rd *r, silt_buf *sel, const char *name, const char *t)
{
    char *id = silt_sql_ident(name);
    if (!id)
        return silt_err(SILT_ENOMEM, "out of memory");
    int rc = 0;
    if (t && !type_is(t, "VARCHAR")) {
        silt_buf v = SILT_BUF_INIT;
        rc = value_expr(&v, id, t, true);
        rc = rc ? rc : conv_expr(r, sel, v.data, t, true, true);
        silt_buf_free(&v);
    } else {
        rc = silt_buf_puts(sel, id);
    }
    rc = rc ? rc : silt_buf_printf(sel, " AS %s", id);
    free(id);
    return rc;
}

/* Appends "<expr> AS <name>" for text column `name` inferred as type
 * INFER_CAND[k]: a value failing the inference's test raises an error (the
 * caller then runs the slow path, which reports it with its row). */
static int fast_inferred_col(rd *r, silt_buf *sel, const char *name, const char *t, size_t k)
{
    char *id = silt_sql_ident(name);
    if (!id)
        return silt_err(SILT_ENOMEM, "out of memory");
    silt_buf v = SILT_BUF_INIT, tv = SILT_BUF_INIT;
    int rc = value_expr(&tv, id, "BIGINT", true);
    rc = rc ? rc : value_expr(&v, id, t, true);
    rc = rc ? rc : silt_buf_printf(sel, "CASE WHEN (%s) IS NOT NULL AND NOT ", tv.data);
    rc = rc ? rc : infer_pred(r, sel, tv.data, k);
    rc = rc ? rc : silt_buf_puts(sel, " THEN error('inferSchema: value does not fit') ELSE ");
    rc = rc ? rc : conv_expr(r, sel, v.data, t, true, true);
    rc = rc ? rc : silt_buf_printf(sel, " END AS %s", id);
    silt_buf_free(&v);
    silt_buf_free(&tv);
    free(id);
    return rc;
}

static int fast_csv(rd *r, const char *src, silt_buf *q)
{
    strlist cols = {0};
    int rc = csv_prescan(r, src);
    rc = rc ? rc : csv_columns(r, src, &cols);
    if (!rc)
        r->expect = silt_read_csv_rows(&r->cst, r->csv->has_header && r->csv->header, cols.n);
    bool infer = r->csv->has_infer_schema && r->csv->infer_schema;
    const char **inferred = NULL;
    if (!rc && !r->schema && infer)
        rc = fast_csv_infer(r, src, &cols, &inferred);
    silt_buf sel = SILT_BUF_INIT, from = SILT_BUF_INIT;
    rc = rc ? rc : csv_read_opts(r, &from, src);
    rc = rc ? rc : silt_buf_puts(&from, ", columns={");
    for (size_t i = 0; i < cols.n && !rc; i++) {
        const char *t = r->schema ? r->sc_types.v[i] : inferred ? inferred[i] : "VARCHAR";
        /* inferred BIGINT, BOOLEAN, DATE: read as text, so later rows get
         * the inference's own (stricter) test */
        int k = inferred ? infer_cand(t) : -1;
        bool tested = k == 0 || k == 2 || (k == 3 && !r->datefmt.len);
        bool native = !tested && csv_native_type(r, t);
        rc = silt_buf_puts(&from, i ? ", " : "");
        rc = rc ? rc : buf_sql_str(&from, cols.v[i]);
        rc = rc ? rc : silt_buf_puts(&from, ": ");
        rc = rc ? rc : buf_sql_str(&from, native ? t : "VARCHAR");
        rc = rc ? rc : silt_buf_puts(&sel, i ? ", " : "");
        if (tested)
            rc = rc ? rc : fast_inferred_col(r, &sel, cols.v[i], t, (size_t)k);
        else
            rc = rc ? rc : fast_text_col(r, &sel, cols.v[i], native ? NULL : t);
    }
    rc = rc ? rc : silt_buf_printf(q, "SELECT %s FROM %s})", sel.data, from.data);
    free(inferred);
    silt_buf_free(&sel);
    silt_buf_free(&from);
    strlist_free(&cols);
    return rc;
}

/* NdJson text (direct or rewritten) with a schema: every column staged as
 * VARCHAR by read_json, then converted like the slow path. */
static int fast_ndjson(rd *r, const char *path, silt_buf *q)
{
    silt_buf sel = SILT_BUF_INIT;
    int rc = 0;
    for (size_t i = 0; i < r->sc_names.n && !rc; i++) {
        rc = silt_buf_puts(&sel, i ? ", " : "");
        rc = rc ? rc : fast_text_col(r, &sel, r->sc_names.v[i], r->sc_types.v[i]);
    }
    rc = rc ? rc : silt_buf_printf(q, "SELECT %s FROM read_json(", sel.data);
    rc = rc ? rc : buf_sql_str(q, path);
    rc = rc ? rc : silt_buf_puts(q, ", format='newline_delimited', records=true, maximum_object_size=268435456, columns={");
    for (size_t i = 0; i < r->sc_names.n && !rc; i++) {
        rc = silt_buf_puts(q, i ? ", " : "");
        rc = rc ? rc : buf_sql_str(q, r->sc_names.v[i]);
        rc = rc ? rc : silt_buf_puts(q, ": 'VARCHAR'");
    }
    rc = rc ? rc : silt_buf_puts(q, "})");
    silt_buf_free(&sel);
    return rc;
}

/* Parquet: columns as stored, or the schema's (matched case-insensitively)
 * with strict casts. */
static int fast_parquet(rd *r, const char *path, silt_buf *q)
{
    silt_buf from = SILT_BUF_INIT, dq = SILT_BUF_INIT, sel = SILT_BUF_INIT;
    int rc = silt_buf_puts(&from, "read_parquet(");
    rc = rc ? rc : buf_sql_str(&from, path);
    rc = rc ? rc : silt_buf_putc(&from, ')');
    if (!rc && !r->schema) {
        rc = silt_buf_printf(q, "SELECT * FROM %s", from.data);
        silt_buf_free(&from);
        return rc;
    }
    strlist names = {0};
    rc = rc ? rc : silt_buf_printf(&dq, "SELECT column_name FROM (DESCRIBE SELECT * FROM %s)", from.data);
    rc = rc ? rc : silt_engine_query_rows(r->e, dq.data, names_cb, &names);
    for (size_t i = 0; i < r->sc_names.n && !rc; i++) {
        size_t j = 0;
        while (j < names.n && strcasecmp(names.v[j], r->sc_names.v[i]))
            j++;
        if (j == names.n) {
            rc = FAST_NA;
            break;
        }
        char *src = silt_sql_ident(names.v[j]), *dst = silt_sql_ident(r->sc_names.v[i]);
        if (!src || !dst)
            rc = silt_err(SILT_ENOMEM, "out of memory");
        rc = rc ? rc : silt_buf_puts(&sel, i ? ", " : "");
        rc = rc ? rc : conv_expr(r, &sel, src, r->sc_types.v[i], false, true);
        rc = rc ? rc : silt_buf_printf(&sel, " AS %s", dst);
        free(src);
        free(dst);
    }
    rc = rc ? rc : silt_buf_printf(q, "SELECT %s FROM %s", sel.data, from.data);
    strlist_free(&names);
    silt_buf_free(&from);
    silt_buf_free(&dq);
    silt_buf_free(&sel);
    return rc;
}

/* Prepares one file and appends its SELECT to `q`; FAST_NA when this input
 * needs the slow path. Temp files land in r->tmpdir. */
static int fast_one(rd *r, const char *path, silt_buf *q, char **tmpfile)
{
    off_t size = 0;
    int rc = check_input_file(path, r->display, &size);
    if (rc || size == 0)
        return rc ? rc : FAST_NA;
    const char *src = path;
    bool text = r->kind != ODF_ReadStep_Parquet;
    if (text && r->encoding) {
        if ((rc = transcode(r, path, tmpfile)))
            return rc;
        src = *tmpfile;
    }
    if (text && r->kind != ODF_ReadStep_Csv) {
        /* whitespace-only JSON text: the slow path reports "file is empty" */
        FILE *f = fopen(src, "rb");
        int ch = EOF;
        if (f) {
            while ((ch = getc(f)) != EOF && (isspace(ch) || ch == 0xEF || ch == 0xBB || ch == 0xBF))
                ;
            fclose(f);
        }
        if (ch == EOF)
            return FAST_NA;
    }
    r->expect = 0;
    switch (r->kind) {
    case ODF_ReadStep_Csv: return fast_csv(r, src, q);
    case ODF_ReadStep_NdJson:
        rc = silt_read_ndjson_count(src, r->display, &r->expect);
        return rc ? rc : fast_ndjson(r, src, q);
    case ODF_ReadStep_Json: {
        char *nd = tmp_path(r, "ndjson");
        if (!nd)
            return SILT_ENOMEM;
        r->nrecords_hint = 0;
        rc = json_doc_to_ndjson(r, src, nd);
        r->expect = r->nrecords_hint;
        if (!rc && r->nrecords_hint == 0)
            rc = FAST_NA; /* empty: the slow path builds the typed empty table */
        rc = rc ? rc : fast_ndjson(r, nd, q);
        if (*tmpfile)
            unlink(*tmpfile);
        free(*tmpfile);
        *tmpfile = nd;
        return rc;
    }
    case ODF_ReadStep_Parquet:
        rc = parquet_rows(r, src, &r->expect);
        return rc ? rc : fast_parquet(r, src, q);
    default: return FAST_NA;
    }
}

/* Whole-call fast path: 0 = table `tident` built, FAST_NA = not applicable,
 * < 0 = failed (the caller drops the table and runs the slow path). */
static int read_fast(rd *r, const char *const *files, const char *const *display_names, size_t nfiles,
                     const char *tident)
{
    switch (r->kind) {
    case ODF_ReadStep_Csv:
        if (!r->schema && nfiles > 1)
            return FAST_NA; /* header names may differ per file: UNION BY NAME */
        break;
    case ODF_ReadStep_NdJson:
    case ODF_ReadStep_Json:
        if (!r->schema)
            return FAST_NA;
        break;
    case ODF_ReadStep_Parquet:
        if (!r->schema && nfiles > 1)
            return FAST_NA;
        break;
    default: return FAST_NA;
    }
    int rc = 0;
    uint64_t total = 0, now = 0;
    silt_buf qualified = SILT_BUF_INIT;
    if (silt_buf_printf(&qualified, "temp.main.%s", tident))
        return SILT_ENOMEM;
    for (size_t i = 0; i < nfiles && !rc; i++) {
        if (!files[i]) {
            rc = FAST_NA;
            break;
        }
        r->display = display_names && display_names[i] ? display_names[i] : files[i];
        silt_buf q = SILT_BUF_INIT, sql = SILT_BUF_INIT;
        char *tmpfile = NULL;
        rc = fast_one(r, files[i], &q, &tmpfile);
        if (!rc && i == 0)
            rc = silt_buf_printf(&sql, "CREATE OR REPLACE TEMP TABLE %s AS %s", tident, q.data);
        else if (!rc)
            rc = silt_buf_printf(&sql, "INSERT INTO temp.main.%s %s", tident, q.data);
        if (!rc)
            rc = silt_engine_exec(r->e, sql.data);
        rc = rc ? rc : table_rows(r, qualified.data, &now);
        rc = rc ? rc : check_count(r, now - total);
        total = now;
        if (tmpfile)
            unlink(tmpfile); /* large transcoded copies go as soon as they are read */
        free(tmpfile);
        silt_buf_free(&q);
        silt_buf_free(&sql);
    }
    silt_buf_free(&qualified);
    return rc;
}

/* ---- entry points ------------------------------------------------------- */

/* ---- verify mode: fast path result == slow path result --------------- */

static bool verify_mode(void)
{
    if (g_read_mode == SILT_READ_VERIFY)
        return true;
    const char *v = getenv("SILT_READ_VERIFY");
    return v && *v && strcmp(v, "0") != 0;
}

static int text_cb(void *ctx, size_t ncols, const char *const *names, const char *const *vals)
{
    char **out = ctx;
    free(*out);
    *out = strdup(vals[0] ? vals[0] : "");
    return *out ? 0 : SILT_ENOMEM;
}

/* Re-reads the input with the slow path into a shadow table and compares it
 * with the fast path's `tident`: column names and types, then rows and their
 * order (EXCEPT ALL both ways over rowid and every column). SILT_EINTERNAL
 * naming the first difference when they differ. */
static int verify_fast(silt_engine *e, const odf_union *step, const char *const *files,
                       const char *const *display_names, size_t nfiles, const char *table, const char *tident,
                       unsigned id)
{
    char shadow[64];
    snprintf(shadow, sizeof shadow, "__silt_rdv%u", id);
    silt_read_mode saved = g_read_mode;
    g_read_mode = SILT_READ_SLOW;
    int rc = silt_read_files(e, step, files, display_names, nfiles, shadow);
    g_read_mode = saved;
    g_last_fast = true;
    if (rc)
        return silt_err(SILT_EINTERNAL, "read verify: the fast path succeeded, the slow path failed: %s",
                        silt_error_last());
    char *ta = NULL, *tb = NULL, *diff = NULL;
    silt_buf q = SILT_BUF_INIT;
    const char *tq = "SELECT string_agg(name || ' ' || type, ', ' ORDER BY cid) FROM pragma_table_info('%s')";
    rc = silt_buf_printf(&q, tq, table);
    rc = rc ? rc : silt_engine_query_rows(e, q.data, text_cb, &ta);
    silt_buf_clear(&q);
    rc = rc ? rc : silt_buf_printf(&q, tq, shadow);
    rc = rc ? rc : silt_engine_query_rows(e, q.data, text_cb, &tb);
    if (!rc && (!ta || !tb || strcmp(ta, tb)))
        rc = silt_err(SILT_EINTERNAL, "read verify: columns differ: fast (%s), slow (%s)", ta ? ta : "?",
                      tb ? tb : "?");
    silt_buf_clear(&q);
    rc = rc ? rc : silt_buf_printf(&q,
                                   "SELECT (SELECT count(*) FROM (SELECT rowid AS __r, * FROM temp.main.%s EXCEPT ALL "
                                   "SELECT rowid AS __r, * FROM temp.main.\"%s\")) || ' ' || (SELECT count(*) FROM "
                                   "(SELECT rowid AS __r, * FROM temp.main.\"%s\" EXCEPT ALL SELECT rowid AS __r, * "
                                   "FROM temp.main.%s))",
                                   tident, shadow, shadow, tident);
    rc = rc ? rc : silt_engine_query_rows(e, q.data, text_cb, &diff);
    if (!rc && (!diff || strcmp(diff, "0 0")))
        rc = silt_err(SILT_EINTERNAL, "read verify: rows differ (fast-only, slow-only: %s)", diff ? diff : "?");
    silt_engine_execf(e, "DROP TABLE IF EXISTS temp.main.\"%s\"", shadow);
    free(ta);
    free(tb);
    free(diff);
    silt_buf_free(&q);
    return rc;
}

static void rd_free(rd *r)
{
    silt_buf_free(&r->datefmt);
    silt_buf_free(&r->tsfmt);
    strlist_free(&r->sc_names);
    strlist_free(&r->sc_types);
    if (r->tmpdir) {
        silt_fs_remove_tree(r->tmpdir);
        free(r->tmpdir);
        r->tmpdir = NULL;
    }
}

/* Fills the per-kind options of `r` and validates them. */
static int rd_setup(rd *r, silt_arena *a, const odf_union *step)
{
    const odf_strvec *ddl = NULL;
    const char *enc = NULL, *df = NULL, *tf = NULL, *kname = "";
    int rc = 0;
    if (!step->value)
        return silt_err(SILT_EINVAL, "ReadStep has no value");
    switch (step->type) {
    case ODF_ReadStep_Csv: {
        const odf_ReadStepCsv *c = step->value;
        r->csv = c;
        if ((rc = silt_read_csv_check_options(c)))
            return rc;
        ddl = &c->ddl_schema, r->schema = c->schema, enc = c->encoding, df = c->date_format, tf = c->timestamp_format;
        kname = "Csv";
        break;
    }
    case ODF_ReadStep_Json: {
        const odf_ReadStepJson *j = step->value;
        ddl = &j->ddl_schema, r->schema = j->schema, enc = j->encoding, df = j->date_format, tf = j->timestamp_format;
        r->sub_path = j->sub_path;
        kname = "Json";
        break;
    }
    case ODF_ReadStep_NdJson: {
        const odf_ReadStepNdJson *j = step->value;
        ddl = &j->ddl_schema, r->schema = j->schema, enc = j->encoding, df = j->date_format, tf = j->timestamp_format;
        kname = "NdJson";
        break;
    }
    case ODF_ReadStep_GeoJson: {
        const odf_ReadStepGeoJson *g = step->value;
        ddl = &g->ddl_schema, r->schema = g->schema;
        break;
    }
    case ODF_ReadStep_NdGeoJson: {
        const odf_ReadStepNdGeoJson *g = step->value;
        ddl = &g->ddl_schema, r->schema = g->schema;
        break;
    }
    case ODF_ReadStep_EsriShapefile: {
        const odf_ReadStepEsriShapefile *s = step->value;
        ddl = &s->ddl_schema, r->schema = s->schema, r->sub_path = s->sub_path;
        break;
    }
    case ODF_ReadStep_Parquet: {
        const odf_ReadStepParquet *p = step->value;
        ddl = &p->ddl_schema, r->schema = p->schema;
        break;
    }
    default: return silt_err(SILT_EINVAL, "unknown ReadStep kind %d", step->type);
    }
    r->kind = step->type;
    char what[48];
    if (enc) {
        snprintf(what, sizeof what, "%s.encoding", kname);
        r->encoding = encoding_iconv_name(what, enc, &rc, r->encbuf, sizeof r->encbuf);
        if (rc)
            return rc;
    }
    snprintf(what, sizeof what, "%s.dateFormat", kname);
    if ((rc = silt_read_translate_datefmt(&r->datefmt, df, what)))
        return rc;
    snprintf(what, sizeof what, "%s.timestampFormat", kname);
    if ((rc = silt_read_translate_datefmt(&r->tsfmt, tf, what)))
        return rc;
    if (!r->schema && ddl && ddl->present && ddl->n) {
        odf_DataSchema *s = NULL;
        if ((rc = silt_schema_from_ddl(a, ddl, &s)))
            return rc;
        r->schema = s;
    }
    if (r->schema) {
        if (r->schema->fields.n == 0)
            return silt_err(SILT_EINVAL, "schema has no fields");
        for (size_t i = 0; i < r->schema->fields.n && !rc; i++) {
            const odf_DataField *f = r->schema->fields.items[i];
            if (!f || !f->name || !*f->name)
                return silt_err(SILT_EINVAL, "schema field %zu has no name", i + 1);
            for (size_t j = 0; j < r->sc_names.n; j++)
                if (!strcasecmp(r->sc_names.v[j], f->name))
                    return silt_err(SILT_EINVAL, "schema: duplicate column name '%s'", f->name);
            silt_buf t = SILT_BUF_INIT;
            rc = silt_schema_type_to_duckdb(&t, &f->type);
            if (rc)
                rc = silt_err_context(rc, "schema field '%s'", f->name);
            rc = rc ? rc : strlist_push(&r->sc_names, f->name, strlen(f->name));
            rc = rc ? rc : strlist_push(&r->sc_types, t.data ? t.data : "", t.len);
            silt_buf_free(&t);
        }
    }
    return rc;
}

/* The private temp directory of one read: a scratch directory
 * (util/scratch.h) in the engine's spill directory when the engine has one
 * (an absolute directory: silt always opens engines with a spill directory
 * inside the workspace), so that a killed read leaves nothing outside the
 * workspace and the next command removes the leftover; else (an engine
 * without a workspace, e.g. in unit tests) under $TMPDIR or /tmp. */
static int make_tmpdir(rd *r)
{
    char *spill = NULL;
    struct stat st;
    if (silt_engine_query_text(r->e, &spill, "SELECT current_setting('temp_directory')") == 0 && spill &&
        spill[0] == '/' && stat(spill, &st) == 0 && S_ISDIR(st.st_mode)) {
        int rc = silt_scratch_mkdir(spill, &r->tmpdir);
        free(spill);
        return rc;
    }
    free(spill);
    silt_err_clear();
    const char *base = getenv("TMPDIR");
    if (!base || !*base)
        base = "/tmp";
    char *tpl = silt_path_join(base, "silt-read-XXXXXX", NULL);
    if (!tpl)
        return silt_err(SILT_ENOMEM, "out of memory");
    if (!mkdtemp(tpl)) {
        int en = errno;
        free(tpl);
        return silt_err(SILT_EIO, "cannot create a temp directory under %s: %s", base, strerror(en));
    }
    r->tmpdir = tpl;
    return 0;
}

int silt_read_files(silt_engine *e, const odf_union *read_step, const char *const *files,
                    const char *const *display_names, size_t nfiles, const char *table)
{
    if (!e || !read_step || !table || !*table || (nfiles && !files))
        return silt_err(SILT_EINVAL, "read: invalid arguments");
    if (nfiles == 0)
        return silt_err(SILT_EINVAL, "read: no input files");
    char *tident = silt_sql_ident(table);
    silt_arena *a = silt_arena_new();
    if (!tident || !a) {
        free(tident);
        silt_arena_free(a);
        return silt_err(SILT_ENOMEM, "out of memory");
    }
    rd r = {0};
    r.e = e;
    r.id = __atomic_fetch_add(&g_read_seq, 1, __ATOMIC_RELAXED);
    silt_buf all = SILT_BUF_INIT;
    size_t staged = 0;
    uint64_t records = 0; /* of all files, counted without DuckDB */
    int rc = silt_engine_execf(e, "DROP TABLE IF EXISTS temp.main.%s", tident);
    rc = rc ? rc : rd_setup(&r, a, read_step);
    rc = rc ? rc : make_tmpdir(&r);
    char *keep = NULL;
    if (!rc)
        rc = silt_engine_query_text(e, &keep, "SELECT current_setting('preserve_insertion_order')");
    bool ordered = keep && !strcmp(keep, "true");
    free(keep);
    g_last_fast = false;
    bool done = false;
    const char *env_mode = getenv("SILT_READ_MODE");
    bool env_slow = env_mode && !strcmp(env_mode, "slow");
    if (!rc && ordered && g_read_mode != SILT_READ_SLOW && !env_slow) {
        /* rowid order = insertion order needs preserve_insertion_order */
        int frc = read_fast(&r, files, display_names, nfiles, tident);
        if (frc == 0)
            done = g_last_fast = true;
        else if (getenv("SILT_READ_DEBUG"))
            fprintf(stderr, "read: fast path %s: %s\n", frc > 0 ? "n/a" : "failed", frc > 0 ? "" : silt_error_last());
        if (frc)
            silt_engine_execf(e, "DROP TABLE IF EXISTS temp.main.%s", tident);
        if (done && verify_mode())
            rc = verify_fast(e, read_step, files, display_names, nfiles, table, tident, r.id);
    }
    for (size_t i = 0; i < nfiles && !rc && !done; i++) {
        if (!files[i]) {
            rc = silt_err(SILT_EINVAL, "read: input file %zu is NULL", i + 1);
            break;
        }
        r.display = display_names && display_names[i] ? display_names[i] : files[i];
        char stg[64];
        snprintf(stg, sizeof stg, "__silt_rd%u_%zu", r.id, i);
        staged = i + 1;
        silt_buf sel = SILT_BUF_INIT;
        rc = read_one(&r, files[i], stg, &sel);
        records += r.expect;
        if (!rc) {
            if (nfiles == 1)
                rc = silt_buf_printf(&all, "SELECT %s FROM \"%s\"%s", sel.data, stg, ordered ? "" : " ORDER BY rowid");
            else
                rc = silt_buf_printf(&all, "%sSELECT %s, %zu AS \"__silt_f\", rowid AS \"__silt_r\" FROM \"%s\"",
                                     i ? " UNION ALL BY NAME " : "", sel.data, i, stg);
        }
        silt_buf_free(&sel);
    }
    if (!rc && !done) {
        silt_buf sql = SILT_BUF_INIT;
        if (nfiles == 1)
            rc = silt_buf_printf(&sql, "CREATE OR REPLACE TEMP TABLE %s AS %s", tident, all.data);
        else
            rc = silt_buf_printf(&sql,
                                 "CREATE OR REPLACE TEMP TABLE %s AS SELECT * EXCLUDE (\"__silt_f\", \"__silt_r\") "
                                 "FROM (%s) ORDER BY \"__silt_f\", \"__silt_r\"",
                                 tident, all.data);
        if (!rc && (rc = silt_engine_exec(e, sql.data)))
            rc = silt_err_context(rc, "cannot combine the input files");
        silt_buf_clear(&sql);
        uint64_t got = 0;
        rc = rc ? rc : silt_buf_printf(&sql, "temp.main.%s", tident);
        rc = rc ? rc : table_rows(&r, sql.data, &got);
        if (!rc && got != records)
            rc = silt_err(SILT_EINTERNAL,
                          "row count cross-check failed: the input files have %llu records, the table %llu rows",
                          (unsigned long long)records, (unsigned long long)got);
        silt_buf_free(&sql);
    }
    for (size_t i = 0; i < staged; i++)
        silt_engine_execf(e, "DROP TABLE IF EXISTS temp.main.\"__silt_rd%u_%zu\"", r.id, i);
    if (rc) {
        /* keep the first error message while cleaning up */
        char *msg = strdup(silt_error_last());
        silt_engine_execf(e, "DROP TABLE IF EXISTS temp.main.%s", tident);
        if (msg) {
            silt_err(rc, "%s", msg);
            free(msg);
        }
    }
    rd_free(&r);
    silt_buf_free(&all);
    free(tident);
    silt_arena_free(a);
    return rc;
}

int silt_read_step_for_format(silt_arena *a, const char *format, odf_union *out)
{
    out->type = 0;
    out->value = NULL;
    if (!format)
        return silt_err(SILT_EINVAL, "unknown format '(null)'");
    void *v = NULL;
    uint8_t t = 0;
    if (!strcmp(format, "csv")) {
        odf_ReadStepCsv *c = silt_arena_alloc(a, sizeof *c);
        if (c) {
            c->has_header = c->header = true;
            c->has_infer_schema = c->infer_schema = true;
        }
        v = c, t = ODF_ReadStep_Csv;
    } else if (!strcmp(format, "json")) {
        v = silt_arena_alloc(a, sizeof(odf_ReadStepJson)), t = ODF_ReadStep_Json;
    } else if (!strcmp(format, "ndjson")) {
        v = silt_arena_alloc(a, sizeof(odf_ReadStepNdJson)), t = ODF_ReadStep_NdJson;
    } else if (!strcmp(format, "geojson")) {
        v = silt_arena_alloc(a, sizeof(odf_ReadStepGeoJson)), t = ODF_ReadStep_GeoJson;
    } else if (!strcmp(format, "ndgeojson")) {
        v = silt_arena_alloc(a, sizeof(odf_ReadStepNdGeoJson)), t = ODF_ReadStep_NdGeoJson;
    } else if (!strcmp(format, "parquet")) {
        v = silt_arena_alloc(a, sizeof(odf_ReadStepParquet)), t = ODF_ReadStep_Parquet;
    } else if (!strcmp(format, "shp")) {
        v = silt_arena_alloc(a, sizeof(odf_ReadStepEsriShapefile)), t = ODF_ReadStep_EsriShapefile;
    } else {
        char tmp[64];
        return silt_err(SILT_EINVAL, "unknown format '%s'", shown(format, tmp, sizeof tmp));
    }
    if (!v)
        return SILT_ENOMEM;
    out->type = t;
    out->value = v;
    return 0;
}

/* The schema fields of any ReadStep variant (false for an unknown kind). */
static bool step_schema_slots(const odf_union *u, odf_strvec **ddl, odf_DataSchema ***schema)
{
    switch (u->value ? u->type : 0) {
#define SLOTS(T)                                                                                                       \
    do {                                                                                                               \
        T *v = u->value;                                                                                               \
        *ddl = &v->ddl_schema;                                                                                         \
        *schema = &v->schema;                                                                                          \
        return true;                                                                                                   \
    } while (0)
    case ODF_ReadStep_Csv: SLOTS(odf_ReadStepCsv);
    case ODF_ReadStep_Json: SLOTS(odf_ReadStepJson);
    case ODF_ReadStep_NdJson: SLOTS(odf_ReadStepNdJson);
    case ODF_ReadStep_GeoJson: SLOTS(odf_ReadStepGeoJson);
    case ODF_ReadStep_NdGeoJson: SLOTS(odf_ReadStepNdGeoJson);
    case ODF_ReadStep_EsriShapefile: SLOTS(odf_ReadStepEsriShapefile);
    case ODF_ReadStep_Parquet: SLOTS(odf_ReadStepParquet);
#undef SLOTS
    default: return false;
    }
}

int silt_read_step_transcode(silt_arena *a, const odf_union *base, const char *format, odf_union *out)
{
    int rc = silt_read_step_for_format(a, format, out);
    if (rc)
        return rc;
    if (base && base->value && base->type == out->type) {
        *out = *base; /* the source's own format: every option applies */
        return 0;
    }
    odf_strvec *bddl = NULL, *oddl = NULL;
    odf_DataSchema **bsc = NULL, **osc = NULL;
    if (!base || !step_schema_slots(base, &bddl, &bsc) || !step_schema_slots(out, &oddl, &osc))
        return 0;
    bool declared = *bsc || (bddl->present && bddl->n);
    if (!declared)
        return 0;
    /* as declared: the structured schema wins over the legacy DDL (rd_setup) */
    if (*bsc)
        *osc = *bsc;
    else
        *oddl = *bddl;
    if (out->type == ODF_ReadStep_Csv) {
        odf_ReadStepCsv *c = out->value;
        c->has_header = true, c->header = false;
        c->has_infer_schema = false, c->infer_schema = false;
    }
    return 0;
}
