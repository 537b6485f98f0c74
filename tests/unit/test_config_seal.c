/* test_config_seal.c — sealed source states (ingest/config.h): a state value
 * that contains a secret of the Source's config is stored with every secret
 * replaced by a marker naming its config key, and unsealed back to the exact
 * value with the current secrets. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "ingest/config.h"
#include "silt.h"
#include "util/arena.h"
#include "util/error.h"

typedef struct fx {
    char *dir;
    char *silt;
    silt_workspace *ws;
    silt_arena *a;
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    f->dir = tu_mkdtemp();
    assert_int_equal(silt_workspace_init(f->dir), 0);
    assert_int_equal(silt_workspace_open(&f->ws, f->dir), 0);
    f->silt = strdup(silt_workspace_path(f->ws));
    f->a = silt_arena_new();
    setenv("SILT_SECRET_S_TOK", "tOkSeCr3t", 1);
    setenv("SILT_SECRET_S_LONG", "tOkSeCr3t-and-more", 1);
    setenv("SILT_SECRET_S_ODD", "a/b $c", 1);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    unsetenv("SILT_SECRET_S_TOK");
    unsetenv("SILT_SECRET_S_LONG");
    unsetenv("SILT_SECRET_S_ODD");
    silt_workspace_free(f->ws);
    silt_arena_free(f->a);
    tu_rmrf(f->dir);
    free(f->dir);
    free(f->silt);
    free(f);
    return 0;
}

/* config: key -> SecretSet:s#path, or a literal when path starts with '=' */
static silt_config *load(fx *f, size_t n, const char *const *keys, const char *const *paths)
{
    odf_ValueRefs *r = silt_arena_alloc(f->a, sizeof *r);
    memset(r, 0, sizeof *r);
    r->entries.n = n;
    r->entries.present = true;
    r->entries.items = silt_arena_alloc(f->a, n * sizeof(void *));
    for (size_t i = 0; i < n; i++) {
        odf_ValueRefsEntry *e = silt_arena_alloc(f->a, sizeof *e);
        e->key = (char *)keys[i];
        e->value = silt_arena_alloc(f->a, sizeof(odf_ValueRef));
        memset(e->value, 0, sizeof(odf_ValueRef));
        if (paths[i][0] == '=') {
            e->value->type = SILT_CONFIG_LITERAL;
            e->value->path = (char *)paths[i] + 1;
        } else {
            e->value->type = "SecretSet";
            e->value->name = "s";
            e->value->path = (char *)paths[i];
        }
        r->entries.items[i] = e;
    }
    silt_config *c = NULL;
    assert_int_equal(silt_config_load(&c, f->silt, r), 0);
    return c;
}

/* seal `value`, expect `sealed`, unseal it back */
static void roundtrip(const silt_config *c, const char *value, const char *sealed)
{
    char *s = NULL, *u = NULL;
    assert_int_equal(silt_config_seal(c, value, &s), 0);
    assert_string_equal(s, sealed);
    assert_int_equal(silt_config_unseal(c, s, &u), 0);
    assert_string_equal(u, value);
    free(s);
    free(u);
}

static void test_seal_roundtrip(void **state)
{
    fx *f = *state;
    const char *keys[] = {"tok", "long", "odd key", "lit"};
    const char *paths[] = {"tok", "long", "odd", "=tOkSeCr3t-literal"};
    silt_config *c = load(f, 4, keys, paths);
    /* no secret: stored as it is (what kamu and older silt wrote) */
    roundtrip(c, "pop-2020.csv", "pop-2020.csv");
    roundtrip(c, "\"6630fa4b-1f\"", "\"6630fa4b-1f\"");
    roundtrip(c, "", "");
    roundtrip(c, "price $5", "price $5");
    /* a secret in a file name, several times, next to '$' */
    roundtrip(c, "tOkSeCr3t-2024.csv", "silt:sealed:${tok}-2024.csv");
    roundtrip(c, "$tOkSeCr3t$$tOkSeCr3t$", "silt:sealed:$$${tok}$$$$${tok}$$");
    /* the longest secret wins */
    roundtrip(c, "x-tOkSeCr3t-and-more.csv", "silt:sealed:x-${long}.csv");
    /* a key with characters outside [A-Za-z0-9_.-]; the secret's URL-encoded form */
    roundtrip(c, "W/\"a/b $c\"", "silt:sealed:W/\"${odd%20key}\"");
    roundtrip(c, "q=a%2Fb%20%24c", "silt:sealed:q=${odd%20key:url}");
    /* a raw value that looks sealed is sealed too, so it reads back as itself */
    roundtrip(c, "silt:sealed:${tok}", "silt:sealed:silt:sealed:$${tok}");
    /* a literal is not a secret: its value stays (only the secret part goes) */
    roundtrip(c, "tOkSeCr3t-literal", "silt:sealed:${tok}-literal");
    silt_config_free(c);
    /* no config at all (legacy source) */
    roundtrip(NULL, "tOkSeCr3t-2024.csv", "tOkSeCr3t-2024.csv");
    roundtrip(NULL, "silt:sealed:x$", "silt:sealed:silt:sealed:x$$");
}

static void test_unseal_errors(void **state)
{
    fx *f = *state;
    const char *keys[] = {"tok"};
    const char *paths[] = {"tok"};
    silt_config *c = load(f, 1, keys, paths);
    char *u = NULL;
    /* a key the source no longer defines */
    assert_int_equal(silt_config_unseal(c, "silt:sealed:${ftok}-2020.csv", &u), SILT_ENOTFOUND);
    assert_null(u);
    assert_string_equal(silt_error_last(),
                        "source state: the stored state stands for config.ftok, which the source no longer defines "
                        "(restore config.ftok, or start the source afresh under a new name)");
    assert_int_equal(silt_config_unseal(NULL, "silt:sealed:${tok}", &u), SILT_ENOTFOUND);
    /* malformed values */
    assert_int_equal(silt_config_unseal(c, "silt:sealed:a$b", &u), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "source state: malformed sealed value (a lone '$')");
    assert_int_equal(silt_config_unseal(c, "silt:sealed:${tok", &u), SILT_EINVAL);
    assert_int_equal(silt_config_unseal(c, "silt:sealed:${}", &u), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "source state: malformed sealed value (bad marker)");
    assert_int_equal(silt_config_unseal(c, "silt:sealed:${a b}", &u), SILT_EINVAL);
    assert_int_equal(silt_config_unseal(c, "silt:sealed:${%zz}", &u), SILT_EINVAL);
    /* no message carries the secret */
    assert_null(strstr(silt_error_last(), "tOkSeCr3t"));
    /* a rotated secret: the value with the new secret */
    silt_config_free(c);
    setenv("SILT_SECRET_S_TOK", "n3wT0k", 1);
    c = load(f, 1, keys, paths);
    assert_int_equal(silt_config_unseal(c, "silt:sealed:${tok}-2024.csv", &u), 0);
    assert_string_equal(u, "n3wT0k-2024.csv");
    free(u);
    silt_config_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_seal_roundtrip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unseal_errors, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
