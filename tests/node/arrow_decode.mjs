// arrow_decode.mjs — decodes an Arrow IPC stream with npm apache-arrow (an
// independent reader) for tests/integration/test_read_table.sh.
//
//   node arrow_decode.mjs FILE            schema, then one JSON line per row
//   node arrow_decode.mjs FILE --sum COL  "rows=N batches=B sum=S" only
//
// Schema lines: "name: <Arrow type as apache-arrow prints it>[ not null]".
// Values as JSON: 64-bit integers and decimals as strings (exact), NaN /
// infinities as strings, binary as hex strings, top-level dates, times and
// timestamps as the stored integers (in the unit of the type; 64-bit ones
// as strings), lists as arrays, structs and maps as objects; a row is an
// array of values in column order. The last line counts rows and batches.
import { readFileSync } from "node:fs";
import { MessageHeader, MessageReader, RecordBatchStreamReader, Type } from "apache-arrow";

const [file, flag, col] = process.argv.slice(2);
const bytes = readFileSync(file);
const reader = RecordBatchStreamReader.from(bytes);
reader.open();
const schema = reader.schema;
if (!schema) throw new Error("no schema message");

function decimal(words, scale) {
  let v = 0n;
  for (let i = words.length - 1; i >= 0; i--) v = (v << 32n) | BigInt(words[i] >>> 0);
  const bits = BigInt(words.length * 32);
  if (v >> (bits - 1n)) v -= 1n << bits;
  const neg = v < 0n;
  let s = (neg ? -v : v).toString();
  if (scale > 0) {
    s = s.padStart(scale + 1, "0");
    s = s.slice(0, s.length - scale) + "." + s.slice(s.length - scale);
  }
  return (neg ? "-" : "") + s;
}

function value(v, type) {
  if (v === null || v === undefined) return null;
  switch (type.typeId) {
    case Type.Decimal: return decimal(v, type.scale);
    case Type.Binary: case Type.FixedSizeBinary: return Buffer.from(v).toString("hex");
    case Type.List: case Type.FixedSizeList: {
      const out = [];
      for (let i = 0; i < v.length; i++) out.push(value(v.get(i), type.children[0].type));
      return out;
    }
    case Type.Struct: {
      const out = {};
      for (const f of type.children) out[f.name] = value(v[f.name], f.type);
      return out;
    }
    case Type.Map: {
      const out = {};
      const [kf, vf] = type.children[0].type.children;
      for (const [k, x] of v) out[String(value(k, kf.type))] = value(x, vf.type);
      return out;
    }
  }
  if (typeof v === "bigint") return v.toString();
  if (typeof v === "number" && !Number.isFinite(v)) return String(v);
  if (v instanceof Date) return v.getTime();
  if (ArrayBuffer.isView(v)) return Array.from(v, (x) => (typeof x === "bigint" ? x.toString() : x));
  return v;
}

// Top-level dates, times and timestamps: the stored integer (exact; get()
// would give milliseconds as a float).
const RAW = new Set([Type.Timestamp, Type.Time, Type.Date]);
function cell(vec, type, r) {
  if (!RAW.has(type.typeId)) return value(vec.get(r), type);
  if (!vec.isValid(r)) return null;
  const d = vec.data[0];
  const x = d.values[d.offset + r];
  return typeof x === "bigint" ? x.toString() : x;
}

// RecordBatch messages, counted from the messages themselves (the batch
// reader hands out one empty batch for a stream without any).
let batches = 0;
const messages = new MessageReader(bytes);
for (const m of messages) {
  if (m.headerType === MessageHeader.RecordBatch) batches++;
  if (m.bodyLength) messages.readMessageBody(m.bodyLength);
}

let rows = 0, sum = 0n;
const out = [];
if (flag !== "--sum")
  for (const f of schema.fields) out.push(`${f.name}: ${f.type}${f.nullable ? "" : " not null"}`);
for (const batch of reader) {
  rows += batch.numRows;
  if (flag === "--sum") {
    const v = batch.getChild(col);
    for (let i = 0; i < batch.numRows; i++) { const x = v.get(i); if (x !== null) sum += BigInt(x); }
    continue;
  }
  const cols = schema.fields.map((f, i) => [batch.getChildAt(i), f.type]);
  for (let r = 0; r < batch.numRows; r++) out.push(JSON.stringify(cols.map(([v, t]) => cell(v, t, r))));
}
if (flag === "--sum") out.push(`rows=${rows} batches=${batches} sum=${sum}`);
else out.push(`rows=${rows} batches=${batches}`);
process.stdout.write(out.join("\n") + "\n");
