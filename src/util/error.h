/* error.h — thread-local error reporting for the whole library.
 *
 * Every fallible function returns 0 (or a non-negative value) on success and a
 * negative SILT_E* code on failure, after recording a one-line, human readable
 * message with silt_err(). The message stays valid until the next silt_err()
 * on the same thread. The library never exits or aborts on bad input.
 */
#ifndef SILT_UTIL_ERROR_H
#define SILT_UTIL_ERROR_H

#include <stdarg.h>

/* Error codes SILT_OK, SILT_EINVAL, … are defined in the public header. */
#include "silt.h"

/* Records a printf-style message for this thread and returns `code`. */
int silt_err(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int silt_verr(int code, const char *fmt, va_list ap);

/* Prefixes the current message with "<prefix>: " (e.g. a file name) and
 * returns `code`. Used to add context while an error travels up. */
int silt_err_context(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Last message recorded on this thread; never NULL ("" when none).
 * Borrowed: owned by the thread-local error slot. */
const char *silt_error_last(void);

/* Short symbolic name of a code, e.g. "EINVAL". Static string. */
const char *silt_error_name(int code);

void silt_err_clear(void);

#endif
