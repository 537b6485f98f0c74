/* arrow_c.h — the Arrow C Data and C Stream Interface structs (a stable
 * ABI, see https://arrow.apache.org/docs/format/CDataInterface.html), which
 * duckdb.h only forward-declares. They are declared once, in the public
 * silt.h (silt_query_arrow hands them out), under the guard macros the
 * specification defines, so any other copy of the same definitions (e.g.
 * nanoarrow's) coexists.
 *
 * Ownership: a producer fills the struct and sets `release`; the consumer
 * calls release(x) exactly once when done (after which release is NULL).
 */
#ifndef SILT_ENGINE_ARROW_C_H
#define SILT_ENGINE_ARROW_C_H

#include "silt.h"

#endif
