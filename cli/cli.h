/* cli.h — shared state of the `silt` command.
 *
 * The CLI uses only the public API (include/silt.h) plus jansson for its own
 * JSON output. Exit codes: 0 ok, 1 the operation failed (message on stderr
 * prefixed "silt: "), 2 usage error.
 */
#ifndef SILT_CLI_H
#define SILT_CLI_H

#include <stdbool.h>

#include "silt.h"

#define EXIT_OK 0
#define EXIT_FAIL 1
#define EXIT_USAGE 2
#define EXIT_INTERRUPTED 130 /* Ctrl-C (128 + SIGINT) */

typedef struct cli_ctx {
    const char *workspace_dir; /* --workspace, or NULL */
    bool json;                 /* --json */
    bool quiet;                /* -q / --quiet: no progress line (warnings and errors stay) */
} cli_ctx;

/* progress.c: the progress line on a terminal, and Ctrl-C. */
typedef struct cli_progress {
    bool on;          /* stderr is a terminal and not --quiet */
    bool drawn;       /* a line is on the screen */
    bool seen;        /* the library reported at least once (snap is valid) */
    char label[128];  /* e.g. the dataset name */
    double t0, last;  /* monotonic seconds: start, last draw */
    double interval;  /* seconds between draws (SILT_PROGRESS_INTERVAL_MS) */
    silt_progress snap; /* the last counters reported (snap.item unused: see item) */
    char item[256];   /* the last item reported ("" = none) */
} cli_progress;
void cli_progress_begin(cli_progress *p, const cli_ctx *c, const char *label);
/* A silt_progress_fn; ctx is a cli_progress. Returns nonzero after Ctrl-C. */
int cli_progress_fn(void *ctx, const silt_progress *s);
/* Erases the line (before a warning; the next report draws it again). */
void cli_progress_clear(cli_progress *p);
void cli_progress_end(cli_progress *p);
/* SIGINT sets a flag instead of killing (once: a second Ctrl-C kills). */
void cli_interrupt_catch(void);
bool cli_interrupted(void);

/* Errors. Without --json: one line "silt: <msg>" on stderr. With --json:
 * one line {"error":{"code":"NOT_FOUND","message":"<msg>"}} on stderr; the
 * code names (cli_error_code_name) follow the SILT_E* codes, "USAGE" for a
 * usage error (exit 2). Exit codes are the same either way. */
#define CLI_EUSAGE (-100) /* pseudo-code of a usage error (never from the library) */
const char *cli_error_code_name(int code);
/* Prints <msg> (or the library's last error and its code when fmt is NULL;
 * a CLI message without a code is "INTERNAL") and returns EXIT_FAIL. */
int cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Same with the SILT_E* code of the failure (e.g. SILT_EIO for a write error). */
int cli_fail_code(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints <msg> plus a usage hint ("USAGE" with --json) and returns EXIT_USAGE. */
int cli_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints `o` as one line of JSON on stdout and decrefs it (steals the
 * reference; NULL = out of memory, reported as an error). */
#include <jansson.h>
void cli_json_print(json_t *o);
/* The same for a borrowed `o` (not decref'd). Every --json answer goes
 * through these two: one compact JSON document on one line (docs/cli.md,
 * "one layout"). */
void cli_json_write(const json_t *o);
/* {"name","id","rid"} of `ds` (new reference), NULL with the library error.
 * The one key set of the JSON output (docs/cli.md): an object that IS a
 * dataset has "name", "id" (did:odf:…) and "rid"; an object that IS a
 * transaction has "rid"; an object that REFERS to a transaction has
 * "transactionRid", one that refers to a dataset has "dataset" ({"name",
 * "id","rid"} or, in listings of another resource, its name). */
json_t *cli_dataset_json(silt_dataset *ds);
/* Text output shows every time in one precision: RFC 3339 UTC with
 * milliseconds ("2024-01-02T03:04:05.000Z"). Returns `t` so written into
 * buf, or `t` unchanged when it is not a UTC RFC 3339 time ("-" for NULL). */
#define CLI_TIME_MAX 40
const char *cli_time(char buf[CLI_TIME_MAX], const char *t);
/* Value of option `name` at argv[*i] ("--name V" or "--name=V"): returns
 * 1 and sets *val (borrowed from argv) when argv[*i] is that option, 0 when
 * it is not, -1 when the value is missing (cmd_query.c). */
int cli_opt_value(int argc, char **argv, int *i, const char *name, const char **val);
/* as_of.c: `--as-of REF` (a block hash or unique prefix, a sequence number,
 * an RFC 3339 time or a transaction rid). cli_as_of: the block (70 bytes)
 * and the newest transaction at or before it (64 bytes, may be NULL);
 * cli_as_of_rid: only that transaction, an error when there is none;
 * cli_sql_as_of: rewrites sql's NAME=REF items into NAME=BLOCK (the new
 * strings in *owned, n entries: free with cli_strv_free). Each prints the
 * error and returns EXIT_FAIL, or 0. */
int cli_as_of(silt_dataset *ds, const char *ref, char *block, char *rid);
int cli_as_of_rid(silt_dataset *ds, const char *ref, char *rid);
int cli_sql_as_of(silt_workspace *ws, const char **items, size_t n, char ***owned);
void cli_strv_free(char **v, size_t n);
/* Opens the workspace or prints the error. Returns 0 or EXIT_FAIL. */
int cli_open_workspace(cli_ctx *c, silt_workspace **ws);

typedef int (*cli_cmd_fn)(cli_ctx *c, int argc, char **argv);

/* help.c: per-command help (-1 for an unknown command), the nearest
 * command name to a misspelt one (NULL if none is close), the man page and
 * shell completions generated from the same table. */
#include <stdio.h>
int cli_help_command(const char *name);
const char *cli_help_suggest(const char *name);
void cli_help_man(FILE *f);
int cli_help_completion(const char *shell);

/* describe.c: what info and log --detail say (public API only). */
#include <jansson.h>
/* The JSON object of a block (caller decrefs), NULL on error. */
json_t *cli_block_json(const silt_block *b);
/* Adds description, keywords, license, schema, sources and branches of
 * `ds` (named `name`) to `o`; -1 with the library error on failure. */
int cli_describe(json_t *o, silt_workspace *ws, silt_dataset *ds, const char *name);
/* Prints those keys of `o` as the text lines of `silt info`. */
void cli_describe_print(const json_t *o, silt_dataset *ds);
/* Prints the indented detail lines of one block (`silt log --detail`). */
void cli_block_detail_print(const json_t *block);

int cmd_init(cli_ctx *c, int argc, char **argv);
int cmd_new(cli_ctx *c, int argc, char **argv);
int cmd_add(cli_ctx *c, int argc, char **argv);
int cmd_list(cli_ctx *c, int argc, char **argv);
int cmd_info(cli_ctx *c, int argc, char **argv);
int cmd_rename(cli_ctx *c, int argc, char **argv);
int cmd_delete(cli_ctx *c, int argc, char **argv);
int cmd_log(cli_ctx *c, int argc, char **argv);
int cmd_append(cli_ctx *c, int argc, char **argv);
int cmd_verify(cli_ctx *c, int argc, char **argv);
int cmd_block(cli_ctx *c, int argc, char **argv);
int cmd_ingest(cli_ctx *c, int argc, char **argv);
int cmd_sql(cli_ctx *c, int argc, char **argv);
int cmd_tail(cli_ctx *c, int argc, char **argv);
int cmd_schema(cli_ctx *c, int argc, char **argv);
int cmd_sources(cli_ctx *c, int argc, char **argv);
int cmd_flows(cli_ctx *c, int argc, char **argv);
int cmd_pull(cli_ctx *c, int argc, char **argv);
int cmd_reset(cli_ctx *c, int argc, char **argv);
int cmd_lineage(cli_ctx *c, int argc, char **argv);
int cmd_txn(cli_ctx *c, int argc, char **argv);
int cmd_upload(cli_ctx *c, int argc, char **argv);
int cmd_files(cli_ctx *c, int argc, char **argv);
int cmd_cat(cli_ctx *c, int argc, char **argv);
int cmd_branch(cli_ctx *c, int argc, char **argv);
int cmd_retention(cli_ctx *c, int argc, char **argv);
int cmd_gc(cli_ctx *c, int argc, char **argv);
int cmd_serve(cli_ctx *c, int argc, char **argv);
int cmd_token(cli_ctx *c, int argc, char **argv);
int cmd_read_table(cli_ctx *c, int argc, char **argv);
int cmd_repo(cli_ctx *c, int argc, char **argv);
int cmd_push(cli_ctx *c, int argc, char **argv);
/* cmd_remote.c: the transfer options --force, --jobs N, --token-env VAR,
 * --as NAME at argv[*i] into *o: 1 when taken, 0 when argv[*i] is none of
 * them, -1 with *bad after printing a usage error. */
int cli_transfer_opt(int argc, char **argv, int *i, silt_transfer_opts *o, bool *bad);
/* Pulls one remote dataset (URL or REPO/NAME) into the workspace and
 * prints its line (or appends its object to arr with --json). */
int cli_remote_pull_one(cli_ctx *c, silt_workspace *ws, const char *remote, const silt_transfer_opts *o,
                        json_t *arr);

#endif
