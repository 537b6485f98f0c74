// datasets.js — the datasets list: every dataset the token sees (paged
// through /odf/datasets), filter by name, sort by any column.
import { api } from './api.js';
import { h, fmtBytes, fmtInt, shortHash, errorBox } from './dom.js';

const COLS = [
  { key: 'name', label: 'Name' },
  { key: 'kind', label: 'Kind' },
  { key: 'count', label: 'Records / files', num: true },
  { key: 'sizeBytes', label: 'Size', num: true },
  { key: 'watermark', label: 'Watermark' },
  { key: 'lastUpdated', label: 'Last updated' },
  { key: 'head', label: 'Head' },
];

export async function datasetsPage(main) {
  document.title = 'Datasets · silt';
  main.append(h('h1', {}, 'Datasets'));
  const rows = [];
  try {
    let tok;
    do {
      const page = await api.datasets(tok);
      for (const d of page.data) rows.push({ ...d, count: d.kind === 'Files' ? d.files : d.records });
      tok = page.nextPageToken;
    } while (tok && rows.length < 100000);
  } catch (e) {
    return main.append(errorBox(e));
  }
  let sortKey = 'name', dir = 1, filter = '';
  const filterInput = h('input', { id: 'filter', type: 'search', placeholder: 'name contains…' });
  const tbody = h('tbody');
  const ths = COLS.map((c) => h('th', { scope: 'col', 'aria-sort': 'none' },
    h('button', { type: 'button', class: 'sort', 'data-key': c.key, onclick: () => {
      dir = sortKey === c.key ? -dir : 1; sortKey = c.key; draw();
    } }, c.label)));
  const count = h('p', { class: 'help', 'aria-live': 'polite' });
  function draw() {
    const shown = rows.filter((r) => r.name.toLowerCase().includes(filter.toLowerCase()));
    const col = COLS.find((c) => c.key === sortKey);
    shown.sort((a, b) => {
      const x = a[sortKey], y = b[sortKey];
      if (x === y) return a.name < b.name ? -1 : 1;
      if (x === null || x === undefined) return 1;
      if (y === null || y === undefined) return -1;
      return (col.num ? x - y : String(x) < String(y) ? -1 : 1) * dir;
    });
    ths.forEach((th, i) => th.setAttribute('aria-sort', COLS[i].key === sortKey ? (dir > 0 ? 'ascending' : 'descending') : 'none'));
    tbody.replaceChildren(...shown.map((d) => h('tr', { 'data-name': d.name },
      h('td', {}, h('a', { href: `/ui/datasets/${encodeURIComponent(d.name)}` }, d.name)),
      h('td', {}, h('span', { class: `kind kind-${d.kind}` }, d.kind)),
      h('td', { class: 'num' }, fmtInt(d.count)),
      h('td', { class: 'num' }, fmtBytes(d.sizeBytes)),
      h('td', {}, d.watermark || '–'),
      h('td', {}, d.lastUpdated || '–'),
      h('td', {}, h('code', { title: d.head }, shortHash(d.head))))));
    count.textContent = `${shown.length} of ${rows.length} datasets`;
  }
  filterInput.addEventListener('input', () => { filter = filterInput.value; draw(); });
  main.append(
    h('div', { class: 'toolbar' }, h('label', { for: 'filter' }, 'Filter by name'), filterInput, count),
    h('div', { class: 'scroll' }, h('table', { class: 'grid', 'data-testid': 'datasets' },
      h('caption', { class: 'sr-only' }, 'Datasets (sortable; choose a column heading to sort)'),
      h('thead', {}, h('tr', {}, ths)), tbody)));
  draw();
}
