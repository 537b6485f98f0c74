/* progress.c — the progress callback carried by a dataset handle
 * (silt_dataset_set_progress), for the operations that take no options
 * struct: verify and upload. Calling it is one indirect call; the callback
 * decides how often to draw. */
#include "dataset/dataset_internal.h"

void silt_dataset_set_progress(silt_dataset *ds, silt_progress_fn fn, void *ctx)
{
    if (!ds)
        return;
    ds->progress = fn;
    ds->progress_ctx = fn ? ctx : NULL;
}

int silt_ds_progress(const silt_dataset *ds, const silt_progress *p)
{
    return ds && ds->progress ? ds->progress(ds->progress_ctx, p) : 0;
}

void silt_ds_progress_add(silt_dataset *ds, uint64_t blocks, uint64_t bytes)
{
    if (!ds || !ds->prog || !ds->progress)
        return;
    ds->prog->done += blocks;
    ds->prog->bytes += bytes;
    (void)ds->progress(ds->progress_ctx, ds->prog);
}
