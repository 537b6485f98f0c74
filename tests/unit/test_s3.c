/* test_s3.c — the network-free parts of the S3 client (s3_client.h): the
 * s3:// URL parser and name rules, key building, the retry / backoff
 * policy, and the XML parsers of error bodies, ListObjectsV2 pages and
 * InitiateMultipartUpload answers; plus client configuration checks. */
#include "testutil.h"

#include <curl/curl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/s3.h"
#include "store/s3_client.h"
#include "util/error.h"

static void url_ok(const char *url, const char *bucket, const char *prefix)
{
    char *b = NULL, *p = NULL;
    assert_int_equal(silt_s3_url_parse(url, &b, &p), 0);
    assert_string_equal(b, bucket);
    assert_string_equal(p, prefix);
    free(b);
    free(p);
}

static void url_bad(const char *url, const char *msg)
{
    char *b = (char *)1, *p = (char *)1;
    assert_int_equal(silt_s3_url_parse(url, &b, &p), SILT_EINVAL);
    assert_null(b);
    assert_null(p);
    assert_string_equal(silt_error_last(), msg);
}

#define BUCKET_RULE                                                                                \
    "bucket names have 3-63 characters of a-z, 0-9, '.' and '-', starting and ending with a "      \
    "letter or digit"
#define PREFIX_RULE                                                                                \
    "the prefix has segments of A-Z, a-z, 0-9, '.', '_' and '-' separated by single '/' (no '.' "  \
    "or '..' segments)"

static void test_url(void **state)
{
    (void)state;
    url_ok("s3://silt-data/ws/sales", "silt-data", "ws/sales");
    url_ok("s3://silt-data/ws/sales/", "silt-data", "ws/sales");
    url_ok("s3://abc", "abc", "");
    url_ok("s3://abc/", "abc", "");
    url_ok("s3://a.b-c/A_b.c-9", "a.b-c", "A_b.c-9");
    url_bad("http://abc/x", "invalid S3 URL 'http://abc/x': expected s3://bucket/prefix");
    url_bad("s3://ab/x", "invalid S3 URL 's3://ab/x': " BUCKET_RULE);
    url_bad("s3://Upper/x", "invalid S3 URL 's3://Upper/x': " BUCKET_RULE);
    url_bad("s3://-abc/x", "invalid S3 URL 's3://-abc/x': " BUCKET_RULE);
    url_bad("s3://abc-/x", "invalid S3 URL 's3://abc-/x': " BUCKET_RULE);
    url_bad("s3://a..b/x", "invalid S3 URL 's3://a..b/x': " BUCKET_RULE);
    url_bad("s3:///x", "invalid S3 URL 's3:///x': " BUCKET_RULE);
    url_bad("s3://abc/a//b", "invalid S3 URL 's3://abc/a//b': " PREFIX_RULE);
    url_bad("s3://abc/a/../b", "invalid S3 URL 's3://abc/a/../b': " PREFIX_RULE);
    url_bad("s3://abc/./b", "invalid S3 URL 's3://abc/./b': " PREFIX_RULE);
    url_bad("s3://abc//", "invalid S3 URL 's3://abc//': " PREFIX_RULE);
    url_bad("s3://abc/a b", "invalid S3 URL 's3://abc/a b': " PREFIX_RULE);
    url_bad("s3://abc/a?x=1", "invalid S3 URL 's3://abc/a?x=1': " PREFIX_RULE);
    url_bad("s3://abc/caf\xc3\xa9", "invalid S3 URL 's3://abc/caf\xc3\xa9': " PREFIX_RULE);
    char *b, *p;
    assert_int_equal(silt_s3_url_parse(NULL, &b, &p), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "invalid S3 URL: empty");
    char long_bucket[70];
    memset(long_bucket, 'a', 64);
    long_bucket[64] = '\0';
    assert_false(silt_s3_valid_bucket(long_bucket));
    long_bucket[63] = '\0';
    assert_true(silt_s3_valid_bucket(long_bucket));
}

static void test_keys(void **state)
{
    (void)state;
    char *k = silt_s3_key_join("ws/ds", "refs/head");
    assert_string_equal(k, "ws/ds/refs/head");
    free(k);
    k = silt_s3_key_join("", "blocks/f1620ab");
    assert_string_equal(k, "blocks/f1620ab");
    free(k);
    assert_true(silt_s3_valid_prefix(""));
    assert_true(silt_s3_valid_prefix("a/b.c/_d"));
    assert_false(silt_s3_valid_prefix("/a"));
    assert_false(silt_s3_valid_prefix("a/"));
    assert_false(silt_s3_valid_prefix(".."));
    assert_false(silt_s3_valid_prefix(NULL));
    char big[600];
    memset(big, 'a', 513);
    big[513] = '\0';
    assert_false(silt_s3_valid_prefix(big));
}

static void test_retry_policy(void **state)
{
    (void)state;
    assert_false(silt_s3_retryable(CURLE_OK, 200, ""));
    assert_false(silt_s3_retryable(CURLE_OK, 403, "SignatureDoesNotMatch"));
    assert_false(silt_s3_retryable(CURLE_OK, 404, "NoSuchKey"));
    assert_false(silt_s3_retryable(CURLE_OK, 412, "PreconditionFailed"));
    assert_true(silt_s3_retryable(CURLE_OK, 500, "InternalError"));
    assert_true(silt_s3_retryable(CURLE_OK, 503, "SlowDown"));
    assert_true(silt_s3_retryable(CURLE_OK, 400, "RequestTimeout"));
    assert_true(silt_s3_retryable(CURLE_OK, 429, NULL));
    assert_true(silt_s3_retryable(CURLE_OK, 200, "SlowDown"));
    assert_true(silt_s3_retryable(CURLE_COULDNT_CONNECT, 0, NULL));
    assert_true(silt_s3_retryable(CURLE_OPERATION_TIMEDOUT, 0, NULL));
    assert_true(silt_s3_retryable(CURLE_RECV_ERROR, 0, NULL));
    assert_true(silt_s3_retryable(CURLE_PARTIAL_FILE, 200, NULL));
    assert_false(silt_s3_retryable(CURLE_URL_MALFORMAT, 0, NULL));
    assert_false(silt_s3_retryable(CURLE_WRITE_ERROR, 200, NULL));
    assert_false(silt_s3_retryable(CURLE_OUT_OF_MEMORY, 0, NULL));

    /* base * 2^(n-1), capped, then scaled into [0.5, 1] by the jitter */
    assert_int_equal(silt_s3_backoff_ms(1, 200, 5000, 1.0), 200);
    assert_int_equal(silt_s3_backoff_ms(2, 200, 5000, 1.0), 400);
    assert_int_equal(silt_s3_backoff_ms(3, 200, 5000, 1.0), 800);
    assert_int_equal(silt_s3_backoff_ms(5, 200, 5000, 1.0), 3200);
    assert_int_equal(silt_s3_backoff_ms(6, 200, 5000, 1.0), 5000);
    assert_int_equal(silt_s3_backoff_ms(60, 200, 5000, 1.0), 5000);
    assert_int_equal(silt_s3_backoff_ms(1, 200, 5000, 0.0), 100);
    assert_int_equal(silt_s3_backoff_ms(3, 200, 5000, 0.5), 600);
    assert_int_equal(silt_s3_backoff_ms(0, 200, 5000, 1.0), 0);
    assert_int_equal(silt_s3_backoff_ms(2, 200, 5000, -3.0), 200);
    assert_int_equal(silt_s3_backoff_ms(2, 200, 5000, 7.0), 400);
    assert_int_equal(silt_s3_backoff_ms(40, 4000000000u, 4000000000u, 1.0), 4000000000u);
}

static void test_error_xml(void **state)
{
    (void)state;
    char code[64], msg[256];
    const char *rgw = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>SignatureDoesNotMatch</Code>"
                      "<Message></Message><RequestId>tx0-1</RequestId><HostId>1014-default</HostId></Error>";
    assert_int_equal(silt_s3_parse_error(rgw, strlen(rgw), code, sizeof code, msg, sizeof msg), 0);
    assert_string_equal(code, "SignatureDoesNotMatch");
    assert_string_equal(msg, "");
    const char *aws = "<?xml version=\"1.0\"?>\n<!-- c -->\n<Error>\n  <Code>NoSuchKey</Code>\n"
                      "  <Message>The key &lt;x&gt; &amp; &#39;y&#x27; &quot;z&quot; &#233;</Message>\n"
                      "  <Key>a/b</Key>\n</Error>\n";
    assert_int_equal(silt_s3_parse_error(aws, strlen(aws), code, sizeof code, msg, sizeof msg), 0);
    assert_string_equal(code, "NoSuchKey");
    assert_string_equal(msg, "The key <x> & 'y' \"z\" \xc3\xa9");
    /* truncated to the capacity */
    char small[5];
    assert_int_equal(silt_s3_parse_error(aws, strlen(aws), small, sizeof small, msg, sizeof msg), 0);
    assert_string_equal(small, "NoSu");
    static const char *const BAD[] = {
        "",
        "not xml",
        "<Error><Code>X</Code>",
        "<Error><Code>X</Error></Code>",
        "<Error><Code>X</Code></Error><Error/>",
        "<Error><Code>X&bogus;</Code></Error>",
        "<Error><Code>X&#0;</Code></Error>",
        "<Error><Code>X&#xD800;</Code></Error>",
        "<Error><Code>X&#;</Code></Error>",
        "<!DOCTYPE x><Error><Code>X</Code></Error>",
        "<Error><![CDATA[x]]><Code>X</Code></Error>",
        "<Error><Code>X</Code></Error>trailing",
        "<Error><Code>X</Code><?pi x?></Error>",
        "<Error><Code a=\"1>X</Code></Error>",
        "<Other><Code>X</Code></Other>",
        "<Error><Message>only</Message></Error>",
        "<Error><Code>X\0Y</Code></Error>",
    };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        size_t len = i == sizeof BAD / sizeof BAD[0] - 1 ? 31 : strlen(BAD[i]);
        assert_int_equal(silt_s3_parse_error(BAD[i], len, code, sizeof code, msg, sizeof msg), SILT_EINVAL);
        assert_string_equal(code, "");
    }
    /* nesting limit */
    char deep[512] = "";
    for (int i = 0; i < 17; i++)
        strcat(deep, "<a>");
    assert_int_equal(silt_s3_parse_error(deep, strlen(deep), code, sizeof code, msg, sizeof msg), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "s3: malformed XML response: nesting too deep");
}

typedef struct seen {
    char keys[8][64];
    uint64_t sizes[8];
    int n;
    int stop_at;
} seen;

static int on_key(void *ctx, const char *key, uint64_t size)
{
    seen *s = ctx;
    if (s->n < 8) {
        snprintf(s->keys[s->n], sizeof s->keys[0], "%s", key);
        s->sizes[s->n] = size;
    }
    s->n++;
    return s->n == s->stop_at ? 42 : 0;
}

static void test_list_xml(void **state)
{
    (void)state;
    const char *page = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
                       "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
                       "<Name>b</Name><Prefix>ds/</Prefix><KeyCount>2</KeyCount><MaxKeys>2</MaxKeys>"
                       "<IsTruncated>true</IsTruncated>"
                       "<Contents><Key>ds/blocks/f1</Key><LastModified>2026-01-01T00:00:00.000Z</LastModified>"
                       "<ETag>&quot;abc&quot;</ETag><Size>17</Size><Owner><ID>x</ID></Owner></Contents>"
                       "<Contents><Key>ds/a&amp;b</Key><Size>18446744073709551615</Size></Contents>"
                       "<NextContinuationToken>1/abc+=</NextContinuationToken></ListBucketResult>";
    seen s = {.stop_at = -1};
    bool trunc = false;
    silt_buf next = SILT_BUF_INIT;
    assert_int_equal(silt_s3_parse_list(page, strlen(page), on_key, &s, &trunc, &next), 0);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.keys[0], "ds/blocks/f1");
    assert_true(s.sizes[0] == 17);
    assert_string_equal(s.keys[1], "ds/a&b");
    assert_true(s.sizes[1] == UINT64_MAX);
    assert_true(trunc);
    assert_string_equal(next.data, "1/abc+=");
    silt_buf_free(&next);

    const char *last = "<ListBucketResult><IsTruncated>false</IsTruncated><KeyCount>0</KeyCount></ListBucketResult>";
    s.n = 0;
    assert_int_equal(silt_s3_parse_list(last, strlen(last), on_key, &s, &trunc, &next), 0);
    assert_int_equal(s.n, 0);
    assert_false(trunc);
    silt_buf_free(&next);

    /* the callback's non-zero return stops the walk and is returned */
    s.n = 0;
    s.stop_at = 1;
    assert_int_equal(silt_s3_parse_list(page, strlen(page), on_key, &s, &trunc, &next), 42);
    assert_int_equal(s.n, 1);
    silt_buf_free(&next);

    static const char *const BAD[] = {
        "<Error><Code>AccessDenied</Code></Error>",
        "<ListBucketResult><Contents><Size>1</Size></Contents></ListBucketResult>",
        "<ListBucketResult><Contents><Key>k</Key></Contents></ListBucketResult>",
        "<ListBucketResult><Contents><Key>k</Key><Size>-1</Size></Contents></ListBucketResult>",
        "<ListBucketResult><Contents><Key>k</Key><Size>18446744073709551616</Size></Contents></ListBucketResult>",
        "<ListBucketResult><Contents><Key>k</Key><Size></Size></Contents></ListBucketResult>",
        "<ListBucketResult><IsTruncated>yes</IsTruncated></ListBucketResult>",
        "<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>",
        "<ListBucketResult><Contents><Key>k</Key><Size>1</Size></Contents>",
    };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        s.n = 0;
        s.stop_at = -1;
        assert_int_equal(silt_s3_parse_list(BAD[i], strlen(BAD[i]), on_key, &s, &trunc, &next), SILT_EINVAL);
        silt_buf_free(&next);
    }
    assert_string_equal(silt_error_last(), "s3: malformed XML response: unclosed element");
}

static void test_find_xml(void **state)
{
    (void)state;
    const char *init = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><InitiateMultipartUploadResult "
                       "xmlns='http://s3.amazonaws.com/doc/2006-03-01/'><Bucket>b</Bucket><Key>k</Key>"
                       "<UploadId>2~AbC-dEf_1</UploadId></InitiateMultipartUploadResult>";
    silt_buf out = SILT_BUF_INIT;
    assert_int_equal(silt_s3_xml_find(init, strlen(init), "UploadId", &out), 0);
    assert_string_equal(out.data, "2~AbC-dEf_1");
    silt_buf_clear(&out);
    assert_int_equal(silt_s3_xml_find(init, strlen(init), "Nope", &out), SILT_ENOTFOUND);
    assert_int_equal(silt_s3_xml_find("<a><b/></a>", 11, "b", &out), 0);
    assert_int_equal(out.len, 0);
    assert_int_equal(silt_s3_xml_find("<a><b>", 6, "b", &out), SILT_EINVAL);
    silt_buf_free(&out);
}

static void test_client_config(void **state)
{
    (void)state;
    silt_s3_client *c = (silt_s3_client *)1;
    silt_s3_config cfg = {.endpoint = "ftp://h", .bucket = "abc", .access_key = "k", .secret_key = "s"};
    assert_int_equal(silt_s3_client_open(&c, &cfg), SILT_EINVAL);
    assert_null(c);
    assert_string_equal(silt_error_last(), "s3: endpoint must be an http:// or https:// URL");
    cfg.endpoint = "http://h:1/?x";
    assert_int_equal(silt_s3_client_open(&c, &cfg), SILT_EINVAL);
    cfg.endpoint = "http://127.0.0.1:1/";
    cfg.bucket = "A";
    assert_int_equal(silt_s3_client_open(&c, &cfg), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "s3: invalid bucket name 'A'");
    cfg.bucket = "abc";
    cfg.access_key = "a:b";
    assert_int_equal(silt_s3_client_open(&c, &cfg), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "s3: the access key id must not contain ':'");
    cfg.access_key = NULL;
    cfg.secret_key = NULL;
    unsetenv("AWS_ACCESS_KEY_ID");
    unsetenv("AWS_SECRET_ACCESS_KEY");
    assert_int_equal(silt_s3_client_open(&c, &cfg), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "s3: no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY");
    setenv("AWS_ACCESS_KEY_ID", "envkey", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "envsecret", 1);
    assert_int_equal(silt_s3_client_open(&c, &cfg), 0);
    assert_string_equal(silt_s3_client_bucket(c), "abc");
    silt_s3_client_free(c);
    /* nothing listens on port 1: one clean line, the secret nowhere */
    cfg.max_retries = -1;
    assert_int_equal(silt_s3_client_open(&c, &cfg), 0);
    silt_buf b = SILT_BUF_INIT;
    assert_int_equal(silt_s3_get(c, "ds/refs/head", &b, NULL), SILT_EIO);
    const char *m = silt_error_last();
    assert_true(strncmp(m, "s3: GET abc/ds/refs/head: ", 26) == 0);
    assert_non_null(strstr(m, "(after 1 attempt)"));
    assert_null(strstr(m, "envsecret"));
    assert_null(strchr(m, '\n'));
    silt_buf_free(&b);
    silt_s3_client_free(c);
    silt_store *s = (silt_store *)1;
    assert_int_equal(silt_store_open_s3(&s, &cfg, "a//b", false), SILT_EINVAL);
    assert_null(s);
    assert_string_equal(silt_error_last(), "s3: invalid key prefix 'a//b'");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_url),         cmocka_unit_test(test_keys),
        cmocka_unit_test(test_retry_policy), cmocka_unit_test(test_error_xml),
        cmocka_unit_test(test_list_xml),    cmocka_unit_test(test_find_xml),
        cmocka_unit_test(test_client_config),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
