/* progress.c — the progress line of long commands and their Ctrl-C.
 *
 * A command hands cli_progress_fn (with a cli_progress) to the library as
 * its silt_progress_fn. The line is drawn on stderr only when stderr is a
 * terminal and --quiet was not given: one line rewritten in place ("\r",
 * then erase to the end of the line), at most ten times a second (the first
 * time 100 ms after the start, so quick commands never show one), cut to
 * the terminal's width ("PHASE LABEL: done[/total] UNIT, records, bytes[
 * of total], rate, ETA" — the elapsed time instead of the ETA when no
 * total is known), and erased by cli_progress_end (and before any
 * warning, cli_progress_clear). Otherwise nothing of it is ever written.
 * SILT_PROGRESS_INTERVAL_MS changes the 100 ms (0 draws at every report:
 * tests use it to see the line of operations shorter than 100 ms).
 *
 * Ctrl-C: cli_interrupt_catch installs a SIGINT handler that only sets a
 * flag (and restores the default action, so a second Ctrl-C kills at
 * once); cli_progress_fn returns the flag, which asks the library to stop
 * at its next safe point. The command then prints what was committed and
 * exits 130 (EXIT_INTERRUPTED).
 */
#include "cli.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
    (void)sig;
    interrupted = 1;
}

void cli_interrupt_catch(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sa.sa_flags = SA_RESETHAND | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
}

bool cli_interrupted(void) { return interrupted != 0; }

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Seconds between draws (and before the first): SILT_PROGRESS_INTERVAL_MS,
 * default 100 (ten a second at most). */
static double interval_s(void)
{
    const char *e = getenv("SILT_PROGRESS_INTERVAL_MS");
    char *end = NULL;
    long ms = e && *e ? strtol(e, &end, 10) : 100;
    if (!e || !*e || *end || ms < 0 || ms > 60000)
        ms = 100;
    return (double)ms / 1000.0;
}

void cli_progress_begin(cli_progress *p, const cli_ctx *c, const char *label)
{
    memset(p, 0, sizeof *p);
    p->on = !c->quiet && isatty(STDERR_FILENO);
    p->interval = interval_s();
    snprintf(p->label, sizeof p->label, "%s", label ? label : "");
    p->t0 = p->last = now_s();
}

/* "1.5 MiB" */
static void fmt_bytes(double b, char *out, size_t cap)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    size_t u = 0;
    while (b >= 1024 && u + 1 < sizeof units / sizeof units[0]) {
        b /= 1024;
        u++;
    }
    snprintf(out, cap, u ? "%.1f %s" : "%.0f %s", b, units[u]);
}

static void fmt_eta(double s, char *out, size_t cap)
{
    long t = (long)(s + 0.5);
    if (t >= 3600)
        snprintf(out, cap, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else if (t >= 60)
        snprintf(out, cap, "%ld:%02ld", t / 60, t % 60);
    else
        snprintf(out, cap, "%lds", t);
}

/* The text of the line for the counters in p->snap. */
static void render(const cli_progress *p, double elapsed, char *line, size_t cap)
{
    const silt_progress *s = &p->snap;
    size_t o = 0;
#define ADD(...)                                                                  \
    do {                                                                          \
        int w_ = snprintf(line + o, o < cap ? cap - o : 0, __VA_ARGS__);          \
        if (w_ > 0)                                                               \
            o = o + (size_t)w_ < cap ? o + (size_t)w_ : cap - 1;                  \
    } while (0)
    ADD("%s%s%s: ", s->phase ? s->phase : "", p->label[0] ? " " : "", p->label);
    const char *unit = s->unit ? s->unit : "items";
    /* unit "": nothing is counted, only bytes (a Parquet export) */
    const char *sep = unit[0] ? ", " : "";
    if (unit[0] && s->total)
        ADD("%llu/%llu %s", (unsigned long long)s->done, (unsigned long long)s->total, unit);
    else if (unit[0])
        ADD("%llu %s", (unsigned long long)s->done, unit);
    if (s->records)
        ADD(", %llu records", (unsigned long long)s->records);
    if (s->removed)
        ADD(", %llu deleted", (unsigned long long)s->removed);
    char b1[32], b2[32];
    if (!unit[0] && !s->bytes && !s->total_bytes) {
        ADD("running"); /* nothing counted or written yet */
    } else if (s->bytes || s->total_bytes || !unit[0]) {
        fmt_bytes((double)s->bytes, b1, sizeof b1);
        if (s->total_bytes) {
            fmt_bytes((double)s->total_bytes, b2, sizeof b2);
            ADD("%s%s of %s", sep, b1, b2);
        } else {
            ADD("%s%s", sep, b1);
        }
    }
    if (elapsed > 0 && s->bytes) {
        fmt_bytes((double)s->bytes / elapsed, b1, sizeof b1);
        ADD(", %s/s", b1);
    } else if (elapsed > 0 && s->done) {
        ADD(", %.1f %s/s", (double)s->done / elapsed, unit);
    }
    double frac = s->total_bytes && s->bytes ? (double)s->bytes / (double)s->total_bytes
                  : s->total && s->done   ? (double)s->done / (double)s->total
                                          : 0;
    if (frac > 0 && frac < 1) {
        fmt_eta(elapsed / frac - elapsed, b1, sizeof b1);
        ADD(", ETA %s", b1);
    } else if (!s->total && !s->total_bytes) { /* no end known: how long so far */
        fmt_eta(elapsed, b1, sizeof b1);
        ADD(", %s elapsed", b1);
    }
    if (p->item[0])
        ADD(" [%s]", p->item);
#undef ADD
}

static int term_width(void)
{
    struct winsize w;
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 10)
        return w.ws_col;
    return 80;
}

static void draw(cli_progress *p, double t)
{
    char line[512];
    render(p, t - p->t0, line, sizeof line);
    int width = term_width() - 1; /* never the last column: no wrap */
    if ((int)strlen(line) > width)
        line[width > 0 ? width : 0] = '\0';
    fprintf(stderr, "\r%s\033[K", line);
    fflush(stderr);
    p->drawn = true;
    p->last = t;
}

int cli_progress_fn(void *ctx, const silt_progress *s)
{
    cli_progress *p = ctx;
    p->snap = *s;
    p->snap.item = NULL;
    snprintf(p->item, sizeof p->item, "%s", s->item ? s->item : "");
    p->seen = true;
    if (p->on) {
        double t = now_s();
        if (t - p->last >= p->interval)
            draw(p, t);
    }
    return interrupted != 0;
}

void cli_progress_clear(cli_progress *p)
{
    if (p && p->drawn) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
        p->drawn = false;
    }
}

void cli_progress_end(cli_progress *p)
{
    cli_progress_clear(p);
}
