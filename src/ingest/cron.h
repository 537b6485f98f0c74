/* cron.h — standard 5-field (and 6-field, with seconds) cron expressions and their next fire time (UTC).
 *
 * Syntax: "minute hour day-of-month month day-of-week", or six fields with
 * a leading second ("second minute hour …", a silt extension for short
 * intervals such as "0/5 * * * * *", every 5 seconds; five fields mean second 0); each field is a
 * comma-separated list of `*`, `N`, `N-M`, each optionally followed by
 * `/STEP` (`N/STEP` means N..max/STEP). Months accept JAN..DEC, days of the
 * week SUN..SAT (case-insensitive); day of week 0 and 7 are Sunday. Macros:
 * @hourly @daily @midnight @weekly @monthly @yearly @annually.
 * When both day fields are restricted, a day matches if EITHER matches
 * (Vixie cron). A field counts as restricted when it does not allow every
 * value — python croniter's rule, the test oracle — so `*`, `1-31`, `* /1`
 * (without the space) are unrestricted and `* /2` is restricted. All times are UTC; there is no time zone support.
 */
#ifndef SILT_INGEST_CRON_H
#define SILT_INGEST_CRON_H

#include <stdbool.h>
#include <stdint.h>

typedef struct silt_cron {
    uint64_t second; /* bit s: second s (0..59); 5 fields: second 0 only */
    uint64_t minute; /* bit m: minute m (0..59) */
    uint32_t hour;   /* bit h: hour h (0..23) */
    uint32_t dom;    /* bit d: day of month d (1..31) */
    uint16_t month;  /* bit m: month m (1..12) */
    uint8_t dow;     /* bit d: day of week d (0 = Sunday .. 6) */
    bool dom_star;   /* day-of-month field allows every day */
    bool dow_star;   /* day-of-week field allows every day */
} silt_cron;

/* Parses `expr`. On error returns SILT_EINVAL with a message like
 * "invalid cron expression '61 * * * *': minute: value 61 out of range 0-59". */
int silt_cron_parse(silt_cron *out, const char *expr);

/* First fire time strictly after `after` (seconds since the UNIX epoch,
 * UTC), on a whole minute for 5 fields, on an allowed second for 6. SILT_ENOTFOUND if the expression never fires
 * (e.g. "0 0 30 2 *"). */
int silt_cron_next(const silt_cron *c, int64_t after, int64_t *next_out);

#endif
