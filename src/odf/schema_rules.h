/* schema_rules.h — structural comparison of ODF values and the DataSchema
 * evolution rule used by the metadata chain (src/odf/chain.c).
 *
 * Equality is computed from the reflection descriptors (desc.h), so it covers
 * every generated type: two values are equal when every field is equal, where
 * absent optional scalars/timestamps/durations ignore their value, strings and
 * bytes compare by content (NULL = absent), vectors compare their presence,
 * length and items, and unions compare their variant and value. This is the
 * same notion of equality as comparing canonical FlatBuffers encodings.
 */
#ifndef SILT_ODF_SCHEMA_RULES_H
#define SILT_ODF_SCHEMA_RULES_H

#include <stdbool.h>
#include <stddef.h>

#include "odf/desc.h"
#include "odf/odf_types.h"

/* Deep equality of two values of table type `d` (either pointer may be NULL:
 * NULL equals only NULL). */
bool odf_table_equal(const odf_table_desc *d, const void *a, const void *b);

/* Deep equality of two union values of union type `u`. */
bool odf_union_equal(const odf_union_desc *u, const odf_union *a, const odf_union *b);

/* Deep equality of two MetadataEvent unions (variant and content). */
bool odf_event_equal(const odf_union *a, const odf_union *b);

/* Deep equality of two DataType unions. */
bool odf_data_type_equal(const odf_union *a, const odf_union *b);

/* True if the DataType union is an Option (nullable). */
bool odf_data_type_is_nullable(const odf_union *t);

/* Checks that `next` is an additive evolution of `prev`: every field of prev
 * is still there at the same position with the same name and type, and every
 * appended field is nullable (DataType Option). Returns 0 when allowed; 1 when
 * not, with a one-line reason naming the field written to `msg` (no silt_err). */
int odf_schema_check_evolution(const odf_DataSchema *prev, const odf_DataSchema *next, char *msg,
                               size_t msglen);

#endif
