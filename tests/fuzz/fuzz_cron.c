/* fuzz_cron.c — libFuzzer target for the cron parser and the next-fire
 * search of ingest/cron.h (5 fields, or 6 with a leading second), which
 * the flow scheduler runs on every schedule of the workspace.
 *
 * The input is the expression (up to the first NUL, if any). Invariants
 * checked: no crash; a parse is 0 or SILT_EINVAL with a one-line message;
 * after a successful parse every field has a value, and silt_cron_next from
 * a few start times terminates with 0 and a time strictly after the start
 * (on a whole minute for 5 fields) or SILT_ENOTFOUND.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/cron.h"
#include "util/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 256)
        return 0;
    char *expr = malloc(size + 1);
    if (!expr)
        return 0;
    memcpy(expr, data, size);
    expr[size] = '\0';
    silt_cron c;
    int rc = silt_cron_parse(&c, expr);
    if (rc != 0) {
        if (rc != SILT_EINVAL || strchr(silt_error_last(), '\n'))
            abort();
        free(expr);
        return 0;
    }
    if (!c.second || !c.minute || !c.hour || !c.dom || !c.month || !c.dow)
        abort();
    static const int64_t starts[] = {0, 1714557599, 1714557600, -86400 * 400, 4102444800};
    for (size_t i = 0; i < sizeof starts / sizeof starts[0]; i++) {
        int64_t next = 0;
        rc = silt_cron_next(&c, starts[i], &next);
        if (rc == 0 && next <= starts[i])
            abort();
        if (rc == 0 && c.second == 1 && next % 60 != 0)
            abort();
        if (rc != 0 && rc != SILT_ENOTFOUND)
            abort();
    }
    free(expr);
    return 0;
}
