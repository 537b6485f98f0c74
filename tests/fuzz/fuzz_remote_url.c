/* fuzz_remote_url.c — libFuzzer target for the user input of repositories:
 * the .silt/repos.yaml reader (silt_repos_parse) and the repository URL
 * dispatcher (silt_store_open_url).
 *
 * The bytes are parsed as repos.yaml; whatever parses must format
 * (silt_repos_format) and read back as the same entries, and every url it
 * accepted must be one the dispatcher takes or refuses with a message
 * (never a crash). Then each line of the input, and its first line split at
 * the last '/' into URL and dataset name, goes to silt_store_open_url
 * without `create` (file:// only looks at the file system; http(s):// only
 * builds the store: no request is made). The same bytes are a response
 * header line and an error body for the HTTP backend's parsers
 * (silt_http_status_line, silt_http_server_message).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ops/transfer.h"
#include "store/store.h"
#include "util/buf.h"
#include "util/error.h"

static bool same(const silt_repo *a, const silt_repo *b)
{
    return strcmp(a->name, b->name) == 0 && strcmp(a->url, b->url) == 0 &&
           ((!a->token_env && !b->token_env) || (a->token_env && b->token_env && !strcmp(a->token_env, b->token_env)));
}

static void open_url(const char *url, const char *name)
{
    silt_store *s = NULL;
    int rc = silt_store_open_url(&s, url, name, NULL, false);
    if (rc == 0 && !s)
        __builtin_trap();
    if (rc < 0 && (s || !silt_error_last()[0]))
        __builtin_trap(); /* an error has a message and no store */
    silt_store_free(s);
    silt_err_clear();
}

static void repos(const char *text, size_t len)
{
    char *t = malloc(len + 1);
    if (!t)
        return;
    memcpy(t, text, len);
    t[len] = '\0';
    silt_repo *v = NULL, *w = NULL;
    size_t n = 0, m = 0;
    if (silt_repos_parse(t, "repos.yaml", &v, &n) == 0) {
        silt_buf b = SILT_BUF_INIT;
        if (silt_repos_format(&b, v, n) < 0 || silt_repos_parse(b.data, "again", &w, &m) < 0 || m != n)
            __builtin_trap(); /* our own text must read back */
        for (size_t i = 0; i < n; i++) {
            if (!same(&v[i], &w[i]))
                __builtin_trap();
            open_url(v[i].url, v[i].name);
        }
        silt_buf_free(&b);
    }
    silt_err_clear();
    silt_repos_free(v, n);
    silt_repos_free(w, m);
    free(t);
}

static void http_parsers(const uint8_t *data, size_t size)
{
    long st = silt_http_status_line((const char *)data, size); /* exactly size bytes: ASan sees overreads */
    if (st < -1 || st > 999)
        __builtin_trap();
    silt_buf b = SILT_BUF_INIT;
    if (silt_buf_append(&b, data, size) == 0) {
        const char *m = silt_http_server_message(&b);
        if (size && (m < b.data || m > b.data + b.len))
            __builtin_trap(); /* points into the body */
        if (strlen(m) > b.len)
            __builtin_trap();
    }
    silt_buf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 16)
        return 0;
    http_parsers(data, size);
    repos((const char *)data, size);
    char *t = malloc(size + 1);
    if (!t)
        return 0;
    memcpy(t, data, size);
    t[size] = '\0';
    char *first = NULL;
    for (char *save = NULL, *line = strtok_r(t, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (!first)
            first = line;
        open_url(line, "ds");
    }
    if (first) {
        char *slash = strrchr(first, '/');
        if (slash) {
            *slash = '\0';
            open_url(first, slash + 1);
        }
    }
    free(t);
    return 0;
}
