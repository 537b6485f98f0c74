/* help.c — per-command help (`silt CMD --help`, `silt help CMD`), the
 * nearest-command suggestion for a misspelt command, and the man page and
 * shell completions generated from the same table (`silt help --man`,
 * `silt help --completion bash|zsh`), so the three never disagree.
 */
#include "cli.h"

#include <stdio.h>
#include <string.h>

typedef struct help_entry {
    const char *name;
    const char *summary;  /* one line */
    const char *usage;    /* one or more "silt …" lines */
    const char *options;  /* lines "  --flag ARG   meaning", or NULL */
    const char *example;  /* shell lines */
} help_entry;

/* Commands that stop cleanly on Ctrl-C (exit 130, see cli/progress.c). */
static int interruptible(const char *name)
{
    return strcmp(name, "pull") == 0 || strcmp(name, "ingest") == 0 || strcmp(name, "upload") == 0;
}

static const char *ENV_TEXT =
    "  SILT_WORKSPACE            workspace directory (default: the nearest .silt/ upwards)\n"
    "  SILT_SECRET_<NAME>        a secret for ${{ secrets.NAME }} in source configs\n"
    "  SILT_FAKE_SYSTEM_TIME     RFC 3339 time used as 'now' (tests, reproducible runs)\n"
    "  SILT_SCHEDULER_CLOCK_FILE (tests only) a file holding the flow scheduler's 'now' (RFC 3339),\n"
    "                            read at every tick\n"
    "  SILT_GC_GRACE_SECONDS     age before gc deletes unreferenced objects (default 3600)\n"
    "  SILT_PROGRESS_INTERVAL_MS time between redraws of the progress line on a terminal (default 100)\n"
    "  SILT_ADMIN_TOKEN          (silt serve) a bearer token accepted with the admin scope\n";

static const help_entry HELP[] = {
    {"init", "create a workspace (.silt/) in a directory", "silt init [DIR] [--exists-ok]",
     "  --exists-ok     succeed when DIR already holds a workspace (scripts, provisioning)\n",
     "silt init\nsilt init --exists-ok\n"},
    {"new", "create an empty root, derivative or files dataset, or one with a push source",
     "silt new NAME [--root | --derivative | --files]\n"
     "silt new NAME --push-source FORMAT [--merge append|ledger|snapshot --key COL...] [--schema 'name TYPE, ...']",
     "  --root          a root dataset (the default): data comes from sources\n"
     "  --derivative    a derivative dataset (data computed from other datasets)\n"
     "  --files         a files dataset: transactions of files, views, branches\n"
     "  --push-source F add push source 'default' reading F: csv (header; types inferred\n"
     "                  from the first 20480 rows unless --schema), json, ndjson, geojson,\n"
     "                  ndgeojson, parquet; `silt ingest NAME FILE` then works right away\n"
     "  --merge M       append (default), ledger or snapshot (these two need --key)\n"
     "  --key COL       a primary key column (repeat for several)\n"
     "  --schema DDL    the columns' types, e.g. 'id BIGINT, name STRING, amount DECIMAL(10,2)'\n",
     "silt new sales\nsilt new --files raw\nsilt new sales --push-source csv\n"
     "silt new cities --push-source csv --merge snapshot --key country --key city \\\n"
     "    --schema 'country STRING, city STRING, population BIGINT'\n"},
    {"add", "create datasets (and Source/Flow resources) from manifests", "silt add [--replace] MANIFEST.yaml...",
     "  --replace       replace datasets of the same names (each is built first and swapped in;\n"
     "                  if building it fails, the old one stays as it was); new ids\n",
     "silt add examples/city-populations.yaml\nsilt add --replace examples/city-populations.yaml\n"},
    {"list", "list the datasets of the workspace", "silt list   (alias: ls)", NULL, "silt list\nsilt --json list\n"},
    {"info",
     "what a dataset is: id, rid, head, records, watermark, size, description, keywords, licence, schema, "
     "sources (push, polling, flows), branches",
     "silt info NAME[@BRANCH]", NULL, "silt info sales\nsilt --json info sales\n"},
    {"rename", "rename a dataset (its id and rid stay)", "silt rename NAME NEW_NAME", NULL, "silt rename sales sales.eu\n"},
    {"delete", "delete datasets, all or nothing", "silt delete [-y | --yes] NAME...",
     "  -y, --yes       do not ask; on a terminal delete asks \"Delete N datasets (…)? [y/N]\"\n"
     "                  (not on a terminal it never asks). One missing NAME deletes nothing.\n",
     "silt delete scratch\nsilt delete -y tmp1 tmp2\n"},
    {"ingest", "push data into a dataset through its push source", "silt ingest NAME [FILE...|-] [options]",
     "  --input-format F   input format: csv, json, ndjson, geojson, ndgeojson, parquet, shp\n"
     "                     (--format F is a deprecated alias: it warns on stderr)\n"
     "  --event-time T     RFC 3339 event time for records that carry none\n"
     "  --source-name S    the push source to use when the dataset has several\n",
     "silt ingest sales data/2024-01.csv\ncat data.ndjson | silt ingest sales - --input-format ndjson\n"},
    {"sql", "run one SQL query over the datasets",
     "silt sql QUERY [options]\nsilt sql - [options] < script.sql       (statements separated by ';')\n"
     "silt sql                               (on a terminal: an interactive shell; .help lists its commands)",
     "  --format F            table (default), csv, json, ndjson, parquet, arrow (an Arrow IPC stream)\n"
     "  --output FILE, -o     write the result to FILE (needed for parquet)\n"
     "  --as-of NAME=REF      query NAME as of REF: a block hash or unique prefix, a sequence\n"
     "                        number, an RFC 3339 time or a transaction rid (repeatable; or a bare BLOCK hash)\n"
     "  --unsafe-file-access  allow any statement and file access (local exploration only)\n",
     "silt sql 'SELECT city, population FROM \"city-populations:current\" ORDER BY city'\n"
     "silt sql 'SELECT * FROM sales' --format parquet --output sales.parquet\n"
     "silt sql 'SELECT city, population FROM sales' --format arrow > sales.arrows\n"},
    {"tail", "the newest records of a dataset", "silt tail NAME[@BRANCH] [-n N] [--as-of REF] [--format F] [--output FILE]",
     "  -n N             number of records (default 10)\n"
     "  --as-of REF      as of a block (hash or prefix), sequence number, RFC 3339 time or rid (alias --at)\n"
     "  --format F       table (default), csv, json, ndjson, parquet, arrow\n"
     "  --output FILE    write to FILE\n",
     "silt tail sales -n 5\n"},
    {"schema", "the schema of a dataset; the tabular schema of a files dataset",
     "silt schema NAME[@BRANCH] [--json | --yaml] [--as-of REF]\nsilt schema set NAME[@BRANCH] FILE\n"
     "silt schema infer NAME[@BRANCH] [--at RID]",
     "  --json | --yaml  print the ODF DataSchema as JSON or YAML\n"
     "  --as-of REF      the schema as of a block (hash or prefix), sequence number, RFC 3339 time\n"
     "                   or transaction rid (alias --at)\n"
     "  infer            propose a schema from the view's files (Avro writer schema, Parquet footer,\n"
     "                   CSV/JSON sampling) as a file for `schema set` (format parquet, csv, json, avro)\n",
     "silt schema sales\nsilt schema set raw schema.yaml\n"
     "silt schema infer raw > schema.yaml && silt schema set raw schema.yaml\n"},
    {"read-table", "a table as an Arrow IPC stream or CSV (what readTable of silt serve sends)",
     "silt read-table NAME[@BRANCH] [--format arrow|csv] [--columns a,b] [--row-limit N] [--start RID] [--end RID]\n"
     "                [--output FILE]",
     "  --format F       arrow (default: an Arrow IPC stream) or csv\n"
     "  --columns a,b    only these columns, in this order\n"
     "  --row-limit N    at most N rows\n"
     "  --start RID      (files datasets) the view from transaction RID\n"
     "  --end RID        (files datasets) the view up to transaction RID\n"
     "  --output FILE    write to FILE (else stdout)\n",
     "silt read-table sales --columns offset,city --output sales.arrows\n"},
    {"pull", "run the polling sources of datasets and the transforms of derivatives; clone or update remote datasets",
     "silt pull NAME...|--all [options]\nsilt pull URL|REPO/NAME [--as LOCAL] [--jobs N] [--token-env VAR] [--force]",
     "  --all                 every dataset with a polling source, then every derivative,\n"
     "                        and every clone from its remote\n"
     "  --as LOCAL            (remote) the local name of a clone (default: the remote name)\n"
     "  --jobs N              (remote) objects fetched in parallel (default 8)\n"
     "  --token-env VAR       (remote) the bearer token is in $VAR (default SILT_TOKEN)\n"
     "  --force               (remote) overwrite a local dataset that diverged\n"
     "  --recursive           pull the inputs of derivatives first, in dependency order\n"
     "  --fetch-uncacheable   fetch sources that give no caching validator again\n"
     "  --set-watermark T     commit only a new watermark (RFC 3339)\n",
     "silt pull city-populations\nsilt pull --all\nsilt pull node/sales --as sales-copy\n"},
    {"push", "push a dataset to a repository or a silt node (objects, blocks, then the ref by CAS)",
     "silt push NAME [REPO/NAME | URL] [--force] [--jobs N] [--token-env VAR]",
     "  --force           overwrite a target that diverged (the dropped blocks are listed)\n"
     "  --jobs N          objects sent in parallel (default 8)\n"
     "  --token-env VAR   the bearer token is in $VAR (default: the repository's, else SILT_TOKEN)\n",
     "silt push sales node/sales\nsilt push sales file:///srv/repo/sales\n"},
    {"repo", "repositories: file:///path, http(s)://host:port/odf (a silt node), s3://bucket/prefix",
     "silt repo add NAME URL [--token-env VAR]\nsilt repo list\nsilt repo delete NAME",
     "  --token-env VAR   the bearer token of the repository is in $VAR (default SILT_TOKEN);\n"
     "                    only the variable's name is stored (.silt/repos.yaml)\n",
     "silt repo add node http://localhost:8080/odf --token-env NODE_TOKEN\nsilt repo list\n"},
    {"sources", "list the Source resources (silt add) and the files pulls skipped", "silt sources", NULL,
     "silt sources\nsilt --json sources\n"},
    {"flows", "flows (Flow resources, scheduled polling sources): list, schedule, run, history",
     "silt flows\n"
     "silt flows set NAME --cron EXPR | --none\n"
     "silt flows run [NAME...] [--once]\n"
     "silt flows history [NAME]",
     "  --cron EXPR   (set) schedule dataset NAME's SetPollingSource: 5 cron fields\n"
     "                (minute hour day-of-month month day-of-week, UTC), or 6 with a\n"
     "                leading second; @hourly, @daily, ... macros\n"
     "  --none        (set) remove that schedule\n"
     "  --once        (run) run the named flows now (without names: the due ones),\n"
     "                print one line per run and exit (1 if a run failed); without\n"
     "                --once, run due flows until SIGINT/SIGTERM, logging on stderr\n",
     "silt flows set dumps --cron '*/30 * * * *'\nsilt flows run --once dumps\nsilt flows run\n"
     "silt flows history dumps\n"},
    {"txn", "transactions of a files dataset",
     "silt txn start NAME[@BRANCH] --type snapshot|append|update|delete\n"
     "silt txn put NAME RID FILE|DIR... [--base DIR] | put NAME RID FILE --as PATH\n"
     "silt txn rm NAME RID PATH\nsilt txn commit NAME RID\nsilt txn abort NAME RID\n"
     "silt txn list NAME[@BRANCH]\nsilt txn recover NAME[@BRANCH]",
     "  --type T      transaction type (start)\n"
     "  --base DIR    logical paths relative to DIR (put)\n"
     "  --as PATH     the logical path of the only file (put)\n",
     "rid=$(silt txn start raw --type snapshot)\nsilt txn put raw \"$rid\" data/\nsilt txn commit raw \"$rid\"\n"},
    {"upload", "start + put + commit one transaction, all or nothing",
     "silt upload NAME[@BRANCH] FILE|DIR... [--base DIR] [--type update|append|snapshot] [--as PATH]",
     "  --type T      transaction type (default update)\n"
     "  --base DIR    logical paths relative to DIR\n"
     "  --as PATH     the logical path of the only file\n",
     "silt upload raw data/ --type snapshot\n"},
    {"files",
     "the files of a view of a files dataset (on a terminal: a header row, or \"(no files)\"; "
     "in a pipe: PATH, SIZE, CONTENT HASH, TRANSACTION, TIME separated by tabs)",
     "silt files NAME[@BRANCH] [--as-of REF | --range START..END]",
     "  --as-of REF          the view as of a transaction rid, block, sequence number or RFC 3339 time (alias --at)\n"
     "  --range START..END   the files written from START to END\n",
     "silt files raw\n"},
    {"cat", "print a file of a view", "silt cat NAME[@BRANCH] PATH [--as-of REF]",
     "  --as-of REF   the view as of a transaction rid, block, sequence number or RFC 3339 time (alias --at)\n",
     "silt cat raw data/a.csv --as-of 2030-01-01T00:00:00Z\n"},
    {"branch", "branches of a dataset",
     "silt branch create NAME BRANCH [--from BRANCH | --at RID]\nsilt branch list NAME\nsilt branch delete NAME BRANCH",
     "  --from BRANCH   fork from another branch's head\n"
     "  --at RID        fork at a committed transaction\n",
     "silt branch create raw dev\nsilt upload raw@dev fix.csv\n"},
    {"retention", "retention policies and marks of a files dataset",
     "silt retention set NAME --keep-days N [--branch B]\nsilt retention show NAME\n"
     "silt retention mark NAME [--dry-run]\nsilt retention marks NAME\nsilt retention unmark NAME RID|--all",
     "  --keep-days N   keep the views of the last N days\n"
     "  --branch B      the policy of one branch (default: every branch)\n"
     "  --dry-run       show what would be marked\n",
     "silt retention set raw --keep-days 30\nsilt retention mark raw --dry-run\n"},
    {"gc", "delete objects no retained view needs, and crash leftovers", "silt gc [NAME...] [--dry-run]",
     "  --dry-run   report what would be deleted\n", "silt gc --dry-run\n"},
    {"log", "the metadata blocks of a dataset, newest first",
     "silt log NAME[@BRANCH] [-n N] [--as-of REF] [--detail | --yaml | --json]",
     "  -n N       at most N blocks\n"
     "  --as-of R  start at block R (hash or prefix, sequence number, RFC 3339 time, rid)\n"
     "  --detail   each block's main fields: for AddData the records and offsets, data and\n"
     "             checkpoint hashes and sizes, watermark and source state\n"
     "  --yaml     full blocks as YAML\n",
     "silt log sales -n 3\nsilt log sales --detail\n"},
    {"append", "append metadata events to a dataset", "silt append NAME EVENT.yaml...", NULL,
     "silt append sales set-info.yaml\n"},
    {"lineage", "the inputs and the consumers of a dataset, transitively", "silt lineage NAME [--format text|dot|json]",
     "  --format F   text (default), dot (Graphviz) or json (also with --json)\n",
     "silt lineage hottest-days --format dot | dot -Tsvg >lineage.svg\n"},
    {"reset", "move a dataset's head back to an earlier block", "silt reset NAME[@BRANCH] --to BLOCK [--force]",
     "  --to BLOCK   the block to keep as the head: its hash, a unique hash prefix or its sequence number\n"
     "  --force      reset even though derivatives consumed the dropped blocks\n",
     "silt reset readings --to 3\n"},
    {"verify", "check every hash and chain rule of datasets (and replay derivatives)",
     "silt verify NAME...|--all [--no-replay]",
     "  --all         every dataset of the workspace\n"
     "  --no-replay   do not run a derivative's ExecuteTransforms again (hashes and chain rules only)\n",
     "silt verify --all\nsilt verify hottest-days --no-replay\n"},
    {"block", "hash or decode a metadata block", "silt block hash FILE.yaml\nsilt block decode FILE", NULL,
     "silt block decode .silt/datasets/*/blocks/f1620…\n"},
    {"serve", "the HTTP node: Foundry datasets API v2, ODF routes, the flow scheduler",
     "silt serve [--listen HOST:PORT] [--workspace DIR] [--max-upload SIZE] [--allow-origin ORIGIN]...",
     "  --listen HOST:PORT        address (default 127.0.0.1:8080; port 0 = any free port)\n"
     "  --max-upload SIZE         largest request body, e.g. 512M (default 16G)\n"
     "  --allow-origin ORIGIN     allow browser calls from ORIGIN (repeatable; '*' = any)\n"
     "  --connection-timeout S    close idle connections after S seconds (default 60)\n",
     "SILT_ADMIN_TOKEN=secret silt serve --listen 127.0.0.1:0\n"},
    {"token", "bearer tokens of silt serve",
     "silt token create NAME [--read | --write | --admin] [--dataset PATTERN]... [--expires-days N]\n"
     "silt token list\nsilt token revoke NAME",
     "  --read | --write | --admin   the scope (default read)\n"
     "  --dataset PATTERN            only datasets matching the glob (repeatable)\n"
     "  --expires-days N             expires after N days\n",
     "silt token create loader --write --dataset 'sales.*'\n"},
    {"help", "help on a command", "silt help [COMMAND]", NULL, "silt help sql\n"},
};

#define NHELP (sizeof HELP / sizeof HELP[0])

static const help_entry *find(const char *name)
{
    if (strcmp(name, "ls") == 0)
        name = "list";
    for (size_t i = 0; i < NHELP; i++)
        if (strcmp(HELP[i].name, name) == 0)
            return &HELP[i];
    return NULL;
}

static void print_entry(FILE *f, const help_entry *h)
{
    fprintf(f, "silt %s — %s\n\nUsage:\n", h->name, h->summary);
    for (const char *p = h->usage; *p;) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        fprintf(f, "  %.*s\n", (int)n, p);
        p += n + (e ? 1 : 0);
    }
    if (h->options)
        fprintf(f, "\nOptions:\n%s", h->options);
    fprintf(f, "\nGlobal options:\n  --workspace DIR   the workspace to use\n  --json            machine-readable output: one JSON document on stdout;\n"
               "                    errors as {\"error\":{\"code\",\"message\"}} on stderr (docs/cli.md)\n"
               "  -q, --quiet       no progress line on the terminal (warnings and errors stay)\n");
    fprintf(f, "\nEnvironment:\n%s", ENV_TEXT);
    fprintf(f, "\nExample:\n");
    for (const char *p = h->example; *p;) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        fprintf(f, "  %.*s\n", (int)n, p);
        p += n + (e ? 1 : 0);
    }
    fprintf(f, "\nExit codes: 0 ok, 1 failed, 2 usage error.\n");
    if (interruptible(h->name))
        fprintf(f, "130: interrupted by Ctrl-C; a line on stderr says what was committed and what not.\n");
    else if (strcmp(h->name, "sql") == 0 || strcmp(h->name, "tail") == 0)
        fprintf(f, "130: interrupted by Ctrl-C while the result was written; a line on stderr says how many rows were.\n");
}

int cli_help_command(const char *name)
{
    const help_entry *h = find(name);
    if (!h)
        return -1;
    print_entry(stdout, h);
    return 0;
}

/* Levenshtein distance, capped (names are short). */
static size_t distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 31 || lb > 31)
        return 99;
    size_t d[32][32];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            size_t sub = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            size_t del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;
            size_t m = sub < del ? sub : del;
            d[i][j] = m < ins ? m : ins;
            /* a transposition counts as one edit */
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < d[i][j])
                d[i][j] = d[i - 2][j - 2] + 1;
        }
    return d[la][lb];
}

const char *cli_help_suggest(const char *name)
{
    const char *best = NULL;
    size_t bd = 3; /* at most two edits away */
    for (size_t i = 0; i < NHELP; i++) {
        size_t dd = distance(name, HELP[i].name);
        if (dd < bd) {
            bd = dd;
            best = HELP[i].name;
        }
    }
    return best;
}

/* roff-escapes a line ('\' and leading '.'/'\''). */
static void roff(FILE *f, const char *s, size_t n)
{
    if (n && (s[0] == '.' || s[0] == '\''))
        fputs("\\&", f);
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\\')
            fputs("\\e", f);
        else if (s[i] == '-')
            fputs("\\-", f);
        else
            fputc(s[i], f);
    }
    fputc('\n', f);
}

static void roff_lines(FILE *f, const char *text)
{
    for (const char *p = text; *p;) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        while (n && *p == ' ')
            p++, n--;
        roff(f, p, n);
        fputs(".br\n", f);
        p += n + (e ? 1 : 0);
    }
}

void cli_help_man(FILE *f)
{
    fprintf(f, ".TH SILT 1 \"\" \"silt %s\" \"User Commands\"\n.SH NAME\nsilt \\- versioned, verifiable dataset store\n",
            SILT_VERSION);
    fprintf(f, ".SH SYNOPSIS\n.B silt\n[\\-\\-workspace DIR] [\\-\\-json] [\\-q] COMMAND [ARGS]\n");
    fprintf(f, ".SH DESCRIPTION\nsilt keeps datasets as Open Data Fabric metadata chains over Parquet "
               "slices, and files datasets with Foundry-style transactions, views and branches.\n");
    fprintf(f, ".SH COMMANDS\n");
    for (size_t i = 0; i < NHELP; i++) {
        const help_entry *h = &HELP[i];
        fprintf(f, ".SS %s\n", h->name);
        roff(f, h->summary, strlen(h->summary));
        fputs(".PP\n.nf\n", f);
        roff_lines(f, h->usage);
        fputs(".fi\n", f);
        if (h->options) {
            fputs(".PP\n.nf\n", f);
            roff_lines(f, h->options);
            fputs(".fi\n", f);
        }
        fputs(".PP\nExample:\n.nf\n", f);
        roff_lines(f, h->example);
        fputs(".fi\n", f);
    }
    fputs(".SH ENVIRONMENT\n.nf\n", f);
    roff_lines(f, ENV_TEXT);
    fputs(".fi\n.SH EXIT STATUS\n0 ok, 1 the operation failed, 2 usage error.\n", f);
}

/* The flags ("--x" words) of an entry's options, space-separated. */
static void flags_of(const help_entry *h, char *out, size_t cap)
{
    out[0] = '\0';
    for (const char *p = h->options ? h->options : ""; (p = strstr(p, "-")) != NULL;) {
        bool start = p == h->options || p[-1] == ' ' || p[-1] == '\n';
        size_t n = strcspn(p, " ,\n|");
        if (start && n > 1 && (p[1] == '-' || n == 2) && strlen(out) + n + 2 < cap) {
            char word[64];
            snprintf(word, sizeof word, "%.*s", (int)n, p);
            if (!strstr(out, word)) {
                strcat(out, out[0] ? " " : "");
                strcat(out, word);
            }
        }
        p += n ? n : 1;
    }
}

int cli_help_completion(const char *shell)
{
    char flags[512];
    if (strcmp(shell, "bash") == 0) {
        printf("# bash completion for silt (generated by 'silt help --completion bash')\n_silt() {\n"
               "    local cur=${COMP_WORDS[COMP_CWORD]} cmd=${COMP_WORDS[1]}\n"
               "    if [ \"$COMP_CWORD\" -eq 1 ]; then\n        COMPREPLY=($(compgen -W \"");
        for (size_t i = 0; i < NHELP; i++)
            printf("%s%s", i ? " " : "", HELP[i].name);
        printf(" --help --version --workspace --json --quiet\" -- \"$cur\"))\n        return\n    fi\n    case $cmd in\n");
        for (size_t i = 0; i < NHELP; i++) {
            flags_of(&HELP[i], flags, sizeof flags);
            printf("    %s) COMPREPLY=($(compgen -W \"%s%s--help --json\" -- \"$cur\") $(compgen -f -- \"$cur\")) ;;\n",
                   HELP[i].name, flags, flags[0] ? " " : "");
        }
        printf("    esac\n}\ncomplete -F _silt silt\n");
        return 0;
    }
    if (strcmp(shell, "zsh") == 0) {
        printf("#compdef silt\n# zsh completion for silt (generated by 'silt help --completion zsh')\n_silt() {\n"
               "    local -a commands\n    commands=(\n");
        for (size_t i = 0; i < NHELP; i++)
            printf("        '%s:%s'\n", HELP[i].name, HELP[i].summary);
        printf("    )\n    if (( CURRENT == 2 )); then\n        _describe 'command' commands\n        return\n    fi\n"
               "    case $words[2] in\n");
        for (size_t i = 0; i < NHELP; i++) {
            flags_of(&HELP[i], flags, sizeof flags);
            printf("    %s) _alternative 'flags:flag:(%s%s--help --json)' 'files:file:_files' ;;\n", HELP[i].name,
                   flags, flags[0] ? " " : "");
        }
        printf("    esac\n}\n_silt \"$@\"\n");
        return 0;
    }
    return -1;
}
