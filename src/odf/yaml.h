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
 * with no fields). The input limits below apply (nesting at most 64 levels,
 * no anchors or aliases, at most 32 MiB of UTF-8). Non-optional scalar fields (integers, bools, enums without `= null` in the
 * .fbs) must be present, like in the reference implementation.
 *
 * All decoded memory belongs to the arena passed in.
 */
#ifndef SILT_ODF_YAML_H
#define SILT_ODF_YAML_H

#include <stddef.h>
#include <yaml.h>

#include "odf/desc.h"
#include "util/arena.h"
#include "util/buf.h"

/* ---- limits on YAML/JSON input --------------------------------------------
 * Every YAML or JSON text silt reads from a user — manifests, event files,
 * YAML blocks, Source/Flow resources, schema files, secrets and variables —
 * is held to the same limits (docs/decisions.md, "Bounded YAML input"):
 *   - at most ODF_YAML_MAX_BYTES bytes;
 *   - UTF-8: a UTF-8 byte order mark is skipped, UTF-16/UTF-32 is refused;
 *   - collections nested at most ODF_YAML_MAX_DEPTH deep (the top-level node
 *     is level 1);
 *   - no anchors or aliases.
 * Depth and anchors are checked on libyaml's event stream before any tree is
 * built, so a bad input is refused in time linear in the bytes read up to the
 * offending node (libyaml's own document loader is quadratic in flow nesting
 * depth and in the number of anchors: it must only see checked text).
 * Errors are SILT_EINVAL with one line naming the file (and line):
 *   "m.yaml: larger than 32 MiB, the limit for YAML/JSON input"
 *   "m.yaml: UTF-16 or UTF-32 text is not supported: save the file as UTF-8"
 *   "m.yaml:7: nesting deeper than 64 levels"
 *   "m.yaml:3: YAML anchors and aliases are not supported"
 *   "m.yaml:2: YAML syntax error: <libyaml problem> [<context>]" */
#define ODF_YAML_MAX_DEPTH 64
#define ODF_YAML_MAX_BYTES ((size_t)32 << 20)
#define ODF_YAML_MAX_TEXT "32 MiB"

/* Reads the file `path` into `out` (appends), refusing a file larger than
 * ODF_YAML_MAX_BYTES before reading it (and while reading, for files whose
 * size is not known in advance). SILT_ENOTFOUND "PATH: no such file",
 * SILT_EIO, or SILT_EINVAL for the size. On failure `out` is unchanged. */
int odf_yaml_read_file(const char *path, silt_buf *out);

/* Checks size and encoding of `text` (see above). *bom_out (may be NULL)
 * receives the length of a leading UTF-8 byte order mark (0 or 3). */
int odf_yaml_check_input(const char *text, size_t len, const char *filename, size_t *bom_out);

/* Initializes `p` over `text` after odf_yaml_check_input: the parser reads
 * text + *skip_out (the BOM skipped) as UTF-8, and its marks count from
 * there. On success the caller owns `p` (yaml_parser_delete). */
int odf_yaml_parser_open(yaml_parser_t *p, const char *text, size_t len, const char *filename,
                         size_t *skip_out);

/* SILT_EINVAL (or SILT_ENOMEM) "FILE:LINE: YAML syntax error: ..." for the
 * failed `p`; `line0` is the file line of the parsed text's first line. */
int odf_yaml_syntax_error(const yaml_parser_t *p, const char *filename, int line0);

/* Depth and anchor checks over an event stream: zero-initialize, set `file`
 * and `line0` (the file line of the text's first line, usually 1), then
 * pass every event in order to odf_yaml_guard_event. */
typedef struct odf_yaml_guard {
    const char *file;
    int line0;
    int depth; /* collections open */
} odf_yaml_guard;

int odf_yaml_guard_event(odf_yaml_guard *g, const yaml_event_t *ev);

/* Checks a whole YAML stream (every document) against all the limits in one
 * pass over its events; for code that then loads it with yaml_parser_load.
 * `line` is the file line of the text's first line (usually 1). */
int odf_yaml_check(const char *text, size_t len, const char *filename, int line);

/* Byte offsets of libyaml marks. libyaml counts mark.index (and column) in
 * characters (code points), not bytes, so a mark must be converted before it
 * cuts the UTF-8 text the parser read. The converter walks the text from its
 * last position, forwards or backwards: converting marks in increasing order
 * costs O(text length) in total. `text` must be the parser's input (after
 * any BOM skipped by odf_yaml_parser_open) and stay valid while in use. */
typedef struct odf_yaml_offsets {
    const unsigned char *text;
    size_t len;
    size_t chars, bytes; /* current position, in both units */
} odf_yaml_offsets;

void odf_yaml_offsets_init(odf_yaml_offsets *o, const char *text, size_t len);

/* Byte offset of character index `index` (clamped to the text length). */
size_t odf_yaml_offset(odf_yaml_offsets *o, size_t index);

/* ---- parsing ---------------------------------------------------------------
 * Each parse function reads exactly one YAML document. The *_at variants read
 * a text that starts on line `line` of `filename` (a document cut out of a
 * multi-document file), so that messages name the file's lines; the plain
 * forms use line 1. */

/* Parses a YAML mapping into a new struct described by `d`, allocated in `a`.
 * `filename` is used in error messages only (NULL = "<input>").
 * Returns 0 and sets *out, or a negative SILT_E* code. */
int odf_yaml_parse(silt_arena *a, const char *text, size_t len, const char *filename,
                   const odf_table_desc *d, void **out);
int odf_yaml_parse_at(silt_arena *a, const char *text, size_t len, const char *filename, int line,
                      const odf_table_desc *d, void **out);

/* Parses a manifest envelope `{kind: K, version: N, content: {...}}`.
 * kind "MetadataBlock" (versions 2 and 3) -> odf_MetadataBlock,
 * kind "DatasetSnapshot" (version 1) -> odf_DatasetSnapshot.
 * If `expected_kind` is non-NULL the manifest must be of that kind.
 * *version_out (may be NULL) receives the version. Error paths inside the
 * content start with "content.". */
int odf_yaml_parse_manifest(silt_arena *a, const char *text, size_t len, const char *filename,
                            const char *expected_kind, int *version_out, void **out);
int odf_yaml_parse_manifest_at(silt_arena *a, const char *text, size_t len, const char *filename,
                               int line, const char *expected_kind, int *version_out, void **out);

/* Parses a bare MetadataEvent mapping `{kind: AddData, ...}` into *out
 * (type = 1-based variant index, value = the variant struct). */
int odf_yaml_parse_event(silt_arena *a, const char *text, size_t len, const char *filename,
                         odf_union *out);
int odf_yaml_parse_event_at(silt_arena *a, const char *text, size_t len, const char *filename,
                            int line, odf_union *out);

/* ---- emitting --------------------------------------------------------------- */

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
