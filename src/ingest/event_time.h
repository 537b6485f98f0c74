/* event_time.h — event time sources of polling ingresses (ODF
 * EventTimeSource): FromMetadata (file mtime / HTTP Last-Modified), FromPath
 * (a regex whose first group holds the time, parsed with a timestamp format)
 * and FromSystemTime. The resulting time is the fallback event time of the
 * ingest (it fills rows without an event time).
 */
#ifndef SILT_INGEST_EVENT_TIME_H
#define SILT_INGEST_EVENT_TIME_H

#include <stdbool.h>

#include "odf/odf_types.h"
#include "util/timeutil.h"

/* Default timestamp format of FromPath. */
#define SILT_ET_DEFAULT_FORMAT "%Y-%m-%d"

/* Translates a timestamp format to strftime/strptime style. Formats holding
 * a '%' are returned unchanged; Java/chrono-style patterns (yyyy-MM-dd,
 * yyyyMMdd'T'HHmmss, …) are translated: yyyy %Y, yy %y, MM %m, MMM %b,
 * dd %d, DDD %j, HH %H, mm %M, ss %S, XXX/Z %z, 'text' literal. Letters
 * without a strptime equivalent (e.g. S fractions) are SILT_EINVAL. *out is
 * malloc'd (caller frees). */
int silt_et_translate_format(const char *format, char **out);

/* Parses `text` with `format` (strftime style or Java style, see above) into
 * a UTC time. The whole text must match. Fields absent from the format are
 * zero (a date-only format gives midnight UTC); a %z offset is honoured.
 * SILT_EINVAL "cannot parse '…' with timestamp format '…'". */
int silt_et_parse(const char *text, const char *format, silt_time *out);

/* FromPath: matches PCRE2 `pattern` against the file name of `path` (the
 * part after the last '/'), and when that does not match against the whole
 * `path` (e.g. a URL); group 1 is parsed with `format` (NULL = "%Y-%m-%d").
 * SILT_EINVAL when the pattern is invalid, does not match, or has no group 1. */
int silt_et_from_path(const char *path, const char *pattern, const char *format, silt_time *out);

/* Checks what does not depend on the file: a FromPath source's pattern
 * (compiles, has a group 1) and timestamp format. 0 for other kinds. After
 * it, a FromPath failure of silt_et_from_path concerns that one path. */
int silt_et_check(const odf_union *source);

/* Resolves an EventTimeSource union (type 0 = not given; then
 * `default_kind` applies, one of ODF_EventTimeSource_*) for one input:
 *  - FromMetadata: `metadata_time` if has_metadata_time, else no time;
 *  - FromPath: silt_et_from_path(path, …);
 *  - FromSystemTime: no time (the ingest uses its system time).
 * *has_out tells whether a fallback time results. */
int silt_et_resolve(const odf_union *source, int default_kind, const char *path, bool has_metadata_time,
                    silt_time metadata_time, bool *has_out, silt_time *out);

#endif
