/* fuzz_s3_url.c — libFuzzer target for the s3:// URL parser and the name
 * rules of store/s3_client.h (the URL comes from the command line and from
 * repository configuration).
 *
 * The input is the URL (up to the first NUL). Invariants checked: no crash;
 * the result is 0 or SILT_EINVAL with a one-line message; on success the
 * bucket passes silt_s3_valid_bucket, the prefix silt_s3_valid_prefix, and
 * "s3://<bucket>/<prefix>" parses back to the same two strings; on failure
 * both outputs are NULL. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/s3_client.h"
#include "util/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1024)
        return 0;
    char *url = malloc(size + 1);
    if (!url)
        return 0;
    memcpy(url, data, size);
    url[size] = '\0';
    char *b = NULL, *p = NULL;
    int rc = silt_s3_url_parse(url, &b, &p);
    if (rc != 0) {
        if (rc != SILT_EINVAL || b || p || strchr(silt_error_last(), '\n'))
            abort();
    } else {
        if (!silt_s3_valid_bucket(b) || !silt_s3_valid_prefix(p))
            abort();
        size_t n = strlen(b) + strlen(p) + 8;
        char *again = malloc(n);
        if (again) {
            snprintf(again, n, "s3://%s/%s", b, p);
            char *b2 = NULL, *p2 = NULL;
            if (silt_s3_url_parse(again, &b2, &p2) != 0 || strcmp(b, b2) || strcmp(p, p2))
                abort();
            char *k = silt_s3_key_join(p, "refs/head");
            if (k && (strlen(k) != strlen(p) + (*p ? 1 : 0) + 9))
                abort();
            free(k);
            free(b2);
            free(p2);
            free(again);
        }
    }
    free(b);
    free(p);
    free(url);
    return 0;
}
