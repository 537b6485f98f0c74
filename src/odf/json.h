/* json.h — JSON form of ODF metadata (for `silt log --json` and tooling).
 *
 * Same field names and value forms as the YAML form (yaml.h): camelCase keys
 * in schema order, unions as objects with "kind" first, timestamps RFC 3339,
 * multihashes "f1620…", DIDs "did:odf:…", raw bytes base64, ExtraAttributes
 * as the attribute object itself. JSON input is read with the YAML parser.
 *
 * Also holds the canonical compact JSON writer used for JSON-valued fields
 * (ExtraAttributes.entries): sorted keys, no whitespace, serde_json string
 * escaping and shortest round-trip floats, byte-identical to serde_json's
 * `to_string` of a BTreeMap-based value.
 */
#ifndef SILT_ODF_JSON_H
#define SILT_ODF_JSON_H

#include <jansson.h>

#include "odf/desc.h"
#include "util/buf.h"

/* New reference (owned by the caller) to the JSON value of `obj`, an object
 * described by `d`. NULL with silt_err() recorded on failure. */
json_t *odf_to_json(const odf_table_desc *d, const void *obj);

/* JSON value of a union (object with "kind" first); NULL on failure. */
json_t *odf_union_to_json(const odf_union_desc *u, const odf_union *v);

/* Appends the canonical compact text of `v` to `out` (sorted keys, serde_json
 * escaping, shortest floats; NaN/infinity written as null). 0 or SILT_ENOMEM. */
int odf_json_canonical(silt_buf *out, const json_t *v);

/* Formats a finite double the way serde_json / ryu do ("1.0", "0.1",
 * "1e16", "1.5e-7"); out needs 32 bytes. */
void odf_json_format_double(double v, char *out);

#endif
