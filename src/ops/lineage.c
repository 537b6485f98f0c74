/* lineage.c — `silt lineage NAME` (issue 16, docs/transforms.md
 * "Lineage"): the dependency graph around one dataset of the workspace.
 *
 * Invariants:
 *  - upstream edges come from the SetTransform inputs of NAME and,
 *    transitively, of its inputs; downstream edges from every derivative of
 *    the workspace whose inputs reach NAME (a scan of all datasets: the
 *    chains record only inputs, never consumers);
 *  - every dataset appears once among the nodes (NAME first, then by name);
 *    edges are sorted by (from, to); a derivative one of whose inputs no
 *    longer exists is shown without inputs.
 */
#include "silt.h"

#include "util/error.h"

#include <stdlib.h>
#include <string.h>

typedef struct node {
    char *name;
    silt_dataset_kind kind;
    char **inputs; /* names (NULL-terminated) */
} node;

typedef struct graph {
    node *n;
    size_t len;
} graph;

static void graph_free(graph *g)
{
    for (size_t i = 0; i < g->len; i++) {
        free(g->n[i].name);
        silt_strv_free(g->n[i].inputs);
    }
    free(g->n);
}

static int graph_load(graph *g, silt_workspace *ws)
{
    char **names = NULL;
    int rc = silt_dataset_list(&names, ws);
    rc = rc < 0 ? rc : 0; /* the count */
    size_t cnt = 0;
    while (!rc && names[cnt])
        cnt++;
    g->n = rc ? NULL : calloc(cnt + 1, sizeof *g->n);
    if (!rc && !g->n)
        rc = silt_err(SILT_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < cnt; i++) {
        silt_dataset *ds = NULL;
        rc = silt_dataset_open(&ds, ws, names[i]);
        silt_dataset_info info;
        if (!rc)
            rc = silt_dataset_info_get(&info, ds);
        node *nd = &g->n[g->len];
        if (!rc) {
            nd->kind = info.kind;
            nd->name = strdup(names[i]);
            g->len++;
            rc = nd->name ? silt_dataset_inputs(&nd->inputs, ds) : silt_err(SILT_ENOMEM, "out of memory");
            if (rc == SILT_ENOTFOUND) { /* an input deleted since: shown with no inputs */
                silt_err_clear();
                rc = 0;
            }
        }
        silt_dataset_free(ds);
    }
    silt_strv_free(names);
    return rc;
}

static node *find(graph *g, const char *name)
{
    for (size_t i = 0; i < g->len; i++)
        if (strcmp(g->n[i].name, name) == 0)
            return &g->n[i];
    return NULL;
}

typedef struct acc {
    silt_lineage *l;
    size_t cap_n, cap_e;
} acc;

static int add_node(acc *a, const node *nd)
{
    for (size_t i = 0; i < a->l->num_nodes; i++)
        if (strcmp(a->l->nodes[i].name, nd->name) == 0)
            return 0;
    if (a->l->num_nodes == a->cap_n) {
        size_t cap = a->cap_n ? a->cap_n * 2 : 8;
        silt_lineage_node *p = realloc(a->l->nodes, cap * sizeof *p);
        if (!p)
            return SILT_ENOMEM;
        a->l->nodes = p;
        a->cap_n = cap;
    }
    silt_lineage_node *o = &a->l->nodes[a->l->num_nodes];
    if (!(o->name = strdup(nd->name)))
        return SILT_ENOMEM;
    o->kind = nd->kind;
    a->l->num_nodes++;
    return 1;
}

static int add_edge(acc *a, const char *from, const char *to, bool upstream)
{
    for (size_t i = 0; i < a->l->num_edges; i++)
        if (strcmp(a->l->edges[i].from, from) == 0 && strcmp(a->l->edges[i].to, to) == 0)
            return 0;
    if (a->l->num_edges == a->cap_e) {
        size_t cap = a->cap_e ? a->cap_e * 2 : 8;
        silt_lineage_edge *p = realloc(a->l->edges, cap * sizeof *p);
        if (!p)
            return SILT_ENOMEM;
        a->l->edges = p;
        a->cap_e = cap;
    }
    silt_lineage_edge *e = &a->l->edges[a->l->num_edges];
    e->from = strdup(from);
    e->to = strdup(to);
    e->upstream = upstream;
    a->l->num_edges++;
    return e->from && e->to ? 0 : SILT_ENOMEM;
}

/* Every input of nd, transitively. */
static int walk_up(acc *a, graph *g, const node *nd, int depth)
{
    int rc = depth > 64 ? silt_err(SILT_EINVAL, "the inputs are nested more than 64 levels deep") : 0;
    for (size_t i = 0; !rc && nd->inputs && nd->inputs[i]; i++) {
        node *in = find(g, nd->inputs[i]);
        if (!in)
            continue;
        rc = add_edge(a, in->name, nd->name, true);
        int added = rc ? rc : add_node(a, in);
        rc = added < 0 ? added : added ? walk_up(a, g, in, depth + 1) : 0;
    }
    return rc;
}

/* Every derivative reading nd, transitively. */
static int walk_down(acc *a, graph *g, const node *nd, int depth)
{
    int rc = depth > 64 ? silt_err(SILT_EINVAL, "the consumers are nested more than 64 levels deep") : 0;
    for (size_t k = 0; !rc && k < g->len; k++) {
        const node *c = &g->n[k];
        for (size_t i = 0; !rc && c->inputs && c->inputs[i]; i++) {
            if (strcmp(c->inputs[i], nd->name) != 0)
                continue;
            rc = add_edge(a, nd->name, c->name, false);
            int added = rc ? rc : add_node(a, c);
            rc = added < 0 ? added : added ? walk_down(a, g, c, depth + 1) : 0;
        }
    }
    return rc;
}

static int cmp_node(const void *x, const void *y)
{
    return strcmp(((const silt_lineage_node *)x)->name, ((const silt_lineage_node *)y)->name);
}

static int cmp_edge(const void *x, const void *y)
{
    const silt_lineage_edge *a = x, *b = y;
    if (a->upstream != b->upstream)
        return a->upstream ? -1 : 1;
    int c = strcmp(a->from, b->from);
    return c ? c : strcmp(a->to, b->to);
}

void silt_lineage_free(silt_lineage *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->num_nodes; i++)
        free(l->nodes[i].name);
    for (size_t i = 0; i < l->num_edges; i++) {
        free(l->edges[i].from);
        free(l->edges[i].to);
    }
    free(l->nodes);
    free(l->edges);
    free(l);
}

int silt_workspace_lineage(silt_lineage **out, silt_workspace *ws, const char *name)
{
    *out = NULL;
    graph g = {0};
    acc a = {calloc(1, sizeof *a.l), 0, 0};
    int rc = a.l ? graph_load(&g, ws) : SILT_ENOMEM;
    node *self = rc ? NULL : find(&g, name);
    if (!rc && !self)
        rc = silt_err(SILT_ENOTFOUND, "dataset '%s' not found", name);
    if (!rc)
        rc = add_node(&a, self) < 0 ? SILT_ENOMEM : 0;
    if (!rc)
        rc = walk_up(&a, &g, self, 0);
    if (!rc)
        rc = walk_down(&a, &g, self, 0);
    graph_free(&g);
    if (rc < 0) {
        silt_lineage_free(a.l);
        return rc == SILT_ENOMEM && !silt_error_last()[0] ? silt_err(rc, "out of memory") : rc;
    }
    if (a.l->num_nodes > 1)
        qsort(a.l->nodes + 1, a.l->num_nodes - 1, sizeof *a.l->nodes, cmp_node);
    if (a.l->num_edges)
        qsort(a.l->edges, a.l->num_edges, sizeof *a.l->edges, cmp_edge);
    *out = a.l;
    return 0;
}
