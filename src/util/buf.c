/* buf.c — growable byte buffer (see buf.h). */
#include "util/buf.h"
#include "util/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int silt_buf_reserve(silt_buf *b, size_t extra)
{
    if (extra > SIZE_MAX - b->len - 1)
        return silt_err(SILT_ENOMEM, "buffer too large");
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    char *d = realloc(b->data, cap);
    if (!d)
        return silt_err(SILT_ENOMEM, "out of memory");
    b->data = d;
    b->cap = cap;
    return 0;
}

int silt_buf_append(silt_buf *b, const void *p, size_t n)
{
    int rc = silt_buf_reserve(b, n);
    if (rc)
        return rc;
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

int silt_buf_puts(silt_buf *b, const char *s) { return silt_buf_append(b, s, strlen(s)); }

int silt_buf_putc(silt_buf *b, char c) { return silt_buf_append(b, &c, 1); }

int silt_buf_printf(silt_buf *b, const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        va_end(ap2);
        return silt_err(SILT_EINTERNAL, "format error");
    }
    int rc = silt_buf_reserve(b, (size_t)n);
    if (rc) {
        va_end(ap2);
        return rc;
    }
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    b->len += (size_t)n;
    return 0;
}

void silt_buf_clear(silt_buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

void silt_buf_free(silt_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

char *silt_buf_detach(silt_buf *b)
{
    if (!b->data && silt_buf_reserve(b, 0))
        return NULL;
    b->data[b->len] = '\0'; /* reserve() alone does not terminate */
    char *d = b->data;
    b->data = NULL;
    b->len = b->cap = 0;
    return d;
}
