/* test_resources.c — Source/Flow resources (parse, validate, store, load)
 * and the config context (secrets, variables, templates, redaction). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "testutil.h"

#include "ingest/config.h"
#include "ingest/resources.h"
#include "silt.h"
#include "util/arena.h"
#include "util/error.h"

typedef struct fx {
    char *dir;
    char *silt;
    silt_workspace *ws;
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    f->dir = tu_mkdtemp();
    assert_int_equal(silt_workspace_init(f->dir), 0);
    assert_int_equal(silt_workspace_open(&f->ws, f->dir), 0);
    f->silt = strdup(silt_workspace_path(f->ws));
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    silt_workspace_free(f->ws);
    tu_rmrf(f->dir);
    free(f->dir);
    free(f->silt);
    free(f);
    unsetenv("SILT_SECRET_BANK_APIKEY");
    return 0;
}

static char *write_in(fx *f, const char *name, const char *text, mode_t mode)
{
    char *p = malloc(strlen(f->dir) + strlen(name) + 16);
    sprintf(p, "%s/%s", f->dir, name);
    assert_int_equal(tu_write_file(p, text, strlen(text)), 0);
    chmod(p, mode);
    return p;
}

/* config with one literal and one secret */
static odf_ValueRefs *refs(silt_arena *a)
{
    odf_ValueRefs *r = silt_arena_alloc(a, sizeof *r);
    r->entries.n = 2;
    r->entries.present = true;
    r->entries.items = silt_arena_alloc(a, 2 * sizeof(void *));
    odf_ValueRefsEntry *e0 = silt_arena_alloc(a, sizeof *e0), *e1 = silt_arena_alloc(a, sizeof *e1);
    e0->key = "apiKey";
    e0->value = silt_arena_alloc(a, sizeof(odf_ValueRef));
    e0->value->type = "SecretSet";
    e0->value->name = "bank";
    e0->value->path = "apiKey";
    e1->key = "start";
    e1->value = silt_arena_alloc(a, sizeof(odf_ValueRef));
    e1->value->type = SILT_CONFIG_LITERAL;
    e1->value->path = "2024-01-01";
    r->entries.items[0] = e0;
    r->entries.items[1] = e1;
    return r;
}

static void test_parse_ref(void **state)
{
    (void)state;
    silt_valueref_kind k;
    const char *n, *p;
    size_t nl, pl;
    assert_int_equal(silt_config_parse_ref("SecretSet:ca.bank#apiKey", &k, &n, &nl, &p, &pl), 0);
    assert_int_equal(k, SILT_VREF_SECRET);
    assert_int_equal(nl, 7);
    assert_memory_equal(n, "ca.bank", 7);
    assert_string_equal(p, "apiKey");
    assert_int_equal(silt_config_parse_ref("https://opendatafabric.org/schemas/config/v1alpha1/VariableSet:v#a.b",
                                           &k, &n, &nl, &p, &pl),
                     0);
    assert_int_equal(k, SILT_VREF_VARIABLE);
    assert_string_equal(p, "a.b");
    assert_int_equal(silt_config_parse_ref("http://example.com:8080/x", &k, &n, &nl, &p, &pl), 0);
    assert_int_equal(k, SILT_VREF_LITERAL);
    assert_int_equal(silt_config_parse_ref("2024-01-01", &k, &n, &nl, &p, &pl), 0);
    assert_int_equal(k, SILT_VREF_LITERAL);
    assert_int_equal(silt_config_parse_ref("SecretSet:x", &k, &n, &nl, &p, &pl), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "expected SecretSet:NAME#key");
}

static void test_config_secrets(void **state)
{
    fx *f = *state;
    silt_arena *a = silt_arena_new();
    silt_config *c = NULL;
    /* no secrets anywhere */
    assert_int_equal(silt_config_load(&c, f->silt, refs(a)), SILT_ENOTFOUND);
    char msg[512];
    snprintf(msg, sizeof msg,
             "config.apiKey: secret 'bank#apiKey' not found: set SILT_SECRET_BANK_APIKEY or add it to "
             "%s/secrets.yaml",
             f->silt);
    assert_string_equal(silt_error_last(), msg);
    /* file with a too open mode */
    char *sf = write_in(f, ".silt/secrets.yaml", "bank:\n  apiKey: s3cr3t/+key\n", 0644);
    assert_int_equal(silt_config_load(&c, f->silt, refs(a)), SILT_EINVAL);
    snprintf(msg, sizeof msg,
             "%s: mode 0644 is too open: a secrets file must not be accessible by group or others (chmod 600)",
             sf);
    assert_string_equal(silt_error_last(), msg);
    chmod(sf, 0600);
    assert_int_equal(silt_config_load(&c, f->silt, refs(a)), 0);
    assert_int_equal(silt_config_count(c), 2);
    assert_string_equal(silt_config_key(c, 1), "start");
    char *out = NULL;
    assert_int_equal(silt_config_render(c, "url", "https://h/x?k=${{config.apiKey}}&s=${{ config.start }}", &out), 0);
    assert_string_equal(out, "https://h/x?k=s3cr3t/+key&s=2024-01-01");
    /* redaction: plain and URL-encoded forms */
    char *red = silt_config_redact(c, "GET https://h/x?k=s3cr3t/+key failed; s3cr3t%2F%2Bkey again");
    assert_string_equal(red, "GET https://h/x?k=*** failed; *** again");
    free(red);
    /* a failure after rendering: the error carries the rendered URL ... */
    silt_err(SILT_EIO, "GET %s: HTTP 500", out);
    assert_int_equal(silt_config_redact_error(c, SILT_EIO), SILT_EIO);
    assert_string_equal(silt_error_last(), "GET https://h/x?k=***&s=2024-01-01: HTTP 500");
    assert_null(strstr(silt_error_last(), "s3cr3t"));
    free(out);
    /* template errors never carry values */
    assert_int_equal(silt_config_render(c, "url", "a${{ config.apiKey }}${{ config.nope }}", &out), SILT_EINVAL);
    assert_null(out);
    assert_string_equal(silt_error_last(), "unknown config key 'nope' in url");
    assert_int_equal(silt_config_render(c, "headers[0].value", "x ${{ HOME }}", &out), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "invalid template expression 'HOME' in headers[0].value: expected "
                                           "config.NAME, env.NAME, 'text' or a number");
    assert_int_equal(silt_config_render(c, "command[1]", "x ${{ config.apiKey", &out), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "unterminated template expression in command[1]");
    silt_config_free(c);
    /* the environment overrides the file */
    setenv("SILT_SECRET_BANK_APIKEY", "from-env", 1);
    assert_int_equal(silt_config_load(&c, f->silt, refs(a)), 0);
    assert_int_equal(silt_config_render(c, "url", "${{ config.apiKey }}", &out), 0);
    assert_string_equal(out, "from-env");
    free(out);
    red = silt_config_redact(c, "from-env s3cr3t");
    assert_string_equal(red, "*** s3cr3t");
    free(red);
    silt_config_free(c);
    /* NULL config: no keys */
    assert_int_equal(silt_config_render(NULL, "url", "plain", &out), 0);
    assert_string_equal(out, "plain");
    free(out);
    free(sf);
    silt_arena_free(a);
}

static const char *MIXED =
    "kind: DatasetSnapshot\n"
    "version: 1\n"
    "content:\n"
    "  name: bank\n"
    "  kind: Root\n"
    "  metadata:\n"
    "    - kind: SetInfo\n"
    "      description: rates\n"
    "---\n"
    "$schema: https://opendatafabric.org/schemas/sources/v1alpha1/Source\n"
    "headers:\n"
    "  name: bank-src\n"
    "spec:\n"
    "  config:\n"
    "    apiKey: SecretSet:bank#apiKey\n"
    "    v: {type: VariableSet, name: vars, path: start}\n"
    "  ingress:\n"
    "    kind: Url\n"
    "    url: https://example.com/rates.csv?key=${{ config.apiKey }}\n"
    "  read:\n"
    "    kind: Csv\n"
    "    header: true\n"
    "  merge:\n"
    "    kind: Snapshot\n"
    "    primaryKey: [date]\n"
    "---\n"
    "$schema: https://opendatafabric.org/schemas/flow/v1alpha1/Flow\n"
    "headers:\n"
    "  name: bank-flow\n"
    "spec:\n"
    "  target: Dataset:bank\n"
    "  triggers:\n"
    "    - kind: Schedule\n"
    "      cron: '*/30 * * * *'\n"
    "  tasks:\n"
    "    - kind: Ingest\n"
    "      source: Source:bank-src\n"
    "      targetRecordsPerSlice: 10000\n";

static const char *SRC_CANON =
    "$schema: https://opendatafabric.org/schemas/source/v1alpha1/Source\n"
    "headers:\n"
    "  name: bank-src\n"
    "spec:\n"
    "  config:\n"
    "    apiKey: SecretSet:bank#apiKey\n"
    "    v: VariableSet:vars#start\n"
    "  ingress:\n"
    "    kind: Url\n"
    "    url: https://example.com/rates.csv?key=${{ config.apiKey }}\n"
    "  read:\n"
    "    kind: Csv\n"
    "    header: true\n"
    "  merge:\n"
    "    kind: Snapshot\n"
    "    primaryKey:\n"
    "    - date\n";

static const char *FLOW_CANON = "$schema: https://opendatafabric.org/schemas/flow/v1alpha1/Flow\n"
                                "headers:\n"
                                "  name: bank-flow\n"
                                "spec:\n"
                                "  target: Dataset:bank\n"
                                "  triggers:\n"
                                "  - kind: Schedule\n"
                                "    cron: \"*/30 * * * *\"\n"
                                "  tasks:\n"
                                "  - kind: Ingest\n"
                                "    source: Source:bank-src\n"
                                "    targetRecordsPerSlice: 10000\n";

static void test_add_and_load(void **state)
{
    fx *f = *state;
    char *p = write_in(f, "bank.yaml", MIXED, 0644);
    char **names = NULL;
    assert_int_equal(silt_dataset_add_manifest(&names, f->ws, p), 0);
    assert_string_equal(names[0], "bank");
    assert_null(names[1]);
    silt_strv_free(names);
    silt_resource_change *ch = NULL;
    size_t nch = 0;
    assert_int_equal(silt_resources_last_added(&ch, &nch), 0);
    assert_int_equal(nch, 2);
    assert_string_equal(ch[0].type, "source");
    assert_string_equal(ch[0].name, "bank-src");
    assert_false(ch[0].updated);
    assert_string_equal(ch[1].type, "flow");
    silt_resource_changes_free(ch, nch);

    char path[512];
    snprintf(path, sizeof path, "%s/resources/sources/bank-src.yaml", f->silt);
    char *text = tu_read_file(path, NULL);
    assert_string_equal(text, SRC_CANON);
    free(text);
    snprintf(path, sizeof path, "%s/resources/flows/bank-flow.yaml", f->silt);
    text = tu_read_file(path, NULL);
    assert_string_equal(text, FLOW_CANON);
    free(text);

    silt_arena *a = silt_arena_new();
    odf_SourceSpec *s = NULL;
    assert_int_equal(silt_res_source_load(&s, a, f->ws, "bank-src"), 0);
    assert_int_equal(s->config->entries.n, 2);
    odf_ValueRefsEntry *e = s->config->entries.items[0];
    assert_string_equal(e->key, "apiKey");
    assert_string_equal(e->value->type, "SecretSet");
    assert_string_equal(e->value->name, "bank");
    assert_string_equal(e->value->path, "apiKey");
    assert_string_equal(odf_udesc_Ingress.kinds[s->ingress.type - 1], "Url");
    assert_string_equal(((odf_IngressUrl *)s->ingress.value)->url,
                        "https://example.com/rates.csv?key=${{ config.apiKey }}");
    silt_ingest_plan plan;
    assert_int_equal(silt_res_ingest_plan(&plan, a, f->ws, "bank"), 0);
    assert_string_equal(plan.flow, "bank-flow");
    assert_string_equal(plan.source_name, "bank-src");
    assert_int_equal(plan.target_records_per_slice, 10000);
    assert_ptr_not_equal(plan.source, NULL);
    assert_int_equal(silt_res_ingest_plan(&plan, a, f->ws, "other"), SILT_ENOTFOUND);
    assert_string_equal(silt_error_last(), "dataset 'other' has no flow with an Ingest task");
    assert_int_equal(silt_res_source_load(&s, a, f->ws, "nope"), SILT_ENOTFOUND);
    assert_string_equal(silt_error_last(), "source 'nope' not found");

    /* listings */
    silt_source_info *si = NULL;
    size_t ns = 0;
    assert_int_equal(silt_sources_list(&si, &ns, f->ws), 0);
    assert_int_equal(ns, 1);
    assert_string_equal(si[0].merge_kind, "Snapshot");
    assert_string_equal(si[0].ingress_kind, "Url");
    silt_sources_free(si, ns);
    silt_flow_info *fi = NULL;
    size_t nf = 0;
    assert_int_equal(silt_flows_list(&fi, &nf, f->ws, 1714557720 /* 2024-05-01T10:02:00Z */), 0);
    assert_int_equal(nf, 1);
    assert_int_equal(fi[0].next_run, 1714559400); /* 10:30 */
    assert_string_equal(fi[0].schedules[0], "*/30 * * * *");
    assert_string_equal(fi[0].source, "bank-src");
    silt_flows_free(fi, nf);

    /* re-adding a resource replaces it */
    char *p2 = write_in(f, "flow.yaml",
                        "$schema: https://opendatafabric.org/schemas/flow/v1alpha1/Flow.json\n"
                        "headers: {name: bank-flow}\n"
                        "spec:\n"
                        "  target: {type: Dataset, name: bank}\n"
                        "  triggers: [{kind: Schedule, cron: '@daily'}]\n"
                        "  tasks: [{kind: Ingest, source: bank-src, params: {targetSliceRecords: 5}}]\n",
                        0644);
    assert_int_equal(silt_dataset_add_manifest(NULL, f->ws, p2), 0);
    assert_int_equal(silt_resources_last_added(&ch, &nch), 0);
    assert_int_equal(nch, 1);
    assert_true(ch[0].updated);
    silt_resource_changes_free(ch, nch);
    silt_flow_def *fd = NULL;
    assert_int_equal(silt_res_flow_load(&fd, a, f->ws, "bank-flow"), 0);
    assert_string_equal(fd->crons[0], "@daily");
    assert_int_equal(fd->tasks[0].target_records_per_slice, 5);
    silt_arena_free(a);
    free(p);
    free(p2);
}

static void expect_add_error(fx *f, const char *text, const char *msg_after_path)
{
    char *p = write_in(f, "bad.yaml", text, 0644);
    assert_int_equal(silt_dataset_add_manifest(NULL, f->ws, p), SILT_EINVAL);
    char msg[1024];
    snprintf(msg, sizeof msg, "%s:%s", p, msg_after_path);
    if (strcmp(silt_error_last(), msg) != 0)
        fail_msg("expected\n  %s\ngot\n  %s", msg, silt_error_last());
    free(p);
}

static void test_errors(void **state)
{
    fx *f = *state;
    expect_add_error(f,
                     "$schema: https://opendatafabric.org/schemas/source/v1alpha1/Source\n"
                     "headers: {name: s}\n"
                     "spec:\n"
                     "  read: {kind: Csv}\n"
                     "  merge: {kind: Append}\n"
                     "  prepare:\n"
                     "    - kind: Pipe\n"
                     "      cmd: [sed]\n",
                     "8: spec.prepare[0].cmd: unknown field 'cmd' in PrepStepPipe");
    expect_add_error(f,
                     "$schema: https://opendatafabric.org/schemas/flow/v1alpha1/Flow\n"
                     "headers: {name: fl}\n"
                     "spec:\n"
                     "  target: Dataset:nothere\n"
                     "  triggers: [{kind: Schedule, cron: '0 0 * * *'}]\n"
                     "  tasks: []\n",
                     "4: spec.target: dataset 'nothere' not found (add it first or in the same file)");
    expect_add_error(f,
                     "$schema: https://opendatafabric.org/schemas/flow/v1alpha1/Flow\n"
                     "headers: {name: fl}\n"
                     "spec:\n"
                     "  target: Dataset:x\n"
                     "  triggers:\n"
                     "  - kind: Schedule\n"
                     "    cron: '0 0 * * 8'\n"
                     "  tasks: []\n",
                     "7: spec.triggers[0].cron: invalid cron expression '0 0 * * 8': day-of-week: value 8 "
                     "out of range 0-7");
    expect_add_error(f,
                     "$schema: https://opendatafabric.org/schemas/flow/v1alpha1/Flow\n"
                     "headers: {name: fl}\n"
                     "spec:\n"
                     "  target: Dataset:x\n"
                     "  triggers: [{kind: Event, events: {}}]\n"
                     "  tasks: []\n",
                     "5: spec.triggers[0].kind: trigger kind 'Event' is not supported (silt runs Schedule "
                     "triggers)");
    expect_add_error(f,
                     "$schema: https://opendatafabric.org/schemas/source/v1alpha1/Source\n"
                     "headers: {name: '-bad'}\n"
                     "spec: {read: {kind: Csv}}\n",
                     "2: headers.name: invalid resource name '-bad': use [A-Za-z0-9._-], 1..100 chars, "
                     "not starting with '.' or '-'");
    expect_add_error(f,
                     "$schema: https://opendatafabric.org/schemas/source/v1alpha1/Source\n"
                     "headers: {name: s, labels: {a: b}}\n"
                     "spec: {read: {kind: Csv}}\n",
                     "2: headers.labels: unknown or unsupported field (expected name)");
    expect_add_error(f,
                     "$schema: https://opendatafabric.org/schemas/source/v1alpha1/Source\n"
                     "headers: {name: s}\n"
                     "spec: {read: {kind: Csv}}\n"
                     "---\n"
                     "$schema: https://opendatafabric.org/schemas/source/v1alpha1/Source\n"
                     "headers: {name: s}\n"
                     "spec: {read: {kind: Json}}\n",
                     "6: headers.name: source 's' is defined twice");
    /* nothing was stored by the failures */
    silt_source_info *si = NULL;
    size_t ns = 7;
    assert_int_equal(silt_sources_list(&si, &ns, f->ws), 0);
    assert_int_equal(ns, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_ref),
        cmocka_unit_test_setup_teardown(test_config_secrets, setup, teardown),
        cmocka_unit_test_setup_teardown(test_add_and_load, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
