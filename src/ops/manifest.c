/* manifest.c — `silt add`: manifest files holding DatasetSnapshot documents
 * and Source / Flow resources (`$schema:` documents), in any mix.
 *
 * Invariants:
 *  - every document of the file is parsed and checked before anything is
 *    built: a syntax error, a bad snapshot, a dataset named twice or a
 *    resource that refers to an unknown dataset creates nothing;
 *  - each dataset is built and published all-or-nothing
 *    (silt_ds_add_snapshot); resources are stored after every dataset of
 *    the file was created, so a Flow never names a dataset that is not
 *    there.
 * This module sits above src/dataset/ and src/ingest/ (DESIGN.md §2), which
 * is why the orchestration lives here and not in either of them.
 */
#include <stdlib.h>
#include <string.h>

#include "dataset/dataset_internal.h"
#include "ingest/resources.h"
#include "odf/yaml.h"
#include "util/error.h"

/* Every document of one manifest file, parsed. */
typedef struct manifest {
    const char *path;
    silt_arena *a;
    silt_ydoc *docs;
    size_t ndocs;
    odf_DatasetSnapshot **snaps; /* per document; NULL for a resource */
    const char **snap_names;     /* the n_snaps dataset names, in order */
    size_t n_snaps;
    silt_res_batch *resources;
} manifest;

static void manifest_free(manifest *m)
{
    silt_res_batch_free(m->resources);
    free(m->snap_names);
    free(m->snaps);
    silt_arena_free(m->a);
}

/* Parses document i: a resource into the batch, or a DatasetSnapshot. */
static int parse_doc(manifest *m, size_t i)
{
    const silt_ydoc *d = &m->docs[i];
    if (!d->kind) {
        int rc = silt_res_batch_parse(m->resources, d->text, d->len, d->line);
        if (rc <= 0)
            return rc; /* 0: a resource; < 0: a bad one */
        /* no `$schema`: report it as a manifest */
    }
    void *obj = NULL;
    int rc = odf_yaml_parse_manifest_at(m->a, d->text, d->len, m->path, d->line, "DatasetSnapshot", NULL, &obj);
    if (rc == 0)
        rc = silt_ds_check_snapshot(m->path, d->line, obj);
    if (rc < 0)
        return rc;
    odf_DatasetSnapshot *s = obj;
    for (size_t j = 0; j < m->n_snaps; j++)
        if (strcmp(m->snap_names[j], s->name) == 0)
            return silt_err(SILT_EINVAL, "%s:%d: content.name: dataset '%s' is defined twice", m->path, d->line,
                            s->name);
    m->snaps[i] = s;
    m->snap_names[m->n_snaps++] = s->name;
    return 0;
}

static int manifest_parse(manifest *m, const silt_buf *text)
{
    int rc = silt_yaml_split(m->a, text->data ? text->data : "", text->len, m->path, &m->docs, &m->ndocs);
    if (rc == 0 && m->ndocs == 0)
        rc = silt_err(SILT_EINVAL, "%s: no YAML document found", m->path);
    if (rc == 0) {
        m->snaps = calloc(m->ndocs, sizeof *m->snaps);
        m->snap_names = calloc(m->ndocs + 1, sizeof *m->snap_names);
        if (!m->snaps || !m->snap_names)
            rc = silt_err(SILT_ENOMEM, "%s: out of memory", m->path);
    }
    if (rc == 0)
        rc = silt_res_batch_new(&m->resources, m->path);
    for (size_t i = 0; rc == 0 && i < m->ndocs; i++)
        rc = parse_doc(m, i);
    return rc;
}

/* Creates the datasets; their names go to *names (NULL-terminated). */
static int manifest_build(manifest *m, silt_workspace *ws, bool replace, char ***names_out)
{
    char **names = calloc(m->n_snaps + 1, sizeof *names);
    int rc = names ? 0 : silt_err(SILT_ENOMEM, "%s: out of memory", m->path);
    size_t created = 0;
    for (size_t i = 0; rc == 0 && i < m->ndocs; i++) {
        if (!m->snaps[i])
            continue; /* a resource */
        rc = silt_ds_add_snapshot(ws, m->path, m->docs[i].line, m->snaps[i], replace);
        if (rc == 0 && !(names[created++] = strdup(m->snaps[i]->name)))
            rc = silt_err(SILT_ENOMEM, "%s: out of memory", m->path);
    }
    if (rc == 0 && names_out) {
        *names_out = names;
        names = NULL;
    }
    silt_strv_free(names);
    return rc;
}

int silt_dataset_add_manifest(char ***names_out, silt_workspace *ws, const char *path)
{
    return silt_dataset_add_manifest_ex(names_out, ws, path, false);
}

int silt_dataset_add_manifest_ex(char ***names_out, silt_workspace *ws, const char *path, bool replace)
{
    if (names_out)
        *names_out = NULL;
    manifest m = {.path = path, .a = silt_arena_new()};
    if (!m.a)
        return silt_err(SILT_ENOMEM, "%s: out of memory", path);
    silt_buf text = SILT_BUF_INIT;
    int rc = silt_ds_read_text(path, &text);
    if (rc == 0)
        rc = manifest_parse(&m, &text);
    if (rc == 0)
        rc = silt_res_batch_check(m.resources, ws, m.snap_names, m.n_snaps);
    char **names = NULL;
    if (rc == 0)
        rc = manifest_build(&m, ws, replace, &names);
    if (rc == 0)
        rc = silt_res_batch_commit(m.resources, ws);
    if (rc == 0 && names_out)
        *names_out = names;
    else
        silt_strv_free(names);
    manifest_free(&m);
    silt_buf_free(&text);
    return rc;
}
