/* test_fetch.c — event time sources (FromPath patterns and formats, Java
 * style formats, FromMetadata / FromSystemTime), file:// Url ingress with
 * its last-modified source state, FilesGlob listing (ByName / ByEventTime,
 * after the last ingested file) and URL redaction in errors. */
#include "testutil.h"

#include "ingest/event_time.h"
#include "ingest/fetch.h"
#include "util/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>

static const char *fmt_time(silt_time t)
{
    static char buf[40];
    silt_time_format(t, buf);
    return buf;
}

static void test_translate(void **state)
{
    (void)state;
    struct {
        const char *in, *out;
    } cases[] = {
        {"yyyy-MM-dd", "%Y-%m-%d"},
        {"yyyyMMdd'T'HHmmss", "%Y%m%dT%H%M%S"},
        {"dd.MM.yy HH:mm", "%d.%m.%y %H:%M"},
        {"yyyy-DDD", "%Y-%j"},
        {"dd MMM yyyy", "%d %b %Y"},
        {"yyyy-MM-dd'T'HH:mm:ssXXX", "%Y-%m-%dT%H:%M:%S%z"},
        {"%Y_%m", "%Y_%m"},
        {"'it''s' yyyy", "it's %Y"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *out = NULL;
        assert_int_equal(silt_et_translate_format(cases[i].in, &out), 0);
        assert_string_equal(out, cases[i].out);
        free(out);
    }
    char *out = NULL;
    assert_int_equal(silt_et_translate_format("yyyy-MM-dd HH:mm:ss.SSS", &out), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "timestamp format 'yyyy-MM-dd HH:mm:ss.SSS': pattern letter 'S' is not "
                                           "supported");
    assert_int_equal(silt_et_translate_format("yyyy-'MM", &out), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "timestamp format 'yyyy-'MM': unterminated quote");
}

static void test_parse(void **state)
{
    (void)state;
    silt_time t;
    assert_int_equal(silt_et_parse("2020-03-15", NULL, &t), 0);
    assert_string_equal(fmt_time(t), "2020-03-15T00:00:00Z");
    assert_int_equal(silt_et_parse("20200315T101112", "%Y%m%dT%H%M%S", &t), 0);
    assert_string_equal(fmt_time(t), "2020-03-15T10:11:12Z");
    assert_int_equal(silt_et_parse("20200315T101112", "yyyyMMdd'T'HHmmss", &t), 0);
    assert_string_equal(fmt_time(t), "2020-03-15T10:11:12Z");
    assert_int_equal(silt_et_parse("2020-03-15 10:00+0200", "%Y-%m-%d %H:%M%z", &t), 0);
    assert_string_equal(fmt_time(t), "2020-03-15T08:00:00Z");
    assert_int_equal(silt_et_parse("2020-03", "yyyy-MM", &t), 0);
    assert_string_equal(fmt_time(t), "2020-03-01T00:00:00Z");
    assert_int_equal(silt_et_parse("2020-075", "%Y-%j", &t), 0);
    assert_int_equal(silt_et_parse("1584230400", "%s", &t), 0);
    assert_string_equal(fmt_time(t), "2020-03-15T00:00:00Z");
    assert_int_equal(silt_et_parse("2020-03-15x", NULL, &t), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "cannot parse '2020-03-15x' with timestamp format '%Y-%m-%d'");
    assert_int_equal(silt_et_parse("15/03/2020", "yyyy-MM-dd", &t), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "cannot parse '15/03/2020' with timestamp format 'yyyy-MM-dd'");
}

static void test_from_path(void **state)
{
    (void)state;
    silt_time t;
    assert_int_equal(silt_et_from_path("/data/db-table-dump-2020-01-02.csv", "db-table-dump-(\\d+-\\d+-\\d+)\\.csv",
                                       "%Y-%m-%d", &t),
                     0);
    assert_string_equal(fmt_time(t), "2020-01-02T00:00:00Z");
    /* default format, Java format, anchored pattern on the file name */
    assert_int_equal(silt_et_from_path("dir/x_2021-12-31.csv.gz", "^x_(.*)\\.csv", NULL, &t), 0);
    assert_string_equal(fmt_time(t), "2021-12-31T00:00:00Z");
    assert_int_equal(silt_et_from_path("dir/20210101_0930.json", "(\\d{8}_\\d{4})", "yyyyMMdd_HHmm", &t), 0);
    assert_string_equal(fmt_time(t), "2021-01-01T09:30:00Z");
    /* falls back to the whole path (e.g. a URL) */
    assert_int_equal(silt_et_from_path("http://h/2022/05/data.csv", "/(\\d{4}/\\d{2})/", "%Y/%m", &t), 0);
    assert_string_equal(fmt_time(t), "2022-05-01T00:00:00Z");
    /* errors */
    assert_int_equal(silt_et_from_path("dir/a.csv", "(\\d+)", NULL, &t), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "event time pattern '(\\d+)' does not match 'a.csv'");
    assert_int_equal(silt_et_from_path("dir/a-1.csv", "a-\\d", NULL, &t), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "event time pattern 'a-\\d' has no group 1 holding the time");
    assert_int_equal(silt_et_from_path("dir/a-1.csv", "a-(\\d", NULL, &t), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "event time pattern 'a-(\\d': missing closing parenthesis at offset 5");
    assert_int_equal(silt_et_from_path("dir/a-2020-13-01.csv", "a-(.*)\\.csv", NULL, &t), SILT_EINVAL);
    assert_string_equal(silt_error_last(),
                        "event time of 'a-2020-13-01.csv': cannot parse '2020-13-01' with timestamp format '%Y-%m-%d'");
    assert_int_equal(silt_et_from_path("dir/b.csv", "(x)?b", NULL, &t), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "event time pattern '(x)?b': group 1 did not take part in the match of "
                                           "'b.csv'");
}

static void test_resolve(void **state)
{
    (void)state;
    bool has;
    silt_time t, m = {1600000000, 0};
    odf_union none = {0, NULL};
    assert_int_equal(silt_et_resolve(&none, ODF_EventTimeSource_FromMetadata, "x", true, m, &has, &t), 0);
    assert_true(has);
    assert_int_equal(t.sec, 1600000000);
    assert_int_equal(silt_et_resolve(&none, ODF_EventTimeSource_FromMetadata, "x", false, m, &has, &t), 0);
    assert_false(has);
    odf_EventTimeSourceFromSystemTime st = {0};
    odf_union sys = {ODF_EventTimeSource_FromSystemTime, &st};
    assert_int_equal(silt_et_resolve(&sys, ODF_EventTimeSource_FromMetadata, "x", true, m, &has, &t), 0);
    assert_false(has);
    odf_EventTimeSourceFromPath fp = {"(\\d{4})", "%Y"};
    odf_union path = {ODF_EventTimeSource_FromPath, &fp};
    assert_int_equal(silt_et_resolve(&path, ODF_EventTimeSource_FromMetadata, "/d/f1999.csv", true, m, &has, &t), 0);
    assert_true(has);
    assert_string_equal(fmt_time(t), "1999-01-01T00:00:00Z");
}

static void set_mtime(const char *path, int64_t sec, long usec)
{
    struct timeval tv[2] = {{(time_t)sec, usec}, {(time_t)sec, usec}};
    assert_int_equal(utimes(path, tv), 0);
}

static void test_file_url(void **state)
{
    (void)state;
    char *d = tu_mkdtemp();
    char path[1024], url[1100];
    snprintf(path, sizeof path, "%s/data.csv", d);
    assert_int_equal(tu_write_file(path, "a\n1\n", 4), 0);
    set_mtime(path, 1700000000, 123456);
    snprintf(url, sizeof url, "file://%s", path);
    silt_fetch_url_opts o = {.url = url};
    silt_fetch_url_result r;
    assert_int_equal(silt_fetch_url(&r, &o), 0);
    assert_false(r.up_to_date);
    assert_string_equal(r.path, path);
    assert_string_equal(r.state_kind, "odf/last-modified");
    assert_string_equal(r.state_value, "2023-11-14T22:13:20.123Z");
    assert_true(r.has_last_modified);
    assert_int_equal(r.bytes, 4);
    silt_fetch_url_result_free(&r);
    /* same mtime: up to date */
    o.prev_kind = "odf/last-modified";
    o.prev_value = "2023-11-14T22:13:20.123Z";
    assert_int_equal(silt_fetch_url(&r, &o), 0);
    assert_true(r.up_to_date);
    assert_null(r.path);
    silt_fetch_url_result_free(&r);
    /* touched: fetched again */
    set_mtime(path, 1700000060, 0);
    assert_int_equal(silt_fetch_url(&r, &o), 0);
    assert_false(r.up_to_date);
    assert_string_equal(r.state_value, "2023-11-14T22:14:20Z");
    silt_fetch_url_result_free(&r);
    /* missing file */
    snprintf(url, sizeof url, "file://%s/nope.csv", d);
    assert_int_equal(silt_fetch_url(&r, &o), SILT_ENOTFOUND);
    char exp[1200];
    snprintf(exp, sizeof exp, "fetch file://%s/nope.csv: No such file or directory", d);
    assert_string_equal(silt_error_last(), exp);
    /* unsupported scheme; credentials never appear */
    o.url = "gopher://user:secret@host/x";
    assert_int_equal(silt_fetch_url(&r, &o), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "fetch gopher://host/x: unsupported URL scheme (http, https, ftp, file)");
    /* connection refused names the redacted URL */
    o.url = "http://user:secret@127.0.0.1:1/data.csv";
    char body[1100];
    snprintf(body, sizeof body, "%s/body", d);
    o.out_path = body;
    o.prev_kind = o.prev_value = NULL;
    assert_int_equal(silt_fetch_url(&r, &o), SILT_EIO);
    assert_true(strncmp(silt_error_last(), "GET http://127.0.0.1:1/data.csv: ", 33) == 0);
    assert_null(strstr(silt_error_last(), "secret"));
    tu_rmrf(d);
    free(d);
}

static void test_http_date(void **state)
{
    (void)state;
    char buf[40];
    silt_http_date((silt_time){784111777, 0}, buf);
    assert_string_equal(buf, "Sun, 06 Nov 1994 08:49:37 GMT");
}

static void test_glob(void **state)
{
    (void)state;
    char *d = tu_mkdtemp();
    const char *names[] = {"dump-2020-01-03.csv", "dump-2020-01-01.csv", "dump-2019-12-31.csv", "other.txt"};
    char p[1024];
    for (size_t i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s/%s", d, names[i]);
        assert_int_equal(tu_write_file(p, "x\n", 2), 0);
    }
    snprintf(p, sizeof p, "%s/dump-sub.csv", d); /* a directory never matches */
    assert_int_equal(mkdir(p, 0755), 0);
    char pat[1100];
    snprintf(pat, sizeof pat, "%s/dump-*.csv", d);
    silt_glob_listing l;
    odf_union none = {0, NULL};
    assert_int_equal(silt_fetch_glob(&l, pat, ODF_SourceOrdering_ByName, &none, NULL), 0);
    assert_int_equal(l.n, 3);
    assert_int_equal(l.total, 3);
    assert_int_equal(l.nbefore, 0);
    assert_int_equal(l.nskipped, 0);
    assert_string_equal(l.files[0].name, "dump-2019-12-31.csv");
    assert_string_equal(l.files[1].name, "dump-2020-01-01.csv");
    assert_string_equal(l.files[2].name, "dump-2020-01-03.csv");
    assert_false(l.files[0].has_time);
    assert_int_equal(l.files[0].size, 2);
    silt_glob_listing_free(&l);
    /* after the last ingested one; the ones before it are listed apart */
    assert_int_equal(silt_fetch_glob(&l, pat, ODF_SourceOrdering_ByName, &none, "dump-2020-01-01.csv"), 0);
    assert_int_equal(l.n, 1);
    assert_int_equal(l.total, 3);
    assert_string_equal(l.files[0].name, "dump-2020-01-03.csv");
    assert_int_equal(l.nbefore, 1);
    assert_string_equal(l.before[0].name, "dump-2019-12-31.csv");
    silt_glob_listing_free(&l);
    assert_int_equal(silt_fetch_glob(&l, pat, ODF_SourceOrdering_ByName, &none, "dump-2020-01-03.csv"), 0);
    assert_int_equal(l.n, 0);
    assert_int_equal(l.nbefore, 2);
    silt_glob_listing_free(&l);
    /* FromPath event times, ordered by event time (names would order differently) */
    snprintf(p, sizeof p, "%s/dump-01.02.2020.csv", d);
    assert_int_equal(tu_write_file(p, "x\n", 2), 0);
    snprintf(pat, sizeof pat, "%s/dump-*.*.*.csv", d);
    snprintf(p, sizeof p, "%s/dump-31.12.2019.csv", d);
    assert_int_equal(tu_write_file(p, "x\n", 2), 0);
    odf_EventTimeSourceFromPath fp = {"dump-(.*)\\.csv", "dd.MM.yyyy"};
    odf_union et = {ODF_EventTimeSource_FromPath, &fp};
    assert_int_equal(silt_fetch_glob(&l, pat, ODF_SourceOrdering_ByEventTime, &et, NULL), 0);
    assert_int_equal(l.n, 2);
    assert_string_equal(l.files[0].name, "dump-31.12.2019.csv");
    assert_string_equal(fmt_time(l.files[0].time), "2019-12-31T00:00:00Z");
    assert_string_equal(l.files[1].name, "dump-01.02.2020.csv");
    silt_glob_listing_free(&l);
    assert_int_equal(silt_fetch_glob(&l, pat, ODF_SourceOrdering_ByEventTime, &et, "dump-31.12.2019.csv"), 0);
    assert_int_equal(l.n, 1);
    assert_string_equal(l.files[0].name, "dump-01.02.2020.csv");
    silt_glob_listing_free(&l);
    /* a file whose name does not parse is skipped, with the reason; the others are listed */
    snprintf(p, sizeof p, "%s/dump-xx.yy.zzzz.csv", d);
    assert_int_equal(tu_write_file(p, "", 0), 0);
    assert_int_equal(silt_fetch_glob(&l, pat, ODF_SourceOrdering_ByEventTime, &et, NULL), 0);
    assert_int_equal(l.n, 2);
    assert_int_equal(l.total, 3);
    assert_int_equal(l.nskipped, 1);
    assert_string_equal(l.skipped[0].name, "dump-xx.yy.zzzz.csv");
    assert_int_equal(l.skipped[0].size, 0);
    assert_string_equal(l.skipped[0].reason,
                        "event time of 'dump-xx.yy.zzzz.csv': cannot parse 'xx.yy.zzzz' with timestamp format "
                        "'dd.MM.yyyy'");
    silt_glob_listing_free(&l);
    /* an invalid pattern concerns the source: an error */
    odf_EventTimeSourceFromPath bad = {"dump-.*\\.csv", NULL};
    odf_union etbad = {ODF_EventTimeSource_FromPath, &bad};
    assert_int_equal(silt_fetch_glob(&l, pat, ODF_SourceOrdering_ByName, &etbad, NULL), SILT_EINVAL);
    char want[1300];
    snprintf(want, sizeof want, "FilesGlob '%s': event time pattern 'dump-.*\\.csv' has no group 1 holding the time",
             pat);
    assert_string_equal(silt_error_last(), want);
    silt_glob_listing_free(&l);
    /* ByEventTime without an event time source is an error */
    assert_int_equal(silt_fetch_glob(&l, pat, ODF_SourceOrdering_ByEventTime, &none, NULL), SILT_EINVAL);
    assert_true(strstr(silt_error_last(), "order ByEventTime needs an event time (FromPath or FromMetadata)") != NULL);
    silt_glob_listing_free(&l);
    /* nothing matches */
    snprintf(pat, sizeof pat, "%s/none-*.csv", d);
    assert_int_equal(silt_fetch_glob(&l, pat, ODF_SourceOrdering_ByName, &none, NULL), 0);
    assert_int_equal(l.n, 0);
    assert_int_equal(l.total, 0);
    silt_glob_listing_free(&l);
    tu_rmrf(d);
    free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_translate), cmocka_unit_test(test_parse),    cmocka_unit_test(test_from_path),
        cmocka_unit_test(test_resolve),   cmocka_unit_test(test_file_url), cmocka_unit_test(test_http_date),
        cmocka_unit_test(test_glob),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
