/* as_of.c — `--as-of REF` of the reading commands (sql, tail, schema,
 * files, cat, log): one resolution for all of them (silt_as_of_resolve). */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

int cli_as_of(silt_dataset *ds, const char *ref, char *block, char *rid)
{
    return silt_as_of_resolve(ds, ref, block, rid) < 0 ? cli_fail(NULL) : 0;
}

int cli_as_of_rid(silt_dataset *ds, const char *ref, char *rid)
{
    char block[72];
    if (cli_as_of(ds, ref, block, rid))
        return EXIT_FAIL;
    if (!rid[0])
        return cli_fail("--as-of '%s': no transaction was committed at or before block %s", ref, block);
    return 0;
}

/* A full block hash text: "f1620" and 64 hex digits. */
static bool full_hash(const char *s)
{
    if (strncmp(s, "f1620", 5) != 0 || strlen(s) != 69)
        return false;
    for (const char *p = s + 5; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
            return false;
    return true;
}

int cli_sql_as_of(silt_workspace *ws, const char **items, size_t n, char ***owned)
{
    *owned = calloc(n + 1, sizeof **owned);
    if (!*owned)
        return cli_fail("out of memory");
    for (size_t i = 0; i < n; i++) {
        const char *eq = strchr(items[i], '=');
        if (!eq || full_hash(eq + 1))
            continue; /* NAME=BLOCK or a bare BLOCK: silt_sql checks it */
        char *name = strndup(items[i], (size_t)(eq - items[i]));
        silt_dataset *ds = NULL;
        char block[72];
        int rc = !name ? cli_fail("out of memory")
                 : silt_dataset_open(&ds, ws, name) < 0 ? cli_fail(NULL)
                                                         : cli_as_of(ds, eq + 1, block, NULL);
        silt_dataset_free(ds);
        if (!rc) {
            size_t len = strlen(name) + strlen(block) + 2;
            (*owned)[i] = malloc(len);
            if (!(*owned)[i])
                rc = cli_fail("out of memory");
            else
                snprintf((*owned)[i], len, "%s=%s", name, block);
            items[i] = (*owned)[i];
        }
        free(name);
        if (rc)
            return rc;
    }
    return 0;
}

void cli_strv_free(char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}
