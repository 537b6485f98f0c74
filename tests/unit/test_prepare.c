/* test_prepare.c — prepare steps: Decompress (gzip, zip with subPath globs,
 * missing / ambiguous entries, corrupt input), Pipe (sed, failures,
 * timeout, stderr warnings) and step chains. */
#include "testutil.h"

#include "ingest/prepare.h"
#include "util/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char CSV[] = "id,name\n1,a\n2,b\n";

static char *tmpfile_in(const char *dir, const char *name)
{
    char *p = malloc(strlen(dir) + strlen(name) + 2);
    assert_non_null(p);
    sprintf(p, "%s/%s", dir, name);
    return p;
}

static void expect_file(const char *path, const char *content)
{
    size_t len;
    char *got = tu_read_file(path, &len);
    assert_non_null(got);
    assert_string_equal(got, content);
    assert_int_equal(len, strlen(content));
    free(got);
}

static void test_gzip(void **state)
{
    (void)state;
    char *d = tu_mkdtemp(), *out = tmpfile_in(d, "out");
    char in[1024];
    snprintf(in, sizeof in, "%s", tu_fixture("pull/data.csv.gz"));
    assert_int_equal(silt_prepare_decompress(in, "data.csv.gz", ODF_CompressionFormat_Gzip, NULL, out), 0);
    expect_file(out, CSV);
    /* not gzip at all */
    snprintf(in, sizeof in, "%s", tu_fixture("pull/not_gzip.gz"));
    assert_int_equal(silt_prepare_decompress(in, "not_gzip.gz", ODF_CompressionFormat_Gzip, NULL, out),
                     SILT_EINVAL);
    assert_string_equal(silt_error_last(), "archive 'not_gzip.gz': not gzip data");
    free(out);
    tu_rmrf(d);
    free(d);
}

static void test_zip_subpath(void **state)
{
    (void)state;
    char *d = tu_mkdtemp(), *out = tmpfile_in(d, "out");
    char in[1024];
    snprintf(in, sizeof in, "%s", tu_fixture("pull/multi.zip"));
    /* exact path, glob across '/', glob with a character class */
    assert_int_equal(silt_prepare_decompress(in, "multi.zip", ODF_CompressionFormat_Zip, "data/2020-01-01.csv", out),
                     0);
    expect_file(out, CSV);
    assert_int_equal(silt_prepare_decompress(in, "multi.zip", ODF_CompressionFormat_Zip, "*.csv", out), 0);
    expect_file(out, CSV);
    assert_int_equal(silt_prepare_decompress(in, "multi.zip", ODF_CompressionFormat_Zip, "*.txt", out), 0);
    expect_file(out, "hello\n");
    assert_int_equal(silt_prepare_decompress(in, "multi.zip", ODF_CompressionFormat_Zip, "data/[0-9]*-01.csv", out),
                     0);
    expect_file(out, CSV);
    /* missing entry lists the entries */
    assert_int_equal(silt_prepare_decompress(in, "multi.zip", ODF_CompressionFormat_Zip, "*.parquet", out),
                     SILT_EINVAL);
    assert_string_equal(silt_error_last(), "archive 'multi.zip' has no entry matching '*.parquet' (entries: "
                                           "readme.txt, data/2020-01-01.csv, data/extra.json)");
    /* ambiguous */
    assert_int_equal(silt_prepare_decompress(in, "multi.zip", ODF_CompressionFormat_Zip, "data/*", out),
                     SILT_EINVAL);
    assert_string_equal(silt_error_last(),
                        "archive 'multi.zip' has several entries matching 'data/*': data/2020-01-01.csv, "
                        "data/extra.json");
    /* several files and no subPath */
    assert_int_equal(silt_prepare_decompress(in, "multi.zip", ODF_CompressionFormat_Zip, NULL, out), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "archive 'multi.zip' holds several files (readme.txt, "
                                           "data/2020-01-01.csv, data/extra.json); choose one with subPath");
    /* a single-file archive needs no subPath */
    snprintf(in, sizeof in, "%s", tu_fixture("pull/single.zip"));
    assert_int_equal(silt_prepare_decompress(in, NULL, ODF_CompressionFormat_Zip, NULL, out), 0);
    expect_file(out, CSV);
    /* a file that is not a zip */
    snprintf(in, sizeof in, "%s", tu_fixture("pull/data.csv"));
    assert_int_equal(silt_prepare_decompress(in, "data.csv", ODF_CompressionFormat_Zip, NULL, out), SILT_EINVAL);
    assert_true(strncmp(silt_error_last(), "archive 'data.csv': ", 20) == 0);
    free(out);
    tu_rmrf(d);
    free(d);
}

static void test_pipe(void **state)
{
    (void)state;
    char *d = tu_mkdtemp(), *out = tmpfile_in(d, "out");
    const char *in = tu_fixture("pull/data.csv");
    char inb[1024];
    snprintf(inb, sizeof inb, "%s", in);
    char *sed[] = {"sed", "1d"};
    assert_int_equal(silt_prepare_pipe(inb, sed, 2, out, 0, NULL, NULL), 0);
    expect_file(out, "1,a\n2,b\n");
    /* non-zero exit with the first stderr line */
    char *bad[] = {"sed", "-e", "s/unterminated"};
    assert_int_equal(silt_prepare_pipe(inb, bad, 3, out, 0, NULL, NULL), SILT_EIO);
    assert_string_equal(silt_error_last(), "pipe 'sed -e s/unterminated' exited with status 1: sed: -e expression "
                                           "#1, char 14: unterminated `s' command");
    /* missing command */
    char *missing[] = {"silt-no-such-command-xyz"};
    assert_int_equal(silt_prepare_pipe(inb, missing, 1, out, 0, NULL, NULL), SILT_EIO);
    assert_string_equal(silt_error_last(), "pipe 'silt-no-such-command-xyz': cannot run 'silt-no-such-command-xyz': "
                                           "No such file or directory");
    /* timeout kills the process group (a child of sh too) */
    char *slow[] = {"sh", "-c", "sleep 30 & sleep 30"};
    time_t t0 = time(NULL);
    assert_int_equal(silt_prepare_pipe(inb, slow, 3, out, 1, NULL, NULL), SILT_EIO);
    assert_string_equal(silt_error_last(), "pipe 'sh -c sleep 30 & sleep 30' timed out after 1 s (SILT_PIPE_TIMEOUT)");
    assert_true(time(NULL) - t0 < 5);
    free(out);
    tu_rmrf(d);
    free(d);
}

static char warned[512];
static int nwarn;
static void on_warn(void *ctx, const char *line)
{
    (void)ctx;
    nwarn++;
    snprintf(warned, sizeof warned, "%s", line);
}

static void test_pipe_stderr_warning(void **state)
{
    (void)state;
    char *d = tu_mkdtemp(), *out = tmpfile_in(d, "out");
    char inb[1024];
    snprintf(inb, sizeof inb, "%s", tu_fixture("pull/data.csv"));
    char *cmd[] = {"sh", "-c", "echo note >&2; cat"};
    nwarn = 0;
    assert_int_equal(silt_prepare_pipe(inb, cmd, 3, out, 0, on_warn, NULL), 0);
    expect_file(out, CSV);
    assert_int_equal(nwarn, 1);
    assert_string_equal(warned, "pipe 'sh -c echo note >&2; cat': note");
    free(out);
    tu_rmrf(d);
    free(d);
}

static void test_chain(void **state)
{
    (void)state;
    char *d = tu_mkdtemp();
    char inb[1024];
    snprintf(inb, sizeof inb, "%s", tu_fixture("pull/multi.zip"));
    odf_PrepStepDecompress dz = {ODF_CompressionFormat_Zip, "data/*.csv"};
    char *argv[] = {"sed", "1d"};
    odf_PrepStepPipe pp = {{argv, 2, true}};
    odf_union items[2] = {{ODF_PrepStep_Decompress, &dz}, {ODF_PrepStep_Pipe, &pp}};
    odf_uvec steps = {items, 2, true};
    char *out = NULL;
    assert_int_equal(silt_prepare_run(&out, &steps, inb, "multi.zip", d, NULL, NULL), 0);
    char exp[1024];
    snprintf(exp, sizeof exp, "%s/prep-1", d);
    assert_string_equal(out, exp);
    expect_file(out, "1,a\n2,b\n");
    free(out);
    /* no steps: the input itself */
    odf_uvec none = {NULL, 0, false};
    assert_int_equal(silt_prepare_run(&out, &none, inb, NULL, d, NULL, NULL), 0);
    assert_string_equal(out, inb);
    free(out);
    /* an error names the step */
    dz.sub_path = "nothing*";
    assert_int_equal(silt_prepare_run(&out, &steps, inb, "multi.zip", d, NULL, NULL), SILT_EINVAL);
    assert_null(out);
    assert_string_equal(silt_error_last(), "prepare step 1: archive 'multi.zip' has no entry matching 'nothing*' "
                                           "(entries: readme.txt, data/2020-01-01.csv, data/extra.json)");
    tu_rmrf(d);
    free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gzip),
        cmocka_unit_test(test_zip_subpath),
        cmocka_unit_test(test_pipe),
        cmocka_unit_test(test_pipe_stderr_warning),
        cmocka_unit_test(test_chain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
