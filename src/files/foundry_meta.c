/* foundry_meta.c — what the Foundry datasets API (server/foundry_*.c) needs
 * beyond silt's own model, kept in the library so the CLI can use it too:
 *  - the parent folder RID a dataset was created under (Foundry's
 *    parentFolderRid), recorded in info/foundry.json {"parentFolderRid": …};
 *    silt has no folders, so it is only recorded and reported back;
 *  - the mapping between Foundry branch names (any text: "dev/feature x")
 *    and silt branch names ([A-Za-z0-9._-], 1..100 chars, not starting with
 *    '.' or '-'), see silt_branch_name_encode in silt.h.
 * Invariants: the info record is replaced atomically under its own lock;
 * encode/decode are inverse on every text encode accepts, and decode is the
 * identity on every silt name that holds no "_XX" (two upper-case hex digits).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataset/dataset_internal.h"
#include "dataset/info.h"
#include "util/error.h"
#include "util/fsutil.h"

#define FOUNDRY_INFO "foundry.json"
#define BRANCH_MAX 100

static bool rid_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-';
}

int silt_dataset_folder_set(silt_dataset *ds, const char *folder_rid)
{
    size_t n = folder_rid ? strlen(folder_rid) : 0;
    bool ok = n > 3 && n <= 256 && strncmp(folder_rid, "ri.", 3) == 0;
    for (size_t i = 0; ok && i < n; i++)
        ok = rid_char(folder_rid[i]);
    if (!ok)
        return silt_err(SILT_EINVAL, "invalid folder RID '%.300s': expected ri.<service>.<instance>.<type>.<id> "
                                     "([A-Za-z0-9._-], at most 256 chars)",
                        folder_rid ? folder_rid : "");
    int lock = silt_ds_info_lock(ds, FOUNDRY_INFO ".lock");
    if (lock < 0)
        return lock;
    json_t *j = NULL;
    int rc = silt_ds_info_load(ds, FOUNDRY_INFO, &j);
    if (!rc && json_object_set_new(j, "parentFolderRid", json_string(folder_rid)) != 0)
        rc = silt_err(SILT_ENOMEM, "out of memory");
    if (!rc)
        rc = silt_ds_info_save(ds, FOUNDRY_INFO, j);
    json_decref(j);
    silt_fs_unlock(lock);
    return rc;
}

int silt_dataset_folder_get(char **out, silt_dataset *ds)
{
    *out = NULL;
    json_t *j = NULL;
    int rc = silt_ds_info_load(ds, FOUNDRY_INFO, &j);
    const char *v = rc ? NULL : json_string_value(json_object_get(j, "parentFolderRid"));
    if (v && !(*out = strdup(v)))
        rc = silt_err(SILT_ENOMEM, "out of memory");
    json_decref(j);
    return rc;
}

/* ---- branch names ------------------------------------------------------------ */

static bool upper_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F'); }

static bool plain_char(char c, size_t i)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
        return true;
    return (c == '.' || c == '-') && i > 0;
}

int silt_branch_name_encode(char **out, const char *name)
{
    *out = NULL;
    size_t n = name ? strlen(name) : 0;
    if (n == 0)
        return silt_err(SILT_EINVAL, "invalid branch name '': a branch name cannot be empty");
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f)
            return silt_err(SILT_EINVAL, "invalid branch name: control character at byte %zu", i);
    char *s = malloc(3 * n + 1);
    if (!s)
        return silt_err(SILT_ENOMEM, "out of memory");
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        bool lone_underscore = c == '_' && !(upper_hex(name[i + 1]) && upper_hex(name[i + 2])); /* NUL ends it */
        if (plain_char(c, i) || lone_underscore)
            s[k++] = c;
        else
            k += (size_t)snprintf(s + k, 4, "_%02X", (unsigned char)c);
    }
    s[k] = '\0';
    if (k > BRANCH_MAX) {
        free(s);
        return silt_err(SILT_EINVAL, "invalid branch name '%.200s': too long (stored as %zu chars, at most %d)",
                        name, k, BRANCH_MAX);
    }
    *out = s;
    return 0;
}

int silt_branch_name_decode(char **out, const char *stored)
{
    size_t n = strlen(stored);
    char *s = malloc(n + 1);
    if (!s) {
        *out = NULL;
        return silt_err(SILT_ENOMEM, "out of memory");
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (stored[i] == '_' && upper_hex(stored[i + 1]) && upper_hex(stored[i + 2]) &&
            !(stored[i + 1] == '0' && stored[i + 2] == '0')) {
            unsigned v = 0;
            sscanf(stored + i + 1, "%2X", &v);
            s[k++] = (char)v;
            i += 2;
        } else {
            s[k++] = stored[i];
        }
    }
    s[k] = '\0';
    *out = s;
    return 0;
}
