/* buf.h — growable byte buffer.
 *
 * A silt_buf owns its heap memory (`data`), always NUL-terminated past `len`
 * so it can be used as a C string. Functions return 0 or SILT_ENOMEM.
 * Initialise with SILT_BUF_INIT; release with silt_buf_free().
 */
#ifndef SILT_UTIL_BUF_H
#define SILT_UTIL_BUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct silt_buf {
    char *data; /* owned; NULL until first write */
    size_t len;
    size_t cap;
} silt_buf;

#define SILT_BUF_INIT {NULL, 0, 0}

int silt_buf_reserve(silt_buf *b, size_t extra);
int silt_buf_append(silt_buf *b, const void *p, size_t n);
int silt_buf_puts(silt_buf *b, const char *s);
int silt_buf_putc(silt_buf *b, char c);
int silt_buf_printf(silt_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void silt_buf_clear(silt_buf *b);
void silt_buf_free(silt_buf *b);
/* Transfers ownership of the data to the caller (free() it); leaves b empty.
 * Returns a valid "" string if nothing was written (NULL only on ENOMEM). */
char *silt_buf_detach(silt_buf *b);

#endif
