/* fuzz_s3_xml.c — libFuzzer target for the S3 XML parsers of
 * store/s3_client.h (error bodies, ListObjectsV2 pages, element search):
 * their input is whatever the network returns.
 *
 * The input is the response body (any bytes). Invariants checked: no crash
 * and no read past the input; each parser returns 0 or SILT_EINVAL (the
 * search also SILT_ENOTFOUND) with a one-line message; a parsed error has
 * a non-empty code, a failed one leaves code and message empty; a listing
 * only reports non-empty keys and a truncated page always has a token. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/s3_client.h"
#include "util/error.h"

static int on_key(void *ctx, const char *key, uint64_t size)
{
    (void)size;
    if (!key || !*key)
        abort();
    (*(size_t *)ctx)++;
    return 0;
}

static void one_line(void)
{
    if (strchr(silt_error_last(), '\n'))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536)
        return 0;
    /* an exact-size copy, so reads past the end are caught by ASan */
    char *xml = malloc(size ? size : 1);
    if (!xml)
        return 0;
    memcpy(xml, data, size);
    char code[64], msg[256];
    int rc = silt_s3_parse_error(xml, size, code, sizeof code, msg, sizeof msg);
    if (rc == 0 && !*code)
        abort();
    if (rc != 0 && (rc != SILT_EINVAL || *code || *msg))
        abort();
    if (rc)
        one_line();
    size_t n = 0;
    bool truncated = false;
    silt_buf next = SILT_BUF_INIT;
    rc = silt_s3_parse_list(xml, size, on_key, &n, &truncated, &next);
    if (rc != 0 && rc != SILT_EINVAL)
        abort();
    if (rc == 0 && truncated && next.len == 0)
        abort();
    if (rc)
        one_line();
    silt_buf_free(&next);
    silt_buf out = SILT_BUF_INIT;
    rc = silt_s3_xml_find(xml, size, "UploadId", &out);
    if (rc != 0 && rc != SILT_EINVAL && rc != SILT_ENOTFOUND)
        abort();
    silt_buf_free(&out);
    free(xml);
    return 0;
}
