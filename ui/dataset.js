// dataset.js — a dataset's page: its tabs as links (each tab has its own
// URL, /ui/datasets/NAME/TAB), and the Overview, Data, Schema, History and
// Files tabs. SQL is in sql.js.
import { api } from './api.js';
import { h, fmtBytes, fmtInt, shortHash, errorBox } from './dom.js';
import { sqlTab, resultTable, queryTable } from './sql.js';
import { schemaTree } from './schema.js';
import { filesTab, transactionsTab, branchesTab } from './files.js';

const TABS = [['overview', 'Overview'], ['data', 'Data'], ['schema', 'Schema'], ['sql', 'SQL'], ['history', 'History']];
const PAGE = 100;

export async function datasetPage(main, name, tab, params) {
  document.title = `${name} · silt`;
  const base = `/ui/datasets/${encodeURIComponent(name)}`;
  let sum;
  try {
    sum = await api.summary(name);
  } catch (e) {
    return main.append(h('h1', {}, name), errorBox(e));
  }
  // a files dataset's records are its files (Data pages a ledger by offset)
  const tabs = sum.kind === 'Files'
    ? [...TABS.filter(([k]) => k !== 'data'), ['files', 'Files'], ['transactions', 'Transactions'], ['branches', 'Branches']]
    : TABS;
  main.append(
    h('h1', {}, name, ' ', h('span', { class: `kind kind-${sum.kind}` }, sum.kind)),
    h('nav', { class: 'tabs', 'aria-label': 'Dataset' },
      tabs.map(([k, label]) => h('a', { href: `${base}/${k}`, 'aria-current': k === tab ? 'page' : null }, label))));
  const body = h('section', { class: 'tab', 'aria-label': (tabs.find((t) => t[0] === tab) || [0, tab])[1] });
  main.append(body);
  const fn = tabs.some(([k]) => k === tab) && { overview, data, schema, sql: sqlTab, history: historyTab, files: filesTab,
    transactions: transactionsTab, branches: branchesTab }[tab];
  if (!fn) return body.append(h('p', {}, `No tab '${tab}' here.`));
  try {
    await fn(body, name, sum, params);
  } catch (e) {
    if (e.status !== 401) body.append(errorBox(e));
  }
}

// Blocks newest first, up to `max` (for the plot and the source kind).
async function chain(name, max = 10000) {
  const out = [];
  let tok;
  do {
    const p = await api.history(name, 1000, tok);
    out.push(...p.data);
    tok = p.nextPageToken;
  } while (tok && out.length < max);
  return out;
}

function sourceKind(blocks) {
  for (const b of blocks) {
    const e = b.event;
    if (e.kind === 'SetPollingSource') return `${e.fetch.kind} (polling)`;
    if (e.kind === 'AddPushSource') return `push (${e.sourceName || 'default'})`;
    if (e.kind === 'SetTransform') return 'transform';
  }
  return '–';
}

const dl = (pairs) => h('dl', { class: 'facts' }, pairs.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));

async function overview(el, name, sum) {
  const [meta, blocks] = await Promise.all([api.metadata(name, 'seed,info,license,refs,vocab'), chain(name)]);
  const o = meta.output, info = o.info || {}, lic = o.license;
  el.append(dl([
    ['Description', info.description || '–'],
    ['Keywords', (info.keywords || []).join(', ') || '–'],
    ['License', lic ? [lic.name || lic.shortName, lic.websiteUrl ? [' (', lic.websiteUrl, ')'] : ''] : '–'],
    ['ID', h('code', {}, sum.id)],
    ['RID', h('code', {}, sum.rid)],
    ['Source', sourceKind(blocks)],
    [sum.kind === 'Files' ? 'Files' : 'Records', fmtInt(sum.kind === 'Files' ? sum.files : sum.records)],
    ['Size', fmtBytes(sum.sizeBytes)],
    ['Watermark', sum.watermark || '–'],
    ['Head', h('code', {}, sum.head)],
    ['Blocks', fmtInt(sum.blocks)],
  ]));
  const adds = blocks.filter((b) => b.event.newData && b.event.newData.offsetInterval).reverse();
  el.append(h('h2', {}, 'Records added per block'));
  if (!adds.length) return el.append(h('p', {}, 'No data yet.'));
  plotRecordsPerBlock(el, adds);
  if (sum.kind !== 'Files') await plotRecordsPerDay(el, name, (o.vocab || {}).eventTimeColumn || 'event_time');
}

const plotWidth = (el) => Math.min(900, el.clientWidth || 900);

function plotRecordsPerBlock(el, adds) {
  const xs = adds.map((b) => Date.parse(b.systemTime) / 1000);
  const ys = adds.map((b) => b.event.newData.offsetInterval.end - b.event.newData.offsetInterval.start + 1);
  const box = h('figure', { class: 'plot', 'data-testid': 'plot' },
    h('figcaption', {}, `${adds.length} data blocks, ${fmtInt(ys.reduce((a, b) => a + b, 0))} records, by system time`));
  el.append(box);
  if (!window.uPlot) return;
  new window.uPlot({
    width: plotWidth(el), height: 260,
    series: [{}, { label: 'records', stroke: '#3b82f6', fill: 'rgba(59,130,246,0.15)', points: { size: 7 } }],
    axes: [{ stroke: 'currentColor' }, { stroke: 'currentColor', size: 80 }],
  }, [xs, ys], box);
}

// Records per day of event time (every record, retractions included, as the
// ledger holds them), computed by the server: one row per day.
async function plotRecordsPerDay(el, name, col) {
  const c = col.replaceAll('"', '""');
  let res;
  try {
    res = await api.query({
      query: `SELECT CAST(date_trunc('day', "${c}") AS DATE) AS day, count(*) AS n FROM "${name.replaceAll('"', '""')}"`
        + ` WHERE "${c}" IS NOT NULL GROUP BY 1 ORDER BY 1`,
      limit: 10000,
    });
  } catch (e) {
    if (e.status === 401) throw e;
    return; /* no event time column of a time type: no plot */
  }
  const rows = res.output.data;
  if (!rows.length) return;
  el.append(h('h2', {}, 'Records per day of event time'));
  const box = h('figure', { class: 'plot', 'data-testid': 'plot-days' },
    h('figcaption', {}, `${fmtInt(rows.length)} days from ${rows[0][0]} to ${rows[rows.length - 1][0]}, `
      + `${fmtInt(rows.reduce((a, r) => a + Number(r[1]), 0))} records`));
  el.append(box);
  if (!window.uPlot) return;
  new window.uPlot({
    width: plotWidth(el), height: 220,
    series: [{}, { label: 'records', stroke: '#16a34a', fill: 'rgba(22,163,74,0.15)', points: { size: 7 } }],
    axes: [{ stroke: 'currentColor' }, { stroke: 'currentColor', size: 80 }],
  }, [rows.map((r) => Date.parse(`${r[0]}T00:00:00Z`) / 1000), rows.map((r) => Number(r[1]))], box);
}

async function data(el, name, sum, params) {
  const page = Math.max(0, Number(params.get('page') || 0));
  const at = params.get('at') || '';
  const current = params.get('current') === '1';
  const history = await api.history(name, 100);
  const pick = h('select', { id: 'asof' },
    h('option', { value: '' }, `head (${shortHash(sum.head)})`),
    history.data.filter((b) => b.event.newData).map((b) => h('option', { value: b.hash, selected: b.hash === at },
      `#${b.sequenceNumber} ${b.systemTime} (${shortHash(b.hash)})`)));
  const url = (p, a, c = current) => `/ui/datasets/${encodeURIComponent(name)}/data?page=${p}` + (a ? `&at=${a}` : '')
    + (c ? '&current=1' : '');
  pick.addEventListener('change', () => import('./app.js').then((m) => m.go(url(0, pick.value))));
  const cur = h('input', { id: 'current', type: 'checkbox', checked: current });
  cur.addEventListener('change', () => import('./app.js').then((m) => m.go(url(0, at, cur.checked))));
  // :current is the ledger's current state (the records not retracted or corrected); it follows the pin too
  const view = name.replaceAll('"', '""') + (current ? ':current' : '');
  const res = await queryTable({
    query: `SELECT * FROM "${view}" ORDER BY "offset" DESC`,
    skip: page * PAGE, limit: PAGE,
    datasets: [{ alias: name, ...(at ? { blockHash: at } : {}) }],
  });
  const total = sum.records ?? 0;
  el.append(
    h('div', { class: 'toolbar' }, h('label', { for: 'asof' }, 'As of block'), pick,
      h('span', {}, cur, ' ', h('label', { for: 'current' }, 'Current state (:current)')),
      h('span', { class: 'help' }, `newest first, ${PAGE} per page; page ${page + 1}`)),
    resultTable(res, { ops: true, testid: 'data' }),
    h('nav', { class: 'pager', 'aria-label': 'Pages' },
      page > 0 ? h('a', { href: url(page - 1, at) }, '← Newer') : null,
      (current ? res.rows.length === PAGE : (page + 1) * PAGE < total) ? h('a', { href: url(page + 1, at) }, 'Older →') : null));
}

async function schema(el, name) {
  const meta = await api.metadata(name, 'schema');
  if (!meta.output.schema) return el.append(h('p', {}, 'No schema yet.'));
  el.append(schemaTree(meta.output.schema));
  const blocks = await chain(name);
  const changes = blocks.filter((b) => b.event.kind === 'SetDataSchema');
  el.append(h('h2', {}, 'Schema history'), h('ul', {}, changes.map((b) =>
    h('li', {}, `#${b.sequenceNumber} ${b.systemTime} `, h('code', {}, shortHash(b.hash)),
      ` (${b.event.schema.fields.length} fields)`))));
}

export function summarize(b) {
  const e = b.event;
  switch (e.kind) {
    case 'AddData':
    case 'ExecuteTransform': {
      const parts = [];
      const iv = e.newData && e.newData.offsetInterval;
      if (iv) parts.push(`+${fmtInt(iv.end - iv.start + 1)} records, offsets ${iv.start}..${iv.end}`);
      else parts.push('no new records');
      if (e.newWatermark) parts.push(`watermark ${e.newWatermark}`);
      if (e.newSourceState) parts.push(`source state ${e.newSourceState.value}`);
      return parts.join(', ');
    }
    case 'Seed': return `${e.datasetKind} ${e.datasetId}`;
    case 'SetInfo': return e.description || '';
    case 'SetLicense': return e.shortName || e.name || '';
    case 'SetDataSchema': return `${e.schema.fields.length} fields: ${e.schema.fields.map((f) => f.name).join(', ')}`;
    case 'SetPollingSource': return `fetch ${e.fetch.kind}, read ${e.read.kind}, merge ${e.merge.kind}`;
    case 'AddPushSource': return `source ${e.sourceName}, read ${e.read.kind}, merge ${e.merge.kind}`;
    case 'SetVocab': return Object.entries(e).filter(([k]) => k !== 'kind').map(([k, v]) => `${k} ${v}`).join(', ');
    default: return '';
  }
}

async function historyTab(el, name, sum, params) {
  const tok = params.get('page') || '';
  const page = await api.history(name, 100, tok || undefined);
  const yaml = h('pre', { class: 'yaml', 'data-testid': 'block-yaml', tabindex: '0', 'aria-label': 'Block as YAML' });
  const rows = page.data.map((b) => h('tr', { 'data-seq': b.sequenceNumber },
    h('td', { class: 'num' }, b.sequenceNumber),
    h('td', {}, h('button', { type: 'button', class: 'link', onclick: async () => {
      yaml.textContent = 'Loading…';
      yaml.textContent = await api.blockYaml(name, b.hash);
      yaml.focus();
    } }, b.event.kind)),
    h('td', {}, b.systemTime),
    h('td', {}, summarize(b)),
    h('td', {}, h('code', { title: b.hash }, shortHash(b.hash)))));
  el.append(h('div', { class: 'split' },
    h('div', { class: 'scroll' }, h('table', { class: 'grid', 'data-testid': 'history' },
      h('caption', { class: 'sr-only' }, 'Metadata chain, newest first; choose a kind to see the block'),
      h('thead', {}, h('tr', {}, ['Seq', 'Kind', 'System time', 'Summary', 'Hash'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, rows))),
    yaml),
  h('nav', { class: 'pager', 'aria-label': 'Pages' }, page.nextPageToken
    ? h('a', { href: `/ui/datasets/${encodeURIComponent(name)}/history?page=${page.nextPageToken}` }, 'Older →') : null));
}
