/* resources.c — Source and Flow resources: parsing, validation, canonical
 * storage under `<.silt>/resources/`, listing, and the lookups `silt pull`
 * uses (see resources.h).
 *
 * Parsing: the document is loaded with libyaml to read the envelope
 * ($schema, headers, spec) and to rewrite the ODF string forms
 * ("SecretSet:N#k", "Dataset:N", "Source:N", targetRecordsPerSlice) into the
 * struct forms the generated descriptors expect. The rewrite splices the
 * text of the spec node (cut at byte offsets: libyaml's marks count
 * characters) and keeps every line where it was, and the result is parsed
 * with odf_yaml_parse_at from the spec's line, so that errors of the
 * descriptors (odf_desc_SourceSpec / odf_desc_FlowSpec) still name the
 * right line; their field paths get a "spec." prefix. The document is
 * checked against the YAML input limits (odf_yaml_check) before libyaml's
 * loader sees it.
 *
 * Invariants: a stored resource is always canonical YAML produced here and
 * re-parses to the same object; nothing is written before every document of
 * the file has been parsed and its references resolved; each file is
 * replaced atomically (silt_fs_write_atomic).
 */
#include "ingest/resources.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "ingest/config.h"
#include "ingest/cron.h"
#include "odf/yaml.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/fsutil.h"
#include "util/timeutil.h"

#define SCHEMA_SOURCE "https://opendatafabric.org/schemas/source/v1alpha1/Source"
#define SCHEMA_FLOW "https://opendatafabric.org/schemas/flow/v1alpha1/Flow"

enum { RES_SOURCE = 1, RES_FLOW = 2 };

typedef struct res_doc {
    int type;
    char *name;
    int line;      /* document start */
    int name_line; /* headers.name */
    odf_SourceSpec *source;
    silt_flow_def *flow;
    int target_line;
    int *task_lines; /* line of each task's source */
} res_doc;

struct silt_res_batch {
    const char *path;
    silt_arena *a;
    res_doc *docs;
    size_t n, cap;
};

/* ---- small helpers ------------------------------------------------------- */

static bool res_name_valid(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 100 || s[0] == '.' || s[0] == '-')
        return false;
    for (size_t i = 0; i < n; i++)
        if (!(isalnum((unsigned char)s[i]) || s[i] == '.' || s[i] == '_' || s[i] == '-'))
            return false;
    return true;
}

/* Appends `s` as a YAML/JSON double-quoted string. */
static int put_quoted(silt_buf *b, const char *s)
{
    int rc = silt_buf_putc(b, '"');
    for (const unsigned char *p = (const unsigned char *)s; rc == 0 && *p; p++) {
        if (*p == '"' || *p == '\\')
            rc = silt_buf_printf(b, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f)
            rc = silt_buf_printf(b, "\\u%04x", *p);
        else
            rc = silt_buf_putc(b, (char)*p);
    }
    return rc ? rc : silt_buf_putc(b, '"');
}

/* Appends `s` as a YAML scalar: plain when that reads back as the same
 * string, double-quoted otherwise. */
static int put_scalar(silt_buf *b, const char *s)
{
    static const char *const special[] = {"true", "false", "null", "yes", "no", "on", "off", "y", "n", "~"};
    bool plain = isalpha((unsigned char)s[0]);
    for (const char *p = s; plain && *p; p++)
        if (!(isalnum((unsigned char)*p) || strchr("_./:#+-", *p)))
            plain = false;
    for (size_t i = 0; plain && i < sizeof special / sizeof special[0]; i++)
        if (strcasecmp(s, special[i]) == 0)
            plain = false;
    if (plain && (strstr(s, ": ") || strstr(s, " #")))
        plain = false;
    return plain ? silt_buf_puts(b, s) : put_quoted(b, s);
}

static const char *scalar(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static yaml_node_t *node_get(yaml_document_t *d, yaml_node_t *map, const char *key, yaml_node_t **key_out)
{
    if (key_out)
        *key_out = NULL;
    if (!map || map->type != YAML_MAPPING_NODE)
        return NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(d, p->key);
        if (k && k->type == YAML_SCALAR_NODE && strcmp((const char *)k->data.scalar.value, key) == 0) {
            if (key_out)
                *key_out = k;
            return yaml_document_get_node(d, p->value);
        }
    }
    return NULL;
}

/* ---- splicing ------------------------------------------------------------ */

typedef struct splice {
    size_t start, end; /* byte range of the original text */
    char *text;        /* replacement (malloc'd) */
} splice;

typedef struct pstate {
    silt_res_batch *b;
    const char *text; /* the parser's input (after any BOM) */
    size_t len;
    int line0;        /* file line of the text's first line */
    odf_yaml_offsets off; /* libyaml marks count characters: see node_range */
    yaml_document_t *doc;
    splice *sp;
    size_t nsp, capsp;
} pstate;

static int line_of(const pstate *s, const yaml_node_t *n)
{
    return n ? s->line0 + (int)n->start_mark.line : 0;
}

static int perr(pstate *s, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int perr(pstate *s, int line, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return silt_err(SILT_EINVAL, "%s:%d: %s", s->b->path, line, msg);
}

/* Byte range of a node that a replacement may cover: scalars and flow
 * collections as marked; block mappings up to the end of their last value
 * (so the indentation of the following line is kept). libyaml's marks count
 * characters: the range is found in characters, then converted. */
static void node_range(pstate *s, yaml_node_t *n, size_t *start, size_t *end)
{
    size_t c0 = n->start_mark.index, c1 = n->end_mark.index;
    if (n->type == YAML_MAPPING_NODE && n->data.mapping.style != YAML_FLOW_MAPPING_STYLE) {
        size_t e = c0;
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
            yaml_node_t *k = yaml_document_get_node(s->doc, p->key);
            yaml_node_t *v = yaml_document_get_node(s->doc, p->value);
            if (k && k->end_mark.index > e)
                e = k->end_mark.index;
            if (v && v->end_mark.index > e)
                e = v->end_mark.index;
        }
        c1 = e;
    }
    *start = odf_yaml_offset(&s->off, c0);
    *end = odf_yaml_offset(&s->off, c1);
}

/* Replaces node `n` by `repl` (a one-line flow value); the newlines the node
 * covered are appended so that later lines keep their numbers. Takes `repl`. */
static int add_splice(pstate *s, size_t start, size_t end, silt_buf *repl)
{
    for (size_t i = start; i < end && i < s->len; i++)
        if (s->text[i] == '\n' && silt_buf_putc(repl, '\n') < 0)
            return SILT_ENOMEM;
    if (s->nsp == s->capsp) {
        size_t nc = s->capsp ? s->capsp * 2 : 8;
        splice *ns = realloc(s->sp, nc * sizeof *ns);
        if (!ns)
            return silt_err(SILT_ENOMEM, "%s: out of memory", s->b->path);
        s->sp = ns;
        s->capsp = nc;
    }
    char *t = silt_buf_detach(repl);
    if (!t)
        return silt_err(SILT_ENOMEM, "%s: out of memory", s->b->path);
    s->sp[s->nsp++] = (splice){start, end, t};
    return 0;
}

static int splice_cmp(const void *a, const void *b)
{
    const splice *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* The spec node's text with the splices applied, prefixed like yamldocs.c
 * does with one space per character before it on its line; it starts on
 * file line line_of(s, spec). */
static char *spliced_spec(pstate *s, yaml_node_t *spec, size_t *len_out)
{
    size_t start, end;
    node_range(s, spec, &start, &end);
    if (s->nsp)
        qsort(s->sp, s->nsp, sizeof *s->sp, splice_cmp);
    silt_buf o = SILT_BUF_INIT;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < spec->start_mark.column; i++)
        rc = silt_buf_putc(&o, ' ');
    size_t pos = start;
    for (size_t i = 0; rc == 0 && i < s->nsp; i++) {
        if (s->sp[i].start < pos || s->sp[i].end > end)
            continue;
        rc = silt_buf_append(&o, s->text + pos, s->sp[i].start - pos);
        if (rc == 0)
            rc = silt_buf_puts(&o, s->sp[i].text);
        pos = s->sp[i].end;
    }
    if (rc == 0)
        rc = silt_buf_append(&o, s->text + pos, end - pos);
    if (rc == 0)
        rc = silt_buf_putc(&o, '\n');
    if (rc < 0) {
        silt_buf_free(&o);
        return NULL;
    }
    *len_out = o.len;
    char *r = silt_arena_strndup(s->b->a, o.data, o.len);
    silt_buf_free(&o);
    return r;
}

/* Prefixes descriptor error paths with "spec.": "F:L: path: msg" ->
 * "F:L: spec.path: msg", "F:L: msg" -> "F:L: spec: msg". */
static int spec_error(pstate *s, int rc)
{
    const char *m = silt_error_last();
    size_t fl = strlen(s->b->path);
    if (strncmp(m, s->b->path, fl) != 0 || m[fl] != ':')
        return rc;
    const char *p = m + fl + 1;
    while (isdigit((unsigned char)*p))
        p++;
    if (strncmp(p, ": ", 2) != 0)
        return rc;
    p += 2;
    const char *q = p;
    while (*q && (isalnum((unsigned char)*q) || strchr("_.[]-$", *q)))
        q++;
    char *copy = strdup(m);
    if (!copy)
        return rc;
    size_t head = (size_t)(p - m);
    if (q > p && strncmp(q, ": ", 2) == 0)
        silt_err(rc, "%.*sspec.%s", (int)head, copy, copy + head);
    else
        silt_err(rc, "%.*sspec: %s", (int)head, copy, copy + head);
    free(copy);
    return rc;
}

/* ---- references in string or struct form --------------------------------- */

typedef struct ref {
    char type[32];
    const char *name;
    const char *path;
} ref;

/* Reads {type, name[, path]} (flat mapping of scalars) into r. `allowed`
 * lists the permitted keys. */
static int read_ref_map(pstate *s, yaml_node_t *n, const char *field, bool with_path, ref *r)
{
    memset(r, 0, sizeof *r);
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(s->doc, p->key);
        yaml_node_t *v = yaml_document_get_node(s->doc, p->value);
        const char *ks = scalar(k), *vs = scalar(v);
        if (!ks)
            return perr(s, line_of(s, k), "%s: mapping keys must be strings", field);
        if (!vs)
            return perr(s, line_of(s, v), "%s.%s: expected a string", field, ks);
        if (!strcmp(ks, "type"))
            snprintf(r->type, sizeof r->type, "%s", vs);
        else if (!strcmp(ks, "name"))
            r->name = vs;
        else if (with_path && !strcmp(ks, "path"))
            r->path = vs;
        else
            return perr(s, line_of(s, k), "%s.%s: unknown or unsupported field '%s' (expected type, name%s)",
                        field, ks, ks, with_path ? ", path" : "");
    }
    if (!r->type[0])
        return perr(s, line_of(s, n), "%s.type: missing required field", field);
    if (!r->name)
        return perr(s, line_of(s, n), "%s.name: missing required field", field);
    return 0;
}

/* "Type:NAME" or "NAME" (when `dflt` is given) into r. */
static int read_ref_str(pstate *s, yaml_node_t *n, const char *field, const char *dflt, ref *r)
{
    memset(r, 0, sizeof *r);
    const char *v = scalar(n);
    const char *colon = strchr(v, ':');
    if (!colon) {
        if (!dflt)
            return perr(s, line_of(s, n), "%s: expected TYPE:NAME, got '%s'", field, v);
        snprintf(r->type, sizeof r->type, "%s", dflt);
        r->name = v;
        return 0;
    }
    size_t tl = (size_t)(colon - v);
    if (tl >= sizeof r->type)
        tl = sizeof r->type - 1;
    memcpy(r->type, v, tl);
    r->type[tl] = '\0';
    r->name = colon + 1;
    return 0;
}

static int read_ref(pstate *s, yaml_node_t *n, const char *field, const char *want_type, bool name_default,
                    ref *r)
{
    int rc;
    if (!n)
        return 0;
    if (n->type == YAML_SCALAR_NODE)
        rc = read_ref_str(s, n, field, name_default ? want_type : NULL, r);
    else if (n->type == YAML_MAPPING_NODE)
        rc = read_ref_map(s, n, field, false, r);
    else
        return perr(s, line_of(s, n), "%s: expected %s:NAME or a mapping {type, name}", field, want_type);
    if (rc < 0)
        return rc;
    /* the type may be a full type URI ending in /Dataset, /Source */
    const char *t = strrchr(r->type, '/');
    t = t ? t + 1 : r->type;
    if (strcmp(t, want_type) != 0)
        return perr(s, line_of(s, n), "%s: expected a reference to a %s, got type '%s'", field, want_type, r->type);
    if (!res_name_valid(r->name))
        return perr(s, line_of(s, n), "%s: invalid %s name '%s'", field, want_type, r->name);
    return 0;
}

/* ---- Source --------------------------------------------------------------- */

static int rewrite_config(pstate *s, yaml_node_t *spec)
{
    yaml_node_t *cfg = node_get(s->doc, spec, "config", NULL);
    if (!cfg || cfg->type != YAML_MAPPING_NODE)
        return 0; /* absent, null, or the descriptor reports the type error */
    for (yaml_node_pair_t *p = cfg->data.mapping.pairs.start; p < cfg->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(s->doc, p->key);
        yaml_node_t *v = yaml_document_get_node(s->doc, p->value);
        const char *ks = scalar(k);
        if (!ks || !v)
            continue;
        char field[160];
        snprintf(field, sizeof field, "spec.config.%s", ks);
        silt_buf repl = SILT_BUF_INIT;
        int rc = 0;
        if (v->type == YAML_SCALAR_NODE) {
            const char *vs = scalar(v);
            silt_valueref_kind kind;
            const char *name, *path;
            size_t nl, pl;
            if (silt_config_parse_ref(vs, &kind, &name, &nl, &path, &pl) < 0)
                return perr(s, line_of(s, v), "%s: %s, got '%s'", field, silt_error_last(), vs);
            if (kind == SILT_VREF_LITERAL) {
                rc = silt_buf_puts(&repl, "{\"type\": \"" SILT_CONFIG_LITERAL "\", \"path\": ");
                if (rc == 0)
                    rc = put_quoted(&repl, vs);
            } else {
                char *nm = strndup(name, nl);
                if (!nm)
                    return SILT_ENOMEM;
                rc = silt_buf_printf(&repl, "{\"type\": \"%s\", \"name\": ",
                                     kind == SILT_VREF_SECRET ? "SecretSet" : "VariableSet");
                if (rc == 0)
                    rc = put_quoted(&repl, nm);
                free(nm);
                if (rc == 0)
                    rc = silt_buf_puts(&repl, ", \"path\": ");
                if (rc == 0)
                    rc = put_quoted(&repl, path);
            }
        } else if (v->type == YAML_MAPPING_NODE) {
            ref r;
            if ((rc = read_ref_map(s, v, field, true, &r)) < 0)
                return rc;
            const char *t = strrchr(r.type, '/');
            t = t ? t + 1 : r.type;
            if (strcmp(t, "SecretSet") && strcmp(t, "VariableSet"))
                return perr(s, line_of(s, v), "%s.type: expected SecretSet or VariableSet, got '%s'", field,
                            r.type);
            if (!r.path)
                return perr(s, line_of(s, v), "%s.path: missing required field", field);
            rc = silt_buf_printf(&repl, "{\"type\": \"%s\", \"name\": ", t);
            if (rc == 0)
                rc = put_quoted(&repl, r.name);
            if (rc == 0)
                rc = silt_buf_puts(&repl, ", \"path\": ");
            if (rc == 0)
                rc = put_quoted(&repl, r.path);
        } else {
            return perr(s, line_of(s, v), "%s: expected a string (a literal or SecretSet:NAME#key)", field);
        }
        if (rc == 0)
            rc = silt_buf_putc(&repl, '}');
        size_t st, en;
        node_range(s, v, &st, &en);
        if (rc == 0)
            rc = add_splice(s, st, en, &repl);
        silt_buf_free(&repl);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* ---- Flow ------------------------------------------------------------------ */

static const char *const UNSUPPORTED_TRIGGERS[] = {"Event", "Source", "Dataset"};
static const char *const UNSUPPORTED_TASKS[] = {"Compaction", "GarbageCollection", "WebhookCall"};

/* Kind names match like the YAML codec: PascalCase, camelCase or lower case. */
static bool kind_is(const char *s, const char *canon)
{
    if (!strcmp(s, canon))
        return true;
    size_t n = strlen(canon);
    if (strlen(s) != n)
        return false;
    bool camel = tolower((unsigned char)s[0]) == tolower((unsigned char)canon[0]) &&
                 !strcmp(s + 1, canon + 1);
    bool lower = true;
    for (size_t i = 0; i < n && lower; i++)
        if (s[i] != tolower((unsigned char)canon[i]))
            lower = false;
    return camel || lower;
}

static int check_kind(pstate *s, yaml_node_t *item, const char *field, const char *supported,
                      const char *const *unsupported, size_t nu, const char *what)
{
    yaml_node_t *kn = node_get(s->doc, item, "kind", NULL);
    const char *k = scalar(kn);
    if (!k)
        return 0; /* reported by the descriptor */
    if (kind_is(k, supported))
        return 1;
    for (size_t i = 0; i < nu; i++)
        if (kind_is(k, unsupported[i]))
            return perr(s, line_of(s, kn), "%s.kind: %s kind '%s' is not supported (silt runs %s %ss)", field,
                        what, k, supported, what);
    return 0;
}

static int rewrite_flow(pstate *s, yaml_node_t *spec, res_doc *d)
{
    silt_flow_def *f = silt_arena_alloc(s->b->a, sizeof *f);
    if (!f)
        return SILT_ENOMEM;
    d->flow = f;
    f->name = d->name;
    f->line = d->line;
    /* target */
    yaml_node_t *tn = node_get(s->doc, spec, "target", NULL);
    if (tn) {
        ref r;
        int rc = read_ref(s, tn, "spec.target", "Dataset", false, &r);
        if (rc < 0)
            return rc;
        if (!(f->target = silt_arena_strdup(s->b->a, r.name)))
            return SILT_ENOMEM;
        d->target_line = line_of(s, tn);
        silt_buf repl = SILT_BUF_INIT;
        rc = silt_buf_puts(&repl, "{\"type\": \"Dataset\", \"name\": ");
        if (rc == 0)
            rc = put_quoted(&repl, r.name);
        if (rc == 0)
            rc = silt_buf_putc(&repl, '}');
        size_t st, en;
        node_range(s, tn, &st, &en);
        if (rc == 0)
            rc = add_splice(s, st, en, &repl);
        silt_buf_free(&repl);
        if (rc < 0)
            return rc;
    }
    /* triggers: only Schedule; crons validated here */
    yaml_node_t *trn = node_get(s->doc, spec, "triggers", NULL);
    if (trn && trn->type == YAML_SEQUENCE_NODE) {
        size_t n = (size_t)(trn->data.sequence.items.top - trn->data.sequence.items.start);
        f->crons = silt_arena_alloc(s->b->a, (n ? n : 1) * sizeof *f->crons);
        if (!f->crons)
            return SILT_ENOMEM;
        for (size_t i = 0; i < n; i++) {
            yaml_node_t *it = yaml_document_get_node(s->doc, trn->data.sequence.items.start[i]);
            char field[64];
            snprintf(field, sizeof field, "spec.triggers[%zu]", i);
            int rc = check_kind(s, it, field, "Schedule", UNSUPPORTED_TRIGGERS, 3, "trigger");
            if (rc <= 0) {
                if (rc < 0)
                    return rc;
                continue;
            }
            yaml_node_t *cn = node_get(s->doc, it, "cron", NULL);
            const char *cron = scalar(cn);
            if (!cron)
                continue; /* the descriptor reports it */
            silt_cron c;
            if (silt_cron_parse(&c, cron) < 0)
                return perr(s, line_of(s, cn), "%s.cron: %s", field, silt_error_last());
            if (!(f->crons[f->ncrons++] = silt_arena_strdup(s->b->a, cron)))
                return SILT_ENOMEM;
        }
    }
    /* tasks: only Ingest; source and targetRecordsPerSlice rewritten */
    yaml_node_t *tan = node_get(s->doc, spec, "tasks", NULL);
    if (tan && tan->type == YAML_SEQUENCE_NODE) {
        size_t n = (size_t)(tan->data.sequence.items.top - tan->data.sequence.items.start);
        f->tasks = silt_arena_alloc(s->b->a, (n ? n : 1) * sizeof *f->tasks);
        d->task_lines = silt_arena_alloc(s->b->a, (n ? n : 1) * sizeof *d->task_lines);
        if (!f->tasks || !d->task_lines)
            return SILT_ENOMEM;
        for (size_t i = 0; i < n; i++) {
            yaml_node_t *it = yaml_document_get_node(s->doc, tan->data.sequence.items.start[i]);
            char field[64];
            snprintf(field, sizeof field, "spec.tasks[%zu]", i);
            int rc = check_kind(s, it, field, "Ingest", UNSUPPORTED_TASKS, 3, "task");
            if (rc <= 0) {
                if (rc < 0)
                    return rc;
                continue;
            }
            silt_ingest_task *t = &f->tasks[f->ntasks];
            yaml_node_t *sn = node_get(s->doc, it, "source", NULL);
            if (sn) {
                ref r;
                char sf[80];
                snprintf(sf, sizeof sf, "%s.source", field);
                if ((rc = read_ref(s, sn, sf, "Source", true, &r)) < 0)
                    return rc;
                if (!(t->source = silt_arena_strdup(s->b->a, r.name)))
                    return SILT_ENOMEM;
                d->task_lines[f->ntasks] = line_of(s, sn);
                /* placeholder handle: the descriptor's ResourceHandle
                 * requires ids that a by-name reference does not have */
                silt_buf repl = SILT_BUF_INIT;
                rc = silt_buf_puts(&repl, "{\"account\": {\"id\": \"00000000-0000-0000-0000-000000000000\", "
                                          "\"did\": \"did:odf:fed01"
                                          "0000000000000000000000000000000000000000000000000000000000000000"
                                          "\", \"name\": \"local\"}, \"type\": \"Source\", "
                                          "\"id\": \"00000000-0000-0000-0000-000000000000\", \"name\": ");
                if (rc == 0)
                    rc = put_quoted(&repl, r.name);
                if (rc == 0)
                    rc = silt_buf_putc(&repl, '}');
                size_t st, en;
                node_range(s, sn, &st, &en);
                if (rc == 0)
                    rc = add_splice(s, st, en, &repl);
                silt_buf_free(&repl);
                if (rc < 0)
                    return rc;
            }
            yaml_node_t *kk = NULL;
            yaml_node_t *tr = node_get(s->doc, it, "targetRecordsPerSlice", &kk);
            if (tr) {
                if (node_get(s->doc, it, "params", NULL))
                    return perr(s, line_of(s, kk), "%s.targetRecordsPerSlice: give either "
                                "targetRecordsPerSlice or params.targetSliceRecords, not both", field);
                const char *v = scalar(tr);
                char *end = NULL;
                errno = 0;
                unsigned long long x = v && isdigit((unsigned char)v[0]) ? strtoull(v, &end, 10) : 0;
                if (!v || !end || *end || errno || x == 0 || tr->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
                    return perr(s, line_of(s, tr), "%s.targetRecordsPerSlice: expected a positive integer, got '%s'",
                                field, v ? v : "a collection");
                silt_buf repl = SILT_BUF_INIT;
                rc = silt_buf_puts(&repl, "params");
                size_t st, en;
                node_range(s, kk, &st, &en);
                if (rc == 0)
                    rc = add_splice(s, st, en, &repl);
                silt_buf_free(&repl);
                if (rc == 0)
                    rc = silt_buf_printf(&repl, "{\"targetSliceRecords\": %llu}", x);
                node_range(s, tr, &st, &en);
                if (rc == 0)
                    rc = add_splice(s, st, en, &repl);
                silt_buf_free(&repl);
                if (rc < 0)
                    return rc;
            }
            f->ntasks++;
        }
    }
    return 0;
}

/* Fills the remaining flow fields from the descriptor-parsed FlowSpec. */
static void flow_from_spec(silt_flow_def *f, const odf_FlowSpec *fs)
{
    size_t ti = 0;
    for (size_t i = 0; i < fs->tasks.n && ti < f->ntasks; i++) {
        const odf_union *u = &fs->tasks.items[i];
        if (u->type == 0 || strcmp(odf_udesc_TaskSpec.kinds[u->type - 1], "Ingest"))
            continue;
        const odf_TaskSpecIngest *ing = u->value;
        if (ing->params && ing->params->has_target_slice_records)
            f->tasks[ti].target_records_per_slice = ing->params->target_slice_records;
        ti++;
    }
}

/* ---- one document --------------------------------------------------------- */

static int schema_type(const char *s)
{
    static const struct {
        const char *uri;
        int type;
    } known[] = {
        {"https://opendatafabric.org/schemas/source/v1alpha1/Source", RES_SOURCE},
        {"https://opendatafabric.org/schemas/sources/v1alpha1/Source", RES_SOURCE},
        {"https://opendatafabric.org/schemas/flow/v1alpha1/Flow", RES_FLOW},
        {"https://opendatafabric.org/schemas/flows/v1alpha1/Flow", RES_FLOW},
    };
    size_t n = strlen(s);
    if (n > 5 && !strcmp(s + n - 5, ".json"))
        n -= 5;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strlen(known[i].uri) == n && !strncmp(known[i].uri, s, n))
            return known[i].type;
    return 0;
}

/* Parses one resource document (see silt_res_batch_parse). */
static int parse_doc(silt_res_batch *b, const char *text, size_t len, int line, res_doc *d)
{
    memset(d, 0, sizeof *d);
    d->line = line;
    yaml_parser_t parser;
    yaml_document_t doc;
    size_t skip;
    /* the loader is quadratic in nesting depth and anchors: check first */
    int rc = odf_yaml_check(text, len, b->path, line);
    if (rc == 0)
        rc = odf_yaml_parser_open(&parser, text, len, b->path, &skip);
    if (rc < 0)
        return rc;
    if (!yaml_parser_load(&parser, &doc)) {
        rc = odf_yaml_syntax_error(&parser, b->path, line);
        yaml_parser_delete(&parser);
        return rc;
    }
    yaml_parser_delete(&parser);
    pstate s = {b, text + skip, len - skip, line, {0}, &doc, NULL, 0, 0};
    odf_yaml_offsets_init(&s.off, s.text, s.len);
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    yaml_node_t *schema = NULL, *headers = NULL, *spec = NULL;
    if (!root || root->type != YAML_MAPPING_NODE || !(schema = node_get(&doc, root, "$schema", NULL))) {
        rc = 1; /* not a resource */
        goto out;
    }
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(&doc, p->key);
        const char *ks = scalar(k);
        if (!ks || (strcmp(ks, "$schema") && strcmp(ks, "headers") && strcmp(ks, "spec"))) {
            rc = perr(&s, line_of(&s, k), "%s: unknown field in a resource (expected $schema, headers, spec)",
                      ks ? ks : "?");
            goto out;
        }
    }
    const char *sv = scalar(schema);
    d->type = sv ? schema_type(sv) : 0;
    if (!d->type) {
        rc = perr(&s, line_of(&s, schema), "$schema: unsupported resource type '%s' (expected %s or %s)",
                  sv ? sv : "?", SCHEMA_SOURCE, SCHEMA_FLOW);
        goto out;
    }
    headers = node_get(&doc, root, "headers", NULL);
    if (!headers) {
        rc = perr(&s, line_of(&s, root), "headers: missing required field");
        goto out;
    }
    if (headers->type != YAML_MAPPING_NODE) {
        rc = perr(&s, line_of(&s, headers), "headers: expected a mapping");
        goto out;
    }
    for (yaml_node_pair_t *p = headers->data.mapping.pairs.start; p < headers->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(&doc, p->key);
        const char *ks = scalar(k);
        if (!ks || strcmp(ks, "name")) {
            rc = perr(&s, line_of(&s, k), "headers.%s: unknown or unsupported field (expected name)", ks ? ks : "?");
            goto out;
        }
    }
    yaml_node_t *nn = node_get(&doc, headers, "name", NULL);
    const char *name = scalar(nn);
    if (!nn) {
        rc = perr(&s, line_of(&s, headers), "headers.name: missing required field");
        goto out;
    }
    if (!name || !res_name_valid(name)) {
        rc = perr(&s, line_of(&s, nn),
                  "headers.name: invalid resource name '%s': use [A-Za-z0-9._-], 1..100 chars, not "
                  "starting with '.' or '-'",
                  name ? name : "?");
        goto out;
    }
    d->name_line = line_of(&s, nn);
    if (!(d->name = silt_arena_strdup(b->a, name))) {
        rc = SILT_ENOMEM;
        goto out;
    }
    spec = node_get(&doc, root, "spec", NULL);
    if (!spec) {
        rc = perr(&s, line_of(&s, root), "spec: missing required field");
        goto out;
    }
    if (spec->type != YAML_MAPPING_NODE) {
        rc = perr(&s, line_of(&s, spec), "spec: expected a mapping");
        goto out;
    }
    rc = d->type == RES_SOURCE ? rewrite_config(&s, spec) : rewrite_flow(&s, spec, d);
    if (rc < 0)
        goto out;
    size_t slen = 0;
    char *stext = spliced_spec(&s, spec, &slen);
    if (!stext) {
        rc = silt_err(SILT_ENOMEM, "%s: out of memory", b->path);
        goto out;
    }
    void *obj = NULL;
    rc = odf_yaml_parse_at(b->a, stext, slen, b->path, line_of(&s, spec),
                           d->type == RES_SOURCE ? &odf_desc_SourceSpec : &odf_desc_FlowSpec, &obj);
    if (rc < 0) {
        rc = spec_error(&s, rc);
        goto out;
    }
    if (d->type == RES_SOURCE) {
        d->source = obj;
    } else {
        flow_from_spec(d->flow, obj);
        if (!d->flow->target)
            rc = perr(&s, line_of(&s, spec), "spec.target: missing required field");
    }
out:
    for (size_t i = 0; i < s.nsp; i++)
        free(s.sp[i].text);
    free(s.sp);
    yaml_document_delete(&doc);
    return rc;
}

/* ---- canonical YAML -------------------------------------------------------- */

static int emit_source(silt_buf *o, const res_doc *d)
{
    int rc = silt_buf_printf(o, "$schema: %s\nheaders:\n  name: ", SCHEMA_SOURCE);
    if (rc == 0)
        rc = put_scalar(o, d->name);
    if (rc == 0)
        rc = silt_buf_puts(o, "\nspec:\n");
    const odf_ValueRefs *cfg = d->source->config;
    if (rc == 0 && cfg && cfg->entries.n) {
        rc = silt_buf_puts(o, "  config:\n");
        for (size_t i = 0; rc == 0 && i < cfg->entries.n; i++) {
            const odf_ValueRefsEntry *e = cfg->entries.items[i];
            const odf_ValueRef *r = e->value;
            rc = silt_buf_puts(o, "    ");
            if (rc == 0)
                rc = put_scalar(o, e->key);
            if (rc == 0)
                rc = silt_buf_puts(o, ": ");
            if (rc < 0)
                break;
            if (!strcmp(r->type, SILT_CONFIG_LITERAL)) {
                silt_valueref_kind k;
                const char *a, *p;
                size_t al, pl;
                /* a literal that reads like a reference cannot be stored in string form */
                if (silt_config_parse_ref(r->path ? r->path : "", &k, &a, &al, &p, &pl) < 0 || k != SILT_VREF_LITERAL)
                    return silt_err(SILT_EINVAL, "config.%s: literal value looks like a reference", e->key);
                rc = put_scalar(o, r->path ? r->path : "");
            } else {
                char *refs = NULL;
                silt_buf t = SILT_BUF_INIT;
                rc = silt_buf_printf(&t, "%s:%s#%s", r->type, r->name ? r->name : "", r->path ? r->path : "");
                if (rc == 0 && !(refs = silt_buf_detach(&t)))
                    rc = SILT_ENOMEM;
                if (rc == 0)
                    rc = put_scalar(o, refs);
                free(refs);
                silt_buf_free(&t);
            }
            if (rc == 0)
                rc = silt_buf_putc(o, '\n');
        }
    }
    if (rc < 0)
        return rc;
    odf_SourceSpec copy = *d->source;
    copy.config = NULL;
    return odf_yaml_emit(o, &odf_desc_SourceSpec, &copy, 2);
}

static int emit_flow(silt_buf *o, const res_doc *d)
{
    const silt_flow_def *f = d->flow;
    int rc = silt_buf_printf(o, "$schema: %s\nheaders:\n  name: ", SCHEMA_FLOW);
    if (rc == 0)
        rc = put_scalar(o, f->name);
    if (rc == 0)
        rc = silt_buf_printf(o, "\nspec:\n  target: Dataset:%s\n  triggers:%s\n", f->target, f->ncrons ? "" : " []");
    for (size_t i = 0; rc == 0 && i < f->ncrons; i++) {
        rc = silt_buf_puts(o, "  - kind: Schedule\n    cron: ");
        if (rc == 0)
            rc = put_quoted(o, f->crons[i]);
        if (rc == 0)
            rc = silt_buf_putc(o, '\n');
    }
    if (rc == 0)
        rc = silt_buf_printf(o, "  tasks:%s\n", f->ntasks ? "" : " []");
    for (size_t i = 0; rc == 0 && i < f->ntasks; i++) {
        rc = silt_buf_printf(o, "  - kind: Ingest\n    source: Source:%s\n", f->tasks[i].source);
        if (rc == 0 && f->tasks[i].target_records_per_slice)
            rc = silt_buf_printf(o, "    targetRecordsPerSlice: %llu\n",
                                 (unsigned long long)f->tasks[i].target_records_per_slice);
    }
    return rc;
}

/* ---- workspace files ---------------------------------------------------- */

static char *res_dir(silt_workspace *ws, int type)
{
    return silt_path_join(silt_workspace_path(ws), "resources", type == RES_SOURCE ? "sources" : "flows", NULL);
}

static char *res_file(silt_workspace *ws, int type, const char *name)
{
    char *dir = res_dir(ws, type);
    if (!dir)
        return NULL;
    size_t n = strlen(dir) + strlen(name) + 7;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s.yaml", dir, name);
    free(dir);
    return p;
}

/* Parses the stored resource file `path` into `a` (type checked). */
static int load_file(silt_arena *a, const char *path, int type, res_doc *d)
{
    silt_buf text = SILT_BUF_INIT;
    int rc = silt_fs_read(path, &text);
    if (rc < 0) {
        silt_buf_free(&text);
        return rc;
    }
    char *pathcopy = silt_arena_strdup(a, path);
    silt_res_batch tmp = {pathcopy, a, NULL, 0, 0};
    rc = pathcopy ? parse_doc(&tmp, text.data ? text.data : "", text.len, 1, d) : SILT_ENOMEM;
    silt_buf_free(&text);
    if (rc == 1 || (rc == 0 && d->type != type))
        rc = silt_err(SILT_ECORRUPT, "%s: not a %s resource", path, type == RES_SOURCE ? "Source" : "Flow");
    return rc;
}

static int load_named(silt_arena *a, silt_workspace *ws, int type, const char *name, res_doc *d)
{
    if (!name || !res_name_valid(name))
        return silt_err(SILT_EINVAL, "invalid %s name '%s'", type == RES_SOURCE ? "source" : "flow",
                        name ? name : "");
    char *path = res_file(ws, type, name);
    if (!path)
        return silt_err(SILT_ENOMEM, "resources: out of memory");
    int rc = silt_fs_exists(path) ? load_file(a, path, type, d)
                                  : silt_err(SILT_ENOTFOUND, "%s '%s' not found",
                                             type == RES_SOURCE ? "source" : "flow", name);
    free(path);
    return rc;
}

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Sorted names of the stored resources of `type` (malloc'd vector). */
static int list_names(silt_workspace *ws, int type, char ***out, size_t *n)
{
    *out = NULL;
    *n = 0;
    char *dir = res_dir(ws, type);
    if (!dir)
        return silt_err(SILT_ENOMEM, "resources: out of memory");
    DIR *dh = opendir(dir);
    if (!dh) {
        int rc = errno == ENOENT ? 0 : silt_err(SILT_EIO, "%s: %s", dir, strerror(errno));
        free(dir);
        return rc;
    }
    char **v = NULL;
    size_t cnt = 0, cap = 0;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(dh))) {
        size_t l = strlen(e->d_name);
        if (l <= 5 || strcmp(e->d_name + l - 5, ".yaml") || e->d_name[0] == '.')
            continue;
        if (cnt == cap) {
            size_t nc = cap ? cap * 2 : 8;
            char **nv = realloc(v, nc * sizeof *nv);
            if (!nv) {
                rc = silt_err(SILT_ENOMEM, "resources: out of memory");
                break;
            }
            v = nv;
            cap = nc;
        }
        if (!(v[cnt] = strndup(e->d_name, l - 5))) {
            rc = silt_err(SILT_ENOMEM, "resources: out of memory");
            break;
        }
        cnt++;
    }
    closedir(dh);
    free(dir);
    if (rc < 0) {
        for (size_t i = 0; i < cnt; i++)
            free(v[i]);
        free(v);
        return rc;
    }
    if (cnt)
        qsort(v, cnt, sizeof *v, cmp_str);
    *out = v;
    *n = cnt;
    return 0;
}

static void free_names(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* ---- public lookups ------------------------------------------------------- */

int silt_res_source_load(odf_SourceSpec **out, silt_arena *a, silt_workspace *ws, const char *name)
{
    *out = NULL;
    res_doc d;
    int rc = load_named(a, ws, RES_SOURCE, name, &d);
    if (rc == 0)
        *out = d.source;
    return rc;
}

int silt_res_flow_load(silt_flow_def **out, silt_arena *a, silt_workspace *ws, const char *name)
{
    *out = NULL;
    res_doc d;
    int rc = load_named(a, ws, RES_FLOW, name, &d);
    if (rc == 0)
        *out = d.flow;
    return rc;
}

int silt_res_flows_for_dataset(silt_flow_def ***out, size_t *n, silt_arena *a, silt_workspace *ws,
                               const char *dataset)
{
    *out = NULL;
    *n = 0;
    char **names = NULL;
    size_t cnt = 0;
    int rc = list_names(ws, RES_FLOW, &names, &cnt);
    if (rc < 0)
        return rc;
    silt_flow_def **v = silt_arena_alloc(a, (cnt ? cnt : 1) * sizeof *v);
    if (!v)
        rc = silt_err(SILT_ENOMEM, "resources: out of memory");
    for (size_t i = 0; rc == 0 && i < cnt; i++) {
        silt_flow_def *f = NULL;
        rc = silt_res_flow_load(&f, a, ws, names[i]);
        if (rc == 0 && !strcmp(f->target, dataset))
            v[(*n)++] = f;
    }
    free_names(names, cnt);
    if (rc < 0) {
        *n = 0;
        return rc;
    }
    *out = v;
    return 0;
}

int silt_res_ingest_plan(silt_ingest_plan *out, silt_arena *a, silt_workspace *ws, const char *dataset)
{
    memset(out, 0, sizeof *out);
    silt_flow_def **flows = NULL;
    size_t n = 0;
    int rc = silt_res_flows_for_dataset(&flows, &n, a, ws, dataset);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < n; i++) {
        if (!flows[i]->ntasks)
            continue;
        out->flow = flows[i]->name;
        out->source_name = flows[i]->tasks[0].source;
        out->target_records_per_slice = flows[i]->tasks[0].target_records_per_slice;
        rc = silt_res_source_load(&out->source, a, ws, out->source_name);
        if (rc < 0)
            return silt_err_context(rc, "flow '%s'", flows[i]->name);
        return 0;
    }
    return silt_err(SILT_ENOTFOUND, "dataset '%s' has no flow with an Ingest task", dataset);
}

/* ---- batches (silt add) ------------------------------------------------- */

static _Thread_local silt_resource_change *g_added;
static _Thread_local size_t g_nadded;

static void clear_added(void)
{
    silt_resource_changes_free(g_added, g_nadded);
    g_added = NULL;
    g_nadded = 0;
}

int silt_res_batch_new(silt_res_batch **out, const char *path)
{
    clear_added();
    *out = NULL;
    silt_res_batch *b = calloc(1, sizeof *b);
    if (!b || !(b->a = silt_arena_new())) {
        free(b);
        return silt_err(SILT_ENOMEM, "%s: out of memory", path);
    }
    b->path = path;
    *out = b;
    return 0;
}

void silt_res_batch_free(silt_res_batch *b)
{
    if (!b)
        return;
    free(b->docs);
    silt_arena_free(b->a);
    free(b);
}

size_t silt_res_batch_count(const silt_res_batch *b)
{
    return b ? b->n : 0;
}

int silt_res_batch_parse(silt_res_batch *b, const char *text, size_t len, int line)
{
    if (b->n == b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 4;
        res_doc *nd = realloc(b->docs, nc * sizeof *nd);
        if (!nd)
            return silt_err(SILT_ENOMEM, "%s: out of memory", b->path);
        b->docs = nd;
        b->cap = nc;
    }
    res_doc *d = &b->docs[b->n];
    int rc = parse_doc(b, text, len, line, d);
    if (rc != 0)
        return rc == SILT_ENOMEM ? silt_err(SILT_ENOMEM, "%s: out of memory", b->path) : rc;
    for (size_t i = 0; i < b->n; i++)
        if (b->docs[i].type == d->type && !strcmp(b->docs[i].name, d->name))
            return silt_err(SILT_EINVAL, "%s:%d: headers.name: %s '%s' is defined twice", b->path, d->name_line,
                            d->type == RES_SOURCE ? "source" : "flow", d->name);
    b->n++;
    return 0;
}

int silt_res_batch_check(silt_res_batch *b, silt_workspace *ws, const char *const *new_datasets, size_t n_new)
{
    char **ds = NULL;
    int rc = 0;
    bool listed = false;
    for (size_t i = 0; rc == 0 && i < b->n; i++) {
        res_doc *d = &b->docs[i];
        if (d->type != RES_FLOW)
            continue;
        const silt_flow_def *f = d->flow;
        bool found = false;
        for (size_t k = 0; k < n_new && !found; k++)
            found = !strcmp(new_datasets[k], f->target);
        if (!found && !listed) {
            if ((rc = silt_dataset_list(&ds, ws)) < 0)
                break;
            rc = 0; /* (it returns the count) */
            listed = true;
        }
        for (char **p = ds; !found && p && *p; p++)
            found = !strcmp(*p, f->target);
        if (!found) {
            rc = silt_err(SILT_EINVAL, "%s:%d: spec.target: dataset '%s' not found (add it first or in the same file)",
                          b->path, d->target_line, f->target);
            break;
        }
        for (size_t t = 0; rc == 0 && t < f->ntasks; t++) {
            const char *src = f->tasks[t].source;
            bool ok = false;
            for (size_t k = 0; k < b->n && !ok; k++)
                ok = b->docs[k].type == RES_SOURCE && !strcmp(b->docs[k].name, src);
            if (!ok) {
                char *p = res_file(ws, RES_SOURCE, src);
                if (!p) {
                    rc = silt_err(SILT_ENOMEM, "resources: out of memory");
                    break;
                }
                ok = silt_fs_exists(p);
                free(p);
            }
            if (!ok)
                rc = silt_err(SILT_EINVAL, "%s:%d: spec.tasks[%zu].source: source '%s' not found (add it first or in the same file)",
                              b->path, d->task_lines[t], t, src);
        }
    }
    silt_strv_free(ds);
    return rc;
}

int silt_res_batch_commit(silt_res_batch *b, silt_workspace *ws)
{
    clear_added();
    silt_resource_change *ch = b->n ? calloc(b->n, sizeof *ch) : NULL;
    if (b->n && !ch)
        return silt_err(SILT_ENOMEM, "%s: out of memory", b->path);
    /* render everything first, then write: a rendering failure writes nothing */
    char **texts = b->n ? calloc(b->n, sizeof *texts) : NULL;
    size_t *lens = b->n ? calloc(b->n, sizeof *lens) : NULL;
    int rc = (b->n && (!texts || !lens)) ? silt_err(SILT_ENOMEM, "%s: out of memory", b->path) : 0;
    for (size_t i = 0; rc == 0 && i < b->n; i++) {
        silt_buf o = SILT_BUF_INIT;
        rc = b->docs[i].type == RES_SOURCE ? emit_source(&o, &b->docs[i]) : emit_flow(&o, &b->docs[i]);
        if (rc < 0)
            silt_err_context(rc, "%s:%d", b->path, b->docs[i].line);
        lens[i] = o.len;
        if (rc == 0 && !(texts[i] = silt_buf_detach(&o)))
            rc = silt_err(SILT_ENOMEM, "%s: out of memory", b->path);
        silt_buf_free(&o);
    }
    size_t done = 0;
    for (size_t i = 0; rc == 0 && i < b->n; i++) {
        const res_doc *d = &b->docs[i];
        char *dir = res_dir(ws, d->type), *file = res_file(ws, d->type, d->name);
        if (!dir || !file)
            rc = silt_err(SILT_ENOMEM, "%s: out of memory", b->path);
        if (rc == 0)
            rc = silt_fs_mkdirs(dir);
        bool existed = rc == 0 && silt_fs_exists(file);
        if (rc == 0)
            rc = silt_fs_write_atomic(file, texts[i], lens[i], false);
        if (rc == 0) {
            ch[done].type = strdup(d->type == RES_SOURCE ? "source" : "flow");
            ch[done].name = strdup(d->name);
            ch[done].updated = existed;
            done++;
            if (!ch[done - 1].type || !ch[done - 1].name)
                rc = silt_err(SILT_ENOMEM, "%s: out of memory", b->path);
        }
        free(dir);
        free(file);
    }
    for (size_t i = 0; texts && i < b->n; i++)
        free(texts[i]);
    free(texts);
    free(lens);
    g_added = ch;
    g_nadded = done;
    return rc;
}

int silt_resources_last_added(silt_resource_change **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!g_nadded)
        return 0;
    silt_resource_change *v = calloc(g_nadded, sizeof *v);
    if (!v)
        return silt_err(SILT_ENOMEM, "out of memory");
    for (size_t i = 0; i < g_nadded; i++) {
        v[i].updated = g_added[i].updated;
        v[i].type = strdup(g_added[i].type);
        v[i].name = strdup(g_added[i].name);
        if (!v[i].type || !v[i].name) {
            silt_resource_changes_free(v, i + 1);
            return silt_err(SILT_ENOMEM, "out of memory");
        }
    }
    *out = v;
    *n = g_nadded;
    return 0;
}

void silt_resource_changes_free(silt_resource_change *v, size_t n)
{
    if (!v)
        return;
    for (size_t i = 0; i < n; i++) {
        free(v[i].type);
        free(v[i].name);
    }
    free(v);
}

/* ---- listings ------------------------------------------------------------ */

void silt_sources_free(silt_source_info *v, size_t n)
{
    if (!v)
        return;
    for (size_t i = 0; i < n; i++) {
        free(v[i].name);
        free(v[i].ingress_kind);
        free(v[i].ingress_location);
        free(v[i].merge_kind);
    }
    free(v);
}

/* The buffer fields of a RestEndpoint source's listing entry. */
static int rest_buffer_info(silt_source_info *v, silt_workspace *ws, const char *name,
                            const odf_IngressRestEndpoint *re)
{
    if (!re || re->buffer.type != ODF_IngressBuffer_Memory)
        return 0;
    const odf_IngressBufferMemory *m = re->buffer.value;
    v->has_buffer = true;
    v->buffer_size = m->has_buffer_size ? m->buffer_size : 0;
    snprintf(v->overflow_policy, sizeof v->overflow_policy, "%s", m->overflow_policy ? m->overflow_policy : "Reject");
    return silt_push_buffer_counts(ws, name, &v->buffered, &v->dropped);
}

int silt_sources_list(silt_source_info **out, size_t *n, silt_workspace *ws)
{
    *out = NULL;
    *n = 0;
    char **names = NULL;
    size_t cnt = 0;
    int rc = list_names(ws, RES_SOURCE, &names, &cnt);
    if (rc < 0)
        return rc;
    silt_source_info *v = cnt ? calloc(cnt, sizeof *v) : NULL;
    silt_arena *a = silt_arena_new();
    if ((cnt && !v) || !a)
        rc = silt_err(SILT_ENOMEM, "resources: out of memory");
    size_t k = 0;
    for (size_t i = 0; rc == 0 && i < cnt; i++, k++) {
        odf_SourceSpec *s = NULL;
        rc = silt_res_source_load(&s, a, ws, names[i]);
        if (rc < 0)
            break;
        const char *ik = "", *loc = "", *mk = "";
        if (s->ingress.type && s->ingress.type <= odf_udesc_Ingress.nvariants) {
            ik = odf_udesc_Ingress.kinds[s->ingress.type - 1];
            if (!strcmp(ik, "Url"))
                loc = ((odf_IngressUrl *)s->ingress.value)->url;
            else if (!strcmp(ik, "FilesGlob"))
                loc = ((odf_IngressFilesGlob *)s->ingress.value)->path;
            else if (!strcmp(ik, "Container"))
                loc = ((odf_IngressContainer *)s->ingress.value)->image;
            else if (!strcmp(ik, "Mqtt")) {
                loc = ((odf_IngressMqtt *)s->ingress.value)->host;
                rc = silt_push_buffer_counts(ws, names[i], &v[k].buffered, &v[k].dropped);
            }
            else if (!strcmp(ik, "RestEndpoint"))
                rc = rest_buffer_info(&v[k], ws, names[i], s->ingress.value);
        }
        if (s->merge.type && s->merge.type <= odf_udesc_MergeStrategy.nvariants)
            mk = odf_udesc_MergeStrategy.kinds[s->merge.type - 1];
        v[k].name = strdup(names[i]);
        v[k].ingress_kind = strdup(ik);
        v[k].ingress_location = strdup(loc ? loc : "");
        v[k].merge_kind = strdup(mk);
        if (!v[k].name || !v[k].ingress_kind || !v[k].ingress_location || !v[k].merge_kind)
            rc = silt_err(SILT_ENOMEM, "resources: out of memory");
    }
    silt_arena_free(a);
    free_names(names, cnt);
    if (rc < 0) {
        silt_sources_free(v, cnt);
        return rc;
    }
    *out = v;
    *n = cnt;
    return 0;
}

void silt_flows_free(silt_flow_info *v, size_t n)
{
    if (!v)
        return;
    for (size_t i = 0; i < n; i++) {
        free(v[i].name);
        free(v[i].target);
        free(v[i].source);
        for (size_t j = 0; j < v[i].nschedules; j++)
            free(v[i].schedules[j]);
        free(v[i].schedules);
    }
    free(v);
}

int silt_flows_list(silt_flow_info **out, size_t *n, silt_workspace *ws, int64_t now)
{
    *out = NULL;
    *n = 0;
    char **names = NULL;
    size_t cnt = 0;
    int rc = list_names(ws, RES_FLOW, &names, &cnt);
    if (rc < 0)
        return rc;
    if (now < 0)
        now = silt_time_now().sec;
    silt_flow_info *v = cnt ? calloc(cnt, sizeof *v) : NULL;
    silt_arena *a = silt_arena_new();
    if ((cnt && !v) || !a)
        rc = silt_err(SILT_ENOMEM, "resources: out of memory");
    for (size_t i = 0; rc == 0 && i < cnt; i++) {
        silt_flow_def *f = NULL;
        if ((rc = silt_res_flow_load(&f, a, ws, names[i])) < 0)
            break;
        silt_flow_info *fi = &v[i];
        fi->next_run = -1;
        fi->name = strdup(f->name);
        fi->target = strdup(f->target);
        if (f->ntasks) {
            fi->source = strdup(f->tasks[0].source);
            fi->target_records_per_slice = f->tasks[0].target_records_per_slice;
        }
        if (f->ncrons)
            fi->schedules = calloc(f->ncrons, sizeof *fi->schedules);
        if (!fi->name || !fi->target || (f->ntasks && !fi->source) || (f->ncrons && !fi->schedules)) {
            rc = silt_err(SILT_ENOMEM, "resources: out of memory");
            break;
        }
        for (size_t j = 0; rc == 0 && j < f->ncrons; j++) {
            if (!(fi->schedules[j] = strdup(f->crons[j]))) {
                rc = silt_err(SILT_ENOMEM, "resources: out of memory");
                break;
            }
            fi->nschedules++;
            silt_cron c;
            int64_t next;
            if (silt_cron_parse(&c, f->crons[j]) == 0 && silt_cron_next(&c, now, &next) == 0 &&
                (fi->next_run < 0 || next < fi->next_run))
                fi->next_run = next;
            silt_err_clear();
        }
    }
    silt_arena_free(a);
    free_names(names, cnt);
    if (rc < 0) {
        silt_flows_free(v, cnt);
        return rc;
    }
    *out = v;
    *n = cnt;
    return 0;
}
