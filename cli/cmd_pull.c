/* cmd_pull.c — `silt pull NAME… | --all [--recursive] [--fetch-uncacheable]
 * [--set-watermark T]`: runs the polling source of each root dataset (a Flow
 * resource targeting it, else the SetPollingSource of its chain) or the
 * transform of each derivative (silt_dataset_derive), and prints
 * one line per dataset ("up to date" or the new records, offsets and
 * watermark), or with --json one array of objects ("blocks" = AddData blocks
 * committed). --all pulls every root dataset that has a polling source or is
 * the target of a flow with a source, then every derivative after its
 * inputs; --recursive pulls the inputs of each NAME first, in dependency
 * order (each dataset once). Every dataset is tried; the exit code
 * is 1 if any of them failed. Warnings come redacted from the library.
 * On a terminal a progress line shows the files, records and bytes of the
 * current dataset (progress.c); Ctrl-C stops at the next file and says
 * what was committed (exit 130).
 * Remote datasets (cmd_remote.c): `silt pull URL|REPO/NAME [--as LOCAL]`
 * clones or updates; `silt pull NAME` of a clone, and --all, update clones
 * from the remote they remember. */
#include "cli.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_warning(void *ctx, const char *line)
{
    cli_progress_clear(ctx); /* the progress line is drawn again at the next report */
    fprintf(stderr, "silt: warning: %s\n", line);
}

/* After Ctrl-C: what of `ref` was committed and what not. */
static void print_interrupted(const char *ref, const silt_pull_result *r, const cli_progress *p)
{
    unsigned long long done = p->snap.done, total = p->snap.total;
    fprintf(stderr, "silt: interrupted: pull '%s': %llu of %llu %s ingested", ref, done, total,
            p->snap.unit ? p->snap.unit : "files");
    if (r->num_ingests)
        fprintf(stderr, " (%zu block%s, head %s)", r->num_ingests, r->num_ingests == 1 ? "" : "s", r->head);
    else
        fputs(" (no block committed)", stderr);
    if (p->item[0] && done < total)
        fprintf(stderr, "; nothing of '%s' was committed", p->item);
    else if (done == total)
        fputs("; everything was committed", stderr);
    fputc('\n', stderr);
}

/* ", read N input records (incremental|full)" for a derivative's line
 * (static buffer). */
static const char *read_note(const silt_pull_result *r)
{
    static char buf[96];
    snprintf(buf, sizeof buf, ", read %llu input record%s (%s)", (unsigned long long)r->rows_read,
             r->rows_read == 1 ? "" : "s", r->incremental ? "incremental" : "full");
    return buf;
}

typedef struct order_ctx {
    silt_workspace *ws;
    const silt_flow_info *flows;
    size_t nflows;
} order_ctx;

/* Adds `name` to refs after its inputs (depth-first, each once): the
 * dependency order of --recursive and --all. An input that is a root
 * dataset without a polling source (nor a flow with a source targeting it)
 * is not pulled: it is fed by ingest or push. `depth` bounds the walk. */
static int add_ordered(order_ctx *oc, const char *name, bool named, char ***refs, size_t *n, size_t *cap,
                       int depth)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*refs)[i], name) == 0)
            return EXIT_OK;
    if (depth > 64)
        return cli_fail_code(SILT_EINVAL, "pull '%s': the inputs are nested more than 64 levels deep", name);
    silt_dataset *ds = NULL;
    silt_dataset_info info;
    char **inputs = NULL;
    if (silt_dataset_open(&ds, oc->ws, name) < 0 || silt_dataset_info_get(&info, ds) < 0 ||
        silt_dataset_inputs(&inputs, ds) < 0) {
        silt_dataset_free(ds);
        return cli_fail(NULL);
    }
    silt_dataset_free(ds);
    bool pull = named || info.kind == SILT_DERIVATIVE || info.has_polling_source;
    for (size_t k = 0; k < oc->nflows && !pull; k++)
        pull = oc->flows[k].source && oc->flows[k].target && strcmp(oc->flows[k].target, name) == 0;
    int st = EXIT_OK;
    for (size_t i = 0; inputs[i] && st == EXIT_OK; i++)
        st = add_ordered(oc, inputs[i], false, refs, n, cap, depth + 1);
    silt_strv_free(inputs);
    if (st != EXIT_OK || !pull)
        return st;
    if (*n + 1 >= *cap) {
        size_t nc = *cap * 2 + 8;
        char **nr = realloc(*refs, nc * sizeof *nr);
        if (!nr)
            return cli_fail_code(SILT_ENOMEM, "out of memory");
        *refs = nr;
        *cap = nc;
    }
    if (!((*refs)[*n] = strdup(name)))
        return cli_fail_code(SILT_ENOMEM, "out of memory");
    (*refs)[++*n] = NULL;
    return EXIT_OK;
}

/* Pulls one dataset; prints its line (text mode) or appends to `arr`.
 * EXIT_INTERRUPTED after Ctrl-C (the summary is printed). */
static int pull_one(silt_workspace *ws, const char *ref, silt_pull_opts *o, cli_ctx *c, json_t *arr)
{
    silt_dataset *ds = NULL;
    silt_pull_result r;
    memset(&r, 0, sizeof r);
    cli_progress prog;
    cli_progress_begin(&prog, c, ref);
    o->warn_ctx = &prog;
    o->progress = cli_progress_fn;
    o->progress_ctx = &prog;
    int rc = silt_dataset_open(&ds, ws, ref);
    silt_dataset_info kind;
    bool derivative = false;
    if (rc >= 0 && !o->set_watermark)
        rc = silt_dataset_info_get(&kind, ds);
    if (rc >= 0 && !o->set_watermark)
        derivative = kind.kind == SILT_DERIVATIVE;
    if (rc >= 0)
        rc = derivative ? silt_dataset_derive(&r, ds) : silt_dataset_pull(&r, ds, o);
    /* name, id and rid for --json (copied: ds is freed before printing) */
    silt_dataset_info in;
    json_t *who = ds && silt_dataset_info_get(&in, ds) >= 0
                      ? json_pack("{s:s,s:s,s:s}", "name", in.name, "id", in.id, "rid", in.rid)
                      : json_pack("{s:s,s:n,s:n}", "name", ref, "id", "rid");
    silt_dataset_free(ds);
    cli_progress_end(&prog);
    if (cli_interrupted()) {
        if (rc < 0 && rc != SILT_ECANCELED) /* e.g. a Pipe command killed by the same Ctrl-C */
            cli_fail(NULL);
        json_decref(who);
        print_interrupted(ref, &r, &prog);
        return EXIT_INTERRUPTED;
    }
    if (c->json) {
        json_t *j = json_pack("{s:o,s:b,s:b,s:I,s:I}", "name", json_copy(json_object_get(who, "name")), "upToDate",
                              rc >= 0 && r.up_to_date,
                              "uncacheable", r.uncacheable, "records", (json_int_t)r.num_records, "blocks",
                              (json_int_t)r.num_ingests);
        if (j) {
            json_object_set(j, "id", json_object_get(who, "id"));
            json_object_set(j, "rid", json_object_get(who, "rid"));
            json_object_set_new(j, "firstOffset", r.has_offsets ? json_integer((json_int_t)r.first_offset)
                                                                : json_null());
            json_object_set_new(j, "lastOffset", r.has_offsets ? json_integer((json_int_t)r.last_offset)
                                                               : json_null());
            json_object_set_new(j, "watermark", r.has_watermark ? json_string(r.watermark) : json_null());
            json_object_set_new(j, "head", r.head[0] ? json_string(r.head) : json_null());
            json_object_set_new(j, "error", rc < 0 ? json_string(silt_error_last()) : json_null());
            json_array_append_new(arr, j);
        }
        json_decref(who);
        if (rc < 0)
            cli_fail(NULL);
        return rc < 0 ? EXIT_FAIL : EXIT_OK;
    }
    json_decref(who);
    if (rc < 0)
        return cli_fail(NULL);
    char t[CLI_TIME_MAX];
    const char *wm = r.has_watermark ? cli_time(t, r.watermark) : "-";
    if (o->set_watermark)
        printf("%s: watermark set to %s\n", ref, wm);
    else if (r.up_to_date && r.uncacheable)
        printf("%s: up to date (uncacheable source; use --fetch-uncacheable)\n", ref);
    else if (r.up_to_date)
        printf("%s: up to date\n", ref);
    else if (r.has_offsets)
        printf("%s: %llu new record%s (offsets %llu..%llu), watermark %s%s\n", ref, (unsigned long long)r.num_records,
               r.num_records == 1 ? "" : "s", (unsigned long long)r.first_offset,
               (unsigned long long)r.last_offset, wm, derivative ? read_note(&r) : "");
    else if (derivative)
        printf("%s: 0 new records, watermark %s%s\n", ref, wm, read_note(&r));
    else
        printf("%s: 0 new records, watermark %s\n", ref, wm);
    return EXIT_OK;
}

/* The remote half: each ref that is a remote (URL, REPO/NAME) or a clone
 * (a local dataset remembering its remote; with --all, every clone) is
 * pulled from its remote and removed from refs. */
static int pull_remotes(cli_ctx *c, silt_workspace *ws, const char **refs, size_t *nrefs, bool all,
                        const silt_transfer_opts *xo, json_t *arr)
{
    int status = EXIT_OK;
    size_t kept = 0;
    for (size_t i = 0; i < *nrefs; i++) {
        if (silt_remote_ref_is(ws, refs[i])) {
            if (cli_remote_pull_one(c, ws, refs[i], xo, arr) != EXIT_OK)
                status = EXIT_FAIL;
            continue;
        }
        silt_dataset *ds = NULL;
        char *remote = NULL;
        if (silt_dataset_open(&ds, ws, refs[i]) == 0 && silt_dataset_remote_get(&remote, ds) == 0 && remote) {
            silt_transfer_opts o = *xo;
            o.as = refs[i];
            if (cli_remote_pull_one(c, ws, remote, &o, arr) != EXIT_OK)
                status = EXIT_FAIL;
        } else {
            refs[kept++] = refs[i];
        }
        free(remote);
        silt_dataset_free(ds);
    }
    *nrefs = kept;
    char **names = NULL;
    if (all && silt_dataset_list(&names, ws) == 0) {
        for (size_t i = 0; names[i]; i++) {
            silt_dataset *ds = NULL;
            char *remote = NULL;
            if (silt_dataset_open(&ds, ws, names[i]) == 0 && silt_dataset_remote_get(&remote, ds) == 0 && remote) {
                silt_transfer_opts o = *xo;
                o.as = names[i];
                if (cli_remote_pull_one(c, ws, remote, &o, arr) != EXIT_OK)
                    status = EXIT_FAIL;
            }
            free(remote);
            silt_dataset_free(ds);
        }
    }
    silt_strv_free(names);
    return status;
}

int cmd_pull(cli_ctx *c, int argc, char **argv)
{
    bool all = false, recursive = false;
    silt_pull_opts o;
    memset(&o, 0, sizeof o);
    o.warn = print_warning;
    const char **refs = calloc((size_t)argc + 1, sizeof *refs);
    if (!refs)
        return cli_fail_code(SILT_ENOMEM, "out of memory");
    size_t nrefs = 0;
    silt_transfer_opts xo;
    memset(&xo, 0, sizeof xo);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        bool bad = false;
        int k = cli_transfer_opt(argc, argv, &i, &xo, &bad);
        if (bad) {
            free(refs);
            return EXIT_USAGE;
        }
        if (k > 0)
            continue;
        if (strcmp(a, "--all") == 0) {
            all = true;
        } else if (strcmp(a, "--recursive") == 0 || strcmp(a, "-r") == 0) {
            recursive = true;
        } else if (strcmp(a, "--fetch-uncacheable") == 0) {
            o.fetch_uncacheable = true;
        } else if (strcmp(a, "--set-watermark") == 0) {
            if (i + 1 >= argc) {
                free(refs);
                return cli_usage("pull: --set-watermark needs a value");
            }
            o.set_watermark = argv[++i];
        } else if (a[0] == '-' && a[1] != '\0') {
            free(refs);
            return cli_usage("pull: unknown option '%s'", a);
        } else {
            refs[nrefs++] = a;
        }
    }
    if (all == (nrefs > 0)) {
        free(refs);
        return cli_usage(all ? "pull: give dataset names or --all, not both" : "pull needs NAME... or --all");
    }
    silt_workspace *ws = NULL;
    if (cli_open_workspace(c, &ws)) {
        free(refs);
        return EXIT_FAIL;
    }
    char **names = NULL;
    silt_flow_info *flows = NULL;
    size_t nflows = 0;
    json_t *arr = c->json ? json_array() : NULL;
    int status = pull_remotes(c, ws, refs, &nrefs, all, &xo, arr);
    if (all) {
        if (silt_flows_list(&flows, &nflows, ws, -1) < 0 || silt_dataset_list(&names, ws) < 0) {
            status = cli_fail(NULL);
        } else {
            /* every root dataset with a polling source (all root datasets for --set-watermark) */
            for (size_t i = 0; names[i]; i++) {
                silt_dataset *ds = NULL;
                silt_dataset_info info;
                if (silt_dataset_open(&ds, ws, names[i]) < 0 || silt_dataset_info_get(&info, ds) < 0) {
                    status = cli_fail(NULL);
                    silt_dataset_free(ds);
                    continue;
                }
                bool flow = false;
                for (size_t k = 0; k < nflows && !flow; k++)
                    flow = flows[k].source && flows[k].target && strcmp(flows[k].target, names[i]) == 0;
                char *remote = NULL;
                (void)silt_dataset_remote_get(&remote, ds);
                bool clone = remote != NULL;
                free(remote);
                if (!clone && ((info.kind == SILT_ROOT && (info.has_polling_source || flow || o.set_watermark)) ||
                               (info.kind == SILT_DERIVATIVE && info.has_transform && !o.set_watermark)))
                    refs[nrefs++] = names[i];
                silt_dataset_free(ds);
                if (nrefs >= (size_t)argc) { /* grow the array */
                    const char **nr = realloc(refs, (nrefs * 2 + 2) * sizeof *refs);
                    if (!nr) {
                        status = cli_fail_code(SILT_ENOMEM, "out of memory");
                        break;
                    }
                    refs = nr;
                    argc = (int)(nrefs * 2 + 1);
                }
            }
        }
    }
    /* --recursive / --all: every derivative after its inputs */
    char **ordered = NULL;
    size_t nordered = 0, ocap = 0;
    if (status == EXIT_OK && (recursive || all) && !o.set_watermark) {
        if (!all && silt_flows_list(&flows, &nflows, ws, -1) < 0)
            status = cli_fail(NULL);
        order_ctx oc = {ws, flows, nflows};
        for (size_t i = 0; i < nrefs && status == EXIT_OK; i++)
            status = add_ordered(&oc, refs[i], true, &ordered, &nordered, &ocap, 0);
        nrefs = 0;
    }
    if (c->json && !arr)
        status = cli_fail_code(SILT_ENOMEM, "out of memory");
    cli_interrupt_catch();
    size_t total = nrefs + nordered;
    for (size_t i = 0; i < total && (!c->json || arr); i++) {
        const char *ref = i < nrefs ? refs[i] : ordered[i - nrefs];
        int st = pull_one(ws, ref, &o, c, arr);
        if (st == EXIT_INTERRUPTED) {
            if (i + 1 < total)
                fprintf(stderr, "silt: interrupted: %zu dataset%s not pulled\n", total - i - 1,
                        total - i - 1 == 1 ? "" : "s");
            status = EXIT_INTERRUPTED;
            break;
        }
        if (st != EXIT_OK)
            status = EXIT_FAIL;
    }
    if (arr) {
        cli_json_write(arr);
        json_decref(arr);
    }
    silt_strv_free(ordered);
    silt_strv_free(names);
    silt_flows_free(flows, nflows);
    silt_workspace_free(ws);
    free(refs);
    return status;
}
