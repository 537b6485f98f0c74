/* cmd_dataset.c — workspace and dataset commands: init, new, add, list, info,
 * rename, delete. */
#include "cli.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Rejects options the command does not know (anything starting with '-'). */
static int reject_options(int *argc, char **argv, const char *cmd)
{
    /* "--" ends the options: it is dropped, and what follows is an operand */
    for (int i = 0; i < *argc; i++) {
        if (strcmp(argv[i], "--") == 0) {
            memmove(argv + i, argv + i + 1, (size_t)(*argc - i - 1) * sizeof *argv);
            (*argc)--;
            return 0;
        }
        if (argv[i][0] == '-' && argv[i][1] != '\0')
            return cli_usage("%s: unknown option '%s'", cmd, argv[i]);
    }
    return 0;
}

/* Removes every `flag` or `alias` (may be NULL) before a "--" from argv;
 * true if there was one. */
static bool take_flag(int *argc, char **argv, const char *flag, const char *alias)
{
    bool found = false;
    for (int i = 0; i < *argc;) {
        if (strcmp(argv[i], "--") == 0)
            break;
        if (strcmp(argv[i], flag) == 0 || (alias && strcmp(argv[i], alias) == 0)) {
            memmove(argv + i, argv + i + 1, (size_t)(*argc - i - 1) * sizeof *argv);
            (*argc)--;
            found = true;
        } else {
            i++;
        }
    }
    return found;
}

int cmd_init(cli_ctx *c, int argc, char **argv)
{
    bool exists_ok = take_flag(&argc, argv, "--exists-ok", NULL);
    int rc = reject_options(&argc, argv, "init");
    if (rc)
        return rc;
    if (argc > 1)
        return cli_usage("init takes at most one directory");
    const char *dir = argc == 1 ? argv[0] : (c->workspace_dir ? c->workspace_dir : ".");
    bool existed = false;
    rc = silt_workspace_init(dir);
    if (rc < 0) {
        /* --exists-ok: an existing workspace is success, anything else
         * (e.g. a file named .silt) still fails */
        silt_workspace *ws = NULL;
        if (!exists_ok || rc != SILT_EEXISTS)
            return cli_fail(NULL);
        char msg[512];
        snprintf(msg, sizeof msg, "%s", silt_error_last());
        if (silt_workspace_open(&ws, dir) < 0)
            return cli_fail_code(SILT_EEXISTS, "%s", msg);
        silt_workspace_free(ws);
        existed = true;
    }
    if (c->json)
        cli_json_print(json_pack("{s:s+,s:b}", "workspace", dir, "/.silt", "created", !existed));
    else if (existed)
        printf("silt workspace already exists in %s/.silt\n", dir);
    else
        printf("Initialized silt workspace in %s/.silt\n", dir);
    return EXIT_OK;
}

/* Options of `silt new`. */
typedef struct new_opts {
    const char *name;
    silt_dataset_kind kind;
    bool files, derivative_given;
    silt_push_source_spec push;
    bool has_push;
    const char **keys; /* argv entries; malloc'd array */
} new_opts;

/* The value of option argv[*i] (advancing *i), or NULL after a usage message. */
static const char *opt_value(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc) {
        cli_usage("new: %s needs a value", argv[*i]);
        return NULL;
    }
    return argv[++*i];
}

static int new_parse(new_opts *o, int argc, char **argv)
{
    bool ended = false;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        if (!ended && strcmp(a, "--") == 0)
            ended = true;
        else if (!ended && strcmp(a, "--files") == 0)
            o->files = true;
        else if (!ended && strcmp(a, "--derivative") == 0)
            o->kind = SILT_DERIVATIVE;
        else if (!ended && strcmp(a, "--root") == 0)
            o->kind = SILT_ROOT;
        else if (!ended && (strcmp(a, "--push-source") == 0 || strcmp(a, "--merge") == 0 ||
                            strcmp(a, "--key") == 0 || strcmp(a, "--schema") == 0)) {
            if (!(v = opt_value(argc, argv, &i)))
                return EXIT_USAGE;
            if (a[2] == 'p')
                o->push.format = v, o->has_push = true;
            else if (a[2] == 'm')
                o->push.merge = v;
            else if (a[2] == 's')
                o->push.schema = v;
            else
                o->keys[o->push.nkeys++] = v;
        } else if (!ended && a[0] == '-' && a[1])
            return cli_usage("new: unknown option '%s'", a);
        else if (!o->name)
            o->name = a;
        else
            return cli_usage("new takes one NAME");
    }
    if (!o->name)
        return cli_usage("new needs a NAME");
    if (!o->has_push && (o->push.merge || o->push.nkeys || o->push.schema))
        return cli_usage("new: --merge, --key and --schema describe a push source: give --push-source FORMAT");
    if (o->has_push && (o->files || o->kind != SILT_ROOT))
        return cli_usage("new: --push-source is for root datasets (not --files or --derivative)");
    if (o->files && o->kind != SILT_ROOT)
        return cli_usage("new: --files datasets are root datasets");
    static const char *const FORMATS = " csv json ndjson geojson ndgeojson parquet ";
    char word[32];
    snprintf(word, sizeof word, " %s ", o->push.format ? o->push.format : "");
    if (o->has_push && (strchr(o->push.format, ' ') || !strstr(FORMATS, word)))
        return cli_usage("new: unknown --push-source format '%s' (csv, json, ndjson, geojson, ndgeojson, parquet)",
                         o->push.format);
    const char *m = o->push.merge ? o->push.merge : "append";
    if (strcmp(m, "append") != 0 && strcmp(m, "ledger") != 0 && strcmp(m, "snapshot") != 0)
        return cli_usage("new: unknown --merge '%s' (append, ledger, snapshot)", m);
    bool keyed = strcmp(m, "ledger") == 0 || strcmp(m, "snapshot") == 0;
    if (o->has_push && keyed && o->push.nkeys == 0)
        return cli_usage("new: --merge %s needs --key COLUMN (the primary key; repeat for several)", m);
    if (o->has_push && !keyed && o->push.nkeys > 0)
        return cli_usage("new: --key is for --merge ledger or snapshot");
    return 0;
}

int cmd_new(cli_ctx *c, int argc, char **argv)
{
    new_opts o = {.kind = SILT_ROOT};
    o.keys = calloc((size_t)argc + 1, sizeof *o.keys);
    if (!o.keys)
        return cli_fail_code(SILT_ENOMEM, "out of memory");
    o.push.keys = o.keys;
    int rc = new_parse(&o, argc, argv);
    silt_workspace *ws = NULL;
    if (rc == 0 && cli_open_workspace(c, &ws))
        rc = EXIT_FAIL;
    if (rc) {
        free(o.keys);
        return rc;
    }
    silt_dataset *ds = NULL;
    if (o.has_push)
        rc = silt_dataset_create_push(&ds, ws, o.name, &o.push);
    else
        rc = o.files ? silt_files_create(&ds, ws, o.name) : silt_dataset_create(&ds, ws, o.name, o.kind);
    free(o.keys);
    silt_dataset_info info;
    if (rc < 0 || silt_dataset_info_get(&info, ds) < 0) {
        silt_dataset_free(ds);
        silt_workspace_free(ws);
        return cli_fail(NULL);
    }
    if (c->json)
        cli_json_print(json_pack("{s:s,s:s,s:s,s:s,s:s}", "name", info.name, "id", info.id, "rid", info.rid, "kind",
                                 o.files ? "Files" : info.kind == SILT_ROOT ? "Root" : "Derivative", "head",
                                 info.head));
    else if (o.has_push)
        printf("Created %s (%s) with push source 'default' (%s, %s)\n", info.name, info.id, o.push.format,
               o.push.merge ? o.push.merge : "append");
    else
        printf("Created %s (%s)\n", info.name, info.id);
    silt_dataset_free(ds);
    silt_workspace_free(ws);
    return EXIT_OK;
}

int cmd_add(cli_ctx *c, int argc, char **argv)
{
    bool replace = take_flag(&argc, argv, "--replace", NULL);
    int rc = reject_options(&argc, argv, "add");
    if (rc)
        return rc;
    if (argc == 0)
        return cli_usage("add needs at least one MANIFEST");
    silt_workspace *ws;
    if (cli_open_workspace(c, &ws))
        return EXIT_FAIL;
    int status = EXIT_OK;
    json_t *arr = c->json ? json_array() : NULL;
    for (int i = 0; i < argc; i++) {
        char **names = NULL;
        if (silt_dataset_add_manifest_ex(&names, ws, argv[i], replace) < 0) {
            status = cli_fail(NULL);
            continue;
        }
        for (size_t k = 0; names && names[k]; k++) {
            silt_dataset *ds = NULL;
            silt_dataset_info info;
            if (silt_dataset_open(&ds, ws, names[k]) < 0 || silt_dataset_info_get(&info, ds) < 0) {
                status = cli_fail(NULL);
                silt_dataset_free(ds);
                continue;
            }
            if (arr)
                json_array_append_new(arr, json_pack("{s:s,s:s,s:s,s:s,s:I}", "name", info.name, "id",
                                                     info.id, "rid", info.rid, "head", info.head, "blocks",
                                                     (json_int_t)info.num_blocks));
            else
                printf("Added %s (%s, %llu blocks)\n", info.name, info.id,
                       (unsigned long long)info.num_blocks);
            char *engine = NULL;
            if (silt_dataset_foreign_engine(&engine, ds) < 0)
                status = cli_fail(NULL);
            else if (engine)
                fprintf(stderr, "silt: warning: engine '%s' of %s: its SQL runs on DuckDB through silt's "
                                "compatibility layer (docs/transforms.md)\n", engine, info.name);
            free(engine);
            silt_dataset_free(ds);
        }
        silt_strv_free(names);
        silt_resource_change *rch = NULL;
        size_t nrch = 0;
        if (silt_resources_last_added(&rch, &nrch) < 0)
            status = cli_fail(NULL);
        for (size_t k = 0; k < nrch; k++) {
            if (arr)
                json_array_append_new(arr, json_pack("{s:s,s:s,s:b}", "resource", rch[k].type, "name",
                                                     rch[k].name, "updated", rch[k].updated));
            else
                printf("%s %s %s\n", rch[k].updated ? "Updated" : "Added", rch[k].type, rch[k].name);
        }
        silt_resource_changes_free(rch, nrch);
    }
    if (arr) {
        cli_json_write(arr);
        json_decref(arr);
    }
    silt_workspace_free(ws);
    return status;
}

static json_t *info_json(const silt_dataset_info *in)
{
    json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:s,s:I,s:I,s:I,s:b,s:b,s:I}", "name", in->name, "id",
                          in->id, "branch", in->branch, "kind",
                          in->kind == SILT_ROOT ? "Root" : "Derivative", "head", in->head, "blocks",
                          (json_int_t)in->num_blocks, "records", (json_int_t)in->num_records,
                          "dataSize", (json_int_t)in->data_size, "hasSchema", in->has_schema,
                          "hasPollingSource", in->has_polling_source, "pushSources",
                          (json_int_t)in->num_push_sources);
    if (!o)
        return NULL;
    json_object_set_new(o, "lastOffset",
                        in->has_last_offset ? json_integer((json_int_t)in->last_offset) : json_null());
    json_object_set_new(o, "watermark", in->has_watermark ? json_string(in->watermark) : json_null());
    json_object_set_new(o, "lastSystemTime", json_string(in->last_system_time));
    json_object_set_new(o, "rid", json_string(in->rid));
    return o;
}

int cmd_list(cli_ctx *c, int argc, char **argv)
{
    int rc = reject_options(&argc, argv, "list");
    if (rc)
        return rc;
    if (argc)
        return cli_usage("list takes no arguments");
    silt_workspace *ws;
    if (cli_open_workspace(c, &ws))
        return EXIT_FAIL;
    char **names = NULL;
    if (silt_dataset_list(&names, ws) < 0) {
        silt_workspace_free(ws);
        return cli_fail(NULL);
    }
    int status = EXIT_OK;
    json_t *arr = c->json ? json_array() : NULL;
    if (!arr && names && names[0])
        printf("%-32s %-10s %8s %10s  %s\n", "NAME", "KIND", "BLOCKS", "RECORDS", "WATERMARK");
    for (size_t i = 0; names && names[i]; i++) {
        silt_dataset *ds = NULL;
        silt_dataset_info info;
        if (silt_dataset_open(&ds, ws, names[i]) < 0 || silt_dataset_info_get(&info, ds) < 0) {
            status = cli_fail(NULL);
            silt_dataset_free(ds);
            continue;
        }
        if (arr)
            json_array_append_new(arr, info_json(&info));
        else {
            char t[CLI_TIME_MAX];
            printf("%-32s %-10s %8llu %10llu  %s\n", info.name,
                   info.kind == SILT_ROOT ? "Root" : "Derivative",
                   (unsigned long long)info.num_blocks, (unsigned long long)info.num_records,
                   info.has_watermark ? cli_time(t, info.watermark) : "-");
        }
        silt_dataset_free(ds);
    }
    if (arr) {
        cli_json_write(arr);
        json_decref(arr);
    }
    silt_strv_free(names);
    silt_workspace_free(ws);
    return status;
}

static void info_print(const silt_dataset_info *in, const json_t *more, silt_dataset *ds)
{
    printf("Name:          %s\n", in->name);
    printf("ID:            %s\n", in->id);
    printf("RID:           %s\n", in->rid);
    printf("Branch:        %s\n", in->branch);
    printf("Kind:          %s\n", in->kind == SILT_ROOT ? "Root" : "Derivative");
    printf("Head:          %s\n", in->head);
    printf("Blocks:        %llu\n", (unsigned long long)in->num_blocks);
    printf("Records:       %llu\n", (unsigned long long)in->num_records);
    if (in->has_last_offset)
        printf("Last offset:   %llu\n", (unsigned long long)in->last_offset);
    char t[CLI_TIME_MAX];
    printf("Watermark:     %s\n", in->has_watermark ? cli_time(t, in->watermark) : "-");
    printf("Last update:   %s\n", cli_time(t, in->last_system_time));
    printf("Size:          %llu bytes of data\n", (unsigned long long)in->data_size);
    cli_describe_print(more, ds);
}

int cmd_info(cli_ctx *c, int argc, char **argv)
{
    int rc = reject_options(&argc, argv, "info");
    if (rc)
        return rc;
    if (argc != 1)
        return cli_usage("info needs one NAME");
    silt_workspace *ws;
    if (cli_open_workspace(c, &ws))
        return EXIT_FAIL;
    silt_dataset *ds = NULL;
    silt_dataset_info in;
    json_t *o = NULL;
    int status = EXIT_OK;
    if (silt_dataset_open(&ds, ws, argv[0]) < 0 || silt_dataset_info_get(&in, ds) < 0)
        status = cli_fail(NULL);
    else if (!(o = info_json(&in)))
        status = cli_fail_code(SILT_ENOMEM, "out of memory");
    else if (cli_describe(o, ws, ds, in.name) < 0)
        status = cli_fail(NULL);
    if (status == EXIT_OK && c->json) {
        cli_json_write(o);
    } else if (status == EXIT_OK) {
        info_print(&in, o, ds);
    }
    json_decref(o);
    silt_dataset_free(ds);
    silt_workspace_free(ws);
    return status;
}

int cmd_rename(cli_ctx *c, int argc, char **argv)
{
    int rc = reject_options(&argc, argv, "rename");
    if (rc)
        return rc;
    if (argc != 2)
        return cli_usage("rename needs NAME and NEW_NAME");
    silt_workspace *ws;
    if (cli_open_workspace(c, &ws))
        return EXIT_FAIL;
    rc = silt_dataset_rename(ws, argv[0], argv[1]);
    if (rc < 0) {
        silt_workspace_free(ws);
        return cli_fail(NULL);
    }
    if (!c->json) {
        printf("Renamed %s to %s\n", argv[0], argv[1]);
    } else {
        silt_dataset *ds = NULL;
        json_t *j = silt_dataset_open(&ds, ws, argv[1]) < 0 ? NULL : cli_dataset_json(ds);
        if (j)
            json_object_set_new(j, "previousName", json_string(argv[0]));
        silt_dataset_free(ds);
        if (!j) /* renamed, but it cannot be read back: say so, exit 1 */
            rc = cli_fail_code(silt_error_code(), "renamed %s to %s, but: %s", argv[0], argv[1], silt_error_last());
        else
            cli_json_print(j);
    }
    silt_workspace_free(ws);
    return rc == EXIT_FAIL ? EXIT_FAIL : EXIT_OK;
}

/* Asks "Delete N datasets (a, b)? [y/N] " on stderr; true on y/yes. */
static bool confirm_delete(int argc, char **argv)
{
    fprintf(stderr, "Delete %d dataset%s (", argc, argc == 1 ? "" : "s");
    for (int i = 0; i < argc; i++)
        fprintf(stderr, "%s%s", i ? ", " : "", argv[i]);
    fprintf(stderr, ")? [y/N] ");
    fflush(stderr);
    char line[64];
    if (!fgets(line, sizeof line, stdin))
        return false;
    line[strcspn(line, "\r\n")] = '\0';
    return strcmp(line, "y") == 0 || strcmp(line, "Y") == 0 || strcmp(line, "yes") == 0 ||
           strcmp(line, "YES") == 0 || strcmp(line, "Yes") == 0;
}

/* Every reference opens (without reading chains), or the error of the
 * first that does not. */
static int delete_check(silt_workspace *ws, int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        silt_dataset *ds = NULL;
        int rc = silt_dataset_open_unread(&ds, ws, argv[i]);
        silt_dataset_free(ds);
        if (rc < 0)
            return cli_fail_code(silt_error_code(), "%s; nothing deleted", silt_error_last());
    }
    return EXIT_OK;
}

/* [{"name","id","rid"}] of the datasets about to be deleted (new reference). */
static json_t *delete_json(silt_workspace *ws, int argc, char **argv)
{
    json_t *arr = json_array();
    for (int i = 0; arr && i < argc; i++) {
        silt_dataset *ds = NULL;
        json_t *j = silt_dataset_open(&ds, ws, argv[i]) < 0 ? NULL : cli_dataset_json(ds);
        silt_dataset_free(ds);
        if (!j)
            j = json_pack("{s:s,s:n,s:n}", "name", argv[i], "id", "rid");
        bool dup = false;
        for (size_t k = 0; j && k < json_array_size(arr); k++)
            dup = dup || json_equal(json_array_get(arr, k), j);
        if (!j || (dup ? (json_decref(j), 0) : json_array_append_new(arr, j)) < 0) {
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}

int cmd_delete(cli_ctx *c, int argc, char **argv)
{
    bool yes = take_flag(&argc, argv, "--yes", "-y");
    int rc = reject_options(&argc, argv, "delete");
    if (rc)
        return rc;
    if (argc == 0)
        return cli_usage("delete needs at least one NAME");
    silt_workspace *ws;
    if (cli_open_workspace(c, &ws))
        return EXIT_FAIL;
    /* on a terminal, ask first (after checking every name, so the question
     * is never asked for a delete that would fail); scripts are not asked */
    if (!yes && isatty(STDIN_FILENO)) {
        int st = delete_check(ws, argc, argv);
        if (st != EXIT_OK) {
            silt_workspace_free(ws);
            return st;
        }
        if (!confirm_delete(argc, argv)) {
            silt_workspace_free(ws);
            return cli_fail_code(SILT_ECANCELED, "not confirmed; nothing deleted");
        }
    }
    /* --json: the name, id and rid of each, read before they are gone (a
     * dataset named twice is listed once; one whose chain cannot be read
     * is listed by the name given, with null id and rid) */
    json_t *deleted = c->json ? delete_json(ws, argc, argv) : NULL;
    rc = silt_dataset_delete_many(ws, (const char *const *)argv, (size_t)argc);
    silt_workspace_free(ws);
    if (rc < 0) {
        json_decref(deleted);
        return cli_fail(NULL);
    }
    if (c->json)
        cli_json_print(deleted ? json_pack("{s:o}", "deleted", deleted) : NULL);
    for (int i = 0; i < argc && !c->json; i++)
        printf("Deleted %s\n", argv[i]);
    return EXIT_OK;
}
