/* cmd_remote.c — `silt repo add|list|delete`, `silt push`, and the remote
 * half of `silt pull` (clones and their updates; cmd_pull.c dispatches
 * here). Public API only: silt_repo_*, silt_remote_*.
 *
 * Output (stable, tested by tests/integration/test_transfer.sh):
 *   repo add:    "added repository NAME (URL)"
 *   repo list:   NAME URL TOKEN-ENV per line (a table); --json an array of
 *                {"name","url","tokenEnv"}
 *   repo delete: "deleted repository NAME"
 *   pull:        "NAME: cloned from REMOTE: B blocks, O objects (N bytes), head H"
 *                "NAME: B new blocks from REMOTE, O objects (N bytes), S already present, head H"
 *                "NAME: up to date with REMOTE"
 *   push:        "NAME: pushed to REMOTE: B blocks, O objects (N bytes), S already present, head H"
 *                "NAME: REMOTE is up to date"
 *   --force notes go to stderr as "silt: warning: …".
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void note(void *ctx, const char *line)
{
    (void)ctx;
    fprintf(stderr, "silt: warning: %s\n", line);
}

int cli_transfer_opt(int argc, char **argv, int *i, silt_transfer_opts *o, bool *bad)
{
    const char *v = NULL;
    int k;
    *bad = false;
    if (strcmp(argv[*i], "--force") == 0) {
        o->force = true;
        return 1;
    }
    if ((k = cli_opt_value(argc, argv, i, "--jobs", &v)) != 0) {
        char *end = NULL;
        long n = k > 0 ? strtol(v, &end, 10) : 0;
        if (k < 0 || !end || *end || n < 1 || n > 64) {
            *bad = true;
            cli_usage("--jobs needs a number from 1 to 64");
            return -1;
        }
        o->jobs = (int)n;
        return 1;
    }
    if ((k = cli_opt_value(argc, argv, i, "--token-env", &v)) != 0) {
        if (k < 0) {
            *bad = true;
            cli_usage("--token-env needs a variable name");
            return -1;
        }
        o->token_env = v;
        return 1;
    }
    if ((k = cli_opt_value(argc, argv, i, "--as", &v)) != 0) {
        if (k < 0) {
            *bad = true;
            cli_usage("--as needs a dataset name");
            return -1;
        }
        o->as = v;
        return 1;
    }
    return 0;
}

static json_t *result_json(const silt_transfer_result *r, int rc)
{
    return json_pack("{s:s,s:s,s:b,s:b,s:s?,s:s?,s:I,s:I,s:I,s:I,s:I,s:s?}", "name", r->name, "remote", r->remote,
                     "cloned", r->cloned, "upToDate", rc >= 0 && r->up_to_date, "oldHead",
                     r->old_head[0] ? r->old_head : NULL, "head", r->new_head[0] ? r->new_head : NULL, "blocks",
                     (json_int_t)r->blocks, "objects", (json_int_t)r->objects, "bytes", (json_int_t)r->bytes,
                     "skipped", (json_int_t)r->skipped, "dropped", (json_int_t)r->dropped, "error",
                     rc < 0 ? silt_error_last() : NULL);
}

int cli_remote_pull_one(cli_ctx *c, silt_workspace *ws, const char *remote, const silt_transfer_opts *o, json_t *arr)
{
    silt_transfer_opts oo = *o;
    oo.note = note;
    silt_transfer_result r;
    int rc = silt_remote_pull(&r, ws, remote, &oo);
    if (c->json && arr)
        json_array_append_new(arr, result_json(&r, rc));
    if (rc < 0)
        return cli_fail(NULL);
    if (c->json)
        return EXIT_OK;
    if (r.up_to_date && !r.cloned)
        printf("%s: up to date with %s\n", r.name, r.remote);
    else if (r.cloned)
        printf("%s: cloned from %s: %llu blocks, %llu objects (%llu bytes), head %s\n", r.name, r.remote,
               (unsigned long long)r.blocks, (unsigned long long)r.objects, (unsigned long long)r.bytes, r.new_head);
    else
        printf("%s: %llu new blocks from %s, %llu objects (%llu bytes), %llu already present, head %s\n", r.name,
               (unsigned long long)r.blocks, r.remote, (unsigned long long)r.objects, (unsigned long long)r.bytes,
               (unsigned long long)r.skipped, r.new_head);
    return EXIT_OK;
}

int cmd_push(cli_ctx *c, int argc, char **argv)
{
    silt_transfer_opts o;
    memset(&o, 0, sizeof o);
    const char *pos[2] = {NULL, NULL};
    int npos = 0;
    for (int i = 0; i < argc; i++) {
        bool bad = false;
        int k = cli_transfer_opt(argc, argv, &i, &o, &bad);
        if (bad)
            return EXIT_USAGE;
        if (k > 0 && o.as)
            return cli_usage("push: unknown option '--as'");
        if (k > 0)
            continue;
        if (argv[i][0] == '-' && argv[i][1])
            return cli_usage("push: unknown option '%s'", argv[i]);
        if (npos == 2)
            return cli_usage("push: too many arguments");
        pos[npos++] = argv[i];
    }
    if (npos == 0)
        return cli_usage("push needs NAME [REPO/NAME | URL]");
    silt_workspace *ws = NULL;
    if (cli_open_workspace(c, &ws))
        return EXIT_FAIL;
    o.note = note;
    silt_transfer_result r;
    int rc = silt_remote_push(&r, ws, pos[0], pos[1], &o);
    silt_workspace_free(ws);
    if (c->json) {
        json_t *j = result_json(&r, rc);
        if (rc >= 0)
            cli_json_print(j);
        else
            json_decref(j);
    }
    if (rc < 0)
        return cli_fail(NULL);
    if (c->json)
        return EXIT_OK;
    if (r.up_to_date)
        printf("%s: %s is up to date\n", r.name, r.remote);
    else
        printf("%s: pushed to %s: %llu blocks, %llu objects (%llu bytes), %llu already present, head %s\n", r.name,
               r.remote, (unsigned long long)r.blocks, (unsigned long long)r.objects, (unsigned long long)r.bytes,
               (unsigned long long)r.skipped, r.new_head);
    return EXIT_OK;
}

static int repo_add(cli_ctx *c, int argc, char **argv)
{
    const char *pos[2] = {NULL, NULL}, *env = NULL;
    int npos = 0;
    for (int i = 0; i < argc; i++) {
        int k = cli_opt_value(argc, argv, &i, "--token-env", &env);
        if (k < 0)
            return cli_usage("repo add: --token-env needs a variable name");
        if (k > 0)
            continue;
        if (argv[i][0] == '-' && argv[i][1])
            return cli_usage("repo add: unknown option '%s'", argv[i]);
        if (npos == 2)
            return cli_usage("repo add: too many arguments");
        pos[npos++] = argv[i];
    }
    if (npos != 2)
        return cli_usage("repo add needs NAME URL");
    silt_workspace *ws = NULL;
    if (cli_open_workspace(c, &ws))
        return EXIT_FAIL;
    int rc = silt_repo_add(ws, pos[0], pos[1], env);
    silt_workspace_free(ws);
    if (rc < 0)
        return cli_fail(NULL);
    if (c->json)
        cli_json_print(json_pack("{s:s,s:s,s:s?}", "name", pos[0], "url", pos[1], "tokenEnv", env));
    else
        printf("added repository %s (%s)\n", pos[0], pos[1]);
    return EXIT_OK;
}

static int repo_list(cli_ctx *c, int argc, char **argv)
{
    (void)argv;
    if (argc)
        return cli_usage("repo list takes no arguments");
    silt_workspace *ws = NULL;
    if (cli_open_workspace(c, &ws))
        return EXIT_FAIL;
    silt_repo *v = NULL;
    size_t n = 0;
    int rc = silt_repo_list(&v, &n, ws);
    silt_workspace_free(ws);
    if (rc < 0)
        return cli_fail(NULL);
    if (c->json) {
        json_t *a = json_array();
        for (size_t i = 0; a && i < n; i++)
            json_array_append_new(a, json_pack("{s:s,s:s,s:s}", "name", v[i].name, "url", v[i].url, "tokenEnv",
                                               v[i].token_env ? v[i].token_env : "SILT_TOKEN"));
        cli_json_print(a);
    } else {
        printf("%-20s %-50s %s\n", "NAME", "URL", "TOKEN ENV");
        for (size_t i = 0; i < n; i++)
            printf("%-20s %-50s %s\n", v[i].name, v[i].url, v[i].token_env ? v[i].token_env : "SILT_TOKEN");
    }
    silt_repos_free(v, n);
    return EXIT_OK;
}

static int repo_delete(cli_ctx *c, int argc, char **argv)
{
    if (argc != 1)
        return cli_usage("repo delete needs NAME");
    silt_workspace *ws = NULL;
    if (cli_open_workspace(c, &ws))
        return EXIT_FAIL;
    int rc = silt_repo_delete(ws, argv[0]);
    silt_workspace_free(ws);
    if (rc < 0)
        return cli_fail(NULL);
    if (c->json)
        cli_json_print(json_pack("{s:s,s:b}", "name", argv[0], "deleted", 1));
    else
        printf("deleted repository %s\n", argv[0]);
    return EXIT_OK;
}

int cmd_repo(cli_ctx *c, int argc, char **argv)
{
    if (argc < 1)
        return cli_usage("repo needs add, list or delete");
    if (strcmp(argv[0], "add") == 0)
        return repo_add(c, argc - 1, argv + 1);
    if (strcmp(argv[0], "list") == 0 || strcmp(argv[0], "ls") == 0)
        return repo_list(c, argc - 1, argv + 1);
    if (strcmp(argv[0], "delete") == 0 || strcmp(argv[0], "rm") == 0)
        return repo_delete(c, argc - 1, argv + 1);
    return cli_usage("repo: unknown subcommand '%s'", argv[0]);
}
