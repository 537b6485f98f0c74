/* yaml.h — YAML text form of ODF metadata (manifests, blocks, events).
 *
 * Parsing and emitting are generic over the reflection descriptors of desc.h,
 * so every ODF table/union/enum is covered. The text form follows the ODF
 * reference implementation (serde_yaml): camelCase field names in schema
 * order, unions as mappings tagged with `kind:` (first), timestamps RFC 3339,
 * multihashes as multibase "f1620…", DIDs as "did:odf:…", raw bytes base64,
 * ExtraAttributes as the attribute mapping itself.
 *
 * Parsing accepts any YAML 1.2 document (JSON included) but is strict:
 * unknown fields, duplicate keys, missing required fields, wrong value types
 * and out-of-range integers are SILT_EINVAL with a message naming the file,
 * line and field path, e.g.
 *   "manifest.yaml:7: content.event.newData.offsetInterval.start: expected an
 *    unsigned integer, got 'abc'".
 * Union kinds and enum values are accepted in PascalCase, camelCase or all
 * lower case; a union may be given in short form as a plain scalar (its kind,
 * with no fields). Nesting is limited to 64 levels; aliases are rejected.
 * Non-optional scalar fields (integers, bools, enums without `= null` in the
 * .fbs) must be present, like in the reference implementation.
 *
 * All decoded memory belongs to the arena passed in.
 */
#ifndef SILT_ODF_YAML_H
#define SILT_ODF_YAML_H

#include <stddef.h>

#include "odf/desc.h"
#include "util/arena.h"
#include "util/buf.h"

#define ODF_YAML_MAX_DEPTH 64

/* Parses a YAML mapping into a new struct described by `d`, allocated in `a`.
 * `filename` is used in error messages only (NULL = "<input>").
 * Returns 0 and sets *out, or a negative SILT_E* code. */
int odf_yaml_parse(silt_arena *a, const char *text, size_t len, const char *filename,
                   const odf_table_desc *d, void **out);

/* Parses a manifest envelope `{kind: K, version: N, content: {...}}`.
 * kind "MetadataBlock" (versions 2 and 3) -> odf_MetadataBlock,
 * kind "DatasetSnapshot" (version 1) -> odf_DatasetSnapshot.
 * If `expected_kind` is non-NULL the manifest must be of that kind.
 * *version_out (may be NULL) receives the version. Error paths inside the
 * content start with "content.". */
int odf_yaml_parse_manifest(silt_arena *a, const char *text, size_t len, const char *filename,
                            const char *expected_kind, int *version_out, void **out);

/* Parses a bare MetadataEvent mapping `{kind: AddData, ...}` into *out
 * (type = 1-based variant index, value = the variant struct). */
int odf_yaml_parse_event(silt_arena *a, const char *text, size_t len, const char *filename,
                         odf_union *out);

/* Appends the YAML form of `obj` (a block mapping, one "key: value" per line,
 * each line prefixed by `indent` spaces) to `out`. */
int odf_yaml_emit(silt_buf *out, const odf_table_desc *d, const void *obj, int indent);

/* Appends a whole manifest document:
 *   kind: <kind>\nversion: <version>\ncontent:\n  <obj fields>…  */
int odf_yaml_emit_manifest(silt_buf *out, const char *kind, int version,
                           const odf_table_desc *d, const void *obj);

/* Appends a bare union value (e.g. a MetadataEvent) as a mapping starting
 * with `kind:`. */
int odf_yaml_emit_union(silt_buf *out, const odf_union_desc *u, const odf_union *v, int indent);

#endif
