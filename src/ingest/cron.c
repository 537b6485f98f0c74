/* cron.c — parser and next-fire-time search for 5-field cron expressions.
 *
 * Invariants: a parsed silt_cron holds one bit per allowed value of each
 * field and never has an empty field; the search walks forward from the next
 * whole minute, skipping a whole month/day/hour when that unit cannot match,
 * and gives up after 28 years (a full leap-year/weekday cycle), so it always
 * terminates. Civil-date arithmetic is done on int64 days (proleptic
 * Gregorian), independent of the C library's time zone.
 */
#include "ingest/cron.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "util/error.h"

typedef struct field_def {
    const char *name;
    int lo, hi;
    const char *const *names; /* names[i] = value lo_names + i */
    int names_base;
    int nnames;
} field_def;

static const char *const MONTHS[] = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                                     "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"};
static const char *const DAYS[] = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"};

static const field_def FIELDS[6] = {
    {"second", 0, 59, NULL, 0, 0},
    {"minute", 0, 59, NULL, 0, 0},
    {"hour", 0, 23, NULL, 0, 0},
    {"day-of-month", 1, 31, NULL, 0, 0},
    {"month", 1, 12, MONTHS, 1, 12},
    {"day-of-week", 0, 7, DAYS, 0, 7},
};

typedef struct pctx {
    const char *expr;
    const field_def *f;
} pctx;

/* Parses a number or a name at *p (up to `end`); advances *p. */
static int parse_value(const pctx *c, const char **p, const char *end, int *out)
{
    const char *s = *p;
    if (s < end && isdigit((unsigned char)*s)) {
        long v = 0;
        while (s < end && isdigit((unsigned char)*s)) {
            v = v * 10 + (*s - '0');
            if (v > 1000)
                v = 1000;
            s++;
        }
        if (v < c->f->lo || v > c->f->hi)
            return silt_err(SILT_EINVAL, "invalid cron expression '%s': %s: value %ld out of range %d-%d",
                            c->expr, c->f->name, v, c->f->lo, c->f->hi);
        *out = (int)v;
        *p = s;
        return 0;
    }
    if (s < end && isalpha((unsigned char)*s) && c->f->names) {
        const char *t = s;
        while (t < end && isalpha((unsigned char)*t))
            t++;
        if (t - s == 3) {
            for (int i = 0; i < c->f->nnames; i++)
                if (strncasecmp(s, c->f->names[i], 3) == 0) {
                    *out = c->f->names_base + i;
                    *p = t;
                    return 0;
                }
        }
        char name[16];
        snprintf(name, sizeof name, "%.*s", (int)(t - s > 12 ? 12 : t - s), s);
        return silt_err(SILT_EINVAL, "invalid cron expression '%s': %s: unknown name '%s'", c->expr,
                        c->f->name, name);
    }
    char tok[16];
    size_t n = (size_t)(end - s);
    snprintf(tok, sizeof tok, "%.*s", (int)(n > 12 ? 12 : n), s);
    return silt_err(SILT_EINVAL, "invalid cron expression '%s': %s: expected a number%s, got '%s'",
                    c->expr, c->f->name, c->f->names ? " or a name" : "", tok);
}

/* One comma-separated element [s, end) into the bit set *bits. */
static int parse_element(const pctx *c, const char *s, const char *end, uint64_t *bits)
{
    const field_def *f = c->f;
    int lo, hi, step = 1;
    const char *p = s;
    bool ranged = false;
    if (p == end)
        return silt_err(SILT_EINVAL, "invalid cron expression '%s': %s: empty list element", c->expr,
                        f->name);
    if (*p == '*') {
        lo = f->lo;
        hi = f->hi == 7 ? 6 : f->hi;
        p++;
        ranged = true;
    } else {
        int rc = parse_value(c, &p, end, &lo);
        if (rc < 0)
            return rc;
        hi = lo;
        if (p < end && *p == '-') {
            p++;
            rc = parse_value(c, &p, end, &hi);
            if (rc < 0)
                return rc;
            if (hi < lo)
                return silt_err(SILT_EINVAL,
                                "invalid cron expression '%s': %s: range %d-%d has its start after its end",
                                c->expr, f->name, lo, hi);
            ranged = true;
        }
    }
    if (p < end && *p == '/') {
        p++;
        if (p == end || !isdigit((unsigned char)*p))
            return silt_err(SILT_EINVAL, "invalid cron expression '%s': %s: expected a step number after '/'",
                            c->expr, f->name);
        long v = 0;
        while (p < end && isdigit((unsigned char)*p)) {
            v = v * 10 + (*p - '0');
            if (v > 1000)
                v = 1000;
            p++;
        }
        if (v < 1 || v > f->hi - f->lo + 1)
            return silt_err(SILT_EINVAL, "invalid cron expression '%s': %s: step %ld out of range 1-%d",
                            c->expr, f->name, v, f->hi - f->lo + 1);
        step = (int)v;
        if (!ranged) /* N/STEP = N-max/STEP (day of week: up to 7 = Sunday) */
            hi = f->hi;
    }
    if (p != end) {
        char tok[16];
        size_t n = (size_t)(end - p);
        snprintf(tok, sizeof tok, "%.*s", (int)(n > 12 ? 12 : n), p);
        return silt_err(SILT_EINVAL, "invalid cron expression '%s': %s: unexpected '%s'", c->expr,
                        f->name, tok);
    }
    for (int v = lo; v <= hi; v += step)
        *bits |= (uint64_t)1 << (f->hi == 7 && v == 7 ? 0 : v);
    return 0;
}

static const struct {
    const char *name;
    const char *expr;
} MACROS[] = {
    {"@yearly", "0 0 1 1 *"},  {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"},
    {"@weekly", "0 0 * * 0"},  {"@daily", "0 0 * * *"},    {"@midnight", "0 0 * * *"},
    {"@hourly", "0 * * * *"},
};

int silt_cron_parse(silt_cron *out, const char *expr)
{
    memset(out, 0, sizeof *out);
    if (!expr)
        return silt_err(SILT_EINVAL, "invalid cron expression: missing");
    const char *text = expr;
    while (isspace((unsigned char)*text))
        text++;
    if (*text == '@') {
        size_t n = strlen(text);
        while (n && isspace((unsigned char)text[n - 1]))
            n--;
        const char *found = NULL;
        for (size_t i = 0; i < sizeof MACROS / sizeof MACROS[0]; i++)
            if (strlen(MACROS[i].name) == n && strncasecmp(MACROS[i].name, text, n) == 0)
                found = MACROS[i].expr;
        if (!found)
            return silt_err(SILT_EINVAL,
                            "invalid cron expression '%s': unknown macro (expected @hourly, @daily, "
                            "@midnight, @weekly, @monthly, @yearly or @annually)",
                            expr);
        int rc = silt_cron_parse(out, found);
        return rc;
    }
    /* split into fields: 5 (minute first) or 6 (second first) */
    const char *fs[7], *fe[7];
    int nf = 0;
    for (const char *p = text; *p && nf < 7;) {
        while (isspace((unsigned char)*p))
            p++;
        if (!*p)
            break;
        fs[nf] = p;
        while (*p && !isspace((unsigned char)*p))
            p++;
        fe[nf++] = p;
    }
    if (nf != 5 && nf != 6)
        return silt_err(SILT_EINVAL,
                        "invalid cron expression '%s': expected 5 fields (minute hour day-of-month "
                        "month day-of-week) or 6 (second first), got %s%d",
                        expr, nf > 6 ? "more than " : "", nf > 6 ? 6 : nf);
    uint64_t bits[6] = {0};
    int first = 6 - nf; /* index into FIELDS: 0 = second */
    for (int i = 0; i < nf; i++) {
        pctx c = {expr, &FIELDS[first + i]};
        for (const char *e = fs[i]; e <= fe[i];) {
            const char *q = e;
            while (q < fe[i] && *q != ',')
                q++;
            int rc = parse_element(&c, e, q, &bits[first + i]);
            if (rc < 0)
                return rc;
            e = q + 1;
        }
    }
    out->second = nf == 6 ? bits[0] : 1u; /* 5 fields: second 0 */
    bits[0] = bits[1], bits[1] = bits[2], bits[2] = bits[3], bits[3] = bits[4], bits[4] = bits[5];
    out->minute = bits[0];
    out->hour = (uint32_t)bits[1];
    out->dom = (uint32_t)bits[2];
    out->month = (uint16_t)bits[3];
    out->dow = (uint8_t)bits[4];
    /* a day field counts as unrestricted when it allows every value
     * (croniter's rule, see cron.h) */
    out->dom_star = out->dom == 0xFFFFFFFEu;
    out->dow_star = out->dow == 0x7Fu;
    return 0;
}

/* ---- civil calendar (H. Hinnant's algorithms) ---------------------------- */

static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

static bool day_matches(const silt_cron *c, int64_t days, int dom)
{
    int dow = (int)(((days % 7) + 11) % 7); /* 1970-01-01 was a Thursday (4) */
    bool dm = (c->dom >> dom) & 1u;
    bool wm = (c->dow >> dow) & 1u;
    if (c->dom_star || c->dow_star)
        return dm && wm;
    return dm || wm;
}

/* First matching whole minute strictly after `after`. */
static int next_minute(const silt_cron *c, int64_t after, int64_t *next_out)
{
    if (after > INT64_MAX / 2 || after < INT64_MIN / 2)
        return silt_err(SILT_EINVAL, "cron: time %lld out of range", (long long)after);
    int64_t t = (floor_div(after, 60) + 1) * 60;
    int64_t days = floor_div(t, 86400);
    int64_t start_days = days;
    int mins = (int)((t - days * 86400) / 60);
    int64_t y;
    int m, d;
    civil_from_days(days, &y, &m, &d);
    while (days - start_days <= 28 * 366) {
        if (!((c->month >> m) & 1u)) {
            /* first day of the next month */
            if (++m > 12) {
                m = 1;
                y++;
            }
            d = 1;
            days = days_from_civil(y, m, 1);
            mins = 0;
            continue;
        }
        if (!day_matches(c, days, d)) {
            days++;
            civil_from_days(days, &y, &m, &d);
            mins = 0;
            continue;
        }
        int h = mins / 60, mi = mins % 60;
        for (; h < 24; h++, mi = 0) {
            if (!((c->hour >> h) & 1u))
                continue;
            for (; mi < 60; mi++)
                if ((c->minute >> mi) & 1u) {
                    *next_out = days * 86400 + h * 3600 + mi * 60;
                    return 0;
                }
        }
        days++;
        civil_from_days(days, &y, &m, &d);
        mins = 0;
    }
    return silt_err(SILT_ENOTFOUND, "cron expression never fires");
}

/* The lowest allowed second >= from, or -1. */
static int second_from(const silt_cron *c, int from)
{
    for (int s = from; s < 60; s++)
        if ((c->second >> s) & 1u)
            return s;
    return -1;
}

int silt_cron_next(const silt_cron *c, int64_t after, int64_t *next_out)
{
    if (after > INT64_MAX / 2 || after < INT64_MIN / 2)
        return silt_err(SILT_EINVAL, "cron: time %lld out of range", (long long)after);
    int64_t minute = floor_div(after, 60) * 60;
    int64_t m;
    /* a later second of the current minute, when the minute matches */
    int s = second_from(c, (int)(after - minute) + 1);
    if (s >= 0 && next_minute(c, minute - 1, &m) == 0 && m == minute) {
        *next_out = minute + s;
        return 0;
    }
    int rc = next_minute(c, minute, &m);
    if (rc < 0)
        return rc;
    *next_out = m + second_from(c, 0);
    return 0;
}
