/* event_time.c — event time sources (see event_time.h).
 *
 * Invariants: times are UTC; parsing never depends on the process locale or
 * time zone (timegm + the parsed %z offset); the library never aborts on a
 * bad pattern or format — every failure is SILT_EINVAL with the offending
 * text, pattern or format in the message.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "ingest/event_time.h"

#include "util/buf.h"
#include "util/error.h"

#include <ctype.h>
#include <pcre2.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int count_run(const char *s, char c)
{
    int n = 0;
    while (s[n] == c)
        n++;
    return n;
}

int silt_et_translate_format(const char *format, char **out)
{
    *out = NULL;
    if (!format)
        format = SILT_ET_DEFAULT_FORMAT;
    if (strchr(format, '%')) {
        *out = strdup(format);
        return *out ? 0 : silt_err(SILT_ENOMEM, "event time: out of memory");
    }
    silt_buf b = SILT_BUF_INIT;
    int rc = 0;
    for (const char *p = format; *p && !rc;) {
        char c = *p;
        int n = count_run(p, c);
        const char *rep = NULL;
        if (c == '\'') {
            if (p[1] == '\'') { /* '' = a literal quote */
                rc = silt_buf_putc(&b, '\'');
                p += 2;
                continue;
            }
            const char *q = p + 1;
            for (;;) {
                if (!*q) {
                    rc = silt_err(SILT_EINVAL, "timestamp format '%s': unterminated quote", format);
                    break;
                }
                if (*q == '\'' && q[1] == '\'') {
                    rc = silt_buf_putc(&b, '\'');
                    q += 2;
                } else if (*q == '\'') {
                    q++;
                    break;
                } else {
                    rc = silt_buf_putc(&b, *q++);
                }
                if (rc)
                    break;
            }
            p = q;
            continue;
        }
        if (isalpha((unsigned char)c)) {
            switch (c) {
            case 'y': rep = n == 2 ? "%y" : "%Y"; break;
            case 'M': rep = n >= 4 ? "%B" : n == 3 ? "%b" : "%m"; break;
            case 'd': rep = "%d"; break;
            case 'D': rep = "%j"; break;
            case 'H': rep = "%H"; break;
            case 'm': rep = "%M"; break;
            case 's': rep = "%S"; break;
            case 'X': case 'Z': case 'x': rep = "%z"; break;
            default:
                rc = silt_err(SILT_EINVAL, "timestamp format '%s': pattern letter '%c' is not supported", format,
                              c);
                continue;
            }
            rc = silt_buf_puts(&b, rep);
            p += n;
            continue;
        }
        rc = silt_buf_putc(&b, c);
        p++;
    }
    if (!rc && !b.data)
        rc = silt_buf_puts(&b, "");
    if (rc) {
        silt_buf_free(&b);
        return rc == SILT_ENOMEM ? silt_err(SILT_ENOMEM, "event time: out of memory") : rc;
    }
    *out = silt_buf_detach(&b);
    return *out ? 0 : silt_err(SILT_ENOMEM, "event time: out of memory");
}

int silt_et_parse(const char *text, const char *format, silt_time *out)
{
    char *fmt;
    int rc = silt_et_translate_format(format, &fmt);
    if (rc)
        return rc;
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    tm.tm_mday = 1; /* a format without a day means the 1st */
    const char *end = strptime(text, fmt, &tm);
    if (!end || *end) {
        rc = silt_err(SILT_EINVAL, "cannot parse '%s' with timestamp format '%s'", text,
                      format ? format : SILT_ET_DEFAULT_FORMAT);
        free(fmt);
        return rc;
    }
    bool epoch = strstr(fmt, "%s") != NULL;
    free(fmt);
    long off = tm.tm_gmtoff;
    if (epoch) {
        /* glibc fills %s as local time: undo it */
        tm.tm_isdst = -1;
        time_t t = mktime(&tm);
        out->sec = (int64_t)t;
    } else {
        tm.tm_isdst = 0;
        out->sec = (int64_t)timegm(&tm) - off;
    }
    out->nsec = 0;
    return 0;
}

/* Compiles a FromPath pattern that has a group 1 (*out: pcre2_code_free). */
static int compile_pattern(const char *pattern, pcre2_code **out)
{
    *out = NULL;
    if (!pattern || !*pattern)
        return silt_err(SILT_EINVAL, "event time FromPath: no pattern");
    int errcode;
    PCRE2_SIZE erroff;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, PCRE2_UTF, &errcode, &erroff, NULL);
    if (!re) {
        PCRE2_UCHAR msg[160];
        pcre2_get_error_message(errcode, msg, sizeof msg);
        return silt_err(SILT_EINVAL, "event time pattern '%s': %s at offset %zu", pattern, (const char *)msg,
                        (size_t)erroff);
    }
    uint32_t ncap = 0;
    pcre2_pattern_info(re, PCRE2_INFO_CAPTURECOUNT, &ncap);
    if (ncap < 1) {
        pcre2_code_free(re);
        return silt_err(SILT_EINVAL, "event time pattern '%s' has no group 1 holding the time", pattern);
    }
    *out = re;
    return 0;
}

int silt_et_check(const odf_union *source)
{
    if (!source || source->type != ODF_EventTimeSource_FromPath)
        return 0;
    const odf_EventTimeSourceFromPath *fp = source->value;
    if (!fp)
        return silt_err(SILT_EINVAL, "event time FromPath: no pattern");
    pcre2_code *re = NULL;
    int rc = compile_pattern(fp->pattern, &re);
    pcre2_code_free(re);
    char *fmt = NULL;
    if (!rc)
        rc = silt_et_translate_format(fp->timestamp_format ? fp->timestamp_format : SILT_ET_DEFAULT_FORMAT, &fmt);
    free(fmt);
    return rc;
}

int silt_et_from_path(const char *path, const char *pattern, const char *format, silt_time *out)
{
    pcre2_code *re = NULL;
    int rc0 = compile_pattern(pattern, &re);
    if (rc0)
        return rc0;
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
    if (!md) {
        pcre2_code_free(re);
        return silt_err(SILT_ENOMEM, "event time: out of memory");
    }
    const char *slash = strrchr(path, '/');
    const char *cands[2] = {slash ? slash + 1 : path, path};
    int rc = silt_err(SILT_EINVAL, "event time pattern '%s' does not match '%s'", pattern, cands[0]);
    for (int i = 0; i < 2; i++) {
        if (i == 1 && cands[1] == cands[0])
            break;
        int m = pcre2_match(re, (PCRE2_SPTR)cands[i], strlen(cands[i]), 0, 0, md, NULL);
        if (m < 0)
            continue;
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        if (m < 2 || ov[2] == PCRE2_UNSET) {
            rc = silt_err(SILT_EINVAL, "event time pattern '%s': group 1 did not take part in the match of '%s'",
                          pattern, cands[i]);
            break;
        }
        char *grp = strndup(cands[i] + ov[2], ov[3] - ov[2]);
        if (!grp) {
            rc = silt_err(SILT_ENOMEM, "event time: out of memory");
            break;
        }
        rc = silt_et_parse(grp, format, out);
        if (rc)
            rc = silt_err_context(rc, "event time of '%s'", cands[0]);
        free(grp);
        break;
    }
    pcre2_match_data_free(md);
    pcre2_code_free(re);
    return rc;
}

int silt_et_resolve(const odf_union *source, int default_kind, const char *path, bool has_metadata_time,
                    silt_time metadata_time, bool *has_out, silt_time *out)
{
    *has_out = false;
    int kind = source && source->type ? source->type : default_kind;
    switch (kind) {
    case ODF_EventTimeSource_FromMetadata:
        if (has_metadata_time) {
            *out = metadata_time;
            *has_out = true;
        }
        return 0;
    case ODF_EventTimeSource_FromPath: {
        const odf_EventTimeSourceFromPath *fp = source ? source->value : NULL;
        if (!fp)
            return silt_err(SILT_EINVAL, "event time FromPath: no pattern");
        int rc = silt_et_from_path(path, fp->pattern, fp->timestamp_format, out);
        *has_out = rc == 0;
        return rc;
    }
    case ODF_EventTimeSource_FromSystemTime:
        return 0;
    default:
        return silt_err(SILT_EINVAL, "unknown event time source kind %d", kind);
    }
}
