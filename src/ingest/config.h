/* config.h — the `config` context of a Source: variables and secrets for
 * templates such as `url: https://host/data?key=${{ config.apiKey }}`.
 *
 * A Source's `config` maps names to values (odf_ValueRefs). Each value is
 *   - a reference `SecretSet:NAME#key` / `VariableSet:NAME#key` (the ODF
 *     string form of ValueRef; the struct form {type, name, path} too), or
 *   - a literal string. resources.c stores a literal as a ValueRef with
 *     type "Literal" and the value in `path` (SILT_CONFIG_LITERAL).
 * Secrets come from environment variables SILT_SECRET_<NAME>_<KEY> (NAME and
 * KEY upper-cased, every non-alphanumeric character turned into '_') or from
 * `<.silt>/secrets.yaml` (`NAME: {key: value, …}`, dotted keys descend into
 * nested mappings), which must not be accessible by group or others (mode
 * 0600 or stricter); the environment wins. Variables likewise come from
 * SILT_VARIABLE_<NAME>_<KEY> or the optional `<.silt>/variables.yaml` (no
 * mode rule).
 *
 * Secret values must never leak: every string that may contain a rendered
 * template (log lines, error messages, anything stored) must go through
 * silt_config_redact / silt_config_redact_error, which replace each resolved
 * secret value (and its URL-encoded form) with "***". Error messages of this
 * module never contain values, only names.
 */
#ifndef SILT_INGEST_CONFIG_H
#define SILT_INGEST_CONFIG_H

#include <stddef.h>

#include "odf/odf_types.h"

#define SILT_CONFIG_LITERAL "Literal"

typedef struct silt_config silt_config;

typedef enum silt_valueref_kind {
    SILT_VREF_LITERAL = 0,
    SILT_VREF_SECRET = 1,
    SILT_VREF_VARIABLE = 2
} silt_valueref_kind;

/* Parses the string form of a config value: "SecretSet:NAME#key",
 * "VariableSet:NAME#key" (the type may also be a full type URI ending in
 * "/SecretSet" or "/VariableSet") or anything else = a literal.
 * On a reference, *name / *path point into `s` with lengths *name_len /
 * *path_len. SILT_EINVAL ("expected TYPE:NAME#key") for a reference without
 * a name or key. */
int silt_config_parse_ref(const char *s, silt_valueref_kind *kind, const char **name,
                          size_t *name_len, const char **path, size_t *path_len);

/* Resolves every entry of `refs` (may be NULL: empty config). `silt_dir` is
 * the workspace's `.silt` directory (secrets.yaml / variables.yaml live
 * there). Errors name the config key and the missing secret, never a value:
 *   "config.apiKey: secret 'ca.bank#apiKey' not found: set
 *    SILT_SECRET_CA_BANK_APIKEY or add it to /w/.silt/secrets.yaml"
 *   "/w/.silt/secrets.yaml: mode 0644 is too open: a secrets file must not be
 *    accessible by group or others (chmod 600)"
 * Caller owns *out (silt_config_free). */
int silt_config_load(silt_config **out, const char *silt_dir, const odf_ValueRefs *refs);
void silt_config_free(silt_config *c);

/* Number of resolved entries, and the i-th name (borrowed). */
size_t silt_config_count(const silt_config *c);
const char *silt_config_key(const silt_config *c, size_t i);

/* Substitutes every template expression `${{ EXPR }}` of `tmpl` (spaces
 * optional). EXPR is one or more alternatives separated by `||`; the first
 * that has a value wins:
 *   config.NAME  the config entry NAME (no value: not in the config)
 *   env.NAME     environment variable NAME of this process (no value: unset)
 *   'text'       a literal (no quote inside), always a value
 *   123, -1.5    a literal number, always a value
 * e.g. `file://${{ env.data_dir || env.workspace_dir }}/${{ env.f || 'a.csv' }}`.
 * A value taken from the environment is added to `c` (when not NULL) as the
 * secret entry "env.NAME": it is redacted by silt_config_redact and sealed
 * in source states like any secret.
 * `what` names the field in errors ("url", "headers[0].value", "command[1]").
 * Errors (SILT_EINVAL), never quoting a value:
 *   "unknown config key 'x' in url" (a lone config.x without a value),
 *   "missing values for variable(s): 'env.a || env.b' in url" (no
 *   alternative has a value),
 *   "invalid template expression 'foo' in url: expected config.NAME,
 *   env.NAME, 'text' or a number", "unterminated template expression in url".
 * *out is malloc'd (caller frees) and may contain secrets: redact before
 * showing it. `c` may be NULL (empty config; environment values are then not
 * remembered for redaction). */
int silt_config_render(silt_config *c, const char *what, const char *tmpl, char **out);

/* malloc'd copy of `text` with every resolved secret value (and its
 * URL-encoded form) replaced by "***"; NULL on out-of-memory. `c` may be NULL. */
char *silt_config_redact(const silt_config *c, const char *text);

/* ---- source state ----------------------------------------------------------
 * A source state is stored in the chain (AddData.newSourceState) and is
 * public; its value (an ETag the server sent, the name of the last file a
 * FilesGlob ingested) may contain a secret, e.g. a token in a file name.
 * Such a value is stored sealed:
 *
 *   SILT_STATE_SEALED_PREFIX + the value with every '$' doubled and every
 *   resolved secret value replaced by "${KEY}" (its URL-encoded form by
 *   "${KEY:url}"), KEY being the config key (bytes other than
 *   [A-Za-z0-9_.-] as %XX), longest secret first.
 *
 * e.g. "tOkSeCr3t-2024.csv" with config.token = "tOkSeCr3t" is stored as
 * "silt:sealed:${token}-2024.csv". A value without secrets is stored as it
 * is (what kamu and older silt wrote), unless it starts with the prefix
 * itself (then it is sealed too, so that unsealing is unambiguous). The
 * marker holds no information about the secret (no hash, no length). */
#define SILT_STATE_SEALED_PREFIX "silt:sealed:"

/* The form of source state `value` to store. *out is malloc'd (caller
 * frees) and free of secrets. `c` may be NULL (nothing to seal). */
int silt_config_seal(const silt_config *c, const char *value, char **out);

/* The value a stored source state stands for: a sealed value is rendered
 * with the current secret values (after a secret rotation this is the value
 * with the new secret, which is what the rotated source would produce), any
 * other value is copied. *out is malloc'd and may contain secrets (caller
 * scrubs and frees). Errors: SILT_ENOTFOUND "source state: the stored state
 * stands for config.KEY, which the source no longer defines (…)",
 * SILT_EINVAL "source state: malformed sealed value (…)". A marker of an
 * environment value ("${env.NAME}") needs the entry that rendering a
 * template with env.NAME added to `c`. */
int silt_config_unseal(const silt_config *c, const char *stored, char **out);

/* Redacts the current silt_error_last() message in place (re-raising it with
 * code `code`) and returns `code`; use as `return silt_config_redact_error(cfg, rc);`. */
int silt_config_redact_error(const silt_config *c, int code);

#endif
