/* verify.c — `silt verify`: the public entry point, composing what each
 * layer checks of one branch of a dataset: the chain and its data slices
 * (src/dataset/verify.c), the linked file objects of files datasets
 * (src/files/files_verify.c).
 * Invariant: every problem is reported through the callback and counted;
 * the result is SILT_ECORRUPT (damaged or missing objects) or
 * SILT_EVALIDATION (rule violations) when there was any.
 */
#include "dataset/dataset_internal.h"
#include "files/files.h"
#include "util/error.h"

int silt_dataset_verify(silt_dataset *ds, silt_report_fn report, void *ctx)
{
    silt_verify_tally t = {0, 0};
    int rc = silt_ds_verify_ref(ds, report, ctx, &t);
    if (rc == 0) {
        rc = silt_files_verify(ds, report, ctx, &t);
        if (rc == SILT_ECORRUPT && t.corrupt + t.invalid > 0) {
            silt_err_clear(); /* the damaged chain is reported already */
            rc = 0;
        }
    }
    if (rc < 0)
        return rc;
    int problems = t.corrupt + t.invalid;
    if (problems == 0) {
        silt_err_clear();
        return 0;
    }
    return silt_err(t.corrupt ? SILT_ECORRUPT : SILT_EVALIDATION, "dataset '%s': verification failed (%d problem%s)",
                    ds->name, problems, problems == 1 ? "" : "s");
}
