/* cmd_chain.c — metadata chain commands: log, append, verify, block hash,
 * block decode. */
#include "cli.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_count(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < 0 || end == s)
        return -1;
    *out = v;
    return 0;
}

int cmd_log(cli_ctx *c, int argc, char **argv)
{
    const char *ref = NULL, *as_of = NULL;
    long limit = -1;
    bool yaml = false, detail = false;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--as-of") == 0 || strcmp(a, "--at") == 0) {
            if (i + 1 >= argc)
                return cli_usage("log: --as-of needs a block, sequence number, time or rid");
            as_of = argv[++i];
        } else if (strcmp(a, "-n") == 0 || strcmp(a, "--limit") == 0) {
            if (i + 1 >= argc || parse_count(argv[i + 1], &limit))
                return cli_usage("log: -n needs a non-negative number");
            i++;
        } else if (strncmp(a, "-n", 2) == 0 && a[2]) {
            if (parse_count(a + 2, &limit))
                return cli_usage("log: -n needs a non-negative number");
        } else if (strcmp(a, "--yaml") == 0) {
            yaml = true;
        } else if (strcmp(a, "--detail") == 0) {
            detail = true;
        } else if (a[0] == '-') {
            return cli_usage("log: unknown option '%s'", a);
        } else if (!ref) {
            ref = a;
        } else {
            return cli_usage("log takes one NAME");
        }
    }
    if (!ref)
        return cli_usage("log needs a NAME");
    if (yaml && c->json)
        return cli_usage("log: --yaml and --json are exclusive");
    if (detail && (yaml || c->json))
        return cli_usage("log: --detail is for the text listing (--yaml and --json show every field)");
    silt_workspace *ws;
    if (cli_open_workspace(c, &ws))
        return EXIT_FAIL;
    silt_dataset *ds = NULL;
    silt_block_iter *it = NULL;
    int status = EXIT_OK;
    json_t *arr = NULL;
    if (silt_dataset_open(&ds, ws, ref) < 0 || silt_block_iter_new(&it, ds) < 0) {
        status = cli_fail(NULL);
        goto out;
    }
    if (c->json && !(arr = json_array())) {
        status = cli_fail_code(SILT_ENOMEM, "out of memory");
        goto out;
    }
    char from[72] = "";
    if (as_of && (status = cli_as_of(ds, as_of, from, NULL)) != 0)
        goto out;
    for (long n = 0; limit < 0 || n < limit; n++) {
        silt_block *b = NULL;
        if (silt_block_iter_next(&b, it) < 0) {
            status = cli_fail(NULL);
            goto out;
        }
        if (!b)
            break;
        if (from[0] && strcmp(silt_block_hash(b), from) != 0) { /* newer than --as-of */
            silt_block_free(b);
            n--;
            continue;
        }
        from[0] = '\0';
        char *text = NULL;
        if (c->json) {
            if (silt_block_to_json(&text, b) < 0) {
                silt_block_free(b);
                status = cli_fail(NULL);
                goto out;
            }
            json_error_t jerr;
            json_t *o = json_loads(text, 0, &jerr);
            if (!o) {
                free(text);
                silt_block_free(b);
                status = cli_fail("internal error: bad block JSON: %s", jerr.text);
                goto out;
            }
            json_array_append_new(arr, o);
        } else if (yaml) {
            if (silt_block_to_yaml(&text, b) < 0) {
                silt_block_free(b);
                status = cli_fail(NULL);
                goto out;
            }
            printf("%s# block %s\n%s", n ? "---\n" : "", silt_block_hash(b), text);
        } else {
            char t[CLI_TIME_MAX];
            printf("%6llu  %s  %s  %s\n", (unsigned long long)silt_block_sequence_number(b),
                   cli_time(t, silt_block_system_time(b)), silt_block_hash(b), silt_block_event_kind(b));
            json_t *o = detail ? cli_block_json(b) : NULL;
            if (detail && !o) {
                silt_block_free(b);
                status = cli_fail(NULL);
                goto out;
            }
            if (o)
                cli_block_detail_print(o);
            json_decref(o);
        }
        free(text);
        silt_block_free(b);
    }
    if (arr) {
        cli_json_write(arr);
    }
out:
    json_decref(arr);
    silt_block_iter_free(it);
    silt_dataset_free(ds);
    silt_workspace_free(ws);
    return status;
}

int cmd_append(cli_ctx *c, int argc, char **argv)
{
    if (argc < 2)
        return cli_usage("append needs NAME and at least one EVENT.yaml");
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) { /* what follows are EVENT files */
            memmove(argv + i, argv + i + 1, (size_t)(argc - i - 1) * sizeof *argv);
            argc--;
            break;
        }
        if (argv[i][0] == '-' && argv[i][1])
            return cli_usage("append: unknown option '%s'", argv[i]);
    }
    if (argc < 2)
        return cli_usage("append needs NAME and at least one EVENT.yaml");
    silt_workspace *ws;
    if (cli_open_workspace(c, &ws))
        return EXIT_FAIL;
    silt_dataset *ds = NULL;
    int status = EXIT_OK;
    if (silt_dataset_open(&ds, ws, argv[0]) < 0) {
        status = cli_fail(NULL);
        goto out;
    }
    for (int i = 1; i < argc; i++) {
        int n = silt_dataset_append_events(ds, argv[i]);
        if (n < 0) {
            status = cli_fail(NULL);
            break;
        }
        silt_dataset_info info;
        if (silt_dataset_info_get(&info, ds) < 0) {
            status = cli_fail(NULL);
            break;
        }
        if (!c->json)
            printf("Appended %d block%s to %s, head %s\n", n, n == 1 ? "" : "s", info.name,
                   info.head);
        else
            cli_json_print(json_pack("{s:s,s:s,s:s,s:i,s:s,s:s}", "name", info.name, "id", info.id, "rid", info.rid,
                                     "appended", n, "head", info.head, "file", argv[i]));
    }
out:
    silt_dataset_free(ds);
    silt_workspace_free(ws);
    return status;
}

typedef struct verify_ctx {
    const char *name;  /* dataset name as given (without @branch) */
    json_t *problems;  /* when --json: branch name -> array of lines */
} verify_ctx;

/* "name" for master, "name@branch" otherwise (static buffer). */
static const char *branch_label(const char *name, const char *branch)
{
    static char buf[256];
    if (!branch || strcmp(branch, "master") == 0)
        snprintf(buf, sizeof buf, "%s", name);
    else
        snprintf(buf, sizeof buf, "%s@%s", name, branch);
    return buf;
}

static void verify_report(void *ctx, const char *branch, const char *line)
{
    verify_ctx *v = ctx;
    if (v->problems) {
        const char *key = branch ? branch : "master";
        json_t *arr = json_object_get(v->problems, key);
        if (!arr) {
            arr = json_array();
            json_object_set_new(v->problems, key, arr);
        }
        json_array_append_new(arr, json_string(line));
    } else {
        fprintf(stderr, "silt: %s: %s\n", branch_label(v->name, branch), line);
    }
}

/* Verifies one reference (every branch unless it names one) and prints one
 * line per branch (or appends to `out`). Returns true when all are valid. */
static bool verify_one(cli_ctx *c, silt_workspace *ws, const char *ref, bool replay, json_t *out)
{
    char name[256];
    snprintf(name, sizeof name, "%s", ref);
    char *at = strchr(name, '@');
    if (at)
        *at = '\0';
    verify_ctx v = {name, out ? json_object() : NULL};
    silt_dataset *ds = NULL;
    silt_verify_branch *br = NULL;
    size_t n = 0;
    int rc = silt_dataset_open_unread(&ds, ws, ref); /* a damaged chain is verify's to report */
    cli_progress prog; /* blocks checked, bytes hashed (a terminal only) */
    cli_progress_begin(&prog, c, ref);
    silt_dataset_set_progress(ds, cli_progress_fn, &prog);
    silt_verify_opts vo = {.all_branches = at == NULL, .no_replay = !replay};
    if (rc == 0)
        rc = silt_dataset_verify_with(&br, &n, ds, &vo, verify_report, &v);
    cli_progress_end(&prog);
    bool ok = rc == 0;
    if (rc < 0 && n == 0) { /* the dataset could not be opened or verified at all */
        verify_report(&v, at ? at + 1 : NULL, silt_error_last());
        if (out)
            json_array_append_new(out, json_pack("{s:s,s:s,s:b,s:I,s:O}", "name", name, "branch", at ? at + 1 : "master",
                                                 "valid", 0, "blocks", (json_int_t)0, "problems",
                                                 json_object_get(v.problems, at ? at + 1 : "master")));
        else
            printf("%s: INVALID (%s)\n", ref, "cannot be verified");
    }
    for (size_t i = 0; i < n; i++) {
        const silt_verify_branch *b = &br[i];
        bool bok = b->problems == 0;
        if (out) {
            json_t *pr = json_object_get(v.problems, b->branch);
            json_array_append_new(out, json_pack("{s:s,s:s,s:b,s:I,s:o}", "name", name, "branch", b->branch, "valid",
                                                 bok, "blocks", (json_int_t)b->num_blocks, "problems",
                                                 pr ? json_incref(pr) : json_array()));
        } else if (bok) {
            printf("%s: ok (%llu blocks)\n", branch_label(name, b->branch), (unsigned long long)b->num_blocks);
        } else {
            printf("%s: INVALID (%zu problem%s)\n", branch_label(name, b->branch), b->problems,
                   b->problems == 1 ? "" : "s");
        }
    }
    free(br);
    json_decref(v.problems);
    silt_dataset_free(ds);
    return ok;
}

int cmd_verify(cli_ctx *c, int argc, char **argv)
{
    bool all = false, replay = true;
    int nrefs = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--all") == 0)
            all = true;
        else if (strcmp(argv[i], "--no-replay") == 0)
            replay = false;
        else if (argv[i][0] == '-')
            return cli_usage("verify: unknown option '%s'", argv[i]);
        else
            nrefs++;
    }
    if (!all && nrefs == 0)
        return cli_usage("verify needs NAME... or --all");
    if (all && nrefs)
        return cli_usage("verify: give NAMEs or --all, not both");
    silt_workspace *ws;
    if (cli_open_workspace(c, &ws))
        return EXIT_FAIL;
    char **names = NULL;
    if (all && silt_dataset_list(&names, ws) < 0) {
        silt_workspace_free(ws);
        return cli_fail(NULL);
    }
    int status = EXIT_OK;
    json_t *out = c->json ? json_array() : NULL;
    if (all) {
        for (size_t i = 0; names[i]; i++)
            if (!verify_one(c, ws, names[i], replay, out))
                status = EXIT_FAIL;
    } else {
        for (int i = 0; i < argc; i++)
            if (argv[i][0] != '-' && !verify_one(c, ws, argv[i], replay, out))
                status = EXIT_FAIL;
    }
    if (out) {
        cli_json_write(out);
        json_decref(out);
    }
    silt_strv_free(names);
    silt_workspace_free(ws);
    return status;
}

int cmd_block(cli_ctx *c, int argc, char **argv)
{
    if (argc < 1)
        return cli_usage("block needs a subcommand: hash FILE.yaml | decode FILE");
    const char *sub = argv[0];
    if (argc != 2)
        return cli_usage("block %s needs exactly one FILE", sub);
    char *out = NULL;
    if (strcmp(sub, "hash") == 0) {
        if (silt_block_hash_yaml_file(&out, argv[1]) < 0)
            return cli_fail(NULL);
        if (c->json)
            cli_json_print(json_pack("{s:s}", "hash", out));
        else
            printf("%s\n", out);
    } else if (strcmp(sub, "decode") == 0) {
        if (silt_block_decode_file(&out, argv[1]) < 0)
            return cli_fail(NULL);
        fputs(out, stdout);
    } else {
        return cli_usage("unknown block subcommand '%s'", sub);
    }
    free(out);
    return EXIT_OK;
}
