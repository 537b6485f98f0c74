/* cmd_query.c — query commands: sql, tail, schema.
 *
 *   silt sql [QUERY|-] [--format table|csv|json|ndjson|parquet|arrow] [--output FILE]
 *                      [--as-of NAME=BLOCK|BLOCK]... [--unsafe-file-access]
 *   silt tail NAME [-n N] [--format …] [--output FILE]
 *   silt schema NAME [--json|--yaml]
 *
 * The global --json selects JSON output (sql/tail without --format: the
 * rows as one compact array on one line, JSON_LINE). On a terminal a
 * progress line shows the rows and bytes written, for parquet the file's
 * size (query_progress_begin); Ctrl-C stops the output and says how many
 * rows were written (exit 130). A QUERY argument is one read-only
 * statement over the datasets it names and reads no other file;
 * --unsafe-file-access lifts
 * that (silt_sql_opts). "-", or no QUERY when stdin is not a terminal, reads
 * a script from stdin (silt_sql_script: every statement runs, the first
 * error stops it); no QUERY on a terminal opens the shell (shell.c). In the
 * table format on a terminal, values are cut to the terminal width. Exit
 * codes: 0 ok, 1 failed (unknown dataset, SQL error: one line on stderr),
 * 2 usage (unknown option or format, parquet without --output, bad -n).
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "shell.h"

int cmd_sql(cli_ctx *c, int argc, char **argv);
int cmd_tail(cli_ctx *c, int argc, char **argv);
int cmd_schema(cli_ctx *c, int argc, char **argv);

static const char *const FORMATS[] = {"table", "csv", "json", "ndjson", "parquet", "arrow", NULL};

/* Output options shared by sql and tail. */
typedef struct out_opts {
    const char *format;
    const char *output;
    const char **as_of; /* sql only */
    size_t n_as_of;
    bool unsafe_file_access; /* sql only */
} out_opts;

int cli_opt_value(int argc, char **argv, int *i, const char *name, const char **val)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0)
        return 0;
    if (argv[*i][n] == '=') {
        *val = argv[*i] + n + 1;
        return 1;
    }
    if (argv[*i][n] != '\0')
        return 0;
    if (*i + 1 >= argc)
        return -1;
    *val = argv[++*i];
    return 1;
}

/* Parses --format/--output (and --as-of, --unsafe-file-access when
 * as_of_ok, i.e. for sql). Positionals are
 * collected into pos (at most maxpos). Returns 0 or an exit code. */
static int parse_out_opts(const char *cmd, int argc, char **argv, out_opts *o, bool as_of_ok,
                          const char **pos, int maxpos, int *npos, const char **n_opt)
{
    *npos = 0;
    bool literal = false;
    for (int i = 0; i < argc; i++) {
        const char *v = NULL;
        int r;
        if (!literal && strcmp(argv[i], "--") == 0) {
            literal = true;
            continue;
        }
        if (!literal && argv[i][0] == '-' && argv[i][1] != '\0') {
            if ((r = cli_opt_value(argc, argv, &i, "--format", &v)) != 0) {
                if (r < 0)
                    return cli_usage("%s: --format needs a value", cmd);
                o->format = v;
            } else if ((r = cli_opt_value(argc, argv, &i, "--output", &v)) != 0 ||
                       (r = cli_opt_value(argc, argv, &i, "-o", &v)) != 0) {
                if (r < 0)
                    return cli_usage("%s: --output needs a file", cmd);
                o->output = v;
            } else if ((r = cli_opt_value(argc, argv, &i, "--as-of", &v)) != 0 ||
                       (!as_of_ok && (r = cli_opt_value(argc, argv, &i, "--at", &v)) != 0)) {
                if (r < 0)
                    return cli_usage(as_of_ok ? "%s: --as-of needs NAME=REF or BLOCK"
                                              : "%s: --as-of needs a block, sequence number, time or rid", cmd);
                if (!as_of_ok && o->n_as_of)
                    return cli_usage("%s: give --as-of once", cmd);
                const char **nv = realloc(o->as_of, (o->n_as_of + 1) * sizeof *nv);
                if (!nv)
                    return cli_fail_code(SILT_ENOMEM, "out of memory");
                o->as_of = nv;
                o->as_of[o->n_as_of++] = v;
            } else if (as_of_ok && strcmp(argv[i], "--unsafe-file-access") == 0) {
                o->unsafe_file_access = true;
            } else if (n_opt && (r = cli_opt_value(argc, argv, &i, "-n", &v)) != 0) {
                if (r < 0)
                    return cli_usage("%s: -n needs a number", cmd);
                *n_opt = v;
            } else if (strcmp(argv[i], "-") == 0) {
                if (*npos >= maxpos)
                    return cli_usage("%s: too many arguments", cmd);
                pos[(*npos)++] = argv[i];
            } else {
                return cli_usage("%s: unknown option '%s'", cmd, argv[i]);
            }
            continue;
        }
        if (*npos >= maxpos)
            return cli_usage("%s: too many arguments", cmd);
        pos[(*npos)++] = argv[i];
    }
    if (o->format) {
        bool known = false;
        for (const char *const *f = FORMATS; *f; f++)
            known |= strcmp(*f, o->format) == 0;
        if (!known)
            return cli_usage("%s: unknown format '%s' (use table, csv, json, ndjson, parquet or arrow)", cmd,
                             o->format);
    }
    if (o->format && strcmp(o->format, "parquet") == 0 && !o->output)
        return cli_usage("%s: --format parquet needs --output FILE", cmd);
    if (o->format && strcmp(o->format, "arrow") == 0 && !o->output && isatty(STDOUT_FILENO))
        return cli_usage("%s: --format arrow is binary: give --output FILE or redirect stdout", cmd);
    return 0;
}

/* Reads all of stdin into a malloc'd string (NULL on failure). */
static char *read_stdin(void)
{
    size_t cap = 4096, len = 0;
    char *s = malloc(cap);
    while (s) {
        size_t n = fread(s + len, 1, cap - len - 1, stdin);
        len += n;
        if (n == 0)
            break;
        if (cap - len - 1 == 0) {
            char *ns = realloc(s, cap * 2);
            if (!ns) {
                free(s);
                return NULL;
            }
            s = ns;
            cap *= 2;
        }
    }
    if (s)
        s[len] = '\0';
    return s;
}

size_t cli_table_width(const char *format, const char *output)
{
    if ((format && strcmp(format, "table") != 0) || output || !isatty(STDOUT_FILENO))
        return 0;
    struct winsize w;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 0)
        return w.ws_col;
    const char *cols = getenv("COLUMNS");
    long n = cols ? strtol(cols, NULL, 10) : 0;
    return n > 0 ? (size_t)n : 80;
}

/* ---- the progress line of sql / tail output ----------------------------------
 *
 * Drawn (progress.c) only when the rows do not appear on the terminal as
 * they are written: with --output, when stdout is not a terminal, or in the
 * table format, whose lines come only once every row is in; the library's
 * last report (done == total) comes just before them, so the line is
 * erased there and not drawn again. Ctrl-C stops the output before the next
 * chunk of rows: one line says how many rows were written, exit 130. */

static int query_progress_fn(void *ctx, const silt_progress *s)
{
    cli_progress *p = ctx;
    if (s->unit && strcmp(s->unit, "rows") == 0 && s->done == s->total) { /* every row is in */
        cli_progress_clear(p);
        p->on = false;
        return 0;
    }
    return cli_progress_fn(ctx, s);
}

static void query_progress_begin(cli_progress *p, const cli_ctx *c, const char *label, silt_sql_opts *so,
                                 uint64_t *rows)
{
    cli_progress_begin(p, c, label);
    bool table = !so->format || strcmp(so->format, "table") == 0;
    if (!so->output && !table && isatty(STDOUT_FILENO))
        p->on = false;
    *rows = 0;
    so->rows_out = rows;
    so->progress = query_progress_fn;
    so->progress_ctx = p;
    cli_interrupt_catch();
}

/* After a failed query: the Ctrl-C summary and 130, or the error. `what`
 * is "sql" or "tail 'NAME'". */
static int query_failed(const char *what, const silt_sql_opts *so, uint64_t rows)
{
    if (silt_error_code() != SILT_ECANCELED || !cli_interrupted())
        return cli_fail(NULL);
    if (so->format && strcmp(so->format, "parquet") == 0) /* rows are counted when the file is complete */
        fprintf(stderr, "silt: interrupted: %s: '%s' was removed\n", what, so->output);
    else if (so->output && rows == 0 && access(so->output, F_OK) == 0) /* stopped before any row */
        fprintf(stderr, "silt: interrupted: %s: 0 rows written; '%s' was left as it was\n", what, so->output);
    else if (so->output)
        fprintf(stderr, "silt: interrupted: %s: %llu row%s written; '%s' was removed\n", what,
                (unsigned long long)rows, rows == 1 ? "" : "s", so->output);
    else
        fprintf(stderr, "silt: interrupted: %s: %llu row%s written to stdout\n", what, (unsigned long long)rows,
                rows == 1 ? "" : "s");
    return EXIT_INTERRUPTED;
}

/* With --json and no --format the rows are one compact JSON array on one
 * line, as every --json answer (the library's json-aos shape, which ends
 * without a newline: json_line_end adds it; in a script the library ends
 * every result with one). --format json stays the data format, one row a
 * line. */
#define JSON_LINE "json-aos"

static int json_line_end(const silt_sql_opts *so)
{
    if (!so->format || strcmp(so->format, JSON_LINE) != 0)
        return EXIT_OK;
    FILE *f = so->output ? fopen(so->output, "a") : stdout;
    bool bad = !f || fputc('\n', f) == EOF;
    if (f && so->output)
        bad |= fclose(f) != 0;
    else if (f)
        bad |= fflush(f) != 0;
    return bad ? cli_fail_code(SILT_EIO, "%s: write error", so->output ? so->output : "stdout") : EXIT_OK;
}

/* How `silt sql` got its statements. */
typedef enum sql_input { IN_QUERY, IN_SCRIPT, IN_SHELL } sql_input;

static int run_sql(cli_ctx *c, sql_input in, const char *query, silt_sql_opts *so)
{
    char *script = NULL;
    if (in == IN_SCRIPT && !(script = read_stdin()))
        return cli_fail_code(SILT_EIO, "cannot read the script from stdin");
    silt_workspace *ws;
    if (cli_open_workspace(c, &ws)) {
        free(script);
        return EXIT_FAIL;
    }
    int status;
    if (in == IN_SHELL) {
        status = cli_sql_shell(c, ws, so);
    } else {
        cli_progress prog;
        uint64_t rows;
        query_progress_begin(&prog, c, "", so, &rows);
        int rc = in == IN_SCRIPT ? silt_sql_script(ws, script, so) : silt_sql(ws, query, so);
        cli_progress_end(&prog);
        status = rc < 0 ? query_failed("sql", so, rows) : in == IN_QUERY ? json_line_end(so) : EXIT_OK;
    }
    silt_workspace_free(ws);
    free(script);
    return status;
}

int cmd_sql(cli_ctx *c, int argc, char **argv)
{
    out_opts o = {0};
    const char *pos[1];
    int npos = 0;
    int rc = parse_out_opts("sql", argc, argv, &o, true, pos, 1, &npos, NULL);
    if (rc) {
        free(o.as_of);
        return rc;
    }
    sql_input in = npos == 0 ? (isatty(STDIN_FILENO) ? IN_SHELL : IN_SCRIPT)
                 : strcmp(pos[0], "-") == 0 ? IN_SCRIPT : IN_QUERY;
    if (in == IN_SHELL && (o.output || (o.format && (strcmp(o.format, "parquet") == 0 || strcmp(o.format, "arrow") == 0)))) {
        free(o.as_of);
        return cli_usage("sql: --output needs a QUERY or a script on stdin (the shell prints results)");
    }
    if (!o.format && c->json) /* one compact line (the shell keeps its json mode) */
        o.format = in == IN_SHELL ? "json" : JSON_LINE;
    char **owned = NULL;
    if (o.n_as_of) { /* NAME=REF items resolved to NAME=BLOCK */
        silt_workspace *ws;
        if (cli_open_workspace(c, &ws)) {
            free(o.as_of);
            return EXIT_FAIL;
        }
        rc = cli_sql_as_of(ws, o.as_of, o.n_as_of, &owned);
        silt_workspace_free(ws);
        if (rc) {
            cli_strv_free(owned, o.n_as_of);
            free(o.as_of);
            return rc;
        }
    }
    silt_sql_opts so = {.format = o.format, .output = o.output, .out = stdout,
                        .as_of = o.as_of, .n_as_of = o.n_as_of,
                        .unsafe_file_access = o.unsafe_file_access,
                        .max_width = cli_table_width(o.format, o.output)};
    int status = run_sql(c, in, npos ? pos[0] : NULL, &so);
    cli_strv_free(owned, o.n_as_of);
    free(o.as_of);
    return status;
}

int cmd_tail(cli_ctx *c, int argc, char **argv)
{
    out_opts o = {0};
    const char *pos[1];
    const char *nstr = NULL;
    int npos = 0;
    int rc = parse_out_opts("tail", argc, argv, &o, false, pos, 1, &npos, &nstr);
    if (rc) {
        free(o.as_of);
        return rc;
    }
    if (npos != 1) {
        free(o.as_of);
        return cli_usage("tail needs one NAME");
    }
    uint64_t n = 10;
    if (nstr) {
        char *end;
        n = (*nstr && *nstr != '-' && *nstr != '+') ? strtoull(nstr, &end, 10) : 0;
        if (!*nstr || *nstr == '-' || *nstr == '+' || *end) {
            free(o.as_of);
            return cli_usage("tail: -n needs a non-negative number, got '%s'", nstr);
        }
    }
    if (!o.format && c->json)
        o.format = JSON_LINE;
    silt_workspace *ws;
    if (cli_open_workspace(c, &ws))
        return EXIT_FAIL;
    silt_dataset *ds = NULL;
    int status = EXIT_OK;
    if (silt_dataset_open(&ds, ws, pos[0]) < 0) {
        status = cli_fail(NULL);
    } else {
        char block[72];
        const char *items[1] = {block};
        silt_sql_opts so = {.format = o.format, .output = o.output, .out = stdout,
                            .max_width = cli_table_width(o.format, o.output)};
        if (o.n_as_of && (status = cli_as_of(ds, o.as_of[0], block, NULL)) == 0) {
            so.as_of = items;
            so.n_as_of = 1;
        }
        if (status == EXIT_OK) {
            cli_progress prog;
            uint64_t rows;
            char what[160];
            snprintf(what, sizeof what, "tail '%s'", pos[0]);
            query_progress_begin(&prog, c, pos[0], &so, &rows);
            int rc = silt_dataset_tail(ds, n, &so);
            cli_progress_end(&prog);
            if (rc < 0)
                status = query_failed(what, &so, rows);
            else
                status = json_line_end(&so);
        }
    }
    free(o.as_of);
    silt_dataset_free(ds);
    silt_workspace_free(ws);
    return status;
}

/* `silt schema set NAME[@BRANCH] FILE` (files datasets). */
static int schema_set(cli_ctx *c, int argc, char **argv)
{
    if (argc != 2 || argv[0][0] == '-' || argv[1][0] == '-')
        return cli_usage("schema set needs NAME[@BRANCH] FILE");
    silt_workspace *ws;
    if (cli_open_workspace(c, &ws))
        return EXIT_FAIL;
    silt_dataset *ds = NULL;
    int status = EXIT_OK;
    if (silt_dataset_open(&ds, ws, argv[0]) < 0 || silt_files_schema_set(ds, argv[1]) < 0)
        status = cli_fail(NULL);
    else if (!c->json)
        printf("schema of %s set from %s\n", argv[0], argv[1]);
    else
        cli_json_print(json_pack("{s:o*,s:s,s:b}", "dataset", cli_dataset_json(ds), "file", argv[1], "schemaSet", 1));
    silt_dataset_free(ds);
    silt_workspace_free(ws);
    return status;
}

/* `silt schema infer NAME[@BRANCH] [--at RID]` (files datasets): prints a
 * document `silt schema set` takes. */
static int schema_infer(cli_ctx *c, int argc, char **argv)
{
    const char *name = NULL, *at = NULL;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--at") == 0 && i + 1 < argc)
            at = argv[++i];
        else if (argv[i][0] == '-' || name)
            return cli_usage("schema infer needs NAME[@BRANCH] [--at RID]");
        else
            name = argv[i];
    }
    if (!name)
        return cli_usage("schema infer needs NAME[@BRANCH] [--at RID]");
    silt_workspace *ws;
    if (cli_open_workspace(c, &ws))
        return EXIT_FAIL;
    silt_dataset *ds = NULL;
    char *text = NULL;
    int status = EXIT_OK;
    if (silt_dataset_open(&ds, ws, name) < 0 || silt_files_schema_infer(&text, ds, at) < 0)
        status = cli_fail(NULL);
    else if (!c->json)
        fputs(text, stdout);
    else
        cli_json_print(json_pack("{s:o*,s:s}", "dataset", cli_dataset_json(ds), "schemaFile", text));
    free(text);
    silt_dataset_free(ds);
    silt_workspace_free(ws);
    return status;
}

int cmd_schema(cli_ctx *c, int argc, char **argv)
{
    if (argc >= 1 && strcmp(argv[0], "set") == 0)
        return schema_set(c, argc - 1, argv + 1);
    if (argc >= 1 && strcmp(argv[0], "infer") == 0)
        return schema_infer(c, argc - 1, argv + 1);
    const char *name = NULL;
    const char *at = NULL;
    silt_schema_format fmt = c->json ? SILT_SCHEMA_JSON : SILT_SCHEMA_TEXT;
    for (int i = 0; i < argc; i++) {
        if ((strcmp(argv[i], "--at") == 0 || strcmp(argv[i], "--as-of") == 0) && i + 1 < argc)
            at = argv[++i];
        else if (strcmp(argv[i], "--yaml") == 0)
            fmt = SILT_SCHEMA_YAML;
        else if (strcmp(argv[i], "--json") == 0)
            fmt = SILT_SCHEMA_JSON;
        else if (argv[i][0] == '-')
            return cli_usage("schema: unknown option '%s'", argv[i]);
        else if (!name)
            name = argv[i];
        else
            return cli_usage("schema takes one NAME");
    }
    if (!name)
        return cli_usage("schema needs a NAME");
    silt_workspace *ws;
    if (cli_open_workspace(c, &ws))
        return EXIT_FAIL;
    int status = cli_schema_print(ws, name, at, fmt);
    silt_workspace_free(ws);
    return status;
}

/* The library's JSON text as one compact line (one layout for --json). */
static int print_json_text(const char *text)
{
    json_error_t err;
    json_t *j = json_loads(text, JSON_DECODE_ANY, &err);
    if (!j)
        return cli_fail_code(SILT_EINVAL, "schema: invalid JSON from the library: %s", err.text);
    cli_json_print(j);
    return EXIT_OK;
}

int cli_schema_print(silt_workspace *ws, const char *name, const char *as_of, silt_schema_format fmt)
{
    silt_dataset *ds = NULL;
    char *text = NULL;
    int status = EXIT_OK;
    int isf = 0;
    char block[72] = "", rid[64] = "";
    const char *at = NULL;
    if (silt_dataset_open(&ds, ws, name) < 0) {
        silt_dataset_free(ds);
        return cli_fail(NULL);
    }
    if (as_of && cli_as_of(ds, as_of, block, rid)) {
        silt_dataset_free(ds);
        return EXIT_FAIL;
    }
    at = rid[0] ? rid : NULL;
    if ((isf = silt_files_schema_get(&text, ds, at, fmt)) == SILT_ENOMEM)
        status = cli_fail(NULL);
    else if (isf < 0 && strstr(silt_error_last(), "is not a files dataset") == NULL &&
             !(isf == SILT_ENOTFOUND && !at && strstr(silt_error_last(), "has no tabular schema")))
        status = cli_fail(NULL); /* a files dataset: its tabular schema; without one, the entries' schema */
    else if (isf < 0 && silt_dataset_schema_get_at(&text, ds, as_of ? block : NULL, fmt) < 0)
        status = cli_fail(NULL); /* a ledger dataset: its schema as of the block */
    else if (fmt == SILT_SCHEMA_JSON)
        status = print_json_text(text);
    else
        fputs(text, stdout);
    free(text);
    silt_dataset_free(ds);
    return status;
}
