/* yamldocs.c — splits a YAML file into its documents and finds the
 * top-level `kind` and `content` of each, so that the ODF parsers (which read
 * one document) can be applied per document / to an envelope's content.
 *
 * One pass over libyaml's event stream, with the input limits of odf/yaml.h
 * checked on every event (size, encoding, depth, anchors): no document tree
 * is built, so a file is accepted or refused in time linear in its size.
 *
 * Slices are cut from the original text at BYTE offsets: libyaml's marks
 * count characters, and are converted with odf_yaml_offsets (marks arrive in
 * increasing order, so the conversion walks the text once). A slice is
 * prefixed with as many spaces as there are characters before it on its
 * first line, so that its indentation reads as in the file (YAML counts
 * indentation in characters); the line it starts on is returned beside it
 * for the *_at parsers, so messages name the file's lines without padding
 * every slice with the lines before it (which would cost O(n²) for many
 * documents). */
#include <stdio.h>
#include <string.h>
#include <yaml.h>

#include "dataset/dataset_internal.h"
#include "odf/yaml.h"
#include "util/error.h"

/* What the walk knows about the document being read. */
typedef struct split_doc {
    bool root_map;     /* root is a mapping: its keys are watched */
    bool empty;        /* root is an empty scalar */
    bool expect_key;   /* next node at level 2 is a key */
    int watch;         /* 0, or which root key's value comes next: 1 kind, 2 content */
    bool have_kind, have_content;
    yaml_mark_t root_start, content_start;
    size_t root_b0, root_b1, content_b0, content_b1; /* byte offsets */
    char *kind;
} split_doc;

enum { W_NONE, W_KIND, W_CONTENT };

typedef struct split {
    silt_arena *a;
    const char *file;
    const char *text; /* parser input (after any BOM) */
    odf_yaml_offsets off;
    silt_ydoc *docs;
    size_t n, cap;
    split_doc d;
} split;

/* Arena-owned copy of text[b0, b1), prefixed with `column` spaces. */
static char *slice(silt_arena *a, const char *text, size_t b0, size_t b1, size_t column, size_t *len_out)
{
    size_t body = b1 > b0 ? b1 - b0 : 0;
    char *s = silt_arena_alloc(a, column + body + 1);
    if (!s)
        return NULL;
    memset(s, ' ', column);
    memcpy(s + column, text + b0, body);
    s[column + body] = '\0';
    *len_out = column + body;
    return s;
}

static size_t byte_at(split *sp, yaml_mark_t m)
{
    return odf_yaml_offset(&sp->off, m.index);
}

/* A node starts at level 2 (directly in the root mapping). */
static int child_start(split *sp, const yaml_event_t *ev)
{
    split_doc *d = &sp->d;
    if (d->expect_key) {
        d->watch = W_NONE;
        if (ev->type == YAML_SCALAR_EVENT) {
            const char *k = (const char *)ev->data.scalar.value;
            if (!d->have_kind && !strcmp(k, "kind"))
                d->watch = W_KIND;
            else if (!d->have_content && !strcmp(k, "content"))
                d->watch = W_CONTENT;
        }
        return 0;
    }
    if (d->watch == W_KIND) {
        d->have_kind = true;
        if (ev->type == YAML_SCALAR_EVENT &&
            !(d->kind = silt_arena_strdup(sp->a, (const char *)ev->data.scalar.value)))
            return SILT_ENOMEM;
    } else if (d->watch == W_CONTENT) {
        d->have_content = true;
        d->content_start = ev->start_mark;
        d->content_b0 = byte_at(sp, ev->start_mark);
    }
    return 0;
}

/* The node at level 2 that started last ends at `end`. */
static void child_end(split *sp, yaml_mark_t end)
{
    split_doc *d = &sp->d;
    if (!d->expect_key && d->watch == W_CONTENT)
        d->content_b1 = byte_at(sp, end);
    if (!d->expect_key)
        d->watch = W_NONE;
    d->expect_key = !d->expect_key;
}

/* Stores the finished document (empty ones are skipped). */
static int doc_finish(split *sp)
{
    split_doc *d = &sp->d;
    if (d->empty)
        return 0;
    if (sp->n == sp->cap) {
        size_t ncap = sp->cap ? sp->cap * 2 : 4;
        silt_ydoc *nd = silt_arena_alloc(sp->a, ncap * sizeof *nd);
        if (!nd)
            return SILT_ENOMEM;
        if (sp->n)
            memcpy(nd, sp->docs, sp->n * sizeof *nd);
        sp->docs = nd;
        sp->cap = ncap;
    }
    silt_ydoc *y = &sp->docs[sp->n];
    memset(y, 0, sizeof *y);
    y->line = (int)d->root_start.line + 1;
    y->kind = d->kind;
    y->text = slice(sp->a, sp->text, d->root_b0, d->root_b1, d->root_start.column, &y->len);
    if (!y->text)
        return SILT_ENOMEM;
    if (d->have_content) {
        y->content_line = (int)d->content_start.line + 1;
        y->content = slice(sp->a, sp->text, d->content_b0, d->content_b1, d->content_start.column,
                           &y->content_len);
        if (!y->content)
            return SILT_ENOMEM;
    }
    sp->n++;
    return 0;
}

/* Handles one event; `level` is the number of collections open before it. */
static int on_event(split *sp, const yaml_event_t *ev, int level)
{
    split_doc *d = &sp->d;
    bool start = ev->type == YAML_SCALAR_EVENT || ev->type == YAML_SEQUENCE_START_EVENT ||
                 ev->type == YAML_MAPPING_START_EVENT;
    bool end = ev->type == YAML_SEQUENCE_END_EVENT || ev->type == YAML_MAPPING_END_EVENT;
    int rc = 0;
    if (ev->type == YAML_DOCUMENT_START_EVENT) {
        memset(d, 0, sizeof *d);
        return 0;
    }
    if (ev->type == YAML_DOCUMENT_END_EVENT)
        return doc_finish(sp);
    if (start && level == 0) {
        d->root_start = ev->start_mark;
        d->root_b0 = byte_at(sp, ev->start_mark);
        d->root_map = ev->type == YAML_MAPPING_START_EVENT;
        d->expect_key = true;
        d->empty = ev->type == YAML_SCALAR_EVENT && ev->data.scalar.length == 0;
    } else if (start && level == 1 && d->root_map) {
        rc = child_start(sp, ev);
    }
    bool done_here = ev->type == YAML_SCALAR_EVENT || end; /* a node ends with this event */
    int node_level = end ? level - 1 : level;              /* collections open around it */
    if (rc == 0 && done_here && node_level == 0)
        d->root_b1 = byte_at(sp, ev->end_mark);
    else if (rc == 0 && done_here && node_level == 1 && d->root_map)
        child_end(sp, ev->end_mark);
    return rc;
}

static int walk(split *sp, yaml_parser_t *parser)
{
    odf_yaml_guard g = {sp->file, 1, 0};
    for (;;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(parser, &ev))
            return odf_yaml_syntax_error(parser, sp->file, 1);
        int level = g.depth;
        int rc = odf_yaml_guard_event(&g, &ev);
        if (rc == 0)
            rc = on_event(sp, &ev, level);
        bool last = ev.type == YAML_STREAM_END_EVENT;
        yaml_event_delete(&ev);
        if (rc < 0)
            return rc == SILT_ENOMEM ? silt_err(rc, "%s: out of memory", sp->file) : rc;
        if (last)
            return 0;
    }
}

int silt_yaml_split(silt_arena *a, const char *text, size_t len, const char *filename,
                    silt_ydoc **docs_out, size_t *n_out)
{
    *docs_out = NULL;
    *n_out = 0;
    split sp;
    memset(&sp, 0, sizeof sp);
    sp.a = a;
    sp.file = filename ? filename : "<input>";
    yaml_parser_t parser;
    size_t skip;
    int rc = odf_yaml_parser_open(&parser, text, len, sp.file, &skip);
    if (rc < 0)
        return rc;
    sp.text = text + skip;
    odf_yaml_offsets_init(&sp.off, sp.text, len - skip);
    rc = walk(&sp, &parser);
    yaml_parser_delete(&parser);
    if (rc < 0)
        return rc;
    *docs_out = sp.docs;
    *n_out = sp.n;
    return 0;
}
