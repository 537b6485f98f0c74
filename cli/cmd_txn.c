/* cmd_txn.c — files datasets from the command line: txn (start, put, rm,
 * commit, abort, list), upload, files, cat, branch (create, list, delete).
 * Uses the public API only. Output: one line per item; --json prints one
 * JSON document. */
#include "cli.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static void print_json(json_t *j)
{
    char *s = j ? json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    if (s)
        puts(s);
    free(s);
    json_decref(j);
}

static json_t *txn_json(const silt_txn_info *t)
{
    return json_pack("{s:s,s:s,s:s,s:s,s:s,s:s?,s:s?}", "rid", t->rid, "branch", t->branch, "type",
                     silt_txn_type_name(t->type), "status", silt_txn_status_name(t->status), "created", t->created,
                     "closed", t->closed[0] ? t->closed : NULL, "block", t->block[0] ? t->block : NULL);
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
        json_t *a = json_array();
        for (size_t i = 0; i < n; i++)
            json_array_append_new(a, txn_json(&v[i]));
        print_json(a);
    } else {
        for (size_t i = 0; i < n; i++)
            printf("%s  %-8s  %-9s  %s  %s\n", v[i].rid, silt_txn_type_name(v[i].type),
                   silt_txn_status_name(v[i].status), v[i].created, v[i].closed[0] ? v[i].closed : "-");
    }
    free(v);
    return done(ws, ds, EXIT_OK);
}

int cmd_txn(cli_ctx *c, int argc, char **argv)
{
    if (argc < 1)
        return cli_usage("txn needs a subcommand: start, put, rm, commit, abort, list");
    const char *sub = argv[0];
    if (strcmp(sub, "start") == 0) {
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
            printf("{\"rid\":\"%s\"}\n", rid);
        else
            printf("%s\n", rid);
        free(rid);
        return done(ws, ds, EXIT_OK);
    }
    if (strcmp(sub, "list") == 0) {
        if (argc != 2)
            return cli_usage("usage: txn list NAME[@BRANCH]");
        return txn_list(c, argv[1]);
    }
    bool put = strcmp(sub, "put") == 0, rm = strcmp(sub, "rm") == 0;
    bool commit = strcmp(sub, "commit") == 0, abrt = strcmp(sub, "abort") == 0;
    if (!put && !rm && !commit && !abrt)
        return cli_usage("txn: unknown subcommand '%s'", sub);
    if ((put && (argc < 4 || argc > 5)) || (rm && argc != 4) || ((commit || abrt) && argc != 3))
        return cli_usage(put ? "usage: txn put NAME RID LOCAL_FILE [LOGICAL_PATH]"
                         : rm ? "usage: txn rm NAME RID LOGICAL_PATH"
                              : "usage: txn commit|abort NAME RID");
    silt_workspace *ws;
    silt_dataset *ds;
    if (open_ds(c, argv[1], &ws, &ds))
        return EXIT_FAIL;
    int rc;
    char block[72] = "";
    if (put)
        rc = silt_txn_put(ds, argv[2], argv[3], argc == 5 ? argv[4] : NULL);
    else if (rm)
        rc = silt_txn_rm(ds, argv[2], argv[3]);
    else if (commit)
        rc = silt_txn_commit(ds, argv[2], block);
    else
        rc = silt_txn_abort(ds, argv[2]);
    if (rc < 0)
        return done(ws, ds, cli_fail(NULL));
    if (commit) {
        if (c->json)
            printf("{\"rid\":\"%s\",\"status\":\"COMMITTED\",\"block\":\"%s\"}\n", argv[2], block);
        else
            printf("%s\n", block);
    }
    return done(ws, ds, EXIT_OK);
}

int cmd_upload(cli_ctx *c, int argc, char **argv)
{
    const char *ref = NULL, *as = NULL, *type = "update";
    char **files = calloc((size_t)argc + 1, sizeof *files);
    int nf = 0;
    if (!files)
        return cli_fail("out of memory");
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--type") == 0 && i + 1 < argc)
            type = argv[++i];
        else if (strcmp(argv[i], "--as") == 0 && i + 1 < argc)
            as = argv[++i];
        else if (argv[i][0] == '-' && argv[i][1]) {
            free(files);
            return cli_usage("upload: unknown option '%s'", argv[i]);
        } else if (!ref)
            ref = argv[i];
        else
            files[nf++] = argv[i];
    }
    silt_txn_type t;
    int urc = 0;
    if (!ref || nf == 0)
        urc = cli_usage("usage: upload NAME[@BRANCH] FILE... [--type update|append|snapshot] [--as PATH]");
    else if (silt_txn_type_parse(&t, type) < 0 || t == SILT_TXN_DELETE)
        urc = cli_usage("upload: --type must be update, append or snapshot");
    else if (as && nf != 1)
        urc = cli_usage("upload: --as needs exactly one FILE");
    if (urc) {
        free(files);
        return urc;
    }
    silt_workspace *ws;
    silt_dataset *ds;
    if (open_ds(c, ref, &ws, &ds)) {
        free(files);
        return EXIT_FAIL;
    }
    char *rid = NULL;
    char block[72] = "";
    int rc = silt_txn_start(&rid, ds, t);
    for (int i = 0; rc == 0 && i < nf; i++)
        rc = silt_txn_put(ds, rid, files[i], as);
    if (rc == 0)
        rc = silt_txn_commit(ds, rid, block);
    if (rc < 0) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", silt_error_last());
        if (rid) {
            silt_txn_info ti;
            if (silt_txn_get(&ti, ds, rid) == 0 && ti.status == SILT_TXN_OPEN)
                silt_txn_abort(ds, rid); /* nothing half-done stays open */
        }
        free(rid);
        free(files);
        return done(ws, ds, cli_fail("%s", msg));
    }
    if (c->json)
        printf("{\"rid\":\"%s\",\"block\":\"%s\",\"files\":%d}\n", rid, block, nf);
    else
        printf("%s\n", rid);
    free(rid);
    free(files);
    return done(ws, ds, EXIT_OK);
}

int cmd_files(cli_ctx *c, int argc, char **argv)
{
    const char *ref = NULL, *at = NULL, *range = NULL;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--at") == 0 && i + 1 < argc)
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
            return cli_fail("out of memory");
        }
    }
    silt_workspace *ws;
    silt_dataset *ds;
    int rc = open_ds(c, ref, &ws, &ds);
    silt_view *v = NULL;
    if (!rc && silt_files_view(&v, ds, at, start, end) < 0)
        rc = cli_fail(NULL);
    free(start);
    free(end);
    if (rc)
        return done(ws, ds, rc);
    size_t n = silt_view_count(v);
    if (c->json) {
        json_t *a = json_array();
        for (size_t i = 0; i < n; i++) {
            const silt_file_entry *e = silt_view_entry(v, i);
            char prid[64];
            bool purged = silt_files_purged(prid, ds, e->content_hash) == 1;
            json_array_append_new(a, json_pack("{s:s,s:I,s:s,s:s,s:s,s:s,s:s,s:s}", "path", e->path, "size",
                                               (json_int_t)e->size, "contentHash", e->content_hash, "contentType",
                                               e->content_type, "transaction", e->rid, "transactionType",
                                               silt_txn_type_name(e->txn_type), "time", e->time, "status",
                                               purged ? "purged" : "ok"));
        }
        print_json(a);
    } else {
        for (size_t i = 0; i < n; i++) {
            const silt_file_entry *e = silt_view_entry(v, i);
            char prid[64];
            bool purged = silt_files_purged(prid, ds, e->content_hash) == 1;
            /* a purged file gets a sixth column saying so */
            printf("%s\t%llu\t%s\t%s\t%s%s\n", e->path, (unsigned long long)e->size, e->content_hash, e->rid,
                   e->time, purged ? "\tpurged by retention" : "");
        }
    }
    silt_view_free(v);
    return done(ws, ds, EXIT_OK);
}

int cmd_cat(cli_ctx *c, int argc, char **argv)
{
    const char *ref = NULL, *path = NULL, *at = NULL;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--at") == 0 && i + 1 < argc)
            at = argv[++i];
        else if (argv[i][0] == '-' && argv[i][1])
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
    int rc = silt_files_cat(ds, path, at, stdout) < 0 ? cli_fail(NULL) : EXIT_OK;
    if (fflush(stdout) != 0 && rc == EXIT_OK)
        rc = cli_fail("cat: write error");
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
                                                   "blocks", (json_int_t)v[i].num_blocks, "openTransaction",
                                                   v[i].open_txn[0] ? v[i].open_txn : NULL));
            print_json(a);
        } else {
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
            printf("{\"branch\":\"%s\"}\n", branch);
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
        return done(ws, ds, EXIT_OK);
    }
    return cli_usage("branch: unknown subcommand '%s'", sub);
}
