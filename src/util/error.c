/* error.c — thread-local error slot (see error.h). */
#include "util/error.h"

#include <stdio.h>
#include <string.h>

#define SILT_ERRMSG_MAX 2048

static _Thread_local char g_msg[SILT_ERRMSG_MAX];
static _Thread_local int g_code; /* the code of g_msg (SILT_OK when none) */

int silt_verr(int code, const char *fmt, va_list ap)
{
    vsnprintf(g_msg, sizeof g_msg, fmt, ap);
    g_code = code;
    /* keep messages on one line */
    for (char *p = g_msg; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    return code;
}

int silt_err(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    silt_verr(code, fmt, ap);
    va_end(ap);
    return code;
}

int silt_err_context(int code, const char *fmt, ...)
{
    char prefix[512];
    char old[SILT_ERRMSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, g_msg, sizeof old);
    g_code = code;
    if (snprintf(g_msg, sizeof g_msg, "%s: %s", prefix, old) >= (int)sizeof g_msg)
        g_msg[sizeof g_msg - 1] = '\0'; /* truncated: keep what fits */
    for (char *p = g_msg; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    return code;
}

const char *silt_error_last(void) { return g_msg; }

int silt_error_code(void) { return g_code; }

void silt_err_clear(void)
{
    g_msg[0] = '\0';
    g_code = SILT_OK;
}

const char *silt_error_name(int code)
{
    switch (code) {
    case SILT_OK: return "OK";
    case SILT_EINVAL: return "EINVAL";
    case SILT_ENOMEM: return "ENOMEM";
    case SILT_EIO: return "EIO";
    case SILT_ENOTFOUND: return "ENOTFOUND";
    case SILT_EEXISTS: return "EEXISTS";
    case SILT_ECONFLICT: return "ECONFLICT";
    case SILT_ECORRUPT: return "ECORRUPT";
    case SILT_EVALIDATION: return "EVALIDATION";
    case SILT_EUNSUPPORTED: return "EUNSUPPORTED";
    case SILT_EINTERNAL: return "EINTERNAL";
    case SILT_ECANCELED: return "ECANCELED";
    default: return "EUNKNOWN";
    }
}
