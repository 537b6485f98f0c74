/* yamldocs.c — splits a YAML file into its documents and finds the
 * top-level `kind` and `content` of each, so that the ODF parsers (which read
 * one document) can be applied per document / to an envelope's content.
 *
 * Slices are cut from the original text by libyaml's node marks and padded
 * with the newlines and spaces that precede them in the file, so line and
 * column numbers in later parse errors still match the file. */
#include <stdio.h>
#include <string.h>
#include <yaml.h>

#include "dataset/dataset_internal.h"
#include "util/error.h"

/* Padded, arena-owned copy of text[start, end) starting at (line, column). */
static char *slice(silt_arena *a, const char *text, yaml_mark_t start, yaml_mark_t end, size_t *len_out)
{
    size_t body = end.index > start.index ? end.index - start.index : 0;
    size_t pad = start.line + start.column;
    char *s = silt_arena_alloc(a, pad + body + 1);
    if (!s)
        return NULL;
    memset(s, '\n', start.line);
    memset(s + start.line, ' ', start.column);
    memcpy(s + pad, text + start.index, body);
    s[pad + body] = '\0';
    *len_out = pad + body;
    return s;
}

static yaml_node_t *map_get(yaml_document_t *doc, yaml_node_t *map, const char *key)
{
    if (!map || map->type != YAML_MAPPING_NODE)
        return NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(doc, p->key);
        if (k && k->type == YAML_SCALAR_NODE && strcmp((const char *)k->data.scalar.value, key) == 0)
            return yaml_document_get_node(doc, p->value);
    }
    return NULL;
}

int silt_yaml_split(silt_arena *a, const char *text, size_t len, const char *filename,
                    silt_ydoc **docs_out, size_t *n_out)
{
    *docs_out = NULL;
    *n_out = 0;
    const char *fn = filename ? filename : "<input>";
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser))
        return silt_err(SILT_ENOMEM, "%s: out of memory", fn);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    silt_ydoc *docs = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    for (;;) {
        yaml_document_t doc;
        if (!yaml_parser_load(&parser, &doc)) {
            rc = silt_err(SILT_EINVAL, "%s:%zu: yaml syntax error: %s", fn, parser.problem_mark.line + 1,
                          parser.problem ? parser.problem : "unknown problem");
            break;
        }
        yaml_node_t *root = yaml_document_get_root_node(&doc);
        if (!root) {
            yaml_document_delete(&doc);
            break; /* end of stream */
        }
        bool empty = root->type == YAML_SCALAR_NODE && root->data.scalar.length == 0;
        if (!empty) {
            if (n == cap) {
                size_t ncap = cap ? cap * 2 : 4;
                silt_ydoc *nd = silt_arena_alloc(a, ncap * sizeof *nd);
                if (!nd) {
                    yaml_document_delete(&doc);
                    rc = SILT_ENOMEM;
                    break;
                }
                if (n)
                    memcpy(nd, docs, n * sizeof *nd);
                docs = nd;
                cap = ncap;
            }
            silt_ydoc *d = &docs[n];
            memset(d, 0, sizeof *d);
            d->line = (int)root->start_mark.line + 1;
            d->text = slice(a, text, root->start_mark, root->end_mark, &d->len);
            yaml_node_t *kind = map_get(&doc, root, "kind");
            if (kind && kind->type == YAML_SCALAR_NODE)
                d->kind = silt_arena_strdup(a, (const char *)kind->data.scalar.value);
            yaml_node_t *content = map_get(&doc, root, "content");
            if (content)
                d->content = slice(a, text, content->start_mark, content->end_mark, &d->content_len);
            if (!d->text || (kind && kind->type == YAML_SCALAR_NODE && !d->kind) ||
                (content && !d->content)) {
                yaml_document_delete(&doc);
                rc = SILT_ENOMEM;
                break;
            }
            n++;
        }
        yaml_document_delete(&doc);
    }
    yaml_parser_delete(&parser);
    if (rc < 0)
        return rc;
    *docs_out = docs;
    *n_out = n;
    return 0;
}
