/* dataset_internal.h — internals shared by the src/dataset/ modules
 * (workspace.c, summary.c, dataset.c, blocks.c, branch.c, data_views.c,
 * info.c, verify.c, yamldocs.c) and used by the layers above them.
 * Not part of the public API: the public handles of silt.h are defined here.
 */
#ifndef SILT_DATASET_INTERNAL_H
#define SILT_DATASET_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "odf/chain.h"
#include "odf/odf_types.h"
#include "silt.h"
#include "store/store.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/multiformats.h"
#include "util/timeutil.h"

struct silt_workspace {
    char *root;     /* absolute path of the `.silt` directory (owned) */
    char *datasets; /* root/datasets (owned) */
};

struct silt_dataset {
    silt_workspace *ws; /* borrowed; must outlive the dataset */
    char *dir;          /* absolute dataset directory (owned) */
    char *name;         /* alias (owned) */
    char *branch;       /* "master" or the branch name (owned) */
    char *ref;          /* store ref: "head" or "branches/<b>" (owned) */
    char id[SILT_DID_TEXT_LEN + 1];
    char rid[64];       /* ri.silt.main.dataset.<uuid>, derived from the id */
    silt_store *store;  /* owned */
    odf_chain_state st; /* state at `head` (the summary) */
    char head[SILT_MH_TEXT_LEN + 1];
    char watermark[40];
    char last_system_time[40];
    odf_time shown_lst, shown_wm; /* the times head/watermark/last_system_time show */
    bool shown;                   /* … once silt_ds_refresh_info formatted them */
    silt_progress_fn progress; /* silt_dataset_set_progress (may be NULL) */
    void *progress_ctx;
    silt_progress *prog;       /* counters of the running verify (ops/verify.c), or NULL */
    bool pinned;               /* silt_dataset_pin: silt_ds_sync keeps the state read (a snapshot) */
};

/* ---- progress.c ---- */

/* Calls ds's progress callback (if any) with *p; its return (nonzero = stop
 * at the next safe point), 0 without a callback. */
int silt_ds_progress(const silt_dataset *ds, const silt_progress *p);
/* Adds to ds->prog (when set) `blocks` items done and `bytes` hashed and
 * reports it; verify is read-only, so a request to stop is ignored. */
void silt_ds_progress_add(silt_dataset *ds, uint64_t blocks, uint64_t bytes);

/* The dataset RID of a dataset id: "ri.silt.main.dataset.<uuid>", the UUID
 * being the first 16 bytes of SHA3-256("silt.dev/dataset-rid" || did) with
 * the version nibble 8 and the RFC 9562 variant. Stable for the dataset
 * (renames, copies, other workspaces), needs no storage. out: 64 bytes. */
void silt_ds_rid_of(const uint8_t did[SILT_DID_LEN], char out[64]);

/* summary.c: is silt_process_caches_enable in force (chain states and
 * files views kept per head block)? */
bool silt_process_caches_on(void);

/* ---- statcache.c: facts valid while their paths stat the same ---- */

#define SILT_STAT_IDS 2
typedef struct silt_stat_id {
    bool valid; /* false: not used (or the path did not stat) */
    dev_t dev;
    ino_t ino;
    mode_t mode;
    off_t size;
    struct timespec mtim, ctim;
} silt_stat_id;
/* lstat of path into *id (valid); -1 (id invalid) when it fails. */
int silt_stat_id_of(const char *path, silt_stat_id *id);
/* The value cached under (kind, key) while the paths still stat as ids
 * (taken by the caller just now), malloc'd; kinds: 'a' alias file, 'l'
 * dataset directory layout checked; NULL when none, changed, out of memory,
 * or the process caches are off. */
char *silt_statcache_get(char kind, const char *key, const silt_stat_id ids[SILT_STAT_IDS]);
/* Caches value under (kind, key) for the identities ids, taken BEFORE the value
 * was derived; nothing when caches are off or an identity changed within
 * the last seconds (coarse file times; see statcache.c). Best effort. */
void silt_statcache_put(char kind, const char *key, const silt_stat_id ids[SILT_STAT_IDS], const char *value);
/* The same for values of any bytes (NUL included): *len set (may be NULL);
 * the copy is NUL-terminated after its len bytes. Values longer than
 * SILT_STATCACHE_VALUE_MAX are not cached. Kind 'c' (object contents) has a
 * table of its own. */
#define SILT_STATCACHE_VALUE_MAX (64u << 10)
char *silt_statcache_get_bytes(char kind, const char *key, const silt_stat_id ids[SILT_STAT_IDS], size_t *len);
void silt_statcache_put_bytes(char kind, const char *key, const silt_stat_id ids[SILT_STAT_IDS], const void *value,
                              size_t len);

/* ---- workspace.c ---- */

/* Dataset names follow the ODF grammar (DatasetName = Hostname): parts of
 * ASCII letters and digits joined by single '-', separated by single '.';
 * at most SILT_DS_NAME_MAX characters. SILT_DS_NAME_RULE is that rule for
 * error messages. */
#define SILT_DS_NAME_MAX 100
#define SILT_DS_NAME_RULE                                                                          \
    "a name is letters and digits, with single '-' or '.' between them (the ODF DatasetName "    \
    "grammar, e.g. 'sales', 'city-populations', 'com.example.sales'), at most 100 characters"
bool silt_ds_name_valid(const char *name);
/* What a reference may name: a valid name, or one created under silt's
 * older rule ([A-Za-z0-9._-], not starting with '.' or '-'), so that such
 * datasets can still be opened, renamed and deleted. */
bool silt_ds_name_ref_ok(const char *name);
/* Takes the workspace lock `.silt/lock` (exclusive flock); returns the fd to
 * pass to silt_ws_unlock, or a negative code. */
int silt_ws_lock(silt_workspace *ws);
void silt_ws_unlock(int fd);
/* Finds the dataset directory (absolute, malloc'd into *dir_out) whose
 * info/alias is `name`. SILT_ENOTFOUND if none. */
/* Process-wide lookup hints (workspace.c): `kind` 'n' (name) or 'r' (RID)
 * -> dataset directory. get returns a malloc'd copy or NULL (none, or out
 * of memory); the caller must validate it before use. put is best effort. */
char *silt_ws_dircache_get(const silt_workspace *ws, char kind, const char *key);
void silt_ws_dircache_put(const silt_workspace *ws, char kind, const char *key, const char *dir);
int silt_ws_find_by_name(silt_workspace *ws, const char *name, char **dir_out);
/* Reads `<dir>/info/alias` into a malloc'd string. */
int silt_ws_read_alias(const char *dir, char **out);
/* Fresh scratch directory `<.silt>/<sub>/<owner>-<random>` (created,
 * malloc'd; util/scratch.h), after removing leftovers of dead processes. */
int silt_ws_mktemp(silt_workspace *ws, const char *sub, char **out);

/* ---- summary.c ---- */

/* Brings ds->st up to the current value of ds->ref: uses the in-memory
 * state, else the summary file, catching up incrementally or rebuilding from
 * the seed; saves the summary back (failures to save are ignored). Fills
 * ds->head and the info strings. */
int silt_ds_sync(silt_dataset *ds);
/* Saves ds->st as the summary of ds->ref (atomic; errors returned). */
int silt_ds_summary_save(silt_dataset *ds);
/* Path of the summary file of ds->ref (malloc'd, NULL on ENOMEM). */
char *silt_ds_summary_path(silt_dataset *ds);
/* Loads and decodes block `hash` from the store into arena `a`, after
 * checking that its bytes hash to `hash`. SILT_ECORRUPT (naming the block
 * and asking to run `silt verify`) when it is missing, does not match its
 * hash or does not decode. */
int silt_ds_load_block(silt_dataset *ds, const uint8_t hash[SILT_MH_LEN], silt_arena *a,
                       odf_MetadataBlock **out);
/* Chain env whose callbacks read ds's store. */
void silt_ds_chain_env(silt_dataset *ds, odf_chain_env *env);
/* Refreshes ds->head / watermark / last_system_time from ds->st. */
void silt_ds_refresh_info(silt_dataset *ds);

/* ---- dataset.c ---- */

/* Opens the dataset in directory `dir` (absolute) on `branch` (NULL =
 * master). Caller owns *out. */
int silt_ds_open_dir(silt_dataset **out, silt_workspace *ws, const char *dir, const char *branch);
/* Same, without bringing the state up to the ref (for verification of a
 * chain that may not be readable): ds->st is empty. */
int silt_ds_open_unsynced(silt_dataset **out, silt_workspace *ws, const char *dir, const char *branch);
/* "name" or "name@branch" of ds, for messages (per-thread static buffer,
 * valid until the next call on the thread). */
const char *silt_ds_label(const silt_dataset *ds);
/* Appends one event as a new block on ds->ref (validates, writes the block,
 * CAS the ref, updates the summary). The event is checked against ds->st,
 * the state the caller read (the append does not re-sync): if the ref has
 * moved since, the result is SILT_ECONFLICT "concurrent update of NAME:
 * head moved; retry" and ds->st is left as it was (call silt_ds_sync and
 * rebuild the event to retry). `hash_out` (may be NULL) receives the new
 * block hash. */
int silt_ds_append_event(silt_dataset *ds, const odf_union *event, uint8_t hash_out[SILT_MH_LEN]);
/* Fills the links of an AddData that continues ds's chain from ds->st:
 * prevOffset and prevCheckpoint, and when `cp` is non-NULL the same
 * checkpoint carried over as newCheckpoint (cp filled, ad->new_checkpoint
 * = cp: it must live as long as ad). Nothing else of ad is touched. */
void silt_ds_add_data_continue(const silt_dataset *ds, odf_AddData *ad, odf_Checkpoint *cp);
/* Moves the slice file `tmp` that silt_write_slice wrote (its facts in
 * `si`) into ds's data objects and describes it as the newData of an
 * AddData or ExecuteTransform: offsets first..first+si->num_rows-1, both
 * hashes and the size, allocated in `a`. SILT_ENOMEM, or the store's error. */
struct silt_slice_info;
int silt_ds_adopt_slice(silt_dataset *ds, silt_arena *a, const char *tmp, const struct silt_slice_info *si,
                        uint64_t first, odf_DataSlice **out);

/* Appends `n` events as consecutive blocks published by ONE ref
 * compare-and-swap: either all of them land or none is visible. Each block
 * is validated against the state left by the previous one. `hashes_out`
 * (may be NULL) receives the n block hashes. */
int silt_ds_append_events_n(silt_dataset *ds, const odf_union *events, size_t n,
                            uint8_t (*hashes_out)[SILT_MH_LEN]);
/* Same, with the blocks' system time given (e.g. the system time written
 * into the records of a slice). It is raised to the last block's system time
 * if the clock went backwards. */
int silt_ds_append_events_at(silt_dataset *ds, const odf_union *events, size_t n,
                             uint8_t (*hashes_out)[SILT_MH_LEN], const silt_time *system_time);

/* ---- branch.c ---- */

/* Creates branch `branch` of ds pointing at block `head` (compare-and-swap
 * from absent). SILT_EINVAL for an invalid name, SILT_EEXISTS "branch B of
 * NAME already exists". */
int silt_ds_branch_create(silt_dataset *ds, const char *branch, const uint8_t head[SILT_MH_LEN]);
/* Branch names of ds, "master" first, then sorted; NULL-terminated array
 * (free with silt_strv_free). Returns the count. */
int silt_ds_branch_names(char ***out, silt_dataset *ds);
/* Removes the ref of `branch` (not master) and its summary cache; blocks
 * stay. SILT_ENOTFOUND "dataset 'x' has no branch 'b'". */
int silt_ds_branch_delete(silt_dataset *ds, const char *branch);

/* ---- verify.c ---- */

/* Problems found by verification, by class. */
typedef struct silt_verify_tally {
    int corrupt; /* hash / decode / missing / damaged objects */
    int invalid; /* rule violations */
} silt_verify_tally;

/* What verification of one branch leaves for the next branch of the same
 * dataset, so that the objects of shared blocks are checked once. */
typedef struct silt_verify_shared silt_verify_shared;
int silt_verify_shared_new(silt_verify_shared **out);
void silt_verify_shared_free(silt_verify_shared *sh);

/* Verifies the chain of ds->ref and its data slices (see verify.c); every
 * problem is reported through `report` (may be NULL) and counted in
 * *tally. With `sh` (may be NULL), objects of blocks checked for another
 * branch are not checked again (their problems count, with one line).
 * Returns 0 (problems or not) or a negative code on I/O errors of the
 * workspace itself or out-of-memory. */
int silt_ds_verify_ref(silt_dataset *ds, silt_verify_shared *sh, silt_report_fn report, void *ctx,
                       silt_verify_tally *tally);

/* ---- dataset.c: creation from manifests (used by src/ops/manifest.c) ---- */

/* Reads a whole text file into `b` ("PATH: no such file" when missing). */
int silt_ds_read_text(const char *path, silt_buf *b);
/* Moves a complete dataset directory built in `stage` (with info/alias
 * `name` and the chain of dataset id `id`) into datasets/ under the
 * workspace lock, after checking that `name` is free (SILT_EEXISTS).
 * Consumes (removes) `stage` on failure; *dir_out (may be NULL) receives
 * the final directory (malloc'd). Used by clones (ops/transfer_ws.c). */
int silt_ds_publish_staged(silt_workspace *ws, const char *stage, const char *name, const char *id, char **dir_out);
/* SILT_EINVAL unless `name` is valid; SILT_EEXISTS when it is taken. */
int silt_ds_check_name_free(silt_workspace *ws, const char *name);
/* Checks a DatasetSnapshot document (name, no Seed, no empty event) before
 * anything is built; errors are "PATH:LINE: …". */
int silt_ds_check_snapshot(const char *path, int line, const odf_DatasetSnapshot *s);
/* Builds the dataset of one snapshot in .silt/tmp/ and publishes it
 * (all-or-nothing). With `replace`, a dataset of the same name is replaced
 * once the new one is complete (kept when building the new one fails);
 * otherwise a taken name is SILT_EEXISTS. */
int silt_ds_add_snapshot(silt_workspace *ws, const char *path, int line, const odf_DatasetSnapshot *s,
                         bool replace);
/* "SetInfo", "AddData", … of a MetadataEvent union tag ("?" if unknown). */
const char *silt_ds_event_kind_name(uint8_t type);

/* ---- yamldocs.c ---- */

/* One YAML document of a file, sliced out of the original text and padded
 * with newlines/spaces so that line numbers in parse errors match the file. */
typedef struct silt_ydoc {
    char *text; /* the document's root node (arena-owned, NUL-terminated),
                   starting on file line `line` (parse it with the *_at
                   functions of odf/yaml.h) */
    size_t len;
    char *kind; /* top-level `kind` scalar, or NULL */
    char *content; /* top-level `content` node text, or NULL */
    size_t content_len;
    int line; /* 1-based line where the document starts */
    int content_line; /* 1-based line where `content` starts */
} silt_ydoc;

/* Splits `text` into its documents (empty documents skipped), within the
 * input limits of odf/yaml.h. All memory in `a`. SILT_EINVAL
 * "FILE:LINE: YAML syntax error: …" on malformed YAML. */
int silt_yaml_split(silt_arena *a, const char *text, size_t len, const char *filename,
                    silt_ydoc **docs_out, size_t *n_out);


/* ---- transform_inputs.c ---- */

/* The SetTransform in force in ds (arena-owned), or *out = NULL. */
int silt_ds_load_transform(silt_dataset *ds, silt_arena *a, const odf_SetTransform **out);
/* A copy of `t` (in `a`) as it is stored: every input resolved by name or
 * did:odf: id to the input's DID, the alias defaulting to the name written;
 * `query` turned into a one-step `queries`. Refuses (SILT_EINVAL /
 * SILT_ENOTFOUND, one line naming the input) an unknown input, the dataset
 * itself (self_name, or self_id when the dataset exists), an input reading
 * the dataset through its own inputs (a cycle), an alias or input given
 * twice, both or neither of query/queries, a step but the last without
 * alias. */
int silt_ds_resolve_transform(silt_workspace *ws, const char *self_name, const char *self_id,
                              const odf_SetTransform *t, silt_arena *a, odf_SetTransform **out);
/* Replaces every SetTransform of events[0..n) by its resolved copy; the
 * queries of another engine's SetTransform or preprocess must pass the
 * compatibility rewrite (silt_compat_check). */
int silt_ds_resolve_events(silt_workspace *ws, const char *self_name, const char *self_id, odf_union *events,
                           size_t n, silt_arena *a);

#endif
