/* files_schema.c — tabular schemas on files datasets (`silt schema set`,
 * `silt schema NAME`, and `silt sql` over the files of a view).
 *
 * Storage (docs/decisions.md): the schema is metadata on the branch's chain,
 * an AddData WITHOUT data (it only advances the watermark, like an empty
 * transaction, and carries the checkpoint over) whose extra attributes hold
 *   "silt.dev/filesSchema": {"schema": <ODF DataSchema JSON>,
 *                            "format": "parquet"|"csv"|"json"|"avro",
 *                            "csvOptions": {<ReadStepCsv field names>}}
 * Other ODF tools see an ordinary AddData with extra attributes; silt's
 * view code ignores it (no rows, no transaction attribute). The schema in
 * force at a block is the one of the newest such AddData at or before it,
 * so it is versioned per branch and per transaction.
 *
 * Invariants: the attribute is written canonical (sorted keys); the schema
 * is validated (every type must map to a DuckDB type) before it is stored;
 * reading files never trusts them: every file is read and cast separately
 * and the first one that does not conform is named in the error.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "files/files_schema.h"

#include "dataset/dataset_internal.h"
#include "files/files.h"
#include "files/txn.h"
#include "engine/avro.h"
#include "engine/schema.h"
#include "odf/desc.h"
#include "odf/json.h"
#include "odf/yaml.h"
#include "util/error.h"
#include "util/fsutil.h"
#include "util/timeutil.h"

/* ---- YAML/JSON file -> jansson ------------------------------------------------ */

static json_t *node_to_json(yaml_document_t *d, yaml_node_t *n, int depth)
{
    if (!n || depth > 64)
        return NULL;
    if (n->type == YAML_SCALAR_NODE) {
        const char *v = (const char *)n->data.scalar.value;
        if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
            if (!strcmp(v, "true") || !strcmp(v, "True") || !strcmp(v, "TRUE"))
                return json_true();
            if (!strcmp(v, "false") || !strcmp(v, "False") || !strcmp(v, "FALSE"))
                return json_false();
            if (!strcmp(v, "null") || !strcmp(v, "~") || !*v)
                return json_null();
            char *end;
            errno = 0;
            long long i = strtoll(v, &end, 10);
            if (*v && !*end && !errno)
                return json_integer(i);
        }
        return json_string(v);
    }
    if (n->type == YAML_SEQUENCE_NODE) {
        json_t *a = json_array();
        for (yaml_node_item_t *it = n->data.sequence.items.start; a && it < n->data.sequence.items.top; it++) {
            json_t *c = node_to_json(d, yaml_document_get_node(d, *it), depth + 1);
            if (!c || json_array_append_new(a, c)) {
                json_decref(a);
                return NULL;
            }
        }
        return a;
    }
    json_t *o = json_object();
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; o && p < n->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(d, p->key);
        json_t *c = node_to_json(d, yaml_document_get_node(d, p->value), depth + 1);
        if (!k || k->type != YAML_SCALAR_NODE || !c ||
            json_object_set_new(o, (const char *)k->data.scalar.value, c)) {
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

/* Parses YAML/JSON text (the YAML input limits of odf/yaml.h) into a
 * jansson object; the input-limit errors name `name` ("x.yaml"), the others
 * `what` ("schema file x.yaml"). */
static int load_text(const char *text, size_t len, const char *name, const char *what, json_t **out)
{
    *out = NULL;
    yaml_parser_t p;
    yaml_document_t d;
    size_t skip;
    int rc = odf_yaml_check(text, len, name, 1); /* before the (quadratic) loader */
    if (rc == 0)
        rc = odf_yaml_parser_open(&p, text, len, name, &skip);
    if (rc < 0)
        return rc;
    if (!yaml_parser_load(&p, &d)) {
        rc = silt_err(SILT_EINVAL, "%s:%zu: syntax error: %s", what, p.problem_mark.line + 1,
                      p.problem ? p.problem : "?");
    } else {
        yaml_node_t *root = yaml_document_get_root_node(&d);
        if (!root || root->type != YAML_MAPPING_NODE)
            rc = silt_err(SILT_EINVAL, "%s: expected a mapping with 'fields' or 'fieldSchemaList'", what);
        else if (!(*out = node_to_json(&d, root, 0)))
            rc = silt_err(SILT_EINVAL, "%s: cannot read (non-scalar keys or nesting too deep)", what);
        yaml_document_delete(&d);
    }
    yaml_parser_delete(&p);
    return rc;
}

static int load_doc(const char *path, json_t **out)
{
    *out = NULL;
    silt_buf b = SILT_BUF_INIT;
    int rc = odf_yaml_read_file(path, &b); /* the YAML input limits of odf/yaml.h */
    if (rc == SILT_ENOTFOUND || rc == SILT_EIO)
        return silt_err(rc, "schema file %s: %s", path, rc == SILT_ENOTFOUND ? "not found" : "cannot read");
    char what[1100];
    snprintf(what, sizeof what, "schema file %s", path);
    if (rc == 0)
        rc = load_text(b.data ? b.data : "", b.len, path, what, out);
    silt_buf_free(&b);
    return rc;
}

/* ODF DataSchema from its JSON form (arena-owned). */
static int schema_from_json(silt_arena *a, const json_t *j, const char *what, odf_DataSchema **out)
{
    char *t = json_dumps(j, JSON_COMPACT);
    if (!t)
        return silt_err(SILT_ENOMEM, "out of memory");
    void *obj = NULL;
    int rc = odf_yaml_parse(a, t, strlen(t), what, &odf_desc_DataSchema, &obj);
    free(t);
    *out = obj;
    return rc;
}

static const char *const CSV_KEYS[] = {"separator", "encoding", "quote", "escape", "header",
                                       "nullValue", "dateFormat", "timestampFormat", NULL};

/* The attribute object {"schema", "format", "csvOptions"} from a parsed
 * document (messages name `path`, e.g. "schema file x.yaml"); frees doc. */
static int attr_from_doc(json_t *doc, const char *path, json_t **out)
{
    *out = NULL;
    int rc = 0;
    silt_arena *a = rc ? NULL : silt_arena_new();
    if (!rc && !a)
        rc = silt_err(SILT_ENOMEM, "out of memory");
    odf_DataSchema *s = NULL;
    json_t *fields = json_object_get(doc, "fields"), *fsl = json_object_get(doc, "fieldSchemaList");
    if (!rc && !!fields == !!fsl)
        rc = silt_err(SILT_EINVAL, "%s: give either 'fields' (ODF DataSchema) or 'fieldSchemaList' "
                                   "(Foundry field types)",
                      path);
    if (!rc && fields) {
        json_t *w = json_pack("{s:O}", "fields", fields);
        rc = w ? schema_from_json(a, w, path, &s) : silt_err(SILT_ENOMEM, "out of memory");
        json_decref(w);
    } else if (!rc) {
        if (!json_is_array(fsl))
            rc = silt_err(SILT_EINVAL, "%s: 'fieldSchemaList' must be a list", path);
        else
            rc = silt_schema_from_foundry_json(a, fsl, &s);
        if (rc)
            rc = silt_err_context(rc, "%s", path);
    }
    if (!rc && s->fields.n == 0)
        rc = silt_err(SILT_EINVAL, "%s: the schema has no fields", path);
    silt_buf cols = SILT_BUF_INIT;
    if (!rc) {
        rc = silt_schema_to_duckdb_columns(&cols, s);
        if (rc)
            rc = silt_err_context(rc, "%s", path);
    }
    silt_buf_free(&cols);
    const char *fmt = json_string_value(json_object_get(doc, "format"));
    if (!rc && json_object_get(doc, "format") && !fmt)
        rc = silt_err(SILT_EINVAL, "%s: 'format' must be parquet, csv, json or avro", path);
    if (!rc && !fmt)
        fmt = "parquet";
    if (!rc && strcasecmp(fmt, "parquet") && strcasecmp(fmt, "csv") && strcasecmp(fmt, "json") &&
        strcasecmp(fmt, "avro"))
        rc = silt_err(SILT_EINVAL, "%s: unknown format '%s' (use parquet, csv, json or avro)", path, fmt);
    json_t *csv = json_object_get(doc, "csvOptions");
    json_t *copt = json_object();
    if (!rc && !copt)
        rc = silt_err(SILT_ENOMEM, "out of memory");
    if (!rc && csv && !json_is_object(csv))
        rc = silt_err(SILT_EINVAL, "%s: 'csvOptions' must be a mapping", path);
    const char *k;
    json_t *v;
    if (!rc && csv)
        json_object_foreach(csv, k, v)
        {
            const char *key = strcmp(k, "delimiter") == 0 ? "separator" : k;
            bool known = false;
            for (int i = 0; CSV_KEYS[i]; i++)
                known = known || strcmp(CSV_KEYS[i], key) == 0;
            if (!known) {
                rc = silt_err(SILT_EINVAL, "%s: csvOptions.%s: unknown option (use separator, header, "
                                           "quote, escape, nullValue, encoding, dateFormat, timestampFormat)",
                              path, k);
                break;
            }
            if (strcmp(key, "header") == 0 ? !json_is_boolean(v) : !json_is_string(v)) {
                rc = silt_err(SILT_EINVAL, "%s: csvOptions.%s must be %s", path, k,
                              strcmp(key, "header") == 0 ? "true or false" : "a string");
                break;
            }
            json_object_set(copt, key, v);
        }
    if (!rc && csv && strcasecmp(fmt, "csv") != 0)
        rc = silt_err(SILT_EINVAL, "%s: csvOptions only apply to format csv", path);
    json_t *sj = rc ? NULL : odf_to_json(&odf_desc_DataSchema, s);
    if (!rc && !sj)
        rc = SILT_ENOMEM;
    if (!rc) {
        char lower[16];
        snprintf(lower, sizeof lower, "%s", fmt);
        for (char *p = lower; *p; p++)
            *p = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
        *out = json_pack("{s:O,s:s}", "schema", sj, "format", lower);
        if (*out && strcmp(lower, "csv") == 0)
            json_object_set(*out, "csvOptions", copt);
        if (!*out)
            rc = silt_err(SILT_ENOMEM, "out of memory");
    }
    json_decref(sj);
    json_decref(copt);
    json_decref(doc);
    silt_arena_free(a);
    return rc;
}

/* The attribute object from a schema file. */
static int attr_from_file(const char *path, json_t **out)
{
    *out = NULL;
    json_t *doc = NULL;
    int rc = load_doc(path, &doc);
    if (rc)
        return rc;
    char what[1100];
    snprintf(what, sizeof what, "schema file %s", path);
    return attr_from_doc(doc, what, out);
}

static int schema_set_attr(silt_dataset *ds, json_t *attr);

int silt_files_schema_set(silt_dataset *ds, const char *path)
{
    int rc = silt_files_require(ds);
    json_t *attr = NULL;
    if (!rc)
        rc = attr_from_file(path, &attr);
    return rc ? rc : schema_set_attr(ds, attr);
}

int silt_files_schema_set_text(silt_dataset *ds, const char *text, size_t len, const char *what)
{
    int rc = silt_files_require(ds);
    json_t *doc = NULL, *attr = NULL;
    if (!rc)
        rc = load_text(text, len, what, what, &doc);
    if (!rc)
        rc = attr_from_doc(doc, what, &attr);
    return rc ? rc : schema_set_attr(ds, attr);
}

/* Appends the schema AddData carrying attr (a reference this call takes). */
static int schema_set_attr(silt_dataset *ds, json_t *attr)
{
    int rc = 0;
    int fd = rc ? -1 : silt_txn_lock_branch(ds, ds->branch);
    if (!rc && fd < 0)
        rc = fd;
    silt_arena *a = rc ? NULL : silt_arena_new();
    if (!rc && !a)
        rc = silt_err(SILT_ENOMEM, "out of memory");
    bool appending = !rc;
    for (int attempt = 0; !rc; attempt++) {
        rc = silt_ds_sync(ds);
        odf_AddData *ad = rc ? NULL : silt_arena_alloc(a, sizeof *ad);
        odf_ExtraAttributes *x = rc ? NULL : silt_arena_alloc(a, sizeof *x);
        odf_Checkpoint *cp = rc ? NULL : silt_arena_alloc(a, sizeof *cp);
        if (!rc && (!ad || !x || !cp))
            rc = silt_err(SILT_ENOMEM, "out of memory");
        silt_time now = rc ? silt_time_now() : silt_files_commit_time(ds);
        if (!rc) {
            silt_ds_add_data_continue(ds, ad, cp);
            ad->has_new_watermark = true;
            ad->new_watermark = (odf_time){now.sec, now.nsec};
            json_t *w = json_pack("{s:O}", SILT_FILES_SCHEMA_KEY, attr);
            silt_buf ex = SILT_BUF_INIT;
            rc = w ? odf_json_canonical(&ex, w) : SILT_ENOMEM;
            if (!rc && !(x->entries = silt_arena_strdup(a, ex.data)))
                rc = SILT_ENOMEM;
            if (rc == SILT_ENOMEM)
                rc = silt_err(SILT_ENOMEM, "out of memory");
            ad->extra = x;
            silt_buf_free(&ex);
            json_decref(w);
        }
        if (!rc) {
            odf_union ev = {ODF_MetadataEvent_AddData, ad};
            rc = silt_ds_append_events_at(ds, &ev, 1, NULL, &now);
        }
        if (rc != SILT_ECONFLICT || attempt >= 5)
            break;
        silt_err_clear();
        rc = 0;
    }
    if (rc && appending && rc != SILT_ENOMEM)
        rc = silt_err_context(rc, "schema set %s", silt_ds_label(ds));
    if (fd >= 0)
        silt_txn_unlock_branch(fd);
    silt_arena_free(a);
    json_decref(attr);
    return rc;
}

/* silt_files_schema_at, and the hash of the AddData that set it into
 * blk_out (may be NULL). */
static int schema_find(silt_dataset *ds, const uint8_t *at, json_t **out, uint8_t *blk_out);

int silt_files_schema_at(silt_dataset *ds, const uint8_t *at, json_t **out)
{
    return schema_find(ds, at, out, NULL);
}

static int schema_find(silt_dataset *ds, const uint8_t *at, json_t **out, uint8_t *blk_out)
{
    *out = NULL;
    int rc = silt_ds_sync(ds);
    if (rc || ds->st.empty)
        return rc;
    silt_arena *a = silt_arena_new();
    if (!a)
        return silt_err(SILT_ENOMEM, "out of memory");
    uint8_t cur[SILT_MH_LEN];
    memcpy(cur, at ? at : ds->st.head, SILT_MH_LEN);
    while (!rc) {
        odf_MetadataBlock *b = NULL;
        rc = silt_ds_load_block(ds, cur, a, &b);
        if (rc)
            break;
        if (b->event.type == ODF_MetadataEvent_AddData) {
            const odf_AddData *ad = b->event.value;
            if (ad->extra && ad->extra->entries && strstr(ad->extra->entries, SILT_FILES_SCHEMA_KEY)) {
                json_t *j = json_loads(ad->extra->entries, 0, NULL);
                json_t *attr = json_object_get(j, SILT_FILES_SCHEMA_KEY);
                if (json_is_object(attr) && json_is_object(json_object_get(attr, "schema"))) {
                    *out = json_incref(attr);
                    if (blk_out)
                        memcpy(blk_out, cur, SILT_MH_LEN);
                }
                json_decref(j);
                if (attr)
                    break;
            }
        }
        if (b->prev_block_hash.len != SILT_MH_LEN)
            break;
        memcpy(cur, b->prev_block_hash.data, SILT_MH_LEN);
    }
    silt_arena_free(a);
    return rc;
}

static int no_schema(const silt_dataset *ds)
{
    return silt_err(SILT_ENOTFOUND, "dataset '%s' has no tabular schema", silt_ds_label(ds));
}

int silt_files_schema_get(char **out, silt_dataset *ds, const char *at, silt_schema_format fmt)
{
    *out = NULL;
    int rc = silt_files_require(ds);
    uint8_t blk[SILT_MH_LEN];
    if (!rc && at) {
        int f = silt_files_find_commit(ds, at, -1, blk);
        rc = f < 0 ? f
             : f == 0 ? silt_err(SILT_ENOTFOUND, "transaction %s is not committed on branch %s of %s", at, ds->branch,
                                 ds->name)
                      : 0;
    }
    json_t *attr = NULL;
    if (!rc)
        rc = silt_files_schema_at(ds, at ? blk : NULL, &attr);
    if (!rc && !attr)
        rc = no_schema(ds);
    silt_arena *a = rc ? NULL : silt_arena_new();
    odf_DataSchema *s = NULL;
    if (!rc && !a)
        rc = silt_err(SILT_ENOMEM, "out of memory");
    if (!rc)
        rc = schema_from_json(a, json_object_get(attr, "schema"), "schema", &s);
    silt_buf b = SILT_BUF_INIT;
    if (!rc && fmt == SILT_SCHEMA_JSON) {
        char *t = json_dumps(attr, JSON_INDENT(2) | JSON_SORT_KEYS);
        rc = t ? silt_buf_printf(&b, "%s\n", t) : silt_err(SILT_ENOMEM, "out of memory");
        free(t);
    } else if (!rc && fmt == SILT_SCHEMA_YAML) {
        rc = silt_buf_puts(&b, "schema:\n");
        if (!rc)
            rc = odf_yaml_emit(&b, &odf_desc_DataSchema, s, 2);
        if (!rc)
            rc = silt_buf_printf(&b, "format: %s\n", json_string_value(json_object_get(attr, "format")));
    } else if (!rc) {
        for (size_t i = 0; !rc && i < s->fields.n; i++) {
            const odf_DataField *f = s->fields.items[i];
            rc = silt_buf_printf(&b, "%s: ", f->name);
            if (!rc)
                rc = silt_schema_type_describe(&b, &f->type);
            if (!rc)
                rc = silt_buf_putc(&b, '\n');
        }
        if (!rc)
            rc = silt_buf_printf(&b, "format: %s\n", json_string_value(json_object_get(attr, "format")));
    }
    json_t *csv = json_object_get(attr, "csvOptions");
    const char *k;
    json_t *v;
    if (!rc && fmt != SILT_SCHEMA_JSON && json_object_size(csv)) {
        rc = silt_buf_puts(&b, "csvOptions:\n");
        for (int i = 0; !rc && CSV_KEYS[i]; i++)
            if ((v = json_object_get(csv, CSV_KEYS[i])) != NULL)
                rc = json_is_boolean(v) ? silt_buf_printf(&b, "  %s: %s\n", CSV_KEYS[i], json_is_true(v) ? "true" : "false")
                                        : silt_buf_printf(&b, "  %s: '%s'\n", CSV_KEYS[i], json_string_value(v));
        (void)k;
    }
    if (!rc && !(*out = silt_buf_detach(&b)))
        rc = silt_err(SILT_ENOMEM, "out of memory");
    silt_buf_free(&b);
    silt_arena_free(a);
    json_decref(attr);
    return rc;
}

/* ---- the Foundry form (GET /api/v2/datasets/{rid}/getSchema) ------------------- */

static json_t *foundry_type(const odf_union *t, const char *path, int depth, int *err);

/* Fields of a schema or struct as Foundry DatasetFieldSchema objects. */
static json_t *foundry_fields(const odf_vec *fields, const char *path, int depth, int *err)
{
    json_t *a = json_array();
    if (!a)
        *err = silt_err(SILT_ENOMEM, "out of memory");
    for (size_t i = 0; a && i < fields->n; i++) {
        const odf_DataField *f = fields->items[i];
        char fp[512];
        snprintf(fp, sizeof fp, "%s '%s'", path, f->name);
        json_t *o = foundry_type(&f->type, fp, depth + 1, err);
        if (o && json_object_set_new(o, "name", json_string(f->name))) {
            json_decref(o);
            o = NULL;
        }
        if (!o || json_array_append_new(a, o)) {
            if (!*err)
                *err = silt_err(SILT_ENOMEM, "out of memory");
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

/* {"type": T, "nullable": b, ...} of an ODF type; NULL with *err set. */
static json_t *foundry_type(const odf_union *t, const char *path, int depth, int *err)
{
    if (depth > 64) {
        *err = silt_err(SILT_EUNSUPPORTED, "%s: type nested too deeply", path);
        return NULL;
    }
    bool nullable = t->type == ODF_DataType_Option;
    if (nullable)
        t = &((const odf_DataTypeOption *)t->value)->inner;
    static const struct {
        uint8_t variant;
        const char *name;
    } simple[] = {
        {ODF_DataType_Bool, "BOOLEAN"},   {ODF_DataType_Int8, "BYTE"},     {ODF_DataType_Int16, "SHORT"},
        {ODF_DataType_Int32, "INTEGER"},  {ODF_DataType_Int64, "LONG"},    {ODF_DataType_Float32, "FLOAT"},
        {ODF_DataType_Float64, "DOUBLE"}, {ODF_DataType_String, "STRING"}, {ODF_DataType_Binary, "BINARY"},
        {ODF_DataType_Date, "DATE"},      {ODF_DataType_Timestamp, "TIMESTAMP"},
    };
    json_t *o = json_object();
    if (!o) {
        *err = silt_err(SILT_ENOMEM, "out of memory");
        return NULL;
    }
    const char *name = NULL;
    for (size_t k = 0; !name && k < sizeof simple / sizeof simple[0]; k++)
        if (simple[k].variant == t->type)
            name = simple[k].name;
    json_t *c1 = NULL, *c2 = NULL;
    const char *k1 = NULL, *k2 = NULL;
    char cp[560];
    if (name) {
        /* nothing more */
    } else if (t->type == ODF_DataType_Decimal) {
        const odf_DataTypeDecimal *d = t->value;
        name = "DECIMAL";
        json_object_set_new(o, "precision", json_integer(d->precision));
        json_object_set_new(o, "scale", json_integer(d->scale));
    } else if (t->type == ODF_DataType_List) {
        name = "ARRAY";
        snprintf(cp, sizeof cp, "%s.arraySubtype", path);
        k1 = "arraySubtype";
        if (!(c1 = foundry_type(&((const odf_DataTypeList *)t->value)->item_type, cp, depth + 1, err)))
            name = NULL;
    } else if (t->type == ODF_DataType_Map) {
        const odf_DataTypeMap *m = t->value;
        name = "MAP";
        k1 = "mapKeyType", k2 = "mapValueType";
        snprintf(cp, sizeof cp, "%s.mapKeyType", path);
        c1 = foundry_type(&m->key_type, cp, depth + 1, err);
        snprintf(cp, sizeof cp, "%s.mapValueType", path);
        c2 = c1 ? foundry_type(&m->value_type, cp, depth + 1, err) : NULL;
        if (!c1 || !c2)
            name = NULL;
    } else if (t->type == ODF_DataType_Struct) {
        name = "STRUCT";
        k1 = "subSchemas";
        snprintf(cp, sizeof cp, "%s.subSchemas", path);
        if (!(c1 = foundry_fields(&((const odf_DataTypeStruct *)t->value)->fields, cp, depth + 1, err)))
            name = NULL;
    } else {
        silt_buf d = SILT_BUF_INIT;
        silt_schema_type_describe(&d, t);
        *err = silt_err(SILT_EUNSUPPORTED, "%s: type %s has no Foundry field type", path, d.data ? d.data : "?");
        silt_buf_free(&d);
    }
    if (!name) {
        json_decref(c1);
        json_decref(c2);
        json_decref(o);
        return NULL;
    }
    json_object_set_new(o, "type", json_string(name));
    json_object_set_new(o, "nullable", json_boolean(nullable));
    if (k1)
        json_object_set_new(o, k1, c1);
    if (k2)
        json_object_set_new(o, k2, c2);
    return o;
}

int silt_files_schema_foundry(char **out, silt_dataset *ds, const char *at)
{
    *out = NULL;
    int rc = silt_files_require(ds);
    uint8_t blk[SILT_MH_LEN], set_by[SILT_MH_LEN];
    if (!rc && at) {
        int f = silt_files_find_commit(ds, at, -1, blk);
        rc = f < 0 ? f
             : f == 0 ? silt_err(SILT_ENOTFOUND, "transaction %s is not committed on branch %s of %s", at, ds->branch,
                                 ds->name)
                      : 0;
    }
    json_t *attr = NULL;
    if (!rc)
        rc = schema_find(ds, at ? blk : NULL, &attr, set_by);
    if (!rc && !attr)
        rc = no_schema(ds);
    silt_arena *a = rc ? NULL : silt_arena_new();
    odf_DataSchema *s = NULL;
    if (!rc && !a)
        rc = silt_err(SILT_ENOMEM, "out of memory");
    if (!rc)
        rc = schema_from_json(a, json_object_get(attr, "schema"), "schema", &s);
    json_t *fl = rc ? NULL : foundry_fields(&s->fields, "field", 0, &rc);
    char text[SILT_MH_TEXT_LEN + 1];
    if (!rc)
        silt_multihash_to_text(set_by, SILT_MH_LEN, text);
    json_t *j = rc ? NULL
                   : json_pack("{s:o,s:O,s:s}", "fieldSchemaList", fl, "format", json_object_get(attr, "format"),
                               "block", text);
    if (!rc && !j)
        rc = silt_err(SILT_ENOMEM, "out of memory");
    if (!rc && !(*out = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS)))
        rc = silt_err(SILT_ENOMEM, "out of memory");
    json_decref(j);
    silt_arena_free(a);
    json_decref(attr);
    return rc;
}

/* ---- silt sql over the files of a view ------------------------------------------ */

/* rid of the newest transaction AddData at or before block `at`, or "". */
static int rid_at(silt_dataset *ds, const uint8_t *at, char *rid)
{
    rid[0] = '\0';
    silt_arena *a = silt_arena_new();
    if (!a)
        return silt_err(SILT_ENOMEM, "out of memory");
    uint8_t cur[SILT_MH_LEN];
    memcpy(cur, at, SILT_MH_LEN);
    int rc = 0;
    while (!rc && !rid[0]) {
        odf_MetadataBlock *b = NULL;
        rc = silt_ds_load_block(ds, cur, a, &b);
        if (rc)
            break;
        if (b->event.type == ODF_MetadataEvent_AddData) {
            const odf_AddData *ad = b->event.value;
            if (ad->extra && ad->extra->entries && strstr(ad->extra->entries, "silt.dev/transaction")) {
                json_t *j = json_loads(ad->extra->entries, 0, NULL);
                const char *r =
                    json_string_value(json_object_get(json_object_get(j, "silt.dev/transaction"), "rid"));
                if (r && strlen(r) < 64)
                    snprintf(rid, 64, "%s", r);
                json_decref(j);
            }
        }
        if (b->prev_block_hash.len != SILT_MH_LEN)
            break;
        memcpy(cur, b->prev_block_hash.data, SILT_MH_LEN);
    }
    silt_arena_free(a);
    return rc;
}

/* Avro: the table function of engine/avro.h resolves each file's writer
 * schema to the dataset schema itself (typed columns, no casts). */
static int reader_sql_avro(silt_buf *sql, const json_t *attr, const char *qpath)
{
    char *sj = json_dumps(json_object_get(attr, "schema"), JSON_COMPACT);
    char *q = sj ? silt_sql_str(sj) : NULL;
    int rc = q ? silt_buf_printf(sql, "SELECT * FROM silt_read_avro(%s, %s)", qpath, q)
               : silt_err(SILT_ENOMEM, "out of memory");
    free(q);
    free(sj);
    return rc;
}

/* Reader SQL for one file: SELECT <cast columns> FROM read_*(path, …). */
static int reader_sql(silt_buf *sql, const odf_DataSchema *s, const json_t *attr, const char *qpath)
{
    const char *fmt = json_string_value(json_object_get(attr, "format"));
    if (fmt && strcmp(fmt, "avro") == 0)
        return reader_sql_avro(sql, attr, qpath);
    bool csv = fmt && strcmp(fmt, "csv") == 0, js = fmt && strcmp(fmt, "json") == 0;
    int rc = silt_buf_puts(sql, "SELECT ");
    for (size_t i = 0; !rc && i < s->fields.n; i++) {
        const odf_DataField *f = s->fields.items[i];
        char *id = silt_sql_ident(f->name);
        if (!id)
            return silt_err(SILT_ENOMEM, "out of memory");
        rc = silt_buf_printf(sql, "%sCAST(%s AS ", i ? ", " : "", id);
        if (!rc)
            rc = silt_schema_type_to_duckdb(sql, &f->type);
        if (!rc)
            rc = silt_buf_printf(sql, ") AS %s", id);
        free(id);
    }
    if (!rc && !csv && !js)
        return silt_buf_printf(sql, " FROM read_parquet(%s)", qpath);
    if (!rc)
        rc = silt_buf_printf(sql, " FROM %s(%s, columns = {", csv ? "read_csv" : "read_json", qpath);
    for (size_t i = 0; !rc && i < s->fields.n; i++) {
        const odf_DataField *f = s->fields.items[i];
        char *q = silt_sql_str(f->name);
        silt_buf t = SILT_BUF_INIT;
        rc = q ? silt_schema_type_to_duckdb(&t, &f->type) : silt_err(SILT_ENOMEM, "out of memory");
        char *qt = rc ? NULL : silt_sql_str(t.data);
        if (!rc)
            rc = qt ? silt_buf_printf(sql, "%s%s: %s", i ? ", " : "", q, qt) : silt_err(SILT_ENOMEM, "out of memory");
        free(q);
        free(qt);
        silt_buf_free(&t);
    }
    if (!rc)
        rc = silt_buf_puts(sql, "}");
    if (!rc && js)
        return silt_buf_puts(sql, ")");
    json_t *o = json_object_get(attr, "csvOptions");
    json_t *h = json_object_get(o, "header");
    if (!rc)
        rc = silt_buf_printf(sql, ", auto_detect = false, header = %s", h && json_is_false(h) ? "false" : "true");
    static const char *const MAP[][2] = {{"separator", "delim"}, {"quote", "quote"}, {"escape", "escape"},
                                         {"nullValue", "nullstr"}, {"dateFormat", "dateformat"},
                                         {"timestampFormat", "timestampformat"}, {"encoding", "encoding"}};
    for (size_t i = 0; !rc && i < sizeof MAP / sizeof MAP[0]; i++) {
        const char *v = json_string_value(json_object_get(o, MAP[i][0]));
        if (!v)
            continue;
        char *q = silt_sql_str(v);
        rc = q ? silt_buf_printf(sql, ", %s = %s", MAP[i][1], q) : silt_err(SILT_ENOMEM, "out of memory");
        free(q);
    }
    if (!rc)
        rc = silt_buf_puts(sql, ")");
    return rc;
}

/* Drops DuckDB's "Binder Error: " / "Invalid Input Error: " class prefix. */
static void strip_duckdb_class(char *msg)
{
    char *e = strstr(msg, " Error: ");
    for (char *p = msg; e && p < e; p++)
        if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || *p == ' '))
            return;
    if (e)
        memmove(msg, e + 8, strlen(e + 8) + 1);
}

/* The view `view` of the files of view `spec` (NULL: no files at all) read
 * with the schema in force at block `schema_at` (NULL = head). */
static int create_sql_view(silt_engine *e, silt_dataset *ds, const char *view, const uint8_t *schema_at,
                           const silt_view_spec *spec)
{
    json_t *attr = NULL;
    int rc = silt_files_schema_at(ds, schema_at, &attr);
    if (!rc && !attr)
        rc = no_schema(ds);
    silt_arena *a = rc ? NULL : silt_arena_new();
    odf_DataSchema *s = NULL;
    if (!rc && !a)
        rc = silt_err(SILT_ENOMEM, "out of memory");
    if (!rc)
        rc = schema_from_json(a, json_object_get(attr, "schema"), "schema", &s);
    silt_view *v = NULL;
    if (!rc && spec)
        rc = silt_view_get(&v, ds, spec);
    char *qv = rc ? NULL : silt_sql_ident(view);
    if (!rc && !qv)
        rc = silt_err(SILT_ENOMEM, "out of memory");
    silt_buf all = SILT_BUF_INIT, one = SILT_BUF_INIT;
    size_t k = 0;
    const char *fmt = json_string_value(json_object_get(attr, "format"));
    for (size_t i = 0; !rc && i < silt_view_count(v); i++) {
        const silt_file_entry *fe = silt_view_entry(v, i);
        const char *base = strrchr(fe->path, '/');
        base = base ? base + 1 : fe->path;
        if (base[0] == '_' || base[0] == '.')
            continue; /* _SUCCESS, hidden files: not data (as Spark) */
        char rid_p[64];
        int pg = silt_files_purged(rid_p, ds, fe->content_hash);
        if (pg == 1) {
            rc = silt_err(SILT_ENOTFOUND, "dataset '%s': file '%s' was purged by retention (transaction %s)",
                          silt_ds_label(ds), fe->path, rid_p);
            break;
        }
        char *p = silt_view_object_path(ds, fe);
        char *qp = p ? silt_sql_str(p) : NULL;
        free(p);
        if (!qp) {
            rc = silt_err(SILT_ENOMEM, "out of memory");
            break;
        }
        silt_buf_clear(&one);
        rc = silt_buf_printf(&one, "CREATE OR REPLACE TEMP TABLE \"__silt_ff_%zu\" AS ", k);
        if (!rc)
            rc = reader_sql(&one, s, attr, qp);
        free(qp);
        if (!rc && (rc = silt_engine_exec(e, one.data)) != 0 && rc != SILT_ENOMEM) {
            char msg[768];
            snprintf(msg, sizeof msg, "%s", silt_error_last()); /* silt_err writes the same buffer */
            if (fmt && strcmp(fmt, "avro") == 0)
                strip_duckdb_class(msg); /* silt_read_avro's messages are silt's own */
            rc = silt_err(SILT_EINVAL, "dataset '%s': file '%s' does not conform to the schema (format %s): %s",
                          silt_ds_label(ds), fe->path, fmt ? fmt : "parquet", msg);
        }
        if (!rc)
            rc = silt_buf_printf(&all, "%sSELECT * FROM \"__silt_ff_%zu\"", k ? " UNION ALL " : "", k);
        k++;
    }
    if (!rc && k == 0) {
        silt_buf cols = SILT_BUF_INIT;
        rc = silt_buf_puts(&all, "SELECT ");
        for (size_t i = 0; !rc && i < s->fields.n; i++) {
            char *id = silt_sql_ident(((odf_DataField *)s->fields.items[i])->name);
            rc = id ? silt_buf_printf(&all, "%sCAST(NULL AS ", i ? ", " : "") : silt_err(SILT_ENOMEM, "out of memory");
            if (!rc)
                rc = silt_schema_type_to_duckdb(&all, &((odf_DataField *)s->fields.items[i])->type);
            if (!rc)
                rc = silt_buf_printf(&all, ") AS %s", id);
            free(id);
        }
        if (!rc)
            rc = silt_buf_puts(&all, " WHERE false");
        silt_buf_free(&cols);
    }
    if (!rc)
        rc = silt_engine_execf(e, "CREATE OR REPLACE TEMP VIEW %s AS %s", qv, all.data);
    silt_buf_free(&all);
    silt_buf_free(&one);
    free(qv);
    silt_view_free(v);
    silt_arena_free(a);
    json_decref(attr);
    return rc;
}

int silt_files_create_sql_view(silt_engine *e, silt_dataset *ds, const char *view, const uint8_t *upto)
{
    char rid[64] = "";
    int rc = upto ? rid_at(ds, upto, rid) : 0;
    silt_view_spec spec = {rid[0] ? rid : NULL, NULL, NULL};
    return rc ? rc : create_sql_view(e, ds, view, upto, !upto || rid[0] ? &spec : NULL);
}

int silt_files_create_sql_view_spec(silt_engine *e, silt_dataset *ds, const char *view, const silt_view_spec *spec)
{
    const char *last = spec ? (spec->range_end ? spec->range_end : spec->at) : NULL;
    uint8_t blk[SILT_MH_LEN];
    if (last) {
        int f = silt_files_find_commit(ds, last, -1, blk);
        if (f < 0)
            return f;
        if (f == 0)
            return silt_err(SILT_ENOTFOUND, "transaction %s is not committed on branch %s of %s", last, ds->branch,
                            ds->name);
    }
    return create_sql_view(e, ds, view, last ? blk : NULL, spec);
}

/* ---- silt schema infer ------------------------------------------------------------ */

enum { INFER_AVRO = 1, INFER_PARQUET, INFER_CSV, INFER_JSON };
static const char *const INFER_NAMES[] = {"", "avro", "parquet", "csv", "json"};

/* The format of one file: its magic bytes (Avro, Parquet), else its
 * extension (csv/tsv/txt, json/jsonl/ndjson); 0 when neither tells. */
static int infer_format(const char *local, const char *path)
{
    unsigned char m[4] = {0};
    FILE *f = fopen(local, "rb");
    size_t n = f ? fread(m, 1, 4, f) : 0;
    if (f)
        fclose(f);
    if (n == 4 && memcmp(m, "Obj\x01", 4) == 0)
        return INFER_AVRO;
    if (n == 4 && memcmp(m, "PAR1", 4) == 0)
        return INFER_PARQUET;
    const char *dot = strrchr(path, '.');
    if (dot && (!strcasecmp(dot, ".csv") || !strcasecmp(dot, ".tsv") || !strcasecmp(dot, ".txt")))
        return INFER_CSV;
    if (dot && (!strcasecmp(dot, ".json") || !strcasecmp(dot, ".jsonl") || !strcasecmp(dot, ".ndjson")))
        return INFER_JSON;
    return 0;
}

/* The schema of one file of format fmt; CSV also its separator and header. */
static int infer_file(silt_arena *a, silt_engine **e, int fmt, const char *local, odf_DataSchema **out,
                      json_t *csv)
{
    if (fmt == INFER_AVRO) {
        silt_avro_header h;
        silt_avro_node *w = NULL;
        int rc = silt_avro_header_read(a, local, &h);
        if (!rc)
            rc = silt_avro_schema_parse(a, h.schema, h.schema_len, &w);
        return rc ? rc : silt_avro_to_odf(a, w, out);
    }
    int rc = *e ? 0 : silt_engine_open(e, NULL);
    char *q = rc ? NULL : silt_sql_str(local);
    if (!rc && !q)
        rc = silt_err(SILT_ENOMEM, "out of memory");
    silt_buf sql = SILT_BUF_INIT;
    static const char *const FN[] = {"", "", "read_parquet", "read_csv", "read_json"};
    if (!rc)
        rc = silt_buf_printf(&sql, "SELECT * FROM %s(%s)", FN[fmt], q);
    if (!rc)
        rc = silt_schema_from_query(*e, a, sql.data, NULL, out);
    if (!rc && fmt == INFER_CSV) {
        char *d = NULL, *hh = NULL;
        silt_buf_clear(&sql);
        rc = silt_buf_printf(&sql, "SELECT Delimiter FROM sniff_csv(%s)", q);
        if (!rc)
            rc = silt_engine_query_text(*e, &d, sql.data);
        silt_buf_clear(&sql);
        if (!rc)
            rc = silt_buf_printf(&sql, "SELECT HasHeader::VARCHAR FROM sniff_csv(%s)", q);
        if (!rc)
            rc = silt_engine_query_text(*e, &hh, sql.data);
        if (!rc) {
            json_object_set_new(csv, "separator", json_string(d ? d : ","));
            json_object_set_new(csv, "header", json_boolean(hh && strcmp(hh, "true") == 0));
        }
        free(d);
        free(hh);
    }
    silt_buf_free(&sql);
    free(q);
    return rc;
}

/* The schema-set document of schema s in format fmt. */
static int infer_doc(silt_buf *b, const odf_DataSchema *s, int fmt, json_t *csv)
{
    int rc = odf_yaml_emit(b, &odf_desc_DataSchema, s, 0);
    if (!rc && b->len && b->data[b->len - 1] != '\n')
        rc = silt_buf_putc(b, '\n');
    if (!rc)
        rc = silt_buf_printf(b, "format: %s\n", INFER_NAMES[fmt]);
    if (!rc && fmt == INFER_CSV) {
        char *sep = silt_sql_str(json_string_value(json_object_get(csv, "separator")));
        rc = sep ? silt_buf_printf(b, "csvOptions:\n  separator: \"%s\"\n  header: %s\n",
                                   strcmp(sep, "'\t'") == 0 ? "\\t" : json_string_value(json_object_get(csv, "separator")),
                                   json_is_true(json_object_get(csv, "header")) ? "true" : "false")
                 : silt_err(SILT_ENOMEM, "out of memory");
        free(sep);
    }
    return rc;
}

int silt_files_schema_infer(char **out, silt_dataset *ds, const char *at)
{
    *out = NULL;
    int rc = silt_files_require(ds);
    silt_view_spec spec = {at, NULL, NULL};
    silt_view *v = NULL;
    if (!rc)
        rc = silt_view_get(&v, ds, &spec);
    silt_arena *a = rc ? NULL : silt_arena_new();
    if (!rc && !a)
        rc = silt_err(SILT_ENOMEM, "out of memory");
    silt_engine *e = NULL;
    odf_DataSchema *first = NULL;
    const char *first_path = NULL;
    int fmt0 = 0;
    json_t *csv = json_object();
    if (!rc && !csv)
        rc = silt_err(SILT_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < silt_view_count(v); i++) {
        const silt_file_entry *fe = silt_view_entry(v, i);
        const char *base = strrchr(fe->path, '/');
        base = base ? base + 1 : fe->path;
        if (base[0] == '_' || base[0] == '.')
            continue; /* not data, as in the views */
        char rid_p[64];
        if (silt_files_purged(rid_p, ds, fe->content_hash) == 1) {
            rc = silt_err(SILT_ENOTFOUND, "file '%s' was purged by retention (transaction %s)", fe->path, rid_p);
            break;
        }
        char *local = silt_view_object_path(ds, fe);
        if (!local) {
            rc = silt_err(SILT_ENOMEM, "out of memory");
            break;
        }
        int fmt = infer_format(local, fe->path);
        odf_DataSchema *s = NULL;
        if (!fmt)
            rc = silt_err(SILT_EUNSUPPORTED, "file '%s': cannot tell its format (Avro and Parquet by their magic "
                                             "bytes, CSV and JSON by the extension)",
                          fe->path);
        else if (fmt0 && fmt != fmt0)
            rc = silt_err(SILT_EINVAL, "file '%s' is %s but '%s' is %s: a schema has one format", fe->path,
                          INFER_NAMES[fmt], first_path, INFER_NAMES[fmt0]);
        else if ((rc = infer_file(a, &e, fmt, local, &s, csv)) != 0 && rc != SILT_ENOMEM)
            rc = silt_err_context(rc, "file '%s'", fe->path);
        free(local);
        if (!rc && first && !silt_schema_equal(first, s))
            rc = silt_err(SILT_EINVAL, "file '%s' has another schema than '%s'", fe->path, first_path);
        if (!rc && !first) {
            first = s;
            first_path = silt_arena_strdup(a, fe->path);
            fmt0 = fmt;
        }
    }
    if (!rc && !first)
        rc = silt_err(SILT_ENOTFOUND, "dataset '%s' has no data files to infer a schema from", silt_ds_label(ds));
    silt_buf b = SILT_BUF_INIT;
    if (!rc)
        rc = infer_doc(&b, first, fmt0, csv);
    if (!rc && !(*out = silt_buf_detach(&b)))
        rc = silt_err(SILT_ENOMEM, "out of memory");
    if (rc && rc != SILT_ENOMEM && rc != SILT_ENOTFOUND)
        rc = silt_err_context(rc, "schema infer %s", silt_ds_label(ds));
    silt_buf_free(&b);
    json_decref(csv);
    silt_engine_free(e);
    silt_view_free(v);
    silt_arena_free(a);
    return rc;
}
