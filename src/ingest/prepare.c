/* prepare.c — prepare steps (see prepare.h).
 *
 * Invariants: the input file is never modified; an output file is complete
 * only when the step returns 0 (on failure it may hold partial data and the
 * caller removes the temp dir); a Pipe child never outlives the call — on
 * timeout its whole process group is killed and reaped.
 */
#include "ingest/prepare.h"

#include "util/buf.h"
#include "util/error.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- Decompress ------------------------------------------------------------ */

static int write_entry(struct archive *ar, const char *out, const char *display)
{
    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return silt_err(SILT_EIO, "cannot create '%s': %s", out, strerror(errno));
    int rc = 0;
    char buf[65536];
    for (;;) {
        la_ssize_t n = archive_read_data(ar, buf, sizeof buf);
        if (n == 0)
            break;
        if (n < 0) {
            rc = silt_err(SILT_EINVAL, "archive '%s': %s", display, archive_error_string(ar));
            break;
        }
        for (la_ssize_t off = 0; off < n;) {
            ssize_t w = write(fd, buf + off, (size_t)(n - off));
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0) {
                rc = silt_err(SILT_EIO, "cannot write '%s': %s", out, strerror(errno));
                break;
            }
            off += w;
        }
        if (rc)
            break;
    }
    if (close(fd) != 0 && !rc)
        rc = silt_err(SILT_EIO, "cannot write '%s': %s", out, strerror(errno));
    return rc;
}

int silt_prepare_decompress(const char *in, const char *display, int format, const char *sub_path,
                            const char *out)
{
    if (!display)
        display = in;
    if (sub_path && !*sub_path)
        sub_path = NULL;
    if (format != ODF_CompressionFormat_Gzip && format != ODF_CompressionFormat_Zip)
        return silt_err(SILT_EUNSUPPORTED, "decompress: unsupported format %d", (int)format);
    struct archive *ar = archive_read_new();
    if (!ar)
        return silt_err(SILT_ENOMEM, "decompress: out of memory");
    bool raw = false;
    if (format == ODF_CompressionFormat_Gzip) {
        archive_read_support_filter_gzip(ar);
        if (sub_path) {
            archive_read_support_format_tar(ar);
        } else {
            archive_read_support_format_raw(ar);
            raw = true;
        }
    } else {
        archive_read_support_format_zip(ar);
    }
    int rc = 0;
    if (archive_read_open_filename(ar, in, 65536) != ARCHIVE_OK) {
        rc = silt_err(SILT_EINVAL, "archive '%s': %s", display, archive_error_string(ar));
        archive_read_free(ar);
        return rc;
    }
    if (raw && archive_filter_code(ar, 0) != ARCHIVE_FILTER_GZIP) {
        archive_read_free(ar);
        return silt_err(SILT_EINVAL, "archive '%s': not gzip data", display);
    }
    silt_buf names = SILT_BUF_INIT, matches = SILT_BUF_INIT;
    size_t nfiles = 0, nmatch = 0;
    struct archive_entry *ent;
    for (;;) {
        int r = archive_read_next_header(ar, &ent);
        if (r == ARCHIVE_EOF)
            break;
        if (r < ARCHIVE_WARN) {
            rc = silt_err(SILT_EINVAL, "archive '%s': %s", display, archive_error_string(ar));
            break;
        }
        if (!raw && archive_entry_filetype(ent) != AE_IFREG)
            continue;
        const char *name = raw ? "data" : archive_entry_pathname(ent);
        if (!name)
            name = "?";
        nfiles++;
        if ((names.len && silt_buf_puts(&names, ", ")) || silt_buf_puts(&names, name)) {
            rc = silt_err(SILT_ENOMEM, "decompress: out of memory");
            break;
        }
        bool match = raw || !sub_path || fnmatch(sub_path, name, 0) == 0;
        if (!match)
            continue;
        nmatch++;
        if ((matches.len && silt_buf_puts(&matches, ", ")) || silt_buf_puts(&matches, name)) {
            rc = silt_err(SILT_ENOMEM, "decompress: out of memory");
            break;
        }
        if (nmatch == 1) {
            rc = write_entry(ar, out, display);
            if (rc)
                break;
        }
    }
    if (!rc && nmatch == 0 && sub_path)
        rc = silt_err(SILT_EINVAL, "archive '%s' has no entry matching '%s' (entries: %s)", display, sub_path,
                      nfiles ? names.data : "none");
    else if (!rc && nmatch == 0)
        rc = silt_err(SILT_EINVAL, "archive '%s' holds no file", display);
    else if (!rc && nmatch > 1 && sub_path)
        rc = silt_err(SILT_EINVAL, "archive '%s' has several entries matching '%s': %s", display, sub_path,
                      matches.data);
    else if (!rc && nmatch > 1)
        rc = silt_err(SILT_EINVAL, "archive '%s' holds several files (%s); choose one with subPath", display,
                      matches.data);
    silt_buf_free(&names);
    silt_buf_free(&matches);
    archive_read_free(ar);
    return rc;
}

/* ---- Pipe ------------------------------------------------------------------ */

static int pipe_timeout_default(void)
{
    const char *v = getenv("SILT_PIPE_TIMEOUT");
    if (v && *v) {
        char *end;
        long t = strtol(v, &end, 10);
        if (!*end && t > 0 && t < 1000000)
            return (int)t;
    }
    return SILT_PIPE_TIMEOUT_DEFAULT;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* "cmd arg…" for messages (malloc'd; NULL on ENOMEM). */
static char *cmdline(char *const *argv, size_t argc)
{
    silt_buf b = SILT_BUF_INIT;
    for (size_t i = 0; i < argc; i++)
        if ((i && silt_buf_putc(&b, ' ')) || silt_buf_puts(&b, argv[i])) {
            silt_buf_free(&b);
            return NULL;
        }
    if (!b.data && silt_buf_puts(&b, ""))
        return NULL;
    return silt_buf_detach(&b);
}

static void first_line(const silt_buf *err, char *out, size_t cap)
{
    out[0] = '\0';
    if (!err->len)
        return;
    size_t n = 0;
    const char *p = err->data;
    while (n < err->len && p[n] != '\n' && n + 1 < cap)
        n++;
    memcpy(out, p, n);
    out[n] = '\0';
}

int silt_prepare_pipe(const char *in, char *const *argv, size_t argc, const char *out, int timeout_s,
                      silt_report_fn warn, void *warn_ctx)
{
    if (argc == 0 || !argv[0] || !*argv[0])
        return silt_err(SILT_EINVAL, "prepare: Pipe needs a command");
    if (timeout_s <= 0)
        timeout_s = pipe_timeout_default();
    char *cmd = cmdline(argv, argc);
    char **av = calloc(argc + 1, sizeof *av);
    if (!cmd || !av) {
        free(cmd);
        free(av);
        return silt_err(SILT_ENOMEM, "prepare: out of memory");
    }
    memcpy(av, argv, argc * sizeof *av);
    int rc = 0;
    int infd = -1, outfd = -1, errp[2] = {-1, -1}, execp[2] = {-1, -1};
    silt_buf err = SILT_BUF_INIT;
    infd = open(in, O_RDONLY | O_CLOEXEC);
    if (infd < 0) {
        rc = silt_err(SILT_EIO, "cannot open '%s': %s", in, strerror(errno));
        goto done;
    }
    outfd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (outfd < 0) {
        rc = silt_err(SILT_EIO, "cannot create '%s': %s", out, strerror(errno));
        goto done;
    }
    if (pipe2(errp, O_CLOEXEC) != 0 || pipe2(execp, O_CLOEXEC) != 0) {
        rc = silt_err(SILT_EIO, "pipe '%s': cannot create a pipe: %s", cmd, strerror(errno));
        goto done;
    }
    pid_t pid = fork();
    if (pid < 0) {
        rc = silt_err(SILT_EIO, "pipe '%s': cannot fork: %s", cmd, strerror(errno));
        goto done;
    }
    if (pid == 0) {
        setpgid(0, 0);
        signal(SIGPIPE, SIG_DFL);
        if (dup2(infd, 0) < 0 || dup2(outfd, 1) < 0 || dup2(errp[1], 2) < 0)
            _exit(126);
        execvp(av[0], av);
        int e = errno;
        ssize_t w = write(execp[1], &e, sizeof e);
        (void)w;
        _exit(127);
    }
    setpgid(pid, pid); /* also in the parent: no race with the kill below */
    close(errp[1]);
    errp[1] = -1;
    close(execp[1]);
    execp[1] = -1;
    int exec_errno = 0;
    ssize_t got;
    do
        got = read(execp[0], &exec_errno, sizeof exec_errno);
    while (got < 0 && errno == EINTR);
    int64_t deadline = now_ms() + (int64_t)timeout_s * 1000;
    int status = 0;
    bool exited = false, timed_out = false, err_open = true;
    if (got == (ssize_t)sizeof exec_errno) {
        waitpid(pid, &status, 0);
        rc = silt_err(SILT_EIO, "pipe '%s': cannot run '%s': %s", cmd, av[0], strerror(exec_errno));
        goto done;
    }
    while (!exited) {
        int64_t left = deadline - now_ms();
        if (left <= 0) {
            timed_out = true;
            break;
        }
        if (err_open) {
            struct pollfd pfd = {errp[0], POLLIN, 0};
            int pr = poll(&pfd, 1, left < 50 ? (int)left : 50);
            if (pr > 0) {
                char buf[4096];
                ssize_t n = read(errp[0], buf, sizeof buf);
                if (n > 0) {
                    if (err.len < 65536 && silt_buf_append(&err, buf, (size_t)n)) {
                        rc = silt_err(SILT_ENOMEM, "prepare: out of memory");
                        timed_out = true; /* kill it */
                        break;
                    }
                } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
                    err_open = false;
                }
            }
        } else {
            struct timespec ts = {0, 10 * 1000000};
            nanosleep(&ts, NULL);
        }
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid)
            exited = true;
    }
    if (timed_out) {
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
        if (!rc)
            rc = silt_err(SILT_EIO, "pipe '%s' timed out after %d s (SILT_PIPE_TIMEOUT)", cmd, timeout_s);
        goto done;
    }
    /* drain what the command left on stderr (non-blocking: a grandchild may hold it) */
    if (err_open) {
        fcntl(errp[0], F_SETFL, O_NONBLOCK);
        char buf[4096];
        ssize_t n;
        while ((n = read(errp[0], buf, sizeof buf)) > 0 && err.len < 65536)
            if (silt_buf_append(&err, buf, (size_t)n))
                break;
    }
    char line[512];
    first_line(&err, line, sizeof line);
    if (WIFSIGNALED(status)) {
        rc = silt_err(SILT_EIO, "pipe '%s' was killed by signal %d%s%s", cmd, WTERMSIG(status), *line ? ": " : "",
                      line);
    } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
        rc = silt_err(SILT_EIO, "pipe '%s' exited with status %d%s%s", cmd, WEXITSTATUS(status),
                      *line ? ": " : "", line);
    } else if (err.len && warn) {
        if (silt_buf_putc(&err, '\0') == 0) {
            char *save = NULL;
            for (char *l = strtok_r(err.data, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
                char msg[600];
                snprintf(msg, sizeof msg, "pipe '%s': %s", cmd, l);
                warn(warn_ctx, msg);
            }
        }
    }
    if (!rc && fsync(outfd) != 0 && errno != EINVAL)
        rc = silt_err(SILT_EIO, "cannot write '%s': %s", out, strerror(errno));
done:
    if (infd >= 0)
        close(infd);
    if (outfd >= 0)
        close(outfd);
    for (int i = 0; i < 2; i++) {
        if (errp[i] >= 0)
            close(errp[i]);
        if (execp[i] >= 0)
            close(execp[i]);
    }
    silt_buf_free(&err);
    free(cmd);
    free(av);
    return rc;
}

/* ---- steps ------------------------------------------------------------------ */

int silt_prepare_run(char **out_path, const odf_uvec *steps, const char *in, const char *display,
                     const char *tmpdir, silt_report_fn warn, void *warn_ctx)
{
    *out_path = NULL;
    char *cur = strdup(in);
    if (!cur)
        return silt_err(SILT_ENOMEM, "prepare: out of memory");
    const char *disp = display ? display : in;
    for (size_t i = 0; steps && i < steps->n; i++) {
        const odf_union *st = &steps->items[i];
        char *next = malloc(strlen(tmpdir) + 32);
        if (!next) {
            free(cur);
            return silt_err(SILT_ENOMEM, "prepare: out of memory");
        }
        sprintf(next, "%s/prep-%zu", tmpdir, i);
        int rc;
        if (st->type == ODF_PrepStep_Decompress) {
            const odf_PrepStepDecompress *d = st->value;
            rc = silt_prepare_decompress(cur, disp, d->format, d->sub_path, next);
        } else if (st->type == ODF_PrepStep_Pipe) {
            const odf_PrepStepPipe *p = st->value;
            rc = silt_prepare_pipe(cur, p->command.items, p->command.n, next, 0, warn, warn_ctx);
        } else {
            rc = silt_err(SILT_EUNSUPPORTED, "prepare step %zu: unsupported kind %d", i + 1, (int)st->type);
        }
        if (rc) {
            free(next);
            free(cur);
            return silt_err_context(rc, "prepare step %zu", i + 1);
        }
        free(cur);
        cur = next;
        disp = cur;
    }
    *out_path = cur;
    return 0;
}
