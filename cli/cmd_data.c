/* cmd_data.c — data commands: ingest (push ingest of files or stdin). On a
 * terminal a progress line shows the files and bytes being read; Ctrl-C
 * stops before the commit (nothing committed, exit 130). */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Copies stdin into `stdin` in a fresh scratch directory of the workspace
 * (`.silt/tmp/<owner>-<random>/`, so that a killed ingest leaves nothing
 * outside the workspace and the next command removes the copy). Returns
 * the file's malloc'd path and its directory in *dir_out, or NULL: with
 * *lib_err set when the library failed (silt_error_last), else errno set. */
static char *stdin_to_file(silt_workspace *ws, char **dir_out, bool *lib_err)
{
    *dir_out = NULL;
    *lib_err = false;
    char *dir = NULL, *path = NULL;
    if (silt_workspace_mktemp(ws, &dir) < 0) {
        *lib_err = true;
        return NULL;
    }
    if (asprintf(&path, "%s/stdin", dir) < 0) {
        rmdir(dir);
        free(dir);
        errno = ENOMEM;
        return NULL;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    char buf[1 << 16];
    ssize_t n = fd < 0 ? -1 : 0;
    while (fd >= 0 && (n = read(STDIN_FILENO, buf, sizeof buf)) > 0) {
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(fd, buf + off, (size_t)(n - off));
            if (w < 0) {
                n = -1;
                break;
            }
            off += w;
        }
        if (n < 0)
            break;
    }
    int e = errno;
    if (fd >= 0 && close(fd) != 0 && n == 0) {
        e = errno;
        n = -1;
    }
    if (n < 0) {
        unlink(path);
        rmdir(dir);
        free(path);
        free(dir);
        errno = e;
        return NULL;
    }
    *dir_out = dir;
    return path;
}

/* Removes the copy of stdin and its scratch directory. */
static void stdin_remove(char *path, char *dir)
{
    if (path)
        unlink(path);
    if (dir)
        rmdir(dir);
    free(path);
    free(dir);
}

/* After Ctrl-C: an ingest is one commit, so either all of it or nothing. */
static int interrupted_summary(const char *ref, int rc, const silt_ingest_result *r, const char *const *display,
                               size_t n)
{
    if (rc < 0 && rc != SILT_ECANCELED)
        cli_fail(NULL);
    if (rc >= 0) {
        fprintf(stderr, "silt: interrupted: ingest '%s': %zu of %zu files ingested (%s); everything was committed\n",
                ref, n, n, r->up_to_date ? "up to date" : r->head);
        return EXIT_INTERRUPTED;
    }
    fprintf(stderr, "silt: interrupted: ingest '%s': 0 of %zu files ingested (no block committed); nothing of ", ref,
            n);
    for (size_t i = 0; i < n && i < 3; i++)
        fprintf(stderr, "%s'%s'", i ? ", " : "", display[i]);
    if (n > 3)
        fprintf(stderr, " and %zu more", n - 3);
    fputs(" was committed\n", stderr);
    return EXIT_INTERRUPTED;
}

int cmd_ingest(cli_ctx *c, int argc, char **argv)
{
    const char *ref = NULL, *format = NULL, *event_time = NULL, *source = NULL;
    const char **files = calloc((size_t)argc + 1, sizeof *files);
    const char **display = calloc((size_t)argc + 1, sizeof *display);
    if (!files || !display) {
        free(files);
        free(display);
        return cli_fail_code(SILT_ENOMEM, "out of memory");
    }
    size_t nfiles = 0;
    int status = EXIT_OK;
    char *stdin_path = NULL, *stdin_dir = NULL;
    long stdin_slot = -1; /* files[] index of '-' (copied once the workspace is open) */
    bool ended = false; /* after "--": operands only */
    for (int i = 0; i < argc && status == EXIT_OK; i++) {
        const char *a = argv[i];
        const char **slot = NULL;
        if (!ended && strcmp(a, "--") == 0) {
            ended = true;
            continue;
        }
        bool opt = !ended && a[0] == '-' && a[1] != '\0';
        if (opt && strcmp(a, "--input-format") == 0) {
            slot = &format;
        } else if (opt && strcmp(a, "--format") == 0) {
            /* --format is the output format everywhere else */
            fputs("silt: warning: --format is deprecated for ingest; use --input-format\n", stderr);
            slot = &format;
        } else if (opt && strcmp(a, "--event-time") == 0) {
            slot = &event_time;
        } else if (opt && strcmp(a, "--source-name") == 0) {
            slot = &source;
        }
        if (slot) {
            if (i + 1 >= argc)
                status = cli_usage("ingest: %s needs a value", a);
            else
                *slot = argv[++i];
        } else if (opt) {
            status = cli_usage("ingest: unknown option '%s'", a);
        } else if (!ref) {
            ref = a;
        } else if (strcmp(a, "-") == 0) {
            if (stdin_slot >= 0) {
                status = cli_usage("ingest: '-' (stdin) can be given once");
            } else {
                stdin_slot = (long)nfiles;
                display[nfiles++] = "-";
            }
        } else {
            display[nfiles] = a;
            files[nfiles++] = a;
        }
    }
    if (status == EXIT_OK && !ref)
        status = cli_usage("ingest needs a NAME");
    if (status == EXIT_OK && nfiles == 0) {
        /* no files: read standard input */
        stdin_slot = 0;
        display[nfiles++] = "-";
    }
    silt_workspace *ws = NULL;
    silt_dataset *ds = NULL;
    if (status == EXIT_OK && cli_open_workspace(c, &ws))
        status = EXIT_FAIL;
    if (status == EXIT_OK && stdin_slot >= 0) {
        bool lib_err;
        if (!(stdin_path = stdin_to_file(ws, &stdin_dir, &lib_err)))
            status = lib_err ? cli_fail(NULL) : cli_fail_code(SILT_EIO, "cannot read standard input: %s", strerror(errno));
        else
            files[stdin_slot] = stdin_path;
    }
    if (status == EXIT_OK && silt_dataset_open(&ds, ws, ref) < 0)
        status = cli_fail(NULL);
    if (status == EXIT_OK) {
        cli_progress prog;
        cli_progress_begin(&prog, c, ref);
        silt_ingest_opts o = {.files = files,
                              .display = display,
                              .nfiles = nfiles,
                              .format = format,
                              .event_time = event_time,
                              .source_name = source,
                              .progress = cli_progress_fn,
                              .progress_ctx = &prog};
        silt_ingest_result r;
        cli_interrupt_catch();
        int rc = silt_dataset_ingest(&r, ds, &o);
        cli_progress_end(&prog);
        if (cli_interrupted()) {
            status = interrupted_summary(ref, rc, &r, display, nfiles);
        } else if (rc < 0) {
            status = cli_fail(NULL);
        } else if (c->json) {
            silt_dataset_info in;
            json_t *j = silt_dataset_info_get(&in, ds) < 0
                            ? NULL
                            : json_pack("{s:s,s:s,s:s,s:b,s:I}", "name", in.name, "id", in.id, "rid", in.rid,
                                        "upToDate", r.up_to_date, "records", (json_int_t)r.num_records);
            if (j) { /* the same keys either way (null when up to date) */
                bool n = r.up_to_date;
                json_object_set_new(j, "firstOffset", n ? json_null() : json_integer((json_int_t)r.first_offset));
                json_object_set_new(j, "lastOffset", n ? json_null() : json_integer((json_int_t)r.last_offset));
                json_object_set_new(j, "head", n ? json_null() : json_string(r.head));
                json_object_set_new(j, "schemaChanged", json_boolean(!n && r.schema_changed));
            }
            if (j)
                json_object_set_new(j, "watermark", r.has_watermark ? json_string(r.watermark) : json_null());
            cli_json_print(j);
        } else if (r.up_to_date) {
            printf("%s: up to date\n", ref);
        } else {
            char t[CLI_TIME_MAX];
            printf("%s: %llu new record%s (offsets %llu..%llu), watermark %s\n", ref,
                   (unsigned long long)r.num_records, r.num_records == 1 ? "" : "s",
                   (unsigned long long)r.first_offset, (unsigned long long)r.last_offset,
                   r.has_watermark ? cli_time(t, r.watermark) : "-");
        }
    }
    stdin_remove(stdin_path, stdin_dir);
    silt_dataset_free(ds);
    silt_workspace_free(ws);
    free(files);
    free(display);
    return status;
}
