/* testutil.c — see testutil.h. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *tu_mkdtemp(void)
{
    const char *base = getenv("TMPDIR");
    char tmpl[4096];
    snprintf(tmpl, sizeof tmpl, "%s/silt-test-XXXXXX", base && *base ? base : "/tmp");
    char *d = mkdtemp(tmpl);
    return d ? strdup(d) : NULL;
}

void tu_rmrf(const char *path)
{
    if (!path || !*path || strcmp(path, "/") == 0)
        return;
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    if (system(cmd) != 0)
        fprintf(stderr, "warning: could not remove %s\n", path);
}

char *tu_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    for (;;) {
        if (n == cap) {
            cap *= 2;
            buf = realloc(buf, cap + 1);
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        if (r == 0)
            break;
        n += r;
    }
    fclose(f);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

int tu_write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = fwrite(data, 1, len, f);
    fclose(f);
    return w == len ? 0 : -1;
}

const char *tu_fixture(const char *rel)
{
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/%s", SILT_FIXTURES, rel);
    return buf;
}

const char *tu_hex(const uint8_t *p, size_t n)
{
    static char buf[8192];
    size_t i;
    for (i = 0; i < n && i * 2 + 2 < sizeof buf; i++)
        sprintf(buf + 2 * i, "%02x", p[i]);
    buf[2 * i] = '\0';
    return buf;
}
