/* merge.h — the Merge phase of ODF ingestion: the five merge strategies
 * (Append, Ledger, Snapshot, ChangelogStream, UpsertStream) as set-based SQL
 * over DuckDB TEMP tables.
 *
 * Tables and columns
 * ------------------
 * Input: TEMP TABLE `input`, whose rowid order is the input order. It holds
 * the data columns and the event time column (spec->event_time_column); for
 * ChangelogStream it must and for UpsertStream it may also hold the op column
 * (spec->op_column, any integer type, values 0..3). For Append, Ledger and
 * Snapshot an op column in the input is an error (the name is reserved).
 * "Data columns" below are all input columns except the op and event time
 * columns, in input order. Primary key columns may be any data column or the
 * event time column. Column names are matched case-insensitively, like DuckDB.
 *
 * Output: TEMP TABLE `out` with the columns
 *     (<op column> UTINYINT, <event time column>, <data columns…>)
 * with the input's column types; its rowid order is the final changelog order
 * (offsets are assigned in that order). An existing `out` / `out_state` table
 * is replaced. *out_rows receives the row count of `out`.
 *
 * State (`prev_state` in, `out_state` out; not used by Append, where
 * out_state may be NULL):
 *   - Ledger: one row per primary key ever seen, columns = the primary key
 *     columns (input types).
 *   - Snapshot, ChangelogStream, UpsertStream: one row per key currently
 *     present in the projected dataset, columns = (<event time column>,
 *     <data columns…>) — i.e. exactly the data fields of the last +A/+C row
 *     written for that key, so -R/-C rows built from it carry the exact
 *     previous values and event time.
 * prev_state NULL means "no previous state" (first ingest). The state is meant
 * to be persisted as a Parquet checkpoint and read back with read_parquet: its
 * columns are matched by name and converted back to the input's types, so
 * types that Parquet widens (TIMESTAMP_MS -> TIMESTAMP, ENUM -> VARCHAR, …)
 * round-trip; HUGEINT/UHUGEINT are stored by DuckDB as DOUBLE and lose
 * precision beyond 2^53. Columns missing from the state (additive schema
 * evolution) read as NULL; a missing primary key column is an error. The cost
 * of one merge is linear in the sizes of input and state, never in the number
 * of earlier merges.
 *
 * Semantics (row numbers in messages are 1-based positions in input order)
 * --------------------------------------------------------------------------
 * Append: every input row as +A, input order kept.
 * Ledger{pk}: rows whose key is not in the state, as +A, ordered by event time
 *   (NULLs first), ties in input order. Rows whose key was seen before are
 *   dropped (even if their values differ: ledger rows are immutable).
 * Snapshot{pk, compare}: full diff of the input (the complete new snapshot)
 *   against the state: new key -> +A (new values); vanished key -> -R (old
 *   values and old event time); changed key -> -C (old values, old event time)
 *   then +C (new values, new event time); unchanged -> nothing. "Changed" =
 *   any compare column IS DISTINCT FROM its old value; the default compare set
 *   is every data column that is not a key column (the event time is NOT
 *   compared by default, so a fallback event time that moves on every ingest
 *   causes no corrections). If the event time column is listed in
 *   compare_columns, a NULL new event time never counts as a change. Output
 *   order: primary key columns ascending, then op (so -C precedes its +C).
 *   The new state keeps the old row (old event time, old values of columns
 *   outside the compare set) for unchanged keys and the new row otherwise.
 *   NULL event times in the input are passed through (+A/+C rows and state
 *   alike); callers fill them with a fallback before merging.
 * Ledger and Snapshot reject NULL key values ("NULL primary key column 'city'
 *   in row 3") and keys that occur more than once with different values
 *   ("duplicate primary key (country='CA', city='Vancouver') with different
 *   values"); fully identical duplicate rows collapse into the first one.
 * ChangelogStream{pk}: the input is already a changelog; it is validated and
 *   passed through in input order (never reordered): op must be 0..3; keys
 *   non-NULL; a +C must directly follow a -C of the same key and every -C
 *   must be directly followed by a +C of the same key; +A only for a key not
 *   currently present; -R/-C only for a present key (in state or made present
 *   earlier in the batch) and carrying exactly its current values (all data
 *   columns and the event time, NULL-safe).
 * UpsertStream{pk}: rows are upserts, or deletes where op = 1 (no op column:
 *   all upserts; op must be 0..3, everything but 1 is an upsert). Keys must be
 *   non-NULL. Within a batch the last row per key (input order) wins. Winner
 *   -> new key: +A; existing key with a changed data column (event time not
 *   compared, as for Snapshot): -C (old) +C (new); unchanged: nothing; delete
 *   of an existing key: -R with the old values; delete of an unknown key:
 *   dropped. Output order: primary key ascending, then op (as kamu).
 *
 * Errors: SILT_EINVAL with a one-line message (bad spec, missing columns, bad
 * data as above); engine errors as reported by the engine. Nothing is left
 * behind on error (no `out`/`out_state`, no work tables; existing tables named
 * `out`/`out_state` are only replaced once everything succeeded).
 */
#ifndef SILT_ENGINE_MERGE_H
#define SILT_ENGINE_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"

typedef struct silt_merge_spec {
    int strategy; /* ODF_MergeStrategy_Append/Ledger/Snapshot/ChangelogStream/UpsertStream */
    const char *const *primary_key;
    size_t npk;
    const char *const *compare_columns; /* Snapshot only; 0 = all non-key data columns */
    size_t ncompare;
    const char *event_time_column; /* NULL = "event_time" */
    const char *op_column;         /* NULL = "op" */
} silt_merge_spec;

/* Runs one merge; see above. All names are TEMP table names (unquoted; they
 * are quoted here). Strings in `spec` are borrowed for the call only. */
int silt_merge(silt_engine *e, const silt_merge_spec *spec, const char *input, const char *prev_state,
               const char *out, const char *out_state, uint64_t *out_rows);

#endif
