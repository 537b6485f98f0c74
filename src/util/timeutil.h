/* timeutil.h — time values and their text forms.
 * Times are odf_time-compatible: seconds since the UNIX epoch (UTC) + nanos. */
#ifndef SILT_UTIL_TIMEUTIL_H
#define SILT_UTIL_TIMEUTIL_H

#include <stdint.h>

typedef struct silt_time {
    int64_t sec;
    uint32_t nsec;
} silt_time;

/* Current wall-clock time (CLOCK_REALTIME). If SILT_FAKE_SYSTEM_TIME is set
 * in the environment (RFC 3339), returns that instead (for tests). */
silt_time silt_time_now(void);

/* Parses RFC 3339 / ISO 8601: "2020-01-01T12:00:00Z", fractional seconds up to
 * 9 digits, offsets "+hh:mm"/"-hh:mm"/"Z", also a plain date "2020-01-01"
 * (midnight UTC) and space instead of 'T'. SILT_EINVAL on bad input. */
int silt_time_parse(const char *text, silt_time *out);

/* Formats as RFC 3339 UTC with 'Z': no fraction when nsec == 0, otherwise the
 * shortest of 3, 6 or 9 digits that is exact (as chrono does).
 * out needs at least 40 bytes. */
void silt_time_format(silt_time t, char *out);

/* Calendar conversions used by the FlatBuffers Timestamp struct
 * {year, ordinal (1-based day of year), seconds_from_midnight, nanoseconds}. */
void silt_time_to_parts(silt_time t, int32_t *year, uint16_t *ordinal, uint32_t *secs, uint32_t *nanos);
int silt_time_from_parts(int32_t year, uint16_t ordinal, uint32_t secs, uint32_t nanos, silt_time *out);

/* Milliseconds since epoch <-> silt_time. */
int64_t silt_time_to_ms(silt_time t);
silt_time silt_time_from_ms(int64_t ms);
int silt_time_cmp(silt_time a, silt_time b);

/* Developer tracing: when $SILT_TRACE is set (and not "0"), prints
 * "silt: trace: <stage> <seconds since *t0>" on stderr; always resets *t0
 * to now. With stage NULL it only resets. */
void silt_trace(const char *stage, silt_time *t0);

#endif
