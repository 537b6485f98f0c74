/* silt.h — public C API of silt, a versioned, verifiable dataset store.
 *
 * Conventions (after libgit2/SQLite):
 *  - functions return 0 (or a count >= 0) on success, a negative SILT_E* code
 *    on failure; the message is in silt_error_last() (thread-local);
 *  - out-parameters come first; handles are opaque; every *_free accepts NULL;
 *  - strings returned through `char **` are malloc'd and owned by the caller
 *    (free()); `const char *` results are borrowed from the handle they came
 *    from and live as long as it.
 * The library never exits or aborts on bad input or I/O errors.
 */
#ifndef SILT_H
#define SILT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SILT_VERSION "0.1.0"

/* error codes (same values as src/util/error.h) */
#define SILT_OK 0
#define SILT_EINVAL (-1)
#define SILT_ENOMEM (-2)
#define SILT_EIO (-3)
#define SILT_ENOTFOUND (-4)
#define SILT_EEXISTS (-5)
#define SILT_ECONFLICT (-6)
#define SILT_ECORRUPT (-7)
#define SILT_EVALIDATION (-8)
#define SILT_EUNSUPPORTED (-9)
#define SILT_EINTERNAL (-10)
#define SILT_ECANCELED (-11) /* the progress callback asked to stop (see silt_progress_fn) */

/* Message of the last failure on this thread (never NULL). */
const char *silt_error_last(void);
/* Code (SILT_E*) of the failure whose message silt_error_last() holds;
 * SILT_OK when none was recorded on this thread. */
int silt_error_code(void);

typedef struct silt_workspace silt_workspace;
typedef struct silt_dataset silt_dataset;
typedef struct silt_block silt_block;

/* ---- progress and cancellation ------------------------------------------- */

/* Where a long operation is. Counters only grow during one operation;
 * totals are 0 when unknown. */
typedef struct silt_progress {
    const char *phase;    /* "pull", "ingest", "verify", "gc", "upload", "sql", "tail" */
    const char *unit;     /* what done/total count: "files", "blocks", "objects", "rows" */
    const char *item;     /* the item about to be worked on (a file name), or NULL */
    uint64_t done, total; /* items finished / known total */
    uint64_t bytes, total_bytes; /* bytes read, hashed or stored / known total */
    uint64_t records;     /* records committed (pull, ingest) */
    uint64_t removed;     /* objects deleted (gc) */
} silt_progress;

/* Called by the library between units of work (files, blocks, objects;
 * never in a tight inner loop): it must be cheap (the CLI draws at most ten
 * times a second). `p` and its strings are borrowed for the call. A nonzero
 * return asks the operation to stop at the next safe point: pull, ingest
 * and upload then fail with SILT_ECANCELED ("interrupted") having committed
 * only whole units before it (a FilesGlob pull the files before the
 * current one, an ingest or upload nothing), the usual atomicity holding;
 * read-only operations (verify) and gc ignore it; query output (silt_sql,
 * silt_dataset_tail) stops with SILT_ECANCELED after the rows written so far. */
typedef int (*silt_progress_fn)(void *ctx, const silt_progress *p);

/* The progress callback of the operations on `ds` that take no options
 * struct (silt_dataset_verify, silt_dataset_verify_branches,
 * silt_txn_upload). fn NULL removes it. Handles derived from ds inside
 * those calls (other branches) report through it too. */
void silt_dataset_set_progress(silt_dataset *ds, silt_progress_fn fn, void *ctx);

/* ---- workspace ---------------------------------------------------------- */

/* Creates `<dir>/.silt/` (dir must exist). SILT_EEXISTS if already there. */
int silt_workspace_init(const char *dir);

/* Opens a workspace. `dir` (may be NULL) is the directory that contains
 * `.silt/` or the `.silt` dir itself; when NULL, $SILT_WORKSPACE is used, else
 * the nearest `.silt/` upward from the working directory. */
int silt_workspace_open(silt_workspace **out, const char *dir);
void silt_workspace_free(silt_workspace *ws);
/* Absolute path of the `.silt` directory (borrowed). */
const char *silt_workspace_path(const silt_workspace *ws);
/* A fresh private scratch directory `.silt/tmp/<owner>-<random>/` for the
 * calling process (*out malloc'd; the caller removes the directory and
 * frees the path). Its name records the process (pid and start time), so
 * if the process dies the next command, or `silt gc`, removes it; leftovers
 * of dead processes are removed before it is created. */
int silt_workspace_mktemp(silt_workspace *ws, char **out);

/* For long-running processes (silt serve): keeps, per process, the chain
 * state and the files views computed for a head block (both are functions
 * of the immutable chain, so they cannot go stale; a commit moves the head
 * and misses). A summary file or block damaged after it was cached is then
 * not noticed by opening a dataset (`silt verify` still reads everything).
 * Off by default: each CLI command validates the summary as it opens. */
void silt_process_caches_enable(void);

/* ---- datasets ----------------------------------------------------------- */

typedef enum silt_dataset_kind { SILT_ROOT = 0, SILT_DERIVATIVE = 1 } silt_dataset_kind;

/* Creates an empty dataset (Seed block only). Names follow the ODF
 * DatasetName grammar: ASCII letters and digits, with single '-' or '.'
 * between two of them ("sales", "city-populations", "com.example.sales"),
 * at most 100 characters; SILT_EINVAL otherwise. SILT_EEXISTS when the
 * name is taken. (References also resolve names created under silt's older
 * rule, [A-Za-z0-9._-], so such datasets can be renamed.) */
int silt_dataset_create(silt_dataset **out, silt_workspace *ws, const char *name,
                        silt_dataset_kind kind);

/* A push source for silt_dataset_create_push (`silt new NAME --push-source`). */
typedef struct silt_push_source_spec {
    const char *format;      /* csv, json, ndjson, geojson, ndgeojson, parquet */
    const char *merge;       /* append (NULL = append), ledger, snapshot */
    const char *const *keys; /* primary key columns: required by ledger and
                                snapshot, refused with append */
    size_t nkeys;
    const char *schema;      /* NULL, or DDL "name TYPE, name TYPE, …" (the ODF
                                ddlSchema entries, split at top-level commas) */
} silt_push_source_spec;

/* Creates a root dataset whose chain is Seed + AddPushSource (sourceName
 * "default", the format's ReadStep — Csv with header: true, and
 * inferSchema: true unless a schema is given — the schema as ddlSchema, the
 * merge strategy with its primaryKey), so that silt_dataset_ingest accepts
 * files right away. All or nothing, like silt_dataset_create; options are
 * checked first (SILT_EINVAL naming the option: unknown format or merge,
 * a missing or needless key, a bad schema entry). *out is the opened
 * dataset (caller frees). */
int silt_dataset_create_push(silt_dataset **out, silt_workspace *ws, const char *name,
                             const silt_push_source_spec *spec);

/* Creates datasets from a manifest file holding one or more YAML documents
 * (`kind: DatasetSnapshot, version: 1`). The Seed is generated, then every
 * event of `metadata` is appended. All-or-nothing per dataset: on error no
 * dataset of that document is left behind. `names_out` (may be NULL)
 * receives a malloc'd, NULL-terminated array of created names (free each and
 * the array with silt_strv_free). */
int silt_dataset_add_manifest(char ***names_out, silt_workspace *ws, const char *path);
/* Like silt_dataset_add_manifest; with `replace`, a dataset whose name is
 * taken is replaced (`silt add --replace`): the new one is built completely
 * first, then swapped in under the workspace lock, so when building it fails
 * the old one is kept unchanged. The new dataset has a new id. */
int silt_dataset_add_manifest_ex(char ***names_out, silt_workspace *ws, const char *path, bool replace);

/* The engine named by the SQL of `ds` (its SetTransform, or the preprocess
 * of a source) when it is not DuckDB, e.g. "datafusion": its queries run on
 * DuckDB through silt's compatibility layer (docs/transforms.md). *engine
 * is malloc'd (caller frees), NULL when every query is DuckDB's. */
int silt_dataset_foreign_engine(char **engine, silt_dataset *ds);

/* Opens by reference without reading the chain (no block is loaded, the
 * summary is not used): for silt_dataset_verify_branches of a dataset whose
 * chain may be damaged. Other calls on such a handle read the chain first. */
int silt_dataset_open_unread(silt_dataset **out, silt_workspace *ws, const char *ref);

/* Prefix of dataset RIDs ("ri.silt.main.dataset.<uuid>", the Foundry-style
 * id of silt_dataset_info.rid). */
#define SILT_DATASET_RID_PREFIX "ri.silt.main.dataset."

/* Opens by reference: "name", "name@branch", "did:odf:…" or a dataset RID
 * "ri.silt.main.dataset.<uuid>". */
int silt_dataset_open(silt_dataset **out, silt_workspace *ws, const char *ref);
void silt_dataset_free(silt_dataset *ds);

int silt_dataset_rename(silt_workspace *ws, const char *ref, const char *new_name);
int silt_dataset_delete(silt_workspace *ws, const char *ref);
/* Deletes the `n` datasets of `refs`, all or nothing: every reference is
 * resolved under the workspace lock before anything is removed, so one
 * that is not found (or names a branch) deletes nothing and the error names
 * it ("dataset 'b' not found; nothing deleted"). A dataset named twice is deleted once. */
int silt_dataset_delete_many(silt_workspace *ws, const char *const *refs, size_t n);

/* Sorted (by name) list of dataset names; NULL-terminated; free with silt_strv_free. */
int silt_dataset_list(char ***names_out, silt_workspace *ws);
void silt_strv_free(char **v);

/* Summary information (borrowed strings, valid while ds lives). */
typedef struct silt_dataset_info {
    const char *name;
    const char *id;        /* did:odf:… */
    const char *branch;    /* "master" unless opened as name@branch */
    silt_dataset_kind kind;
    const char *head;      /* multihash text of the head block */
    uint64_t num_blocks;   /* = head sequence number + 1 */
    bool has_last_offset;
    uint64_t last_offset;  /* last offset of data, if any */
    uint64_t num_records;  /* number of data records */
    bool has_watermark;
    char watermark[40];    /* RFC 3339 */
    char last_system_time[40];
    bool has_schema;
    bool has_polling_source;
    bool has_transform;    /* a derivative with a SetTransform (silt pull runs it) */
    size_t num_push_sources;
    uint64_t data_size;    /* bytes of data slices */
    const char *rid;       /* "ri.silt.main.dataset.<uuid>": derived from the id, so stable
                              across renames and workspaces (Foundry API datasetRid) */
} silt_dataset_info;

int silt_dataset_info_get(silt_dataset_info *out, silt_dataset *ds);
/* The same summary as of the handle's last read of its head (the open, or
 * the last silt_dataset_info_get or write through it), without reading the
 * head again: for a caller that has just opened ds and must not pay a
 * second ref read (silt serve's per-request opens). No I/O, cannot fail. */
void silt_dataset_info_as_read(silt_dataset_info *out, const silt_dataset *ds);

/* Makes ds a snapshot of the head it has read (it must be open, i.e.
 * synced): later reads through it (silt_dataset_info_get, files views,
 * content) use that state instead of reading the head again. For a
 * handle that is only read, for a short time (one request of silt
 * serve: one ref read per request); a commit by anyone is seen by the
 * next handle opened. Never write through a pinned handle. */
void silt_dataset_pin(silt_dataset *ds);

/* Appends metadata events from a YAML file: either a single event mapping
 * (`kind: SetInfo …`), a manifest `kind: MetadataEvent` envelope, or a
 * DatasetSnapshot whose `metadata` events are appended in order. Each event
 * is validated against the chain rules; all-or-nothing is NOT guaranteed
 * across several events (each lands as its own block). Returns the number of
 * blocks appended. */
int silt_dataset_append_events(silt_dataset *ds, const char *path);

/* ---- blocks ------------------------------------------------------------- */

/* Iterates blocks from the head backwards (newest first). `*out` is NULL at
 * the end. Each block is owned by the caller (silt_block_free). */
typedef struct silt_block_iter silt_block_iter;
int silt_block_iter_new(silt_block_iter **out, silt_dataset *ds);
int silt_block_iter_next(silt_block **out, silt_block_iter *it);
void silt_block_iter_free(silt_block_iter *it);

void silt_block_free(silt_block *b);
const char *silt_block_hash(const silt_block *b);        /* multihash text */
uint64_t silt_block_sequence_number(const silt_block *b);
const char *silt_block_event_kind(const silt_block *b);  /* e.g. "AddData" */
const char *silt_block_system_time(const silt_block *b); /* RFC 3339 */
/* Full YAML manifest (kind: MetadataBlock, version, content) / JSON object of
 * the block (with "hash" added). Caller frees. */
int silt_block_to_yaml(char **out, const silt_block *b);
int silt_block_to_json(char **out, const silt_block *b);

/* `silt block hash`: multihash text of the canonical binary form of a YAML
 * block file (kind: MetadataBlock). Caller frees *out. */
int silt_block_hash_yaml_file(char **out, const char *path);
/* `silt block decode`: binary block file -> YAML manifest text. */
int silt_block_decode_file(char **out, const char *path);

/* ---- verification ------------------------------------------------------- */

/* Verifies the branch ds was opened on: every block (hash = file name,
 * decodes, chain rules, referenced objects, data hashes where present) and,
 * for files datasets, the checks of silt_dataset_verify_branches below.
 * Every problem is reported through `report` (one line each; may be NULL).
 * Returns 0 when valid, SILT_ECORRUPT or SILT_EVALIDATION when problems
 * were found, another code on I/O errors. */
typedef void (*silt_report_fn)(void *ctx, const char *line);
int silt_dataset_verify(silt_dataset *ds, silt_report_fn report, void *ctx);

/* A problem found by verification, with the branch it concerns (NULL: the
 * dataset as a whole, e.g. an unreadable transaction record). */
typedef void (*silt_verify_report_fn)(void *ctx, const char *branch, const char *line);

typedef struct silt_verify_branch {
    char branch[104];
    uint64_t num_blocks;
    size_t problems;   /* problems of this branch (its chain, slices, file objects, records) */
} silt_verify_branch;

/* `silt verify NAME`: every branch of the dataset ("master" first, then by
 * name) when all_branches, else only the branch ds was opened on. Blocks
 * and objects shared by branches are checked once (a problem in a shared
 * object counts for every branch holding it, with one line pointing to
 * where it was reported). Beyond the chain rules and slices of each branch
 * (silt_dataset_verify), files datasets get every linked file object hashed,
 * the latest view of each branch checked complete, the purge record of
 * retention cross-checked against the chains and the policies (a file
 * recorded as purged must belong to a transaction that retention could have
 * purged), and the transaction records of txn/ checked against the chains.
 * *out: one entry per verified branch (malloc'd, free()). Returns 0 when
 * everything is valid, SILT_ECORRUPT / SILT_EVALIDATION when problems were
 * found, another code on I/O errors. */
int silt_dataset_verify_branches(silt_verify_branch **out, size_t *n, silt_dataset *ds, bool all_branches,
                                 silt_verify_report_fn report, void *ctx);

/* silt_dataset_verify_branches with options. A derivative is, beyond its
 * hashes and chain rules, replayed (unless no_replay): every ExecuteTransform
 * is run again over the input blocks and offset intervals its queryInputs
 * record, and the logical hash of the result compared with the recorded
 * newData (docs/transforms.md, "Verifying a derivative"). A block whose
 * replay fails or differs is one problem naming the block (SILT_EVALIDATION).
 * The replay runs only on a branch whose chain and slices are sound; it
 * writes nothing but a scratch directory it removes. opts may be NULL (one
 * branch, with replay). Ownership and returns as above. */
typedef struct silt_verify_opts {
    bool all_branches;
    bool no_replay;
} silt_verify_opts;
int silt_dataset_verify_with(silt_verify_branch **out, size_t *n, silt_dataset *ds, const silt_verify_opts *opts,
                             silt_verify_report_fn report, void *ctx);


/* ---- data ---------------------------------------------------------------- */

typedef struct silt_ingest_opts {
    const char *const *files;   /* input files; "-" is not special here */
    const char *const *display; /* names used in messages (may be NULL) */
    size_t nfiles;
    const char *format;         /* csv|json|ndjson|geojson|ndgeojson|parquet|shp or NULL */
    const char *event_time;     /* RFC 3339 fallback event time, or NULL */
    const char *source_name;    /* push source to use, or NULL */
    silt_progress_fn progress;  /* may be NULL; phase "ingest" */
    void *progress_ctx;
} silt_ingest_opts;

typedef struct silt_ingest_result {
    bool up_to_date;            /* nothing new: no block written */
    uint64_t num_records;       /* records of the new slice */
    uint64_t first_offset, last_offset;
    bool has_watermark;
    char watermark[40];         /* RFC 3339 */
    char head[70];              /* new head block */
    bool schema_changed;        /* a SetDataSchema was committed */
    size_t num_slices;          /* slices written (targetRecordsPerSlice may split) */
} silt_ingest_result;

/* Push ingest through the dataset's push source (AddPushSource: read,
 * preprocess, merge), or a plain Append of a self-describing format
 * (Parquet) when the dataset has no source. A commit that loses the race to
 * another writer is made again against the new head (up to 5 attempts in
 * all) while the dataset's sources, vocab and the source state are as the
 * ingest found them; otherwise SILT_ECONFLICT "… concurrent update of NAME:
 * head moved; retry". */
int silt_dataset_ingest(silt_ingest_result *out, silt_dataset *ds, const silt_ingest_opts *opts);
/* ---- RestEndpoint push sources (docs/ingestion.md "RestEndpoint") ------- */

typedef struct silt_push_result {
    bool buffered;             /* the source has a buffer: records were (or would have been) appended */
    bool rejected;             /* buffer full, overflowPolicy Reject: nothing appended (HTTP 429) */
    char source[256];          /* RestEndpoint Source resource used, "" for AddPushSource / plain ingest */
    uint64_t accepted;         /* records of the request appended to the buffer */
    uint64_t buffered_records; /* records in the buffer after the request */
    uint64_t capacity;         /* the buffer's bufferSize (records) */
    uint64_t dropped;          /* records DropOldest dropped to make room for this request */
    uint64_t dropped_total;    /* records DropOldest dropped since the buffer exists */
    silt_ingest_result ingest; /* !buffered: the synchronous ingest */
} silt_push_result;

/* Push ingest of `o` (the files of one request) into `ds`. When a Flow of
 * the dataset has an Ingest task whose Source has `ingress: RestEndpoint`
 * (o->source_name picks it; the only one otherwise) and that ingress has a
 * `buffer`, the request is read with the source's read step (all or
 * nothing: a parse error is returned and nothing is buffered) and its
 * records appended to the source's write-ahead buffer
 * (`<.silt>/buffers/<dataset id>/<source>.wal`), fsynced before this
 * returns; when the buffer lacks room, Reject sets out->rejected and
 * appends nothing, DropOldest drops the oldest buffered records (counted).
 * A request with more records than bufferSize is SILT_EINVAL; the
 * odf-event-time fallback (o->event_time) is SILT_EINVAL for a buffered
 * source. A RestEndpoint without buffer is ingested at once through the
 * source's read/preprocess/merge; no RestEndpoint source:
 * silt_dataset_ingest. Safe from several threads and processes at once. */
int silt_dataset_push(silt_push_result *out, silt_dataset *ds, const silt_ingest_opts *o);

typedef struct silt_push_flush_result {
    char source[256];          /* the source flushed */
    uint64_t records;          /* records ingested by this flush (0: the buffer was empty) */
    uint64_t skipped;          /* records a previous flush had committed already (crash recovery) */
    bool committed;            /* an AddData was committed */
    silt_ingest_result ingest; /* that commit */
} silt_push_flush_result;

/* Ingests the records buffered for RestEndpoint source `source_name` of
 * `ds` (NULL: the only one) as ONE AddData through the source's read
 * (NDJSON of the records, with the source's declared schema), preprocess
 * and merge; its source state {kind "silt/push-buffer", value: the buffer
 * position} makes a record never ingested twice, whatever crashes. Records
 * pushed meanwhile stay for the next flush. Coordinates with `silt serve`
 * and other flushes through the buffer's locks. SILT_ENOTFOUND when there
 * is no such source, SILT_EINVAL when it has no buffer; ingest errors as
 * silt_dataset_ingest's (the buffer is then unchanged). */
int silt_push_flush(silt_push_flush_result *out, silt_dataset *ds, const char *source_name);

/* Records buffered and dropped (DropOldest) for Source resource `source`,
 * summed over the datasets of the workspace. */
int silt_push_buffer_counts(silt_workspace *ws, const char *source, uint64_t *buffered, uint64_t *dropped);

/* ---- queries (silt sql / tail / schema) ------------------------------------ */

#include <stdio.h>

/* Output of silt_sql / silt_dataset_tail.
 *  format: "table" (default when NULL), "csv", "json", "ndjson", "parquet",
 *    and the compact JSON shapes of the ODF node API (no newline at all):
 *    "json-aos" [{"a":1,"b":"x"},…], "json-soa" {"a":[1,…],"b":["x",…]},
 *    "json-aoa" [[1,"x"],…] (values as in json).
 *    table: header, a '-'/'+' separator line, one line per row, columns
 *      separated by " | ", numbers right-aligned; NULL is shown as "NULL";
 *      nested values (LIST, ARRAY, STRUCT, MAP, UNION) as compact JSON
 *      ({"a":1,"b":["x",null]}, strings quoted, nested NULL as null); tail
 *      shows the op column as +A, -R, -C, +C;
 *    csv: RFC 4180 with a header; NULL is an empty field, "" an empty
 *      string; nested values as the same JSON text (quoted as a field);
 *    json: one array of objects; ndjson: one object per line: NULL -> null,
 *      nested values as JSON (STRUCT an object, LIST/ARRAY an array, MAP an
 *      object when its keys are VARCHAR, else [{"key":…,"value":…}], UNION
 *      {"member": value}), integers, HUGEINT and DECIMAL exact JSON numbers,
 *      FLOAT/DOUBLE shortest round-trip numbers, NaN/infinity -> null, UUID,
 *      ENUM, BIT, dates and times strings, BLOB a base64 string, INTERVAL an
 *      ISO 8601 duration string ("P1Y2M3DT4H5M6.5S");
 *    parquet: the result as a Parquet file (needs `output`).
 *  In table and CSV a scalar is the same text as in JSON without the quotes
 *  (NaN "nan", infinities "inf"/"-inf"). Every value is rendered the same
 *  way at any depth of nesting (docs/data.md, "Output formats").
 *  Timestamps are printed RFC 3339 UTC ("2020-01-01T00:00:00.123Z", shortest
 *  exact fraction of 0/3/6/9 digits).
 *  output: file to write (created/truncated, removed on failure); NULL = `out`
 *    (NULL = stdout).
 *  as_of: n_as_of items "NAME=BLOCK" / "NAME@BRANCH=BLOCK" (that dataset's
 *    view holds only the data up to and including block BLOCK, which must be
 *    in the chain of that ref) or a bare "BLOCK" (looked up in every dataset
 *    the query references; applies to each whose chain holds it; an error if
 *    none does). BLOCK is a full multihash ("f1620…").
 *  rows_out (may be NULL) receives the number of result rows (silt_sql_script:
 *    of its last statement).
 *  unsafe_file_access (silt_sql only; tail is always confined): false (the
 *    default) confines the query: exactly one read-only statement (SELECT,
 *    FROM, WITH, VALUES, DESCRIBE, SHOW, SUMMARIZE, EXPLAIN [ANALYZE] of a
 *    query), and the engine reads only the files of the dataset views silt
 *    created for it (plus `output` for parquet): no read_csv/read_text/glob
 *    of other files, no COPY/EXPORT/IMPORT, ATTACH, INSTALL/LOAD, SET/RESET,
 *    CREATE/INSERT/…, CALL; refusals are SILT_EINVAL with one line, e.g.
 *    "sql: COPY is not allowed in a query (use --format/--output to write
 *    results, or --unsafe-file-access)", "sql: reading files is not allowed:
 *    <DuckDB's message> (query datasets by name, or use
 *    --unsafe-file-access)". true runs any single statement of the DuckDB
 *    dialect with the file system of the calling process (local
 *    exploration only; never for a query from someone else). */
/* A dataset a query read, as silt_sql resolved it (see inputs_out). */
typedef struct silt_sql_input {
    char ref[208];   /* as the query named it: "name" or "name@branch" */
    char name[104];  /* the dataset's name */
    char id[80];     /* did:odf:… */
    char block[72];  /* the block its view was read at (the head, or the as-of block) */
} silt_sql_input;

typedef struct silt_sql_opts {
    const char *format;
    const char *output;
    FILE *out;
    const char *const *as_of;
    size_t n_as_of;
    uint64_t *rows_out;
    bool unsafe_file_access;
    /* Paging. silt_sql: of the result rows of a query (SELECT-like
     * statements; EXPLAIN is not paged): `skip` rows are left out, then at
     * most `limit` rows when has_limit (applied inside the engine, which
     * stops early). silt_dataset_tail: the newest `skip` records are left
     * out before the newest n are taken (has_limit is not used). */
    uint64_t skip;
    bool has_limit;
    uint64_t limit;
    /* Limits of one query (silt_sql; 0 = none). timeout_ms: the statement
     * is interrupted once it ran that long: SILT_EINVAL "sql: query timed
     * out after N ms". memory_limit: bytes the engine may hold (spilling to
     * the workspace's scratch directory where DuckDB can): a query that
     * needs more is SILT_EINVAL "sql: query exceeded the memory limit of N
     * MiB: <DuckDB's message>". */
    uint32_t timeout_ms;
    uint64_t memory_limit;
    /* Which datasets the query may see (silt_sql; NULL = all): a dataset for
     * which visible(visible_ctx, name) is false gets no view, so the query
     * fails as for a table that does not exist. */
    bool (*visible)(void *ctx, const char *name);
    void *visible_ctx;
    /* When non-NULL (with n_inputs_out): receives the datasets whose views
     * the query read, in the order the query names them, with the block
     * each was read at (malloc'd array, free(); NULL/0 when none), so that
     * passing them back as as_of reproduces the result. Set on success. */
    silt_sql_input **inputs_out;
    size_t *n_inputs_out;
    /* The query came over the network (silt serve): refusals give advice
     * without the CLI's options ("sql: COPY is not allowed in a query
     * (queries are read-only)"). */
    bool remote;
    /* table only: cut values (ending in "…") so that a line fits in this
     * many code points (the CLI passes the terminal width when stdout is a
     * terminal); 0 = every value whole */
    size_t max_width;
    /* Progress of writing the result (silt_sql, silt_sql_script per
     * statement, silt_dataset_tail; NULL = none). Parquet, which DuckDB
     * writes in one statement: called every 200 ms FROM A HELPER THREAD of
     * the library (while the calling thread is inside DuckDB) with unit ""
     * and bytes = the output file's size so far, then once from the calling
     * thread with unit "rows", done = total = the rows; a nonzero answer
     * interrupts the export (SILT_ECANCELED, the file removed). The text
     * formats: while DuckDB still computes the result, after 1 s and then
     * every 200 ms FROM THE HELPER THREAD with unit "" and 0 bytes (a
     * nonzero answer interrupts the query: SILT_ECANCELED, nothing written,
     * `output` untouched); then from the calling thread with phase "sql"
     * (tail: "tail"), unit "rows":
     *  - after every chunk of result rows (2048): done = the rows written
     *    so far (>= 1), bytes = the bytes written so far, total 0; the
     *    table format, which needs every row before its first line, counts
     *    the rows and bytes rendered so far;
     *  - once more when every row is in, with total = done (the only call
     *    when there are none): the table format makes it just before its
     *    first line is written, so a caller drawing on the same terminal
     *    can erase its line first. Its return value is ignored.
     * A nonzero return stops the output before the next chunk:
     * SILT_ECANCELED ("interrupted"), *rows_out = the rows written before
     * it (0 for a table), `output` removed. */
    silt_progress_fn progress;
    void *progress_ctx;
} silt_sql_opts;

/* Runs one SQL statement (DuckDB dialect) over the datasets of `ws`. Every
 * dataset named in the query is a view: "name" (quote names with dots or
 * dashes: "ca.bankofcanada"), "name@branch" for a branch, records in offset
 * order (columns offset, op, system_time, event_time, data columns; columns
 * added by schema evolution are NULL in older records). "name:current" (and
 * the table macro current_state('name')) is the current state: retractions
 * and corrections applied, i.e. every distinct tuple of (event_time, data
 * columns) kept #(+A,+C) - #(-R,-C) times with the offset/op/system_time of
 * its latest additions, in offset order. A dataset with a schema but no data
 * is an empty view; without a schema it is an error ("dataset 'x' has no
 * data"). A files dataset with a tabular schema and no files is an empty
 * view with the schema's columns. `SHOW TABLES` (alone) lists the datasets
 * of the workspace: columns name, kind ("Root", "Derivative" or "Files"),
 * by name. Errors: SILT_EINVAL for SQL errors ("sql: <engine message>"),
 * SILT_ENOTFOUND for unknown --as-of blocks. */
int silt_sql(silt_workspace *ws, const char *query, const silt_sql_opts *opts);

/* ---- Arrow in memory: the Arrow C Data and C Stream Interfaces ------------------
 * (https://arrow.apache.org/docs/format/CStreamInterface.html; the structs
 * are the specification's, under its guard macros, so Arrow's own headers
 * or nanoarrow's can be included as well.) */
#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE
#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4
struct ArrowSchema {
    const char *format;
    const char *name;
    const char *metadata;
    int64_t flags;
    int64_t n_children;
    struct ArrowSchema **children;
    struct ArrowSchema *dictionary;
    void (*release)(struct ArrowSchema *);
    void *private_data;
};
struct ArrowArray {
    int64_t length;
    int64_t null_count;
    int64_t offset;
    int64_t n_buffers;
    int64_t n_children;
    const void **buffers;
    struct ArrowArray **children;
    struct ArrowArray *dictionary;
    void (*release)(struct ArrowArray *);
    void *private_data;
};
#endif
#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE
struct ArrowArrayStream {
    int (*get_schema)(struct ArrowArrayStream *, struct ArrowSchema *out);
    int (*get_next)(struct ArrowArrayStream *, struct ArrowArray *out);
    const char *(*get_last_error)(struct ArrowArrayStream *);
    void (*release)(struct ArrowArrayStream *);
    void *private_data;
};
#endif

/* Runs one SELECT as silt_sql does (the same views, as-of, visibility,
 * limits and confinement of opts; format, output, out, paging and progress
 * are not used) and hands its rows out as an Arrow C stream, computed as
 * they are read: get_schema gives the result's schema (a struct of the
 * columns, as DuckDB exports its types), each get_next one record batch of
 * up to 2,048 rows (a struct array), and an array with release == NULL at
 * the end. Errors before the first row (the query does not bind, is not a
 * SELECT: SILT_EINVAL "sql: an Arrow stream needs a SELECT query", an
 * unknown --as-of block) are returned here with *out zeroed; an error while
 * reading makes get_next return EIO with the message in get_last_error.
 * Ownership: the caller owns *out and calls out->release(out) exactly once
 * (it frees the engine and its scratch directory); every schema and array
 * it got must be released by their own release callbacks, before or after.
 * Use one stream from one thread at a time; the workspace handle must
 * outlive it. Example: examples/arrow_sum.c. */
int silt_query_arrow(struct ArrowArrayStream *out, silt_workspace *ws, const char *query,
                     const silt_sql_opts *opts);
/* The records of dataset `ref` ("name" or "name@branch") in offset order
 * as an Arrow C stream (system columns first, as `silt sql` shows them),
 * as of `as_of` (a block hash or unique prefix, sequence number, RFC 3339
 * time or transaction rid; NULL = the head). Same rules as silt_query_arrow. */
int silt_dataset_read_arrow(struct ArrowArrayStream *out, silt_workspace *ws, const char *ref, const char *as_of);

/* Runs a script: the statements of `script` (silt_sql_split) in order, each
 * exactly as silt_sql runs one query (its own views and engine, the same
 * confinement: no state such as SET or temporary tables carries over), every
 * result written in opts->format to the same output (in the table format an
 * empty line separates results; the compact JSON shapes json-aos/soa/aoa
 * are followed by a newline each). Stops at the first statement that fails;
 * its message is prefixed "statement N: " (N from 1). With opts->output all
 * results go to that one file (removed when a statement fails); parquet
 * needs a script of exactly one statement. A script without statements is
 * SILT_EINVAL "sql: no statement". */
int silt_sql_script(silt_workspace *ws, const char *script, const silt_sql_opts *opts);

/* Splits `script` at every ';' outside 'strings' (also E'…' with backslash
 * escapes), "quoted identifiers", -- and (nested) block comments and
 * $tag$…$tag$ strings. Statements holding only spaces and comments are left
 * out; the others keep their text without the ';'. *out: malloc'd
 * NULL-terminated array (silt_strv_free). Returns the number of statements,
 * or SILT_ENOMEM. */
int silt_sql_split(char ***out, const char *script);

/* For an interactive shell: true when `text` can run as it is, i.e. no
 * string, quoted identifier or comment is left open and nothing but spaces
 * and comments follows its last top-level ';' (text with no statement at
 * all is complete too). */
bool silt_sql_complete(const char *text);

/* The newest `n` records of a dataset (by offset), in offset order, written
 * like silt_sql output. Reads only the slices that hold them. With one
 * opts->as_of item (a full block hash of ds's chain), the newest records
 * as of that block. */
int silt_dataset_tail(silt_dataset *ds, uint64_t n, const silt_sql_opts *opts);

typedef enum silt_schema_format {
    SILT_SCHEMA_TEXT = 0, /* one line per field: "name: Type" (e.g. Option<String>) */
    SILT_SCHEMA_YAML = 1, /* ODF DataSchema YAML (fields: - name: … type: kind: …) */
    SILT_SCHEMA_JSON = 2, /* ODF DataSchema JSON object (indented) */
} silt_schema_format;

/* Current DataSchema of the dataset (its last SetDataSchema) as text ending
 * with a newline; caller frees *out. SILT_ENOTFOUND "dataset 'x' has no
 * schema" when none was set. */
int silt_dataset_schema_get(char **out, silt_dataset *ds, silt_schema_format fmt);
/* The schema in force at block `block` (a full multihash text of ds's
 * chain, e.g. from silt_as_of_resolve; NULL = the head). */
int silt_dataset_schema_get_at(char **out, silt_dataset *ds, const char *block, silt_schema_format fmt);

/* ---- tables as pull streams: readTable (src/ops/table.c) ------------------
 *
 * The table of one dataset branch as an Arrow IPC stream or CSV, produced
 * piece by piece as the caller pulls it (for `silt read-table` and the
 * readTable route of `silt serve`). */

typedef struct silt_table_stream silt_table_stream;

typedef enum silt_table_format {
    SILT_TABLE_ARROW = 0, /* Arrow IPC streaming format (not the file format): Schema
                           * message, one RecordBatch per engine chunk (up to 2048
                           * rows), end-of-stream marker; metadata V5, uncompressed,
                           * plain Utf8/Binary with 32-bit offsets, no dictionaries.
                           * Column types: docs/server.md "readTable: Arrow types" */
    SILT_TABLE_CSV = 1,   /* as silt_sql's csv format: RFC 4180, a header line */
} silt_table_format;

typedef struct silt_table_opts {
    silt_table_format format;
    const char *const *columns; /* NULL/0: every column in schema order; else these, in this order */
    size_t ncolumns;
    int64_t row_limit;          /* < 0: no limit; else at most that many rows */
    /* Files datasets only (transaction rids): NULL/NULL = the latest view of
     * the branch; end only = the view as of end; start and end = the range
     * view start..end (silt_files_view); start only = start..the latest
     * committed transaction. On a ledger dataset a rid is SILT_EINVAL. */
    const char *start_rid;
    const char *end_rid;
} silt_table_opts;

/* Opens the table of ds's branch: a ledger (ODF) dataset's records in
 * offset order with the system columns (offset, op, system_time,
 * event_time, then the data columns; types as in its current
 * SetDataSchema), or a files dataset's view read through its tabular
 * schema (silt_files_schema_set). Every error a client can cause is
 * reported here, before any byte: SILT_EINVAL "column 'x' is not in the
 * schema of NAME", "column 'x' is given twice", "transaction rids apply
 * only to files datasets (NAME is a ledger)", and a file that does not
 * conform to the schema; SILT_ENOTFOUND "dataset 'x' has no tabular
 * schema", "dataset 'x' has no data" (a ledger without schema),
 * "transaction RID is not committed on branch B of NAME". The stream holds
 * its own engine and scratch directory (removed by silt_table_stream_free)
 * and does not use ds after this call returns. Caller owns *out. */
int silt_table_stream_open(silt_table_stream **out, silt_dataset *ds, const silt_table_opts *o);

/* Copies up to cap (> 0) bytes of the stream into buf: returns the number
 * of bytes written (> 0), 0 at the end, < 0 on an error while reading
 * (e.g. I/O; the stream is then over). Memory stays bounded by one engine
 * chunk (2048 rows) and its encoding, whatever the size of the table. */
long silt_table_stream_read(silt_table_stream *s, void *buf, size_t cap);

/* Rows produced so far. */
uint64_t silt_table_stream_rows(const silt_table_stream *s);

void silt_table_stream_free(silt_table_stream *s);
/* ---- objects of a dataset (the ODF Simple Transfer Protocol, src/dataset/objects.c) */

/* Opens object `hash` of kind `kind` ("blocks", "data" or "checkpoints")
 * of ds for reading, exactly as stored. `hash` must be the text form silt
 * names objects by: "f1620" followed by 64 lowercase hex digits (anything
 * else is SILT_EINVAL "invalid object hash 'x': expected f1620 and 64
 * lowercase hex digits"), so no text can name a path. *fd_out (O_RDONLY,
 * close-on-exec; the caller closes it) and *size_out (its size in bytes)
 * are set on success. SILT_ENOTFOUND "KIND/HASH is not in dataset 'x'"
 * when absent; SILT_EINVAL for an unknown kind. */
int silt_dataset_object_open(int *fd_out, uint64_t *size_out, silt_dataset *ds, const char *kind,
                             const char *hash);

/* 0 when `text` is an RFC 3339 time silt accepts (as --event-time),
 * SILT_EINVAL "not an RFC 3339 time: 'x'" otherwise. */
int silt_time_check(const char *text);

/* ---- files datasets, transactions, views, branches (src/files/files.c,
 * txn.c, branches.c; DESIGN.md §7, spec/foundry-datasets.md) ---------------- */

/* Creates an empty files dataset: Seed + the files SetDataSchema (see
 * src/files/files.h). Same name rules and errors as silt_dataset_create. */
int silt_files_create(silt_dataset **out, silt_workspace *ws, const char *name);

typedef enum silt_txn_type {
    SILT_TXN_SNAPSHOT = 0, SILT_TXN_APPEND = 1, SILT_TXN_UPDATE = 2, SILT_TXN_DELETE = 3
} silt_txn_type;
typedef enum silt_txn_status {
    SILT_TXN_OPEN = 0, SILT_TXN_COMMITTED = 1, SILT_TXN_ABORTED = 2
} silt_txn_status;

/* "SNAPSHOT"/"APPEND"/"UPDATE"/"DELETE", "OPEN"/"COMMITTED"/"ABORTED". */
const char *silt_txn_type_name(silt_txn_type t);
const char *silt_txn_status_name(silt_txn_status s);
/* Parses a type name (case-insensitive). SILT_EINVAL on anything else. */
int silt_txn_type_parse(silt_txn_type *out, const char *name);

/* Opens a transaction on ds's branch. *rid_out (malloc'd) is
 * "ri.silt.main.transaction.<uuid v4>". At most one OPEN transaction per
 * branch: SILT_ECONFLICT "branch B of NAME already has an open transaction
 * RID". */
int silt_txn_start(char **rid_out, silt_dataset *ds, silt_txn_type type);
/* Stores LOCAL_FILE's bytes as object data/<multihash> and stages the entry
 * under `logical_path` (NULL = the local path itself, which must then be a
 * valid relative logical path: "./a/b.csv" is "a/b.csv", "/x" or "../x" are
 * SILT_EINVAL — see silt_put_list_build for mapping local paths). The file
 * must be a regular file; its bytes are copied and hashed in one pass, so
 * the object always matches its name. Not allowed in DELETE transactions. A
 * later put of the same path replaces the earlier one. */
int silt_txn_put(silt_dataset *ds, const char *rid, const char *local_file, const char *logical_path);

/* A list of local files and the logical paths they are staged under
 * (src/files/putlist.c): built from inputs (files and directories, taken
 * recursively) relative to a base directory, before anything is written. */
typedef struct silt_put_list silt_put_list;
/* Builds the list of `n` inputs. The logical path of an input is its path
 * relative to `base` (NULL = the working directory), compared lexically as
 * written; a directory stands for every regular file below it (a `.silt`
 * workspace directory is skipped); a symbolic link inside a directory, an
 * input that is neither a regular file nor a directory, an absolute input
 * without a base, an input outside the base ("../x") and two inputs with one
 * logical path are SILT_EINVAL (e.g. "inputs 'a/x' and './a/x' both map to
 * logical path 'a/x'"); a missing input is SILT_ENOTFOUND. `as` (may be
 * NULL; not with `base`) is the logical path of the only input, a file.
 * Every logical path passes the rules of silt_txn_put. The list is sorted by
 * logical path and never empty. Caller owns *out (silt_put_list_free). */
int silt_put_list_build(silt_put_list **out, const char *const *inputs, size_t n, const char *base,
                        const char *as);
size_t silt_put_list_count(const silt_put_list *l);
/* Local path (to open) and logical path of entry i (borrowed from l). */
const char *silt_put_list_local(const silt_put_list *l, size_t i);
const char *silt_put_list_path(const silt_put_list *l, size_t i);
void silt_put_list_free(silt_put_list *l);
/* Stages every file of the list in OPEN transaction rid: all objects are
 * stored first, then one journal write stages all entries (a failure before
 * it stages nothing and removes the objects this call created). */
int silt_txn_put_list(silt_dataset *ds, const char *rid, const silt_put_list *l);
/* `silt upload`: start (owned by this process, see silt_txn_info) + put of
 * the list + commit, all or nothing. On success *rid_out (malloc'd) is the
 * committed transaction and block_out (may be NULL, 70 bytes) its AddData.
 * On failure nothing is left: no transaction record, no journal, and none of
 * the objects this call created (unless another transaction staged the same
 * bytes meanwhile); the error of the failing step is returned. */
int silt_txn_upload(char **rid_out, char *block_out, silt_dataset *ds, silt_txn_type type, const silt_put_list *l);
/* Stages the removal of a path (DELETE transactions only). */
int silt_txn_rm(silt_dataset *ds, const char *rid, const char *logical_path);
/* OPEN -> COMMITTED: one AddData on the transaction's branch. Errors:
 * SILT_ECONFLICT "TransactionNotOpen: transaction RID is COMMITTED|ABORTED",
 * SILT_EEXISTS "APPEND transaction RID would overwrite 'p' …", SILT_ENOTFOUND
 * "DELETE transaction RID: 'p' is not in the view …". `block_out` (may be
 * NULL, SILT_MH_TEXT_LEN+1 = 70 bytes) receives the AddData block hash. */
int silt_txn_commit(silt_dataset *ds, const char *rid, char *block_out);
/* OPEN -> ABORTED (staged entries are ignored forever). */
int silt_txn_abort(silt_dataset *ds, const char *rid);

typedef struct silt_txn_info {
    char rid[64];
    char branch[104];
    silt_txn_type type;
    silt_txn_status status;
    char created[40];   /* RFC 3339 */
    char closed[40];    /* RFC 3339, "" while OPEN */
    char block[72];     /* AddData block of a COMMITTED transaction, else "" */
    /* The owning process of a transaction one process started for itself
     * (silt_txn_upload): pid, its start time (field 22 of /proc/<pid>/stat,
     * clock ticks after boot, so a recycled pid is told apart) and host.
     * owner_pid 0: owned by the user (silt_txn_start), never abandoned. */
    long owner_pid;
    unsigned long long owner_start;
    char owner_host[256];
    /* OPEN, owned, and its process is gone (checked on the owner's host;
     * from another host an owner is never taken for gone). */
    bool abandoned;
    /* Why silt aborted it ("abandoned: process 1234 on host h is gone"),
     * "" when it was not aborted by silt. */
    char reason[320];
} silt_txn_info;

/* One transaction (rid given; any branch of the dataset). */
int silt_txn_get(silt_txn_info *out, silt_dataset *ds, const char *rid);
/* `silt txn recover`: aborts every abandoned transaction of ds's branch (or
 * of every branch with all_branches); their staged objects are left for
 * `silt gc`. *out (malloc'd, free(); may be empty) lists the transactions it
 * aborted, as they are now. The next writer of a branch (silt_txn_start,
 * silt_txn_upload) aborts an abandoned transaction of that branch too. */
int silt_txn_recover(silt_txn_info **out, size_t *n_out, silt_dataset *ds, bool all_branches);
/* Transactions of ds's branch, oldest first (by creation time, then rid):
 * every transaction started on that branch, plus the committed ones the
 * branch inherited from its parent before the fork. *out malloc'd (free()). */
int silt_txn_list(silt_txn_info **out, size_t *n_out, silt_dataset *ds);
/* Every transaction of the dataset, whatever its branch (also of branches
 * deleted since), oldest first (by creation time, then rid). *out malloc'd
 * (free()). */
int silt_txn_list_all(silt_txn_info **out, size_t *n_out, silt_dataset *ds);

/* One file of a view. */
typedef struct silt_file_entry {
    const char *path;          /* logical path */
    const char *content_hash;  /* multihash text "f1620…" */
    uint64_t size;
    const char *content_type;
    const char *rid;           /* transaction that last wrote it */
    silt_txn_type txn_type;
    char time[40];             /* commit time of that transaction (RFC 3339) */
} silt_file_entry;

typedef struct silt_view silt_view;
size_t silt_view_count(const silt_view *v);
/* i-th entry, sorted by path (borrowed from v). */
const silt_file_entry *silt_view_entry(const silt_view *v, size_t i);
/* Entry of a path, or NULL. */
const silt_file_entry *silt_view_find(const silt_view *v, const char *path);
void silt_view_free(silt_view *v);

/* `silt files`: the latest view (at == NULL and range NULL), the view as of
 * committed transaction `at`, or the range view range_start..range_end (files
 * written in that range; an intermediate SNAPSHOT clears it; start == end is
 * exactly that transaction's files). Caller owns *out. */
int silt_files_view(silt_view **out, silt_dataset *ds, const char *at, const char *range_start,
                    const char *range_end);
/* `silt cat`: writes the bytes of `path` in the latest view (or as of
 * `at`) to `out`. SILT_ENOTFOUND "file 'p' is not in the view of …". */
int silt_files_cat(silt_dataset *ds, const char *path, const char *at, FILE *out);
/* Opens the object holding the bytes of view entry `e` (of a view of ds)
 * for reading: *fd_out (O_RDONLY, close-on-exec; the caller closes it) and
 * *size_out (= e->size). The bytes are not hashed here (silt_files_cat and
 * silt verify do). Errors: SILT_ENOTFOUND "file 'p' was purged by retention
 * (transaction RID)"; SILT_ECORRUPT when the object is missing or its size
 * differs from the entry's; SILT_EIO. */
int silt_files_open(int *fd_out, uint64_t *size_out, silt_dataset *ds, const silt_file_entry *e);
/* The bytes of a small view entry (e->size <= SILT_FILES_SMALL_MAX, else
 * SILT_EINVAL) in memory: *buf (malloc'd, NUL-terminated after its *len
 * bytes; the caller frees it). Errors as silt_files_open. With the process
 * caches on (silt_process_caches_enable) the bytes come from memory while
 * the object stats as when it was read: one lstat instead of open, fstat,
 * read and close (stored objects are named by their content hash and never
 * change in place; a purge removes the object, which the lstat sees). */
#define SILT_FILES_SMALL_MAX (64u << 10)
int silt_files_read_small(char **buf, size_t *len, silt_dataset *ds, const silt_file_entry *e);

/* `--as-of REF` of the reading commands: resolves REF against ds's branch to
 * a block of its chain. REF is a block hash ("f1620…") or a unique prefix
 * of at least 8 characters, a sequence number (0 = the Seed), an RFC 3339
 * time (the newest block with a system time at or before it) or a
 * transaction rid (the AddData that committed it). block_out (70 bytes)
 * gets the block; rid_out (64 bytes, may be NULL) the rid of the newest
 * committed transaction at or before that block, "" when there is none
 * (files datasets; "" for ledger datasets). Errors: SILT_ENOTFOUND "--as-of
 * 'x': no block of NAME matches", "transaction RID is not committed on
 * branch B of NAME"; SILT_EINVAL for an ambiguous or too short prefix. */
int silt_as_of_resolve(silt_dataset *ds, const char *ref, char *block_out, char *rid_out);

/* Branches. A branch is the ref refs/branches/<name> sharing the blocks of
 * its parent. Created from ds's branch head, or `from_branch`'s head, or the
 * AddData block of committed transaction `at_rid` (at most one of from/at).
 * SILT_EEXISTS when it exists. */
int silt_branch_create(silt_dataset *ds, const char *branch, const char *from_branch, const char *at_rid);
typedef struct silt_branch_info {
    char name[104];
    char head[72];
    uint64_t num_blocks;
    char open_txn[64]; /* rid of its OPEN transaction or "" */
} silt_branch_info;
/* Branches of the dataset, "master" first, then by name. *out malloc'd. */
int silt_branch_list(silt_branch_info **out, size_t *n_out, silt_dataset *ds);
/* Deletes a branch (its blocks stay). "master" and branches with an OPEN
 * transaction cannot be deleted (SILT_EINVAL / SILT_ECONFLICT). */
int silt_branch_delete(silt_dataset *ds, const char *branch);
/* Creates a branch of a files dataset that holds no transaction: at the
 * newest block of ds's branch before its first AddData (a Foundry branch
 * created without a transactionRid). Errors as silt_branch_create. */
int silt_branch_create_empty(silt_dataset *ds, const char *branch);

/* Foundry branch names (any text without control characters, as the
 * Foundry API allows: "dev/feature x") <-> silt branch names (src/files/
 * foundry_meta.c): a byte outside [A-Za-z0-9.-] (and '.' or '-' first) is
 * stored as "_XX" (upper-case hex), except a '_' that is not followed by
 * two upper-case hex digits, which stays. So every silt name without
 * "_XX" in it reads back unchanged ("my_branch"), and "dev/feature x" is
 * stored as "dev_2Ffeature_20x". encode: SILT_EINVAL "invalid branch name
 * …" for an empty name, a control character, or more than 100 stored chars.
 * *out malloc'd (free()). */
int silt_branch_name_encode(char **out, const char *name);
int silt_branch_name_decode(char **out, const char *stored);

/* The parent folder RID recorded for a dataset (Foundry's parentFolderRid;
 * silt has no folders: it is stored in info/foundry.json and reported
 * back). set: SILT_EINVAL unless folder_rid looks like "ri.<…>"
 * ([A-Za-z0-9._-], at most 256 chars). get: *out malloc'd, NULL when none
 * was recorded (returns 0). */
int silt_dataset_folder_set(silt_dataset *ds, const char *folder_rid);
int silt_dataset_folder_get(char **out, silt_dataset *ds);


/* ---- polling ingest (silt pull) ---------------------------------------------- */

typedef struct silt_pull_opts {
    bool fetch_uncacheable;     /* re-fetch sources that gave no caching validator */
    const char *set_watermark;  /* RFC 3339: commit only a new watermark (no fetch) */
    uint64_t target_records_per_slice; /* 0 = the Flow's targetRecordsPerSlice, or one slice */
    silt_report_fn warn;        /* warnings (e.g. a Pipe's stderr); may be NULL */
    void *warn_ctx;
    silt_progress_fn progress;  /* may be NULL; phase "pull", unit "files" */
    void *progress_ctx;
    bool no_wait;               /* another pull of the dataset is running: fail at once
                                   (SILT_ECONFLICT, out->busy) instead of waiting for it */
} silt_pull_opts;

typedef struct silt_pull_result {
    bool up_to_date;            /* nothing new: no block written */
    bool uncacheable;           /* skipped: the source has no caching validator */
    size_t num_ingests;         /* AddData blocks committed */
    uint64_t num_records;       /* records of all new slices */
    bool has_offsets;
    uint64_t first_offset, last_offset;
    bool has_watermark;
    char watermark[40];         /* RFC 3339 */
    char head[70];
    bool busy;                  /* opts->no_wait and another pull held the lock: nothing done */
    /* derivatives (silt_dataset_derive): input records the transform read,
     * and whether it ran incrementally (a stateless query over the new
     * input records only) rather than over the inputs' current state */
    uint64_t rows_read;
    bool incremental;
} silt_pull_result;

/* Runs the dataset's polling source (SetPollingSource): ingress (Url,
 * FilesGlob) -> prepare -> read -> preprocess -> merge -> commit. A Url
 * source is fetched once (conditionally: ETag / Last-Modified source
 * state); a FilesGlob source ingests every new file as its own AddData until
 * none remain. Each AddData is atomic; after a failure the blocks committed
 * before it stay (re-running continues after them) and the error is
 * returned (out still tells what was committed). With opts->set_watermark
 * only an AddData advancing the watermark is committed. Lost races are
 * retried as for silt_dataset_ingest; an input another writer has already
 * ingested (the source state moved) is SILT_ECONFLICT. Pulls of one dataset
 * never overlap: each holds the dataset's pull lock (info/pull.lock, a flock
 * released even on SIGKILL) and waits for it, or with opts->no_wait fails
 * with SILT_ECONFLICT "pull 'NAME': another pull of the dataset is running". */
int silt_dataset_pull(silt_pull_result *out, silt_dataset *ds, const silt_pull_opts *opts);

/* Runs the SQL transform of derivative dataset ds (src/ops/transform.c,
 * docs/transforms.md) over what its inputs gained since the last run and
 * commits one ExecuteTransform (plus a SetDataSchema when the result's
 * schema is new). Nothing new in any input (or an input without data yet):
 * out->up_to_date, nothing written. A stateless query (scans, projections,
 * filters, UNION ALL in its plan) reads only the new input records; any
 * other query is run over the inputs' current state and its difference to
 * the derivative's current state is committed as -R / +A records. A failure
 * writes nothing visible; the error names the dataset ("pull 'NAME': …"). */
int silt_dataset_derive(silt_pull_result *out, silt_dataset *ds);

/* `silt reset NAME[@BRANCH] --to BLOCK`: moves the head of the branch ds
 * was opened on back to an earlier block of its chain, named by `to`: its
 * hash, an unambiguous prefix of it, or its sequence number. One
 * compare-and-swap of the ref; no block or data file is deleted. On master,
 * refused (SILT_ECONFLICT "derivative 'd' has consumed blocks after block N
 * (its block M); reset it first, or give --force") when a derivative of the
 * workspace recorded a dropped block in its queryInputs, unless `force`.
 * Errors (all "reset 'NAME': …", nothing changed): SILT_ENOTFOUND no such
 * block, SILT_EINVAL an ambiguous prefix / a files dataset, SILT_ECONFLICT a
 * concurrent writer. Resetting to the head is a no-op (from_seq == to_seq).
 * *out: the sequence numbers before and after and the new head's hash. */
typedef struct silt_reset_result {
    uint64_t from_seq, to_seq;
    char head[70];
} silt_reset_result;
int silt_dataset_reset(silt_dataset *ds, const char *to, bool force, silt_reset_result *out);

/* The names of the inputs of derivative ds's SetTransform, in order
 * (NULL-terminated, caller frees with silt_strv_free; empty for a root
 * dataset). SILT_ENOTFOUND naming the input when one no longer exists. */
int silt_dataset_inputs(char ***names_out, silt_dataset *ds);

/* `silt lineage NAME`: the dependency graph around dataset `name`: its
 * inputs (SetTransform), transitively (upstream edges), and every
 * derivative of the workspace reading it, transitively (downstream edges,
 * found by scanning the workspace). nodes[0] is `name`, the others sorted
 * by name; edges (from = input, to = derivative) upstream first, each part
 * sorted by (from, to). *out: free with silt_lineage_free. SILT_ENOTFOUND
 * "dataset 'x' not found". */
typedef struct silt_lineage_node {
    char *name;
    silt_dataset_kind kind;
} silt_lineage_node;
typedef struct silt_lineage_edge {
    char *from, *to;
    bool upstream; /* on the way to the inputs of `name` (else to its consumers) */
} silt_lineage_edge;
typedef struct silt_lineage {
    silt_lineage_node *nodes;
    size_t num_nodes;
    silt_lineage_edge *edges;
    size_t num_edges;
} silt_lineage;
int silt_workspace_lineage(silt_lineage **out, silt_workspace *ws, const char *name);
void silt_lineage_free(silt_lineage *l);

/* A file a FilesGlob pull did not read (src/ingest/skipped.c): its event
 * time could not be taken from its name, or it sorts before the last file
 * the source ingested (it was added late) and will therefore never be read.
 * Recorded by the last successful pull of the dataset's source. */
typedef struct silt_skipped_file {
    char *dataset;  /* dataset name */
    char *source;   /* source state name: a Source resource's name, or
                       "odf/polling" for the SetPollingSource of the chain */
    char *file;     /* file name (last path component) */
    char *reason;   /* e.g. "event time pattern 'p' does not match 'f'" */
} silt_skipped_file;

/* Every skipped file recorded in the workspace, by dataset name, then
 * source, then as listed by the pull. Caller owns *out: free with
 * silt_skipped_files_free. */
int silt_pull_skipped_list(silt_skipped_file **out, size_t *n, silt_workspace *ws);
void silt_skipped_files_free(silt_skipped_file *v, size_t n);

/* ---- resources: Source and Flow (src/ingest/resources.c) -------------- */

/* A resource stored by `silt add`. */
typedef struct silt_resource_change {
    char *type;   /* "source" or "flow" */
    char *name;
    bool updated; /* replaced an existing resource of the same name */
} silt_resource_change;

/* Resources stored by the last silt_dataset_add_manifest call on this thread
 * (empty if it stored none or failed). Caller owns *out: free with
 * silt_resource_changes_free. */
int silt_resources_last_added(silt_resource_change **out, size_t *n);
void silt_resource_changes_free(silt_resource_change *v, size_t n);

typedef struct silt_source_info {
    char *name;
    char *ingress_kind;     /* "Url", "FilesGlob", … or "" */
    char *ingress_location; /* url / path / image / host (templates not rendered), or "" */
    char *merge_kind;       /* "Ledger", "Snapshot", "Append", … or "" */
    bool has_buffer;        /* a RestEndpoint with a buffer: the fields below are set */
    uint64_t buffer_size;   /* bufferSize (records) */
    char overflow_policy[16]; /* "Reject" or "DropOldest" */
    uint64_t buffered;      /* records buffered, summed over the datasets (silt_push_buffer_counts) */
    uint64_t dropped;       /* records DropOldest dropped, in all */
} silt_source_info;

/* All Source resources of the workspace, sorted by name. Caller owns *out:
 * free with silt_sources_free. */
int silt_sources_list(silt_source_info **out, size_t *n, silt_workspace *ws);
void silt_sources_free(silt_source_info *v, size_t n);

/* ---- MQTT subscriptions (silt serve; docs/ingestion.md "Mqtt") ----------- */

typedef struct silt_mqtt_ref {
    char *dataset;
    char *source; /* Source resource name, or "odf-polling" for a legacy SetPollingSource */
} silt_mqtt_ref;

/* Every MQTT source of the workspace: each Ingest task of a Flow whose
 * Source has `ingress: {kind: Mqtt}`, and each root dataset without flows
 * whose SetPollingSource fetches Mqtt. Datasets that cannot be read are
 * skipped. Caller owns *out (silt_mqtt_refs_free). */
int silt_mqtt_sources(silt_mqtt_ref **out, size_t *n, silt_workspace *ws);
void silt_mqtt_refs_free(silt_mqtt_ref *v, size_t n);

typedef struct silt_mqtt_sub_opts {
    int (*stop)(void *ctx); /* polled every 100 ms; nonzero: disconnect and return 0 */
    void *stop_ctx;
    silt_report_fn log;     /* dropped messages (secrets redacted); may be NULL */
    void *log_ctx;
} silt_mqtt_sub_opts;

typedef struct silt_mqtt_sub_result {
    bool subscribed;     /* the broker accepted CONNECT and SUBSCRIBE */
    uint64_t messages, records, duplicates, rejected;
} silt_mqtt_sub_result;

/* One connection of the persistent session of MQTT source `source` of
 * dataset `dataset`: buffers every message durably before acknowledging
 * it, until o->stop says so (0) or the connection fails (negative: SILT_EIO
 * network, SILT_EINVAL refused credentials / subscription, SILT_ECONFLICT
 * another process holds the session). Never flushes (silt pull or the
 * source's Flow do). The caller reconnects. `out` may be NULL. */
int silt_mqtt_subscribe(silt_workspace *ws, const char *dataset, const char *source, const silt_mqtt_sub_opts *o,
                        silt_mqtt_sub_result *out);

typedef struct silt_flow_info {
    char *name;
    char *target;      /* dataset name */
    char **schedules;  /* cron expressions of the Schedule triggers */
    size_t nschedules;
    int64_t next_run;  /* earliest next fire time after `now` (UNIX seconds, UTC), -1 if none */
    char *source;      /* Source of the first Ingest task, or NULL */
    uint64_t target_records_per_slice; /* of that task; 0 = not set */
} silt_flow_info;

/* All Flow resources, sorted by name; next_run is computed from `now`
 * (UNIX seconds; negative = the current time, which honours
 * SILT_FAKE_SYSTEM_TIME). Caller owns *out: free with silt_flows_free. */
int silt_flows_list(silt_flow_info **out, size_t *n, silt_workspace *ws, int64_t now);
void silt_flows_free(silt_flow_info *v, size_t n);

/* ---- flow scheduler (src/ops/scheduler.c; docs/ingestion.md "Flows and the
 * scheduler") ----------------------------------------------------------------
 *
 * A flow is a Flow resource (its Schedule triggers; a run = `silt pull` of
 * its target) or a legacy schedule given to a root dataset with a
 * SetPollingSource (`silt flows set NAME --cron EXPR`; the flow is named
 * after the dataset). Cron: 5 fields, or 6 with a leading second (cron.h).
 * Everything lives in `.silt/flows/`: schedules.json (legacy schedules),
 * state.json (per flow: the time up to which its schedule is satisfied,
 * consecutive failures, the next retry) and history.jsonl (the runs, at
 * most SILT_FLOW_HISTORY_MAX per flow), each rewritten atomically under its
 * own flock. */

#define SILT_FLOW_HISTORY_MAX 1000

/* Sets (cron != NULL) or removes (cron == NULL) the schedule of the root
 * dataset `dataset`'s SetPollingSource. SILT_EINVAL for a bad cron
 * expression (one line from the parser: "invalid cron expression '…': …"),
 * a dataset without a SetPollingSource, or one a Flow resource targets
 * (its schedule is the flow's); SILT_ENOTFOUND for an unknown dataset or,
 * when removing, a dataset without a schedule. */
int silt_flow_schedule_set(silt_workspace *ws, const char *dataset, const char *cron);

/* The legacy schedules as flows (name = target = the dataset, one schedule,
 * source NULL), sorted by name; next_run from `now` as silt_flows_list.
 * Free with silt_flows_free. */
int silt_flow_schedules_list(silt_flow_info **out, size_t *n, silt_workspace *ws, int64_t now);

/* One run of a flow, as kept in the history. */
typedef struct silt_flow_run {
    char *flow;
    char *dataset;
    char *trigger;   /* "schedule", "missed" (slots passed while no scheduler ran:
                        run once), "retry" (after a failure), "manual" */
    char *outcome;   /* "ok" (records added), "up-to-date", "failed", "busy" (another
                        pull of the dataset was running; not run), "aborted" (stopped
                        by SIGTERM: only whole AddData blocks were committed) */
    int64_t start, end; /* scheduler clock, UNIX seconds */
    unsigned attempt;   /* 1, or 1 + the failures before it */
    uint64_t records;   /* records added */
    uint64_t blocks;    /* AddData blocks committed */
    bool has_offsets;
    uint64_t first_offset, last_offset;
    char *error;        /* one line; NULL unless failed/busy/aborted */
} silt_flow_run;

/* The history, newest first; only `flow`'s runs when it is not NULL. An
 * empty history is not an error. Free with silt_flow_runs_free. */
int silt_flow_history(silt_flow_run **out, size_t *n, silt_workspace *ws, const char *flow);
void silt_flow_runs_free(silt_flow_run *v, size_t n);

/* The scheduler's clock (UNIX seconds): the time written in the file named by
 * $SILT_SCHEDULER_CLOCK_FILE (RFC 3339; read on every call — test-only, so
 * tests move time deterministically), else silt_time_now (which honours
 * SILT_FAKE_SYSTEM_TIME). SILT_EINVAL when the clock file cannot be read or
 * parsed. */
int silt_scheduler_clock(int64_t *now);

typedef struct silt_scheduler silt_scheduler;

typedef struct silt_scheduler_opts {
    const char *const *flows; /* only these flows (names); NULL = every flow */
    size_t nflows;
    silt_report_fn log;       /* one line per run start and end; may be NULL */
    void *log_ctx;
    /* called after each run with its history record (borrowed for the
     * call); may be NULL */
    void (*on_run)(void *ctx, const silt_flow_run *run);
    void *on_run_ctx;
} silt_scheduler_opts;

/* A scheduler over the workspace in `dir` (as silt_workspace_open; each tick
 * opens it anew, so a scheduler may run on its own thread). opts->flows
 * are checked at each tick (an unknown name is SILT_ENOTFOUND "flow 'X' not
 * found"). *out: free with silt_scheduler_free. */
int silt_scheduler_new(silt_scheduler **out, const char *dir, const silt_scheduler_opts *opts);
void silt_scheduler_free(silt_scheduler *s);

/* One tick at the scheduler clock's time: runs every due flow once, one at a
 * time. A flow is due when a cron slot passed since its state's time (any
 * number of slots: one run, trigger "missed" when more than one slot passed
 * or the slot is a minute late), or its retry time came. A flow seen for
 * the first time is not due: its schedule starts now. A failed run is
 * retried after 30 s, 1, 2, 4, 8 min, then every 10 min (and still at each
 * slot) until a run succeeds; a busy dataset is tried again after 30 s. A
 * flow is claimed (its state saved) before it runs, so two schedulers never
 * run one slot twice; the dataset's pull lock keeps runs from overlapping.
 * Every run is logged, appended to the history and given to opts->on_run.
 * Returns the number of runs (>= 0) or an error (the workspace, state or
 * clock could not be read; a failed run is not an error of the tick).
 * *next_due (may be NULL): the earliest time something becomes due, -1 if
 * never. */
int silt_scheduler_tick(silt_scheduler *s, int64_t *next_due);

/* Runs flow `name` now (trigger "manual"), due or not; its schedule counts
 * as satisfied up to now. 0 after the run whatever its outcome (reported as
 * by a tick), SILT_ENOTFOUND "flow 'NAME' not found". */
int silt_scheduler_run_flow(silt_scheduler *s, const char *name);

/* Frees the strings of *r and zeroes it. */
void silt_flow_run_clear(silt_flow_run *r);

/* Ticks until silt_scheduler_stop: once a second on the real clock, every
 * 200 ms when $SILT_SCHEDULER_CLOCK_FILE is set. A tick that fails is
 * logged and the loop goes on. Returns 0 once stopped. */
int silt_scheduler_loop(silt_scheduler *s);

/* Asks the scheduler to stop (async-signal-safe, any thread): the loop
 * returns after the current tick, and a run in progress stops at its next
 * safe point (a FilesGlob pull between files: SILT_ECANCELED, outcome
 * "aborted", retried at the next start; nothing half-committed). */
void silt_scheduler_stop(silt_scheduler *s);

/* ---- schemas on files datasets (src/files/files_schema.c) ---------------- */

/* `silt schema set`: sets the tabular schema of a files dataset's branch
 * from a YAML or JSON file holding either an ODF DataSchema (`fields:
 * [{name, type: {kind: …}}]`) or Foundry field types (`fieldSchemaList:
 * [{name, type: LONG, nullable, …}]`), plus `format: parquet|csv|json|avro`
 * (default parquet; avro: each file's writer schema must resolve to the
 * schema by the Avro resolution rules, src/engine/avro.h) and `csvOptions` (separator, header, quote, escape,
 * nullValue, encoding, dateFormat, timestampFormat: the fields of an ODF
 * ReadStepCsv). Recorded on the chain as an AddData without data whose
 * extra holds "silt.dev/filesSchema" (see docs/decisions.md), so it is
 * versioned per branch and per transaction. Errors name the file and field. */
int silt_files_schema_set(silt_dataset *ds, const char *path);
/* The same from a YAML or JSON document in memory (text, len bytes); error
 * messages name it `what` (e.g. "putSchema body"). */
int silt_files_schema_set_text(silt_dataset *ds, const char *text, size_t len, const char *what);

/* `silt schema infer`: a tabular schema proposed from the files of the
 * latest view (at == NULL) or of the view as of committed transaction `at`,
 * as a `silt schema set` document (YAML: `fields:` in the ODF DataSchema
 * form, `format:`, and for CSV `csvOptions` separator and header), so
 * upload -> infer -> set works. The format is told by magic bytes (Avro
 * "Obj\x01", Parquet "PAR1") or the extension (.csv/.tsv/.txt,
 * .json/.jsonl/.ndjson); every data file (not _* or .*) must have the same
 * format and schema. Avro: the writer schema (silt_avro_to_odf in
 * src/engine/avro.h); Parquet: the footer, CSV and JSON: DuckDB's sampling,
 * every column Option. Caller frees *out. Errors name the file:
 * SILT_EUNSUPPORTED "file 'x': cannot tell its format …", "… unsupported
 * union …"; SILT_EINVAL "file 'b' has another schema than 'a'";
 * SILT_ENOTFOUND "dataset 'x' has no data files to infer a schema from". */
int silt_files_schema_infer(char **out, silt_dataset *ds, const char *at);

/* The tabular schema in force at the latest view (at == NULL) or at
 * committed transaction `at`, as text (fmt as silt_dataset_schema_get;
 * TEXT adds "format: csv" and the CSV options after the fields). Caller
 * frees *out. SILT_ENOTFOUND "dataset 'x' has no tabular schema". */
int silt_files_schema_get(char **out, silt_dataset *ds, const char *at, silt_schema_format fmt);
/* The same schema as Foundry field types, for the Foundry datasets API:
 * *out (malloc'd) is compact JSON {"fieldSchemaList": [{name, type,
 * nullable, precision?, scale?, arraySubtype?, mapKeyType?, mapValueType?,
 * subSchemas?}], "format": "parquet"|"csv"|"json", "block": "<multihash of
 * the AddData that set it>"}. ODF types: Bool BOOLEAN, Int8 BYTE, Int16
 * SHORT, Int32 INTEGER, Int64 LONG, Float32 FLOAT, Float64 DOUBLE, String
 * STRING, Binary BINARY, Date DATE, Timestamp TIMESTAMP, Decimal DECIMAL,
 * List ARRAY, Map MAP, Struct STRUCT; nullable = wrapped in Option. Other
 * ODF types (unsigned integers, Float16, Time, Duration, Null) are
 * SILT_EUNSUPPORTED naming the field. SILT_ENOTFOUND as schema_get. */
int silt_files_schema_foundry(char **out, silt_dataset *ds, const char *at);

/* ---- retention and garbage collection (src/ops/retention.c, gc.c) -------- */

typedef struct silt_retention_policy {
    char branch[104]; /* "" = the dataset default (every branch without its own) */
    int64_t keep_days;
} silt_retention_policy;

/* Sets (keep_days >= 0) the policy of `branch` (NULL = dataset default).
 * Stored in info/retention.json. */
int silt_retention_set(silt_dataset *ds, const char *branch, int64_t keep_days);
/* Policies, default first then by branch. *out malloc'd (free()). */
int silt_retention_get(silt_retention_policy **out, size_t *n, silt_dataset *ds);

/* A transaction marked for deletion: its files are in no retained view. */
typedef struct silt_retention_mark {
    char rid[64];
    char branch[104];    /* a branch whose chain holds it */
    char committed[40];  /* commit time, RFC 3339 */
    char marked[40];     /* when it was marked */
    uint64_t num_files;  /* files it wrote */
    uint64_t bytes;
} silt_retention_mark;

/* Applies the policies: marks every committed transaction (any branch)
 * that wrote files none of which is in a retained view (the latest view of
 * every branch, the base of every OPEN transaction, the view as of every
 * transaction committed within keep-days on a branch; branches without any
 * policy retain every view), except transactions unmarked by hand. With
 * dry_run nothing is stored. *out: every mark now in force, oldest commit
 * first (malloc'd, free()). */
int silt_retention_apply(silt_retention_mark **out, size_t *n, silt_dataset *ds, bool dry_run);
/* Marks currently stored (not yet swept). */
int silt_retention_marks(silt_retention_mark **out, size_t *n, silt_dataset *ds);
/* Removes the mark of `rid` (NULL = all marks) and holds it: it is never
 * marked again. Returns the number unmarked; SILT_ENOTFOUND "transaction
 * RID is not marked in NAME" for an unmarked rid. */
int silt_retention_unmark(silt_dataset *ds, const char *rid);

typedef struct silt_gc_opts {
    bool dry_run;          /* report only */
    int64_t grace_seconds; /* < 0: $SILT_GC_GRACE_SECONDS or 3600 */
    silt_report_fn report; /* one line per deleted (or, dry run, deletable) thing; may be NULL */
    void *report_ctx;
    silt_progress_fn progress; /* may be NULL; phase "gc", unit "objects" (scanned), removed */
    void *progress_ctx;
} silt_gc_opts;

typedef struct silt_gc_result {
    uint64_t marked;              /* marks in force before the sweep */
    uint64_t transactions_purged; /* marked transactions swept */
    uint64_t objects_deleted;     /* data/ and checkpoints/ objects */
    uint64_t bytes_deleted;
    uint64_t leftovers_deleted;   /* .tmp-* files of crashed writes */
    uint64_t objects_scanned;     /* entries of data/ and checkpoints/ looked at */
} silt_gc_result;

/* `silt gc NAME`: applies the policies (silt_retention_apply), then sweeps:
 * records the marked transactions and their objects in info/purged.json,
 * then deletes every object of data/ and checkpoints/ that no retained view,
 * no open transaction, no slice and no checkpoint of any branch's chain
 * references (objects of marked transactions at once, other unreferenced
 * objects only once older than the grace period), plus .tmp-* leftovers of
 * crashed writes older than the grace period. Blocks are never deleted.
 * Safe against SIGKILL at any moment (re-running completes the sweep). */
int silt_gc(silt_gc_result *out, silt_dataset *ds, const silt_gc_opts *opts);
/* Workspace leftovers: the scratch directories of .silt/tmp/, .silt/trash/
 * and .silt/tmp/spill/ whose owner process has exited, at once (report line
 * "delete tmp/<x> (leftover of process <pid>, which has exited)"); those
 * whose owner cannot be checked (names of older silt versions, another host
 * or container) once older than the grace period ("delete tmp/<x>
 * (leftover of a crashed command)"). The directory of a live process is
 * never deleted, however old. Adds to out->leftovers_deleted. */
int silt_gc_workspace(silt_gc_result *out, silt_workspace *ws, const silt_gc_opts *opts);

/* Was the object of `content_hash` (a file of a view) purged by retention?
 * 1 yes (rid of its transaction into rid_out, 64 bytes), 0 no. */
int silt_files_purged(char *rid_out, silt_dataset *ds, const char *content_hash);

/* The same question for many files (a listing of a view): the purge record
 * is read once by silt_purged_load instead of once per file. Caller owns *out
 * (silt_purged_free), which borrows ds (ds must outlive it); SILT_ECORRUPT
 * when the record is not a JSON object. silt_purged_check answers like
 * silt_files_purged, from the record as loaded. */
typedef struct silt_purged silt_purged;
int silt_purged_load(silt_purged **out, silt_dataset *ds);
int silt_purged_check(char *rid_out, const silt_purged *p, const char *content_hash);
void silt_purged_free(silt_purged *p);

/* ---- API tokens (src/ops/tokens.c; docs/server.md "Tokens") -------------- */

/* Bearer tokens for `silt serve`. Stored in `.silt/tokens.json` (mode 0600;
 * a file readable or writable by group or others is refused with
 * SILT_EINVAL "…/tokens.json: mode 0644 is too open: …"), one entry per
 * token: name, SHA-256 (hex) of the secret, scope, dataset patterns,
 * created, expires, last used. The secret itself is never stored: it is
 * returned once by silt_token_create. Secret format: "silt_" followed by
 * 43 base64url characters (RFC 4648 §5, no padding) of 32 bytes from the
 * kernel's CSPRNG; the stored hash is SHA-256 of the whole text, prefix
 * included. Every change is an atomic rewrite under the flock of
 * `.silt/tokens.lock`, so `silt token` and a running server can work at
 * once. Times are RFC 3339 UTC, whole seconds, from the clock of the rest
 * of silt (SILT_FAKE_SYSTEM_TIME honoured). */

typedef enum silt_scope { SILT_SCOPE_READ = 1, SILT_SCOPE_WRITE = 2, SILT_SCOPE_ADMIN = 3 } silt_scope;
/* "read" | "write" | "admin" -> *out; SILT_EINVAL "unknown scope 'x' (read,
 * write or admin)" otherwise. */
int silt_scope_parse(silt_scope *out, const char *name);
/* "read" | "write" | "admin" (static); "?" for other values. */
const char *silt_scope_name(silt_scope s);

#define SILT_TOKEN_NAME_MAX 64

typedef struct silt_token_info {
    char name[SILT_TOKEN_NAME_MAX + 1];
    silt_scope scope;
    char **datasets;     /* dataset name patterns (malloc'd, each and the array); none = every dataset */
    size_t ndatasets;
    char created[40];    /* RFC 3339 */
    char expires[40];    /* RFC 3339; "" = never */
    char last_used[40];  /* RFC 3339; "" = never (recorded at most once a minute) */
} silt_token_info;

/* Frees the patterns of one info and zeroes it (NULL is a no-op). */
void silt_token_info_clear(silt_token_info *t);
/* Clears each of v[0..n) and frees v (NULL is a no-op). */
void silt_token_infos_free(silt_token_info *v, size_t n);

/* Creates token `name` ([A-Za-z0-9._-], 1..64 chars) with `scope`, limited
 * to the datasets matching one of `patterns` (fnmatch globs, each 1..255
 * printable characters; npatterns 0 = every dataset), expiring
 * `expires_days` days (at most 36500) after now (<= 0: never). *secret_out
 * receives the secret (malloc'd; the caller frees it, and should wipe it
 * first); it is not kept anywhere. info_out (may be NULL) receives the
 * stored entry (clear with silt_token_info_clear). Errors: SILT_EEXISTS
 * "token 'x' already exists", SILT_EINVAL for a bad name, scope, pattern or
 * day count, the errors of reading tokens.json. */
int silt_token_create(char **secret_out, silt_token_info *info_out, silt_workspace *ws, const char *name,
                      silt_scope scope, const char *const *patterns, size_t npatterns, int64_t expires_days);
/* Every token, sorted by name, expired ones included. *out malloc'd (free
 * with silt_token_infos_free; NULL when n is 0). No tokens file = none. */
int silt_token_list(silt_token_info **out, size_t *n, silt_workspace *ws);
/* Deletes token `name`: its secret is refused from the next check on.
 * SILT_ENOTFOUND "no token named 'x'". */
int silt_token_revoke(silt_workspace *ws, const char *name);

/* For the server: a thread-safe, cached view of tokens.json. The set
 * copies the path it needs; ws may be freed before the set. */
typedef struct silt_token_set silt_token_set;
int silt_token_set_open(silt_token_set **out, silt_workspace *ws);
/* Authenticates a presented secret (the text after "Bearer "). 0 and *out
 * filled (clear with silt_token_info_clear) when it is the secret of an
 * unexpired token; SILT_ENOTFOUND "invalid or expired token" otherwise
 * (unknown, revoked, expired, empty or NULL: one message, no detail). The
 * time taken does not depend on which bytes of the secret are right: the
 * presented secret is hashed and compared against every stored hash with
 * CRYPTO_memcmp, without early exit. Sees tokens created or revoked since
 * the last call: the file is stat()ed on every call and reloaded when its
 * inode, size, mtime or ctime changed (the loaded file is kept open, so its
 * inode cannot be reused by a later version). Records the last use of a
 * token at most once a minute (a rewrite of tokens.json under its lock; a
 * failure to record is ignored). Other errors (SILT_EINVAL for a tokens
 * file that is too open or malformed, SILT_EIO) mean that no request can
 * be authenticated until the file is fixed: the server should answer 500
 * and log silt_error_last(). Safe to call from many threads at once. */
int silt_token_set_check(silt_token_set *s, const char *secret, silt_token_info *out);
void silt_token_set_free(silt_token_set *s);
/* Does token t allow dataset `dataset_name`: no patterns = every dataset,
 * else a match of one pattern (fnmatch(3) without FNM_PATHNAME/FNM_PERIOD,
 * so '*' matches '.' and '/'). */
bool silt_token_allows(const silt_token_info *t, const char *dataset_name);


/* ---- repositories, push and pull between nodes (src/ops/transfer_ws.c) ---- */

/* A named repository of the workspace (.silt/repos.yaml): a URL
 * (file:///path, http(s)://host[:port]/odf, s3://bucket/prefix) and the
 * name of the environment variable holding its bearer token (NULL: the
 * default SILT_TOKEN). Secrets are never stored in the workspace. */
typedef struct silt_repo {
    char *name;
    char *url;
    char *token_env; /* NULL = SILT_TOKEN */
} silt_repo;

/* Adds repository `name` (the dataset-name grammar) at `url`; SILT_EEXISTS
 * "repository 'N' already exists", SILT_EINVAL for a bad name, URL or
 * variable name. The URL is checked for its scheme, not contacted. */
int silt_repo_add(silt_workspace *ws, const char *name, const char *url, const char *token_env);
/* The repositories, sorted by name (caller frees with silt_repos_free). */
int silt_repo_list(silt_repo **out, size_t *n, silt_workspace *ws);
void silt_repos_free(silt_repo *v, size_t n);
/* SILT_ENOTFOUND "repository 'N' not found". */
int silt_repo_delete(silt_workspace *ws, const char *name);

typedef struct silt_transfer_opts {
    int jobs;               /* parallel object transfers, 0 = 8 */
    bool force;             /* overwrite a diverged target (push) or local dataset (pull) */
    const char *as;         /* pull: local name of a clone (NULL = the remote name) */
    const char *token_env;  /* variable of the bearer token for a URL (NULL = the
                               repository's, else SILT_TOKEN) */
    silt_report_fn note;    /* what --force drops, one line each (may be NULL) */
    void *note_ctx;
} silt_transfer_opts;

typedef struct silt_transfer_result {
    char name[128];         /* the local dataset */
    char remote[1024];      /* REPO/NAME or dataset URL */
    bool cloned;            /* pull created the local dataset */
    bool up_to_date;
    char old_head[70], new_head[70]; /* of the target ("" = none before) */
    uint64_t blocks, objects, bytes, skipped, dropped;
} silt_transfer_result;

/* Is `arg` a remote dataset reference (a dataset URL scheme://…/NAME or
 * REPO/NAME)? Dataset names never hold '/', so any '/' makes it one; an
 * unknown REPO is an error of silt_remote_pull, not a local name. */
bool silt_remote_ref_is(silt_workspace *ws, const char *arg);
/* Pulls remote dataset `remote` (URL or REPO/NAME): clones it (same DID,
 * local name opts->as or the remote name; the remote is remembered in the
 * dataset's info/remote) or, when the local dataset exists, fetches what is
 * new. Nothing is visible before every block and object is present and
 * verified; the clone appears at once, an update moves the ref by CAS.
 * Divergence: SILT_ECONFLICT naming both heads. */
int silt_remote_pull(silt_transfer_result *out, silt_workspace *ws, const char *remote, const silt_transfer_opts *o);
/* The remote remembered by a clone (malloc'd) or *out = NULL. */
int silt_dataset_remote_get(char **out, silt_dataset *ds);
/* Pushes local dataset `name` to `remote` (URL or REPO/NAME; NULL = the
 * remote it was cloned from): objects, then blocks, then the ref by CAS
 * against the head read at the start. */
int silt_remote_push(silt_transfer_result *out, silt_workspace *ws, const char *name, const char *remote,
                     const silt_transfer_opts *o);

/* Node side of a push (server/odf.c): stores object kind/<hash> of dataset
 * `name` from the file `body_path` after checking that it hashes to `hash`
 * (SILT_ECORRUPT "KIND/<hash>: the body does not match its hash"). Objects
 * of a dataset the node does not have yet go to a staging directory until
 * its ref is set. */
int silt_node_object_put(silt_workspace *ws, const char *name, const char *kind, const char *hash,
                         const char *body_path);
/* Node side of a pusher's HEAD: opens object kind/<hash> of dataset `name`
 * for reading, from the dataset or, when the node does not have the
 * dataset yet, from the objects an interrupted first push staged (so that
 * the push resumes instead of sending them again). *fd_out (O_RDONLY,
 * close-on-exec; the caller closes it) and *size_out are set on success.
 * SILT_ENOTFOUND when absent, SILT_EINVAL for a bad kind, name or hash,
 * SILT_EIO on I/O errors. */
int silt_node_object_open(int *fd_out, uint64_t *size_out, silt_workspace *ws, const char *name, const char *kind,
                          const char *hash);
/* Node side of a ref update: sets refs/head of `name` to `value` if it is
 * `expected` (NULL: the dataset must not exist; it is created from the
 * staged objects, same DID). Every block from `value` back to `expected`
 * and every object they name must be present (SILT_EVALIDATION naming the
 * first missing one). SILT_ECONFLICT when the head is not `expected`. */
int silt_node_ref_set(silt_workspace *ws, const char *name, const char *expected, const char *value);

#ifdef __cplusplus
}
#endif
#endif
