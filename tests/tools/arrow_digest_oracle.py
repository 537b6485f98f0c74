#!/usr/bin/env python3
"""Independent reference ("oracle") for arrow-digest RecordDigestV0<Sha3_256>.

This is the logical hash Open Data Fabric records for a data slice. The
oracle was written from the upstream sources only, as a cross-check for the
C implementation: arrow-digest (crate 57.x, commit f217a1d) for the hash, and
arrow-rs parquet 58.4.0 (the version kamu-cli locks) for the record batches
its Parquet reader hands to it. Stdlib only.

Usage
-----
    python3 arrow_digest_oracle.py FILE.json              -> 64 hex chars
    python3 arrow_digest_oracle.py --multihash FILE.json  -> "f9680c00120" + hex
    FILE "-" reads the JSON from standard input.
    --self-test          check hand-assembled streams, invariants and fixtures
    --null-combine=and   use the intended AND semantics for struct nulls
                         (differs from upstream; see QUIRKS below). The default
                         is "or", which matches the upstream code.

Input format (JSON)
-------------------
    {"fields": [FIELD, ...],            # top-level columns, in schema order
     "row_groups": [n1, n2, ...],       # optional; see "Reading" below
     "batch_size": n,                   # optional; default 10000
     "batch_sizes": [n1, n2, ...]}      # optional; see "Reading" below

    FIELD = {"name": str, "nullable": bool, "type": TYPE, "values": [...]}
    (A field nested in a struct has no "values".) Values are in row order,
    and every top-level column has the same length. JSON null is an Arrow
    null.

    TYPE = {"kind": K, ...} where K is one of:
      int, uint        "bits": 8|16|32|64                       JSON integers
      float            "bits": 16|32|64       JSON numbers (NaN/Infinity are
                       accepted) or {"hex": "<little-endian bytes>"} to give
                       the exact bits
      bool                                                       true/false
      utf8             (aliases: large_utf8, utf8_view)          JSON strings
      binary           (aliases: large_binary, binary_view)      hex strings
      fixed_size_binary "byte_width": n                          hex strings
      date32  (days, i32)   date64  (ms, i64)                    JSON integers
      time32  "unit": s|ms      time64 "unit": us|ns             JSON integers
      timestamp "unit": s|ms|us|ns, "tz": str|null (missing key = null)
      decimal  "bits": 32|64|128|256 (default 128), "precision": p, "scale": s
               values are the unscaled integer, as a string (a JSON int also works)
      list     (aliases: large_list)  "item": {"type": TYPE, "nullable": bool}
               values are JSON arrays, or null
      struct   "fields": [{"name", "nullable", "type"}, ...]
               values are JSON objects keyed by child name, or null. A missing
               key is read as null.

Reading (which arrow-rs data the JSON stands for)
-------------------------------------------------
The rows are those of a Parquet file read back the way kamu computes the
logical hash: arrow-rs's ParquetRecordBatchReader with a batch size of 10,000
rows (kamu's LOGICAL_HASH_BATCH_SIZE), each record batch one
RecordDigest.update() call.

  * "row_groups" gives the row count of each row group of the file (default:
    one row group). "batch_size" gives the reader's batch size (default
    10000): batches are consecutive runs of that many rows, across row
    groups; the last one may be shorter. "batch_sizes" instead lists the
    batches explicitly. Batches only matter for structs with nulls.
  * An array has a validity bitmap only if it has at least one null in the
    batch. arrow-rs ArrayData drops all-valid bitmaps when it builds arrays.
  * If a struct row is null, every descendant is null in its own bitmap at
    that row: nulls come from Parquet definition levels.
  * Null slots hold what the reader leaves in them. For booleans and
    fixed-width types (ints, floats, decimals, dates, times, timestamps,
    fixed_size_binary) the reader decodes the non-null values of a read
    segment densely and moves them up to their rows without clearing the
    others: the null slot at position p of a segment keeps the p-th non-null
    value of the segment (counting from 0), or zero bytes / false if the
    segment has at most p non-null values. A segment is the part of one
    batch inside one row group. utf8/binary and list null slots are empty.
    Only slots hashed as valid through the quirk below can show this.

QUIRKS
------
Upstream combines a parent bitmap with a child bitmap like this (1 = valid):
  parent absent, child has nulls      -> child
  parent has nulls, child absent      -> parent
  both present and both have nulls    -> parent OR child
  any other case                      -> no bitmap (everything valid)
With Parquet-shaped data, a leaf's effective nulls are the nulls of the
outermost struct ancestor, or of the leaf itself, that has any null in the
batch. Extra nulls deeper down are ignored: those slots are hashed as values,
namely the null-slot contents described above. The result therefore depends
on how the rows are split into batches and row groups. Before arrow-digest
v35 the combination was AND; use --null-combine=and to get that.
"""

import hashlib
import json
import struct
import sys

MULTIHASH_PREFIX = "f" + "9680c001" + "20"  # base16 multibase, sha3-256 code 0x300016, len 32

# Arrow TypeIDs (u16), DateUnit and TimeUnit IDs (u16)
T_INT, T_FLOAT, T_BINARY, T_UTF8, T_BOOL = 1, 2, 3, 4, 5
T_DECIMAL, T_DATE, T_TIME, T_TIMESTAMP, T_LIST = 6, 7, 8, 9, 11
TIME_UNITS = {"s": 0, "ms": 1, "us": 2, "ns": 3}

KIND_ALIASES = {
    "large_utf8": "utf8", "utf8_view": "utf8", "string": "utf8",
    "large_binary": "binary", "binary_view": "binary",
    "large_list": "list",
}


class OracleError(Exception):
    pass


def u16(n):
    return struct.pack("<H", n)


def u64(n):
    return struct.pack("<Q", n & 0xFFFFFFFFFFFFFFFF)


# --------------------------------------------------------------------------
# Type normalisation and type hashing
# --------------------------------------------------------------------------

def norm_type(t):
    if not isinstance(t, dict) or "kind" not in t:
        raise OracleError("bad type: %r" % (t,))
    t = dict(t)
    t["kind"] = KIND_ALIASES.get(t["kind"], t["kind"])
    k = t["kind"]
    if k in ("int", "uint"):
        if t.get("bits") not in (8, 16, 32, 64):
            raise OracleError("int bits must be 8/16/32/64")
    elif k == "float":
        if t.get("bits") not in (16, 32, 64):
            raise OracleError("float bits must be 16/32/64")
    elif k in ("bool", "utf8", "binary", "date32", "date64"):
        pass
    elif k == "fixed_size_binary":
        if not isinstance(t.get("byte_width"), int) or t["byte_width"] < 0:
            raise OracleError("fixed_size_binary needs byte_width")
    elif k == "time32":
        if t.get("unit") not in ("s", "ms"):
            raise OracleError("time32 unit must be s or ms")
    elif k == "time64":
        if t.get("unit") not in ("us", "ns"):
            raise OracleError("time64 unit must be us or ns")
    elif k == "timestamp":
        if t.get("unit") not in TIME_UNITS:
            raise OracleError("timestamp unit must be s/ms/us/ns")
        tz = t.get("tz")
        if tz is not None and not isinstance(tz, str):
            raise OracleError("timestamp tz must be string or null")
        t["tz"] = tz
    elif k == "decimal":
        t.setdefault("bits", 128)
        if t["bits"] not in (32, 64, 128, 256):
            raise OracleError("decimal bits must be 32/64/128/256")
        if not isinstance(t.get("precision"), int) or not isinstance(t.get("scale"), int):
            raise OracleError("decimal needs integer precision and scale")
        if not -128 <= t["scale"] <= 127:
            raise OracleError("decimal scale must fit i8")
    elif k == "list":
        item = t.get("item")
        if not isinstance(item, dict) or "type" not in item:
            raise OracleError("list needs item: {type, nullable}")
        it = norm_type(item["type"])
        if it["kind"] == "struct":
            # arrow-digest panics on struct arrays inside ArrayDigest
            raise OracleError("list of struct is not supported by arrow-digest V0")
        t["item"] = {"type": it, "nullable": bool(item.get("nullable", True))}
    elif k == "struct":
        fs = t.get("fields")
        if not isinstance(fs, list):
            raise OracleError("struct needs fields")
        t["fields"] = [norm_field(f, top=False) for f in fs]
    else:
        raise OracleError("unsupported type kind %r" % (k,))
    return t


def norm_field(f, top):
    if not isinstance(f, dict) or not isinstance(f.get("name"), str):
        raise OracleError("field needs a string name: %r" % (f,))
    out = {"name": f["name"], "nullable": bool(f.get("nullable", True)),
           "type": norm_type(f.get("type"))}
    if top:
        if not isinstance(f.get("values"), list):
            raise OracleError("top-level field %r needs values" % f["name"])
        out["values"] = f["values"]
    return out


def type_bytes(t):
    """Bytes that start a leaf column's hasher (schema_digest::hash_data_type)."""
    k = t["kind"]
    if k in ("int", "uint"):
        return u16(T_INT) + bytes([1 if k == "int" else 0]) + u64(t["bits"])
    if k == "float":
        return u16(T_FLOAT) + u64(t["bits"])
    if k in ("binary", "fixed_size_binary"):
        return u16(T_BINARY)
    if k == "utf8":
        return u16(T_UTF8)
    if k == "bool":
        return u16(T_BOOL)
    if k == "decimal":
        # precision is u8 and scale is i8 in Arrow, each cast "as u64" (scale sign-extends)
        return u16(T_DECIMAL) + u64(t["bits"]) + u64(t["precision"]) + u64(t["scale"])
    if k == "date32":
        return u16(T_DATE) + u64(32) + u16(0)
    if k == "date64":
        return u16(T_DATE) + u64(64) + u16(1)
    if k == "time32":
        return u16(T_TIME) + u64(32) + u16(TIME_UNITS[t["unit"]])
    if k == "time64":
        return u16(T_TIME) + u64(64) + u16(TIME_UNITS[t["unit"]])
    if k == "timestamp":
        b = u16(T_TIMESTAMP) + u16(TIME_UNITS[t["unit"]])
        tz = t["tz"]
        if tz is None:
            return b + b"\x00"
        tzb = tz.encode("utf-8")
        return b + u64(len(tzb)) + tzb
    if k == "list":
        # only the item *type* is hashed, not the item field name or nullability
        return u16(T_LIST) + type_bytes(t["item"]["type"])
    raise OracleError("type %r has no leaf encoding" % (k,))


# --------------------------------------------------------------------------
# Value encoding (valid slots)
# --------------------------------------------------------------------------

def _int_bytes(v, nbytes, signed, what):
    if isinstance(v, bool) or not isinstance(v, int):
        if isinstance(v, str) and what == "decimal":
            try:
                v = int(v, 10)
            except ValueError:
                raise OracleError("bad decimal value %r" % (v,))
        else:
            raise OracleError("%s value must be an integer: %r" % (what, v))
    try:
        return v.to_bytes(nbytes, "little", signed=signed)
    except OverflowError:
        raise OracleError("%s value %r out of range" % (what, v))


def fixed_width(t):
    k = t["kind"]
    if k in ("int", "uint", "float", "decimal"):
        return t["bits"] // 8
    return {"date32": 4, "date64": 8, "time32": 4, "time64": 8, "timestamp": 8}.get(k)


def encode_fixed(t, v):
    k = t["kind"]
    n = fixed_width(t)
    if v is None:  # physical default of a null slot hashed as valid
        return bytes(n)
    if k == "int":
        return _int_bytes(v, n, True, "int")
    if k == "uint":
        return _int_bytes(v, n, False, "uint")
    if k == "float":
        if isinstance(v, dict) and "hex" in v:
            b = bytes.fromhex(v["hex"])
            if len(b) != n:
                raise OracleError("float hex must be %d bytes" % n)
            return b
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise OracleError("float value must be a number: %r" % (v,))
        try:
            return struct.pack({2: "<e", 4: "<f", 8: "<d"}[n], float(v))
        except (OverflowError, struct.error):
            raise OracleError("float value %r out of range for float%d" % (v, n * 8))
    if k == "decimal":
        return _int_bytes(v, n, True, "decimal")
    return _int_bytes(v, n, True, k)  # dates, times, timestamps: signed


def utf8_bytes(v):
    if v is None:
        return b""
    if not isinstance(v, str):
        raise OracleError("utf8 value must be a string: %r" % (v,))
    return v.encode("utf-8")


def binary_bytes(v):
    if v is None:
        return b""
    if not isinstance(v, str):
        raise OracleError("binary value must be a hex string: %r" % (v,))
    return bytes.fromhex(v)


# --------------------------------------------------------------------------
# Bitmaps (list of bool, True = valid) and their combination
# --------------------------------------------------------------------------

def own_bitmap(values):
    """Validity bitmap as arrow-rs keeps it: None unless there is a null."""
    bm = [v is not None for v in values]
    return bm if not all(bm) else None


def has_nulls(bm):
    return bm is not None and not all(bm)


def maybe_combine(a, b, mode):
    if mode == "and":  # intended semantics (arrow-digest < v35)
        if a is None:
            return b
        if b is None:
            return a
        return [x and y for x, y in zip(a, b)]
    # upstream behaviour (utils::maybe_combine_null_buffers)
    if a is None and has_nulls(b):
        return b
    if b is None and has_nulls(a):
        return a
    if has_nulls(a) and has_nulls(b):
        return [x or y for x, y in zip(a, b)]
    return None


# --------------------------------------------------------------------------
# Array hashing (ArrayDigestV0::update)
# --------------------------------------------------------------------------

def check_non_nullable(name, nullable, values, parent_valid):
    if nullable:
        return
    for i, v in enumerate(values):
        if v is None and (parent_valid is None or parent_valid[i]):
            raise OracleError("non-nullable field %r has a null at row %d" % (name, i))


def hash_array(h, t, values, parent_bm, mode, slots=None):
    """Feed one array into hasher h, using the parent bitmap passed in.
    slots, if given, holds what the reader left in each null slot."""
    bm = maybe_combine(parent_bm, own_bitmap(values), mode)
    k = t["kind"]
    for i, v in enumerate(values):
        if bm is not None and not bm[i]:
            h.update(b"\x00")  # null marker
            continue
        # a valid slot: v is None only through the OR quirk, and then the
        # slot holds what the reader left there (None: zeros / false / empty)
        if v is None and slots is not None:
            v = slots[i]
        if k == "bool":
            if v is not None and not isinstance(v, bool):
                raise OracleError("bool value must be true/false: %r" % (v,))
            h.update(b"\x02" if v else b"\x01")
        elif k == "utf8":
            b = utf8_bytes(v)
            h.update(u64(len(b)))
            h.update(b)
        elif k == "binary":
            b = binary_bytes(v)
            h.update(u64(len(b)))
            h.update(b)
        elif k == "fixed_size_binary":
            w = t["byte_width"]
            b = binary_bytes(v) if v is not None else bytes(w)
            if len(b) != w:
                raise OracleError("fixed_size_binary value must be %d bytes" % w)
            h.update(u64(w))
            h.update(b)
        elif k == "list":
            items = [] if v is None else v
            if not isinstance(items, list):
                raise OracleError("list value must be a JSON array or null: %r" % (v,))
            it = t["item"]
            check_non_nullable("<list item>", it["nullable"], items, None)
            h.update(u64(len(items)))
            # the sub-array is hashed into the same hasher, with no parent bitmap
            hash_array(h, it["type"], items, None, mode)
        else:
            h.update(encode_fixed(t, v))


# --------------------------------------------------------------------------
# What the arrow-rs Parquet reader leaves in null slots
# --------------------------------------------------------------------------

DENSE_KINDS = ("int", "uint", "float", "bool", "fixed_size_binary", "date32", "date64",
               "time32", "time64", "timestamp", "decimal")


def reader_slots(t, values, segments):
    """Null-slot contents of a leaf array of one batch (None = zeros/false/empty).
    Within each segment (start, end) the non-null values are decoded densely
    into the first slots, then each is moved up to its own row; null slots are
    never written (arrow-rs record_reader/buffer.rs, pad_nulls)."""
    slots = [None] * len(values)
    if t["kind"] not in DENSE_KINDS:
        return slots  # byte arrays and lists: null slots are empty
    for start, end in segments:
        dense = [v for v in values[start:end] if v is not None]
        for p in range(start, end):
            if values[p] is None and p - start < len(dense):
                slots[p] = dense[p - start]
    return slots


def reader_batches(doc, nrows):
    """[(start, size, segments)] for each record batch; segments are
    (start, end) pairs relative to the batch, split at row group starts."""
    groups = doc.get("row_groups", [nrows])
    if (not isinstance(groups, list) or any(not isinstance(g, int) or g < 0 for g in groups)
            or sum(groups) != nrows):
        raise OracleError("row_groups must be non-negative ints summing to the row count")
    sizes = doc.get("batch_sizes")
    if sizes is None:
        bs = doc.get("batch_size", 10000)
        if isinstance(bs, bool) or not isinstance(bs, int) or bs <= 0:
            raise OracleError("batch_size must be a positive int")
        sizes = [min(bs, nrows - s) for s in range(0, nrows, bs)]
    if (not isinstance(sizes, list) or any(not isinstance(s, int) or s < 0 for s in sizes)
            or sum(sizes) != nrows):
        raise OracleError("batch_sizes must be non-negative ints summing to the row count")
    starts, at = [], 0
    for g in groups:
        starts.append(at)
        at += g
    out, start = [], 0
    for size in sizes:
        cuts = [0] + [g - start for g in starts if start < g < start + size] + [size]
        out.append((start, size, list(zip(cuts, cuts[1:]))))
        start += size
    return out


# --------------------------------------------------------------------------
# Record hashing (RecordDigestV0)
# --------------------------------------------------------------------------

def walk_fields(fields, level, out):
    """Pre-order walk: yields (field, level) for every field, struct or not."""
    for f in fields:
        out.append((f, level))
        if f["type"]["kind"] == "struct":
            walk_fields(f["type"]["fields"], level + 1, out)
    return out


def leaf_types(fields, out):
    for f in fields:
        if f["type"]["kind"] == "struct":
            leaf_types(f["type"]["fields"], out)
        else:
            out.append(f["type"])
    return out


def walk_columns(fields, columns, parent_bm, parent_valid, leaf_fn, mode):
    """columns[i] holds the row values of fields[i] (None where an ancestor is null).
    parent_bm is the combined bitmap passed down; parent_valid is the true logical
    validity of the ancestors, used only to validate the input."""
    for f, vals in zip(fields, columns):
        check_non_nullable(f["name"], f["nullable"], vals, parent_valid)
        if f["type"]["kind"] == "struct":
            for v in vals:
                if v is not None and not isinstance(v, dict):
                    raise OracleError("struct value must be an object or null: %r" % (v,))
            combined = maybe_combine(parent_bm, own_bitmap(vals), mode)
            valid = [v is not None for v in vals]
            kids = f["type"]["fields"]
            known = {c["name"] for c in kids}
            for v in vals:
                if v is not None:
                    extra = set(v) - known
                    if extra:
                        raise OracleError("unknown struct keys %r in %r" % (sorted(extra), f["name"]))
            kid_cols = [[(v.get(c["name"]) if v is not None else None) for v in vals] for c in kids]
            walk_columns(kids, kid_cols, combined, valid, leaf_fn, mode)
        else:
            leaf_fn(f, vals, parent_bm)


def record_digest(doc, mode="or"):
    if not isinstance(doc, dict) or not isinstance(doc.get("fields"), list):
        raise OracleError('input must be {"fields": [...]}')
    fields = [norm_field(f, top=True) for f in doc["fields"]]
    nrows = len(fields[0]["values"]) if fields else 0
    for f in fields:
        if len(f["values"]) != nrows:
            raise OracleError("column %r has %d rows, expected %d" % (f["name"], len(f["values"]), nrows))

    # RecordDigestV0::new -- schema goes into the combined hasher, one hasher per leaf
    combined = hashlib.sha3_256()
    for f, level in walk_fields(fields, 0, []):
        nb = f["name"].encode("utf-8")
        combined.update(u64(len(nb)))
        combined.update(nb)
        combined.update(u64(level))
    col_hashers = []
    for t in leaf_types(fields, []):
        h = hashlib.sha3_256()
        h.update(type_bytes(t))
        col_hashers.append(h)

    # RecordDigestV0::update, once per batch
    for start, size, segments in reader_batches(doc, nrows):
        cols = [f["values"][start:start + size] for f in fields]
        idx = [0]

        def leaf(f, vals, parent_bm):
            slots = reader_slots(f["type"], vals, segments)
            hash_array(col_hashers[idx[0]], f["type"], vals, parent_bm, mode, slots)
            idx[0] += 1

        walk_columns(fields, cols, None, None, leaf, mode)

    # RecordDigestV0::finalize -- column digests in leaf order into the combined hasher
    for h in col_hashers:
        combined.update(h.digest())
    return combined.hexdigest()


# --------------------------------------------------------------------------
# Self-test: hand-assembled byte streams plus invariants the algorithm implies
# --------------------------------------------------------------------------

def _col(name, kind, values, nullable=True, **kw):
    t = {"kind": kind}
    t.update(kw)
    return {"name": name, "nullable": nullable, "type": t, "values": values}


def self_test(fixture_dir=None):
    import copy
    import os
    sha = lambda b: hashlib.sha3_256(b).digest()
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)

    # 1. Byte stream assembled by hand:
    #    a: int32 [1, null, 3];  b: utf8 ["x", "", null];  t: timestamp(ms, tz=None) [5, 6]...
    doc = {"fields": [_col("a", "int", [1, None, 3], bits=32),
                      _col("b", "utf8", ["x", "", None])]}
    col_a = sha(bytes.fromhex("0100" "01" "2000000000000000"
                              "01000000" "00" "03000000"))
    col_b = sha(bytes.fromhex("0400" "0100000000000000" "78" "0000000000000000" "00"))
    schema = bytes.fromhex("0100000000000000" "61" "0000000000000000"
                           "0100000000000000" "62" "0000000000000000")
    check(record_digest(doc) == hashlib.sha3_256(schema + col_a + col_b).hexdigest(),
          "hand-assembled int32/utf8 stream")

    # 2. Struct flattening, levels, tz=None, bool bytes, list
    doc = {"fields": [
        {"name": "s", "nullable": True, "type": {"kind": "struct", "fields": [
            {"name": "t", "nullable": True, "type": {"kind": "timestamp", "unit": "us", "tz": None}},
            {"name": "f", "nullable": True, "type": {"kind": "bool"}}]},
         "values": [{"t": 7, "f": True}, None]},
        _col("l", "list", [[1], []], item={"type": {"kind": "uint", "bits": 8}, "nullable": False})]}
    schema = bytes.fromhex("0100000000000000" "73" "0000000000000000"
                           "0100000000000000" "74" "0100000000000000"
                           "0100000000000000" "66" "0100000000000000"
                           "0100000000000000" "6c" "0000000000000000")
    col_t = sha(bytes.fromhex("0900" "0200" "00" "0700000000000000" "00"))
    col_f = sha(bytes.fromhex("0500" "02" "00"))
    col_l = sha(bytes.fromhex("0b00" "0100" "00" "0800000000000000"
                              "0100000000000000" "01" "0000000000000000"))
    check(record_digest(doc) == hashlib.sha3_256(schema + col_t + col_f + col_l).hexdigest(),
          "hand-assembled struct/bool/list stream")

    # 3. Invariants
    base = {"fields": [_col("x", "int", [1, 2, 3], nullable=False, bits=64),
                       _col("y", "utf8", ["a", "b", "c"], nullable=False)]}
    d0 = record_digest(base)
    d = copy.deepcopy(base)
    for f in d["fields"]:
        f["nullable"] = True
    check(record_digest(d) == d0, "nullable flag without nulls must not change the digest")
    d = copy.deepcopy(base)
    d["fields"][1]["type"]["kind"] = "large_utf8"
    check(record_digest(d) == d0, "utf8 vs large_utf8 must hash the same")
    d = copy.deepcopy(base)
    d["batch_sizes"] = [1, 0, 2]
    check(record_digest(d) == d0, "batch split must not change the digest (no struct nulls)")
    d = copy.deepcopy(base)
    d["fields"][0]["name"] = "z"
    check(record_digest(d) != d0, "field name must change the digest")
    d = copy.deepcopy(base)
    d["fields"][0]["type"]["kind"] = "uint"
    check(record_digest(d) != d0, "signedness must change the digest")
    d = copy.deepcopy(base)
    d["fields"].reverse()
    check(record_digest(d) != d0, "column order must change the digest")
    b1 = {"fields": [_col("b", "binary", ["6f6e65", "74776f"])]}
    b2 = {"fields": [_col("b", "fixed_size_binary", ["6f6e65", "74776f"], byte_width=3)]}
    check(record_digest(b1) == record_digest(b2), "binary vs fixed_size_binary")
    n1 = {"fields": [_col("v", "int", [1, 2, None], bits=32)]}
    n2 = {"fields": [_col("v", "int", [1, 2, 0], bits=32)]}
    check(record_digest(n1) != record_digest(n2), "null must differ from zero")
    tz1 = {"fields": [_col("t", "timestamp", [1], unit="ms", tz=None)]}
    tz2 = {"fields": [_col("t", "timestamp", [1], unit="ms", tz="")]}
    check(record_digest(tz1) != record_digest(tz2), "tz null must differ from tz empty")
    # nullable struct without any nulls == non-nullable struct
    s1 = {"fields": [{"name": "s", "nullable": False, "type": {"kind": "struct", "fields": [
        {"name": "c", "nullable": False, "type": {"kind": "int", "bits": 32}}]},
        "values": [{"c": 1}, {"c": 2}]}]}
    s2 = copy.deepcopy(s1)
    s2["fields"][0]["nullable"] = True
    s2["fields"][0]["type"]["fields"][0]["nullable"] = True
    check(record_digest(s1) == record_digest(s2), "nullable struct without nulls")
    # upstream (OR): a child null under a valid parent is ignored if the parent has nulls
    q = {"fields": [{"name": "s", "nullable": True, "type": {"kind": "struct", "fields": [
        {"name": "c", "nullable": True, "type": {"kind": "int", "bits": 32}}]},
        "values": [{"c": None}, None]}]}
    q0 = {"fields": [{"name": "s", "nullable": True, "type": {"kind": "struct", "fields": [
        {"name": "c", "nullable": True, "type": {"kind": "int", "bits": 32}}]},
        "values": [{"c": 0}, None]}]}
    check(record_digest(q) == record_digest(q0), "OR quirk: ignored child null hashes zero")
    check(record_digest(q, "and") != record_digest(q0, "and"), "AND mode keeps child null")

    # null slots hashed as values hold what the reader left there: per segment,
    # the slot at position p keeps the p-th non-null value, else zero / false
    def sdoc(rows, **extra):
        d = {"fields": [{"name": "s", "nullable": True, "type": {"kind": "struct", "fields": [
            {"name": "c", "nullable": True, "type": {"kind": "int", "bits": 32}},
            {"name": "b", "nullable": True, "type": {"kind": "bool"}},
            {"name": "u", "nullable": True, "type": {"kind": "utf8"}}]},
            "values": rows}]}
        d.update(extra)
        return d
    N = None
    rows = [{"c": N, "b": N, "u": N}, N, {"c": 5, "b": True, "u": "x"},
            {"c": N, "b": N, "u": N}, {"c": 7, "b": False, "u": "y"}]
    # one segment: non-null c = [5, 7], b = [true, false]; slot 0 <- #0, slot 3 <- none
    same = [{"c": 5, "b": True, "u": ""}, N, {"c": 5, "b": True, "u": "x"},
            {"c": 0, "b": False, "u": ""}, {"c": 7, "b": False, "u": "y"}]
    check(record_digest(sdoc(rows)) == record_digest(sdoc(same)), "null slots: one segment")
    # row groups [2, 3]: segment 1 has no non-null value, segment 2 = [5, 7]: row 3 <- 7
    same = [{"c": 0, "b": False, "u": ""}, N, {"c": 5, "b": True, "u": "x"},
            {"c": 7, "b": False, "u": ""}, {"c": 7, "b": False, "u": "y"}]
    check(record_digest(sdoc(rows, row_groups=[2, 3])) == record_digest(sdoc(same, row_groups=[2, 3])),
          "null slots: split at row groups")
    check(record_digest(sdoc(rows, row_groups=[2, 3])) != record_digest(sdoc(rows)),
          "null slots: row groups change the digest")
    # batches of 2: batch [0, 2) has struct nulls (slot 0 <- 0); batch [2, 4) has
    # none, so row 3 is hashed as a null
    same = [{"c": 0, "b": False, "u": ""}, N, {"c": 5, "b": True, "u": "x"},
            {"c": N, "b": N, "u": N}, {"c": 7, "b": False, "u": "y"}]
    check(record_digest(sdoc(rows, batch_size=2)) == record_digest(sdoc(same, batch_size=2)),
          "null slots: split at batches")
    check(record_digest(sdoc(rows, batch_size=2)) == record_digest(sdoc(rows, batch_sizes=[2, 2, 1])),
          "batch_size = explicit batch_sizes")

    # 4. Fixtures: NAME.json -> NAME.hex; a generator NAME.py prints the JSON,
    #    NAME.hex is its output without arguments, NAME.ARG.hex with ARG
    if fixture_dir and os.path.isdir(fixture_dir):
        import subprocess
        names = sorted(os.listdir(fixture_dir))
        for name in names:
            if not name.endswith(".py"):
                continue
            stem = name[:-3]
            hexes = [h for h in names if h.endswith(".hex") and
                     (h == stem + ".hex" or h.startswith(stem + "."))]
            if not hexes:
                failures.append("generator %s without a .hex" % name)
            for h in hexes:
                arg = h[len(stem) + 1:-4]
                cmd = [sys.executable, os.path.join(fixture_dir, name)] + ([arg] if arg else [])
                doc = json.loads(subprocess.run(cmd, check=True, stdout=subprocess.PIPE).stdout)
                with open(os.path.join(fixture_dir, h)) as fh:
                    want = fh.read().strip()
                check(record_digest(doc) == want, "generated fixture " + h)
        for name in names:
            if not name.endswith(".json"):
                continue
            hexp = os.path.join(fixture_dir, name[:-5] + ".hex")
            with open(os.path.join(fixture_dir, name), "rb") as fh:
                doc = json.loads(fh.read().decode("utf-8"))
            if not os.path.exists(hexp):
                failures.append("missing " + hexp)
                continue
            with open(hexp) as fh:
                want = fh.read().strip()
            check(record_digest(doc) == want, "fixture " + name)

    for f in failures:
        sys.stderr.write("FAIL: %s\n" % f)
    print("self-test: %s" % ("FAILED" if failures else "ok"))
    return 1 if failures else 0


def main(argv):
    multihash = False
    mode = "or"
    paths = []
    for a in argv[1:]:
        if a == "--self-test":
            import os
            here = os.path.dirname(os.path.abspath(__file__))
            return self_test(os.path.join(here, "..", "fixtures", "digest"))
        if a == "--multihash":
            multihash = True
        elif a.startswith("--null-combine="):
            mode = a.split("=", 1)[1]
            if mode not in ("or", "and"):
                sys.stderr.write("--null-combine must be 'or' or 'and'\n")
                return 2
        elif a in ("-h", "--help"):
            sys.stdout.write(__doc__)
            return 0
        else:
            paths.append(a)
    if len(paths) != 1:
        sys.stderr.write("usage: arrow_digest_oracle.py [--multihash] [--null-combine=or|and] FILE.json\n")
        return 2
    try:
        if paths[0] == "-":
            doc = json.loads(sys.stdin.buffer.read().decode("utf-8"))
        else:
            with open(paths[0], "rb") as fh:
                doc = json.loads(fh.read().decode("utf-8"))
        digest = record_digest(doc, mode)
    except (OracleError, ValueError, OSError) as e:
        sys.stderr.write("arrow_digest_oracle: %s\n" % e)
        return 1
    print((MULTIHASH_PREFIX + digest) if multihash else digest)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
