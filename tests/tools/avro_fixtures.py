#!/usr/bin/python3
"""avro_fixtures.py — Avro fixtures for tests/integration/test_avro*.sh,
written with python3-avro (Debian), and the independent reading of them.

  avro_fixtures.py types DIR     types.avro (codec null) and types_deflate.avro:
                                 every Avro type and logical type silt maps
  avro_fixtures.py bad DIR       union.avro (a union of int and string),
                                 nullable.avro (["null","long"] field n),
                                 strings.avro (field n is a string),
                                 bzip2.avro (a codec Apache Avro C lacks)
  avro_fixtures.py simple FILE N  N rows {id: long, name: string, score: double}
  avro_fixtures.py recodec IN CODEC OUT
                                 IN re-encoded with avromod (avro-bin: Apache
                                 Avro C's snappy and lzma, which python3-avro
                                 lacks) keeping IN's schema text (avromod
                                 rewrites it without logical types)
  avro_fixtures.py dump FILE     the rows of FILE read back with python3-avro,
                                 one CSV line each in the canonical form of
                                 CANON_SQL (the query the tests run on silt)

Runs with /usr/bin/python3 (python3-avro is a Debian package).
"""
import datetime
import decimal
import json
import sys

import avro.schema
from avro.datafile import DataFileReader, DataFileWriter
from avro.io import DatumReader, DatumWriter

TYPES_SCHEMA = {
    "type": "record", "name": "Row", "namespace": "silt.test",
    "fields": [
        {"name": "b", "type": "boolean"},
        {"name": "i", "type": "int"},
        {"name": "l", "type": "long"},
        {"name": "f", "type": "float"},
        {"name": "d", "type": "double"},
        {"name": "s", "type": "string"},
        {"name": "by", "type": "bytes"},
        {"name": "fx", "type": {"type": "fixed", "name": "Four", "size": 4}},
        {"name": "e", "type": {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN", "BLUE"]}},
        {"name": "arr", "type": {"type": "array", "items": "long"}},
        {"name": "m", "type": {"type": "map", "values": "int"}},
        {"name": "rec", "type": {"type": "record", "name": "Inner", "fields": [
            {"name": "x", "type": "int"},
            {"name": "y", "type": ["null", "string"]}]}},
        {"name": "recs", "type": {"type": "array", "items": "Inner"}},
        {"name": "am", "type": {"type": "map", "values": {"type": "array", "items": "string"}}},
        {"name": "on", "type": ["null", "long"]},
        {"name": "os", "type": ["string", "null"]},
        {"name": "orec", "type": ["null", "Inner"]},
        {"name": "dec", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}},
        {"name": "decf", "type": {"type": "fixed", "name": "Dec8", "size": 8,
                                   "logicalType": "decimal", "precision": 18, "scale": 4}},
        {"name": "dt", "type": {"type": "int", "logicalType": "date"}},
        {"name": "tms", "type": {"type": "int", "logicalType": "time-millis"}},
        {"name": "tus", "type": {"type": "long", "logicalType": "time-micros"}},
        {"name": "tsms", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "tsus", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "u", "type": {"type": "string", "logicalType": "uuid"}},
    ],
}

UTC = datetime.timezone.utc


def types_rows():
    D = decimal.Decimal
    return [
        dict(b=True, i=1, l=10, f=1.5, d=3.141592653589793, s="one", by=b"\x00\x01\xff", fx=b"abcd", e="RED",
             arr=[1, 2, 3], m={"a": 1, "b": 2}, rec={"x": 7, "y": "why"}, recs=[{"x": 1, "y": None}],
             am={"k": ["p", "q"]}, on=42, os="str", orec={"x": 8, "y": None}, dec=D("12.34"),
             decf=D("-98765.4321"), dt=datetime.date(2024, 2, 29), tms=datetime.time(12, 34, 56, 789000),
             tus=datetime.time(23, 59, 59, 999999),
             tsms=datetime.datetime(2024, 1, 2, 3, 4, 5, 678000, tzinfo=UTC),
             tsus=datetime.datetime(2024, 1, 2, 3, 4, 5, 678901, tzinfo=UTC),
             u="123e4567-e89b-12d3-a456-426614174000"),
        dict(b=False, i=-2147483648, l=-9223372036854775808, f=-0.25, d=-1e-300, s="ünïcødé ✓", by=b"",
             fx=b"\x00\x00\x00\x00", e="BLUE", arr=[], m={}, rec={"x": -1, "y": None}, recs=[], am={},
             on=None, os=None, orec=None, dec=D("-0.05"), decf=D("0.0001"), dt=datetime.date(1969, 12, 31),
             tms=datetime.time(0, 0, 0, 0), tus=datetime.time(0, 0, 0, 1),
             tsms=datetime.datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=UTC),
             tsus=datetime.datetime(1960, 6, 15, 0, 0, 0, 1, tzinfo=UTC),
             u="00000000-0000-0000-0000-000000000000"),
        dict(b=True, i=2147483647, l=9223372036854775807, f=3.0e38, d=1.7976931348623157e308, s="", by=b"x",
             fx=b"\xff\xfe\xfd\xfc", e="GREEN", arr=[-5], m={"z": -7}, rec={"x": 0, "y": ""},
             recs=[{"x": 2, "y": "two"}, {"x": 3, "y": None}], am={"e": [], "f": ["r"]}, on=-1, os="",
             orec={"x": 9, "y": "nine"}, dec=D("99999999.99"), decf=D("99999999999999.9999"),
             dt=datetime.date(1, 1, 1), tms=datetime.time(23, 59, 59, 999000),
             tus=datetime.time(12, 0, 0, 123456),
             tsms=datetime.datetime(2262, 4, 11, 23, 47, 16, 854000, tzinfo=UTC),
             tsus=datetime.datetime(1, 1, 1, 0, 0, 0, 0, tzinfo=UTC),
             u="ffffffff-ffff-ffff-ffff-ffffffffffff"),
    ]


def write(path, schema, rows, codec="null"):
    s = avro.schema.parse(json.dumps(schema))
    with open(path, "wb") as fh:
        w = DataFileWriter(fh, DatumWriter(), s, codec=codec)
        for r in rows:
            w.append(r)
        w.close()


def canon_float(v):
    return repr(float(v))


def micros_of_time(t):
    return ((t.hour * 60 + t.minute) * 60 + t.second) * 1000000 + t.microsecond


EPOCH = datetime.datetime(1970, 1, 1, tzinfo=UTC)


def epoch_us(ts):
    return (ts - EPOCH) // datetime.timedelta(microseconds=1)


def nul(v):
    return "NULL" if v is None else str(v)


# The canonical text of one row, column by column; CANON_SQL in the tests
# computes the same text from silt's columns.
def canon(r):
    f32 = float(r["f"])
    return [
        "true" if r["b"] else "false", str(r["i"]), str(r["l"]), canon_float(f32), canon_float(r["d"]), r["s"],
        r["by"].hex().upper(), r["fx"].hex().upper(), r["e"], "|".join(str(x) for x in r["arr"]),
        "|".join(f"{k}={v}" for k, v in r["m"].items()), str(r["rec"]["x"]), nul(r["rec"]["y"]),
        "|".join(f"{x['x']}:{nul(x['y'])}" for x in r["recs"]),
        "|".join(f"{k}=" + "/".join(v) for k, v in r["am"].items()), nul(r["on"]), nul(r["os"]),
        "NULL" if r["orec"] is None else f"{r['orec']['x']}:{nul(r['orec']['y'])}", str(r["dec"]), str(r["decf"]),
        r["dt"].isoformat(), str(micros_of_time(r["tms"])), str(micros_of_time(r["tus"])),
        str(epoch_us(r["tsms"]) // 1000), str(epoch_us(r["tsus"])), str(r["u"]),
    ]


def csv_line(cells):
    out = []
    for c in cells:
        if any(ch in c for ch in ',"\n') or c == "":
            c = '"' + c.replace('"', '""') + '"'
        out.append(c)
    return ",".join(out)


def read_long(b, p):
    v = shift = 0
    while True:
        c = b[p]
        p += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return (v >> 1) ^ -(v & 1), p


def enc_long(n):
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while True:
        if n < 0x80:
            out.append(n)
            return bytes(out)
        out.append((n & 0x7F) | 0x80)
        n >>= 7


def header(b):
    """(metadata dict, offset after the sync marker, sync) of a container."""
    assert b[:4] == b"Obj\x01"
    p, meta = 4, {}
    while True:
        n, p = read_long(b, p)
        if n == 0:
            break
        if n < 0:
            n = -n
            _, p = read_long(b, p)
        for _ in range(n):
            kl, p = read_long(b, p)
            k = b[p:p + kl].decode()
            p += kl
            vl, p = read_long(b, p)
            meta[k] = b[p:p + vl]
            p += vl
    return meta, p + 16, b[p:p + 16]


def recodec(src, codec, dst):
    import subprocess
    subprocess.run(["avromod", f"--codec={codec}", src, dst + ".tmp"], check=True)
    orig = open(src, "rb").read()
    new = open(dst + ".tmp", "rb").read()
    meta, _, _ = header(orig)
    nmeta, end, sync = header(new)
    assert nmeta["avro.codec"] == codec.encode()
    out = bytearray(b"Obj\x01") + enc_long(2)
    for k, v in (("avro.codec", codec.encode()), ("avro.schema", meta["avro.schema"])):
        out += enc_long(len(k)) + k.encode() + enc_long(len(v)) + v
    out += enc_long(0) + sync + new[end:]
    open(dst, "wb").write(out)
    import os
    os.unlink(dst + ".tmp")


def main():
    mode = sys.argv[1]
    if mode == "types":
        d = sys.argv[2]
        write(f"{d}/types.avro", TYPES_SCHEMA, types_rows())
        write(f"{d}/types_deflate.avro", TYPES_SCHEMA, types_rows(), codec="deflate")
    elif mode == "bad":
        d = sys.argv[2]
        write(f"{d}/union.avro", {"type": "record", "name": "U", "fields": [
            {"name": "id", "type": "long"}, {"name": "v", "type": ["int", "string"]}]}, [{"id": 1, "v": 2}])
        write(f"{d}/nullable.avro", {"type": "record", "name": "N", "fields": [
            {"name": "id", "type": "long"}, {"name": "n", "type": ["null", "long"]}]}, [{"id": 1, "n": None}])
        write(f"{d}/bzip2.avro", {"type": "record", "name": "Z", "fields": [
            {"name": "id", "type": "long"}]}, [{"id": 1}], codec="bzip2")
        write(f"{d}/strings.avro", {"type": "record", "name": "S", "fields": [
            {"name": "id", "type": "long"}, {"name": "n", "type": "string"}]}, [{"id": 1, "n": "x"}])
    elif mode == "simple":
        n = int(sys.argv[3])
        write(sys.argv[2], {"type": "record", "name": "Simple", "fields": [
            {"name": "id", "type": "long"}, {"name": "name", "type": "string"},
            {"name": "score", "type": "double"}]},
            ({"id": i, "name": f"n{i}", "score": i / 4} for i in range(n)), codec="deflate")
    elif mode == "recodec":
        recodec(sys.argv[2], sys.argv[3], sys.argv[4])
    elif mode == "dump":
        with open(sys.argv[2], "rb") as fh:
            for r in DataFileReader(fh, DatumReader()):
                print(csv_line(canon(r)))
    else:
        sys.exit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
