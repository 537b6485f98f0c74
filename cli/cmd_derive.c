/* cmd_derive.c — commands around derivative datasets (issue 16,
 * docs/transforms.md): `silt reset NAME[@BRANCH] --to BLOCK [--force]`
 * moves a head back (silt_dataset_reset) and prints one line, or with --json
 * one object; a refusal or an unknown block is one error line, exit 1, the
 * dataset unchanged. `silt lineage NAME [--format text|dot|json]` prints
 * the dependency graph around a dataset (silt_workspace_lineage). */
#include "cli.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_reset(cli_ctx *c, int argc, char **argv)
{
    const char *ref = NULL, *to = NULL;
    bool force = false;
    for (int i = 0; i < argc; i++) {
        int r = cli_opt_value(argc, argv, &i, "--to", &to);
        if (r < 0)
            return cli_usage("reset: --to needs a block (hash, hash prefix or sequence number)");
        if (r > 0)
            continue;
        if (strcmp(argv[i], "--force") == 0)
            force = true;
        else if (argv[i][0] == '-')
            return cli_usage("reset: unknown option '%s'", argv[i]);
        else if (ref)
            return cli_usage("reset takes one dataset");
        else
            ref = argv[i];
    }
    if (!ref || !to)
        return cli_usage("reset needs NAME[@BRANCH] --to BLOCK");
    silt_workspace *ws;
    if (cli_open_workspace(c, &ws))
        return EXIT_FAIL;
    silt_dataset *ds = NULL;
    silt_reset_result r;
    int rc = silt_dataset_open(&ds, ws, ref);
    if (rc == 0)
        rc = silt_dataset_reset(ds, to, force, &r);
    int status = EXIT_OK;
    if (rc < 0) {
        status = cli_fail(NULL);
    } else if (c->json) {
        json_t *o = cli_dataset_json(ds);
        if (o && json_object_update_new(o, json_pack("{s:s,s:I,s:I,s:s}", "ref", ref, "fromSequence",
                                                     (json_int_t)r.from_seq, "toSequence", (json_int_t)r.to_seq,
                                                     "head", r.head)) == 0)
            cli_json_print(o);
        else
            status = cli_fail(NULL);
    } else if (r.from_seq == r.to_seq) {
        printf("%s: already at block %llu (%s)\n", ref, (unsigned long long)r.to_seq, r.head);
    } else {
        unsigned long long n = (unsigned long long)(r.from_seq - r.to_seq);
        printf("%s: head moved back to block %llu (%s), %llu block%s dropped\n", ref, (unsigned long long)r.to_seq,
               r.head, n, n == 1 ? "" : "s");
    }
    silt_dataset_free(ds);
    silt_workspace_free(ws);
    return status;
}

static const char *kind_name(silt_dataset_kind k)
{
    return k == SILT_DERIVATIVE ? "derivative" : "root";
}

static void lineage_text(const silt_lineage *l)
{
    printf("%s (%s)\n", l->nodes[0].name, kind_name(l->nodes[0].kind));
    for (int up = 1; up >= 0; up--) {
        bool any = false;
        for (size_t i = 0; i < l->num_edges; i++)
            any = any || l->edges[i].upstream == (up == 1);
        printf("%s:%s\n", up ? "upstream" : "downstream", any ? "" : " none");
        for (size_t i = 0; i < l->num_edges; i++)
            if (l->edges[i].upstream == (up == 1))
                printf("  %s -> %s\n", l->edges[i].from, l->edges[i].to);
    }
}

/* A DOT identifier: the name in double quotes, '"' and '\' escaped. */
static void dot_id(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            putchar('\\');
        putchar(*s);
    }
    putchar('"');
}

static void lineage_dot(const silt_lineage *l)
{
    printf("digraph lineage {\n");
    for (size_t i = 0; i < l->num_nodes; i++) {
        printf("  ");
        dot_id(l->nodes[i].name);
        printf(" [shape=%s%s];\n", l->nodes[i].kind == SILT_DERIVATIVE ? "ellipse" : "box",
               i == 0 ? ", style=bold" : "");
    }
    for (size_t i = 0; i < l->num_edges; i++) {
        printf("  ");
        dot_id(l->edges[i].from);
        printf(" -> ");
        dot_id(l->edges[i].to);
        printf(";\n");
    }
    printf("}\n");
}

static json_t *lineage_json(const silt_lineage *l)
{
    json_t *nodes = json_array(), *edges = json_array();
    for (size_t i = 0; nodes && i < l->num_nodes; i++)
        json_array_append_new(nodes, json_pack("{s:s,s:s}", "name", l->nodes[i].name, "kind",
                                               kind_name(l->nodes[i].kind)));
    for (size_t i = 0; edges && i < l->num_edges; i++)
        json_array_append_new(edges, json_pack("{s:s,s:s,s:s}", "from", l->edges[i].from, "to", l->edges[i].to,
                                               "direction", l->edges[i].upstream ? "upstream" : "downstream"));
    return json_pack("{s:s,s:o,s:o}", "dataset", l->nodes[0].name, "nodes", nodes, "edges", edges);
}

int cmd_lineage(cli_ctx *c, int argc, char **argv)
{
    const char *name = NULL, *format = "text";
    for (int i = 0; i < argc; i++) {
        int r = cli_opt_value(argc, argv, &i, "--format", &format);
        if (r < 0)
            return cli_usage("lineage: --format needs text, dot or json");
        if (r > 0)
            continue;
        if (argv[i][0] == '-')
            return cli_usage("lineage: unknown option '%s'", argv[i]);
        if (name)
            return cli_usage("lineage takes one dataset");
        name = argv[i];
    }
    if (!name)
        return cli_usage("lineage needs NAME");
    if (c->json)
        format = "json";
    if (strcmp(format, "text") != 0 && strcmp(format, "dot") != 0 && strcmp(format, "json") != 0)
        return cli_usage("lineage: --format must be text, dot or json, not '%s'", format);
    silt_workspace *ws;
    if (cli_open_workspace(c, &ws))
        return EXIT_FAIL;
    silt_lineage *l = NULL;
    int status = EXIT_OK;
    if (silt_workspace_lineage(&l, ws, name) < 0)
        status = cli_fail(NULL);
    else if (strcmp(format, "dot") == 0)
        lineage_dot(l);
    else if (strcmp(format, "json") == 0)
        cli_json_print(lineage_json(l));
    else
        lineage_text(l);
    silt_lineage_free(l);
    silt_workspace_free(ws);
    return status;
}
