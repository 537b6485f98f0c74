/* new_push.c — `silt new NAME --push-source FORMAT`: a root dataset with an
 * AddPushSource ("default") in one step, so that a first `silt ingest`
 * needs no YAML.
 *
 * The event is written as the YAML a user would write (a DatasetSnapshot
 * manifest, every user string double-quoted and escaped) and goes through
 * the same parser, checks and all-or-nothing build as `silt add`
 * (silt_ds_check_snapshot, silt_ds_add_snapshot): one path to a dataset,
 * whatever the front end. The options are checked first, so a bad
 * --schema or a missing key is an error that names the option and
 * creates nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataset/dataset_internal.h"
#include "engine/schema.h"
#include "odf/yaml.h"
#include "util/error.h"

#define ORIGIN "silt new"

/* The ReadStep kind of a format name, or NULL. */
static const char *read_kind(const char *format)
{
    static const char *const MAP[][2] = {{"csv", "Csv"},         {"json", "Json"},
                                         {"ndjson", "NdJson"},   {"geojson", "GeoJson"},
                                         {"ndgeojson", "NdGeoJson"}, {"parquet", "Parquet"}};
    for (size_t i = 0; format && i < sizeof MAP / sizeof MAP[0]; i++)
        if (strcmp(format, MAP[i][0]) == 0)
            return MAP[i][1];
    return NULL;
}

/* Appends `s` as a YAML double-quoted scalar (JSON escapes). Control
 * characters are refused: no column name or type needs them. */
static int put_quoted(silt_buf *b, const char *s, const char *what)
{
    int rc = silt_buf_putc(b, '"');
    for (const char *p = s; rc == 0 && *p; p++) {
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            return silt_err(SILT_EINVAL, "%s '%s': control characters are not allowed", what, s);
        if (*p == '"' || *p == '\\')
            rc = silt_buf_putc(b, '\\');
        if (rc == 0)
            rc = silt_buf_putc(b, *p);
    }
    return rc == 0 ? silt_buf_putc(b, '"') : rc;
}

/* Splits "a BIGINT, b DECIMAL(10,2), c STRUCT<x: INT, y: INT>" at the
 * commas outside (), <> and quotes (`…`, "…") into trimmed entries. */
static int split_ddl(silt_arena *a, const char *text, odf_strvec *out)
{
    size_t cap = 1;
    for (const char *p = text; *p; p++)
        cap += *p == ',';
    out->items = silt_arena_alloc(a, cap * sizeof *out->items);
    if (!out->items)
        return silt_err(SILT_ENOMEM, ORIGIN ": out of memory");
    out->n = 0;
    out->present = true;
    int depth = 0;
    char quote = 0;
    const char *start = text;
    for (const char *p = text;; p++) {
        if (quote && *p == quote)
            quote = 0;
        else if (!quote && (*p == '`' || *p == '"'))
            quote = *p;
        else if (!quote && (*p == '(' || *p == '<'))
            depth++;
        else if (!quote && (*p == ')' || *p == '>') && depth > 0)
            depth--;
        if (*p && (quote || depth > 0 || *p != ','))
            continue;
        const char *b = start, *e = p;
        while (b < e && (*b == ' ' || *b == '\t'))
            b++;
        while (e > b && (e[-1] == ' ' || e[-1] == '\t'))
            e--;
        if (b == e)
            return silt_err(SILT_EINVAL, "--schema '%s': empty column definition (write 'name TYPE, …')", text);
        char *item = silt_arena_alloc(a, (size_t)(e - b) + 1);
        if (!item)
            return silt_err(SILT_ENOMEM, ORIGIN ": out of memory");
        memcpy(item, b, (size_t)(e - b));
        item[e - b] = '\0';
        out->items[out->n++] = item;
        if (!*p)
            break;
        start = p + 1;
    }
    return 0;
}

static int check_spec(const silt_push_source_spec *spec)
{
    if (!read_kind(spec->format))
        return silt_err(SILT_EINVAL,
                        "unknown push source format '%s' (csv, json, ndjson, geojson, ndgeojson, parquet)",
                        spec->format ? spec->format : "");
    const char *m = spec->merge ? spec->merge : "append";
    bool keyed = strcmp(m, "ledger") == 0 || strcmp(m, "snapshot") == 0;
    if (!keyed && strcmp(m, "append") != 0)
        return silt_err(SILT_EINVAL, "unknown merge strategy '%s' (append, ledger, snapshot)", m);
    if (keyed && spec->nkeys == 0)
        return silt_err(SILT_EINVAL, "merge strategy '%s' needs its primary key (--key COLUMN)", m);
    if (!keyed && spec->nkeys > 0)
        return silt_err(SILT_EINVAL, "--key is for the ledger and snapshot merge strategies, not '%s'", m);
    for (size_t i = 0; i < spec->nkeys; i++)
        if (!spec->keys[i] || !*spec->keys[i])
            return silt_err(SILT_EINVAL, "--key: empty column name");
    return 0;
}

/* The DatasetSnapshot manifest text of the spec (ddl: the checked schema
 * entries, n == 0 without --schema). */
static int snapshot_yaml(silt_buf *y, const char *name, const silt_push_source_spec *spec, const odf_strvec *ddl)
{
    const char *m = spec->merge ? spec->merge : "append";
    int rc = silt_buf_printf(y,
                             "kind: DatasetSnapshot\nversion: 1\ncontent:\n  name: %s\n  kind: Root\n"
                             "  metadata:\n    - kind: AddPushSource\n      sourceName: default\n"
                             "      read:\n        kind: %s\n",
                             name, read_kind(spec->format));
    if (rc == 0 && strcmp(spec->format, "csv") == 0)
        rc = silt_buf_printf(y, "        header: true\n%s", ddl->n ? "" : "        inferSchema: true\n");
    if (rc == 0 && ddl->n) {
        rc = silt_buf_puts(y, "        ddlSchema:\n");
        for (size_t i = 0; rc == 0 && i < ddl->n; i++) {
            rc = silt_buf_puts(y, "          - ");
            if (rc == 0)
                rc = put_quoted(y, ddl->items[i], "--schema column");
            if (rc == 0)
                rc = silt_buf_putc(y, '\n');
        }
    }
    if (rc == 0)
        rc = silt_buf_printf(y, "      merge:\n        kind: %s\n",
                             strcmp(m, "ledger") == 0 ? "Ledger" : strcmp(m, "snapshot") == 0 ? "Snapshot" : "Append");
    if (rc == 0 && spec->nkeys)
        rc = silt_buf_puts(y, "        primaryKey:\n");
    for (size_t i = 0; rc == 0 && i < spec->nkeys; i++) {
        rc = silt_buf_puts(y, "          - ");
        if (rc == 0)
            rc = put_quoted(y, spec->keys[i], "--key");
        if (rc == 0)
            rc = silt_buf_putc(y, '\n');
    }
    return rc;
}

int silt_dataset_create_push(silt_dataset **out, silt_workspace *ws, const char *name,
                             const silt_push_source_spec *spec)
{
    *out = NULL;
    if (!spec)
        return silt_err(SILT_EINVAL, ORIGIN ": no push source given");
    int rc = silt_ds_check_name_free(ws, name);
    if (rc == 0)
        rc = check_spec(spec);
    if (rc < 0)
        return rc;
    silt_arena *a = silt_arena_new();
    if (!a)
        return silt_err(SILT_ENOMEM, ORIGIN ": out of memory");
    odf_strvec ddl = {0};
    odf_DataSchema *schema = NULL;
    if (spec->schema) {
        rc = split_ddl(a, spec->schema, &ddl);
        if (rc == 0 && (rc = silt_schema_from_ddl(a, &ddl, &schema)) < 0)
            silt_err_context(rc, "--schema");
    }
    silt_buf y = SILT_BUF_INIT;
    if (rc == 0)
        rc = snapshot_yaml(&y, name, spec, &ddl);
    void *obj = NULL;
    if (rc == 0)
        rc = odf_yaml_parse_manifest_at(a, y.data, y.len, ORIGIN, 1, "DatasetSnapshot", NULL, &obj);
    if (rc == 0)
        rc = silt_ds_check_snapshot(ORIGIN, 1, obj);
    if (rc == 0)
        rc = silt_ds_add_snapshot(ws, ORIGIN, 1, obj, false);
    if (rc == 0)
        rc = silt_dataset_open(out, ws, name);
    silt_buf_free(&y);
    silt_arena_free(a);
    return rc;
}
