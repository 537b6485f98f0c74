/* test_cron.c — cron parsing and next fire times, checked against
 * tests/fixtures/resources/cron_expected.tsv (produced by Debian's
 * python3-croniter with gen_cron.py next to it), plus parse errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "ingest/cron.h"
#include "util/error.h"
#include "util/timeutil.h"

static int64_t ts(const char *text)
{
    silt_time t;
    assert_int_equal(silt_time_parse(text, &t), 0);
    return t.sec;
}

static void fmt(int64_t sec, char *out)
{
    silt_time t = {sec, 0};
    silt_time_format(t, out);
}

static void test_oracle(void **state)
{
    (void)state;
    size_t len = 0;
    char *text = tu_read_file(tu_fixture("resources/cron_expected.tsv"), &len);
    assert_non_null(text);
    int cases = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *expr = line;
        char *tab1 = strchr(expr, '\t');
        assert_non_null(tab1);
        *tab1 = '\0';
        char *start = tab1 + 1;
        char *tab2 = strchr(start, '\t');
        assert_non_null(tab2);
        *tab2 = '\0';
        char *expected = tab2 + 1;
        silt_cron c;
        if (silt_cron_parse(&c, expr) != 0)
            fail_msg("parse '%s': %s", expr, silt_error_last());
        int64_t t = ts(start);
        char got[512] = "";
        for (int i = 0; i < 5; i++) {
            int64_t next = 0;
            assert_int_equal(silt_cron_next(&c, t, &next), 0);
            char buf[40];
            fmt(next, buf);
            if (i)
                strcat(got, " ");
            strcat(got, buf);
            t = next;
        }
        if (strcmp(got, expected) != 0)
            fail_msg("'%s' from %s:\n  expected %s\n  got      %s", expr, start, expected, got);
        cases++;
    }
    assert_int_equal(cases, 42 * 4);
    free(text);
}

static void test_strictly_after(void **state)
{
    (void)state;
    silt_cron c;
    assert_int_equal(silt_cron_parse(&c, "*/30 * * * *"), 0);
    int64_t next = 0;
    assert_int_equal(silt_cron_next(&c, ts("2024-05-01T10:30:00Z"), &next), 0);
    assert_int_equal(next, ts("2024-05-01T11:00:00Z"));
    assert_int_equal(silt_cron_next(&c, ts("2024-05-01T10:29:59Z"), &next), 0);
    assert_int_equal(next, ts("2024-05-01T10:30:00Z"));
    /* before the epoch too */
    assert_int_equal(silt_cron_next(&c, ts("1969-12-31T23:45:10Z"), &next), 0);
    assert_int_equal(next, 0);
    /* leap day: next 29 Feb after 2024 is 2028 */
    assert_int_equal(silt_cron_parse(&c, "0 0 29 2 *"), 0);
    assert_int_equal(silt_cron_next(&c, ts("2024-03-01T00:00:00Z"), &next), 0);
    assert_int_equal(next, ts("2028-02-29T00:00:00Z"));
    /* bits */
    assert_int_equal(silt_cron_parse(&c, "0 0 * * 5-7"), 0);
    assert_int_equal(c.dow, 0x61);
    assert_false(c.dow_star);
    assert_true(c.dom_star);
    assert_int_equal(silt_cron_parse(&c, "@weekly"), 0);
    assert_int_equal(c.minute, 1);
    assert_int_equal(c.hour, 1);
    assert_int_equal(c.dow, 1);
}

/* 6 fields: a leading seconds field */
static void test_seconds(void **state)
{
    (void)state;
    silt_cron c;
    int64_t next = 0;
    assert_int_equal(silt_cron_parse(&c, "*/5 * * * * *"), 0);
    assert_int_equal(silt_cron_next(&c, ts("2024-05-01T10:30:00Z"), &next), 0);
    assert_int_equal(next, ts("2024-05-01T10:30:05Z"));
    assert_int_equal(silt_cron_next(&c, ts("2024-05-01T10:30:57Z"), &next), 0);
    assert_int_equal(next, ts("2024-05-01T10:31:00Z"));
    /* seconds only in matching minutes */
    assert_int_equal(silt_cron_parse(&c, "10,20 30 * * * *"), 0);
    assert_int_equal(silt_cron_next(&c, ts("2024-05-01T10:30:10Z"), &next), 0);
    assert_int_equal(next, ts("2024-05-01T10:30:20Z"));
    assert_int_equal(silt_cron_next(&c, ts("2024-05-01T10:30:20Z"), &next), 0);
    assert_int_equal(next, ts("2024-05-01T11:30:10Z"));
    assert_int_equal(silt_cron_next(&c, ts("2024-05-01T10:29:59Z"), &next), 0);
    assert_int_equal(next, ts("2024-05-01T10:30:10Z"));
    /* five fields fire at second 0 */
    assert_int_equal(silt_cron_parse(&c, "* * * * *"), 0);
    assert_int_equal(c.second, 1);
    assert_int_equal(silt_cron_next(&c, ts("2024-05-01T10:30:00Z"), &next), 0);
    assert_int_equal(next, ts("2024-05-01T10:31:00Z"));
}

static void test_never(void **state)
{
    (void)state;
    silt_cron c;
    assert_int_equal(silt_cron_parse(&c, "0 0 30 2 *"), 0);
    int64_t next = 0;
    assert_int_equal(silt_cron_next(&c, 0, &next), SILT_ENOTFOUND);
    assert_string_equal(silt_error_last(), "cron expression never fires");
}

static void expect_err(const char *expr, const char *msg)
{
    silt_cron c;
    int rc = silt_cron_parse(&c, expr);
    if (rc != SILT_EINVAL)
        fail_msg("'%s': expected EINVAL, got %d", expr, rc);
    if (strcmp(silt_error_last(), msg) != 0)
        fail_msg("'%s':\n  expected %s\n  got      %s", expr, msg, silt_error_last());
}

static void test_errors(void **state)
{
    (void)state;
    expect_err("61 * * * *", "invalid cron expression '61 * * * *': minute: value 61 out of range 0-59");
    expect_err("* 24 * * *", "invalid cron expression '* 24 * * *': hour: value 24 out of range 0-23");
    expect_err("* * 0 * *",
               "invalid cron expression '* * 0 * *': day-of-month: value 0 out of range 1-31");
    expect_err("* * * 13 *", "invalid cron expression '* * * 13 *': month: value 13 out of range 1-12");
    expect_err("* * * * 8",
               "invalid cron expression '* * * * 8': day-of-week: value 8 out of range 0-7");
    expect_err("* * * * FOO", "invalid cron expression '* * * * FOO': day-of-week: unknown name 'FOO'");
    expect_err("* * * JANUARY *",
               "invalid cron expression '* * * JANUARY *': month: unknown name 'JANUARY'");
    expect_err("MON * * * *",
               "invalid cron expression 'MON * * * *': minute: expected a number, got 'MON'");
    expect_err("*/0 * * * *", "invalid cron expression '*/0 * * * *': minute: step 0 out of range 1-60");
    expect_err("*/ * * * *",
               "invalid cron expression '*/ * * * *': minute: expected a step number after '/'");
    expect_err("5-2 * * * *",
               "invalid cron expression '5-2 * * * *': minute: range 5-2 has its start after its end");
    expect_err("1,,2 * * * *", "invalid cron expression '1,,2 * * * *': minute: empty list element");
    expect_err("1x * * * *", "invalid cron expression '1x * * * *': minute: unexpected 'x'");
    expect_err("* * * *",
               "invalid cron expression '* * * *': expected 5 fields (minute hour day-of-month month "
               "day-of-week) or 6 (second first), got 4");
    expect_err("* * * * * * *",
               "invalid cron expression '* * * * * * *': expected 5 fields (minute hour day-of-month "
               "month day-of-week) or 6 (second first), got more than 6");
    expect_err("", "invalid cron expression '': expected 5 fields (minute hour day-of-month month "
                   "day-of-week) or 6 (second first), got 0");
    expect_err("60 * * * * *",
               "invalid cron expression '60 * * * * *': second: value 60 out of range 0-59");
    expect_err("@often", "invalid cron expression '@often': unknown macro (expected @hourly, @daily, "
                         "@midnight, @weekly, @monthly, @yearly or @annually)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oracle),
        cmocka_unit_test(test_strictly_after),
        cmocka_unit_test(test_seconds), cmocka_unit_test(test_never),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
