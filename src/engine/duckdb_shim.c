/* duckdb_shim.c — loads libduckdb on first use and resolves the functions
 * the generated wrappers call (duckdb_shim.h).
 *
 * Invariants:
 *  - `loaded` is set, under the lock, only after every slot of
 *    silt_duckdb_syms holds a resolved address; a failed load leaves every
 *    slot NULL and nothing mapped, so the next engine open tries again;
 *  - the library is opened RTLD_GLOBAL, as when it was linked at load time,
 *    and never closed once loaded (its handles live as long as the process).
 */
#include "engine/duckdb_shim.h"
#include "util/error.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int loaded;

/* The first line of dlerror()'s message (or a stand-in). */
static const char *dl_message(int *len)
{
    const char *m = dlerror();
    if (!m)
        m = "unknown error";
    *len = (int)strcspn(m, "\n");
    return m;
}

/* Where the dynamic loader found the library `h`. */
static const char *library_path(void *h)
{
    struct link_map *lm = NULL;
    if (dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0 || !lm || !lm->l_name || !*lm->l_name)
        return SILT_DUCKDB_LIBRARY;
    return lm->l_name;
}

static void clear_slots(void)
{
    for (const silt_duckdb_sym *s = silt_duckdb_syms; s->name; s++)
        *s->slot = NULL;
}

static int resolve(void *h)
{
    for (const silt_duckdb_sym *s = silt_duckdb_syms; s->name; s++) {
        dlerror();
        *s->slot = dlsym(h, s->name);
        if (!*s->slot) {
            int rc = silt_err(SILT_EUNSUPPORTED,
                              "the DuckDB library %s has no function %s: it is not the DuckDB version silt was "
                              "built with (install the libduckdb.so of silt's build beside it)",
                              library_path(h), s->name);
            clear_slots();
            return rc;
        }
    }
    return 0;
}

static int load_locked(void)
{
    dlerror();
    void *h = dlopen(SILT_DUCKDB_LIBRARY, RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        int n;
        const char *m = dl_message(&n);
        return silt_err(SILT_EIO,
                        "cannot load the DuckDB library " SILT_DUCKDB_LIBRARY ": %.*s (silt needs it for "
                        "queries: install it in the lib directory beside silt's bin, or name its "
                        "directory in LD_LIBRARY_PATH)",
                        n, m);
    }
    int rc = resolve(h);
    if (rc) {
        dlclose(h);
        return rc;
    }
    loaded = 1;
    return 0;
}

int silt_duckdb_load(void)
{
    pthread_mutex_lock(&lock);
    int rc = loaded ? 0 : load_locked();
    pthread_mutex_unlock(&lock);
    return rc;
}
