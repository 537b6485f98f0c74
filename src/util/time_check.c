/* time_check.c — the public check of an RFC 3339 time (silt_time_check in
 * silt.h), for programs that take a time from elsewhere (the odf-event-time
 * header of `silt serve`) and must refuse it before any work starts. */
#include "silt.h"
#include "util/error.h"
#include "util/timeutil.h"

int silt_time_check(const char *text)
{
    silt_time t;
    if (!text || silt_time_parse(text, &t) < 0)
        return silt_err(SILT_EINVAL, "not an RFC 3339 time: '%s'", text ? text : "");
    return 0;
}
