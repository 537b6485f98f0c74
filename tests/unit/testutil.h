/* testutil.h — helpers shared by the cmocka unit tests. */
#ifndef SILT_TESTUTIL_H
#define SILT_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

/* Creates a fresh temporary directory; returns a malloc'd path. */
char *tu_mkdtemp(void);
/* rm -rf path (best effort). */
void tu_rmrf(const char *path);
/* Reads a whole file into a malloc'd, NUL-terminated buffer; NULL if missing. */
char *tu_read_file(const char *path, size_t *len);
/* Writes bytes to a file (creates/truncates); 0 on success. */
int tu_write_file(const char *path, const void *data, size_t len);
/* Path of a fixture under tests/fixtures (static buffer, overwritten per call). */
const char *tu_fixture(const char *rel);
/* Lower-case hex of bytes into a static buffer. */
const char *tu_hex(const uint8_t *p, size_t n);

#endif
