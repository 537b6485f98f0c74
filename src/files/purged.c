/* purged.c — the purge record of a files dataset (see purged.h) and the
 * public question "was this object purged by retention?".
 * Invariant: an object counts as purged only while it is both recorded and
 * absent; a later put of the same bytes brings it back. */
#include "files/purged.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataset/info.h"
#include "util/error.h"

int silt_purge_record_load(silt_dataset *ds, json_t **out) { return silt_ds_info_load(ds, SILT_PURGE_RECORD, out); }

int silt_purge_record_save(silt_dataset *ds, const json_t *record)
{
    return silt_ds_info_save(ds, SILT_PURGE_RECORD, record);
}

struct silt_purged {
    silt_dataset *ds; /* borrowed */
    json_t *record;   /* owned */
};

int silt_purged_load(silt_purged **out, silt_dataset *ds)
{
    *out = NULL;
    silt_purged *p = calloc(1, sizeof *p);
    if (!p)
        return silt_err(SILT_ENOMEM, "out of memory");
    int rc = silt_purge_record_load(ds, &p->record);
    if (rc) {
        free(p);
        return rc;
    }
    p->ds = ds;
    *out = p;
    return 0;
}

void silt_purged_free(silt_purged *p)
{
    if (!p)
        return;
    json_decref(p->record);
    free(p);
}

int silt_purged_check(char *rid_out, const silt_purged *p, const char *content_hash)
{
    if (rid_out)
        rid_out[0] = '\0';
    const char *rid = json_string_value(json_object_get(json_object_get(p->record, "objects"), content_hash));
    if (!rid)
        return 0;
    int res = 0;
    silt_buf mh = SILT_BUF_INIT;
    if (silt_multihash_from_text(content_hash, &mh) == 0 && mh.len == SILT_MH_LEN) {
        int st = silt_store_stat(p->ds->store, "data", (const uint8_t *)mh.data, NULL);
        if (st < 0)
            res = st;
        else
            res = st == 0; /* recorded and gone (a later re-put brings it back) */
    }
    silt_err_clear();
    silt_buf_free(&mh);
    if (res == 1 && rid_out)
        snprintf(rid_out, 64, "%s", rid);
    return res;
}

int silt_files_purged(char *rid_out, silt_dataset *ds, const char *content_hash)
{
    if (rid_out)
        rid_out[0] = '\0';
    silt_purged *p;
    int rc = silt_purged_load(&p, ds);
    if (rc)
        return rc;
    rc = silt_purged_check(rid_out, p, content_hash);
    silt_purged_free(p);
    return rc;
}
