/* purged.c — the purge record of a files dataset (see purged.h) and the
 * public question "was this object purged by retention?".
 * Invariant: an object counts as purged only while it is both recorded and
 * absent; a later put of the same bytes brings it back. */
#include "files/purged.h"

#include <stdio.h>
#include <string.h>

#include "dataset/info.h"
#include "util/error.h"

int silt_purge_record_load(silt_dataset *ds, json_t **out) { return silt_ds_info_load(ds, SILT_PURGE_RECORD, out); }

int silt_purge_record_save(silt_dataset *ds, const json_t *record)
{
    return silt_ds_info_save(ds, SILT_PURGE_RECORD, record);
}

int silt_files_purged(char *rid_out, silt_dataset *ds, const char *content_hash)
{
    if (rid_out)
        rid_out[0] = '\0';
    json_t *purged = NULL;
    int rc = silt_purge_record_load(ds, &purged);
    if (rc)
        return rc;
    const char *rid = json_string_value(json_object_get(json_object_get(purged, "objects"), content_hash));
    int res = 0;
    if (rid) {
        silt_buf mh = SILT_BUF_INIT;
        if (silt_multihash_from_text(content_hash, &mh) == 0 && mh.len == SILT_MH_LEN) {
            int st = silt_store_stat(ds->store, "data", (const uint8_t *)mh.data, NULL);
            if (st < 0)
                res = st;
            else
                res = st == 0; /* recorded and gone (a later re-put brings it back) */
        }
        silt_err_clear();
        silt_buf_free(&mh);
        if (res == 1 && rid_out)
            snprintf(rid_out, 64, "%s", rid);
    }
    json_decref(purged);
    return res;
}
