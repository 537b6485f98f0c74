/* fuzz_template.c — libFuzzer target for the template expressions of
 * ingest/config.h (silt_config_render).
 *
 * The input is the template text (up to the first NUL, if any). The config
 * holds one literal (config.k = "kval"); the environment has FZ_A = "aval",
 * FZ_EMPTY = "" and FZ_SECRET = "fz-s3cr3t/value". Invariants checked: no
 * crash; the result is 0 with a string, or SILT_EINVAL / SILT_ENOMEM with
 * no string and a one-line message that holds no value of the config or
 * the environment that the input does not hold itself; after rendering,
 * the redacted output holds none of the environment values the template
 * used (each is remembered as a secret entry env.NAME). Each input gets a fresh config.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/config.h"
#include "util/error.h"

static odf_ValueRefs g_refs;
static odf_ValueRefsEntry g_entry;
static odf_ValueRef g_ref;
static void *g_items[1];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    setenv("FZ_A", "aval", 1);
    setenv("FZ_EMPTY", "", 1);
    setenv("FZ_SECRET", "fz-s3cr3t/value", 1);
    g_ref.type = SILT_CONFIG_LITERAL;
    g_ref.path = "kval";
    g_entry.key = "k";
    g_entry.value = &g_ref;
    g_items[0] = &g_entry;
    g_refs.entries.items = g_items;
    g_refs.entries.n = 1;
    g_refs.entries.present = true;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *tmpl = malloc(size + 1);
    if (!tmpl)
        return 0;
    memcpy(tmpl, data, size);
    tmpl[size] = '\0';
    silt_config *c = NULL;
    if (silt_config_load(&c, "/nonexistent-silt-dir", &g_refs) != 0)
        abort();
    char *out = NULL;
    int rc = silt_config_render(c, "f", tmpl, &out);
    if (rc == 0) {
        if (!out)
            abort();
        char *red = silt_config_redact(c, out);
        for (size_t i = 0; red && i < silt_config_count(c); i++) {
            const char *key = silt_config_key(c, i);
            const char *v = strncmp(key, "env.", 4) == 0 ? getenv(key + 4) : NULL;
            if (v && *v && strstr(red, v))
                abort(); /* an environment value survived redaction */
        }
        free(red);
        free(out);
    } else {
        const char *msg = silt_error_last();
        if (out || (rc != SILT_EINVAL && rc != SILT_ENOMEM) || !msg || !*msg || strchr(msg, '\n'))
            abort();
        /* messages quote template text only: a value appears only if the input itself holds it */
        if (strstr(msg, "fz-s3cr3t") && !strstr(tmpl, "fz-s3cr3t"))
            abort();
    }
    silt_config_free(c);
    free(tmpl);
    return 0;
}
