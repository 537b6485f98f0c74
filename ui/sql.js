// sql.js — the SQL tab (POST /odf/query; Ctrl+Enter runs), and the result
// table the Data tab shares. Column types come from DESCRIBE of the same
// query (a second, equally confined query).
import { api } from './api.js';
import { h, opCell, cellText, errorBox } from './dom.js';

// Runs a query (JsonAoA) and DESCRIBE of it: {names, types, rows}.
export async function queryTable(req) {
  const [res, desc] = await Promise.all([
    api.query(req),
    api.query({ ...req, query: `DESCRIBE ${req.query}`, skip: 0, limit: 10000 })]);
  return { names: desc.output.data.map((r) => r[0]), types: desc.output.data.map((r) => r[1]), rows: res.output.data };
}

export function resultTable({ names, types, rows }, { ops = false, testid = 'result' } = {}) {
  return h('div', { class: 'scroll' }, h('table', { class: 'grid', 'data-testid': testid },
    h('caption', { class: 'sr-only' }, `${rows.length} rows`),
    h('thead', {}, h('tr', {}, names.map((n, i) => h('th', { scope: 'col' }, n,
      types ? h('span', { class: 'ctype' }, types[i]) : null)))),
    h('tbody', {}, rows.map((r) => h('tr', {}, r.map((v, i) =>
      h('td', { class: typeof v === 'number' ? 'num' : null }, ops && names[i] === 'op' ? opCell(v) : cellText(v))))))));
}

function csv(names, rows) {
  const q = (v) => {
    const s = cellText(v);
    return /[",\n\r]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
  };
  return [names, ...rows].map((r) => r.map(q).join(',')).join('\r\n') + '\r\n';
}

const TIME = /^(TIMESTAMP|DATE)/;
const NUMBER = /^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|FLOAT|DOUBLE|DECIMAL)/;

// For a result with a time column and numeric columns: a button that draws
// the numeric columns over the first time column (uPlot), rows in time order.
function lineChart(t) {
  const x = t.types.findIndex((ty) => TIME.test(ty));
  const ys = t.types.map((ty, i) => (NUMBER.test(ty) && i !== x ? i : -1)).filter((i) => i >= 0);
  if (x < 0 || !ys.length || !t.rows.length || !window.uPlot) return null;
  const box = h('figure', { class: 'plot', 'data-testid': 'sql-chart', hidden: true });
  const button = h('button', { type: 'button', class: 'link', onclick: () => {
    box.hidden = false;
    box.replaceChildren(h('figcaption', {}, `${ys.map((i) => t.names[i]).join(', ')} by ${t.names[x]} (${t.rows.length} points)`));
    const rows = t.rows.map((r) => [Date.parse(r[x]) / 1000, ...ys.map((i) => (r[i] === null ? null : Number(r[i])))])
      .sort((a, b) => a[0] - b[0]);
    const colors = ['#3b82f6', '#e4572e', '#17a34a', '#a855f7', '#f59e0b'];
    new window.uPlot({
      width: Math.min(900, box.parentElement.clientWidth || 900), height: 260,
      series: [{}, ...ys.map((i, k) => ({ label: t.names[i], stroke: colors[k % colors.length], points: { size: 6 } }))],
      axes: [{ stroke: 'currentColor' }, { stroke: 'currentColor', size: 80 }],
    }, [rows.map((r) => r[0]), ...ys.map((_, k) => rows.map((r) => r[k + 1]))], box);
  } }, 'Line chart');
  return { button, box };
}

export async function sqlTab(el, name, sum) {
  const table = `"${name.replaceAll('"', '""')}"`;
  const ed = h('textarea', { id: 'sql', rows: 6, spellcheck: 'false', 'aria-describedby': 'sql-help' },
    sum.kind === 'Files' ? `SELECT * FROM ${table} LIMIT 10` : `SELECT * FROM ${table} ORDER BY "offset" DESC LIMIT 10`);
  const out = h('div', { 'aria-live': 'polite', 'data-testid': 'sql-out' });
  async function run() {
    out.replaceChildren(h('p', {}, 'Running…'));
    const q = ed.value;
    try {
      const t = await queryTable({ query: q, limit: 1000 });
      const blob = new Blob([csv(t.names, t.rows)], { type: 'text/csv' });
      const chart = lineChart(t);
      out.replaceChildren(
        h('p', { class: 'help' }, `${t.rows.length} rows`, ' · ',
          h('a', { href: URL.createObjectURL(blob), download: 'result.csv' }, 'Download CSV'),
          chart ? [' · ', chart.button] : null),
        chart ? chart.box : null,
        resultTable(t, { testid: 'result' }));
    } catch (e) {
      if (e.status !== 401) out.replaceChildren(errorBox(e));
    }
  }
  ed.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); run(); }
  });
  el.append(h('label', { for: 'sql' }, 'SQL (DuckDB dialect)'), ed,
    h('p', { id: 'sql-help', class: 'help' }, 'Ctrl+Enter runs the query; at most 1000 rows are shown.'),
    h('button', { type: 'button', onclick: run }, 'Run'), out);
  ed.focus();
}
