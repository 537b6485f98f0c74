/* router.c — request targets and route matching, with no libmicrohttpd:
 * the fuzz target (tests/fuzz/fuzz_router.c) drives exactly this code.
 *
 * The raw path is split on '/' BEFORE percent-decoding, so an encoded
 * slash (%2F, as the Foundry client sends file paths and branch names)
 * stays inside its segment, while a raw '/' separates segments. Segments
 * that decode to "." or "..", hold a NUL byte or invalid UTF-8, and
 * malformed escapes are refused here, so no handler ever sees them.
 */
#include "http.h"
#include "ui.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int srv_percent_decode(char *s, bool plus_is_space)
{
    char *w = s;
    for (const char *p = s; *p; p++) {
        if (*p == '%') {
            int hi = hexval((unsigned char)p[1]), lo = hi < 0 ? -1 : hexval((unsigned char)p[2]);
            if (hi < 0 || lo < 0)
                return SILT_EINVAL;
            int c = hi * 16 + lo;
            if (c == 0)
                return SILT_EINVAL;
            *w++ = (char)c;
            p += 2;
        } else if (*p == '+' && plus_is_space) {
            *w++ = ' ';
        } else {
            *w++ = *p;
        }
    }
    *w = '\0';
    return 0;
}

/* Strict UTF-8 (no overlongs, no surrogates, <= U+10FFFF). */
static bool utf8_valid(const unsigned char *s)
{
    while (*s) {
        unsigned c = *s;
        size_t n;
        unsigned min;
        if (c < 0x80) {
            s++;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            n = 1, min = 0x80, c &= 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            n = 2, min = 0x800, c &= 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            n = 3, min = 0x10000, c &= 0x07;
        } else {
            return false;
        }
        for (size_t i = 1; i <= n; i++) {
            if ((s[i] & 0xC0) != 0x80)
                return false;
            c = (c << 6) | (s[i] & 0x3F);
        }
        if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
            return false;
        s += n + 1;
    }
    return true;
}

void srv_target_clear(srv_target *t)
{
    free(t->text);
    t->text = NULL;
    t->text_len = t->text_cap = 0;
    t->nseg = t->nargs = 0; /* the arrays hold nothing beyond the counts (4.6 KiB not cleared per request) */
}

/* A NUL-terminated copy of s[0..n) in t->text (sized by srv_target_parse
 * for every copy it makes, so it never runs out). */
static char *dup_range(srv_target *t, const char *s, size_t n)
{
    if (t->text_len + n + 1 > t->text_cap)
        return NULL;
    char *d = t->text + t->text_len;
    memcpy(d, s, n);
    d[n] = '\0';
    t->text_len += n + 1;
    return d;
}

static int add_segment(srv_target *t, const char *s, size_t n)
{
    if (n == 0)
        return 0;
    if (t->nseg >= SRV_MAX_SEGMENTS)
        return SILT_EINVAL;
    char *seg = dup_range(t, s, n);
    if (!seg)
        return SILT_ENOMEM;
    if (srv_percent_decode(seg, false) < 0 || !utf8_valid((unsigned char *)seg) || strcmp(seg, ".") == 0 ||
        strcmp(seg, "..") == 0)
        return SILT_EINVAL;
    t->segments[t->nseg++] = seg;
    return 0;
}

static int add_arg(srv_target *t, const char *s, size_t n)
{
    if (n == 0)
        return 0;
    if (t->nargs >= SRV_MAX_ARGS)
        return SILT_EINVAL;
    const char *eq = memchr(s, '=', n);
    size_t klen = eq ? (size_t)(eq - s) : n;
    char *k = dup_range(t, s, klen);
    char *v = eq ? dup_range(t, eq + 1, n - klen - 1) : dup_range(t, "", 0);
    if (!k || !v)
        return SILT_ENOMEM;
    if (srv_percent_decode(k, true) < 0 || srv_percent_decode(v, true) < 0 || !utf8_valid((unsigned char *)k) ||
        !utf8_valid((unsigned char *)v))
        return SILT_EINVAL;
    t->args[t->nargs].key = k;
    t->args[t->nargs].value = v;
    t->nargs++;
    return 0;
}

int srv_target_parse(srv_target *t, const char *raw_path, const char *raw_query)
{
    t->nseg = t->nargs = 0;
    const char *p = raw_path ? raw_path : "";
    /* one buffer holds every decoded segment, key and value: a segment
     * takes at most its length + 1, an argument its length + 2 */
    size_t plen = strlen(p), qlen = raw_query ? strlen(raw_query) : 0;
    t->text_len = 0;
    t->text_cap = 2 * (plen + qlen) + 4;
    t->text = malloc(t->text_cap);
    if (!t->text) {
        t->text_cap = 0;
        return SILT_ENOMEM;
    }
    int rc = 0;
    while (rc == 0 && *p) {
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        rc = add_segment(t, p, n);
        p += n;
        if (*p == '/')
            p++;
    }
    const char *q = raw_query;
    while (rc == 0 && q && *q) {
        const char *e = strchr(q, '&');
        size_t n = e ? (size_t)(e - q) : strlen(q);
        rc = add_arg(t, q, n);
        q += n;
        if (*q == '&')
            q++;
    }
    if (rc < 0)
        srv_target_clear(t);
    return rc;
}

/* ---- matching ------------------------------------------------------------ */

/* Route patterns are split into tokens once per process (compile_all, run
 * by pthread_once on the first match): a token is a (pointer, length)
 * range of the static pattern string, so matching a request allocates
 * nothing and copies nothing but a `*name` capture into `joined`. */

#define MAX_TOKENS 16
#define COMPILED_CAP 128 /* routes of all tables; a route beyond is tokenized when matched */

typedef struct compiled_pattern {
    size_t ntok;
    size_t star; /* index of the `*name` token, ntok when none */
    const char *tok[MAX_TOKENS];
    size_t len[MAX_TOKENS];
} compiled_pattern;

/* Tables are tried in order: those whose prefix is the first segment, one
 * after the other, until one has the path; a table without a prefix only
 * when no prefixed table claimed the first segment. */
static const srv_route_table *const TABLES[] = {&SRV_FOUNDRY_ROUTES, &SRV_ADMIN_ROUTES, &SRV_ODF_CATALOG_ROUTES,
                                                  &SRV_ODF_ROUTES, &SRV_UI_ROUTES, &SRV_UI_ROOT_ROUTES,
                                                  &SRV_BASIC_ROUTES};
#define NTABLES (sizeof TABLES / sizeof TABLES[0])

static compiled_pattern g_compiled[COMPILED_CAP];
static size_t g_first[NTABLES]; /* index in g_compiled of each table's first route */
static size_t g_ncompiled;
static pthread_once_t g_compile_once = PTHREAD_ONCE_INIT;

/* Splits a pattern on '/' (empty tokens skipped, at most MAX_TOKENS). */
static void compile_pattern(const char *pattern, compiled_pattern *c)
{
    c->ntok = 0;
    for (const char *p = pattern; *p && c->ntok < MAX_TOKENS;) {
        size_t n = strcspn(p, "/");
        if (n) {
            c->tok[c->ntok] = p;
            c->len[c->ntok++] = n;
        }
        p += n;
        if (*p == '/')
            p++;
    }
    c->star = c->ntok;
    for (size_t i = 0; i < c->ntok; i++)
        if (c->tok[i][0] == '*')
            c->star = i;
}

static void compile_all(void)
{
    size_t k = 0;
    for (size_t ti = 0; ti < NTABLES; ti++) {
        g_first[ti] = k;
        for (size_t i = 0; i < TABLES[ti]->n && k < COMPILED_CAP; i++, k++)
            compile_pattern(TABLES[ti]->routes[i].pattern, &g_compiled[k]);
    }
    g_ncompiled = k;
}

/* The compiled pattern of route i of table ti: the table's, or `tmp` filled now. */
static const compiled_pattern *pattern_of(size_t ti, size_t i, compiled_pattern *tmp)
{
    size_t k = g_first[ti] + i;
    if (k < g_ncompiled && (ti + 1 == NTABLES || k < g_first[ti + 1]))
        return &g_compiled[k];
    compile_pattern(TABLES[ti]->routes[i].pattern, tmp);
    return tmp;
}

static bool token_is(const compiled_pattern *c, size_t i, const char *seg)
{
    return strncmp(c->tok[i], seg, c->len[i]) == 0 && seg[c->len[i]] == '\0';
}

/* Matches segments [0, nseg) against a pattern; fills captures. */
static bool match_tokens(const compiled_pattern *c, const srv_target *t, const char **params, size_t *nparams,
                         char *joined, size_t joined_cap)
{
    size_t ntok = c->ntok;
    if (c->star == ntok ? t->nseg != ntok : t->nseg < ntok)
        return false;
    /* literals first: most patterns fail on one, before any capture is joined */
    for (size_t i = 0, s = 0; i < ntok; i++) {
        char k = c->tok[i][0];
        if (k != ':' && k != '*' && !token_is(c, i, t->segments[s]))
            return false;
        s += k == '*' ? t->nseg - ntok + 1 : 1;
    }
    size_t np = 0;
    size_t extra = t->nseg - ntok; /* segments the star takes beyond one */
    for (size_t i = 0, s = 0; i < ntok; i++) {
        char k = c->tok[i][0];
        if (k == ':') {
            params[np++] = t->segments[s++];
        } else if (k == '*') {
            size_t used = 0;
            for (size_t j = s; j <= s + extra; j++) {
                size_t l = strlen(t->segments[j]);
                if (used + l + 2 > joined_cap)
                    return false;
                if (j > s)
                    joined[used++] = '/';
                memcpy(joined + used, t->segments[j], l);
                used += l;
            }
            joined[used] = '\0';
            params[np++] = joined;
            s += extra + 1;
        } else {
            s++;
        }
    }
    *nparams = np;
    return true;
}

srv_match_result srv_route_match(srv_method m, const srv_target *t, const srv_route **route,
                                 const char **params, size_t *nparams, char *joined, size_t joined_cap,
                                 srv_family *family, unsigned *allowed)
{
    *route = NULL;
    *nparams = 0;
    *allowed = 0;
    *family = SRV_FAMILY_PLAIN;
    pthread_once(&g_compile_once, compile_all);
    const char *first = t->nseg ? t->segments[0] : "";
    bool claimed = false;
    for (size_t ti = 0; ti < NTABLES; ti++) {
        const srv_route_table *tab = TABLES[ti];
        if (tab->prefix ? strcmp(tab->prefix, first) != 0 : claimed)
            continue;
        claimed = true;
        *family = tab->family;
        for (size_t i = 0; i < tab->n; i++) {
            const srv_route *r = &tab->routes[i];
            compiled_pattern tmp;
            const compiled_pattern *c = pattern_of(ti, i, &tmp);
            const char *p[8];
            size_t np = 0;
            if (!match_tokens(c, t, p, &np, joined, joined_cap))
                continue;
            unsigned ms = r->methods | ((r->methods & SRV_GET) ? SRV_HEAD : 0);
            if (!(ms & (unsigned)m)) {
                *allowed |= ms;
                continue;
            }
            *route = r;
            memcpy((void *)params, p, np * sizeof *p);
            *nparams = np;
            return SRV_MATCHED;
        }
    }
    return *allowed ? SRV_BAD_METHOD : SRV_NO_ROUTE;
}
