/* test_config_template.c — the template expressions of ingest/config.h:
 * `${{ config.NAME }}`, `${{ env.NAME }}`, `||` default chains with quoted
 * texts and numbers, the errors (missing values, invalid alternatives,
 * unterminated expressions), and that values taken from the environment are
 * redacted and sealed like secrets. */
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
    silt_arena *a;
    silt_config *c; /* config: name = "cfgval" (a literal) */
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    f->dir = tu_mkdtemp();
    f->a = silt_arena_new();
    odf_ValueRefs *r = silt_arena_alloc(f->a, sizeof *r);
    memset(r, 0, sizeof *r);
    r->entries.n = 1;
    r->entries.present = true;
    r->entries.items = silt_arena_alloc(f->a, sizeof(void *));
    odf_ValueRefsEntry *e = silt_arena_alloc(f->a, sizeof *e);
    odf_ValueRef *v = silt_arena_alloc(f->a, sizeof *v);
    memset(v, 0, sizeof *v);
    v->type = SILT_CONFIG_LITERAL;
    v->path = "cfgval";
    e->key = "name";
    e->value = v;
    r->entries.items[0] = e;
    assert_int_equal(silt_config_load(&f->c, f->dir, r), 0);
    setenv("SILT_TT_A", "alpha", 1);
    setenv("SILT_TT_EMPTY", "", 1);
    setenv("SILT_TT_SECRET", "s3cr3t/x", 1);
    unsetenv("SILT_TT_UNSET");
    unsetenv("SILT_TT_UNSET2");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    unsetenv("SILT_TT_A");
    unsetenv("SILT_TT_EMPTY");
    unsetenv("SILT_TT_SECRET");
    silt_config_free(f->c);
    silt_arena_free(f->a);
    tu_rmrf(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

/* renders `tmpl` and checks the result */
static void ok_render(silt_config *c, const char *tmpl, const char *want)
{
    char *out = NULL;
    int rc = silt_config_render(c, "url", tmpl, &out);
    if (rc)
        fail_msg("render '%s': %s", tmpl, silt_error_last());
    assert_non_null(out);
    assert_string_equal(out, want);
    free(out);
}

static void bad_render(silt_config *c, const char *tmpl, const char *msg)
{
    char *out = (char *)1;
    assert_int_equal(silt_config_render(c, "url", tmpl, &out), SILT_EINVAL);
    assert_null(out);
    assert_string_equal(silt_error_last(), msg);
}

static void test_values(void **state)
{
    fx *f = *state;
    ok_render(f->c, "plain text, no template", "plain text, no template");
    ok_render(f->c, "", "");
    ok_render(f->c, "${{ config.name }}", "cfgval");
    ok_render(f->c, "${{config.name}}/${{ env.SILT_TT_A }}!", "cfgval/alpha!");
    ok_render(f->c, "x${{\tenv.SILT_TT_A\n}}y", "xalphay");
    ok_render(f->c, "${{ env.SILT_TT_EMPTY || 'dflt' }}", ""); /* set but empty is a value */
    ok_render(NULL, "${{ env.SILT_TT_A }}", "alpha");              /* NULL config: rendered, not remembered */
    ok_render(f->c, "$ {{ not }} ${ {x}} $${{ config.name }}", "$ {{ not }} ${ {x}} $cfgval");
}

static void test_chains(void **state)
{
    fx *f = *state;
    ok_render(f->c, "file://${{ env.SILT_TT_UNSET || env.SILT_TT_A }}/${{ env.SILT_TT_UNSET || 'data.csv' }}",
              "file://alpha/data.csv");
    ok_render(f->c, "${{ env.SILT_TT_UNSET || env.SILT_TT_UNSET2 || 'last' }}", "last");
    ok_render(f->c, "${{ env.SILT_TT_A || 'never' }}", "alpha");
    ok_render(f->c, "${{ config.nope || config.name }}", "cfgval");
    ok_render(f->c, "${{ config.nope || env.SILT_TT_A }}", "alpha");
    ok_render(f->c, "n=${{ env.SILT_TT_UNSET || 123 }}", "n=123");
    ok_render(f->c, "${{ env.SILT_TT_UNSET || -1.5 }}", "-1.5");
    ok_render(f->c, "${{ env.SILT_TT_UNSET || '' }}", "");
    /* quoted texts may hold '}}', '||', '$' and spaces, kept exactly */
    ok_render(f->c, "${{ env.SILT_TT_UNSET || ' a }} || ${b} ' }}.", " a }} || ${b} .");
    ok_render(f->c, "${{ env.SILT_TT_UNSET||'x'}}", "x");
}

static void test_errors(void **state)
{
    fx *f = *state;
    bad_render(f->c, "${{ env.SILT_TT_UNSET }}", "missing values for variable(s): 'env.SILT_TT_UNSET' in url");
    bad_render(f->c, "file://${{ env.data_dir_x1 || env.workspace_dir_x1 }}/x",
               "missing values for variable(s): 'env.data_dir_x1 || env.workspace_dir_x1' in url");
    bad_render(f->c, "${{ config.nope || env.SILT_TT_UNSET }}",
               "missing values for variable(s): 'config.nope || env.SILT_TT_UNSET' in url");
    bad_render(f->c, "${{ config.nope }}", "unknown config key 'nope' in url");
    const char *tail = " in url: expected config.NAME, env.NAME, 'text' or a number";
    const char *bad[][2] = {
        {"${{ }}", ""},
        {"${{ HOME }}", "HOME"},
        {"${{ env. }}", "env."},
        {"${{ env.a.b }}", "env.a.b"},
        {"${{ env.A || }}", ""},
        {"${{ || 'x' }}", ""},
        {"${{ env.A | 'x' }}", "env.A | 'x'"},
        {"${{ env.SILT_TT_UNSET || qwe1 }}", "qwe1"},
        {"${{ 1.2.3 }}", "1.2.3"},
        {"${{ 'a'b'c' }}", "'a'b'c'"},
        {"${{ config.x y }}", "config.x y"},
        {"${{ \"dq\" }}", "\"dq\""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char msg[200];
        snprintf(msg, sizeof msg, "invalid template expression '%s'%s", bad[i][1], tail);
        bad_render(f->c, bad[i][0], msg);
    }
    bad_render(f->c, "a ${{ env.SILT_TT_A ", "unterminated template expression in url");
    bad_render(f->c, "${{ 'open }}", "unterminated template expression in url");
    bad_render(f->c, "${{ config.name }} ${{", "unterminated template expression in url");
    /* the first error wins; nothing is rendered */
    bad_render(f->c, "${{ env.SILT_TT_A }}${{ env.SILT_TT_UNSET }}",
               "missing values for variable(s): 'env.SILT_TT_UNSET' in url");
}

/* A value from the environment is redacted and sealed like a secret. */
static void test_env_is_secret(void **state)
{
    fx *f = *state;
    size_t n0 = silt_config_count(f->c);
    ok_render(f->c, "https://h/?k=${{ env.SILT_TT_SECRET }}&again=${{ env.SILT_TT_SECRET }}",
              "https://h/?k=s3cr3t/x&again=s3cr3t/x");
    assert_int_equal(silt_config_count(f->c), n0 + 1); /* remembered once */
    assert_string_equal(silt_config_key(f->c, n0), "env.SILT_TT_SECRET");
    char *r = silt_config_redact(f->c, "GET https://h/?k=s3cr3t/x failed; s3cr3t%2Fx; cfgval stays");
    assert_string_equal(r, "GET https://h/?k=*** failed; ***; cfgval stays");
    free(r);
    char *sealed = NULL, *back = NULL;
    assert_int_equal(silt_config_seal(f->c, "etag-s3cr3t/x-1", &sealed), 0);
    assert_string_equal(sealed, "silt:sealed:etag-${env.SILT_TT_SECRET}-1");
    assert_int_equal(silt_config_unseal(f->c, sealed, &back), 0);
    assert_string_equal(back, "etag-s3cr3t/x-1");
    free(back);
    /* a config that never rendered the variable cannot unseal its marker */
    silt_config *fresh = NULL;
    assert_int_equal(silt_config_load(&fresh, f->dir, NULL), 0);
    assert_int_equal(silt_config_unseal(fresh, sealed, &back), SILT_ENOTFOUND);
    assert_string_equal(silt_error_last(),
                        "source state: the stored state stands for env.SILT_TT_SECRET, which the source's templates "
                        "no longer use or which is not set (set SILT_TT_SECRET, or start the source afresh under a "
                        "new name)");
    silt_config_free(fresh);
    free(sealed);
    /* an empty value is not a secret to redact */
    ok_render(f->c, "${{ env.SILT_TT_EMPTY }}", "");
    r = silt_config_redact(f->c, "nothing to hide");
    assert_string_equal(r, "nothing to hide");
    free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_chains, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_env_is_secret, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
