/* cmd_serve.c — `silt serve`: option parsing; the server itself is in
 * server/ (silt_server_run). */
#include "cli.h"
#include "server.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "123", "64K", "512M", "2G", "1T" (binary units) -> bytes; 0 on error. */
static uint64_t parse_size(const char *s)
{
    char *end;
    if (!isdigit((unsigned char)*s))
        return 0;
    unsigned long long v = strtoull(s, &end, 10);
    unsigned shift = 0;
    switch (toupper((unsigned char)*end)) {
    case '\0': break;
    case 'K': shift = 10; break;
    case 'M': shift = 20; break;
    case 'G': shift = 30; break;
    case 'T': shift = 40; break;
    default: return 0;
    }
    if (*end && end[1] && !(toupper((unsigned char)end[1]) == 'B' && !end[2]) &&
        !(toupper((unsigned char)end[1]) == 'I' && toupper((unsigned char)end[2]) == 'B' && !end[3]))
        return 0;
    if (v == 0 || v > (UINT64_MAX >> shift))
        return 0;
    return (uint64_t)v << shift;
}

int cmd_serve(cli_ctx *c, int argc, char **argv)
{
    silt_server_opts o = {0};
    o.workspace = c->workspace_dir;
    const char **origins = calloc((size_t)argc + 1, sizeof *origins);
    if (!origins)
        return cli_fail_code(SILT_ENOMEM, "out of memory");
    int rc = EXIT_OK;
    for (int i = 0; i < argc && rc == EXIT_OK; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--listen") == 0 && v) {
            o.listen = v, i++;
        } else if (strcmp(a, "--workspace") == 0 && v) {
            o.workspace = v, i++;
        } else if (strcmp(a, "--max-upload") == 0 && v) {
            o.max_upload = parse_size(v), i++;
            if (!o.max_upload)
                rc = cli_usage("--max-upload '%s': expected a size such as 1048576, 64K, 512M or 2G", v);
        } else if (strcmp(a, "--allow-origin") == 0 && v) {
            origins[o.norigins++] = v, i++;
        } else if (strcmp(a, "--connection-timeout") == 0 && v) {
            char *end;
            long t = strtol(v, &end, 10);
            if (*end || t <= 0 || t > 86400)
                rc = cli_usage("--connection-timeout '%s': expected seconds 1..86400", v);
            o.connection_timeout = (unsigned)t, i++;
        } else if (strncmp(a, "--", 2) == 0 && !v &&
                   (!strcmp(a, "--listen") || !strcmp(a, "--workspace") || !strcmp(a, "--max-upload") ||
                    !strcmp(a, "--allow-origin") || !strcmp(a, "--connection-timeout"))) {
            rc = cli_usage("%s needs a value", a);
        } else {
            rc = cli_usage("serve: unexpected argument '%s'", a);
        }
    }
    if (rc == EXIT_OK) {
        o.origins = origins;
        rc = silt_server_run(&o) == 0 ? EXIT_OK : EXIT_FAIL;
    }
    free(origins);
    return rc;
}
