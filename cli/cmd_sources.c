/* cmd_sources.c — `silt sources`: lists the Source
 * resources of the workspace (stored by `silt add`), as a table or, with
 * --json, one JSON array. `sources` then notes the files FilesGlob pulls
 * skipped (any dataset's source; with --json under each Source resource's
 * "skipped"), and the buffered / dropped records of buffered RestEndpoint
 * sources (with --json under "buffer"). Uses the public API only. `silt
 * flows` is cmd_flows.c. */
#include "cli.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int no_args(int argc, char **argv, const char *cmd)
{
    for (int i = 0; i < argc; i++)
        if (argv[i][0] == '-' && argv[i][1] != '\0' && strcmp(argv[i], "--") != 0)
            return cli_usage("%s: unknown option '%s'", cmd, argv[i]);
    if (argc)
        return cli_usage("%s takes no arguments", cmd);
    return 0;
}

static void print_json(json_t *arr)
{
    cli_json_write(arr);
    json_decref(arr);
}

/* The notes on files FilesGlob pulls skipped, one line per dataset source:
 * "NAME (source S): N files skipped: a.csv (reason), b.csv (reason)". */
static void print_skipped(const silt_skipped_file *v, size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && strcmp(v[j].dataset, v[i].dataset) == 0 && strcmp(v[j].source, v[i].source) == 0)
            j++;
        printf("%s (source %s): %zu file%s skipped: ", v[i].dataset, v[i].source, j - i, j - i == 1 ? "" : "s");
        for (size_t k = i; k < j; k++)
            printf("%s%s (%s)", k > i ? ", " : "", v[k].file, v[k].reason);
        putchar('\n');
        i = j;
    }
}

/* JSON array of the skipped files of Source resource `name`. */
static json_t *skipped_json(const silt_skipped_file *v, size_t n, const char *name)
{
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < n; i++)
        if (strcmp(v[i].source, name) == 0)
            json_array_append_new(arr, json_pack("{s:s,s:s,s:s}", "dataset", v[i].dataset, "file", v[i].file,
                                                 "reason", v[i].reason));
    return arr ? arr : json_null();
}

/* One line per buffered RestEndpoint source and per MQTT source ("NAME: 2
 * records buffered (MQTT)"), after the table:
 * "NAME: 3 records buffered (bufferSize 10, Reject), 0 dropped". */
static void print_buffers(const silt_source_info *v, size_t n)
{
    bool first = true;
    for (size_t i = 0; i < n; i++) {
        bool mqtt = strcmp(v[i].ingress_kind, "Mqtt") == 0;
        if (!v[i].has_buffer && !mqtt)
            continue;
        if (first)
            putchar('\n');
        first = false;
        if (mqtt) {
            printf("%s: %llu record%s buffered (MQTT)\n", v[i].name, (unsigned long long)v[i].buffered,
                   v[i].buffered == 1 ? "" : "s");
            continue;
        }
        printf("%s: %llu record%s buffered (bufferSize %llu, %s), %llu dropped\n", v[i].name,
               (unsigned long long)v[i].buffered, v[i].buffered == 1 ? "" : "s",
               (unsigned long long)v[i].buffer_size, v[i].overflow_policy, (unsigned long long)v[i].dropped);
    }
}

int cmd_sources(cli_ctx *c, int argc, char **argv)
{
    int rc = no_args(argc, argv, "sources");
    if (rc)
        return rc;
    silt_workspace *ws;
    if (cli_open_workspace(c, &ws))
        return EXIT_FAIL;
    silt_source_info *v = NULL;
    size_t n = 0;
    silt_skipped_file *sk = NULL;
    size_t nsk = 0;
    if (silt_sources_list(&v, &n, ws) < 0 || silt_pull_skipped_list(&sk, &nsk, ws) < 0) {
        silt_sources_free(v, n);
        silt_workspace_free(ws);
        return cli_fail(NULL);
    }
    if (c->json) {
        json_t *arr = json_array();
        for (size_t i = 0; arr && i < n; i++) {
            json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:o}", "name", v[i].name, "ingress", v[i].ingress_kind,
                                  "location", v[i].ingress_location, "merge", v[i].merge_kind, "skipped",
                                  skipped_json(sk, nsk, v[i].name));
            if (o && strcmp(v[i].ingress_kind, "Mqtt") == 0)
                json_object_set_new(o, "buffer", json_pack("{s:I}", "buffered", (json_int_t)v[i].buffered));
            if (o && v[i].has_buffer)
                json_object_set_new(o, "buffer",
                                    json_pack("{s:I,s:s,s:I,s:I}", "bufferSize", (json_int_t)v[i].buffer_size,
                                              "overflowPolicy", v[i].overflow_policy, "buffered",
                                              (json_int_t)v[i].buffered, "dropped", (json_int_t)v[i].dropped));
            json_array_append_new(arr, o);
        }
        if (arr)
            print_json(arr);
    } else {
        if (n)
            printf("%-24s %-10s %-10s %s\n", "NAME", "INGRESS", "MERGE", "LOCATION");
        for (size_t i = 0; i < n; i++)
            printf("%-24s %-10s %-10s %s\n", v[i].name, *v[i].ingress_kind ? v[i].ingress_kind : "-",
                   *v[i].merge_kind ? v[i].merge_kind : "-",
                   *v[i].ingress_location ? v[i].ingress_location : "-");
        print_buffers(v, n);
        if (n && nsk)
            putchar('\n');
        print_skipped(sk, nsk);
    }
    silt_skipped_files_free(sk, nsk);
    silt_sources_free(v, n);
    silt_workspace_free(ws);
    return EXIT_OK;
}
