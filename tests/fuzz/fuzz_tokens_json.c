/* fuzz_tokens_json.c — libFuzzer target for the tokens file parser
 * (src/ops/tokens.c: silt_tokfile_parse, silt_tokfile_format).
 *
 * `.silt/tokens.json` may be edited by hand, so any bytes must be either
 * refused with an error or parsed into valid entries. Whatever parses must
 * format, the formatted text must parse again, and formatting that must give
 * the same bytes (round-trip stability); every parsed entry satisfies the
 * rules silt_token_create enforces (name, patterns, scope).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ops/tokens.h"
#include "util/buf.h"

static void check_entries(const silt_tokfile *f)
{
    for (size_t i = 0; i < f->n; i++) {
        const silt_tok *t = &f->v[i];
        if (!silt_token_name_ok(t->name))
            __builtin_trap();
        if (t->scope < SILT_SCOPE_READ || t->scope > SILT_SCOPE_ADMIN)
            __builtin_trap();
        for (size_t j = 0; j < t->ndatasets; j++)
            if (!silt_token_pattern_ok(t->datasets[j]))
                __builtin_trap();
        for (size_t j = 0; j < i; j++)
            if (strcmp(f->v[j].name, t->name) == 0)
                __builtin_trap();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    silt_tokfile f;
    if (silt_tokfile_parse(&f, (const char *)data, size, "fuzz.json") != 0)
        return 0;
    check_entries(&f);
    silt_buf a = SILT_BUF_INIT, b = SILT_BUF_INIT;
    if (silt_tokfile_format(&a, &f) == 0) {
        silt_tokfile g;
        if (silt_tokfile_parse(&g, a.data, a.len, "again.json") != 0)
            __builtin_trap(); /* our own output must read back */
        if (g.n != f.n)
            __builtin_trap();
        if (silt_tokfile_format(&b, &g) == 0 && (a.len != b.len || memcmp(a.data, b.data, a.len) != 0))
            __builtin_trap();
        silt_tokfile_free(&g);
    }
    silt_buf_free(&a);
    silt_buf_free(&b);
    silt_tokfile_free(&f);
    return 0;
}
