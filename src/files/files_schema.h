/* files_schema.h — tabular schemas on files datasets (files_schema.c): the
 * chain attribute that records them and the SQL view over the files of a
 * view read with them. The public API (silt_files_schema_set/get) is in
 * silt.h; the storage decision is in docs/decisions.md.
 */
#ifndef SILT_FILES_FILES_SCHEMA_H
#define SILT_FILES_FILES_SCHEMA_H

#include <jansson.h>
#include <stdint.h>

#include "engine/engine.h"
#include "files/files.h"
#include "silt.h"

/* Extra attribute key of the AddData that sets a files dataset's tabular
 * schema: {"schema": <ODF DataSchema JSON>, "format": "parquet|csv|json",
 * "csvOptions": {<ReadStepCsv fields>}} or {"schema": null} (removed). */
#define SILT_FILES_SCHEMA_KEY "silt.dev/filesSchema"

/* The tabular schema attribute in force at block `at` (NULL = head) of ds's
 * branch: *out = new reference to the attribute object, or NULL when no
 * schema was ever set (or it was removed). */
int silt_files_schema_at(silt_dataset *ds, const uint8_t *at, json_t **out);

/* Creates TEMP TABLE/VIEW `view` in `e` holding the files of ds's view (as
 * of block `upto`, NULL = latest) read with the tabular schema.
 * SILT_ENOTFOUND "dataset 'x' has no tabular schema"; a file that does not
 * conform: SILT_EINVAL "dataset 'x': file 'p' does not conform to the
 * schema (format csv): <engine message>". */
int silt_files_create_sql_view(silt_engine *e, silt_dataset *ds, const char *view, const uint8_t *upto);

/* The same for the view `spec` (files/files.h; NULL = latest), read with
 * the schema in force at its last transaction (range end or `at`; the head
 * for the latest view). An unknown rid is SILT_ENOTFOUND "transaction RID
 * is not committed on branch B of NAME". */
int silt_files_create_sql_view_spec(silt_engine *e, silt_dataset *ds, const char *view,
                                    const silt_view_spec *spec);

#endif
