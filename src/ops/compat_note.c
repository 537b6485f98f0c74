/* compat_note.c — which engine a dataset's SQL names, for the note `silt
 * add` prints when it is not DuckDB (engine/compat.h runs it through the
 * compatibility layer). Reads the chain only; changes nothing. */
#include <stdlib.h>
#include <string.h>

#include "dataset/dataset_internal.h"
#include "engine/compat.h"
#include "silt.h"
#include "util/error.h"

/* The Sql transform of a block's event (SetTransform, or the preprocess of
 * a source), or NULL. */
static const odf_TransformSql *event_sql(const odf_MetadataBlock *b)
{
    const odf_union *u = NULL;
    if (b->event.type == ODF_MetadataEvent_SetTransform)
        u = &((const odf_SetTransform *)b->event.value)->transform;
    else if (b->event.type == ODF_MetadataEvent_SetPollingSource)
        u = &((const odf_SetPollingSource *)b->event.value)->preprocess;
    else if (b->event.type == ODF_MetadataEvent_AddPushSource)
        u = &((const odf_AddPushSource *)b->event.value)->preprocess;
    return u && u->type == ODF_Transform_Sql ? u->value : NULL;
}

int silt_dataset_foreign_engine(char **engine, silt_dataset *ds)
{
    *engine = NULL;
    int rc = silt_ds_sync(ds);
    if (rc || ds->st.empty)
        return rc;
    silt_arena *a = silt_arena_new();
    if (!a)
        return silt_err(SILT_ENOMEM, "out of memory");
    uint8_t h[SILT_MH_LEN];
    memcpy(h, ds->st.head, SILT_MH_LEN);
    for (;;) {
        odf_MetadataBlock *b = NULL;
        if ((rc = silt_ds_load_block(ds, h, a, &b)) != 0)
            break;
        const odf_TransformSql *t = event_sql(b);
        if (t && silt_compat_is_foreign(t->engine)) {
            *engine = strdup(t->engine);
            rc = *engine ? 0 : silt_err(SILT_ENOMEM, "out of memory");
            break;
        }
        if (!b->prev_block_hash.data || b->prev_block_hash.len != SILT_MH_LEN)
            break;
        memcpy(h, b->prev_block_hash.data, SILT_MH_LEN);
    }
    silt_arena_free(a);
    return rc;
}
