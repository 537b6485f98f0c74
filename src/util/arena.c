/* arena.c — chunked region allocator (see arena.h). Chunks form a singly
 * linked list; big requests get a chunk of their own. */
#include "util/arena.h"
#include "util/error.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_DEFAULT (16 * 1024)
#define ALIGN 16

typedef struct chunk {
    struct chunk *next;
    size_t cap, used;
    _Alignas(16) unsigned char data[];
} chunk;

struct silt_arena {
    chunk *head;
};

silt_arena *silt_arena_new(void)
{
    silt_arena *a = silt_zalloc(sizeof *a);
    if (!a)
        silt_err(SILT_ENOMEM, "out of memory");
    return a;
}

void silt_arena_free(silt_arena *a)
{
    if (!a)
        return;
    chunk *c = a->head;
    while (c) {
        chunk *n = c->next;
        free(c);
        c = n;
    }
    free(a);
}

void *silt_arena_alloc(silt_arena *a, size_t n)
{
    if (!a)
        return NULL;
    if (n == 0)
        n = 1;
    if (n > SIZE_MAX - 2 * ALIGN) {
        silt_err(SILT_ENOMEM, "allocation too large");
        return NULL;
    }
    size_t need = (n + ALIGN - 1) & ~(size_t)(ALIGN - 1);
    chunk *c = a->head;
    if (!c || c->cap - c->used < need) {
        size_t cap = need > CHUNK_DEFAULT / 2 ? need : CHUNK_DEFAULT;
        chunk *nc = malloc(sizeof *nc + cap);
        if (!nc) {
            silt_err(SILT_ENOMEM, "out of memory");
            return NULL;
        }
        nc->cap = cap;
        nc->used = 0;
        if (c && need > CHUNK_DEFAULT / 2) {
            /* big block: keep the current chunk at the head for small ones */
            nc->next = c->next;
            c->next = nc;
        } else {
            nc->next = c;
            a->head = nc;
        }
        c = nc;
    }
    void *p = c->data + c->used;
    c->used += need;
    memset(p, 0, n);
    return p;
}

void *silt_arena_memdup(silt_arena *a, const void *p, size_t n)
{
    void *d = silt_arena_alloc(a, n ? n : 1);
    if (d && n)
        memcpy(d, p, n);
    return d;
}

char *silt_arena_strndup(silt_arena *a, const char *s, size_t n)
{
    if (!s)
        return NULL;
    char *d = silt_arena_alloc(a, n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

char *silt_arena_strdup(silt_arena *a, const char *s)
{
    if (!s)
        return NULL;
    return silt_arena_strndup(a, s, strlen(s));
}

char *silt_arena_printf(silt_arena *a, const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        va_end(ap2);
        silt_err(SILT_EINTERNAL, "format error");
        return NULL;
    }
    char *d = silt_arena_alloc(a, (size_t)n + 1);
    if (d)
        vsnprintf(d, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return d;
}
