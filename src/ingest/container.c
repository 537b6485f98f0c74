/* container.c — runs one batch of a Container ingress through podman
 * (container.h): fork/exec, stdout to the data file, stderr through a pipe
 * streamed to the log hook, the ODF container interface in the environment.
 *
 * Invariants: every child is started in its own process group and always
 * reaped; a timed-out container is removed with `podman rm -f` before its
 * podman client is reaped (killed if it lingers); no value of an
 * environment variable appears on a command line; the remembered tail of
 * stderr is bounded (SILT_CTR_TAIL_LINES lines of at most SILT_CTR_LINE
 * bytes).
 */
#include "ingest/container.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/error.h"
#include "util/fsutil.h"

extern char **environ;

#define SILT_CTR_TAIL_LINES 3
#define SILT_CTR_LINE 1024
#define SILT_CTR_AUX_TIMEOUT 60 /* s: `podman image exists`, `podman rm -f` */
#define SILT_CTR_REAP_GRACE 15  /* s after `podman rm -f` before the client is killed */

static const char CONTAINERS_CONF_TEXT[] =
    "# written by silt for one container run (docs/decisions.md)\n"
    "[containers]\n"
    "default_ulimits = [\"nofile=1024:1024\", \"nproc=4096:4096\"]\n"
    "netns = \"none\"\n"
    "[engine]\n"
    "runtime = \"runc\"\n";

int silt_container_timeout(void)
{
    const char *v = getenv("SILT_CONTAINER_TIMEOUT");
    if (v && *v) {
        char *end;
        long t = strtol(v, &end, 10);
        if (!*end && t > 0 && t < 10000000)
            return (int)t;
    }
    return SILT_CONTAINER_TIMEOUT_DEFAULT;
}

void silt_container_result_free(silt_container_result *r)
{
    if (r->etag)
        memset(r->etag, 0, strlen(r->etag));
    free(r->etag);
    memset(r, 0, sizeof *r);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *podman_path(void)
{
    const char *p = getenv("SILT_PODMAN");
    return p && *p ? p : "podman";
}

/* ---- environment ------------------------------------------------------------ */

/* A growing NULL-terminated array of malloc'd strings. */
typedef struct strv {
    char **v;
    size_t n, cap;
} strv;

static int strv_push(strv *s, char *str)
{
    if (!str)
        return silt_err(SILT_ENOMEM, "container: out of memory");
    if (s->n + 2 > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 32;
        char **nv = realloc(s->v, cap * sizeof *nv);
        if (!nv) {
            free(str);
            return silt_err(SILT_ENOMEM, "container: out of memory");
        }
        s->v = nv;
        s->cap = cap;
    }
    s->v[s->n++] = str;
    s->v[s->n] = NULL;
    return 0;
}

static int strv_pushf(strv *s, const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *str = malloc(la + lb + 1);
    if (str) {
        memcpy(str, a, la);
        memcpy(str + la, b, lb + 1);
    }
    return strv_push(s, str);
}

static void strv_free(strv *s, bool scrub)
{
    for (size_t i = 0; i < s->n; i++) {
        if (scrub)
            memset(s->v[i], 0, strlen(s->v[i]));
        free(s->v[i]);
    }
    free(s->v);
    memset(s, 0, sizeof *s);
}

/* Is `entry` ("NAME=value") one of the names in `names`? */
static bool env_named(const char *entry, const strv *names)
{
    size_t l = strcspn(entry, "=");
    for (size_t i = 0; i < names->n; i++)
        if (strlen(names->v[i]) == l && memcmp(names->v[i], entry, l) == 0)
            return true;
    return false;
}

static int check_env_name(const char *n)
{
    if (!n || !*n || strchr(n, '='))
        return silt_err(SILT_EINVAL, "container: invalid environment variable name '%s'", n ? n : "");
    return 0;
}

/* The names (in `names`) and NAME=value entries (in `vals`) the container
 * gets: the source's env, then the ODF interface (which wins). */
static int container_env(const silt_container_opts *o, const char *conf, strv *names, strv *vals)
{
    char batch[32];
    snprintf(batch, sizeof batch, "%llu",
             (unsigned long long)(o->batch_size ? o->batch_size : SILT_CONTAINER_BATCH_SIZE_DEFAULT));
    const char *odf[][2] = {
        {"ODF_ETAG", o->prev_etag ? o->prev_etag : ""},
        {"ODF_LAST_MODIFIED", o->prev_last_modified ? o->prev_last_modified : ""},
        {"ODF_BATCH_SIZE", batch},
        {"ODF_NEW_ETAG_PATH", SILT_CONTAINER_OUT_DIR "/new-etag"},
        {"ODF_NEW_LAST_MODIFIED_PATH", SILT_CONTAINER_OUT_DIR "/new-last-modified"},
        {"ODF_NEW_HAS_MORE_DATA_PATH", SILT_CONTAINER_OUT_DIR "/new-has-more-data"},
    };
    int rc = 0;
    for (size_t i = 0; !rc && i < o->nenv; i++) {
        bool odf_name = false;
        for (size_t j = 0; j < sizeof odf / sizeof odf[0]; j++)
            odf_name = odf_name || strcmp(o->env_names[i], odf[j][0]) == 0;
        if (odf_name)
            continue; /* the interface's own variables are silt's to set */
        if (!(rc = check_env_name(o->env_names[i])) && !(rc = strv_push(names, strdup(o->env_names[i]))))
            rc = strv_pushf(vals, names->v[names->n - 1], "=");
        if (!rc) { /* append the value to the entry just pushed */
            char *e = vals->v[vals->n - 1];
            size_t l = strlen(e), vl = strlen(o->env_values[i] ? o->env_values[i] : "");
            char *ne = realloc(e, l + vl + 1);
            if (!ne)
                rc = silt_err(SILT_ENOMEM, "container: out of memory");
            else {
                memcpy(ne + l, o->env_values[i] ? o->env_values[i] : "", vl + 1);
                vals->v[vals->n - 1] = ne;
            }
        }
    }
    for (size_t j = 0; !rc && j < sizeof odf / sizeof odf[0]; j++) {
        if (!(rc = strv_push(names, strdup(odf[j][0]))))
            rc = strv_pushf(vals, odf[j][0], "=");
        if (!rc) {
            char *e = vals->v[vals->n - 1];
            size_t l = strlen(e), vl = strlen(odf[j][1]);
            char *ne = realloc(e, l + vl + 1);
            if (!ne)
                rc = silt_err(SILT_ENOMEM, "container: out of memory");
            else {
                memcpy(ne + l, odf[j][1], vl + 1);
                vals->v[vals->n - 1] = ne;
            }
        }
    }
    if (!rc && conf)
        rc = strv_pushf(vals, "CONTAINERS_CONF=", conf);
    return rc;
}

/* podman's environment: silt's, minus the names set here, plus `vals`. */
static int podman_envp(const strv *names, const strv *vals, bool own_conf, strv *envp)
{
    int rc = 0;
    for (char **e = environ; !rc && e && *e; e++) {
        if (env_named(*e, names) || (own_conf && strncmp(*e, "CONTAINERS_CONF=", 16) == 0))
            continue;
        rc = strv_push(envp, strdup(*e));
    }
    for (size_t i = 0; !rc && i < vals->n; i++)
        rc = strv_push(envp, strdup(vals->v[i]));
    return rc;
}

/* ---- processes ---------------------------------------------------------------- */

/* Starts argv (argv[0] looked up in PATH) with stdin /dev/null, stdout
 * `outfd`, stderr `errfd`, in its own process group. *exec_errno: the errno
 * of a failed exec (then the child is reaped and *pid is -1). */
static int spawn(char *const *argv, char *const *envp, int outfd, int errfd, pid_t *pid, int *exec_errno)
{
    *pid = -1;
    *exec_errno = 0;
    int execp[2];
    if (pipe2(execp, O_CLOEXEC) != 0)
        return silt_err(SILT_EIO, "container: cannot create a pipe: %s", strerror(errno));
    int nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    pid_t p = nullfd < 0 ? -1 : fork();
    if (p < 0) {
        int e = errno;
        close(execp[0]);
        close(execp[1]);
        if (nullfd >= 0)
            close(nullfd);
        return silt_err(SILT_EIO, "container: cannot start podman: %s", strerror(e));
    }
    if (p == 0) {
        setpgid(0, 0);
        signal(SIGPIPE, SIG_DFL);
        if (dup2(nullfd, 0) < 0 || dup2(outfd, 1) < 0 || dup2(errfd, 2) < 0)
            _exit(126);
        execvpe(argv[0], argv, envp);
        int e = errno;
        ssize_t w = write(execp[1], &e, sizeof e);
        (void)w;
        _exit(127);
    }
    setpgid(p, p);
    close(nullfd);
    close(execp[1]);
    int e = 0;
    ssize_t got;
    do
        got = read(execp[0], &e, sizeof e);
    while (got < 0 && errno == EINTR);
    close(execp[0]);
    if (got == (ssize_t)sizeof e) {
        while (waitpid(p, NULL, 0) < 0 && errno == EINTR)
            ;
        *exec_errno = e;
        return 0;
    }
    *pid = p;
    return 0;
}

static int not_installed(const char *podman, int e)
{
    if (e == ENOENT)
        return silt_err(SILT_EUNSUPPORTED,
                        "podman is not installed (no '%s' in PATH): install the Debian package 'podman' "
                        "(apt-get install podman runc) to run Container sources",
                        podman);
    return silt_err(SILT_EIO, "container: cannot run '%s': %s", podman, strerror(e));
}

/* Waits for `pid` until `deadline_ms` (monotonic); 1 = exited (*status), 0 = still running. */
static int wait_until(pid_t pid, int64_t deadline_ms, int *status)
{
    for (;;) {
        pid_t w = waitpid(pid, status, WNOHANG);
        if (w == pid || (w < 0 && errno != EINTR))
            return 1;
        if (now_ms() >= deadline_ms)
            return 0;
        struct timespec ts = {0, 20 * 1000000};
        nanosleep(&ts, NULL);
    }
}

static void kill_reap(pid_t pid)
{
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
}

/* Runs a short podman command (stdout and stderr to /dev/null unless
 * `errfd` >= 0) and returns its exit status in *code (-1: killed or timed out). */
static int run_aux(char *const *argv, char *const *envp, int errfd, int *code)
{
    *code = -1;
    int nul = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (nul < 0)
        return silt_err(SILT_EIO, "container: /dev/null: %s", strerror(errno));
    pid_t pid;
    int e;
    int rc = spawn(argv, envp, nul, errfd >= 0 ? errfd : nul, &pid, &e);
    close(nul);
    if (rc)
        return rc;
    if (e)
        return not_installed(argv[0], e);
    int status = 0;
    if (!wait_until(pid, now_ms() + SILT_CTR_AUX_TIMEOUT * 1000, &status)) {
        kill_reap(pid);
        return 0;
    }
    if (WIFEXITED(status))
        *code = WEXITSTATUS(status);
    return 0;
}

/* ---- stderr ---------------------------------------------------------------- */

/* The stderr stream of a run: partial line, last lines. */
typedef struct errlog {
    char line[SILT_CTR_LINE + 1];
    size_t len;
    char tail[SILT_CTR_TAIL_LINES][SILT_CTR_LINE + 1];
    size_t ntail; /* lines seen (the last SILT_CTR_TAIL_LINES are kept) */
    silt_report_fn log;
    void *ctx;
} errlog;

static void errlog_line(errlog *l)
{
    l->line[l->len] = '\0';
    l->len = 0;
    if (l->line[0] == '\0')
        return;
    if (l->log)
        l->log(l->ctx, l->line);
    memcpy(l->tail[l->ntail++ % SILT_CTR_TAIL_LINES], l->line, sizeof l->line);
}

static void errlog_feed(errlog *l, const char *buf, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (buf[i] == '\n') {
            errlog_line(l);
        } else if (buf[i] != '\r') {
            if (l->len == SILT_CTR_LINE)
                errlog_line(l); /* a very long line is shown in pieces */
            l->line[l->len++] = buf[i];
        }
    }
}

/* The remembered last lines joined by " | " into out[cap]. */
static void errlog_tail(const errlog *l, char *out, size_t cap)
{
    out[0] = '\0';
    size_t first = l->ntail > SILT_CTR_TAIL_LINES ? l->ntail - SILT_CTR_TAIL_LINES : 0;
    size_t o = 0;
    for (size_t i = first; i < l->ntail && o + 1 < cap; i++) {
        int w = snprintf(out + o, cap - o, "%s%s", i > first ? " | " : "", l->tail[i % SILT_CTR_TAIL_LINES]);
        if (w < 0)
            break;
        o += (size_t)w < cap - o ? (size_t)w : cap - o - 1;
    }
}

/* Streams `fd` into `l` while `pid` runs, until it exits (1, *status) or
 * the deadline passes (0). After the exit, what is left in the pipe is
 * drained without blocking: a helper of podman (conmon) may hold it open. */
static int pump_stderr(pid_t pid, int fd, errlog *l, int64_t deadline_ms, int *status,
                       const silt_container_opts *o, int *stop)
{
    bool open_ = true;
    int64_t next_poll = now_ms() + 100;
    for (;;) {
        pid_t w = waitpid(pid, status, WNOHANG);
        if (w == pid || (w < 0 && errno != EINTR))
            break;
        int64_t left = deadline_ms - now_ms();
        if (left <= 0)
            return 0;
        if (o->poll && now_ms() >= next_poll) {
            next_poll = now_ms() + 100;
            if ((*stop = o->poll(o->poll_ctx)) != 0)
                return 0;
        }
        if (!open_) {
            struct timespec ts = {0, 20 * 1000000};
            nanosleep(&ts, NULL);
            continue;
        }
        struct pollfd pfd = {fd, POLLIN, 0};
        int pr = poll(&pfd, 1, left > 100 ? 100 : (int)left);
        if (pr <= 0)
            continue;
        char buf[4096];
        ssize_t n = read(fd, buf, sizeof buf);
        if (n > 0)
            errlog_feed(l, buf, (size_t)n);
        else if (n == 0 || (errno != EINTR && errno != EAGAIN))
            open_ = false;
    }
    if (open_ && fcntl(fd, F_SETFL, O_NONBLOCK) == 0) {
        char buf[4096];
        ssize_t n;
        while ((n = read(fd, buf, sizeof buf)) > 0)
            errlog_feed(l, buf, (size_t)n);
    }
    if (l->len)
        errlog_line(l);
    return 1;
}

/* ---- a run --------------------------------------------------------------- */

/* argv of `podman run`: options, names of the environment, image, command. */
static int run_argv(const silt_container_opts *o, const char *name, const char *outdir, const strv *names,
                    strv *av)
{
    int rc = strv_push(av, strdup(podman_path()));
    const char *fixed[] = {"run", "--rm", "--pull=never", o->host_network ? "--network=host" : "--network=none"};
    for (size_t i = 0; !rc && i < sizeof fixed / sizeof fixed[0]; i++)
        rc = strv_push(av, strdup(fixed[i]));
    if (!rc)
        rc = strv_pushf(av, "--name=", name);
    if (!rc)
        rc = strv_pushf(av, "--volume=", outdir);
    if (!rc) { /* "--volume=HOST:/odf/out" */
        char *v = av->v[av->n - 1];
        size_t l = strlen(v);
        char *nv = realloc(v, l + sizeof ":" SILT_CONTAINER_OUT_DIR);
        if (!nv)
            rc = silt_err(SILT_ENOMEM, "container: out of memory");
        else {
            memcpy(nv + l, ":" SILT_CONTAINER_OUT_DIR, sizeof ":" SILT_CONTAINER_OUT_DIR);
            av->v[av->n - 1] = nv;
        }
    }
    for (size_t i = 0; !rc && i < names->n; i++) /* values come from podman's environment */
        rc = strv_pushf(av, "--env=", names->v[i]);
    if (!rc && o->ncommand)
        rc = strv_pushf(av, "--entrypoint=", o->command[0]);
    if (!rc)
        rc = strv_push(av, strdup(o->image));
    for (size_t i = 1; !rc && i < o->ncommand; i++)
        rc = strv_push(av, strdup(o->command[i]));
    for (size_t i = 0; !rc && i < o->nargs; i++)
        rc = strv_push(av, strdup(o->args[i]));
    return rc;
}

/* Is the image in local storage? */
static int check_image(const char *image, char *const *envp)
{
    char *argv[] = {(char *)podman_path(), "image", "exists", (char *)image, NULL};
    int code;
    int rc = run_aux(argv, envp, -1, &code);
    if (rc)
        return rc;
    if (code == 0)
        return 0;
    if (code == 1)
        return silt_err(SILT_ENOTFOUND,
                        "container image '%s' is not available locally (silt never pulls images: build it, "
                        "or bring it in with podman pull / podman load / podman import)",
                        image);
    return silt_err(SILT_EIO, "container: 'podman image exists %s' failed (status %d)", image, code);
}

/* Stops and removes the container of a run that timed out, then reaps its client. */
static void stop_run(pid_t pid, const char *name, char *const *envp)
{
    char *argv[] = {(char *)podman_path(), "rm", "--force", "--time=0", (char *)name, NULL};
    int code;
    if (run_aux(argv, envp, -1, &code) != 0)
        silt_err_clear();
    int status;
    if (!wait_until(pid, now_ms() + SILT_CTR_REAP_GRACE * 1000, &status))
        kill_reap(pid);
}

/* Contents of the file `dir`/`name` with trailing whitespace removed:
 * *out malloc'd, NULL when the file does not exist. */
static int read_state_file(const char *dir, const char *name, char **out)
{
    *out = NULL;
    char *p = silt_path_join(dir, name, NULL);
    if (!p)
        return silt_err(SILT_ENOMEM, "container: out of memory");
    silt_buf b = SILT_BUF_INIT;
    int rc = 0;
    if (silt_fs_exists(p)) {
        rc = silt_fs_read(p, &b);
        while (!rc && b.len && isspace((unsigned char)b.data[b.len - 1]))
            b.data[--b.len] = '\0';
        if (!rc && !(*out = b.data ? silt_buf_detach(&b) : strdup("")))
            rc = silt_err(SILT_ENOMEM, "container: out of memory");
    }
    silt_buf_free(&b);
    free(p);
    return rc;
}

static int collect(silt_container_result *out, const silt_container_opts *o, const char *outdir)
{
    char *lm = NULL, *more = NULL;
    int rc = read_state_file(outdir, "new-etag", &out->etag);
    if (!rc && out->etag && !*out->etag) { /* an empty file is no ETag */
        free(out->etag);
        out->etag = NULL;
    }
    if (!rc)
        rc = read_state_file(outdir, "new-last-modified", &lm);
    if (!rc && lm && *lm) {
        if (silt_time_parse(lm, &out->last_modified) != 0)
            rc = silt_err(SILT_EINVAL,
                          "container '%s' wrote '%.64s' to ODF_NEW_LAST_MODIFIED_PATH: not an RFC 3339 time",
                          o->image, lm);
        else
            out->has_last_modified = true;
    }
    if (!rc)
        rc = read_state_file(outdir, "new-has-more-data", &more);
    out->has_more = more != NULL;
    struct stat st;
    if (!rc && stat(o->out_path, &st) == 0)
        out->bytes = (uint64_t)st.st_size;
    free(lm);
    free(more);
    return rc;
}

/* Waits for the run, streaming stderr; then judges its exit status. */
static int wait_run(pid_t pid, int errfd, const silt_container_opts *o, const char *name, char *const *envp)
{
    int timeout_s = o->timeout_s > 0 ? o->timeout_s : silt_container_timeout();
    int64_t deadline = now_ms() + (int64_t)timeout_s * 1000;
    errlog *l = calloc(1, sizeof *l);
    if (!l) {
        stop_run(pid, name, envp);
        return silt_err(SILT_ENOMEM, "container: out of memory");
    }
    l->log = o->log;
    l->ctx = o->log_ctx;
    int status = 0, stop = 0;
    bool done = pump_stderr(pid, errfd, l, deadline, &status, o, &stop);
    int rc = 0;
    char tail[3 * SILT_CTR_LINE + 16];
    errlog_tail(l, tail, sizeof tail);
    if (stop) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", silt_error_last()); /* stop_run may touch the error */
        stop_run(pid, name, envp);
        rc = silt_err(stop, "%s", msg);
    } else if (!done) {
        stop_run(pid, name, envp);
        rc = silt_err(SILT_EIO, "container '%s' timed out after %d s and was killed (SILT_CONTAINER_TIMEOUT)",
                      o->image, timeout_s);
    } else if (WIFSIGNALED(status)) {
        rc = silt_err(SILT_EIO, "container '%s': podman was killed by signal %d%s%s", o->image, WTERMSIG(status),
                      *tail ? ": " : "", tail);
    } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
        rc = silt_err(SILT_EIO, "container '%s' exited with status %d: %s", o->image, WEXITSTATUS(status),
                      *tail ? tail : "(nothing on stderr)");
    }
    free(l);
    return rc;
}

/* The run's private paths under o->workdir. */
typedef struct run_paths {
    char *outdir, *conf, *name;
} run_paths;

static int make_paths(run_paths *p, const silt_container_opts *o)
{
    memset(p, 0, sizeof *p);
    p->outdir = silt_path_join(o->workdir, "out", NULL);
    p->conf = silt_path_join(o->workdir, "containers.conf", NULL);
    const char *base = strrchr(o->workdir, '/');
    base = base ? base + 1 : o->workdir;
    p->name = malloc(strlen(base) + 16);
    if (!p->outdir || !p->conf || !p->name)
        return silt_err(SILT_ENOMEM, "container: out of memory");
    char *w = p->name + sprintf(p->name, "silt-fetch-");
    for (const char *s = base; *s; s++)
        *w++ = isalnum((unsigned char)*s) ? *s : '-';
    *w = '\0';
    int rc = silt_fs_mkdirs(p->outdir);
    if (!rc && chmod(p->outdir, 0777) != 0) /* writable by any user the image runs as */
        rc = silt_err(SILT_EIO, "container: %s: %s", p->outdir, strerror(errno));
    return rc;
}

static void free_paths(run_paths *p)
{
    free(p->outdir);
    free(p->conf);
    free(p->name);
}

int silt_container_run(silt_container_result *out, const silt_container_opts *o)
{
    memset(out, 0, sizeof *out);
    if (!o->image || !*o->image)
        return silt_err(SILT_EINVAL, "container: the source names no image");
    const char *user_conf = getenv("CONTAINERS_CONF");
    bool own_conf = !(user_conf && *user_conf);
    run_paths p;
    strv names = {0}, vals = {0}, envp = {0}, av = {0};
    int rc = make_paths(&p, o);
    if (!rc && own_conf)
        rc = silt_fs_write_atomic(p.conf, CONTAINERS_CONF_TEXT, sizeof CONTAINERS_CONF_TEXT - 1, false);
    if (!rc)
        rc = container_env(o, own_conf ? p.conf : NULL, &names, &vals);
    if (!rc)
        rc = podman_envp(&names, &vals, own_conf, &envp);
    if (!rc)
        rc = check_image(o->image, envp.v);
    if (!rc)
        rc = run_argv(o, p.name, p.outdir, &names, &av);
    int outfd = -1, errp[2] = {-1, -1};
    if (!rc && (outfd = open(o->out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0)
        rc = silt_err(SILT_EIO, "container: cannot create '%s': %s", o->out_path, strerror(errno));
    if (!rc && pipe2(errp, O_CLOEXEC) != 0)
        rc = silt_err(SILT_EIO, "container: cannot create a pipe: %s", strerror(errno));
    pid_t pid = -1;
    int e = 0;
    if (!rc)
        rc = spawn(av.v, envp.v, outfd, errp[1], &pid, &e);
    if (errp[1] >= 0)
        close(errp[1]);
    if (!rc && e)
        rc = not_installed(av.v[0], e);
    if (!rc)
        rc = wait_run(pid, errp[0], o, p.name, envp.v);
    if (!rc && fsync(outfd) != 0 && errno != EINVAL)
        rc = silt_err(SILT_EIO, "container: cannot write '%s': %s", o->out_path, strerror(errno));
    if (!rc)
        rc = collect(out, o, p.outdir);
    if (outfd >= 0)
        close(outfd);
    if (errp[0] >= 0)
        close(errp[0]);
    strv_free(&names, false);
    strv_free(&vals, true);
    strv_free(&envp, true);
    strv_free(&av, false);
    free_paths(&p);
    return rc;
}
