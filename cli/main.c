/* main.c — entry point of the `silt` command: global options, dispatch,
 * error reporting. Global options (--workspace DIR, --json, -q/--quiet)
 * may appear anywhere before a literal "--". */
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

static const char *USAGE =
    "usage: silt [--workspace DIR] [--json] COMMAND [ARGS]\n"
    "       (-q, --quiet: no progress line; on a terminal pull, ingest, verify, gc and upload\n"
    "        show one on stderr; warnings and errors are still printed)\n"
    "\n"
    "Workspace and datasets:\n"
    "  init                          create .silt/ in the current directory\n"
    "  new NAME [--files]            create an empty root (or files) dataset\n"
    "  add MANIFEST.yaml...          create datasets from DatasetSnapshot manifests\n"
    "  list                          list datasets\n"
    "  info NAME                     summary of a dataset\n"
    "  rename NAME NEW               rename a dataset\n"
    "  delete NAME...                delete datasets\n"
    "\n"
    "Data:\n"
    "  ingest NAME [FILE...|-] [--input-format F] [--event-time T] [--source-name S]\n"
    "                                push ingest through the dataset's push source\n"
    "  sql QUERY|- [--format table|csv|json|ndjson|parquet] [--output FILE] [--as-of NAME=BLOCK|BLOCK]\n"
    "      [--unsafe-file-access]    SQL over datasets (tables by name; \"name@branch\", \"name:current\"):\n"
    "                                one read-only query that reads no other file; --unsafe-file-access\n"
    "                                allows any statement and file (local exploration only)\n"
    "  tail NAME [-n N] [--format F] [--output FILE]   newest records (default 10)\n"
    "  schema NAME [--json|--yaml]   current schema\n"
    "  read-table NAME[@BRANCH] [--format arrow|csv] [--columns a,b] [--row-limit N] [--start RID] [--end RID]\n"
    "      [--output FILE]           the table as an Arrow IPC stream (readTable) or CSV\n"
    "  pull NAME...|--all [--recursive] [--fetch-uncacheable] [--set-watermark T]\n"
    "  pull URL|REPO/NAME [--as LOCAL] [--jobs N] [--token-env VAR] [--force]\n"
    "  push NAME [REPO/NAME|URL] [--force] [--jobs N] [--token-env VAR]\n"
    "  repo add NAME URL [--token-env VAR] | repo list | repo delete NAME\n"
    "                                run polling sources (one AddData per new batch)\n"
    "  sources | flows               list Source / Flow resources (silt add)\n"
    "  flows set NAME --cron EXPR|--none   schedule a SetPollingSource (cron, UTC)\n"
    "  flows run [NAME...] [--once]  run due flows in the foreground (the scheduler)\n"
    "  flows history [NAME]          past flow runs, newest first\n"
    "\n"
    "Files datasets (transactions, views, branches):\n"
    "  txn start NAME[@BRANCH] --type snapshot|append|update|delete   -> prints the rid\n"
    "  txn put NAME RID FILE|DIR... [--base DIR] | put NAME RID FILE --as PATH (or FILE PATH)\n"
    "                                stage files under their paths relative to the working directory (or DIR)\n"
    "  txn rm NAME RID PATH | commit NAME RID | abort NAME RID | list NAME[@BRANCH]\n"
    "  txn recover NAME[@BRANCH]     abort transactions whose process is gone (every branch without @BRANCH)\n"
    "  upload NAME[@BRANCH] FILE|DIR... [--base DIR] [--type update|append|snapshot] [--as PATH]\n"
    "                                start + put + commit; all or nothing\n"
    "  files NAME[@BRANCH] [--at RID | --range START..END]   the view\n"
    "  cat NAME[@BRANCH] PATH [--at RID]\n"
    "  branch create NAME BRANCH [--from BRANCH | --at RID] | list NAME | delete NAME BRANCH\n"
    "  schema set NAME[@BRANCH] FILE | schema NAME [--at RID]   tabular schema of the files\n"
    "  retention set NAME --keep-days N [--branch B] | show NAME | mark NAME [--dry-run]\n"
    "            | marks NAME | unmark NAME RID|--all\n"
    "  gc [NAME...] [--dry-run]      delete objects no retained view needs, crash leftovers\n"
    "\n"
    "Node:\n"
    "  serve [--listen HOST:PORT] [--max-upload SIZE] [--allow-origin ORIGIN]...\n"
    "                                HTTP API (Foundry datasets v2, ODF node routes); see 'silt serve --help'\n"
    "\n"
    "API tokens (silt serve):\n"
    "  token create NAME [--read|--write|--admin] [--dataset PATTERN]... [--expires-days N]\n"
    "                                new bearer token; prints its secret once\n"
    "  token list                    name, scope, datasets, created, expires, last used\n"
    "  token revoke NAME             the token's secret is refused from now on\n"
    "\n"
    "Metadata chain:\n"
    "  log NAME [-n N] [--yaml|--json]   metadata blocks, newest first\n"
    "  append NAME EVENT.yaml...     append metadata events to a dataset\n"
    "  verify NAME...|--all          check hashes and every chain rule (--no-replay)\n"
    "  lineage NAME [--format text|dot|json]   inputs and consumers of a dataset, transitively\n"
    "  reset NAME[@BRANCH] --to BLOCK [--force]\n"
    "                                move the head back (refused if a derivative consumed the dropped blocks)\n"
    "  block hash FILE.yaml          multihash of a block's canonical binary form\n"
    "  block decode FILE             binary block -> YAML\n"
    "\n"
    "'silt help COMMAND' or 'silt COMMAND --help' shows a command's options and an example.\n"
    "Exit codes: 0 ok, 1 failed, 2 usage error.\n";

/* --json was given: errors are one JSON line on stderr (set in main, before
 * anything can fail; cli_ctx is not reachable from cli_fail). */
static bool g_json_errors;

const char *cli_error_code_name(int code)
{
    switch (code) {
    case SILT_EINVAL: return "INVALID";
    case SILT_ENOMEM: return "NO_MEMORY";
    case SILT_EIO: return "IO";
    case SILT_ENOTFOUND: return "NOT_FOUND";
    case SILT_EEXISTS: return "EXISTS";
    case SILT_ECONFLICT: return "CONFLICT";
    case SILT_ECORRUPT: return "CORRUPT";
    case SILT_EVALIDATION: return "VALIDATION";
    case SILT_EUNSUPPORTED: return "UNSUPPORTED";
    case SILT_ECANCELED: return "CANCELED";
    case CLI_EUSAGE: return "USAGE";
    default: return "INTERNAL";
    }
}

/* Prints one error: "silt: <msg><suffix>" or, with --json,
 * {"error":{"code":…,"message":…}} (the message without the suffix). */
static void report(int code, const char *msg, const char *suffix)
{
    if (!g_json_errors) {
        fprintf(stderr, "silt: %s%s\n", msg, suffix);
        return;
    }
    json_t *m = json_string(msg);
    if (!m) { /* not UTF-8 (e.g. a file name): bytes >= 0x80 become '?' */
        char safe[4096];
        size_t i = 0;
        for (; msg[i] && i + 1 < sizeof safe; i++)
            safe[i] = (unsigned char)msg[i] < 0x80 ? msg[i] : '?';
        safe[i] = '\0';
        m = json_string(safe);
    }
    json_t *e = json_pack("{s:{s:s,s:o}}", "error", "code", cli_error_code_name(code), "message", m);
    char *line = e ? json_dumps(e, JSON_COMPACT) : NULL;
    if (line)
        fprintf(stderr, "%s\n", line);
    else /* out of memory: still one line of JSON */
        fputs("{\"error\":{\"code\":\"NO_MEMORY\",\"message\":\"out of memory\"}}\n", stderr);
    free(line);
    json_decref(e);
}

static int vfail(int code, const char *fmt, va_list ap)
{
    char msg[4096];
    if (fmt) {
        vsnprintf(msg, sizeof msg, fmt, ap);
    } else {
        const char *m = silt_error_last();
        snprintf(msg, sizeof msg, "%s", m && *m ? m : "operation failed");
        code = silt_error_code() < 0 ? silt_error_code() : SILT_EINTERNAL;
    }
    report(code, msg, "");
    return EXIT_FAIL;
}

int cli_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vfail(fmt ? SILT_EINTERNAL : SILT_OK, fmt, ap);
    va_end(ap);
    return rc;
}

int cli_fail_code(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vfail(code, fmt, ap);
    va_end(ap);
    return rc;
}

int cli_usage(const char *fmt, ...)
{
    char msg[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    report(CLI_EUSAGE, msg, " (see 'silt help')");
    return EXIT_USAGE;
}

void cli_json_print(json_t *o)
{
    if (!o) {
        cli_fail_code(SILT_ENOMEM, "out of memory");
        return;
    }
    cli_json_write(o);
    json_decref(o);
}

void cli_json_write(const json_t *o)
{
    json_dumpf(o, stdout, JSON_COMPACT);
    fputc('\n', stdout);
}

const char *cli_time(char buf[CLI_TIME_MAX], const char *t)
{
    /* YYYY-MM-DDTHH:MM:SS[.f…]Z -> YYYY-MM-DDTHH:MM:SS.fffZ */
    size_t n = t ? strlen(t) : 0;
    if (n < 20 || n >= CLI_TIME_MAX || t[10] != 'T' || t[n - 1] != 'Z' || (t[19] == 'Z' ? n != 20 : t[19] != '.'))
        return t ? t : "-";
    char frac[4] = "000";
    for (size_t i = 0; t[19] == '.' && i < 3 && 20 + i < n - 1; i++)
        frac[i] = t[20 + i];
    snprintf(buf, CLI_TIME_MAX, "%.19s.%sZ", t, frac);
    return buf;
}

json_t *cli_dataset_json(silt_dataset *ds)
{
    silt_dataset_info in;
    if (silt_dataset_info_get(&in, ds) < 0)
        return NULL;
    return json_pack("{s:s,s:s,s:s}", "name", in.name, "id", in.id, "rid", in.rid);
}

int cli_open_workspace(cli_ctx *c, silt_workspace **ws)
{
    if (silt_workspace_open(ws, c->workspace_dir) < 0)
        return cli_fail(NULL);
    return 0;
}

static const struct {
    const char *name;
    cli_cmd_fn fn;
} COMMANDS[] = {
    {"init", cmd_init},     {"new", cmd_new},       {"add", cmd_add},
    {"list", cmd_list},     {"ls", cmd_list},       {"info", cmd_info},
    {"rename", cmd_rename}, {"delete", cmd_delete}, {"log", cmd_log},
    {"append", cmd_append}, {"verify", cmd_verify}, {"block", cmd_block},
    {"ingest", cmd_ingest}, {"sql", cmd_sql},       {"tail", cmd_tail},
    {"schema", cmd_schema}, {"sources", cmd_sources}, {"flows", cmd_flows},
    {"pull", cmd_pull},     {"txn", cmd_txn},       {"upload", cmd_upload},
    {"reset", cmd_reset},   {"lineage", cmd_lineage},
    {"files", cmd_files},   {"cat", cmd_cat},       {"branch", cmd_branch},
    {"retention", cmd_retention}, {"gc", cmd_gc},
    {"serve", cmd_serve},
    {"token", cmd_token},
    {"read-table", cmd_read_table},
    {"repo", cmd_repo},     {"push", cmd_push},
};

/* `silt help [COMMAND | --man | --completion bash|zsh]` */
static int help(int argc, char **argv)
{
    if (argc == 0) {
        fputs(USAGE, stdout);
        return EXIT_OK;
    }
    if (argc == 1 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0))
        return cli_help_command("help") == 0 ? EXIT_OK : EXIT_FAIL;
    if (argc == 1 && strcmp(argv[0], "--man") == 0) {
        cli_help_man(stdout);
        return EXIT_OK;
    }
    if (argc == 2 && strcmp(argv[0], "--completion") == 0)
        return cli_help_completion(argv[1]) == 0 ? EXIT_OK
                                                 : cli_usage("help --completion: unknown shell '%s' (bash or zsh)", argv[1]);
    if (argc == 1 && cli_help_command(argv[0]) == 0)
        return EXIT_OK;
    if (argc == 1) {
        const char *near = cli_help_suggest(argv[0]);
        return near ? cli_usage("help: unknown command '%s' (did you mean '%s'?)", argv[0], near)
                    : cli_usage("help: unknown command '%s'", argv[0]);
    }
    return cli_usage("help takes one COMMAND, --man or --completion SHELL");
}

/* "--" ends the options of every command. The commands whose operands may
 * start with '-' (file paths, SQL) handle it in their parsers: what follows
 * it is an operand. For every other command an operand cannot start with
 * '-' (dataset names, rids, branches), so "--" changes nothing but where the
 * options end: it is dropped here and the parser sees plain operands.
 * Returns the new count. */
static int drop_dashdash(char **args, int n)
{
    static const char *const OWN[] = {"sql",    "tail",    "init",   "new",    "add",   "list",
                                      "info",   "rename",  "delete", "upload", "ingest", "cat",
                                      "append", "sources", "flows"};
    for (size_t i = 0; i < sizeof OWN / sizeof OWN[0]; i++)
        if (strcmp(args[0], OWN[i]) == 0)
            return n;
    if (strcmp(args[0], "txn") == 0 && n > 1 && strcmp(args[1], "put") == 0)
        return n;
    int k = 1;
    while (k < n && strcmp(args[k], "--") != 0)
        k++;
    if (k >= n)
        return n;
    memmove(args + k, args + k + 1, (size_t)(n - k - 1) * sizeof *args);
    return n - 1;
}

int main(int argc, char **argv)
{
    cli_ctx c = {0};
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--json") == 0)
            g_json_errors = true;
    char **args = calloc((size_t)argc + 1, sizeof *args);
    if (!args)
        return cli_fail_code(SILT_ENOMEM, "out of memory");
    int n = 0;
    bool literal = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!literal && strcmp(a, "--") == 0) {
            literal = true;
            args[n++] = argv[i];
            continue;
        }
        if (!literal && strcmp(a, "--json") == 0) {
            c.json = true;
        } else if (!literal && (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0)) {
            c.quiet = true;
        } else if (!literal && strcmp(a, "--workspace") == 0) {
            if (i + 1 >= argc) {
                free(args);
                return cli_usage("--workspace needs a directory");
            }
            c.workspace_dir = argv[++i];
        } else if (!literal && strncmp(a, "--workspace=", 12) == 0) {
            c.workspace_dir = a + 12;
        } else {
            args[n++] = argv[i];
        }
    }
    if (n == 0) {
        fputs(USAGE, stderr);
        free(args);
        return EXIT_USAGE;
    }
    const char *cmd = args[0];
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        int rc = help(n - 1, args + 1);
        free(args);
        return rc;
    }
    /* `silt CMD --help` / `-h` (before a literal "--") is that command's help */
    for (int i = 1; i < n && strcmp(args[i], "--") != 0; i++) {
        if (strcmp(args[i], "--help") == 0 || strcmp(args[i], "-h") == 0) {
            int rc = cli_help_command(cmd) == 0 ? EXIT_OK : cli_usage("unknown command '%s'", cmd);
            free(args);
            return rc;
        }
    }
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        printf("silt %s\n", SILT_VERSION);
        free(args);
        return EXIT_OK;
    }
    n = drop_dashdash(args, n);
    for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++) {
        if (strcmp(cmd, COMMANDS[i].name) == 0) {
            int rc = COMMANDS[i].fn(&c, n - 1, args + 1);
            free(args);
            return rc;
        }
    }
    const char *near = cli_help_suggest(cmd);
    int rc = near ? cli_usage("unknown command '%s' (did you mean '%s'?)", cmd, near)
                  : cli_usage("unknown command '%s'", cmd);
    free(args);
    return rc;
}
