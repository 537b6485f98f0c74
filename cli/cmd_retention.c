/* cmd_retention.c — `silt retention set|show|mark|marks|unmark` and
 * `silt gc` (public API only: silt_retention_*, silt_gc*).
 *
 * Output (stable, tested by tests/integration/test_retention.sh):
 *   retention show:  "default: keep 7 days" / "branch dev: keep 0 days" /
 *                    "no retention policy (every view is retained)"
 *   retention marks / mark: one line per mark
 *                    "<rid> <branch> <committed> <files> file(s) <bytes> bytes"
 *                    or "no marked transactions"
 *   gc:              one line per deleted thing (from the library), then
 *                    "<name>: purged T transaction(s), deleted O object(s)
 *                    (B bytes), L leftover(s)" ("would purge" with --dry-run)
 * --json prints one JSON document per command.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* also declared in cli.h (see the report of this change) */
int cmd_retention(cli_ctx *c, int argc, char **argv);
int cmd_gc(cli_ctx *c, int argc, char **argv);

static int open_ds(cli_ctx *c, const char *name, silt_workspace **ws, silt_dataset **ds)
{
    *ws = NULL;
    *ds = NULL;
    if (cli_open_workspace(c, ws))
        return EXIT_FAIL;
    if (silt_dataset_open(ds, *ws, name) < 0) {
        int st = cli_fail(NULL);
        silt_workspace_free(*ws);
        *ws = NULL;
        return st;
    }
    return 0;
}

static void print_json(json_t *j)
{
    if (!j) {
        cli_fail_code(SILT_ENOMEM, "out of memory");
        return;
    }
    cli_json_write(j);
    json_decref(j);
}

static void print_marks(cli_ctx *c, const char *name, const silt_retention_mark *m, size_t n)
{
    if (c->json) {
        json_t *arr = json_array();
        for (size_t i = 0; arr && i < n; i++)
            json_array_append_new(arr, json_pack("{s:s,s:s,s:s,s:s,s:I,s:I}", "rid", m[i].rid, "branch", m[i].branch,
                                                 "committed", m[i].committed, "marked", m[i].marked, "files",
                                                 (json_int_t)m[i].num_files, "bytes", (json_int_t)m[i].bytes));
        print_json(json_pack("{s:s,s:o}", "name", name, "marks", arr ? arr : json_array()));
        return;
    }
    if (n == 0)
        printf("no marked transactions\n");
    else if (isatty(STDOUT_FILENO))
        printf("%-61s %s %s %s %s\n", "TRANSACTION", "BRANCH", "COMMITTED", "FILES", "BYTES");
    char t[CLI_TIME_MAX];
    for (size_t i = 0; i < n; i++)
        printf("%s %s %s %llu file%s %llu bytes\n", m[i].rid, m[i].branch, cli_time(t, m[i].committed),
               (unsigned long long)m[i].num_files, m[i].num_files == 1 ? "" : "s", (unsigned long long)m[i].bytes);
}

static int parse_days(const char *s, int64_t *out)
{
    char *end;
    if (!s || !*s || *s == '-' || *s == '+')
        return -1;
    long long v = strtoll(s, &end, 10);
    if (*end || v < 0)
        return -1;
    *out = v;
    return 0;
}

int cmd_retention(cli_ctx *c, int argc, char **argv)
{
    if (argc < 1)
        return cli_usage("retention needs a subcommand: set | show | mark | marks | unmark");
    const char *sub = argv[0];
    const char *name = NULL, *branch = NULL, *days_s = NULL, *rid = NULL;
    bool all = false, dry = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--keep-days") == 0 && i + 1 < argc)
            days_s = argv[++i];
        else if (strcmp(argv[i], "--branch") == 0 && i + 1 < argc)
            branch = argv[++i];
        else if (strcmp(argv[i], "--all") == 0)
            all = true;
        else if (strcmp(argv[i], "--dry-run") == 0)
            dry = true;
        else if (argv[i][0] == '-')
            return cli_usage("retention %s: unknown option '%s'", sub, argv[i]);
        else if (!name)
            name = argv[i];
        else if (!rid)
            rid = argv[i];
        else
            return cli_usage("retention %s: unexpected argument '%s'", sub, argv[i]);
    }
    if (!name)
        return cli_usage("retention %s needs a NAME", sub);
    bool is_set = strcmp(sub, "set") == 0, is_show = strcmp(sub, "show") == 0, is_mark = strcmp(sub, "mark") == 0,
         is_marks = strcmp(sub, "marks") == 0, is_unmark = strcmp(sub, "unmark") == 0;
    if (!is_set && !is_show && !is_mark && !is_marks && !is_unmark)
        return cli_usage("unknown retention subcommand '%s'", sub);
    int64_t days = 0;
    if (is_set && parse_days(days_s, &days) < 0)
        return cli_usage("retention set needs --keep-days N (a non-negative number of days)");
    if (!is_set && (days_s || branch))
        return cli_usage("retention %s: --keep-days/--branch only go with 'set'", sub);
    if (is_unmark && (all == (rid != NULL)))
        return cli_usage("retention unmark needs a RID or --all");
    if (!is_unmark && (all || rid))
        return cli_usage("retention %s takes one NAME", sub);
    if (dry && !is_mark)
        return cli_usage("retention %s: --dry-run only goes with 'mark'", sub);
    silt_workspace *ws;
    silt_dataset *ds;
    int st = open_ds(c, name, &ws, &ds);
    if (st)
        return st;
    st = EXIT_OK;
    if (is_set) {
        if (silt_retention_set(ds, branch, days) < 0)
            st = cli_fail(NULL);
        else if (c->json)
            print_json(json_pack("{s:s,s:o,s:I}", "name", name, "branch", branch ? json_string(branch) : json_null(),
                                 "keepDays", (json_int_t)days));
        else if (branch)
            printf("retention of %s: branch %s keeps the views of the last %lld day%s\n", name, branch,
                   (long long)days, days == 1 ? "" : "s");
        else
            printf("retention of %s: keeps the views of the last %lld day%s\n", name, (long long)days,
                   days == 1 ? "" : "s");
    } else if (is_show) {
        silt_retention_policy *p = NULL;
        size_t n = 0;
        if (silt_retention_get(&p, &n, ds) < 0) {
            st = cli_fail(NULL);
        } else if (c->json) {
            json_t *arr = json_array();
            for (size_t i = 0; arr && i < n; i++)
                json_array_append_new(arr, json_pack("{s:o,s:I}", "branch",
                                                     p[i].branch[0] ? json_string(p[i].branch) : json_null(),
                                                     "keepDays", (json_int_t)p[i].keep_days));
            print_json(json_pack("{s:s,s:o}", "name", name, "policies", arr ? arr : json_array()));
        } else {
            if (n == 0)
                printf("no retention policy (every view is retained)\n");
            for (size_t i = 0; i < n; i++) {
                if (p[i].branch[0])
                    printf("branch %s: keep %lld day%s\n", p[i].branch, (long long)p[i].keep_days,
                           p[i].keep_days == 1 ? "" : "s");
                else
                    printf("default: keep %lld day%s\n", (long long)p[i].keep_days, p[i].keep_days == 1 ? "" : "s");
            }
        }
        free(p);
    } else if (is_mark || is_marks) {
        silt_retention_mark *m = NULL;
        size_t n = 0;
        int rc = is_mark ? silt_retention_apply(&m, &n, ds, dry) : silt_retention_marks(&m, &n, ds);
        if (rc < 0)
            st = cli_fail(NULL);
        else
            print_marks(c, name, m, n);
        free(m);
    } else {
        int n = silt_retention_unmark(ds, all ? NULL : rid);
        if (n < 0)
            st = cli_fail(NULL);
        else if (c->json)
            print_json(json_pack("{s:s,s:i}", "name", name, "unmarked", n));
        else
            printf("unmarked %d transaction%s\n", n, n == 1 ? "" : "s");
    }
    silt_dataset_free(ds);
    silt_workspace_free(ws);
    return st;
}

static void gc_line(void *ctx, const char *line)
{
    json_t *arr = ctx;
    if (arr)
        json_array_append_new(arr, json_string(line));
    else
        printf("%s\n", line);
}

int cmd_gc(cli_ctx *c, int argc, char **argv)
{
    bool dry = false;
    int nnames = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--dry-run") == 0)
            dry = true;
        else if (argv[i][0] == '-')
            return cli_usage("gc: unknown option '%s'", argv[i]);
        else
            nnames++;
    }
    silt_workspace *ws;
    if (cli_open_workspace(c, &ws))
        return EXIT_FAIL;
    char **names = NULL;
    if (nnames == 0) {
        if (silt_dataset_list(&names, ws) < 0) {
            silt_workspace_free(ws);
            return cli_fail(NULL);
        }
    } else {
        names = calloc((size_t)nnames + 1, sizeof *names);
        int k = 0;
        for (int i = 0; names && i < argc; i++)
            if (argv[i][0] != '-' && !(names[k++] = strdup(argv[i]))) {
                silt_strv_free(names);
                names = NULL;
            }
        if (!names) {
            silt_workspace_free(ws);
            return cli_fail_code(SILT_ENOMEM, "out of memory");
        }
    }
    int st = EXIT_OK;
    json_t *out = c->json ? json_array() : NULL;
    for (size_t i = 0; names[i]; i++) {
        silt_dataset *ds = NULL;
        json_t *lines = out ? json_array() : NULL;
        cli_progress prog; /* objects scanned / deleted (a terminal only) */
        cli_progress_begin(&prog, c, names[i]);
        silt_gc_opts o = {.dry_run = dry, .grace_seconds = -1, .report = gc_line, .report_ctx = lines,
                          .progress = cli_progress_fn, .progress_ctx = &prog};
        silt_gc_result r;
        memset(&r, 0, sizeof r);
        int grc = silt_dataset_open(&ds, ws, names[i]) < 0 ? -1 : silt_gc(&r, ds, &o);
        cli_progress_end(&prog);
        if (grc < 0) {
            st = cli_fail_code(silt_error_code(), "gc %s: %s", names[i], silt_error_last());
            json_decref(lines);
            silt_dataset_free(ds);
            continue;
        }
        silt_dataset_free(ds);
        if (out) {
            json_array_append_new(out, json_pack("{s:s,s:b,s:I,s:I,s:I,s:I,s:o}", "name", names[i], "dryRun", dry,
                                                 "transactionsPurged", (json_int_t)r.transactions_purged,
                                                 "objectsDeleted", (json_int_t)r.objects_deleted, "bytesDeleted",
                                                 (json_int_t)r.bytes_deleted, "leftoversDeleted",
                                                 (json_int_t)r.leftovers_deleted, "actions", lines));
        } else {
            printf("%s: %s %llu transaction%s, %s %llu object%s (%llu bytes), %llu leftover%s\n", names[i],
                   dry ? "would purge" : "purged", (unsigned long long)r.transactions_purged,
                   r.transactions_purged == 1 ? "" : "s", dry ? "would delete" : "deleted",
                   (unsigned long long)r.objects_deleted, r.objects_deleted == 1 ? "" : "s",
                   (unsigned long long)r.bytes_deleted, (unsigned long long)r.leftovers_deleted,
                   r.leftovers_deleted == 1 ? "" : "s");
        }
    }
    if (nnames == 0) {
        silt_gc_result r;
        memset(&r, 0, sizeof r);
        json_t *lines = out ? json_array() : NULL;
        silt_gc_opts o = {.dry_run = dry, .grace_seconds = -1, .report = gc_line, .report_ctx = lines};
        if (silt_gc_workspace(&r, ws, &o) < 0)
            st = cli_fail(NULL);
        if (out)
            json_array_append_new(out, json_pack("{s:n,s:b,s:I,s:o}", "name", "dryRun", dry, "leftoversDeleted",
                                                 (json_int_t)r.leftovers_deleted, "actions", lines));
    }
    if (out) {
        cli_json_write(out);
        json_decref(out);
    }
    silt_strv_free(names);
    silt_workspace_free(ws);
    return st;
}
