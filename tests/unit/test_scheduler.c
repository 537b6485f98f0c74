/* test_scheduler.c — the pure parts of the flow scheduler (ops/scheduler.h):
 * due times (exact slots, strictly once per slot, missed slots collapsed,
 * several crons, retries, crons that never fire), the backoff sequence, and
 * the bounded history file (newest first, per-flow bound, a flow filter,
 * unparsable lines skipped). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "ops/scheduler.h"
#include "util/error.h"
#include "util/fsutil.h"
#include "util/timeutil.h"

static int64_t ts(const char *text)
{
    silt_time t;
    assert_int_equal(silt_time_parse(text, &t), 0);
    return t.sec;
}

static silt_sched_state known(const char *after)
{
    silt_sched_state st = {true, ts(after), 0, 0};
    return st;
}

static void test_unknown_not_due(void **state)
{
    (void)state;
    silt_cron c;
    assert_int_equal(silt_cron_parse(&c, "*/10 * * * *"), 0);
    silt_sched_state st = {0};
    int64_t next = 0;
    assert_int_equal(silt_sched_due(&c, 1, &st, ts("2024-05-01T10:10:00Z"), &next), SILT_SCHED_NOT_DUE);
    assert_int_equal(next, ts("2024-05-01T10:20:00Z"));
}

static void test_exact_slots(void **state)
{
    (void)state;
    silt_cron c;
    assert_int_equal(silt_cron_parse(&c, "*/10 * * * *"), 0);
    silt_sched_state st = known("2024-05-01T10:05:00Z");
    int64_t next = 0;
    assert_int_equal(silt_sched_due(&c, 1, &st, ts("2024-05-01T10:09:59Z"), &next), SILT_SCHED_NOT_DUE);
    assert_int_equal(next, ts("2024-05-01T10:10:00Z"));
    assert_int_equal(silt_sched_due(&c, 1, &st, ts("2024-05-01T10:10:00Z"), NULL), SILT_SCHED_SCHEDULE);
    assert_int_equal(silt_sched_due(&c, 1, &st, ts("2024-05-01T10:10:59Z"), NULL), SILT_SCHED_SCHEDULE);
    assert_int_equal(silt_sched_due(&c, 1, &st, ts("2024-05-01T10:11:00Z"), NULL), SILT_SCHED_MISSED);
    /* once run at 10:10 (after = 10:10), not again at the same time */
    st = known("2024-05-01T10:10:00Z");
    assert_int_equal(silt_sched_due(&c, 1, &st, ts("2024-05-01T10:10:00Z"), &next), SILT_SCHED_NOT_DUE);
    assert_int_equal(next, ts("2024-05-01T10:20:00Z"));
}

static void test_missed(void **state)
{
    (void)state;
    silt_cron c;
    assert_int_equal(silt_cron_parse(&c, "*/10 * * * *"), 0);
    silt_sched_state st = known("2024-05-01T10:20:00Z");
    /* 4 slots passed (10:30 .. 11:00): one run, "missed" */
    assert_int_equal(silt_sched_due(&c, 1, &st, ts("2024-05-01T11:05:30Z"), NULL), SILT_SCHED_MISSED);
    /* after it (after = now), the next slot is 11:10 */
    st = known("2024-05-01T11:05:30Z");
    int64_t next = 0;
    assert_int_equal(silt_sched_due(&c, 1, &st, ts("2024-05-01T11:05:31Z"), &next), SILT_SCHED_NOT_DUE);
    assert_int_equal(next, ts("2024-05-01T11:10:00Z"));
}

static void test_several_crons_and_never(void **state)
{
    (void)state;
    silt_cron c[3];
    assert_int_equal(silt_cron_parse(&c[0], "0 0 30 2 *"), 0); /* never fires */
    assert_int_equal(silt_cron_parse(&c[1], "0 12 * * *"), 0);
    assert_int_equal(silt_cron_parse(&c[2], "30 9 * * *"), 0);
    silt_sched_state st = known("2024-05-01T08:00:00Z");
    int64_t next = 0;
    assert_int_equal(silt_sched_due(c, 3, &st, ts("2024-05-01T09:00:00Z"), &next), SILT_SCHED_NOT_DUE);
    assert_int_equal(next, ts("2024-05-01T09:30:00Z"));
    assert_int_equal(silt_sched_due(c, 3, &st, ts("2024-05-01T09:30:00Z"), NULL), SILT_SCHED_SCHEDULE);
    assert_int_equal(silt_sched_due(c, 1, &st, ts("2030-01-01T00:00:00Z"), &next), SILT_SCHED_NOT_DUE);
    assert_int_equal(next, -1);
    /* seconds */
    silt_cron s;
    assert_int_equal(silt_cron_parse(&s, "*/2 * * * * *"), 0);
    st = known("2024-05-01T08:00:00Z");
    assert_int_equal(silt_sched_due(&s, 1, &st, ts("2024-05-01T08:00:01Z"), &next), SILT_SCHED_NOT_DUE);
    assert_int_equal(next, ts("2024-05-01T08:00:02Z"));
    assert_int_equal(silt_sched_due(&s, 1, &st, ts("2024-05-01T08:00:02Z"), NULL), SILT_SCHED_SCHEDULE);
    assert_int_equal(silt_sched_due(&s, 1, &st, ts("2024-05-01T08:00:04Z"), NULL), SILT_SCHED_MISSED);
}

static void test_retry(void **state)
{
    (void)state;
    silt_cron c;
    assert_int_equal(silt_cron_parse(&c, "0 * * * *"), 0);
    silt_sched_state st = known("2024-05-01T12:00:00Z");
    st.failures = 1;
    st.retry_at = ts("2024-05-01T12:00:30Z");
    int64_t next = 0;
    assert_int_equal(silt_sched_due(&c, 1, &st, ts("2024-05-01T12:00:29Z"), &next), SILT_SCHED_NOT_DUE);
    assert_int_equal(next, ts("2024-05-01T12:00:30Z"));
    assert_int_equal(silt_sched_due(&c, 1, &st, ts("2024-05-01T12:00:30Z"), NULL), SILT_SCHED_RETRY);
    /* a slot that passed wins over the retry */
    st.retry_at = ts("2024-05-01T13:05:00Z");
    assert_int_equal(silt_sched_due(&c, 1, &st, ts("2024-05-01T13:00:00Z"), &next), SILT_SCHED_SCHEDULE);
    assert_string_equal(silt_sched_trigger_name(SILT_SCHED_RETRY), "retry");
    assert_string_equal(silt_sched_trigger_name(SILT_SCHED_MISSED), "missed");
    assert_null(silt_sched_trigger_name(SILT_SCHED_NOT_DUE));
}

static void test_backoff(void **state)
{
    (void)state;
    const int64_t want[] = {30, 30, 60, 120, 240, 480, 600, 600, 600};
    for (unsigned i = 0; i < sizeof want / sizeof want[0]; i++)
        assert_int_equal(silt_sched_backoff(i), want[i]);
    assert_int_equal(silt_sched_backoff(1000000), 600);
}

static void run_rec(silt_flow_run *r, char *flow, int64_t start, uint64_t records)
{
    memset(r, 0, sizeof *r);
    r->flow = flow;
    r->dataset = "ds";
    r->trigger = "schedule";
    r->outcome = records ? "ok" : "failed";
    r->error = records ? NULL : "pull 'ds': no files match 'x'";
    r->start = start;
    r->end = start + 1;
    r->attempt = 1;
    r->records = records;
    r->blocks = records ? 1 : 0;
    r->has_offsets = records > 0;
    r->first_offset = 0;
    r->last_offset = records ? records - 1 : 0;
}

static void test_history_bounded(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    char *path = silt_path_join(dir, "history.jsonl", NULL);
    silt_flow_run r;
    for (int i = 0; i < 5; i++) {
        run_rec(&r, "a", 1000 + i, (uint64_t)i);
        assert_int_equal(silt_sched_history_append(path, &r, 3), 0);
        run_rec(&r, "b", 2000 + i, 1);
        assert_int_equal(silt_sched_history_append(path, &r, 10), 0);
    }
    silt_flow_run *v = NULL;
    size_t n = 0;
    assert_int_equal(silt_sched_history_read(path, "a", &v, &n), 0);
    assert_int_equal(n, 3); /* the last 3 of a */
    assert_int_equal(v[0].start, 1004);
    assert_int_equal(v[1].start, 1003);
    assert_int_equal(v[2].start, 1002);
    assert_int_equal(v[0].records, 4);
    assert_int_equal(v[0].end, 1005);
    assert_true(v[0].has_offsets);
    assert_int_equal(v[0].last_offset, 3);
    assert_null(v[0].error);
    assert_string_equal(v[0].outcome, "ok");
    silt_flow_runs_free(v, n);
    assert_int_equal(silt_sched_history_read(path, NULL, &v, &n), 0);
    assert_int_equal(n, 8); /* 3 of a + 5 of b */
    assert_string_equal(v[0].flow, "b");
    assert_int_equal(v[0].start, 2004);
    silt_flow_runs_free(v, n);
    /* a line that does not parse, or is not a run, is skipped (and dropped
     * at the next rewrite, without counting against the bound) */
    FILE *f = fopen(path, "a");
    assert_non_null(f);
    fputs("not json\n{\"flow\": \"a\"}\n", f);
    fclose(f);
    assert_int_equal(silt_sched_history_read(path, "a", &v, &n), 0);
    assert_int_equal(n, 3);
    silt_flow_runs_free(v, n);
    run_rec(&r, "a", 1010, 0);
    assert_int_equal(silt_sched_history_append(path, &r, 3), 0);
    assert_int_equal(silt_sched_history_read(path, "a", &v, &n), 0);
    assert_int_equal(n, 3);
    assert_int_equal(v[0].start, 1010);
    assert_string_equal(v[0].error, "pull 'ds': no files match 'x'");
    assert_false(v[0].has_offsets);
    assert_int_equal(v[2].start, 1003);
    silt_flow_runs_free(v, n);
    /* a missing file is an empty history */
    char *none = silt_path_join(dir, "none.jsonl", NULL);
    assert_int_equal(silt_sched_history_read(none, NULL, &v, &n), 0);
    assert_int_equal(n, 0);
    silt_flow_runs_free(v, n);
    free(none);
    free(path);
    silt_fs_remove_tree(dir);
    free(dir);
}

static void test_state_roundtrip(void **state)
{
    (void)state;
    json_t *st = json_object();
    silt_sched_state in = {true, 1714557600, 3, 1714557840}, out;
    assert_int_equal(silt_sched_state_put(st, "f", &in), 0);
    silt_sched_state_get(st, "f", &out);
    assert_true(out.known);
    assert_int_equal(out.after, in.after);
    assert_int_equal(out.failures, 3);
    assert_int_equal(out.retry_at, in.retry_at);
    silt_sched_state_get(st, "g", &out);
    assert_false(out.known);
    json_decref(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unknown_not_due), cmocka_unit_test(test_exact_slots),
        cmocka_unit_test(test_missed),          cmocka_unit_test(test_several_crons_and_never),
        cmocka_unit_test(test_retry),           cmocka_unit_test(test_backoff),
        cmocka_unit_test(test_history_bounded), cmocka_unit_test(test_state_roundtrip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
