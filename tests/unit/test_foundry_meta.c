/* test_foundry_meta.c — the library additions for the Foundry datasets API
 * (src/files/foundry_meta.c, and in files.c / files_schema.c / txn.c /
 * branches.c): branch name escapes, the parent folder record, schemas from
 * memory and in Foundry form, every transaction of a dataset, empty
 * branches, opening a view entry's object. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "silt.h"
#include "testutil.h"

typedef struct fx {
    char *dir;
    silt_workspace *ws;
    silt_dataset *ds;
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    f->dir = tu_mkdtemp();
    assert_int_equal(silt_workspace_init(f->dir), 0);
    assert_int_equal(silt_workspace_open(&f->ws, f->dir), 0);
    assert_int_equal(silt_files_create(&f->ds, f->ws, "f1"), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    silt_dataset_free(f->ds);
    silt_workspace_free(f->ws);
    tu_rmrf(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

static void roundtrip(const char *name, const char *stored)
{
    char *s = NULL, *d = NULL;
    assert_int_equal(silt_branch_name_encode(&s, name), 0);
    assert_string_equal(s, stored);
    assert_int_equal(silt_branch_name_decode(&d, s), 0);
    assert_string_equal(d, name);
    free(s);
    free(d);
}

static void test_branch_names(void **state)
{
    (void)state;
    roundtrip("master", "master");
    roundtrip("my_branch", "my_branch");
    roundtrip("dev/feature x", "dev_2Ffeature_20x");
    roundtrip("a+b", "a_2Bb");
    roundtrip(".hidden", "_2Ehidden");
    roundtrip("-x", "_2Dx");
    roundtrip("x.y-z", "x.y-z");
    roundtrip("_AB", "_5FAB");    /* a '_' before two hex digits is escaped */
    roundtrip("_Ab", "_Ab");      /* … not before anything else */
    roundtrip("_/", "__2F");
    roundtrip("é", "_C3_A9");
    char *s = NULL;
    assert_int_equal(silt_branch_name_encode(&s, ""), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "invalid branch name '': a branch name cannot be empty");
    assert_int_equal(silt_branch_name_encode(&s, "a\tb"), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "invalid branch name: control character at byte 1");
    char long_name[60];
    memset(long_name, '/', 40);
    long_name[40] = '\0';
    assert_int_equal(silt_branch_name_encode(&s, long_name), SILT_EINVAL);
    assert_non_null(strstr(silt_error_last(), "too long (stored as 120 chars, at most 100)"));
    assert_null(s);
    /* decode is the identity on names without _XX, and never yields NUL */
    char *d = NULL;
    assert_int_equal(silt_branch_name_decode(&d, "fix_1"), 0);
    assert_string_equal(d, "fix_1");
    free(d);
    assert_int_equal(silt_branch_name_decode(&d, "a_00b"), 0);
    assert_string_equal(d, "a_00b");
    free(d);
}

static void test_folder(void **state)
{
    fx *f = *state;
    char *v = (char *)"x";
    assert_int_equal(silt_dataset_folder_get(&v, f->ds), 0);
    assert_null(v);
    assert_int_equal(silt_dataset_folder_set(f->ds, "ri.compass.main.folder.c410f510-2937"), 0);
    assert_int_equal(silt_dataset_folder_get(&v, f->ds), 0);
    assert_string_equal(v, "ri.compass.main.folder.c410f510-2937");
    free(v);
    assert_int_equal(silt_dataset_folder_set(f->ds, "not a rid"), SILT_EINVAL);
    assert_non_null(strstr(silt_error_last(), "invalid folder RID 'not a rid'"));
    assert_int_equal(silt_dataset_folder_get(&v, f->ds), 0);
    assert_string_equal(v, "ri.compass.main.folder.c410f510-2937"); /* unchanged */
    free(v);
}

static void test_schema_text_and_foundry(void **state)
{
    fx *f = *state;
    char *out = NULL;
    assert_int_equal(silt_files_schema_foundry(&out, f->ds, NULL), SILT_ENOTFOUND);
    assert_string_equal(silt_error_last(), "dataset 'f1' has no tabular schema");
    const char *doc = "{\"format\":\"csv\",\"fieldSchemaList\":["
                      "{\"name\":\"a\",\"type\":\"INTEGER\",\"nullable\":true},"
                      "{\"name\":\"p\",\"type\":\"DECIMAL\",\"precision\":10,\"scale\":2,\"nullable\":false},"
                      "{\"name\":\"l\",\"type\":\"ARRAY\",\"arraySubtype\":{\"type\":\"STRING\",\"nullable\":false}}]}";
    assert_int_equal(silt_files_schema_set_text(f->ds, doc, strlen(doc), "body"), 0);
    assert_int_equal(silt_files_schema_foundry(&out, f->ds, NULL), 0);
    const char *block = strstr(out, "\"block\":\"f1620");
    assert_non_null(block);
    char want[1024];
    snprintf(want, sizeof want,
             "{\"block\":\"%.69s\",\"fieldSchemaList\":[{\"name\":\"a\",\"nullable\":true,\"type\":\"INTEGER\"},"
             "{\"name\":\"p\",\"nullable\":false,\"precision\":10,\"scale\":2,\"type\":\"DECIMAL\"},"
             "{\"arraySubtype\":{\"nullable\":false,\"type\":\"STRING\"},\"name\":\"l\",\"nullable\":true,\"type\":"
             "\"ARRAY\"}],\"format\":\"csv\"}",
             block + 9);
    assert_string_equal(out, want);
    free(out);
    assert_int_equal(silt_files_schema_get(&out, f->ds, NULL, SILT_SCHEMA_TEXT), 0);
    assert_string_equal(out, "a: Option<Int32>\np: Decimal(10, 2)\nl: Option<List<String>>\nformat: csv\n");
    free(out);
    const char *bad = "{\"fieldSchemaList\":[{\"name\":\"x\",\"type\":\"NOPE\"}]}";
    assert_int_equal(silt_files_schema_set_text(f->ds, bad, strlen(bad), "putSchema body"), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "putSchema body: fields[0] 'x': unknown type 'NOPE'");
    assert_int_equal(silt_files_schema_set_text(f->ds, "[1", 2, "body"), SILT_EINVAL);
    assert_non_null(strstr(silt_error_last(), "body"));
}

static void test_txns_branches_objects(void **state)
{
    fx *f = *state;
    char path[4096];
    snprintf(path, sizeof path, "%s/in.csv", f->dir);
    assert_int_equal(tu_write_file(path, "a\n1\n", 4), 0);
    char *r1 = NULL, *r2 = NULL;
    assert_int_equal(silt_txn_start(&r1, f->ds, SILT_TXN_SNAPSHOT), 0);
    assert_int_equal(silt_txn_put(f->ds, r1, path, "x/in.csv"), 0);
    assert_int_equal(silt_txn_commit(f->ds, r1, NULL), 0);
    assert_int_equal(silt_branch_create_empty(f->ds, "e"), 0);
    silt_dataset *e = NULL;
    assert_int_equal(silt_dataset_open(&e, f->ws, "f1@e"), 0);
    silt_view *v = NULL;
    assert_int_equal(silt_files_view(&v, e, NULL, NULL, NULL), 0);
    assert_int_equal(silt_view_count(v), 0);
    silt_view_free(v);
    assert_int_equal(silt_txn_start(&r2, e, SILT_TXN_UPDATE), 0);
    assert_int_equal(silt_txn_abort(e, r2), 0);
    silt_txn_info *l = NULL;
    size_t n = 0;
    assert_int_equal(silt_txn_list(&l, &n, e), 0);
    assert_int_equal(n, 1); /* only its own: it inherited nothing */
    free(l);
    assert_int_equal(silt_txn_list_all(&l, &n, f->ds), 0);
    assert_int_equal(n, 2);
    assert_string_equal(l[0].rid, r1);
    assert_string_equal(l[1].rid, r2);
    assert_string_equal(l[1].branch, "e");
    free(l);
    assert_int_equal(silt_files_view(&v, f->ds, NULL, NULL, NULL), 0);
    const silt_file_entry *fe = silt_view_find(v, "x/in.csv");
    assert_non_null(fe);
    int fd = -1;
    uint64_t size = 0;
    assert_int_equal(silt_files_open(&fd, &size, f->ds, fe), 0);
    char buf[8] = {0};
    assert_int_equal(read(fd, buf, sizeof buf), 4);
    assert_string_equal(buf, "a\n1\n");
    assert_int_equal(size, 4);
    close(fd);
    /* a truncated object is refused by size */
    silt_file_entry copy = *fe;
    copy.size = 5;
    assert_int_equal(silt_files_open(&fd, &size, f->ds, &copy), SILT_ECORRUPT);
    assert_non_null(strstr(silt_error_last(), "has 4 bytes, the view says 5"));
    assert_int_equal(fd, -1);
    silt_view_free(v);
    silt_dataset_free(e);
    assert_int_equal(silt_branch_create_empty(f->ds, "e"), SILT_EEXISTS);
    free(r1);
    free(r2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_branch_names),
        cmocka_unit_test_setup_teardown(test_folder, setup, teardown),
        cmocka_unit_test_setup_teardown(test_schema_text_and_foundry, setup, teardown),
        cmocka_unit_test_setup_teardown(test_txns_branches_objects, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
