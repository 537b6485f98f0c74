/* cmd_txn.c — files datasets from the command line: txn (start, put, rm,
 * commit, abort, list, recover), upload, files, cat, branch (create, list,
 * delete).
 * Uses the public API only. Output: one line per item; --json prints one
 * JSON document. */
#include "cli.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cmd_txn(cli_ctx *c, int argc, char **argv);
int cmd_upload(cli_ctx *c, int argc, char **argv);
int cmd_files(cli_ctx *c, int argc, char **argv);
int cmd_cat(cli_ctx *c, int argc, char **argv);
int cmd_branch(cli_ctx *c, int argc, char **argv);

static int open_ds(cli_ctx *c, const char *ref, silt_workspace **ws, silt_dataset **ds)
{
    *ws = NULL;
    *ds = NULL;
    if (cli_open_workspace(c, ws))
        return EXIT_FAIL;
    if (silt_dataset_open(ds, *ws, ref) < 0) {
        int rc = cli_fail(NULL);
        silt_workspace_free(*ws);
        *ws = NULL;
        return rc;
    }
    return 0;
}

static int done(silt_workspace *ws, silt_dataset *ds, int rc)
{
    silt_dataset_free(ds);
    silt_workspace_free(ws);
    return rc;
}

static void print_json(json_t *j) { cli_json_print(j); }

static json_t *txn_json(const silt_txn_info *t)
{
    json_t *j = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s?,s:s?}", "rid", t->rid, "branch", t->branch, "type",
                          silt_txn_type_name(t->type), "status", silt_txn_status_name(t->status), "created",
                          t->created, "closed", t->closed[0] ? t->closed : NULL, "block", t->block[0] ? t->block : NULL);
    if (j && t->owner_pid > 0)
        json_object_set_new(j, "owner", json_pack("{s:I,s:I,s:s}", "pid", (json_int_t)t->owner_pid, "startTime",
                                                  (json_int_t)t->owner_start, "host", t->owner_host));
    if (j)
        json_object_set_new(j, "abandoned", json_boolean(t->abandoned));
    if (j && t->reason[0])
        json_object_set_new(j, "reason", json_string(t->reason));
    return j;
}

/* One line of `txn list`: rid, type, status, created, closed, and why an
 * OPEN transaction is abandoned or silt aborted one. */
static void txn_print(const silt_txn_info *t)
{
    char t1[CLI_TIME_MAX], t2[CLI_TIME_MAX];
    printf("%s  %-8s  %-9s  %s  %s", t->rid, silt_txn_type_name(t->type), silt_txn_status_name(t->status),
           cli_time(t1, t->created), t->closed[0] ? cli_time(t2, t->closed) : "-");
    if (t->abandoned)
        printf("  (abandoned: process %ld on host %s is gone)", t->owner_pid, t->owner_host);
    else if (t->reason[0])
        printf("  (%s)", t->reason);
    putchar('\n');
}

/* Prints transactions as one JSON array. */
static void print_txns_json(const silt_txn_info *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, txn_json(&v[i]));
    print_json(a);
}

static int txn_list(cli_ctx *c, const char *ref)
{
    silt_workspace *ws;
    silt_dataset *ds;
    if (open_ds(c, ref, &ws, &ds))
        return EXIT_FAIL;
    silt_txn_info *v = NULL;
    size_t n = 0;
    if (silt_txn_list(&v, &n, ds) < 0)
        return done(ws, ds, cli_fail(NULL));
    if (c->json) {
        print_txns_json(v, n);
    } else {
        /* a header row on a terminal only (scripts read the lines) */
        if (n && isatty(STDOUT_FILENO))
            printf("%-61s  %-8s  %-9s  %-24s  %s\n", "RID", "TYPE", "STATUS", "CREATED", "CLOSED");
        for (size_t i = 0; i < n; i++)
            txn_print(&v[i]);
    }
    free(v);
    return done(ws, ds, EXIT_OK);
}

/* txn recover NAME[@BRANCH]: without a branch, every branch. */
static int txn_recover(cli_ctx *c, const char *ref)
{
    silt_workspace *ws;
    silt_dataset *ds;
    if (open_ds(c, ref, &ws, &ds))
        return EXIT_FAIL;
    silt_txn_info *v = NULL;
    size_t n = 0;
    if (silt_txn_recover(&v, &n, ds, strchr(ref, '@') == NULL) < 0)
        return done(ws, ds, cli_fail(NULL));
    if (c->json) {
        print_txns_json(v, n);
    } else if (n == 0) {
        printf("%s: no abandoned transaction\n", ref);
    } else {
        for (size_t i = 0; i < n; i++)
            printf("aborted %s (branch %s, %s)\n", v[i].rid, v[i].branch, v[i].reason);
    }
    free(v);
    return done(ws, ds, EXIT_OK);
}

static int txn_start(cli_ctx *c, int argc, char **argv)
{
    const char *ref = NULL, *type = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--type") == 0 && i + 1 < argc)
            type = argv[++i];
        else if (strncmp(argv[i], "--type=", 7) == 0)
            type = argv[i] + 7;
        else if (argv[i][0] == '-')
            return cli_usage("txn start: unknown option '%s'", argv[i]);
        else if (!ref)
            ref = argv[i];
        else
            return cli_usage("txn start takes one NAME[@BRANCH]");
    }
    if (!ref || !type)
        return cli_usage("usage: txn start NAME[@BRANCH] --type snapshot|append|update|delete");
    silt_txn_type t;
    if (silt_txn_type_parse(&t, type) < 0)
        return cli_usage("%s", silt_error_last());
    silt_workspace *ws;
    silt_dataset *ds;
    if (open_ds(c, ref, &ws, &ds))
        return EXIT_FAIL;
    char *rid = NULL;
    if (silt_txn_start(&rid, ds, t) < 0)
        return done(ws, ds, cli_fail(NULL));
    if (c->json)
        cli_json_print(json_pack("{s:s,s:s,s:s,s:o*}", "rid", rid, "type", silt_txn_type_name(t), "status", "OPEN",
                                 "dataset", cli_dataset_json(ds)));
    else
        printf("%s\n", rid);
    free(rid);
    return done(ws, ds, EXIT_OK);
}

/* Inputs and options shared by `upload` and `txn put`. */
typedef struct put_args {
    const char *ref, *rid, *as, *base, *type;
    const char **files;
    int nf;
} put_args;

/* Parses [--base DIR] [--as PATH] [--type T] (type only when allowed) and
 * the operands: NAME (and RID when want_rid), then the inputs ("--" ends
 * the options). Returns 0 or the usage exit code (message printed). */
static int parse_put_args(put_args *a, int argc, char **argv, bool want_rid, const char *cmd)
{
    memset(a, 0, sizeof *a);
    a->files = calloc((size_t)argc + 1, sizeof *a->files);
    if (!a->files)
        return cli_fail_code(SILT_ENOMEM, "out of memory");
    bool opts = true;
    for (int i = 0; i < argc; i++) {
        const char *v = argv[i];
        if (opts && strcmp(v, "--") == 0)
            opts = false;
        else if (opts && !want_rid && strcmp(v, "--type") == 0 && i + 1 < argc)
            a->type = argv[++i];
        else if (opts && strcmp(v, "--as") == 0 && i + 1 < argc)
            a->as = argv[++i];
        else if (opts && strcmp(v, "--base") == 0 && i + 1 < argc)
            a->base = argv[++i];
        else if (opts && v[0] == '-' && v[1])
            return cli_usage("%s: unknown option '%s'", cmd, v);
        else if (!a->ref)
            a->ref = v;
        else if (want_rid && !a->rid)
            a->rid = v;
        else
            a->files[a->nf++] = v;
    }
    if (a->as && a->base)
        return cli_usage("%s: give either --as or --base", cmd);
    return 0;
}

static const char *const PUT_USAGE =
    "usage: txn put NAME RID FILE|DIR... [--base DIR] | txn put NAME RID FILE --as PATH | txn put NAME RID FILE PATH";

static int txn_put(cli_ctx *c, int argc, char **argv)
{
    put_args a;
    int urc = parse_put_args(&a, argc - 1, argv + 1, true, "txn put");
    if (!urc && (!a.ref || !a.rid || a.nf == 0))
        urc = cli_usage("%s", PUT_USAGE);
    else if (!urc && a.as && a.nf != 1)
        urc = cli_usage("txn put: --as needs exactly one FILE");
    if (urc) {
        free(a.files);
        return urc;
    }
    if (!a.as && !a.base && a.nf == 2) { /* the one-file form: LOCAL_FILE LOGICAL_PATH */
        a.as = a.files[1];
        a.nf = 1;
    }
    silt_workspace *ws;
    silt_dataset *ds;
    silt_put_list *l = NULL;
    int rc = open_ds(c, a.ref, &ws, &ds);
    if (!rc && (silt_put_list_build(&l, a.files, (size_t)a.nf, a.base, a.as) < 0 ||
                silt_txn_put_list(ds, a.rid, l) < 0))
        rc = cli_fail(NULL);
    if (!rc && c->json)
        cli_json_print(json_pack("{s:s,s:I,s:o*}", "rid", a.rid, "files", (json_int_t)silt_put_list_count(l),
                                 "dataset", cli_dataset_json(ds)));
    silt_put_list_free(l);
    free(a.files);
    return done(ws, ds, rc); /* NULL handles when open_ds failed */
}

int cmd_txn(cli_ctx *c, int argc, char **argv)
{
    if (argc < 1)
        return cli_usage("txn needs a subcommand: start, put, rm, commit, abort, list, recover");
    const char *sub = argv[0];
    if (strcmp(sub, "start") == 0)
        return txn_start(c, argc, argv);
    if (strcmp(sub, "put") == 0)
        return txn_put(c, argc, argv);
    if (strcmp(sub, "list") == 0 || strcmp(sub, "recover") == 0) {
        if (argc != 2)
            return cli_usage("usage: txn %s NAME[@BRANCH]", sub);
        return sub[0] == 'l' ? txn_list(c, argv[1]) : txn_recover(c, argv[1]);
    }
    bool rm = strcmp(sub, "rm") == 0;
    bool commit = strcmp(sub, "commit") == 0, abrt = strcmp(sub, "abort") == 0;
    if (!rm && !commit && !abrt)
        return cli_usage("txn: unknown subcommand '%s'", sub);
    if ((rm && argc != 4) || ((commit || abrt) && argc != 3))
        return cli_usage(rm ? "usage: txn rm NAME RID LOGICAL_PATH" : "usage: txn commit|abort NAME RID");
    silt_workspace *ws;
    silt_dataset *ds;
    if (open_ds(c, argv[1], &ws, &ds))
        return EXIT_FAIL;
    int rc;
    char block[72] = "";
    if (rm)
        rc = silt_txn_rm(ds, argv[2], argv[3]);
    else if (commit)
        rc = silt_txn_commit(ds, argv[2], block);
    else
        rc = silt_txn_abort(ds, argv[2]);
    if (rc < 0)
        return done(ws, ds, cli_fail(NULL));
    if (c->json) {
        json_t *j = json_pack("{s:s,s:s,s:o*}", "rid", argv[2], "status",
                              rm ? "OPEN" : commit ? "COMMITTED" : "ABORTED", "dataset", cli_dataset_json(ds));
        if (j && commit)
            json_object_set_new(j, "block", json_string(block));
        if (j && rm)
            json_object_set_new(j, "removed", json_string(argv[3]));
        cli_json_print(j);
    } else if (commit) {
        printf("%s\n", block);
    }
    return done(ws, ds, EXIT_OK);
}

static const char *const UPLOAD_USAGE =
    "usage: upload NAME[@BRANCH] FILE|DIR... [--base DIR] [--type update|append|snapshot] [--as PATH]";

int cmd_upload(cli_ctx *c, int argc, char **argv)
{
    put_args a;
    int urc = parse_put_args(&a, argc, argv, false, "upload");
    silt_txn_type t = SILT_TXN_UPDATE;
    if (!urc && (!a.ref || a.nf == 0))
        urc = cli_usage("%s", UPLOAD_USAGE);
    else if (!urc && a.type && (silt_txn_type_parse(&t, a.type) < 0 || t == SILT_TXN_DELETE))
        urc = cli_usage("upload: --type must be update, append or snapshot");
    else if (!urc && a.as && a.nf != 1)
        urc = cli_usage("upload: --as needs exactly one FILE");
    if (urc) {
        free(a.files);
        return urc;
    }
    silt_workspace *ws;
    silt_dataset *ds;
    if (open_ds(c, a.ref, &ws, &ds)) {
        free(a.files);
        return EXIT_FAIL;
    }
    /* every input is checked before anything is written; a failed upload
     * leaves no transaction and no object behind (silt_txn_upload) */
    silt_put_list *l = NULL;
    char *rid = NULL;
    char block[72] = "";
    int rc = silt_put_list_build(&l, a.files, (size_t)a.nf, a.base, a.as);
    cli_progress prog; /* files and bytes stored (a terminal only); Ctrl-C rolls back */
    cli_progress_begin(&prog, c, a.ref);
    silt_dataset_set_progress(ds, cli_progress_fn, &prog);
    cli_interrupt_catch();
    if (rc == 0)
        rc = silt_txn_upload(&rid, block, ds, t, l);
    cli_progress_end(&prog);
    size_t n = silt_put_list_count(l);
    silt_put_list_free(l);
    free(a.files);
    if (cli_interrupted()) {
        if (rc < 0 && rc != SILT_ECANCELED)
            cli_fail(NULL);
        if (rc < 0)
            fprintf(stderr, "silt: interrupted: upload to '%s': 0 of %zu files committed; the upload was rolled "
                            "back, nothing of it was committed\n", a.ref, n);
        else
            fprintf(stderr, "silt: interrupted: upload to '%s': %zu of %zu files committed (transaction %s); "
                            "everything was committed\n", a.ref, n, n, rid);
        free(rid);
        return done(ws, ds, EXIT_INTERRUPTED);
    }
    if (rc < 0)
        return done(ws, ds, cli_fail(NULL));
    if (c->json)
        cli_json_print(json_pack("{s:s,s:s,s:s,s:s,s:I,s:o*}", "rid", rid, "type", silt_txn_type_name(t), "status",
                                 "COMMITTED", "block", block, "files", (json_int_t)n, "dataset",
                                 cli_dataset_json(ds)));
    else
        printf("%s\n", rid);
    free(rid);
    return done(ws, ds, EXIT_OK);
}

int cmd_files(cli_ctx *c, int argc, char **argv);
int cmd_cat(cli_ctx *c, int argc, char **argv);
int cmd_branch(cli_ctx *c, int argc, char **argv);

/* `silt files` on a terminal: a header row and aligned columns, or
 * "(no files)" for an empty view. (Not on a terminal the lines are the
 * tab-separated fields only, for scripts.) */
/* Was the file of e purged by retention (rid into prid)? Without a purge
 * record (pg NULL: it could not be read) nothing counts as purged. */
static bool entry_purged(const silt_purged *pg, const silt_file_entry *e, char prid[64])
{
    prid[0] = '\0';
    return pg && silt_purged_check(prid, pg, e->content_hash) == 1;
}

static void files_print_table(const silt_purged *pg, const silt_view *v, size_t n)
{
    if (n == 0) {
        printf("(no files)\n");
        return;
    }
    int wp = 4, ws = 4;
    for (size_t i = 0; i < n; i++) {
        const silt_file_entry *e = silt_view_entry(v, i);
        char num[24];
        int lp = (int)strlen(e->path), ls = snprintf(num, sizeof num, "%llu", (unsigned long long)e->size);
        wp = lp > wp ? lp : wp;
        ws = ls > ws ? ls : ws;
    }
    printf("%-*s  %*s  %-69s  %-61s  %s\n", wp, "PATH", ws, "SIZE", "CONTENT HASH", "TRANSACTION", "TIME");
    for (size_t i = 0; i < n; i++) {
        const silt_file_entry *e = silt_view_entry(v, i);
        char prid[64];
        bool purged = entry_purged(pg, e, prid);
        char t[CLI_TIME_MAX];
        printf("%-*s  %*llu  %-69s  %-61s  %s%s\n", wp, e->path, ws, (unsigned long long)e->size, e->content_hash,
               e->rid, cli_time(t, e->time), purged ? "  (purged by retention)" : "");
    }
}

int cmd_files(cli_ctx *c, int argc, char **argv)
{
    const char *ref = NULL, *at = NULL, *range = NULL;
    for (int i = 0; i < argc; i++) {
        if ((strcmp(argv[i], "--at") == 0 || strcmp(argv[i], "--as-of") == 0) && i + 1 < argc)
            at = argv[++i];
        else if (strcmp(argv[i], "--range") == 0 && i + 1 < argc)
            range = argv[++i];
        else if (argv[i][0] == '-')
            return cli_usage("files: unknown option '%s'", argv[i]);
        else if (!ref)
            ref = argv[i];
        else
            return cli_usage("files takes one NAME[@BRANCH]");
    }
    if (!ref)
        return cli_usage("usage: files NAME[@BRANCH] [--at RID | --range START..END]");
    char *start = NULL, *end = NULL;
    if (range) {
        const char *dots = strstr(range, "..");
        if (!dots || dots == range || !dots[2])
            return cli_usage("files: --range needs START..END");
        start = strndup(range, (size_t)(dots - range));
        end = strdup(dots + 2);
        if (!start || !end) {
            free(start);
            free(end);
            return cli_fail_code(SILT_ENOMEM, "out of memory");
        }
    }
    silt_workspace *ws;
    silt_dataset *ds;
    int rc = open_ds(c, ref, &ws, &ds);
    silt_view *v = NULL;
    char rid[64];
    if (!rc && at && (rc = cli_as_of_rid(ds, at, rid)) == 0)
        at = rid;
    if (!rc && silt_files_view(&v, ds, at, start, end) < 0)
        rc = cli_fail(NULL);
    free(start);
    free(end);
    if (rc)
        return done(ws, ds, rc);
    size_t n = silt_view_count(v);
    /* the purge record is read once, not once per file */
    silt_purged *pg = NULL;
    if (silt_purged_load(&pg, ds) < 0)
        pg = NULL;
    if (c->json) {
        json_t *a = json_array();
        for (size_t i = 0; i < n; i++) {
            const silt_file_entry *e = silt_view_entry(v, i);
            char prid[64];
            bool purged = entry_purged(pg, e, prid);
            json_array_append_new(a, json_pack("{s:s,s:I,s:s,s:s,s:s,s:s,s:s,s:s}", "path", e->path, "size",
                                               (json_int_t)e->size, "contentHash", e->content_hash, "contentType",
                                               e->content_type, "transactionRid", e->rid, "transactionType",
                                               silt_txn_type_name(e->txn_type), "time", e->time, "status",
                                               purged ? "purged" : "ok"));
        }
        print_json(a);
    } else if (isatty(STDOUT_FILENO)) {
        files_print_table(pg, v, n);
    } else {
        for (size_t i = 0; i < n; i++) {
            const silt_file_entry *e = silt_view_entry(v, i);
            char prid[64];
            bool purged = entry_purged(pg, e, prid);
            /* a purged file gets a sixth column saying so */
            char t[CLI_TIME_MAX];
            printf("%s\t%llu\t%s\t%s\t%s%s\n", e->path, (unsigned long long)e->size, e->content_hash, e->rid,
                   cli_time(t, e->time), purged ? "\tpurged by retention" : "");
        }
    }
    silt_purged_free(pg);
    silt_view_free(v);
    return done(ws, ds, EXIT_OK);
}

int cmd_cat(cli_ctx *c, int argc, char **argv)
{
    const char *ref = NULL, *path = NULL, *at = NULL;
    bool ended = false; /* after "--": operands only */
    for (int i = 0; i < argc; i++) {
        bool opt = !ended && argv[i][0] == '-' && argv[i][1];
        if (opt && strcmp(argv[i], "--") == 0)
            ended = true;
        else if (opt && (strcmp(argv[i], "--at") == 0 || strcmp(argv[i], "--as-of") == 0) && i + 1 < argc)
            at = argv[++i];
        else if (opt)
            return cli_usage("cat: unknown option '%s'", argv[i]);
        else if (!ref)
            ref = argv[i];
        else if (!path)
            path = argv[i];
        else
            return cli_usage("usage: cat NAME[@BRANCH] PATH [--at RID]");
    }
    if (!ref || !path)
        return cli_usage("usage: cat NAME[@BRANCH] PATH [--at RID]");
    silt_workspace *ws;
    silt_dataset *ds;
    if (open_ds(c, ref, &ws, &ds))
        return EXIT_FAIL;
    char rid[64];
    if (at && cli_as_of_rid(ds, at, rid))
        return done(ws, ds, EXIT_FAIL);
    int rc = silt_files_cat(ds, path, at ? rid : NULL, stdout) < 0 ? cli_fail(NULL) : EXIT_OK;
    if (fflush(stdout) != 0 && rc == EXIT_OK)
        rc = cli_fail_code(SILT_EIO, "cat: write error");
    return done(ws, ds, rc);
}

int cmd_branch(cli_ctx *c, int argc, char **argv)
{
    if (argc < 2)
        return cli_usage("usage: branch create NAME BRANCH [--from BRANCH|--at RID] | list NAME | delete NAME BRANCH");
    const char *sub = argv[0];
    silt_workspace *ws;
    silt_dataset *ds;
    if (strcmp(sub, "list") == 0) {
        if (argc != 2)
            return cli_usage("usage: branch list NAME");
        if (open_ds(c, argv[1], &ws, &ds))
            return EXIT_FAIL;
        silt_branch_info *v = NULL;
        size_t n = 0;
        if (silt_branch_list(&v, &n, ds) < 0)
            return done(ws, ds, cli_fail(NULL));
        if (c->json) {
            json_t *a = json_array();
            for (size_t i = 0; i < n; i++)
                json_array_append_new(a, json_pack("{s:s,s:s,s:I,s:s?}", "name", v[i].name, "head", v[i].head,
                                                   "blocks", (json_int_t)v[i].num_blocks, "openTransactionRid",
                                                   v[i].open_txn[0] ? v[i].open_txn : NULL));
            print_json(a);
        } else {
            if (n && isatty(STDOUT_FILENO)) /* header on a terminal only */
                printf("NAME\tHEAD\tBLOCKS\tOPEN TRANSACTION\n");
            for (size_t i = 0; i < n; i++)
                printf("%s\t%s\t%llu%s%s\n", v[i].name, v[i].head, (unsigned long long)v[i].num_blocks,
                       v[i].open_txn[0] ? "\t" : "", v[i].open_txn);
        }
        free(v);
        return done(ws, ds, EXIT_OK);
    }
    if (strcmp(sub, "create") == 0) {
        const char *name = NULL, *branch = NULL, *from = NULL, *at = NULL;
        for (int i = 1; i < argc; i++) {
            if (strcmp(argv[i], "--from") == 0 && i + 1 < argc)
                from = argv[++i];
            else if (strcmp(argv[i], "--at") == 0 && i + 1 < argc)
                at = argv[++i];
            else if (argv[i][0] == '-')
                return cli_usage("branch create: unknown option '%s'", argv[i]);
            else if (!name)
                name = argv[i];
            else if (!branch)
                branch = argv[i];
            else
                return cli_usage("usage: branch create NAME BRANCH [--from BRANCH|--at RID]");
        }
        if (!name || !branch)
            return cli_usage("usage: branch create NAME BRANCH [--from BRANCH|--at RID]");
        if (from && at)
            return cli_usage("branch create: give either --from or --at");
        if (open_ds(c, name, &ws, &ds))
            return EXIT_FAIL;
        if (silt_branch_create(ds, branch, from, at) < 0)
            return done(ws, ds, cli_fail(NULL));
        if (!c->json)
            printf("Created branch %s of %s\n", branch, name);
        else
            cli_json_print(json_pack("{s:s,s:s,s:o*}", "name", branch, "status", "CREATED", "dataset",
                                     cli_dataset_json(ds)));
        return done(ws, ds, EXIT_OK);
    }
    if (strcmp(sub, "delete") == 0) {
        if (argc != 3)
            return cli_usage("usage: branch delete NAME BRANCH");
        if (open_ds(c, argv[1], &ws, &ds))
            return EXIT_FAIL;
        if (silt_branch_delete(ds, argv[2]) < 0)
            return done(ws, ds, cli_fail(NULL));
        if (!c->json)
            printf("Deleted branch %s of %s\n", argv[2], argv[1]);
        else
            cli_json_print(json_pack("{s:s,s:s,s:o*}", "name", argv[2], "status", "DELETED", "dataset",
                                     cli_dataset_json(ds)));
        return done(ws, ds, EXIT_OK);
    }
    return cli_usage("branch: unknown subcommand '%s'", sub);
}
