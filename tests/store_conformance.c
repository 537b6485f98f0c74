/* store_conformance.c — one list of store cases (store.h rules) run against
 * any backend, plus single operations for the S3 fault tests. Driven by
 * tests/integration/test_s3_store.sh and test_s3_faults.sh.
 *
 *   store_conformance run local DIR       every case on a localfs store in DIR
 *   store_conformance run s3 PREFIX       every case on the S3 store at PREFIX
 *   store_conformance put-file s3 PREFIX FILE
 *   store_conformance get-file s3 PREFIX FILE OUT   (FILE: the object's source)
 *   store_conformance put s3 PREFIX TEXT
 *   store_conformance list s3 PREFIX MAX_KEYS   (ListObjectsV2, MAX_KEYS a page)
 *   store_conformance cas s3 PREFIX REF EXPECTED VALUE   (EXPECTED "": must
 *                                         not exist; exit 3 on a conflict)
 *
 * S3 settings come from the environment: S3_ENDPOINT, S3_REGION, S3_BUCKET,
 * AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, and optionally
 * S3_MULTIPART_THRESHOLD, S3_PART_SIZE, S3_MAX_RETRIES, S3_RETRY_BASE_MS,
 * S3_STALL_TIMEOUT_S, S3_CONNECT_TIMEOUT_MS.
 * "run" prints "ok <case>" per passing case and stops at the first failure
 * ("FAIL <case>: <why>", exit 1); single operations print "ok" or the
 * library's one-line error ("silt: <message>", exit 1). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/s3.h"
#include "store/store.h"
#include "util/error.h"
#include "util/fsutil.h"
#include "util/hash.h"

static const char *g_backend, *g_where;
static silt_s3_config g_cfg;

/* ops->get_to_file, checking on success that the digest and size it reports
 * are those of the file it wrote (and the digest that of the object's name). */
static int get_file(silt_store *s, const char *kind, const uint8_t mh[SILT_MH_LEN], const char *dst)
{
    uint8_t dg[SILT_SHA3_256_LEN], fdg[SILT_SHA3_256_LEN];
    uint64_t n = 0, fn = 0;
    int rc = s->ops->get_to_file(s, kind, mh, dst, dg, &n);
    if (rc == 0 && (silt_sha3_file(dst, fdg, &fn) != 0 || fn != n || memcmp(dg, fdg, sizeof dg) != 0 ||
                    memcmp(dg, mh + SILT_MH_LEN - SILT_SHA3_256_LEN, sizeof dg) != 0)) {
        fprintf(stderr, "get_to_file %s: reported digest/size differ from the file's or the name's\n", dst);
        return -1000;
    }
    return rc;
}

#define LARGE_SIZE (20u << 20)
#define CAS_THREADS 8
#define CAS_ROUNDS 10

static long long env_num(const char *name, long long def)
{
    const char *v = getenv(name);
    return v && *v ? strtoll(v, NULL, 10) : def;
}

static int open_store(silt_store **s, bool create)
{
    if (strcmp(g_backend, "local") == 0)
        return silt_store_open_local(s, g_where, create);
    return silt_store_open_s3(s, &g_cfg, g_where, create);
}

static void mh_of(const void *data, size_t len, uint8_t mh[SILT_MH_LEN])
{
    uint8_t d[SILT_SHA3_256_LEN];
    silt_sha3_256(data, len, d);
    silt_multihash_wrap_sha3(d, mh);
}

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FAIL %s: ", name);                                                    \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, " (last error: %s)\n", silt_error_last());                             \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

static int c_put_get_stat(silt_store *s, const char *name)
{
    const char *text = "block one";
    uint8_t mh[SILT_MH_LEN];
    mh_of(text, strlen(text), mh);
    CHECK(silt_store_put(s, "blocks", mh, text, strlen(text)) == 0, "put");
    uint64_t size = 0;
    CHECK(silt_store_stat(s, "blocks", mh, &size) == 1 && size == strlen(text), "stat size %llu",
          (unsigned long long)size);
    silt_buf b = SILT_BUF_INIT;
    int rc = silt_store_get(s, "blocks", mh, &b);
    bool same = rc == 0 && b.len == strlen(text) && memcmp(b.data, text, b.len) == 0;
    silt_buf_free(&b);
    CHECK(same, "get returned other bytes (rc %d)", rc);
    CHECK(silt_store_check_object(s, "blocks", mh, strlen(text)) == 0, "check_object");
    return 0;
}

static int c_put_existing_noop(silt_store *s, const char *name)
{
    const char *text = "data slice";
    uint8_t mh[SILT_MH_LEN];
    mh_of(text, strlen(text), mh);
    CHECK(silt_store_put(s, "data", mh, text, strlen(text)) == 0, "first put");
    CHECK(silt_store_put(s, "data", mh, text, strlen(text)) == 0, "second put is not a no-op");
    silt_buf b = SILT_BUF_INIT;
    int rc = silt_store_get(s, "data", mh, &b);
    bool same = rc == 0 && b.len == strlen(text) && memcmp(b.data, text, b.len) == 0;
    silt_buf_free(&b);
    CHECK(same, "object changed");
    return 0;
}

static int same_file_bytes(const char *path, const void *data, size_t len)
{
    silt_buf b = SILT_BUF_INIT;
    int ok = silt_fs_read(path, &b) == 0 && b.len == len && memcmp(b.data, data, len) == 0;
    silt_buf_free(&b);
    return ok;
}

static int c_get_missing(silt_store *s, const char *name)
{
    uint8_t mh[SILT_MH_LEN];
    mh_of("never stored", 12, mh);
    silt_buf b = SILT_BUF_INIT;
    int rc = silt_store_get(s, "checkpoints", mh, &b);
    silt_buf_free(&b);
    CHECK(rc == SILT_ENOTFOUND, "get missing: rc %d", rc);
    CHECK(silt_store_stat(s, "checkpoints", mh, NULL) == 0, "stat missing");
    rc = get_file(s, "checkpoints", mh, "missing.out");
    CHECK(rc == SILT_ENOTFOUND, "get_to_file missing: rc %d", rc);
    CHECK(access("missing.out", F_OK) != 0, "get_to_file left a file behind");
    CHECK(silt_fs_write_atomic("kept.out", "kept", 4, false) == 0, "setup");
    rc = get_file(s, "checkpoints", mh, "kept.out");
    CHECK(rc == SILT_ENOTFOUND, "get_to_file missing over a file: rc %d", rc);
    CHECK(same_file_bytes("kept.out", "kept", 4), "a failed get_to_file changed the file");
    CHECK(silt_store_put(s, "nonsense", mh, "x", 1) == SILT_EINVAL, "unknown kind accepted");
    CHECK(strcmp(silt_error_last(), "store: unknown object kind 'nonsense'") == 0, "message");
    return 0;
}

static int expect_msg(int rc, int want, const char *msg)
{
    return rc == want && strcmp(silt_error_last(), msg) == 0;
}

static int ref_is(silt_store *s, const char *ref, const char *want)
{
    silt_buf b = SILT_BUF_INIT;
    int rc = silt_store_ref_read(s, ref, &b);
    int same = rc == 0 && strcmp(b.data ? b.data : "", want) == 0;
    silt_buf_free(&b);
    return same;
}

static int c_ref_cas(silt_store *s, const char *name)
{
    silt_buf b = SILT_BUF_INIT;
    int rc = silt_store_ref_read(s, "head", &b);
    silt_buf_free(&b);
    CHECK(expect_msg(rc, SILT_ENOTFOUND, "refs/head does not exist"), "read missing ref: rc %d", rc);
    CHECK(silt_store_ref_cas(s, "head", NULL, "v1") == 0, "create");
    CHECK(ref_is(s, "head", "v1"), "value after create");
    rc = silt_store_ref_cas(s, "head", NULL, "v9");
    CHECK(expect_msg(rc, SILT_ECONFLICT, "concurrent update of head: ref already exists; retry"),
          "second create: rc %d", rc);
    CHECK(silt_store_ref_cas(s, "head", "v1", "v2") == 0, "CAS win");
    rc = silt_store_ref_cas(s, "head", "v1", "v3");
    CHECK(expect_msg(rc, SILT_ECONFLICT, "concurrent update of head: head moved; retry"), "CAS lose: rc %d", rc);
    CHECK(ref_is(s, "head", "v2"), "value after a lost CAS");
    rc = silt_store_ref_cas(s, "branches/../x", NULL, "v1");
    CHECK(expect_msg(rc, SILT_EINVAL, "store: invalid ref name 'branches/../x'"), "bad ref name: rc %d", rc);
    CHECK(silt_store_ref_cas(s, "head", "v2", "") == SILT_EINVAL, "empty value accepted");
    return 0;
}

static int c_ref_delete(silt_store *s, const char *name)
{
    CHECK(silt_store_ref_cas(s, "branches/dev", NULL, "d1") == 0, "create branch");
    int rc = s->ops->ref_delete(s, "branches/dev", "other");
    CHECK(expect_msg(rc, SILT_ECONFLICT, "concurrent update of branches/dev: head moved; retry"),
          "delete with a stale value: rc %d", rc);
    CHECK(ref_is(s, "branches/dev", "d1"), "ref survived the refused delete");
    CHECK(s->ops->ref_delete(s, "branches/dev", "d1") == 0, "delete");
    silt_buf b = SILT_BUF_INIT;
    rc = silt_store_ref_read(s, "branches/dev", &b);
    silt_buf_free(&b);
    CHECK(expect_msg(rc, SILT_ENOTFOUND, "refs/branches/dev does not exist"), "read deleted: rc %d", rc);
    rc = s->ops->ref_delete(s, "branches/dev", NULL);
    CHECK(expect_msg(rc, SILT_ENOTFOUND, "refs/branches/dev does not exist"), "delete missing: rc %d", rc);
    rc = silt_store_ref_cas(s, "branches/dev", "d1", "d2");
    CHECK(expect_msg(rc, SILT_ECONFLICT, "concurrent update of branches/dev: ref was deleted; retry"),
          "CAS on deleted: rc %d", rc);
    CHECK(silt_store_ref_cas(s, "branches/dev", NULL, "d3") == 0, "re-create");
    CHECK(ref_is(s, "branches/dev", "d3"), "value after re-create");
    CHECK(s->ops->ref_delete(s, "branches/dev", NULL) == 0, "unconditional delete");
    return 0;
}

static int c_get_to_file(silt_store *s, const char *name)
{
    const char *text = "checkpoint bytes";
    uint8_t mh[SILT_MH_LEN];
    mh_of(text, strlen(text), mh);
    CHECK(silt_store_put(s, "checkpoints", mh, text, strlen(text)) == 0, "put");
    CHECK(silt_fs_write_atomic("out.bin", "old content, longer than the object", 36, false) == 0, "setup");
    CHECK(get_file(s, "checkpoints", mh, "out.bin") == 0, "get_to_file");
    CHECK(same_file_bytes("out.bin", text, strlen(text)), "file content");
    return 0;
}

/* Deterministic pseudo-random bytes (xorshift), so sizes and hashes are stable. */
static unsigned char *make_large(size_t n)
{
    unsigned char *p = malloc(n);
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; p && i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        p[i] = (unsigned char)(x >> 24);
    }
    return p;
}

static int c_large_object(silt_store *s, const char *name)
{
    unsigned char *big = make_large(LARGE_SIZE);
    CHECK(big, "out of memory");
    uint8_t mh[SILT_MH_LEN];
    mh_of(big, LARGE_SIZE, mh);
    int rc = silt_fs_write_atomic("large.src", big, LARGE_SIZE, false);
    if (rc == 0)
        rc = silt_store_adopt_file(s, "data", mh, "large.src");
    if (rc == 0 && access("large.src", F_OK) == 0)
        rc = -100;
    if (rc == 0)
        rc = silt_store_put_file(s, "data", mh, "/nonexistent/not-read-as-the-object-exists");
    uint64_t size = 0;
    if (rc == 0)
        rc = silt_store_stat(s, "data", mh, &size) == 1 && size == LARGE_SIZE ? 0 : -101;
    if (rc == 0)
        rc = get_file(s, "data", mh, "large.out");
    int same = rc == 0 && same_file_bytes("large.out", big, LARGE_SIZE);
    free(big);
    unlink("large.out");
    CHECK(rc == 0 && same, "large round trip (rc %d, size %llu)", rc, (unsigned long long)size);
    CHECK(silt_store_check_object(s, "data", mh, LARGE_SIZE) == 0, "check_object");
    return 0;
}

typedef struct cas_arg {
    int id;
    pthread_barrier_t *bar;
    int wins[CAS_ROUNDS];
    int errors;
} cas_arg;

static void *cas_worker(void *p)
{
    cas_arg *a = p;
    silt_store *s = NULL;
    if (open_store(&s, false) < 0)
        a->errors++;
    for (int r = 0; r < CAS_ROUNDS; r++) {
        char expected[32], value[32];
        snprintf(expected, sizeof expected, "round-%d", r);
        snprintf(value, sizeof value, "round-%d-by-%d", r, a->id);
        pthread_barrier_wait(a->bar);
        int rc = s ? silt_store_ref_cas(s, "branches/race", expected, value) : -1;
        if (rc == 0)
            a->wins[r] = 1;
        else if (rc != SILT_ECONFLICT)
            a->errors++;
        pthread_barrier_wait(a->bar); /* the main thread resets the ref */
        pthread_barrier_wait(a->bar);
    }
    silt_store_free(s);
    return NULL;
}

static int c_concurrent_cas(silt_store *s, const char *name)
{
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, CAS_THREADS + 1);
    cas_arg args[CAS_THREADS];
    pthread_t th[CAS_THREADS];
    memset(args, 0, sizeof args);
    CHECK(silt_store_ref_cas(s, "branches/race", NULL, "round-0") == 0, "setup");
    for (int i = 0; i < CAS_THREADS; i++) {
        args[i].id = i;
        args[i].bar = &bar;
        pthread_create(&th[i], NULL, cas_worker, &args[i]);
    }
    int bad_round = -1, winners = 0;
    for (int r = 0; r < CAS_ROUNDS; r++) {
        pthread_barrier_wait(&bar);
        pthread_barrier_wait(&bar);
        winners = 0;
        int who = -1;
        for (int i = 0; i < CAS_THREADS; i++)
            if (args[i].wins[r]) {
                winners++;
                who = i;
            }
        char want[32], next[32];
        snprintf(want, sizeof want, "round-%d-by-%d", r, who);
        snprintf(next, sizeof next, "round-%d", r + 1);
        if (bad_round < 0 && (winners != 1 || !ref_is(s, "branches/race", want)))
            bad_round = r;
        if (silt_store_ref_cas(s, "branches/race", want, next) != 0 && bad_round < 0)
            bad_round = r;
        pthread_barrier_wait(&bar);
    }
    int errors = 0;
    for (int i = 0; i < CAS_THREADS; i++) {
        pthread_join(th[i], NULL);
        errors += args[i].errors;
    }
    pthread_barrier_destroy(&bar);
    CHECK(errors == 0, "%d CAS calls failed with an error other than a conflict", errors);
    CHECK(bad_round < 0, "round %d: %d winners or the ref does not hold the winner's value", bad_round, winners);
    printf("cas rounds %d, writers %d, winners %d\n", CAS_ROUNDS, CAS_THREADS, CAS_ROUNDS);
    return 0;
}

typedef struct tcase {
    const char *name;
    int (*fn)(silt_store *s, const char *name);
} tcase;

static const tcase CASES[] = {
    {"put_get_stat", c_put_get_stat},   {"put_existing_noop", c_put_existing_noop},
    {"get_missing", c_get_missing},     {"ref_cas", c_ref_cas},
    {"ref_delete", c_ref_delete},       {"get_to_file", c_get_to_file},
    {"large_object", c_large_object},   {"concurrent_cas", c_concurrent_cas},
};

static int run_all(void)
{
    silt_store *s = NULL;
    if (open_store(&s, true) < 0) {
        fprintf(stderr, "FAIL open: %s\n", silt_error_last());
        return 1;
    }
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < sizeof CASES / sizeof CASES[0]; i++) {
        rc = CASES[i].fn(s, CASES[i].name);
        if (rc == 0)
            printf("ok %s\n", CASES[i].name);
    }
    silt_store_free(s);
    return rc;
}

static int fail_line(void)
{
    fprintf(stderr, "silt: %s\n", silt_error_last());
    return 1;
}

static int print_key(void *ctx, const char *key, uint64_t size)
{
    (void)ctx;
    printf("%s %llu\n", key, (unsigned long long)size);
    return 0;
}

/* ListObjectsV2 straight from the client: WHERE is any key prefix. */
static int list_op(const char *max_keys)
{
    silt_s3_client *c = NULL;
    int rc = silt_s3_client_open(&c, &g_cfg);
    if (rc == 0)
        rc = silt_s3_list(c, g_where, (unsigned)atoi(max_keys), print_key, NULL);
    silt_s3_client_free(c);
    return rc < 0 ? fail_line() : 0;
}

static int single_op(const char *op, char **argv, int argc)
{
    if (strcmp(op, "list") == 0 && argc == 1 && strcmp(g_backend, "s3") == 0)
        return list_op(argv[0]);
    silt_store *s = NULL;
    if (open_store(&s, true) < 0)
        return fail_line();
    int rc;
    uint8_t mh[SILT_MH_LEN];
    if (strcmp(op, "put") == 0 && argc == 1) {
        mh_of(argv[0], strlen(argv[0]), mh);
        rc = silt_store_put(s, "blocks", mh, argv[0], strlen(argv[0]));
    } else if ((strcmp(op, "put-file") == 0 && argc == 1) || (strcmp(op, "get-file") == 0 && argc == 2)) {
        uint8_t d[SILT_SHA3_256_LEN];
        rc = silt_sha3_file(argv[0], d, NULL);
        silt_multihash_wrap_sha3(d, mh);
        if (rc == 0)
            rc = argc == 1 ? silt_store_put_file(s, "data", mh, argv[0])
                           : get_file(s, "data", mh, argv[1]);
    } else if (strcmp(op, "cas") == 0 && argc == 3) {
        rc = silt_store_ref_cas(s, argv[0], *argv[1] ? argv[1] : NULL, argv[2]);
        if (rc == SILT_ECONFLICT) {
            silt_store_free(s);
            printf("conflict\n");
            return 3;
        }
    } else {
        silt_store_free(s);
        fprintf(stderr, "usage: store_conformance run|put|put-file|get-file|list|cas BACKEND WHERE [ARGS]\n");
        return 2;
    }
    silt_store_free(s);
    if (rc < 0)
        return fail_line();
    printf("ok\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: store_conformance run|put|put-file|get-file|list|cas BACKEND WHERE [ARGS]\n");
        return 2;
    }
    g_backend = argv[2];
    g_where = argv[3];
    g_cfg.endpoint = getenv("S3_ENDPOINT");
    g_cfg.region = getenv("S3_REGION");
    g_cfg.bucket = getenv("S3_BUCKET");
    g_cfg.multipart_threshold = (uint64_t)env_num("S3_MULTIPART_THRESHOLD", 5u << 20);
    g_cfg.part_size = (uint64_t)env_num("S3_PART_SIZE", 5u << 20);
    g_cfg.max_retries = (int)env_num("S3_MAX_RETRIES", 0);
    g_cfg.retry_base_ms = (unsigned)env_num("S3_RETRY_BASE_MS", 0);
    g_cfg.stall_timeout_s = (long)env_num("S3_STALL_TIMEOUT_S", 0);
    g_cfg.connect_timeout_ms = (long)env_num("S3_CONNECT_TIMEOUT_MS", 0);
    if (strcmp(argv[1], "run") == 0)
        return run_all();
    return single_op(argv[1], argv + 4, argc - 4);
}
