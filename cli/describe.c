/* describe.c — what `silt info` and `silt log --detail` say about a
 * dataset beyond its summary: the newest SetInfo / SetLicense, the schema,
 * the sources (push sources still enabled, the polling source, Flow
 * resources targeting the dataset), the branches; and the main fields of
 * each block. Everything is read through the public API (the block
 * iterator and silt_block_to_json), so the text and the JSON (`--json`)
 * come from the same JSON values and carry the same keys.
 */
#include "cli.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The JSON object of a block (caller decrefs), or NULL after cli_fail. */
json_t *cli_block_json(const silt_block *b)
{
    char *text = NULL;
    if (silt_block_to_json(&text, b) < 0)
        return NULL;
    json_error_t jerr;
    json_t *o = json_loads(text, 0, &jerr);
    free(text);
    return o;
}

static const char *jstr(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

/* "Ledger (primary key: a, b)" for a merge strategy object. */
static void merge_text(char *buf, size_t n, const json_t *merge)
{
    size_t len = (size_t)snprintf(buf, n, "%s", jstr(merge, "kind"));
    json_t *pk = json_object_get(merge, "primaryKey");
    for (size_t i = 0; i < json_array_size(pk) && len < n; i++)
        len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? ", " : " (primary key: ",
                                json_string_value(json_array_get(pk, i)));
    if (json_array_size(pk) && len < n)
        snprintf(buf + len, n - len, ")");
}

/* Where a FetchStep reads: the url, path, image, host or node of its kind. */
static const char *fetch_location(const json_t *fetch)
{
    static const char *const KEYS[] = {"url", "path", "image", "host", "nodeUrl"};
    for (size_t i = 0; i < sizeof KEYS / sizeof KEYS[0]; i++)
        if (json_is_string(json_object_get(fetch, KEYS[i])))
            return jstr(fetch, KEYS[i]);
    return "";
}

static json_t *push_source_json(const json_t *ev)
{
    return json_pack("{s:s,s:s,s:n,s:s,s:O?}", "kind", "push", "name", jstr(ev, "sourceName"), "location",
                     "read", jstr(json_object_get(ev, "read"), "kind"), "merge", json_object_get(ev, "merge"));
}

static json_t *polling_source_json(const json_t *ev)
{
    const json_t *fetch = json_object_get(ev, "fetch");
    return json_pack("{s:s,s:s,s:s,s:s,s:O?}", "kind", "polling", "fetch", jstr(fetch, "kind"), "location",
                     fetch_location(fetch), "read", jstr(json_object_get(ev, "read"), "kind"), "merge",
                     json_object_get(ev, "merge"));
}

/* State while walking the chain newest first. */
typedef struct walk {
    json_t *info, *license, *polling;
    json_t *push;     /* array, newest first */
    json_t *disabled; /* object: push source names disabled by a newer block */
    bool polling_off;
} walk;

static int walk_event(walk *w, json_t *ev)
{
    const char *k = jstr(ev, "kind");
    if (!w->info && strcmp(k, "SetInfo") == 0)
        w->info = json_incref(ev);
    else if (!w->license && strcmp(k, "SetLicense") == 0)
        w->license = json_incref(ev);
    else if (strcmp(k, "DisablePollingSource") == 0 && !w->polling)
        w->polling_off = true;
    else if (strcmp(k, "SetPollingSource") == 0 && !w->polling && !w->polling_off)
        w->polling = json_incref(ev);
    else if (strcmp(k, "DisablePushSource") == 0)
        json_object_set_new(w->disabled, jstr(ev, "sourceName"), json_true());
    else if (strcmp(k, "AddPushSource") == 0 && !json_object_get(w->disabled, jstr(ev, "sourceName"))) {
        json_object_set_new(w->disabled, jstr(ev, "sourceName"), json_true()); /* older ones are replaced */
        json_array_insert_new(w->push, 0, push_source_json(ev));
    }
    return 0;
}

static int walk_chain(walk *w, silt_dataset *ds)
{
    silt_block_iter *it = NULL;
    if (silt_block_iter_new(&it, ds) < 0)
        return -1;
    int rc = 0;
    for (;;) {
        silt_block *b = NULL;
        if (silt_block_iter_next(&b, it) < 0) {
            rc = -1;
            break;
        }
        if (!b)
            break;
        json_t *o = cli_block_json(b);
        silt_block_free(b);
        if (!o) {
            rc = -1;
            break;
        }
        walk_event(w, json_object_get(o, "event"));
        json_decref(o);
    }
    silt_block_iter_free(it);
    return rc;
}

/* Sources of Flow resources whose target is the dataset. */
static void add_flow_sources(json_t *sources, silt_workspace *ws, const char *name)
{
    silt_flow_info *fl = NULL;
    silt_source_info *src = NULL;
    size_t nf = 0, ns = 0;
    if (silt_flows_list(&fl, &nf, ws, -1) < 0 || silt_sources_list(&src, &ns, ws) < 0) {
        silt_flows_free(fl, nf);
        return; /* resources are optional here: info still says the rest */
    }
    for (size_t i = 0; i < nf; i++) {
        if (strcmp(fl[i].target, name) != 0 || !fl[i].source)
            continue;
        const silt_source_info *s = NULL;
        for (size_t k = 0; k < ns && !s; k++)
            if (strcmp(src[k].name, fl[i].source) == 0)
                s = &src[k];
        json_array_append_new(sources,
                              json_pack("{s:s,s:s,s:s,s:s,s:s,s:{s:s}}", "kind", "flow", "name", fl[i].name,
                                        "source", fl[i].source, "fetch", s ? s->ingress_kind : "", "location",
                                        s ? s->ingress_location : "", "merge", "kind", s ? s->merge_kind : ""));
    }
    silt_flows_free(fl, nf);
    silt_sources_free(src, ns);
}

static json_t *branches_json(silt_dataset *ds)
{
    silt_branch_info *br = NULL;
    size_t n = 0;
    json_t *arr = json_array();
    if (silt_branch_list(&br, &n, ds) < 0)
        return arr;
    for (size_t i = 0; arr && i < n; i++)
        json_array_append_new(arr, json_pack("{s:s,s:s,s:I}", "name", br[i].name, "head", br[i].head, "blocks",
                                             (json_int_t)br[i].num_blocks));
    free(br);
    return arr;
}

static json_t *schema_json(silt_dataset *ds)
{
    char *text = NULL;
    if (silt_dataset_schema_get(&text, ds, SILT_SCHEMA_JSON) < 0)
        return json_null(); /* no schema yet */
    json_t *o = json_loads(text, 0, NULL);
    free(text);
    return o ? o : json_null();
}

int cli_describe(json_t *o, silt_workspace *ws, silt_dataset *ds, const char *name)
{
    walk w = {.push = json_array(), .disabled = json_object()};
    int rc = w.push && w.disabled ? walk_chain(&w, ds) : -1;
    if (rc == 0) {
        json_object_set_new(o, "description", w.info && json_is_string(json_object_get(w.info, "description"))
                                                  ? json_string(jstr(w.info, "description"))
                                                  : json_null());
        json_t *kw = w.info ? json_object_get(w.info, "keywords") : NULL;
        json_object_set_new(o, "keywords", kw ? json_incref(kw) : json_array());
        if (w.license)
            json_object_del(w.license, "kind");
        json_object_set_new(o, "license", w.license ? json_incref(w.license) : json_null());
        json_object_set_new(o, "schema", schema_json(ds));
        json_t *sources = json_array();
        json_array_extend(sources, w.push);
        if (w.polling)
            json_array_append_new(sources, polling_source_json(w.polling));
        add_flow_sources(sources, ws, name);
        json_object_set_new(o, "sources", sources);
        json_object_set_new(o, "branches", branches_json(ds));
        char *remote = NULL;
        if (silt_dataset_remote_get(&remote, ds) == 0)
            json_object_set_new(o, "remote", remote ? json_string(remote) : json_null());
        free(remote);
    }
    json_decref(w.info);
    json_decref(w.license);
    json_decref(w.polling);
    json_decref(w.push);
    json_decref(w.disabled);
    return rc;
}

/* ---- text ---------------------------------------------------------------- */

void cli_describe_print(const json_t *o, silt_dataset *ds)
{
    const json_t *d = json_object_get(o, "description");
    printf("Description:   %s\n", json_is_string(d) ? json_string_value(d) : "-");
    const json_t *kw = json_object_get(o, "keywords");
    printf("Keywords:      ");
    for (size_t i = 0; i < json_array_size(kw); i++)
        printf("%s%s", i ? ", " : "", json_string_value(json_array_get(kw, i)));
    printf("%s\n", json_array_size(kw) ? "" : "-");
    const json_t *lic = json_object_get(o, "license");
    if (json_is_object(lic)) {
        printf("License:       %s", jstr(lic, "shortName"));
        if (*jstr(lic, "name"))
            printf(" (%s)", jstr(lic, "name"));
        if (*jstr(lic, "websiteUrl"))
            printf(" %s", jstr(lic, "websiteUrl"));
        printf("\n");
    } else {
        printf("License:       -\n");
    }
    char *schema = NULL;
    if (silt_dataset_schema_get(&schema, ds, SILT_SCHEMA_TEXT) == 0) {
        printf("Schema:\n");
        for (char *line = strtok(schema, "\n"); line; line = strtok(NULL, "\n"))
            printf("  %s\n", line);
    } else {
        printf("Schema:        -\n");
    }
    free(schema);
    const json_t *src = json_object_get(o, "sources");
    printf("Sources:%s\n", json_array_size(src) ? "" : "       -");
    for (size_t i = 0; i < json_array_size(src); i++) {
        const json_t *s = json_array_get(src, i);
        char merge[256];
        merge_text(merge, sizeof merge, json_object_get(s, "merge"));
        const char *kind = jstr(s, "kind");
        if (strcmp(kind, "push") == 0)
            printf("  push '%s': read %s, merge %s\n", jstr(s, "name"), jstr(s, "read"), merge);
        else if (strcmp(kind, "polling") == 0)
            printf("  polling: %s %s, read %s, merge %s\n", jstr(s, "fetch"), jstr(s, "location"), jstr(s, "read"),
                   merge);
        else
            printf("  flow '%s' (source '%s'): %s %s, merge %s\n", jstr(s, "name"), jstr(s, "source"),
                   *jstr(s, "fetch") ? jstr(s, "fetch") : "-", jstr(s, "location"), *merge ? merge : "-");
    }
    const char *remote = jstr(o, "remote");
    if (*remote)
        printf("Remote:        %s\n", remote);
    const json_t *br = json_object_get(o, "branches");
    printf("Branches:\n");
    for (size_t i = 0; i < json_array_size(br); i++) {
        const json_t *b = json_array_get(br, i);
        printf("  %-16s %s  %lld blocks\n", jstr(b, "name"), jstr(b, "head"),
               (long long)json_integer_value(json_object_get(b, "blocks")));
    }
}

/* ---- log --detail -------------------------------------------------------- */

static long long jint(const json_t *o, const char *key)
{
    return (long long)json_integer_value(json_object_get(o, key));
}

/* "f1620… (920 bytes)" lines of a DataSlice / Checkpoint. */
static void print_object(const char *label, const json_t *obj)
{
    if (!json_is_object(obj)) {
        printf("        %-13s -\n", label);
        return;
    }
    printf("        %-13s %s (%lld bytes)\n", label, jstr(obj, "physicalHash"), jint(obj, "size"));
}

/* AddData and ExecuteTransform: records, offsets, objects, watermark, state. */
static void detail_data(const json_t *ev)
{
    const json_t *nd = json_object_get(ev, "newData");
    if (json_is_object(nd)) {
        const json_t *iv = json_object_get(nd, "offsetInterval");
        long long s = jint(iv, "start"), e = jint(iv, "end");
        printf("        records:      %lld (offsets %lld..%lld)\n", e - s + 1, s, e);
        print_object("data:", nd);
        printf("        logical hash: %s\n", jstr(nd, "logicalHash"));
    } else {
        printf("        records:      0\n");
    }
    print_object("checkpoint:", json_object_get(ev, "newCheckpoint"));
    const json_t *wm = json_object_get(ev, "newWatermark");
    char t[CLI_TIME_MAX];
    printf("        watermark:    %s\n", json_is_string(wm) ? cli_time(t, json_string_value(wm)) : "-");
    const json_t *st = json_object_get(ev, "newSourceState");
    if (json_is_object(st))
        printf("        source state: %s %s %s\n", jstr(st, "sourceName"), jstr(st, "kind"), jstr(st, "value"));
    else
        printf("        source state: -\n");
}

/* A key that holds a time (newWatermark, eventTime, …): shown as cli_time. */
static bool is_time_key(const char *key)
{
    size_t n = strlen(key);
    return (n >= 4 && strcasecmp(key + n - 4, "time") == 0) || (n >= 9 && strcasecmp(key + n - 9, "watermark") == 0);
}

/* Scalars and arrays of strings of an event, "key: value" (objects are
 * summarised by their kind); times as cli_time. */
static void detail_fields(const json_t *ev)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)ev, key, v)
    {
        if (strcmp(key, "kind") == 0)
            continue;
        char label[64];
        snprintf(label, sizeof label, "%s:", key);
        printf("        %-13s ", label);
        char t[CLI_TIME_MAX];
        if (json_is_string(v) && is_time_key(key))
            printf("%s", cli_time(t, json_string_value(v)));
        else if (json_is_string(v))
            printf("%s", json_string_value(v));
        else if (json_is_integer(v))
            printf("%lld", (long long)json_integer_value(v));
        else if (json_is_boolean(v))
            printf("%s", json_is_true(v) ? "true" : "false");
        else if (json_is_array(v)) {
            for (size_t i = 0; i < json_array_size(v); i++) {
                const json_t *x = json_array_get(v, i);
                printf("%s%s", i ? ", " : "", json_is_string(x) ? json_string_value(x) : jstr(x, "kind")[0] ? jstr(x, "kind") : "…");
            }
            if (!json_array_size(v))
                printf("-");
        } else if (json_is_object(v))
            printf("%s", *jstr(v, "kind") ? jstr(v, "kind") : "{…}");
        else
            printf("-");
        printf("\n");
    }
}

void cli_block_detail_print(const json_t *block)
{
    const json_t *ev = json_object_get(block, "event");
    const char *k = jstr(ev, "kind");
    if (strcmp(k, "AddData") == 0 || strcmp(k, "ExecuteTransform") == 0) {
        detail_data(ev);
    } else if (strcmp(k, "SetDataSchema") == 0) {
        const json_t *f = json_object_get(json_object_get(ev, "schema"), "fields");
        printf("        fields:       ");
        for (size_t i = 0; i < json_array_size(f); i++)
            printf("%s%s", i ? ", " : "", jstr(json_array_get(f, i), "name"));
        printf("\n");
    } else if (strcmp(k, "AddPushSource") == 0 || strcmp(k, "SetPollingSource") == 0) {
        char merge[256];
        merge_text(merge, sizeof merge, json_object_get(ev, "merge"));
        if (*k == 'A')
            printf("        source:       %s\n", jstr(ev, "sourceName"));
        else
            printf("        fetch:        %s %s\n", jstr(json_object_get(ev, "fetch"), "kind"),
                   fetch_location(json_object_get(ev, "fetch")));
        printf("        read:         %s\n", jstr(json_object_get(ev, "read"), "kind"));
        printf("        merge:        %s\n", merge);
    } else {
        detail_fields(ev);
    }
}
