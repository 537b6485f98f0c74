/* read.h — the Read phase of ODF ingestion: input files -> a DuckDB table.
 *
 * A ReadStep (odf_union of ReadStepCsv, Json, NdJson, GeoJson, NdGeoJson,
 * EsriShapefile, Parquet; see src/odf/odf.fbs) says how raw files are turned
 * into rows. Every reader produces a TEMP TABLE whose rowid order is the input
 * order (files in the given order, rows in file order). When the step carries
 * a `schema` (or the legacy `ddlSchema`), columns are coerced to the declared
 * types and the first value that does not fit is reported with its file, row
 * (and CSV line) and column.
 *
 * Errors: negative SILT_E* after silt_err(); messages start with the file's
 * display name, e.g. "data.csv: line 4: expected 3 fields, found 2".
 */
#ifndef SILT_ENGINE_READ_H
#define SILT_ENGINE_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "odf/odf_types.h"
#include "util/arena.h"
#include "util/buf.h"

/* Reads `nfiles` input files with `read_step` into a new TEMP TABLE `table`
 * (replacing it if it exists). Rows keep file order, then in-file order (the
 * table's rowid order is the input order). `display_names` (may be NULL) are
 * the names used in errors instead of the paths (e.g. "-" for stdin).
 * On error nothing named `table` is left behind (a previous table of that
 * name is dropped too). Temporary files live in a private directory that is
 * removed before returning: a scratch directory (util/scratch.h, named
 * after the process) in the engine's spill directory (`temp_directory`)
 * when that is an absolute directory — inside the workspace for every
 * engine silt opens — else under $TMPDIR (or /tmp). */
int silt_read_files(silt_engine *e, const odf_union *read_step, const char *const *files,
                    const char *const *display_names, size_t nfiles, const char *table);

/* A default ReadStep for a --format name: csv (header: true, inferSchema:
 * true), json, ndjson, geojson, ndgeojson, parquet, shp; the variant struct is
 * allocated in `a` (out->value is arena-owned). SILT_EINVAL "unknown format
 * 'x'" otherwise. */
int silt_read_step_for_format(silt_arena *a, const char *format, odf_union *out);

/* The ReadStep for files of `format` ingested into a push source that reads
 * with `base` (`silt ingest --format F`, transcoding). `format` names
 * `base`'s own kind: `base` itself, every option kept. Another kind:
 * silt_read_step_for_format's default carrying only `base`'s declared
 * schema (`schema`, else the legacy `ddlSchema`, as declared), so the
 * columns keep the declared names and types (JSON / NDJSON / Parquet
 * columns are selected and cast by name); with a declared schema CSV is
 * read without a header, the fields being the schema's in order. Other
 * options (separator, encoding, date formats, subPath) belong to the
 * source's format and are not carried. `out` may share `base`'s schema
 * (owned by the owner of `base`); new structs are allocated in `a`. */
int silt_read_step_transcode(silt_arena *a, const odf_union *base, const char *format, odf_union *out);

/* Which implementation silt_read_files uses (per thread; for tests and
 * benchmarks). AUTO: the single-scan fast path where it applies (CSV with a
 * schema or inferSchema off, Json/NdJson with a schema, Parquet), falling
 * back to the diagnostic slow path on any error; SLOW: always the slow path
 * (stage as text, check every conversion, convert). Both give identical
 * tables and identical error messages. VERIFY (also AUTO with the
 * environment variable SILT_READ_VERIFY=1): after a fast-path success the
 * slow path reads the input again into a shadow table and the two tables must
 * match (names, types, rows, row order), else SILT_EINTERNAL "read verify: …".
 * Fast path failures fall back exactly as in AUTO. SILT_READ_MODE=slow in
 * the environment forces the slow path (for comparing whole runs). */
typedef enum { SILT_READ_AUTO = 0, SILT_READ_SLOW = 1, SILT_READ_VERIFY = 2 } silt_read_mode;
void silt_read_set_mode(silt_read_mode mode);
/* True when the last successful silt_read_files on this thread was served
 * by the fast path. */
bool silt_read_last_was_fast(void);

/* ---- building blocks, exposed for tests and fuzzing ------------------- */

/* Validates the dialect options of a ReadStepCsv (separator, quote, escape,
 * encoding, nullValue, dateFormat, timestampFormat) without touching any
 * file. Errors name the option: "Csv.separator must be a single character,
 * got ';;'". */
int silt_read_csv_check_options(const odf_ReadStepCsv *csv);

/* Appends the DuckDB strptime format for an ODF date/timestamp format to
 * `out`: "" (nothing appended) for "rfc3339"/NULL, strftime-style formats
 * (containing '%') are validated and copied, Java SimpleDateFormat patterns
 * (yyyy-MM-dd HH:mm:ss.SSS, 'T' literals, ...) are translated. `what` names
 * the option in errors, e.g. "Csv.dateFormat". */
int silt_read_translate_datefmt(silt_buf *out, const char *fmt, const char *what);

/* Shapefile -> NDJSON conversion (read_shp.c). `path` is a .shp file or a
 * .zip archive holding one (selected by `sub_path`, a glob, when several);
 * `tmpdir` is a scratch directory owned by the caller. Writes one JSON object
 * per record to `ndjson_path` (dbf attributes then "geometry" as GeoJSON
 * text) and appends the DuckDB column list of the result
 * ("'NAME': 'BIGINT', ..., 'geometry': 'VARCHAR'", read_json `columns` entries) to `columns`.
 * `display` names the input in errors. */
int silt_read_shp_to_ndjson(const char *path, const char *display, const char *sub_path,
                            const char *tmpdir, const char *ndjson_path, silt_buf *columns);

/* ---- record counts (read_count.c) --------------------------------------
 *
 * silt_read_files compares the rows of every input file with its records
 * counted by these parsers, which share nothing with DuckDB's readers: a
 * difference is SILT_EINTERNAL "<file>: row count cross-check failed: the
 * reader produced R rows, the file has N records" and nothing is read. */

/* Longest CSV record silt reads (bytes, line break excluded); DuckDB's line
 * buffer is sized from the longest record of each file, up to this. */
#define SILT_READ_CSV_MAX_RECORD ((uint64_t)256 * 1024 * 1024)

/* What one pass over a CSV file found. A record is everything up to an
 * unquoted LF, CRLF or CR (or the end of the file); a quoted value may hold
 * line breaks, a doubled quote or an escaped quote / escape character. */
typedef struct silt_csv_stats {
    uint64_t records;       /* non-empty records, a header included */
    uint64_t empty;         /* empty lines after the first non-empty record */
    uint64_t leading_empty; /* empty lines before it */
    uint64_t max_len;       /* bytes of the longest record, line break excluded */
    uint64_t max_line;      /* 1-based line where that record starts (0: none) */
} silt_csv_stats;

/* Scans the CSV file at `path` with the quote / escape options of `csv`
 * (validated, see silt_read_csv_check_options); `display` names it in
 * errors (SILT_ENOTFOUND, SILT_EIO, SILT_ENOMEM). A leading UTF-8 BOM is
 * skipped. The _mem form scans a buffer and cannot fail. */
int silt_read_csv_scan(const char *path, const odf_ReadStepCsv *csv, const char *display, silt_csv_stats *out);
int silt_read_csv_scan_mem(const void *data, size_t len, const odf_ReadStepCsv *csv, silt_csv_stats *out);
/* The same scan through the byte-at-a-time state machine only (the others
 * decode 64-byte blocks from bit masks): the reference, for tests and fuzzing. */
int silt_read_csv_scan_mem_scalar(const void *data, size_t len, const odf_ReadStepCsv *csv, silt_csv_stats *out);

/* Data rows a reader must produce from a scanned file: the non-empty
 * records less the header; with one column an empty line is a row too
 * (a NULL), except the empty lines before the header. */
uint64_t silt_read_csv_rows(const silt_csv_stats *s, bool header, size_t ncols);

/* Records of an NDJSON file: lines holding a byte other than JSON
 * whitespace (a leading BOM skipped). */
int silt_read_ndjson_count(const char *path, const char *display, uint64_t *out);
int silt_read_ndjson_count_mem(const void *data, size_t len, uint64_t *out);

/* Appends `v` to `out` as JSON in the style of serde_json: shortest
 * round-trip digits, integral values with ".0", non-finite as null. */
int silt_read_json_number(silt_buf *out, double v);

#endif
