/* cron.h — standard 5-field cron expressions and their next fire time (UTC).
 *
 * Syntax: "minute hour day-of-month month day-of-week"; each field is a
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
 * UTC), on a whole minute. SILT_ENOTFOUND if the expression never fires
 * (e.g. "0 0 30 2 *"). */
int silt_cron_next(const silt_cron *c, int64_t after, int64_t *next_out);

#endif
