/* arena.h — region allocator.
 *
 * Decoded metadata (blocks, manifests) is a tree of many small objects; all of
 * them are allocated from one arena and released together with
 * silt_arena_free(). Allocation failures return NULL after recording
 * SILT_ENOMEM with silt_err(). Memory is zero-initialised.
 */
#ifndef SILT_UTIL_ARENA_H
#define SILT_UTIL_ARENA_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct silt_arena silt_arena;

/* malloc'd, zeroed memory for one object of `n` bytes (free with free());
 * NULL when out of memory (nothing recorded). Used instead of calloc for
 * the objects made on every request (handles, stores): glibc's calloc
 * bypasses the per-thread cache, and one of 1 KiB or more makes malloc
 * consolidate its fast bins each time. (GCC turns malloc + memset into
 * calloc: the empty asm statement keeps them apart.) */
static inline void *silt_zalloc(size_t n)
{
    void *p = malloc(n);
    if (p) {
        __asm__ volatile("" : : "r"(p) : "memory"); /* or the compiler makes it a calloc again */
        memset(p, 0, n);
    }
    return p;
}

/* Returns a new arena or NULL (ENOMEM recorded). Caller owns it. */
silt_arena *silt_arena_new(void);
/* Frees the arena and everything allocated from it. Accepts NULL. */
void silt_arena_free(silt_arena *a);

/* Zeroed, 16-byte aligned memory owned by the arena; NULL on failure. */
void *silt_arena_alloc(silt_arena *a, size_t n);
/* Copy of `n` bytes of `p` (n may be 0: returns a valid 1-byte block). */
void *silt_arena_memdup(silt_arena *a, const void *p, size_t n);
/* NUL-terminated copy of `s`; NULL if s is NULL or on failure. */
char *silt_arena_strdup(silt_arena *a, const char *s);
/* NUL-terminated copy of the first n bytes of s. */
char *silt_arena_strndup(silt_arena *a, const char *s, size_t n);
/* printf into arena memory. */
char *silt_arena_printf(silt_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
