/* cmd_table.c — `silt read-table NAME[@BRANCH] [--format arrow|csv]
 * [--columns a,b] [--row-limit N] [--start RID] [--end RID] [--output FILE]`:
 * the table of a dataset branch as an Arrow IPC stream (default) or CSV,
 * pulled from silt_table_stream in 64 KiB pieces and written to stdout or
 * FILE (created only once the stream is open, removed again on failure),
 * exactly the bytes readTable of `silt serve` answers.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

typedef struct table_args {
    const char *name, *format, *columns, *limit, *start, *end, *output;
} table_args;


static int parse_args(int argc, char **argv, table_args *a)
{
    static const char *const names[] = {"--format", "--columns", "--row-limit", "--start", "--end", "--output"};
    for (int i = 0; i < argc; i++) {
        const char **slot[] = {&a->format, &a->columns, &a->limit, &a->start, &a->end, &a->output};
        int r = 0;
        size_t k = 0;
        for (; k < sizeof names / sizeof names[0] && r == 0; k++)
            r = cli_opt_value(argc, argv, &i, names[k], slot[k]);
        if (r < 0)
            return cli_usage("read-table: %s needs a value", names[k - 1]);
        if (r > 0)
            continue;
        if (argv[i][0] == '-' && argv[i][1])
            return cli_usage("read-table: unknown option '%s'", argv[i]);
        if (a->name)
            return cli_usage("read-table needs exactly one NAME[@BRANCH]");
        a->name = argv[i];
    }
    if (!a->name)
        return cli_usage("read-table needs exactly one NAME[@BRANCH]");
    if (a->format && strcmp(a->format, "arrow") && strcmp(a->format, "csv"))
        return cli_usage("read-table: unknown format '%s' (use arrow or csv)", a->format);
    return 0;
}

/* Splits "a,b" into *cols (malloc'd array pointing into *copy). */
static int split_columns(const char *list, char **copy, const char ***cols, size_t *n)
{
    *copy = strdup(list);
    size_t cap = 1;
    for (const char *p = list; *p; p++)
        cap += *p == ',';
    *cols = calloc(cap, sizeof **cols);
    if (!*copy || !*cols)
        return cli_fail_code(SILT_ENOMEM, "out of memory");
    *n = 0;
    for (char *tok = *copy, *next; tok; tok = next) {
        next = strchr(tok, ',');
        if (next)
            *next++ = '\0';
        if (!*tok)
            return cli_usage("read-table: --columns has an empty column name");
        (*cols)[(*n)++] = tok;
    }
    return 0;
}

/* Pulls the whole stream into f. */
static int copy_stream(silt_table_stream *s, FILE *f, const char *what)
{
    static char buf[65536];
    long n;
    while ((n = silt_table_stream_read(s, buf, sizeof buf)) > 0)
        if (fwrite(buf, 1, (size_t)n, f) != (size_t)n)
            return cli_fail_code(SILT_EIO, "%s: write error: %s", what, strerror(errno));
    if (n < 0)
        return cli_fail(NULL);
    if (fflush(f) != 0)
        return cli_fail_code(SILT_EIO, "%s: write error: %s", what, strerror(errno));
    return EXIT_OK;
}

static int run(silt_workspace *ws, const table_args *a, const silt_table_opts *o)
{
    silt_dataset *ds = NULL;
    silt_table_stream *s = NULL;
    if (silt_dataset_open(&ds, ws, a->name) < 0 || silt_table_stream_open(&s, ds, o) < 0) {
        silt_dataset_free(ds);
        return cli_fail(NULL);
    }
    silt_dataset_free(ds);
    FILE *f = a->output ? fopen(a->output, "wb") : stdout;
    int status = f ? EXIT_OK : cli_fail_code(SILT_EIO, "%s: cannot create: %s", a->output, strerror(errno));
    if (f)
        status = copy_stream(s, f, a->output ? a->output : "output");
    if (f && a->output && fclose(f) != 0 && status == EXIT_OK)
        status = cli_fail_code(SILT_EIO, "%s: write error: %s", a->output, strerror(errno));
    if (a->output && f && status != EXIT_OK)
        unlink(a->output);
    silt_table_stream_free(s);
    return status;
}

int cmd_read_table(cli_ctx *c, int argc, char **argv)
{
    table_args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc;
    silt_table_opts o = {.format = a.format && !strcmp(a.format, "csv") ? SILT_TABLE_CSV : SILT_TABLE_ARROW,
                         .row_limit = -1, .start_rid = a.start, .end_rid = a.end};
    if (a.limit) {
        char *end;
        errno = 0;
        long long v = strtoll(a.limit, &end, 10);
        if (!*a.limit || *end || errno || v < 0)
            return cli_usage("read-table: --row-limit needs a non-negative number, got '%s'", a.limit);
        o.row_limit = v;
    }
    char *copy = NULL;
    const char **cols = NULL;
    if (a.columns && (rc = split_columns(a.columns, &copy, &cols, &o.ncolumns)) != 0) {
        free(copy);
        free(cols);
        return rc;
    }
    o.columns = cols;
    silt_workspace *ws;
    if (cli_open_workspace(c, &ws)) {
        free(copy);
        free(cols);
        return EXIT_FAIL;
    }
    rc = run(ws, &a, &o);
    silt_workspace_free(ws);
    free(copy);
    free(cols);
    return rc;
}
