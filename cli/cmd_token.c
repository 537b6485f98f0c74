/* cmd_token.c — `silt token create|list|revoke`: the bearer tokens of
 * `silt serve` (public API only: silt_token_*).
 *
 * Output (stable, tested by tests/integration/test_tokens.sh):
 *   create:  the secret, one line on stdout; on stderr "silt: token NAME
 *            created: store its secret now, it is not shown again";
 *            --json {"name","secret","scope","datasets","created","expires"}
 *   list:    a table NAME SCOPE DATASETS CREATED EXPIRES LAST USED (patterns
 *            joined by ",", "all" for none, "never" for no time); --json an
 *            array of {"name","scope","datasets","created","expires",
 *            "lastUsed"} (null for no time). Never a secret or a hash.
 *   revoke:  "revoked token NAME"; --json {"name","revoked":true}
 * Usage errors (exit 2): unknown option or subcommand, missing or extra
 * arguments, two different scopes, an unknown --scope, --expires-days not a
 * positive integer. A bad name, a taken name, an unknown token: exit 1.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void print_json(json_t *j) { cli_json_print(j); }

static json_t *patterns_json(const silt_token_info *t)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < t->ndatasets; i++)
        json_array_append_new(a, json_string(t->datasets[i]));
    return a;
}

static const char *or_null(const char *s)
{
    return s[0] ? s : NULL;
}

/* "--expires-days N": a positive decimal integer. */
static int parse_days(const char *s, int64_t *out)
{
    if (!s || *s < '1' || *s > '9' || strlen(s) > 9)
        return -1;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (*end || v <= 0)
        return -1;
    *out = v;
    return 0;
}

typedef struct create_args {
    const char *name;
    silt_scope scope;
    const char **patterns;
    size_t npatterns;
    int64_t days;
} create_args;

static int set_scope(create_args *a, bool *have, silt_scope s)
{
    if (*have && a->scope != s)
        return cli_usage("token create: give one scope (--read, --write or --admin)");
    *have = true;
    a->scope = s;
    return 0;
}

/* Parses the arguments of `token create` (argv[0] is "create"). */
static int create_parse(create_args *a, int argc, char **argv)
{
    bool have_scope = false;
    a->scope = SILT_SCOPE_READ;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        int st = 0;
        if (strcmp(o, "--read") == 0)
            st = set_scope(a, &have_scope, SILT_SCOPE_READ);
        else if (strcmp(o, "--write") == 0)
            st = set_scope(a, &have_scope, SILT_SCOPE_WRITE);
        else if (strcmp(o, "--admin") == 0)
            st = set_scope(a, &have_scope, SILT_SCOPE_ADMIN);
        else if (strcmp(o, "--scope") == 0 || strcmp(o, "--dataset") == 0 || strcmp(o, "--expires-days") == 0) {
            if (i + 1 >= argc)
                return cli_usage("token create: %s needs a value", o);
            const char *v = argv[++i];
            silt_scope s;
            if (strcmp(o, "--dataset") == 0)
                a->patterns[a->npatterns++] = v;
            else if (strcmp(o, "--expires-days") == 0 && parse_days(v, &a->days) < 0)
                return cli_usage("token create: --expires-days needs a positive whole number of days, not '%s'", v);
            else if (strcmp(o, "--scope") == 0 && silt_scope_parse(&s, v) < 0)
                return cli_usage("token create: unknown scope '%s' (read, write or admin)", v);
            else if (strcmp(o, "--scope") == 0)
                st = set_scope(a, &have_scope, s);
        } else if (o[0] == '-' && o[1])
            return cli_usage("token create: unknown option '%s'", o);
        else if (!a->name)
            a->name = o;
        else
            return cli_usage("token create: unexpected argument '%s'", o);
        if (st)
            return st;
    }
    if (!a->name)
        return cli_usage("token create needs a NAME");
    return 0;
}

static int token_create(cli_ctx *c, int argc, char **argv)
{
    create_args a = {0};
    a.patterns = calloc((size_t)argc + 1, sizeof *a.patterns);
    if (!a.patterns)
        return cli_fail_code(SILT_ENOMEM, "out of memory");
    int st = create_parse(&a, argc, argv);
    silt_workspace *ws = NULL;
    if (st == 0)
        st = cli_open_workspace(c, &ws);
    char *secret = NULL;
    silt_token_info info;
    if (st == 0 &&
        silt_token_create(&secret, &info, ws, a.name, a.scope, (const char *const *)a.patterns, a.npatterns, a.days) < 0)
        st = cli_fail(NULL);
    if (st == 0) {
        if (c->json)
            print_json(json_pack("{s:s,s:s,s:s,s:o,s:s,s:s?}", "name", info.name, "secret", secret, "scope",
                                 silt_scope_name(info.scope), "datasets", patterns_json(&info), "created",
                                 info.created, "expires", or_null(info.expires)));
        else
            printf("%s\n", secret);
        fflush(stdout);
        fprintf(stderr, "silt: token %s created: store its secret now, it is not shown again\n", info.name);
        silt_token_info_clear(&info);
        memset(secret, 0, strlen(secret));
    }
    free(secret);
    free(a.patterns);
    silt_workspace_free(ws);
    return st;
}

/* Patterns joined by ",", or "all". Caller frees. */
static char *patterns_text(const silt_token_info *t)
{
    if (t->ndatasets == 0)
        return strdup("all");
    size_t len = 1;
    for (size_t i = 0; i < t->ndatasets; i++)
        len += strlen(t->datasets[i]) + 1;
    char *s = malloc(len);
    if (!s)
        return NULL;
    s[0] = '\0';
    for (size_t i = 0; i < t->ndatasets; i++) {
        if (i)
            strcat(s, ",");
        strcat(s, t->datasets[i]);
    }
    return s;
}

static int width(int w, const char *s)
{
    int n = (int)strlen(s);
    return n > w ? n : w;
}

static int print_table(const silt_token_info *v, size_t n)
{
    char **ds = calloc(n + 1, sizeof *ds);
    if (!ds)
        return cli_fail_code(SILT_ENOMEM, "out of memory");
    int w[5] = {4, 5, 8, 7, 7}; /* NAME SCOPE DATASETS CREATED EXPIRES */
    for (size_t i = 0; i < n; i++) {
        if (!(ds[i] = patterns_text(&v[i]))) {
            for (size_t j = 0; j < i; j++)
                free(ds[j]);
            free(ds);
            return cli_fail_code(SILT_ENOMEM, "out of memory");
        }
        w[0] = width(w[0], v[i].name);
        w[1] = width(w[1], silt_scope_name(v[i].scope));
        w[2] = width(w[2], ds[i]);
        char t[CLI_TIME_MAX];
        w[3] = width(w[3], cli_time(t, v[i].created));
        w[4] = width(w[4], v[i].expires[0] ? cli_time(t, v[i].expires) : "never");
    }
    printf("%-*s  %-*s  %-*s  %-*s  %-*s  %s\n", w[0], "NAME", w[1], "SCOPE", w[2], "DATASETS", w[3], "CREATED",
           w[4], "EXPIRES", "LAST USED");
    for (size_t i = 0; i < n; i++) {
        char t1[CLI_TIME_MAX], t2[CLI_TIME_MAX], t3[CLI_TIME_MAX];
        printf("%-*s  %-*s  %-*s  %-*s  %-*s  %s\n", w[0], v[i].name, w[1], silt_scope_name(v[i].scope), w[2], ds[i],
               w[3], cli_time(t1, v[i].created), w[4], v[i].expires[0] ? cli_time(t2, v[i].expires) : "never",
               v[i].last_used[0] ? cli_time(t3, v[i].last_used) : "never");
        free(ds[i]);
    }
    free(ds);
    return EXIT_OK;
}

static int token_list(cli_ctx *c, int argc, char **argv)
{
    if (argc > 1)
        return cli_usage("token list: unexpected argument '%s'", argv[1]);
    silt_workspace *ws;
    if (cli_open_workspace(c, &ws))
        return EXIT_FAIL;
    silt_token_info *v = NULL;
    size_t n = 0;
    int st = EXIT_OK;
    if (silt_token_list(&v, &n, ws) < 0) {
        st = cli_fail(NULL);
    } else if (c->json) {
        json_t *arr = json_array();
        for (size_t i = 0; arr && i < n; i++)
            json_array_append_new(arr, json_pack("{s:s,s:s,s:o,s:s,s:s?,s:s?}", "name", v[i].name, "scope",
                                                 silt_scope_name(v[i].scope), "datasets", patterns_json(&v[i]),
                                                 "created", v[i].created, "expires", or_null(v[i].expires),
                                                 "lastUsed", or_null(v[i].last_used)));
        print_json(arr);
    } else {
        st = print_table(v, n);
    }
    silt_token_infos_free(v, n);
    silt_workspace_free(ws);
    return st;
}

static int token_revoke(cli_ctx *c, int argc, char **argv)
{
    const char *name = NULL;
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-' && argv[i][1])
            return cli_usage("token revoke: unknown option '%s'", argv[i]);
        if (name)
            return cli_usage("token revoke: unexpected argument '%s'", argv[i]);
        name = argv[i];
    }
    if (!name)
        return cli_usage("token revoke needs a NAME");
    silt_workspace *ws;
    if (cli_open_workspace(c, &ws))
        return EXIT_FAIL;
    int st = EXIT_OK;
    if (silt_token_revoke(ws, name) < 0)
        st = cli_fail(NULL);
    else if (c->json)
        print_json(json_pack("{s:s,s:b}", "name", name, "revoked", 1));
    else
        printf("revoked token %s\n", name);
    silt_workspace_free(ws);
    return st;
}

int cmd_token(cli_ctx *c, int argc, char **argv)
{
    if (argc < 1)
        return cli_usage("token needs a subcommand: create | list | revoke");
    if (strcmp(argv[0], "create") == 0)
        return token_create(c, argc, argv);
    if (strcmp(argv[0], "list") == 0)
        return token_list(c, argc, argv);
    if (strcmp(argv[0], "revoke") == 0)
        return token_revoke(c, argc, argv);
    return cli_usage("unknown token subcommand '%s'", argv[0]);
}
