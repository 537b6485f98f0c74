/* test_tokens.c — API tokens (src/ops/tokens.c): create/check with scope and
 * patterns, every way a secret is refused (wrong, last character changed,
 * empty, revoked, expired), tokens created or revoked after the set was
 * opened, last use recorded at most once a minute (the file is not
 * rewritten by 1000 checks), dataset patterns, the file's mode, a
 * hand-edited file, and checks from 4 threads while a fifth creates tokens. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "testutil.h"

#include "ops/tokens.h"
#include "silt.h"

typedef struct fx {
    char *dir;
    char file[4096];
    silt_workspace *ws;
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    f->dir = tu_mkdtemp();
    assert_int_equal(silt_workspace_init(f->dir), 0);
    assert_int_equal(silt_workspace_open(&f->ws, f->dir), 0);
    snprintf(f->file, sizeof f->file, "%s/tokens.json", silt_workspace_path(f->ws));
    unsetenv("SILT_FAKE_SYSTEM_TIME");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    unsetenv("SILT_FAKE_SYSTEM_TIME");
    silt_workspace_free(f->ws);
    tu_rmrf(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

static char *create(fx *f, const char *name, silt_scope scope, const char *const *pats, size_t np, int64_t days)
{
    char *secret = NULL;
    assert_int_equal(silt_token_create(&secret, NULL, f->ws, name, scope, pats, np, days), 0);
    assert_non_null(secret);
    return secret;
}

static void refused(silt_token_set *s, const char *secret)
{
    silt_token_info t;
    assert_int_equal(silt_token_set_check(s, secret, &t), SILT_ENOTFOUND);
    assert_string_equal(silt_error_last(), "invalid or expired token");
    assert_int_equal(t.ndatasets, 0);
    assert_null(t.datasets);
}

static void accepted(silt_token_set *s, const char *secret, const char *name, silt_scope scope)
{
    silt_token_info t;
    assert_int_equal(silt_token_set_check(s, secret, &t), 0);
    assert_string_equal(t.name, name);
    assert_int_equal(t.scope, scope);
    silt_token_info_clear(&t);
}

static void test_create_check(void **state)
{
    fx *f = *state;
    setenv("SILT_FAKE_SYSTEM_TIME", "2030-05-06T07:08:09.75Z", 1);
    const char *pats[] = {"sales.*", "raw-?"};
    char *secret = NULL;
    silt_token_info info;
    assert_int_equal(silt_token_create(&secret, &info, f->ws, "ci-reader", SILT_SCOPE_WRITE, pats, 2, 0), 0);
    /* "silt_" + 43 base64url characters */
    assert_int_equal(strlen(secret), 48);
    assert_memory_equal(secret, "silt_", 5);
    assert_int_equal(strspn(secret + 5, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"), 43);
    assert_string_equal(info.name, "ci-reader");
    assert_int_equal(info.scope, SILT_SCOPE_WRITE);
    assert_int_equal(info.ndatasets, 2);
    assert_string_equal(info.datasets[0], "sales.*");
    assert_string_equal(info.datasets[1], "raw-?");
    assert_string_equal(info.created, "2030-05-06T07:08:09Z");
    assert_string_equal(info.expires, "");
    assert_string_equal(info.last_used, "");
    silt_token_info_clear(&info);

    /* the file holds the SHA-256 of the secret, never the secret */
    size_t len;
    char *text = tu_read_file(f->file, &len);
    assert_non_null(text);
    assert_null(strstr(text, secret + 5));
    assert_non_null(strstr(text, "\"sha256\": \""));
    free(text);
    struct stat st;
    assert_int_equal(stat(f->file, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);

    silt_token_set *s;
    assert_int_equal(silt_token_set_open(&s, f->ws), 0);
    silt_token_info t;
    assert_int_equal(silt_token_set_check(s, secret, &t), 0);
    assert_string_equal(t.name, "ci-reader");
    assert_int_equal(t.scope, SILT_SCOPE_WRITE);
    assert_int_equal(t.ndatasets, 2);
    assert_string_equal(t.datasets[0], "sales.*");
    assert_string_equal(t.datasets[1], "raw-?");
    assert_string_equal(t.created, "2030-05-06T07:08:09Z");
    assert_string_equal(t.expires, "");
    assert_string_equal(t.last_used, "2030-05-06T07:08:09Z"); /* this use, recorded */
    assert_true(silt_token_allows(&t, "sales.eu"));
    assert_false(silt_token_allows(&t, "other"));
    silt_token_info_clear(&t);
    silt_token_set_free(s);
    free(secret);
}

static void test_wrong_secrets(void **state)
{
    fx *f = *state;
    char *secret = create(f, "a", SILT_SCOPE_READ, NULL, 0, 0);
    char *other = create(f, "b", SILT_SCOPE_ADMIN, NULL, 0, 0);
    silt_token_set *s;
    assert_int_equal(silt_token_set_open(&s, f->ws), 0);
    accepted(s, secret, "a", SILT_SCOPE_READ);
    accepted(s, other, "b", SILT_SCOPE_ADMIN);

    char buf[64];
    snprintf(buf, sizeof buf, "%s", secret);
    buf[47] = buf[47] == 'A' ? 'B' : 'A'; /* last character */
    refused(s, buf);
    snprintf(buf, sizeof buf, "%s", secret);
    buf[0] = 'S'; /* first character */
    refused(s, buf);
    snprintf(buf, sizeof buf, "%sx", secret); /* one more */
    refused(s, buf);
    snprintf(buf, sizeof buf, "%.47s", secret); /* one less */
    refused(s, buf);
    refused(s, "");
    refused(s, "silt_");
    refused(s, NULL);
    refused(s, "silt_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
    /* the hash itself is not a secret that works */
    refused(s, "ac5f1d0bd9b14a0a40bd0ef8d1d3b7c1f5f4ee4c3b5e9f7fa4b6bd8a1c5ac2a1");
    accepted(s, secret, "a", SILT_SCOPE_READ);
    silt_token_set_free(s);
    free(secret);
    free(other);
}

static void test_seen_without_restart(void **state)
{
    fx *f = *state;
    silt_token_set *s;
    assert_int_equal(silt_token_set_open(&s, f->ws), 0); /* no tokens file yet */
    refused(s, "silt_x");
    char *a = create(f, "a", SILT_SCOPE_READ, NULL, 0, 0);
    accepted(s, a, "a", SILT_SCOPE_READ); /* created after open */
    char *b = create(f, "b", SILT_SCOPE_WRITE, NULL, 0, 0);
    accepted(s, b, "b", SILT_SCOPE_WRITE);
    assert_int_equal(silt_token_revoke(f->ws, "a"), 0);
    refused(s, a); /* revoked after open */
    accepted(s, b, "b", SILT_SCOPE_WRITE);
    assert_int_equal(silt_token_revoke(f->ws, "a"), SILT_ENOTFOUND);
    assert_string_equal(silt_error_last(), "no token named 'a'");
    /* a new token of the same name has a new secret: the old one stays refused */
    char *a2 = create(f, "a", SILT_SCOPE_ADMIN, NULL, 0, 0);
    refused(s, a);
    accepted(s, a2, "a", SILT_SCOPE_ADMIN);
    assert_int_equal(silt_token_revoke(f->ws, "b"), 0);
    assert_int_equal(silt_token_revoke(f->ws, "a"), 0);
    refused(s, a2);
    refused(s, b);
    silt_token_info *v;
    size_t n;
    assert_int_equal(silt_token_list(&v, &n, f->ws), 0);
    assert_int_equal(n, 0);
    assert_null(v);
    silt_token_set_free(s);
    free(a);
    free(a2);
    free(b);
}

static void test_expired(void **state)
{
    fx *f = *state;
    setenv("SILT_FAKE_SYSTEM_TIME", "2030-01-01T00:00:00Z", 1);
    char *secret = NULL;
    silt_token_info info;
    assert_int_equal(silt_token_create(&secret, &info, f->ws, "short", SILT_SCOPE_READ, NULL, 0, 2), 0);
    assert_string_equal(info.expires, "2030-01-03T00:00:00Z");
    silt_token_info_clear(&info);
    silt_token_set *s;
    assert_int_equal(silt_token_set_open(&s, f->ws), 0);
    accepted(s, secret, "short", SILT_SCOPE_READ);
    setenv("SILT_FAKE_SYSTEM_TIME", "2030-01-02T23:59:59.999Z", 1);
    accepted(s, secret, "short", SILT_SCOPE_READ);
    setenv("SILT_FAKE_SYSTEM_TIME", "2030-01-03T00:00:00Z", 1);
    refused(s, secret);
    setenv("SILT_FAKE_SYSTEM_TIME", "2031-01-01T00:00:00Z", 1);
    refused(s, secret);
    /* still listed (expired tokens are revoked by hand) */
    silt_token_info *v;
    size_t n;
    assert_int_equal(silt_token_list(&v, &n, f->ws), 0);
    assert_int_equal(n, 1);
    assert_string_equal(v[0].expires, "2030-01-03T00:00:00Z");
    assert_string_equal(v[0].last_used, "2030-01-02T23:59:59Z");
    silt_token_infos_free(v, n);
    silt_token_set_free(s);
    free(secret);
}

static void file_id(const char *path, struct stat *st)
{
    assert_int_equal(stat(path, st), 0);
}

static bool same_file(const struct stat *a, const struct stat *b)
{
    return a->st_ino == b->st_ino && a->st_size == b->st_size && a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
           a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

static void last_used_is(fx *f, const char *name, const char *want)
{
    silt_token_info *v;
    size_t n;
    assert_int_equal(silt_token_list(&v, &n, f->ws), 0);
    bool seen = false;
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].name, name) == 0) {
            assert_string_equal(v[i].last_used, want);
            seen = true;
        }
    assert_true(seen);
    silt_token_infos_free(v, n);
}

static void test_last_used(void **state)
{
    fx *f = *state;
    setenv("SILT_FAKE_SYSTEM_TIME", "2030-01-01T00:00:00Z", 1);
    char *a = create(f, "a", SILT_SCOPE_READ, NULL, 0, 0);
    char *b = create(f, "b", SILT_SCOPE_READ, NULL, 0, 0);
    silt_token_set *s;
    assert_int_equal(silt_token_set_open(&s, f->ws), 0);
    struct stat st0, st1, st2;
    file_id(f->file, &st0);
    accepted(s, a, "a", SILT_SCOPE_READ); /* first use: recorded */
    file_id(f->file, &st1);
    assert_false(same_file(&st0, &st1));
    last_used_is(f, "a", "2030-01-01T00:00:00Z");
    last_used_is(f, "b", "");
    for (int i = 0; i < 1000; i++)
        accepted(s, a, "a", SILT_SCOPE_READ);
    setenv("SILT_FAKE_SYSTEM_TIME", "2030-01-01T00:00:59Z", 1);
    for (int i = 0; i < 1000; i++)
        accepted(s, a, "a", SILT_SCOPE_READ);
    file_id(f->file, &st2);
    assert_true(same_file(&st1, &st2)); /* no write in 2000 checks within a minute */
    last_used_is(f, "a", "2030-01-01T00:00:00Z");
    setenv("SILT_FAKE_SYSTEM_TIME", "2030-01-01T00:01:00Z", 1);
    silt_token_info t;
    assert_int_equal(silt_token_set_check(s, a, &t), 0);
    assert_string_equal(t.last_used, "2030-01-01T00:01:00Z");
    silt_token_info_clear(&t);
    file_id(f->file, &st2);
    assert_false(same_file(&st1, &st2));
    last_used_is(f, "a", "2030-01-01T00:01:00Z");
    /* per token: b's first use is recorded although a's was a moment ago */
    accepted(s, b, "b", SILT_SCOPE_READ);
    last_used_is(f, "b", "2030-01-01T00:01:00Z");
    /* a second set (another server) sees the recorded use and does not write again */
    silt_token_set *s2;
    assert_int_equal(silt_token_set_open(&s2, f->ws), 0);
    file_id(f->file, &st1);
    accepted(s2, a, "a", SILT_SCOPE_READ);
    file_id(f->file, &st2);
    assert_true(same_file(&st1, &st2));
    silt_token_set_free(s2);
    silt_token_set_free(s);
    free(a);
    free(b);
}

static void test_allows(void **state)
{
    (void)state;
    char *pats[] = {"sales.*", "raw-?", "[xy]z", "exact"};
    silt_token_info t = {.datasets = pats, .ndatasets = 4};
    assert_true(silt_token_allows(&t, "sales.eu"));
    assert_true(silt_token_allows(&t, "sales."));
    assert_true(silt_token_allows(&t, "sales.eu/x")); /* no FNM_PATHNAME */
    assert_false(silt_token_allows(&t, "sales"));
    assert_false(silt_token_allows(&t, "salesX"));
    assert_true(silt_token_allows(&t, "raw-1"));
    assert_false(silt_token_allows(&t, "raw-12"));
    assert_true(silt_token_allows(&t, "xz"));
    assert_true(silt_token_allows(&t, "yz"));
    assert_false(silt_token_allows(&t, "az"));
    assert_true(silt_token_allows(&t, "exact"));
    assert_false(silt_token_allows(&t, "exact2"));
    assert_false(silt_token_allows(&t, "Exact"));
    assert_false(silt_token_allows(&t, ""));
    assert_false(silt_token_allows(&t, NULL));
    char *star[] = {"*"};
    silt_token_info all = {.datasets = star, .ndatasets = 1};
    assert_true(silt_token_allows(&all, ".hidden")); /* no FNM_PERIOD */
    silt_token_info none = {0};
    assert_true(silt_token_allows(&none, "anything"));
    assert_true(silt_token_allows(&none, "x.y"));
}

static void test_bad_arguments(void **state)
{
    fx *f = *state;
    char *secret = create(f, "a", SILT_SCOPE_READ, NULL, 0, 0);
    char *s2 = (char *)"unchanged";
    assert_int_equal(silt_token_create(&s2, NULL, f->ws, "a", SILT_SCOPE_WRITE, NULL, 0, 0), SILT_EEXISTS);
    assert_string_equal(silt_error_last(), "token 'a' already exists");
    assert_null(s2);
    const char *bad_names[] = {"", "a b", "a/b", "ä", "x:y",
                               "0123456789012345678901234567890123456789012345678901234567890123x"};
    for (size_t i = 0; i < sizeof bad_names / sizeof *bad_names; i++) {
        assert_int_equal(silt_token_create(&s2, NULL, f->ws, bad_names[i], SILT_SCOPE_READ, NULL, 0, 0), SILT_EINVAL);
        assert_non_null(strstr(silt_error_last(), "invalid token name"));
    }
    assert_int_equal(silt_token_create(&s2, NULL, f->ws, "0123456789012345678901234567890123456789012345678901234567890123",
                                       SILT_SCOPE_READ, NULL, 0, 0),
                     0);
    free(s2);
    assert_int_equal(silt_token_create(&s2, NULL, f->ws, "b", (silt_scope)4, NULL, 0, 0), SILT_EINVAL);
    const char *empty[] = {""};
    assert_int_equal(silt_token_create(&s2, NULL, f->ws, "b", SILT_SCOPE_READ, empty, 1, 0), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "token 'b': dataset pattern '' must be 1..255 printable ASCII characters");
    const char *ctl[] = {"a\nb"};
    assert_int_equal(silt_token_create(&s2, NULL, f->ws, "b", SILT_SCOPE_READ, ctl, 1, 0), SILT_EINVAL);
    assert_int_equal(silt_token_create(&s2, NULL, f->ws, "b", SILT_SCOPE_READ, NULL, 0, 36501), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "token 'b': expires-days must be at most 36500");
    silt_scope sc;
    assert_int_equal(silt_scope_parse(&sc, "write"), 0);
    assert_int_equal(sc, SILT_SCOPE_WRITE);
    assert_int_equal(silt_scope_parse(&sc, "root"), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "unknown scope 'root' (read, write or admin)");
    assert_string_equal(silt_scope_name(SILT_SCOPE_ADMIN), "admin");
    silt_token_info *v;
    size_t n;
    assert_int_equal(silt_token_list(&v, &n, f->ws), 0);
    assert_int_equal(n, 2); /* nothing else was stored */
    assert_string_equal(v[0].name, "0123456789012345678901234567890123456789012345678901234567890123");
    assert_string_equal(v[1].name, "a");
    silt_token_infos_free(v, n);
    free(secret);
}

static void test_mode_refused(void **state)
{
    fx *f = *state;
    char *secret = create(f, "a", SILT_SCOPE_READ, NULL, 0, 0);
    silt_token_set *s;
    assert_int_equal(silt_token_set_open(&s, f->ws), 0);
    accepted(s, secret, "a", SILT_SCOPE_READ);
    assert_int_equal(chmod(f->file, 0640), 0);
    char want[4200];
    snprintf(want, sizeof want,
             "%s: mode 0640 is too open: a tokens file must not be accessible by group or others (chmod 600)",
             f->file);
    silt_token_info t;
    assert_int_equal(silt_token_set_check(s, secret, &t), SILT_EINVAL);
    assert_string_equal(silt_error_last(), want);
    assert_int_equal(silt_token_set_check(s, secret, &t), SILT_EINVAL); /* stays refused */
    silt_token_info *v;
    size_t n;
    assert_int_equal(silt_token_list(&v, &n, f->ws), SILT_EINVAL);
    assert_string_equal(silt_error_last(), want);
    char *s2;
    assert_int_equal(silt_token_create(&s2, NULL, f->ws, "b", SILT_SCOPE_READ, NULL, 0, 0), SILT_EINVAL);
    assert_int_equal(silt_token_revoke(f->ws, "a"), SILT_EINVAL);
    silt_token_set *s3;
    assert_int_equal(silt_token_set_open(&s3, f->ws), SILT_EINVAL);
    assert_int_equal(chmod(f->file, 0604), 0);
    assert_int_equal(silt_token_set_check(s, secret, &t), SILT_EINVAL);
    assert_int_equal(chmod(f->file, 0600), 0);
    accepted(s, secret, "a", SILT_SCOPE_READ);
    silt_token_set_free(s);
    free(secret);
}

static void write_file(fx *f, const char *text)
{
    assert_int_equal(tu_write_file(f->file, text, strlen(text)), 0);
    assert_int_equal(chmod(f->file, 0600), 0);
}

static void list_fails(fx *f, const char *msg)
{
    silt_token_info *v;
    size_t n;
    assert_int_equal(silt_token_list(&v, &n, f->ws), SILT_EINVAL);
    char want[4200];
    snprintf(want, sizeof want, "%s: %s", f->file, msg);
    assert_string_equal(silt_error_last(), want);
}

#define H64 "0000000000000000000000000000000000000000000000000000000000000000"

static void test_hand_edited(void **state)
{
    fx *f = *state;
    /* a hand-written entry: its secret is the one whose SHA-256 it holds */
    write_file(f, "{\"version\":1,\"tokens\":[{\"name\":\"h\",\"sha256\":"
                  "\"2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824\",\"scope\":\"admin\","
                  "\"datasets\":[\"x*\"],\"created\":\"2020-01-01\"}]}");
    silt_token_set *s;
    assert_int_equal(silt_token_set_open(&s, f->ws), 0);
    silt_token_info t;
    assert_int_equal(silt_token_set_check(s, "hello", &t), 0);
    assert_string_equal(t.name, "h");
    assert_string_equal(t.created, "2020-01-01T00:00:00Z");
    assert_int_equal(t.ndatasets, 1);
    silt_token_info_clear(&t);
    silt_token_set_free(s);

    write_file(f, "{\"version\":1,\"tokens\":[{\"name\":\"h\",\"sha256\":\"" H64
                  "\",\"scope\":\"read\",\"dataset\":[\"x\"],\"created\":\"2020-01-01T00:00:00Z\"}]}");
    list_fails(f, "token 1: unknown key 'dataset'");
    write_file(f, "{\"version\":1,\"tokens\":[{\"name\":\"h\",\"sha256\":\"" H64
                  "\",\"scope\":\"read\",\"created\":\"2020-01-01T00:00:00Z\"}]}");
    list_fails(f, "token 1: 'datasets' must be an array of patterns");
    write_file(f, "{\"version\":1,\"tokens\":[{\"name\":\"h\",\"sha256\":\"" H64
                  "\",\"scope\":\"sudo\",\"datasets\":[],\"created\":\"2020-01-01T00:00:00Z\"}]}");
    list_fails(f, "token 'h': 'scope' must be \"read\", \"write\" or \"admin\"");
    write_file(f, "{\"version\":1,\"tokens\":[{\"name\":\"h\",\"sha256\":\"00\",\"scope\":\"read\",\"datasets\":[],"
                  "\"created\":\"2020-01-01T00:00:00Z\"}]}");
    list_fails(f, "token 'h': 'sha256' must be 64 lowercase hex digits");
    write_file(f, "{\"version\":1,\"tokens\":[{\"name\":\"h\",\"sha256\":\"" H64
                  "\",\"scope\":\"read\",\"datasets\":[],\"created\":\"2020-01-01T00:00:00Z\",\"expires\":\"soon\"}]}");
    list_fails(f, "token 'h': 'expires' must be an RFC 3339 time or null");
    write_file(f, "{\"version\":1,\"tokens\":["
                  "{\"name\":\"h\",\"sha256\":\"" H64 "\",\"scope\":\"read\",\"datasets\":[],\"created\":\"2020-01-01\"},"
                  "{\"name\":\"h\",\"sha256\":\"" H64 "\",\"scope\":\"read\",\"datasets\":[],\"created\":\"2020-01-01\"}]}");
    list_fails(f, "token name 'h' appears twice");
    write_file(f, "{\"version\":2,\"tokens\":[]}");
    list_fails(f, "'version' must be 1");
    write_file(f, "{\"version\":1,\"tokens\":[],\"version\":1}");
    silt_token_info *v;
    size_t n;
    char want[4200];
    assert_int_equal(silt_token_list(&v, &n, f->ws), SILT_EINVAL);
    snprintf(want, sizeof want, "%s:1: invalid JSON: duplicate object key near '\"version\"'", f->file);
    assert_string_equal(silt_error_last(), want);
    write_file(f, "{\"version\":1,\"tokens\":[]");
    assert_int_equal(silt_token_list(&v, &n, f->ws), SILT_EINVAL);
    assert_non_null(strstr(silt_error_last(), "invalid JSON"));
}

static void test_format_roundtrip(void **state)
{
    (void)state;
    const char *text = "{\"tokens\":[{\"name\":\"z\",\"sha256\":\"" H64 "\",\"scope\":\"write\",\"datasets\":[\"a\",\"b*\"],"
                       "\"created\":\"2020-01-01T00:00:00.5+01:00\",\"lastUsed\":null,\"expires\":\"2021-01-01\"},"
                       "{\"name\":\"a\",\"sha256\":\"" H64 "\",\"scope\":\"read\",\"datasets\":[],"
                       "\"created\":\"2020-01-01T00:00:00Z\",\"lastUsed\":\"2020-02-01T00:00:00Z\"}],\"version\":1}";
    silt_tokfile tf;
    assert_int_equal(silt_tokfile_parse(&tf, text, strlen(text), "t.json"), 0);
    assert_int_equal(tf.n, 2);
    silt_buf out = SILT_BUF_INIT;
    assert_int_equal(silt_tokfile_format(&out, &tf), 0);
    silt_tokfile_free(&tf);
    const char *want = "{\n"
                       "  \"version\": 1,\n"
                       "  \"tokens\": [\n"
                       "    {\n"
                       "      \"name\": \"a\",\n"
                       "      \"sha256\": \"" H64 "\",\n"
                       "      \"scope\": \"read\",\n"
                       "      \"datasets\": [],\n"
                       "      \"created\": \"2020-01-01T00:00:00Z\",\n"
                       "      \"expires\": null,\n"
                       "      \"lastUsed\": \"2020-02-01T00:00:00Z\"\n"
                       "    },\n"
                       "    {\n"
                       "      \"name\": \"z\",\n"
                       "      \"sha256\": \"" H64 "\",\n"
                       "      \"scope\": \"write\",\n"
                       "      \"datasets\": [\n"
                       "        \"a\",\n"
                       "        \"b*\"\n"
                       "      ],\n"
                       "      \"created\": \"2019-12-31T23:00:00Z\",\n"
                       "      \"expires\": \"2021-01-01T00:00:00Z\",\n"
                       "      \"lastUsed\": null\n"
                       "    }\n"
                       "  ]\n"
                       "}\n";
    assert_int_equal(out.len, strlen(want));
    assert_memory_equal(out.data, want, out.len);
    silt_buf_free(&out);
}

/* ---- threads ------------------------------------------------------------- */

#define NFIXED 3
#define NNEW 24

typedef struct shared {
    silt_token_set *set;
    char *fixed[NFIXED];
    char *made[NNEW];
    pthread_mutex_t mu; /* guards made[] and nmade */
    int nmade;
    atomic_int done;
    int errors;
} shared;

static void *checker(void *arg)
{
    shared *sh = arg;
    static const char *const names[NFIXED] = {"f0", "f1", "f2"};
    int bad = 0;
    for (long round = 0; !sh->done || round < 50; round++) {
        silt_token_info t;
        int k = (int)(round % NFIXED);
        if (silt_token_set_check(sh->set, sh->fixed[k], &t) != 0 || strcmp(t.name, names[k]) != 0 ||
            t.scope != SILT_SCOPE_READ)
            bad++;
        silt_token_info_clear(&t);
        char wrong[64];
        snprintf(wrong, sizeof wrong, "%s", sh->fixed[k]);
        wrong[20] ^= 1;
        if (silt_token_set_check(sh->set, wrong, &t) != SILT_ENOTFOUND)
            bad++;
        pthread_mutex_lock(&sh->mu);
        int n = sh->nmade;
        char copy[64] = "";
        if (n > 0)
            snprintf(copy, sizeof copy, "%s", sh->made[round % n]);
        pthread_mutex_unlock(&sh->mu);
        if (n > 0 && (silt_token_set_check(sh->set, copy, &t) != 0 || strncmp(t.name, "n", 1) != 0 ||
                      t.scope != SILT_SCOPE_WRITE))
            bad++;
        silt_token_info_clear(&t);
    }
    pthread_mutex_lock(&sh->mu);
    sh->errors += bad;
    pthread_mutex_unlock(&sh->mu);
    return NULL;
}

static void test_threads(void **state)
{
    fx *f = *state;
    shared sh = {0};
    pthread_mutex_init(&sh.mu, NULL);
    char name[16];
    for (int i = 0; i < NFIXED; i++) {
        snprintf(name, sizeof name, "f%d", i);
        sh.fixed[i] = create(f, name, SILT_SCOPE_READ, NULL, 0, 0);
    }
    assert_int_equal(silt_token_set_open(&sh.set, f->ws), 0);
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&th[i], NULL, checker, &sh), 0);
    for (int i = 0; i < NNEW; i++) {
        snprintf(name, sizeof name, "n%02d", i);
        char *s = create(f, name, SILT_SCOPE_WRITE, NULL, 0, 0);
        pthread_mutex_lock(&sh.mu);
        sh.made[sh.nmade++] = s;
        pthread_mutex_unlock(&sh.mu);
    }
    sh.done = 1;
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(sh.errors, 0);
    for (int i = 0; i < NNEW; i++) {
        snprintf(name, sizeof name, "n%02d", i);
        accepted(sh.set, sh.made[i], name, SILT_SCOPE_WRITE);
        free(sh.made[i]);
    }
    /* nothing lost to the last-use writes racing the creations */
    silt_token_info *v;
    size_t n;
    assert_int_equal(silt_token_list(&v, &n, f->ws), 0);
    assert_int_equal(n, NFIXED + NNEW);
    for (size_t i = 0; i < NFIXED; i++)
        assert_string_not_equal(v[i].last_used, "");
    silt_token_infos_free(v, n);
    silt_token_set_free(sh.set);
    for (int i = 0; i < NFIXED; i++)
        free(sh.fixed[i]);
    pthread_mutex_destroy(&sh.mu);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_create_check, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wrong_secrets, setup, teardown),
        cmocka_unit_test_setup_teardown(test_seen_without_restart, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expired, setup, teardown),
        cmocka_unit_test_setup_teardown(test_last_used, setup, teardown),
        cmocka_unit_test(test_allows),
        cmocka_unit_test_setup_teardown(test_bad_arguments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mode_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hand_edited, setup, teardown),
        cmocka_unit_test(test_format_roundtrip),
        cmocka_unit_test_setup_teardown(test_threads, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
