/* test_remote.c — the repository URL dispatcher (silt_store_open_url:
 * file://, http(s)://, s3:// refused, bad names and URLs with their
 * messages) and the .silt/repos.yaml reader and writer (silt_repos_parse,
 * silt_repos_format: entries, comments, errors naming file and line, the
 * round trip), and the HTTP backend's response parsers. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/transfer.h"
#include "store/store.h"
#include "util/error.h"
#include "util/fsutil.h"

static char *g_dir;

static int setup(void **state)
{
    (void)state;
    g_dir = tu_mkdtemp();
    return g_dir ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    tu_rmrf(g_dir);
    free(g_dir);
    return 0;
}

static void expect_url_err(const char *url, const char *name, int code, const char *msg)
{
    silt_store *s = NULL;
    assert_int_equal(silt_store_open_url(&s, url, name, NULL, false), code);
    assert_null(s);
    assert_string_equal(silt_error_last(), msg);
}

static void test_url_file(void **state)
{
    (void)state;
    char url[4200], msg[4400];
    snprintf(url, sizeof url, "file://%s", g_dir);
    snprintf(msg, sizeof msg, "dataset 'sales' not found in %s", url);
    expect_url_err(url, "sales", SILT_ENOTFOUND, msg);
    silt_store *s = NULL;
    assert_int_equal(silt_store_open_url(&s, url, "sales", NULL, true), 0);
    assert_string_equal(s->ops->backend, "localfs");
    silt_store_free(s);
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/sales/refs", g_dir);
    assert_true(silt_fs_is_dir(dir));
    s = NULL; /* now it exists: opens without create */
    assert_int_equal(silt_store_open_url(&s, url, "sales", NULL, false), 0);
    silt_store_free(s);
    expect_url_err("file://relative/path", "sales", SILT_EINVAL,
                   "repository URL 'file://relative/path': a file URL needs an absolute path (file:///path)");
}

static void test_url_http_s3_bad(void **state)
{
    (void)state;
    silt_store *s = NULL;
    silt_store_remote_opts o = {.token = "secret"};
    assert_int_equal(silt_store_open_url(&s, "http://127.0.0.1:1/odf/", "sales", &o, false), 0);
    assert_string_equal(s->ops->backend, "http");
    silt_store_free(s);
    s = NULL;
    assert_int_equal(silt_store_open_url(&s, "https://h.example/odf", "sales", NULL, true), 0);
    silt_store_free(s);
    expect_url_err("s3+http://127.0.0.1:1", "sales", SILT_EINVAL,
                   "repository URL 's3+http://127.0.0.1:1': expected s3+http(s)://host[:port]/bucket[/prefix]");
    expect_url_err("ftp://x", "sales", SILT_EINVAL,
                   "repository URL 'ftp://x': expected file:///path, http(s)://host[:port]/odf, s3://bucket/prefix or "
                   "s3+http(s)://host[:port]/bucket/prefix");
    expect_url_err("", "sales", SILT_EINVAL, "empty repository URL");
    expect_url_err("file:///tmp", "../etc", SILT_EINVAL, "invalid dataset name '../etc' for repository file:///tmp");
    expect_url_err("file:///tmp", ".hidden", SILT_EINVAL, "invalid dataset name '.hidden' for repository file:///tmp");
    expect_url_err("http://h/odf", "a/b", SILT_EINVAL, "invalid dataset name 'a/b' for repository http://h/odf");
    expect_url_err("http://h/odf", NULL, SILT_EINVAL, "invalid dataset name '' for repository http://h/odf");
}

static int parse(const char *text, silt_repo **v, size_t *n)
{
    char *t = strdup(text);
    assert_non_null(t);
    int rc = silt_repos_parse(t, "repos.yaml", v, n);
    free(t);
    return rc;
}

static void test_repos_parse(void **state)
{
    (void)state;
    silt_repo *v = NULL;
    size_t n = 0;
    assert_int_equal(parse("# comment\nrepos:\n  - name: b\n    url: http://127.0.0.1:8080/odf\n    tokenEnv: NODE_TOKEN\n"
                           "\n  - url: file:///srv/repo\n    name: a\n",
                           &v, &n),
                     0);
    assert_int_equal(n, 2);
    assert_string_equal(v[0].name, "b");
    assert_string_equal(v[0].url, "http://127.0.0.1:8080/odf");
    assert_string_equal(v[0].token_env, "NODE_TOKEN");
    assert_string_equal(v[1].name, "a");
    assert_string_equal(v[1].url, "file:///srv/repo");
    assert_null(v[1].token_env);
    /* the canonical text, sorted by name, reads back the same */
    silt_buf b = SILT_BUF_INIT;
    assert_int_equal(silt_repos_format(&b, v, n), 0);
    assert_string_equal(b.data, "# silt repositories (silt repo add); tokens are never stored here, only the\n"
                                "# name of the environment variable that holds one (tokenEnv)\nrepos:\n"
                                "  - name: a\n    url: file:///srv/repo\n"
                                "  - name: b\n    url: http://127.0.0.1:8080/odf\n    tokenEnv: NODE_TOKEN\n");
    silt_repo *w = NULL;
    size_t m = 0;
    assert_int_equal(parse(b.data, &w, &m), 0);
    assert_int_equal(m, 2);
    assert_string_equal(w[0].name, "a");
    assert_string_equal(w[1].token_env, "NODE_TOKEN");
    silt_repos_free(w, m);
    silt_buf_free(&b);
    silt_repos_free(v, n);
    assert_int_equal(parse("", &v, &n), 0);
    assert_int_equal(n, 0);
    assert_null(v);
    /* no entries (as after `repo delete` of the last one): only the header */
    assert_int_equal(silt_repos_format(&b, NULL, 0), 0);
    assert_string_equal(b.data, "# silt repositories (silt repo add); tokens are never stored here, only the\n"
                                "# name of the environment variable that holds one (tokenEnv)\nrepos:\n");
    silt_buf_free(&b);
}

static void expect_parse_err(const char *text, const char *msg)
{
    silt_repo *v = (silt_repo *)1;
    size_t n = 7;
    assert_int_equal(parse(text, &v, &n), SILT_EINVAL);
    assert_null(v);
    assert_int_equal(n, 0);
    assert_string_equal(silt_error_last(), msg);
}

static void test_repos_errors(void **state)
{
    (void)state;
    expect_parse_err("repos:\n  - name: a\n    url: file:///x\n    token: abc\n", "repos.yaml:4: unknown key 'token'");
    expect_parse_err("repos:\n  - name a\n", "repos.yaml:2: expected 'key: value'");
    expect_parse_err("repos:\n  - name: a\n    url: ftp://x\n", "repos.yaml:2: invalid url");
    expect_parse_err("repos:\n  - name: a\n    url: file:///x y\n", "repos.yaml:2: invalid url");
    expect_parse_err("repos:\n  - name: a b\n    url: file:///x\n", "repos.yaml:2: invalid repository name");
    expect_parse_err("repos:\n  - name: a\n    url: file:///x\n    tokenEnv: 1X\n", "repos.yaml:2: invalid tokenEnv");
    expect_parse_err("repos:\n  - name: a\n    name: b\n    url: file:///x\n",
                     "repos.yaml:3: 'name' given twice in one entry");
    /* an entry without a name is an error, not merged into the next one */
    expect_parse_err("repos:\n  - url: file:///x\n  - name: b\n    url: file:///y\n", "repos.yaml:2: invalid repository name");
    expect_parse_err("repos:\n  - url: file:///x\n", "repos.yaml:2: invalid repository name");
}

static void test_http_parsers(void **state)
{
    (void)state;
    assert_int_equal(silt_http_status_line("HTTP/1.1 404 Not Found\r\n", 24), 404);
    assert_int_equal(silt_http_status_line("HTTP/2 200\r\n", 12), 200);
    assert_int_equal(silt_http_status_line("HTTP/1.1 20", 11), -1); /* cut: not read beyond len */
    assert_int_equal(silt_http_status_line("HTTP/1.1 2000", 12), 200);
    assert_int_equal(silt_http_status_line("Content-Length: 5\r\n", 19), -1);
    assert_int_equal(silt_http_status_line("HTTP/", 5), -1);
    silt_buf b = SILT_BUF_INIT;
    assert_int_equal(silt_buf_puts(&b, "{\"message\":\"data/x: the body does not match its hash\"}"), 0);
    assert_string_equal(silt_http_server_message(&b), "data/x: the body does not match its hash");
    silt_buf_clear(&b);
    assert_int_equal(silt_buf_puts(&b, "bad\r\ngateway\n"), 0);
    assert_string_equal(silt_http_server_message(&b), "bad  gateway ");
    silt_buf_clear(&b);
    assert_string_equal(silt_http_server_message(&b), "");
    silt_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_url_file, setup, teardown),
        cmocka_unit_test(test_url_http_s3_bad),
        cmocka_unit_test(test_repos_parse),
        cmocka_unit_test(test_repos_errors),
        cmocka_unit_test(test_http_parsers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
