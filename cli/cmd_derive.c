/* cmd_derive.c — commands around derivative datasets (issue 16,
 * docs/transforms.md): `silt reset NAME[@BRANCH] --to BLOCK [--force]`
 * moves a head back (silt_dataset_reset) and prints one line, or with --json
 * one object; a refusal or an unknown block is one error line, exit 1, the
 * dataset unchanged. */
#include "cli.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_reset(cli_ctx *c, int argc, char **argv)
{
    const char *ref = NULL, *to = NULL;
    bool force = false;
    for (int i = 0; i < argc; i++) {
        int r = cli_opt_value(argc, argv, &i, "--to", &to);
        if (r < 0)
            return cli_usage("reset: --to needs a block (hash, hash prefix or sequence number)");
        if (r > 0)
            continue;
        if (strcmp(argv[i], "--force") == 0)
            force = true;
        else if (argv[i][0] == '-')
            return cli_usage("reset: unknown option '%s'", argv[i]);
        else if (ref)
            return cli_usage("reset takes one dataset");
        else
            ref = argv[i];
    }
    if (!ref || !to)
        return cli_usage("reset needs NAME[@BRANCH] --to BLOCK");
    silt_workspace *ws;
    if (cli_open_workspace(c, &ws))
        return EXIT_FAIL;
    silt_dataset *ds = NULL;
    silt_reset_result r;
    int rc = silt_dataset_open(&ds, ws, ref);
    if (rc == 0)
        rc = silt_dataset_reset(ds, to, force, &r);
    int status = EXIT_OK;
    if (rc < 0) {
        status = cli_fail(NULL);
    } else if (c->json) {
        json_t *o = cli_dataset_json(ds);
        if (o && json_object_update_new(o, json_pack("{s:s,s:I,s:I,s:s}", "ref", ref, "fromSequence",
                                                     (json_int_t)r.from_seq, "toSequence", (json_int_t)r.to_seq,
                                                     "head", r.head)) == 0)
            cli_json_print(o);
        else
            status = cli_fail(NULL);
    } else if (r.from_seq == r.to_seq) {
        printf("%s: already at block %llu (%s)\n", ref, (unsigned long long)r.to_seq, r.head);
    } else {
        unsigned long long n = (unsigned long long)(r.from_seq - r.to_seq);
        printf("%s: head moved back to block %llu (%s), %llu block%s dropped\n", ref, (unsigned long long)r.to_seq,
               r.head, n, n == 1 ? "" : "s");
    }
    silt_dataset_free(ds);
    silt_workspace_free(ws);
    return status;
}
