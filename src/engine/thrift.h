/* thrift.h — the Thrift compact protocol as a generic value tree: parse a
 * struct into a tree, edit it, write it back. Used to rewrite Parquet page
 * headers and footers (src/engine/parquet_required.c) without a generated
 * class per Thrift type: fields a caller does not know are kept as they are.
 *
 * Writing a parsed tree unchanged reproduces the input bytes when the input
 * used the canonical short forms (delta field headers where the id step is
 * 1..15, short list headers below 15 elements), which every Parquet writer
 * does; otherwise the output is the canonical encoding of the same values.
 *
 * Memory: every value lives in the caller's arena (binary values are copied
 * into it). Limits: nesting deeper than SILT_THRIFT_MAX_DEPTH and counts larger
 * than the remaining input are SILT_ECORRUPT, so parsing is linear in the
 * input and never allocates more than a small multiple of it.
 * Errors: SILT_ECORRUPT "thrift: <what> at byte N", SILT_ENOMEM.
 */
#ifndef SILT_ENGINE_THRIFT_H
#define SILT_ENGINE_THRIFT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/arena.h"
#include "util/buf.h"

#define SILT_THRIFT_MAX_DEPTH 64

/* Compact protocol type ids (a bool field uses TRUE/FALSE in its header). */
enum {
    SILT_TH_STOP = 0,
    SILT_TH_TRUE = 1,
    SILT_TH_FALSE = 2,
    SILT_TH_BYTE = 3,
    SILT_TH_I16 = 4,
    SILT_TH_I32 = 5,
    SILT_TH_I64 = 6,
    SILT_TH_DOUBLE = 7,
    SILT_TH_BINARY = 8,
    SILT_TH_LIST = 9,
    SILT_TH_SET = 10,
    SILT_TH_MAP = 11,
    SILT_TH_STRUCT = 12,
};

typedef struct silt_thrift_value silt_thrift_value;

struct silt_thrift_value {
    uint8_t type; /* SILT_TH_*; a bool is SILT_TH_TRUE with b set or clear */
    union {
        bool b;
        int64_t i;        /* BYTE, I16, I32, I64 */
        uint8_t dbl[8];   /* DOUBLE, raw little-endian bytes */
        struct {
            const uint8_t *p;
            size_t n;
        } bin;
        struct {
            uint8_t etype;
            size_t n;
            silt_thrift_value **items;
        } list; /* LIST and SET */
        struct {
            uint8_t ktype, vtype;
            size_t n;
            silt_thrift_value **keys, **vals;
        } map;
        struct {
            size_t n, cap;
            int16_t *ids;
            silt_thrift_value **vals;
        } st; /* STRUCT: fields in wire order */
    } u;
};

/* Parses one struct from buf[0..len); *used (may be NULL) = bytes it took.
 * *out is arena-owned. */
int silt_thrift_parse(silt_arena *a, const uint8_t *buf, size_t len, size_t *used, silt_thrift_value **out);

/* Appends the compact encoding of struct `v` to `out`. */
int silt_thrift_write(silt_buf *out, const silt_thrift_value *v);

/* Field `id` of struct `st`, or NULL (st may be NULL or not a struct). */
silt_thrift_value *silt_thrift_get(const silt_thrift_value *st, int16_t id);

/* Integer field `id` of `st` as int64 (BYTE/I16/I32/I64), or `dflt` when
 * absent or not an integer. */
int64_t silt_thrift_get_int(const silt_thrift_value *st, int16_t id, int64_t dflt);

/* Sets integer field `id` of struct `st` to `v` with wire type `type`
 * (SILT_TH_I32 / SILT_TH_I64 / ...), adding it in id order if absent. */
int silt_thrift_set_int(silt_arena *a, silt_thrift_value *st, int16_t id, uint8_t type, int64_t v);

/* Sets field `id` of struct `st` to `v` (borrowed), adding it in id order. */
int silt_thrift_set(silt_arena *a, silt_thrift_value *st, int16_t id, silt_thrift_value *v);

/* Removes field `id` of struct `st` (no-op when absent). */
void silt_thrift_remove(silt_thrift_value *st, int16_t id);

#endif
