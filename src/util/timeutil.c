/* timeutil.c — RFC 3339 parsing/formatting and calendar conversions.
 *
 * All calendar arithmetic is done here on the proleptic Gregorian calendar
 * with floor division, so it is exact for any int64 second count (no timegm,
 * no time_t limits, correct for negative times). Invariant: a normalised
 * silt_time has 0 <= nsec < 1e9; functions taking a silt_time normalise an
 * out-of-range nsec by carrying into sec. */
#include "util/timeutil.h"
#include "util/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NS_PER_SEC 1000000000u
#define SECS_PER_DAY 86400

static int64_t floordiv(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q--;
    return q;
}

/* b > 0 only; written without multiplication so INT64_MIN cannot overflow */
static int64_t floormod(int64_t a, int64_t b)
{
    int64_t r = a % b;
    return r < 0 ? r + b : r;
}

static int is_leap(int64_t y)
{
    return (floormod(y, 4) == 0 && floormod(y, 100) != 0) || floormod(y, 400) == 0;
}

/* Number of leap years in [1, y] (extended to y <= 0 with floor division). */
static int64_t leaps_through(int64_t y)
{
    return floordiv(y, 4) - floordiv(y, 100) + floordiv(y, 400);
}

/* Days from 1970-01-01 to January 1st of year y. */
static int64_t days_before_year(int64_t y)
{
    return 365 * (y - 1970) + leaps_through(y - 1) - leaps_through(1969);
}

/* Year containing day number `days` (days since 1970-01-01). */
static int64_t year_of_day(int64_t days)
{
    /* 146097 days per 400 years gives an estimate within one year */
    int64_t y = 1970 + floordiv(days * 400, 146097);
    while (days_before_year(y) > days)
        y--;
    while (days_before_year(y + 1) <= days)
        y++;
    return y;
}

static const uint16_t cum_days[2][13] = {
    {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365},
    {0, 31, 60, 91, 121, 152, 182, 213, 244, 274, 305, 335, 366},
};

static silt_time normalize(silt_time t)
{
    if (t.nsec >= NS_PER_SEC) {
        int64_t carry = t.nsec / NS_PER_SEC;
        t.sec = t.sec > INT64_MAX - carry ? INT64_MAX : t.sec + carry;
        t.nsec %= NS_PER_SEC;
    }
    return t;
}

/* Splits into (year, 0-based day of year, second of day). */
static void split(int64_t sec, int64_t *year, int64_t *yday, int64_t *sod)
{
    int64_t days = floordiv(sec, SECS_PER_DAY);
    *sod = floormod(sec, SECS_PER_DAY);
    *year = year_of_day(days);
    *yday = days - days_before_year(*year);
}

silt_time silt_time_now(void)
{
    silt_time t = {0, 0};
    const char *fake = getenv("SILT_FAKE_SYSTEM_TIME");
    if (fake && *fake && silt_time_parse(fake, &t) == 0)
        return t;
    struct timespec ts;
    if (clock_gettime(CLOCK_REALTIME, &ts) == 0) {
        t.sec = (int64_t)ts.tv_sec;
        t.nsec = (uint32_t)ts.tv_nsec;
    }
    return t;
}

/* ---- parsing ---- */

typedef struct {
    const char *s;
    size_t i;
} cursor;

/* Reads exactly n digits. */
static int digits(cursor *c, int n, int64_t *v)
{
    int64_t r = 0;
    for (int k = 0; k < n; k++) {
        char ch = c->s[c->i];
        if (ch < '0' || ch > '9')
            return -1;
        r = r * 10 + (ch - '0');
        c->i++;
    }
    *v = r;
    return 0;
}

static int expect(cursor *c, char ch)
{
    if (c->s[c->i] != ch)
        return -1;
    c->i++;
    return 0;
}

#define BAD(why) silt_err(SILT_EINVAL, "invalid time '%.80s': %s", text, why)

int silt_time_parse(const char *text, silt_time *out)
{
    if (!text)
        return silt_err(SILT_EINVAL, "invalid time: NULL");
    cursor c = {text, 0};
    int64_t year, mon, day, hh = 0, mm = 0, ss = 0, off = 0;
    uint32_t nsec = 0;

    /* year: 4 digits, or a sign followed by 4 to 9 digits */
    int sign = 1;
    if (text[0] == '+' || text[0] == '-') {
        sign = text[0] == '-' ? -1 : 1;
        c.i++;
    }
    size_t ystart = c.i;
    year = 0;
    while (text[c.i] >= '0' && text[c.i] <= '9' && c.i - ystart < 10) {
        year = year * 10 + (text[c.i] - '0');
        c.i++;
    }
    size_t ylen = c.i - ystart;
    if (ylen < 4 || ylen > 9 || (ylen > 4 && sign == 1 && text[0] != '+'))
        return BAD("bad year");
    year *= sign;
    if (expect(&c, '-') || digits(&c, 2, &mon) || expect(&c, '-') || digits(&c, 2, &day))
        return BAD("expected YYYY-MM-DD");
    if (mon < 1 || mon > 12)
        return BAD("month out of range");
    int leap = is_leap(year);
    if (day < 1 || day > cum_days[leap][mon] - cum_days[leap][mon - 1])
        return BAD("day out of range");

    if (text[c.i] != '\0') {
        char sep = text[c.i];
        if (sep != 'T' && sep != 't' && sep != ' ')
            return BAD("expected 'T' after the date");
        c.i++;
        if (digits(&c, 2, &hh) || expect(&c, ':') || digits(&c, 2, &mm) || expect(&c, ':') ||
            digits(&c, 2, &ss))
            return BAD("expected hh:mm:ss");
        if (hh > 23 || mm > 59 || ss > 60)
            return BAD("time of day out of range");
        if (text[c.i] == '.' || text[c.i] == ',') {
            c.i++;
            int nd = 0;
            while (text[c.i] >= '0' && text[c.i] <= '9') {
                if (++nd > 9)
                    return BAD("more than 9 fractional digits");
                nsec = nsec * 10 + (uint32_t)(text[c.i] - '0');
                c.i++;
            }
            if (nd == 0)
                return BAD("empty fraction");
            for (int k = nd; k < 9; k++)
                nsec *= 10;
        }
        char z = text[c.i];
        if (z == 'Z' || z == 'z') {
            c.i++;
        } else if (z == '+' || z == '-') {
            int64_t oh, om;
            c.i++;
            if (digits(&c, 2, &oh) || expect(&c, ':') || digits(&c, 2, &om))
                return BAD("expected offset +hh:mm");
            if (oh > 23 || om > 59)
                return BAD("offset out of range");
            off = (oh * 3600 + om * 60) * (z == '-' ? -1 : 1);
        } else if (z == '\0') {
            return BAD("missing time zone (use 'Z' or +hh:mm)");
        } else {
            return BAD("unexpected character after the time");
        }
        if (text[c.i] != '\0')
            return BAD("trailing characters");
    }
    int64_t days = days_before_year(year) + cum_days[leap][mon - 1] + (day - 1);
    /* a leap second (ss == 60) folds into the next second */
    out->sec = days * SECS_PER_DAY + hh * 3600 + mm * 60 + ss - off;
    out->nsec = nsec;
    return 0;
}

/* ---- formatting ---- */

/* `v` as exactly `width` decimal digits (zero-padded; v < 10^width) at `p`;
 * returns the end. No printf: this runs once per rendered timestamp. */
static char *put_digits(char *p, uint64_t v, int width)
{
    for (int i = width - 1; i >= 0; i--) {
        p[i] = (char)('0' + v % 10);
        v /= 10;
    }
    return p + width;
}

void silt_time_format(silt_time t, char *out)
{
    t = normalize(t);
    int64_t year, yday, sod;
    split(t.sec, &year, &yday, &sod);
    int leap = is_leap(year);
    int mon = 1;
    while (mon < 12 && cum_days[leap][mon] <= yday)
        mon++;
    int day = (int)(yday - cum_days[leap][mon - 1]) + 1;
    char tmp[128];
    size_t n;
    if (year >= 0 && year <= 9999) {
        put_digits(tmp, (uint64_t)year, 4);
        n = 4;
    } else {
        n = (size_t)snprintf(tmp, sizeof tmp, "%+05lld", (long long)year);
    }
    char *p = tmp + n;
    *p++ = '-';
    p = put_digits(p, (uint64_t)mon, 2);
    *p++ = '-';
    p = put_digits(p, (uint64_t)day, 2);
    *p++ = 'T';
    p = put_digits(p, (uint64_t)(sod / 3600), 2);
    *p++ = ':';
    p = put_digits(p, (uint64_t)(sod / 60 % 60), 2);
    *p++ = ':';
    p = put_digits(p, (uint64_t)(sod % 60), 2);
    if (t.nsec != 0) { /* the shortest exact fraction of 3, 6 or 9 digits */
        *p++ = '.';
        if (t.nsec % 1000000 == 0)
            p = put_digits(p, t.nsec / 1000000, 3);
        else if (t.nsec % 1000 == 0)
            p = put_digits(p, t.nsec / 1000, 6);
        else
            p = put_digits(p, t.nsec, 9);
    }
    *p++ = 'Z';
    /* longest: "+292277026596-12-04T15:30:07.999999999Z" = 39 chars */
    n = (size_t)(p - tmp);
    if (n > 39)
        n = 39; /* cannot happen for a normalised time; keeps the 40-byte contract */
    memcpy(out, tmp, n);
    out[n] = '\0';
}

/* ---- parts ---- */

void silt_time_to_parts(silt_time t, int32_t *year, uint16_t *ordinal, uint32_t *secs, uint32_t *nanos)
{
    t = normalize(t);
    int64_t y, yday, sod;
    split(t.sec, &y, &yday, &sod);
    if (y > INT32_MAX)
        y = INT32_MAX;
    if (y < INT32_MIN)
        y = INT32_MIN;
    if (year)
        *year = (int32_t)y;
    if (ordinal)
        *ordinal = (uint16_t)(yday + 1);
    if (secs)
        *secs = (uint32_t)sod;
    if (nanos)
        *nanos = t.nsec;
}

int silt_time_from_parts(int32_t year, uint16_t ordinal, uint32_t secs, uint32_t nanos, silt_time *out)
{
    if (ordinal < 1 || ordinal > 365 + is_leap(year))
        return silt_err(SILT_EINVAL, "invalid timestamp: ordinal day %u out of range for year %d",
                        (unsigned)ordinal, (int)year);
    if (secs >= SECS_PER_DAY)
        return silt_err(SILT_EINVAL, "invalid timestamp: %u seconds from midnight", (unsigned)secs);
    if (nanos >= NS_PER_SEC)
        return silt_err(SILT_EINVAL, "invalid timestamp: %u nanoseconds", (unsigned)nanos);
    int64_t days = days_before_year(year) + (ordinal - 1);
    out->sec = days * SECS_PER_DAY + (int64_t)secs;
    out->nsec = nanos;
    return 0;
}

int64_t silt_time_to_ms(silt_time t)
{
    t = normalize(t);
    /* saturate instead of overflowing for times ~292 million years away */
    if (t.sec > INT64_MAX / 1000 - 1)
        return INT64_MAX;
    if (t.sec < INT64_MIN / 1000)
        return INT64_MIN;
    return t.sec * 1000 + (int64_t)(t.nsec / 1000000);
}

silt_time silt_time_from_ms(int64_t ms)
{
    silt_time t;
    t.sec = floordiv(ms, 1000);
    t.nsec = (uint32_t)floormod(ms, 1000) * 1000000u;
    return t;
}

int silt_time_cmp(silt_time a, silt_time b)
{
    a = normalize(a);
    b = normalize(b);
    if (a.sec != b.sec)
        return a.sec < b.sec ? -1 : 1;
    if (a.nsec != b.nsec)
        return a.nsec < b.nsec ? -1 : 1;
    return 0;
}

void silt_trace(const char *stage, silt_time *t0)
{
    static int enabled = -1;
    if (enabled < 0) {
        const char *v = getenv("SILT_TRACE");
        enabled = v && *v && strcmp(v, "0") != 0;
    }
    if (!enabled)
        return;
    silt_time t = silt_time_now();
    if (stage)
        fprintf(stderr, "silt: trace: %-12s %8.3f s\n", stage,
                (double)(t.sec - t0->sec) + ((double)t.nsec - (double)t0->nsec) / 1e9);
    *t0 = t;
}
