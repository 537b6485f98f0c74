/* test_store.c — local file system store: atomic objects, no-op rewrites,
 * object existence/size, the size + hash check of objects read back, refs
 * without newline and compare-and-swap. */
#include "testutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "util/error.h"
#include "util/multiformats.h"

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

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

static void test_objects(void **state)
{
    (void)state;
    silt_store *s = NULL;
    assert_int_equal(silt_store_open_local(&s, g_dir, true), 0);
    const char *data = "hello block";
    uint8_t mh[SILT_MH_LEN];
    assert_int_equal(silt_multihash_sha3(data, strlen(data), mh), 0);
    assert_int_equal(silt_store_stat(s, "blocks", mh, NULL), 0);
    assert_int_equal(silt_store_put(s, "blocks", mh, data, strlen(data)), 0);
    uint64_t size = 0;
    assert_int_equal(silt_store_stat(s, "blocks", mh, &size), 1);
    assert_int_equal(size, strlen(data));
    /* file named by the multihash text, no temp files left */
    char text[SILT_MH_TEXT_LEN + 1], path[4096], bdir[4096];
    silt_multihash_to_text(mh, SILT_MH_LEN, text);
    snprintf(path, sizeof path, "%s/blocks/%s", g_dir, text);
    snprintf(bdir, sizeof bdir, "%s/blocks", g_dir);
    size_t len = 0;
    char *back = tu_read_file(path, &len);
    assert_non_null(back);
    assert_int_equal(len, strlen(data));
    assert_memory_equal(back, data, len);
    free(back);
    assert_int_equal(count_entries(bdir), 1);
    /* rewriting an existing hash is a no-op (content is not replaced) */
    assert_int_equal(silt_store_put(s, "blocks", mh, "other", 5), 0);
    silt_buf b = SILT_BUF_INIT;
    assert_int_equal(silt_store_get(s, "blocks", mh, &b), 0);
    assert_int_equal(b.len, strlen(data));
    assert_memory_equal(b.data, data, b.len);
    silt_buf_free(&b);
    assert_int_equal(count_entries(bdir), 1);
    /* missing object */
    uint8_t other[SILT_MH_LEN];
    assert_int_equal(silt_multihash_sha3("x", 1, other), 0);
    assert_int_equal(silt_store_get(s, "data", other, &b), SILT_ENOTFOUND);
    silt_buf_free(&b);
    assert_int_equal(silt_store_stat(s, "checkpoints", other, NULL), 0);
    /* unknown kind */
    assert_int_equal(silt_store_stat(s, "nope", other, NULL), SILT_EINVAL);
    silt_store_free(s);
}

static void test_refs_cas(void **state)
{
    (void)state;
    silt_store *s = NULL;
    assert_int_equal(silt_store_open_local(&s, g_dir, true), 0);
    silt_buf b = SILT_BUF_INIT;
    assert_int_equal(silt_store_ref_read(s, "head", &b), SILT_ENOTFOUND);
    uint8_t h1[SILT_MH_LEN], h2[SILT_MH_LEN];
    char t1[SILT_MH_TEXT_LEN + 1], t2[SILT_MH_TEXT_LEN + 1];
    silt_multihash_sha3("1", 1, h1);
    silt_multihash_sha3("2", 1, h2);
    silt_multihash_to_text(h1, SILT_MH_LEN, t1);
    silt_multihash_to_text(h2, SILT_MH_LEN, t2);
    assert_int_equal(silt_store_ref_cas(s, "head", NULL, t1), 0);
    /* no trailing newline on disk */
    char path[4096];
    snprintf(path, sizeof path, "%s/refs/head", g_dir);
    size_t len = 0;
    char *raw = tu_read_file(path, &len);
    assert_non_null(raw);
    assert_int_equal(len, strlen(t1));
    assert_string_equal(raw, t1);
    free(raw);
    /* creating again loses */
    assert_int_equal(silt_store_ref_cas(s, "head", NULL, t2), SILT_ECONFLICT);
    /* stale expected value loses with a clear message */
    assert_int_equal(silt_store_ref_cas(s, "head", t2, t2), SILT_ECONFLICT);
    assert_non_null(strstr(silt_error_last(), "concurrent update of head: head moved; retry"));
    assert_int_equal(silt_store_ref_read(s, "head", &b), 0);
    assert_string_equal(b.data, t1);
    silt_buf_clear(&b);
    /* matching expected value wins */
    assert_int_equal(silt_store_ref_cas(s, "head", t1, t2), 0);
    uint8_t got[SILT_MH_LEN];
    assert_int_equal(silt_store_ref_read_hash(s, "head", got), 0);
    assert_memory_equal(got, h2, SILT_MH_LEN);
    /* branches */
    assert_int_equal(silt_store_ref_cas(s, "branches/dev", NULL, t1), 0);
    assert_int_equal(silt_store_ref_read(s, "branches/dev", &b), 0);
    assert_string_equal(b.data, t1);
    silt_buf_free(&b);
    assert_int_equal(s->ops->ref_delete(s, "branches/dev", t2), SILT_ECONFLICT);
    assert_int_equal(s->ops->ref_delete(s, "branches/dev", t1), 0);
    assert_int_equal(silt_store_ref_read(s, "branches/dev", &b), SILT_ENOTFOUND);
    silt_buf_free(&b);
    /* invalid names and values */
    assert_int_equal(silt_store_ref_cas(s, "../evil", NULL, t1), SILT_EINVAL);
    assert_int_equal(silt_store_ref_cas(s, "branches/.x", NULL, t1), SILT_EINVAL);
    assert_int_equal(silt_store_ref_cas(s, "head", t2, "a\nb"), SILT_EINVAL);
    /* a ref holding garbage is reported as corrupt */
    assert_int_equal(tu_write_file(path, "garbage", 7), 0);
    assert_int_equal(silt_store_ref_read_hash(s, "head", got), SILT_ECORRUPT);
    silt_store_free(s);
}

static void test_check_object(void **state)
{
    (void)state;
    silt_store *s = NULL;
    assert_int_equal(silt_store_open_local(&s, g_dir, true), 0);
    const char *data = "merge state bytes";
    uint8_t mh[SILT_MH_LEN];
    assert_int_equal(silt_multihash_sha3(data, strlen(data), mh), 0);
    char text[SILT_MH_TEXT_LEN + 1], path[4096], msg[300];
    silt_multihash_to_text(mh, SILT_MH_LEN, text);
    snprintf(path, sizeof path, "%s/checkpoints/%s", g_dir, text);
    assert_int_equal(silt_store_check_object(s, "checkpoints", mh, strlen(data)), SILT_ENOTFOUND);
    snprintf(msg, sizeof msg, "checkpoints/%s is missing", text);
    assert_string_equal(silt_error_last(), msg);
    assert_int_equal(silt_store_put(s, "checkpoints", mh, data, strlen(data)), 0);
    assert_int_equal(silt_store_check_object(s, "checkpoints", mh, strlen(data)), 0);
    /* the size the block gives differs */
    assert_int_equal(silt_store_check_object(s, "checkpoints", mh, 5), SILT_ECORRUPT);
    snprintf(msg, sizeof msg, "checkpoints/%s has %zu bytes, expected 5", text, strlen(data));
    assert_string_equal(silt_error_last(), msg);
    /* same size, other bytes */
    assert_int_equal(tu_write_file(path, "merge state BYTES", strlen(data)), 0);
    assert_int_equal(silt_store_check_object(s, "checkpoints", mh, strlen(data)), SILT_ECORRUPT);
    snprintf(msg, sizeof msg, "checkpoints/%s does not match its hash", text);
    assert_string_equal(silt_error_last(), msg);
    silt_store_free(s);
}

static void test_open_missing(void **state)
{
    (void)state;
    silt_store *s = NULL;
    char p[4096];
    snprintf(p, sizeof p, "%s/nope", g_dir);
    assert_int_equal(silt_store_open_local(&s, p, false), SILT_ENOTFOUND);
    assert_null(s);
    silt_store_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_objects, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refs_cas, setup, teardown),
        cmocka_unit_test_setup_teardown(test_check_object, setup, teardown),
        cmocka_unit_test_setup_teardown(test_open_missing, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
