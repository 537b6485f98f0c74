// schema.js — an ODF DataSchema as a tree (nested types expanded), with
// the Foundry type name beside each field (docs/server.md, "readTable:
// Arrow types").
import { h } from './dom.js';

const FOUNDRY = {
  Int8: 'BYTE', Int16: 'SHORT', Int32: 'INTEGER', Int64: 'LONG', Float32: 'FLOAT', Float64: 'DOUBLE',
  Bool: 'BOOLEAN', String: 'STRING', Binary: 'BINARY', Date: 'DATE', Timestamp: 'TIMESTAMP',
  Decimal: 'DECIMAL', List: 'ARRAY', Struct: 'STRUCT', Map: 'MAP',
};

export function odfTypeName(t) {
  switch (t.kind) {
    case 'Timestamp': return `Timestamp(${t.unit}${t.timezone ? ', ' + t.timezone : ''})`;
    case 'Decimal': return `Decimal(${t.precision}, ${t.scale})`;
    case 'Time': case 'Duration': return `${t.kind}(${t.unit})`;
    case 'List': return t.fixedLength ? `List(fixed ${t.fixedLength})` : 'List';
    default: return t.kind;
  }
}

export function foundryTypeName(t) {
  const f = FOUNDRY[t.kind];
  if (!f) return '–';
  return t.kind === 'Decimal' ? `DECIMAL(${t.precision}, ${t.scale})` : f;
}

function children(t) {
  if (t.kind === 'Struct') return t.fields;
  if (t.kind === 'List') return [{ name: 'item', type: t.itemType }];
  if (t.kind === 'Map') return [{ name: 'key', type: t.keyType }, { name: 'value', type: t.valueType }];
  return null;
}

function node(f) {
  const kids = children(f.type);
  return h('li', { 'data-field': f.name },
    h('span', { class: 'fname' }, f.name), ' ', h('span', { class: 'ftype' }, odfTypeName(f.type)),
    ' ', h('span', { class: 'foundry', title: 'Foundry type' }, foundryTypeName(f.type)),
    f.type.optional === false || f.optional === false ? h('span', { class: 'help' }, ' required') : null,
    kids ? h('ul', {}, kids.map(node)) : null);
}

export function schemaTree(schema) {
  return h('ul', { class: 'tree', 'data-testid': 'schema', 'aria-label': 'Schema' }, schema.fields.map(node));
}
