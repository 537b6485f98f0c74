/* tokens.c — API tokens of `silt serve`: the tokens file `.silt/tokens.json`
 * (format in tokens.h), `silt token create|list|revoke`, and the cached,
 * thread-safe token set the server authenticates every request with.
 *
 * Invariants:
 *  - a secret is never stored, logged or put in an error message; only its
 *    SHA-256 is kept. Secrets are "silt_" + base64url (no padding) of 32
 *    bytes from getrandom(2).
 *  - tokens.json is only ever written whole, atomically (temp file created
 *    0600 in .silt/, fsync, rename, fsync of the directory), by a
 *    read-modify-write under the flock of .silt/tokens.lock; a file with any
 *    group/other permission bit is refused by every reader.
 *  - silt_token_set_check compares the hash of the presented secret with
 *    every stored hash (CRYPTO_memcmp, no early exit), and writes the file
 *    at most once a minute per token (last use), never per request.
 */
#include "ops/tokens.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <jansson.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/error.h"
#include "util/fsutil.h"
#include "util/timeutil.h"

#define SECRET_PREFIX "silt_"
#define SECRET_BYTES 32
#define SECRET_B64_LEN 43 /* ceil(32 * 8 / 6) */
#define PATTERN_MAX 255
#define MAX_DAYS 36500
#define TIME_MAX 253402300799LL /* 9999-12-31T23:59:59Z */
#define LAST_USED_EVERY 60      /* seconds between two recorded uses of a token */

/* ---- names, scopes, patterns ---------------------------------------------- */

static const char *const SCOPE_NAMES[] = {NULL, "read", "write", "admin"};

int silt_scope_parse(silt_scope *out, const char *name)
{
    for (int i = SILT_SCOPE_READ; i <= SILT_SCOPE_ADMIN; i++) {
        if (name && strcmp(name, SCOPE_NAMES[i]) == 0) {
            *out = (silt_scope)i;
            return 0;
        }
    }
    return silt_err(SILT_EINVAL, "unknown scope '%s' (read, write or admin)", name ? name : "");
}

const char *silt_scope_name(silt_scope s)
{
    return s >= SILT_SCOPE_READ && s <= SILT_SCOPE_ADMIN ? SCOPE_NAMES[s] : "?";
}

/* s, or "" when it holds a character that would break a one-line message. */
static const char *shown(const char *s)
{
    for (const char *p = s ? s : ""; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            return "";
    return s ? s : "";
}

bool silt_token_name_ok(const char *name)
{
    size_t n = name ? strlen(name) : 0;
    if (n < 1 || n > SILT_TOKEN_NAME_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
              c == '-'))
            return false;
    }
    return true;
}

bool silt_token_pattern_ok(const char *pattern)
{
    size_t n = pattern ? strlen(pattern) : 0;
    if (n < 1 || n > PATTERN_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)pattern[i] < 0x20 || (unsigned char)pattern[i] > 0x7e)
            return false;
    return true;
}

bool silt_token_allows(const silt_token_info *t, const char *dataset_name)
{
    if (!t || !dataset_name)
        return false;
    if (t->ndatasets == 0)
        return true;
    for (size_t i = 0; i < t->ndatasets; i++)
        if (t->datasets[i] && fnmatch(t->datasets[i], dataset_name, 0) == 0)
            return true;
    return false;
}

/* ---- the file's text ------------------------------------------------------- */

static void tok_free(silt_tok *t)
{
    for (size_t i = 0; i < t->ndatasets; i++)
        free(t->datasets[i]);
    free(t->datasets);
    t->datasets = NULL;
    t->ndatasets = 0;
}

void silt_tokfile_free(silt_tokfile *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->n; i++)
        tok_free(&f->v[i]);
    free(f->v);
    f->v = NULL;
    f->n = 0;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* A time field: RFC 3339 text, kept as whole seconds. */
static int parse_time(int64_t *out, const json_t *v)
{
    silt_time t;
    const char *s = json_string_value(v);
    if (!s || silt_time_parse(s, &t) < 0 || t.sec < 0 || t.sec > TIME_MAX)
        return -1;
    *out = t.sec;
    return 0;
}

/* An optional time: null / absent -> *has false. */
static int parse_opt_time(bool *has, int64_t *out, const json_t *v)
{
    *has = false;
    if (!v || json_is_null(v))
        return 0;
    if (parse_time(out, v) < 0)
        return -1;
    *has = true;
    return 0;
}

static int parse_patterns(silt_tok *t, const json_t *arr, const char *path, size_t k)
{
    if (!json_is_array(arr))
        return silt_err(SILT_EINVAL, "%s: token %zu: 'datasets' must be an array of patterns", path, k);
    size_t n = json_array_size(arr);
    t->datasets = n ? calloc(n, sizeof *t->datasets) : NULL;
    if (n && !t->datasets)
        return silt_err(SILT_ENOMEM, "%s: out of memory", path);
    for (size_t i = 0; i < n; i++) {
        const char *p = json_string_value(json_array_get(arr, i));
        if (!p || json_string_length(json_array_get(arr, i)) != strlen(p) || !silt_token_pattern_ok(p))
            return silt_err(SILT_EINVAL,
                            "%s: token %zu: dataset pattern %zu must be 1..%d printable ASCII characters", path, k,
                            i + 1, PATTERN_MAX);
        if (!(t->datasets[i] = strdup(p)))
            return silt_err(SILT_ENOMEM, "%s: out of memory", path);
        t->ndatasets = i + 1;
    }
    return 0;
}

static int parse_hash(uint8_t *out, const json_t *v)
{
    const char *s = json_string_value(v);
    if (!s || strlen(s) != 2 * SILT_TOKEN_HASH_LEN)
        return -1;
    for (size_t i = 0; i < SILT_TOKEN_HASH_LEN; i++) {
        int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

static const char *const TOKEN_KEYS[] = {"name", "sha256", "scope", "datasets", "created", "expires", "lastUsed", NULL};

static int check_keys(const json_t *o, const char *const *keys, const char *path, const char *what)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)o, key, v)
    {
        size_t i = 0;
        while (keys[i] && strcmp(keys[i], key) != 0)
            i++;
        if (!keys[i])
            return silt_err(SILT_EINVAL, "%s: %s: unknown key '%.64s'", path, what, shown(key));
    }
    return 0;
}

/* One entry of "tokens" (k: 1-based, for messages). */
static int parse_token(silt_tok *t, const json_t *o, const char *path, size_t k)
{
    char what[32];
    snprintf(what, sizeof what, "token %zu", k);
    if (!json_is_object(o))
        return silt_err(SILT_EINVAL, "%s: %s must be an object", path, what);
    int rc = check_keys(o, TOKEN_KEYS, path, what);
    if (rc < 0)
        return rc;
    const char *name = json_string_value(json_object_get(o, "name"));
    if (!name || !silt_token_name_ok(name))
        return silt_err(SILT_EINVAL, "%s: %s: 'name' must be 1..%d characters of [A-Za-z0-9._-]", path, what,
                        SILT_TOKEN_NAME_MAX);
    memcpy(t->name, name, strlen(name) + 1);
    if (parse_hash(t->hash, json_object_get(o, "sha256")) < 0)
        return silt_err(SILT_EINVAL, "%s: token '%s': 'sha256' must be 64 lowercase hex digits", path, name);
    const char *scope = json_string_value(json_object_get(o, "scope"));
    if (!scope || silt_scope_parse(&t->scope, scope) < 0)
        return silt_err(SILT_EINVAL, "%s: token '%s': 'scope' must be \"read\", \"write\" or \"admin\"", path, name);
    if (parse_time(&t->created, json_object_get(o, "created")) < 0)
        return silt_err(SILT_EINVAL, "%s: token '%s': 'created' must be an RFC 3339 time", path, name);
    if (parse_opt_time(&t->has_expires, &t->expires, json_object_get(o, "expires")) < 0)
        return silt_err(SILT_EINVAL, "%s: token '%s': 'expires' must be an RFC 3339 time or null", path, name);
    if (parse_opt_time(&t->has_last_used, &t->last_used, json_object_get(o, "lastUsed")) < 0)
        return silt_err(SILT_EINVAL, "%s: token '%s': 'lastUsed' must be an RFC 3339 time or null", path, name);
    return parse_patterns(t, json_object_get(o, "datasets"), path, k);
}

static int parse_root(silt_tokfile *out, const json_t *root, const char *path)
{
    static const char *const ROOT_KEYS[] = {"version", "tokens", NULL};
    if (!json_is_object(root))
        return silt_err(SILT_EINVAL, "%s: not a tokens file (expected a JSON object)", path);
    int rc = check_keys(root, ROOT_KEYS, path, "top level");
    if (rc < 0)
        return rc;
    const json_t *ver = json_object_get(root, "version");
    if (!json_is_integer(ver) || json_integer_value(ver) != 1)
        return silt_err(SILT_EINVAL, "%s: 'version' must be 1", path);
    const json_t *arr = json_object_get(root, "tokens");
    if (!json_is_array(arr))
        return silt_err(SILT_EINVAL, "%s: 'tokens' must be an array", path);
    size_t n = json_array_size(arr);
    out->v = n ? calloc(n, sizeof *out->v) : NULL;
    if (n && !out->v)
        return silt_err(SILT_ENOMEM, "%s: out of memory", path);
    for (size_t i = 0; i < n; i++) {
        out->n = i + 1;
        rc = parse_token(&out->v[i], json_array_get(arr, i), path, i + 1);
        if (rc < 0)
            return rc;
        for (size_t j = 0; j < i; j++)
            if (strcmp(out->v[j].name, out->v[i].name) == 0)
                return silt_err(SILT_EINVAL, "%s: token name '%s' appears twice", path, out->v[i].name);
    }
    return 0;
}

int silt_tokfile_parse(silt_tokfile *out, const char *text, size_t len, const char *path)
{
    out->v = NULL;
    out->n = 0;
    if (len > SILT_TOKENS_FILE_MAX)
        return silt_err(SILT_EINVAL, "%s: larger than %u bytes", path, SILT_TOKENS_FILE_MAX);
    json_error_t e;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &e);
    if (!root)
        return silt_err(SILT_EINVAL, "%s:%d: invalid JSON: %s", path, e.line, e.text);
    int rc = parse_root(out, root, path);
    json_decref(root);
    if (rc < 0)
        silt_tokfile_free(out);
    return rc;
}

static json_t *time_json(bool has, int64_t sec)
{
    if (!has)
        return json_null();
    char buf[40];
    silt_time_format((silt_time){sec, 0}, buf);
    return json_string(buf);
}

static json_t *tok_json(const silt_tok *t)
{
    char hex[2 * SILT_TOKEN_HASH_LEN + 1];
    for (size_t i = 0; i < SILT_TOKEN_HASH_LEN; i++)
        snprintf(hex + 2 * i, 3, "%02x", t->hash[i]);
    json_t *ds = json_array();
    for (size_t i = 0; ds && i < t->ndatasets; i++)
        if (json_array_append_new(ds, json_string(t->datasets[i])) < 0) {
            json_decref(ds);
            ds = NULL;
        }
    if (!ds)
        return NULL;
    return json_pack("{s:s,s:s,s:s,s:o,s:o*,s:o*,s:o*}", "name", t->name, "sha256", hex, "scope",
                     silt_scope_name(t->scope), "datasets", ds, "created", time_json(true, t->created), "expires",
                     time_json(t->has_expires, t->expires), "lastUsed", time_json(t->has_last_used, t->last_used));
}

static int tok_cmp(const void *a, const void *b)
{
    return strcmp(((const silt_tok *)a)->name, ((const silt_tok *)b)->name);
}

int silt_tokfile_format(silt_buf *out, const silt_tokfile *f)
{
    if (f->n > 1)
        qsort(f->v, f->n, sizeof *f->v, tok_cmp);
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < f->n; i++) {
        json_t *o = tok_json(&f->v[i]);
        if (!o || json_array_append_new(arr, o) < 0) {
            json_decref(arr);
            arr = NULL;
        }
    }
    json_t *root = arr ? json_pack("{s:i,s:o}", "version", 1, "tokens", arr) : NULL;
    char *text = root ? json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(root);
    int rc = text && silt_buf_puts(out, text) == 0 && silt_buf_putc(out, '\n') == 0
                 ? 0
                 : silt_err(SILT_ENOMEM, "tokens: out of memory");
    free(text);
    return rc;
}

/* ---- reading and writing the file ----------------------------------------- */

typedef struct tok_paths {
    char *file; /* .silt/tokens.json */
    char *lock; /* .silt/tokens.lock */
} tok_paths;

static int paths_get(tok_paths *p, silt_workspace *ws)
{
    const char *dir = ws ? silt_workspace_path(ws) : NULL;
    if (!dir)
        return silt_err(SILT_EINVAL, "tokens: no workspace");
    p->file = silt_path_join(dir, "tokens.json", NULL);
    p->lock = silt_path_join(dir, "tokens.lock", NULL);
    if (!p->file || !p->lock) {
        free(p->file);
        free(p->lock);
        return silt_err(SILT_ENOMEM, "tokens: out of memory");
    }
    return 0;
}

static void paths_free(tok_paths *p)
{
    free(p->file);
    free(p->lock);
}

/* Checks what fstat says of an open tokens file. */
static int check_stat(const struct stat *st, const char *path)
{
    if (!S_ISREG(st->st_mode))
        return silt_err(SILT_EINVAL, "%s: not a regular file", path);
    if (st->st_mode & 077)
        return silt_err(SILT_EINVAL,
                        "%s: mode %04o is too open: a tokens file must not be accessible by group or others "
                        "(chmod 600)",
                        path, (unsigned)(st->st_mode & 07777));
    if ((uint64_t)st->st_size > SILT_TOKENS_FILE_MAX)
        return silt_err(SILT_EINVAL, "%s: larger than %u bytes", path, SILT_TOKENS_FILE_MAX);
    return 0;
}

static int read_fd(int fd, silt_buf *text, const char *path)
{
    char chunk[8192];
    for (;;) {
        ssize_t r = read(fd, chunk, sizeof chunk);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return silt_err(SILT_EIO, "%s: read failed: %s", path, strerror(errno));
        if (r == 0)
            return 0;
        if (text->len + (size_t)r > SILT_TOKENS_FILE_MAX)
            return silt_err(SILT_EINVAL, "%s: larger than %u bytes", path, SILT_TOKENS_FILE_MAX);
        if (silt_buf_append(text, chunk, (size_t)r) < 0)
            return silt_err(SILT_ENOMEM, "%s: out of memory", path);
    }
}

/* Reads and parses the tokens file of an open fd. */
static int load_fd(silt_tokfile *f, int fd, const struct stat *st, const char *path)
{
    int rc = check_stat(st, path);
    if (rc < 0)
        return rc;
    silt_buf text = SILT_BUF_INIT;
    rc = read_fd(fd, &text, path);
    if (rc == 0)
        rc = silt_tokfile_parse(f, text.data ? text.data : "", text.len, path);
    silt_buf_free(&text);
    return rc;
}

/* Opens tokens.json. Returns the fd (>= 0) with *st filled, -ENOENT-like
 * 1 when the file does not exist (*fd_out -1), or a negative code. */
static int open_file(int *fd_out, struct stat *st, const char *path)
{
    *fd_out = -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        if (errno == ENOENT)
            return 1;
        return silt_err(SILT_EIO, "%s: cannot open: %s", path, strerror(errno));
    }
    if (fstat(fd, st) != 0) {
        int rc = silt_err(SILT_EIO, "%s: cannot stat: %s", path, strerror(errno));
        close(fd);
        return rc;
    }
    *fd_out = fd;
    return 0;
}

/* The whole file (empty when it does not exist). */
static int load_path(silt_tokfile *f, const char *path)
{
    f->v = NULL;
    f->n = 0;
    int fd;
    struct stat st;
    int rc = open_file(&fd, &st, path);
    if (rc != 0)
        return rc > 0 ? 0 : rc;
    rc = load_fd(f, fd, &st, path);
    close(fd);
    return rc;
}

static int save_path(const silt_tokfile *f, const char *path)
{
    silt_buf text = SILT_BUF_INIT;
    int rc = silt_tokfile_format(&text, f);
    if (rc == 0)
        rc = silt_fs_write_atomic_mode(path, text.data, text.len, false, 0600);
    silt_buf_free(&text);
    return rc;
}

static silt_tok *find_name(silt_tokfile *f, const char *name)
{
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->v[i].name, name) == 0)
            return &f->v[i];
    return NULL;
}

/* ---- public info ---------------------------------------------------------- */

void silt_token_info_clear(silt_token_info *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->ndatasets; i++)
        free(t->datasets[i]);
    free(t->datasets);
    memset(t, 0, sizeof *t);
}

void silt_token_infos_free(silt_token_info *v, size_t n)
{
    if (!v)
        return;
    for (size_t i = 0; i < n; i++)
        silt_token_info_clear(&v[i]);
    free(v);
}

static void fmt_time(char *out, bool has, int64_t sec)
{
    out[0] = '\0';
    if (has)
        silt_time_format((silt_time){sec, 0}, out);
}

static int info_from_tok(silt_token_info *out, const silt_tok *t)
{
    memset(out, 0, sizeof *out);
    memcpy(out->name, t->name, sizeof out->name);
    out->scope = t->scope;
    fmt_time(out->created, true, t->created);
    fmt_time(out->expires, t->has_expires, t->expires);
    fmt_time(out->last_used, t->has_last_used, t->last_used);
    if (t->ndatasets) {
        out->datasets = calloc(t->ndatasets, sizeof *out->datasets);
        if (!out->datasets)
            return silt_err(SILT_ENOMEM, "tokens: out of memory");
        for (size_t i = 0; i < t->ndatasets; i++) {
            if (!(out->datasets[i] = strdup(t->datasets[i]))) {
                silt_token_info_clear(out);
                return silt_err(SILT_ENOMEM, "tokens: out of memory");
            }
            out->ndatasets = i + 1;
        }
    }
    return 0;
}

/* ---- create / list / revoke ----------------------------------------------- */

/* SHA-256 fetched from the provider once per process: EVP_sha256() makes
 * every EVP_Digest fetch it again (OpenSSL 3: a locked provider lookup),
 * and silt serve hashes the presented token on every request. Kept for
 * the life of the process; EVP_sha256() if the fetch fails. */
static EVP_MD *g_sha256;
static pthread_once_t g_sha256_once = PTHREAD_ONCE_INIT;

static void sha256_fetch(void) { g_sha256 = EVP_MD_fetch(NULL, "SHA256", NULL); }

static int sha256(uint8_t out[SILT_TOKEN_HASH_LEN], const void *data, size_t len)
{
    pthread_once(&g_sha256_once, sha256_fetch);
    unsigned int n = 0;
    if (EVP_Digest(data, len, out, &n, g_sha256 ? g_sha256 : EVP_sha256(), NULL) != 1 || n != SILT_TOKEN_HASH_LEN)
        return silt_err(SILT_EINTERNAL, "tokens: SHA-256 failed");
    return 0;
}

/* "silt_" + base64url (no padding) of SECRET_BYTES random bytes into out
 * (at least sizeof SECRET_PREFIX + SECRET_B64_LEN bytes). */
static int new_secret(char *out)
{
    static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    uint8_t raw[SECRET_BYTES + 2] = {0};
    int rc = silt_random_bytes(raw, SECRET_BYTES);
    if (rc < 0)
        return rc;
    char *p = out + strlen(SECRET_PREFIX);
    memcpy(out, SECRET_PREFIX, strlen(SECRET_PREFIX));
    size_t k = 0;
    for (size_t i = 0; i < SECRET_BYTES; i += 3) {
        uint32_t v = (uint32_t)raw[i] << 16 | (uint32_t)raw[i + 1] << 8 | raw[i + 2];
        for (int j = 0; j < 4 && k < SECRET_B64_LEN; j++)
            p[k++] = B64[(v >> (18 - 6 * j)) & 63];
    }
    p[k] = '\0';
    OPENSSL_cleanse(raw, sizeof raw);
    return 0;
}

static int check_create_args(const char *name, silt_scope scope, const char *const *patterns, size_t npatterns,
                             int64_t expires_days)
{
    if (!silt_token_name_ok(name))
        return silt_err(SILT_EINVAL, "invalid token name '%.80s': use 1..%d characters of [A-Za-z0-9._-]",
                        shown(name), SILT_TOKEN_NAME_MAX);
    if (scope < SILT_SCOPE_READ || scope > SILT_SCOPE_ADMIN)
        return silt_err(SILT_EINVAL, "token '%s': unknown scope %d", name, (int)scope);
    for (size_t i = 0; i < npatterns; i++)
        if (!patterns || !silt_token_pattern_ok(patterns[i]))
            return silt_err(SILT_EINVAL, "token '%s': dataset pattern '%.80s' must be 1..%d printable ASCII characters",
                            name, shown(patterns ? patterns[i] : NULL), PATTERN_MAX);
    if (expires_days > MAX_DAYS)
        return silt_err(SILT_EINVAL, "token '%s': expires-days must be at most %d", name, MAX_DAYS);
    return 0;
}

/* The entry of a new token (hash of `secret`). */
static int tok_new(silt_tok *t, const char *name, silt_scope scope, const char *const *patterns, size_t npatterns,
                   int64_t expires_days, const char *secret)
{
    memset(t, 0, sizeof *t);
    memcpy(t->name, name, strlen(name) + 1);
    t->scope = scope;
    t->created = silt_time_now().sec;
    t->has_expires = expires_days > 0;
    t->expires = t->has_expires ? t->created + expires_days * 86400 : 0;
    int rc = sha256(t->hash, secret, strlen(secret));
    if (rc < 0)
        return rc;
    t->datasets = npatterns ? calloc(npatterns, sizeof *t->datasets) : NULL;
    if (npatterns && !t->datasets)
        return silt_err(SILT_ENOMEM, "tokens: out of memory");
    for (size_t i = 0; i < npatterns; i++) {
        if (!(t->datasets[i] = strdup(patterns[i])))
            return silt_err(SILT_ENOMEM, "tokens: out of memory");
        t->ndatasets = i + 1;
    }
    return 0;
}

/* Adds the token to the file at p (under its lock). */
static int create_locked(silt_token_info *info_out, const tok_paths *p, const char *name, silt_scope scope,
                         const char *const *patterns, size_t npatterns, int64_t expires_days, const char *secret)
{
    silt_tokfile f;
    int rc = load_path(&f, p->file);
    if (rc < 0)
        return rc;
    silt_tok *grown = NULL;
    if (find_name(&f, name))
        rc = silt_err(SILT_EEXISTS, "token '%s' already exists", name);
    else if (!(grown = realloc(f.v, (f.n + 1) * sizeof *f.v)))
        rc = silt_err(SILT_ENOMEM, "tokens: out of memory");
    if (grown) {
        f.v = grown;
        rc = tok_new(&f.v[f.n], name, scope, patterns, npatterns, expires_days, secret);
        f.n++;
        if (rc == 0 && info_out) /* before save_path sorts the entries */
            rc = info_from_tok(info_out, &f.v[f.n - 1]);
        if (rc == 0)
            rc = save_path(&f, p->file);
        if (rc < 0 && info_out)
            silt_token_info_clear(info_out);
    }
    silt_tokfile_free(&f);
    return rc;
}

int silt_token_create(char **secret_out, silt_token_info *info_out, silt_workspace *ws, const char *name,
                      silt_scope scope, const char *const *patterns, size_t npatterns, int64_t expires_days)
{
    *secret_out = NULL;
    if (info_out)
        memset(info_out, 0, sizeof *info_out);
    int rc = check_create_args(name, scope, patterns, npatterns, expires_days);
    tok_paths p = {0};
    if (rc == 0)
        rc = paths_get(&p, ws);
    if (rc < 0)
        return rc;
    char *secret = malloc(sizeof SECRET_PREFIX + SECRET_B64_LEN);
    rc = secret ? new_secret(secret) : silt_err(SILT_ENOMEM, "tokens: out of memory");
    int lock = rc == 0 ? silt_fs_lock(p.lock, true) : -1;
    if (rc == 0 && lock < 0)
        rc = lock;
    if (rc == 0)
        rc = create_locked(info_out, &p, name, scope, patterns, npatterns, expires_days, secret);
    silt_fs_unlock(lock);
    paths_free(&p);
    if (rc < 0) {
        if (secret)
            OPENSSL_cleanse(secret, sizeof SECRET_PREFIX + SECRET_B64_LEN);
        free(secret);
        return rc;
    }
    *secret_out = secret;
    return 0;
}

int silt_token_list(silt_token_info **out, size_t *n, silt_workspace *ws)
{
    *out = NULL;
    *n = 0;
    tok_paths p;
    int rc = paths_get(&p, ws);
    if (rc < 0)
        return rc;
    silt_tokfile f;
    rc = load_path(&f, p.file);
    paths_free(&p);
    if (rc < 0)
        return rc;
    if (f.n > 1)
        qsort(f.v, f.n, sizeof *f.v, tok_cmp);
    size_t cnt = f.n;
    silt_token_info *v = cnt ? calloc(cnt, sizeof *v) : NULL;
    if (cnt && !v)
        rc = silt_err(SILT_ENOMEM, "tokens: out of memory");
    for (size_t i = 0; rc == 0 && i < cnt; i++)
        rc = info_from_tok(&v[i], &f.v[i]);
    silt_tokfile_free(&f);
    if (rc < 0) {
        silt_token_infos_free(v, cnt);
        return rc;
    }
    *out = v;
    *n = cnt;
    return 0;
}

static int revoke_locked(const tok_paths *p, const char *name)
{
    silt_tokfile f;
    int rc = load_path(&f, p->file);
    if (rc < 0)
        return rc;
    silt_tok *t = find_name(&f, name);
    if (!t) {
        rc = silt_err(SILT_ENOTFOUND, "no token named '%s'", name);
    } else {
        tok_free(t);
        size_t i = (size_t)(t - f.v);
        memmove(t, t + 1, (f.n - i - 1) * sizeof *t);
        f.n--;
        rc = save_path(&f, p->file);
    }
    silt_tokfile_free(&f);
    return rc;
}

int silt_token_revoke(silt_workspace *ws, const char *name)
{
    if (!silt_token_name_ok(name))
        return silt_err(SILT_ENOTFOUND, "no token named '%.80s'", shown(name));
    tok_paths p;
    int rc = paths_get(&p, ws);
    if (rc < 0)
        return rc;
    int lock = silt_fs_lock(p.lock, true);
    rc = lock < 0 ? lock : revoke_locked(&p, name);
    silt_fs_unlock(lock);
    paths_free(&p);
    return rc;
}

/* ---- the server's token set ------------------------------------------------ */

/* What stat says of the file; two equal ids = the same version. */
typedef struct file_id {
    bool exists;
    dev_t dev;
    ino_t ino;
    off_t size;
    mode_t mode;
    struct timespec mtime, ctime;
} file_id;

struct silt_token_set {
    pthread_mutex_t mu; /* guards everything below */
    tok_paths paths;
    bool loaded;      /* id, fd, toks (or err) describe the file's version `id` */
    file_id id;
    int fd;           /* the loaded version, kept open so its inode is not reused; -1 none */
    silt_tokfile toks;
    int err;          /* < 0: that version cannot be used (message in errmsg) */
    char errmsg[512];
};

static file_id id_of(const struct stat *st)
{
    file_id id = {true, st->st_dev, st->st_ino, st->st_size, st->st_mode, st->st_mtim, st->st_ctim};
    return id;
}

static bool id_eq(const file_id *a, const file_id *b)
{
    if (a->exists != b->exists)
        return false;
    return !a->exists || (a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mode == b->mode &&
                          a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec &&
                          a->ctime.tv_sec == b->ctime.tv_sec && a->ctime.tv_nsec == b->ctime.tv_nsec);
}

static void set_drop(silt_token_set *s)
{
    silt_tokfile_free(&s->toks);
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
    s->err = 0;
    s->errmsg[0] = '\0';
    s->loaded = false;
}

/* Loads the current version of the file (s->mu held). A failure is kept
 * for that version: every check fails with it until the file changes. */
static void set_load(silt_token_set *s)
{
    set_drop(s);
    struct stat st;
    int fd;
    int rc = open_file(&fd, &st, s->paths.file);
    s->loaded = true;
    s->id = (file_id){0};
    if (rc == 0) {
        s->id = id_of(&st);
        s->fd = fd;
        rc = load_fd(&s->toks, fd, &st, s->paths.file);
    }
    if (rc < 0) {
        s->err = rc;
        snprintf(s->errmsg, sizeof s->errmsg, "%s", silt_error_last());
        silt_tokfile_free(&s->toks);
    }
}

/* Brings the cache up to date with the file (s->mu held). */
static int set_refresh(silt_token_set *s)
{
    struct stat st;
    file_id now = {0};
    if (stat(s->paths.file, &st) == 0)
        now = id_of(&st);
    else if (errno != ENOENT)
        return silt_err(SILT_EIO, "%s: cannot stat: %s", s->paths.file, strerror(errno));
    if (!s->loaded || !id_eq(&now, &s->id))
        set_load(s);
    return s->err < 0 ? silt_err(s->err, "%s", s->errmsg) : 0;
}

int silt_token_set_open(silt_token_set **out, silt_workspace *ws)
{
    *out = NULL;
    silt_token_set *s = calloc(1, sizeof *s);
    if (!s)
        return silt_err(SILT_ENOMEM, "tokens: out of memory");
    s->fd = -1;
    int rc = paths_get(&s->paths, ws);
    if (rc < 0) {
        free(s);
        return rc;
    }
    if (pthread_mutex_init(&s->mu, NULL) != 0) {
        paths_free(&s->paths);
        free(s);
        return silt_err(SILT_EINTERNAL, "tokens: cannot create a mutex");
    }
    pthread_mutex_lock(&s->mu);
    rc = set_refresh(s);
    pthread_mutex_unlock(&s->mu);
    if (rc < 0) {
        silt_token_set_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

void silt_token_set_free(silt_token_set *s)
{
    if (!s)
        return;
    set_drop(s);
    pthread_mutex_destroy(&s->mu);
    paths_free(&s->paths);
    free(s);
}

/* Index of the token whose hash is h, or -1: every hash is compared, the
 * result is selected without a branch on the comparison. */
static long find_hash(const silt_tokfile *f, const uint8_t h[SILT_TOKEN_HASH_LEN])
{
    size_t found = 0, hit = 0;
    for (size_t i = 0; i < f->n; i++) {
        size_t eq = (size_t)0 - (size_t)(CRYPTO_memcmp(f->v[i].hash, h, SILT_TOKEN_HASH_LEN) == 0);
        found = (found & ~eq) | (i & eq);
        hit |= eq;
    }
    return hit ? (long)found : -1;
}

/* Records `now` as the last use of token `name` with hash h, unless the
 * file already holds a use at least as recent (another process or thread
 * recorded it) or the token is gone. Under the file's lock. */
static int record_use(const tok_paths *p, const char *name, const uint8_t h[SILT_TOKEN_HASH_LEN], int64_t now)
{
    int lock = silt_fs_lock(p->lock, true);
    if (lock < 0)
        return lock;
    silt_tokfile f;
    int rc = load_path(&f, p->file);
    silt_tok *t = rc == 0 ? find_name(&f, name) : NULL;
    if (t && CRYPTO_memcmp(t->hash, h, SILT_TOKEN_HASH_LEN) == 0 && (!t->has_last_used || t->last_used < now)) {
        t->has_last_used = true;
        t->last_used = now;
        rc = save_path(&f, p->file);
    }
    silt_tokfile_free(&f);
    silt_fs_unlock(lock);
    return rc;
}

static int not_found(void)
{
    return silt_err(SILT_ENOTFOUND, "invalid or expired token");
}

int silt_token_set_check(silt_token_set *s, const char *secret, silt_token_info *out)
{
    memset(out, 0, sizeof *out);
    if (!s || !secret)
        return not_found();
    uint8_t h[SILT_TOKEN_HASH_LEN];
    int rc = sha256(h, secret, strlen(secret));
    if (rc < 0)
        return rc;
    int64_t now = silt_time_now().sec;
    char name[SILT_TOKEN_NAME_MAX + 1];
    bool record = false;
    pthread_mutex_lock(&s->mu);
    rc = set_refresh(s);
    long i = rc < 0 ? -1 : find_hash(&s->toks, h);
    silt_tok *t = i >= 0 ? &s->toks.v[i] : NULL;
    if (rc == 0 && (!t || (t->has_expires && now >= t->expires)))
        rc = not_found();
    if (rc == 0) {
        record = !t->has_last_used || now - t->last_used >= LAST_USED_EVERY;
        if (record) { /* in memory at once: other threads do not record it again */
            t->has_last_used = true;
            t->last_used = now;
            memcpy(name, t->name, sizeof name);
        }
        rc = info_from_tok(out, t);
    }
    pthread_mutex_unlock(&s->mu);
    if (rc == 0 && record)
        (void)record_use(&s->paths, name, h, now); /* best effort: retried a minute later */
    OPENSSL_cleanse(h, sizeof h);
    return rc;
}
