/* shell.c — `silt sql` on a terminal: an interactive SQL shell.
 *
 * Lines are read with libedit (line editing, history in $SILT_HISTORY or
 * ~/.silt_history, read at the start and written after every entry). A
 * statement may span lines ("   ...> " prompts) and runs once the input is
 * complete (silt_sql_complete: ends with ';' outside quotes and comments);
 * every statement of it runs through silt_sql with the same options as
 * `silt sql QUERY`, so each one is confined and checked on its own. A line
 * starting with '.' (when no statement is pending) is a dot command.
 * Errors print one line ("silt: …") on stderr and the shell goes on; it ends
 * with .quit, .exit or end of input (Ctrl-D), always with EXIT_OK.
 */
#include "shell.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <editline/readline.h>

#define PROMPT "silt> "
#define PROMPT_MORE "   ...> "

static const char *const MODES[] = {"table", "csv", "json", "ndjson", NULL};

typedef struct shell {
    cli_ctx *c;
    silt_workspace *ws;
    silt_sql_opts opts;
    char mode[8];
    char *history; /* file, or NULL */
} shell;

static void shell_run(shell *sh, const char *query)
{
    sh->opts.format = sh->mode;
    sh->opts.max_width = cli_table_width(sh->mode, NULL);
    if (silt_sql(sh->ws, query, &sh->opts) < 0)
        cli_fail(NULL);
    fflush(stdout);
}

static void remember(shell *sh, const char *entry)
{
    add_history(entry);
    if (sh->history)
        write_history(sh->history);
}

static void dot_help(void)
{
    fputs(".help             this text\n"
          ".tables           the datasets (SHOW TABLES)\n"
          ".schema NAME      the schema of a dataset\n"
          ".mode [MODE]      output format: table, csv, json or ndjson (no MODE: the current one)\n"
          ".quit, .exit      leave the shell (also Ctrl-D)\n"
          "Statements end with ';' and may span lines.\n",
          stdout);
}

static void dot_mode(shell *sh, const char *arg)
{
    if (!*arg) {
        printf("%s\n", sh->mode);
        return;
    }
    for (const char *const *m = MODES; *m; m++) {
        if (strcmp(*m, arg) == 0) {
            snprintf(sh->mode, sizeof sh->mode, "%s", arg);
            return;
        }
    }
    cli_fail_code(SILT_EINVAL, ".mode: unknown mode '%s' (use table, csv, json or ndjson)", arg);
}

/* Runs dot command `line`; returns false when the shell should end. */
static bool dot_command(shell *sh, char *line)
{
    char *cmd = line, *arg = line + strcspn(line, " \t");
    if (*arg)
        *arg++ = '\0';
    arg += strspn(arg, " \t");
    arg[strcspn(arg, " \t")] = '\0'; /* one argument; the rest is ignored */
    if (strcmp(cmd, ".quit") == 0 || strcmp(cmd, ".exit") == 0)
        return false;
    if (strcmp(cmd, ".help") == 0)
        dot_help();
    else if (strcmp(cmd, ".tables") == 0)
        shell_run(sh, "SHOW TABLES");
    else if (strcmp(cmd, ".mode") == 0)
        dot_mode(sh, arg);
    else if (strcmp(cmd, ".schema") == 0 && *arg)
        cli_schema_print(sh->ws, arg, NULL, SILT_SCHEMA_TEXT);
    else if (strcmp(cmd, ".schema") == 0)
        cli_fail_code(SILT_EINVAL, ".schema needs a dataset NAME");
    else
        cli_fail_code(SILT_EINVAL, "unknown command '%s' (try .help)", cmd);
    fflush(stdout);
    return true;
}

/* Runs every statement of a complete input, stopping at the first error. */
static void run_input(shell *sh, const char *text)
{
    char **stmts = NULL;
    int n = silt_sql_split(&stmts, text);
    if (n < 0) {
        cli_fail(NULL);
        return;
    }
    for (int i = 0; i < n; i++) {
        sh->opts.format = sh->mode;
        sh->opts.max_width = cli_table_width(sh->mode, NULL);
        if (silt_sql(sh->ws, stmts[i], &sh->opts) < 0) {
            cli_fail(NULL);
            break;
        }
        fflush(stdout);
    }
    silt_strv_free(stmts);
}

/* The history entry of a statement: its lines joined by spaces (malloc'd). */
static char *history_entry(const char *text)
{
    char *e = strdup(text);
    for (char *p = e; p && *p; p++)
        if (*p == '\n')
            *p = ' ';
    return e;
}

static char *history_file(void)
{
    const char *h = getenv("SILT_HISTORY");
    if (h && *h)
        return strdup(h);
    const char *home = getenv("HOME");
    if (!home || !*home)
        return NULL;
    size_t n = strlen(home) + sizeof "/.silt_history";
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/.silt_history", home);
    return p;
}

/* Appends `line` to the pending input (malloc'd, NULL when none); NULL
 * when out of memory. */
static char *append_line(char *pending, const char *line)
{
    size_t a = pending ? strlen(pending) : 0, b = strlen(line);
    char *s = realloc(pending, a + b + 2);
    if (!s) {
        free(pending);
        return NULL;
    }
    if (a)
        s[a++] = '\n';
    memcpy(s + a, line, b + 1);
    return s;
}

int cli_sql_shell(cli_ctx *c, silt_workspace *ws, const silt_sql_opts *base)
{
    shell sh = {.c = c, .ws = ws, .opts = *base};
    snprintf(sh.mode, sizeof sh.mode, "%s", base->format ? base->format : "table");
    sh.history = history_file();
    using_history();
    if (sh.history)
        read_history(sh.history);
    char *pending = NULL;
    for (;;) {
        fflush(stdout);
        char *line = readline(pending ? PROMPT_MORE : PROMPT);
        if (!line) { /* end of input: a pending statement is dropped */
            fputc('\n', stdout);
            break;
        }
        const char *t = line + strspn(line, " \t");
        if (!pending && *t == '.') {
            remember(&sh, t);
            bool go_on = dot_command(&sh, (char *)t);
            free(line);
            if (!go_on)
                break;
            continue;
        }
        if (!pending && !*t) {
            free(line);
            continue;
        }
        pending = append_line(pending, line);
        free(line);
        if (!pending) {
            cli_fail_code(SILT_ENOMEM, "out of memory");
            break;
        }
        if (!silt_sql_complete(pending))
            continue;
        char *entry = history_entry(pending);
        if (entry)
            remember(&sh, entry);
        free(entry);
        run_input(&sh, pending);
        free(pending);
        pending = NULL;
    }
    free(pending);
    free(sh.history);
    return EXIT_OK;
}
