// ui.mjs — the web UI in headless Chromium (playwright-core), driven by
// test_ui.sh, which starts `silt serve` and writes what the CLI says into
// $UI_EXPECT (a JSON file): every check compares the page with the CLI.
// Prints one "ok …" line per passed check; exits 1 on the first failure.
import { chromium } from 'playwright-core';
import { readFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';

const E = JSON.parse(readFileSync(process.env.UI_EXPECT, 'utf8'));
const BASE = process.env.UI_BASE;
const SHOTS = process.env.UI_SHOTS;
const AXE = process.env.UI_AXE;
// the CLI on the served workspace, now (the UI's changes must show there)
const cli = (...a) => JSON.parse(execFileSync(process.env.SILT, ['--json', ...a],
  { cwd: process.env.UI_WS, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
// silt list, with files datasets told apart by `silt files` succeeding
function listNow() {
  return cli('list').map((d) => {
    let files = null;
    try { files = cli('files', d.name); } catch { /* a ledger: silt files refuses it */ }
    return { name: d.name, kind: files ? 'Files' : d.kind, count: files ? files.length : d.records,
      watermark: d.watermark, head: d.head };
  });
}
mkdirSync(SHOTS, { recursive: true });

let failed = false;
function check(cond, what, detail = '') {
  if (cond) console.log(`ok ${what}`);
  else { console.log(`FAIL ${what}${detail ? ': ' + detail : ''}`); failed = true; }
}
const eq = (got, want, what) => check(JSON.stringify(got) === JSON.stringify(want), what,
  `got ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`);

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  // the --user-data-dir of COMPONENTS.md: playwright refuses the flag and
  // gives every launch a fresh temporary profile itself
});

// bypassCSP: axe-core is injected as an inline script, which the UI's CSP
// forbids; the read-token session below keeps the CSP and checks that the
// UI itself never violates it.
async function newPage(width, height, bypassCSP = true) {
  const ctx = await browser.newContext({ viewport: { width, height }, bypassCSP });
  const page = await ctx.newPage();
  page.problems = [];
  page.on('pageerror', (e) => page.problems.push(`page error: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error' && !/status of 4\d\d/.test(m.text())) page.problems.push(`console: ${m.text()}`); });
  page.on('request', (r) => { if (!/^(blob:|data:)/.test(r.url()) && !r.url().startsWith(BASE)) page.problems.push(`external request ${r.url()}`); });
  return page;
}

async function axe(page, what) {
  await page.addScriptTag({ path: AXE });
  const r = await page.evaluate(async () => (await window.axe.run(document)).violations
    .map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length })));
  const critical = r.filter((v) => v.impact === 'critical');
  check(critical.length === 0, `axe: no critical violations on ${what}`, JSON.stringify(critical));
}

async function signIn(page, secret) {
  await page.goto(`${BASE}/ui/`);
  await page.waitForURL(/\/ui\/signin/);
  await page.getByLabel('Token').fill(secret);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('signed-in').waitFor();
}

const texts = (loc) => loc.evaluateAll((els) => els.map((e) => e.textContent));
const rowsOf = (page, id) => page.getByTestId(id).locator('tbody tr').evaluateAll((trs) =>
  trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));

for (const [w, hgt, tag] of [[1280, 800, 'desktop'], [390, 844, 'phone']]) {
  const page = await newPage(w, hgt);
  const shot = async (name) => {
    const junk = (await page.locator('#main').textContent()).match(/\b(null|undefined|NaN)\b|\[object /);
    check(!junk, L(`${name}: no null/undefined/NaN/[object] shown`), junk && junk[0]);
    const wide = await page.evaluate(() => document.documentElement.scrollWidth);
    check(wide <= w, L(`${name}: the page fits the viewport width`), `${wide} px`);
    await page.screenshot({ path: join(SHOTS, `${name}-${w}x${hgt}.png`), fullPage: true });
  };
  const L = (s) => `${s} (${tag})`;

  // ---- sign-in ----
  await page.goto(`${BASE}/ui/signin`);
  await page.getByLabel('Token').waitFor();
  await axe(page, L('sign-in'));
  await shot('signin');
  await signIn(page, E.admin);
  const signed = await page.getByTestId('signed-in').textContent();
  eq(signed, 'Signed in as admin, scope admin, all datasets.', L('sign-in shows name and scope'));
  const seen = await texts(page.locator('#main .signin a[href^="/ui/datasets/"]'));
  eq(seen, E.names, L('sign-in lists the visible datasets'));

  // ---- datasets ----
  await page.goto(`${BASE}/ui/datasets`);
  await page.getByTestId('datasets').waitFor();
  const list = await rowsOf(page, 'datasets');
  eq(list.map((r) => r[0]), E.names, L('datasets: the names of silt list, sorted'));
  for (const d of listNow()) {
    const r = list.find((x) => x[0] === d.name);
    eq(r && [r[1], r[2], r[4], r[6].replace('…', '')],
      [d.kind, d.count.toLocaleString('en-US'), d.watermark || '–', d.head.slice(0, 5) + d.head.slice(-8)],
      L(`datasets: kind, count, watermark, head of ${d.name}`));
  }
  await page.getByRole('button', { name: 'Name' }).click();
  eq((await rowsOf(page, 'datasets')).map((r) => r[0]), [...E.names].reverse(), L('datasets: sort by name descending'));
  await page.getByLabel('Filter by name').fill('city');
  eq((await rowsOf(page, 'datasets')).map((r) => r[0]), E.names.filter((n) => n.includes('city')).reverse(),
    L('datasets: filter by name'));
  await page.getByLabel('Filter by name').fill('');
  await axe(page, L('datasets'));
  await shot('datasets');

  // ---- dataset: overview ----
  const ds = E.ledger;
  await page.goto(`${BASE}/ui/datasets/${ds}/overview`);
  await page.getByTestId('plot').waitFor();
  const facts = await page.locator('dl.facts').evaluate((dl) => Object.fromEntries(
    [...dl.querySelectorAll('dt')].map((dt) => [dt.textContent, dt.nextElementSibling.textContent])));
  eq([facts.ID, facts.RID, facts.Head, facts.Watermark, facts.Description, facts.Source],
    [E.info.id, E.info.rid, E.info.head, E.info.watermark, E.description, E.source], L('overview facts'));
  check(await page.locator('[data-testid=plot] canvas').count() === 1, L('overview: uPlot drew the plot'));
  eq(await page.locator('[data-testid=plot] figcaption').textContent(), E.plotCaption, L('overview: plot caption'));
  await page.getByTestId('plot-days').waitFor();
  check(await page.locator('[data-testid=plot-days] canvas').count() === 1, L('overview: uPlot drew the event-time plot'));
  eq(await page.locator('[data-testid=plot-days] figcaption').textContent(), E.daysCaption, L('overview: event-time plot caption'));
  await axe(page, L('overview'));
  await shot('overview');

  // ---- data ----
  await page.getByRole('link', { name: 'Data', exact: true }).click();
  await page.getByTestId('data').waitFor();
  eq(await rowsOf(page, 'data'), E.rows, L('data: rows and ops, newest first, as silt tail'));
  eq(await texts(page.locator('[data-testid=data] td .op')), E.ops, L('data: op labels'));
  const cls = await page.locator('[data-testid=data] td .op').evaluateAll((els) => els.map((e) => getComputedStyle(e).color));
  check(new Set(cls).size >= 2, L('data: ops are colour-coded'), JSON.stringify(cls));
  await page.getByLabel('As of block').selectOption(E.asOf.block);
  await page.waitForURL(/at=/);
  await page.getByTestId('data').waitFor();
  eq(await rowsOf(page, 'data'), E.asOf.rows, L('data: as of an older block, as silt tail --as-of'));
  await page.getByLabel('As of block').selectOption('');
  await page.waitForURL((u) => !u.search.includes('at='));
  await page.getByLabel('Current state (:current)').check();
  await page.waitForURL(/current=1/);
  await page.getByTestId('data').waitFor();
  eq(await rowsOf(page, 'data'), E.current, L('data: the current state, as silt sql on NAME:current'));
  await axe(page, L('data'));
  await shot('data');

  // ---- schema ----
  await page.goto(`${BASE}/ui/datasets/${ds}/schema`);
  await page.getByTestId('schema').waitFor();
  const fields = await page.locator('[data-testid=schema] > li').evaluateAll((lis) =>
    lis.map((li) => `${li.querySelector('.fname').textContent}: ${li.querySelector('.ftype').textContent}`));
  eq(fields, E.schema, L('schema: fields and types as silt schema'));
  eq(await texts(page.locator('[data-testid=schema] > li > .foundry')), E.foundryTypes, L('schema: Foundry type names'));
  await axe(page, L('schema'));
  await shot('schema');

  // ---- history ----
  await page.getByRole('link', { name: 'History', exact: true }).click();
  await page.getByTestId('history').waitFor();
  const hist = await rowsOf(page, 'history');
  eq(hist.map((r) => [Number(r[0]), r[1], r[2]]), E.log.map((b) => [b.sequenceNumber, b.event.kind, b.systemTime]),
    L('history: one row per block, newest first, as silt log'));
  eq(hist[0][3], E.headSummary, L('history: summary of the head block'));
  await page.locator('[data-testid=history] tbody tr').first().getByRole('button').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=block-yaml]').textContent.startsWith('kind:'));
  eq(await page.getByTestId('block-yaml').textContent(), E.headYaml, L('history: the head block as YAML, as silt log --yaml'));
  await axe(page, L('history'));
  await shot('history');

  // ---- SQL ----
  await page.goto(`${BASE}/ui/datasets/${ds}/sql`);
  await page.getByLabel('SQL (DuckDB dialect)').fill(E.query.sql);
  await page.getByLabel('SQL (DuckDB dialect)').press('Control+Enter');
  await page.getByTestId('result').waitFor();
  eq(await rowsOf(page, 'result'), E.query.rows, L('sql: result rows as silt sql'));
  eq(await texts(page.locator('[data-testid=result] th .ctype')), E.query.types, L('sql: column types'));
  const csvHref = await page.getByRole('link', { name: 'Download CSV' }).getAttribute('href');
  const csv = await page.evaluate(async (u) => (await fetch(u)).text(), csvHref);
  eq(csv.replaceAll('\r\n', '\n'), E.query.csv, L('sql: CSV download as silt sql --format csv'));
  await axe(page, L('sql'));
  await shot('sql');
  check(await page.getByRole('button', { name: 'Line chart' }).count() === 0, L('sql: no chart without a time column'));
  await page.getByLabel('SQL (DuckDB dialect)').fill(E.query.chart.sql);
  await page.getByRole('button', { name: 'Run' }).click();
  await page.getByRole('button', { name: 'Line chart' }).click();
  await page.getByTestId('sql-chart').locator('canvas').waitFor();
  eq(await page.getByTestId('sql-chart').locator('figcaption').textContent(), E.query.chart.caption,
    L('sql: a one-click line chart of a numeric column over time'));
  await shot('sql-chart');
  await page.getByLabel('SQL (DuckDB dialect)').fill('SELECT nope FROM "' + ds + '"');
  await page.getByRole('button', { name: 'Run' }).click();
  await page.getByTestId('sql-out').locator('.error').waitFor();
  eq(await page.getByTestId('sql-out').locator('.error').textContent(), E.query.error, L('sql: the engine error message'));

  // ---- files, transactions, branches ----
  const F = E.files.name;
  const filesNow = async () => (await rowsOf(page, 'files')).map((r) => r[0]);
  const gotoFiles = async (q = '') => { await page.goto(`${BASE}/ui/datasets/${F}/files${q}`); await page.getByTestId('files').waitFor(); };
  await gotoFiles();
  eq(await filesNow(), cli('files', F).map((f) => f.path), L('files: the paths of silt files'));
  await axe(page, L('files'));
  await shot('files');
  if (tag === 'desktop') {
    // upload into a new UPDATE transaction, committed
    await page.getByLabel('Files to upload').setInputFiles({ name: 'new.csv', mimeType: 'text/csv', buffer: Buffer.from('n\n1\n') });
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await page.getByTestId('files').getByText('new.csv', { exact: true }).waitFor();
    const after = cli('files', F);
    eq(await filesNow(), after.map((f) => f.path), 'upload: the view as silt files after it');
    eq(after.filter((f) => f.path === 'new.csv').map((f) => [f.size, f.transactionType]), [[4, 'UPDATE']],
      'upload: silt files has new.csv, 4 bytes, UPDATE');
    // start and abort
    await page.getByRole('button', { name: 'Start transaction' }).click();
    await page.getByTestId('open-txn').waitFor();
    const rid1 = await page.getByTestId('open-txn').locator('code').textContent();
    eq(cli('txn', 'list', F).filter((t) => t.rid === rid1).map((t) => t.status), ['OPEN'], 'start: silt txn list shows it OPEN');
    await page.getByRole('button', { name: 'Abort' }).click();
    await page.getByRole('button', { name: 'Start transaction' }).waitFor();
    eq(cli('txn', 'list', F).filter((t) => t.rid === rid1).map((t) => t.status), ['ABORTED'], 'abort: silt txn list shows it ABORTED');
    // start, upload into it (stays open), commit
    await page.getByRole('button', { name: 'Start transaction' }).click();
    await page.getByTestId('open-txn').waitFor();
    const rid2 = await page.getByTestId('open-txn').locator('code').textContent();
    await page.getByLabel('Files to upload').setInputFiles({ name: 'later.txt', mimeType: 'text/plain', buffer: Buffer.from('later\n') });
    await page.getByRole('button', { name: 'Upload into the open transaction' }).click();
    await page.getByTestId('write-status').getByText(/still open/).waitFor();
    check(!cli('files', F).some((f) => f.path === 'later.txt'), 'open transaction: silt files does not show its file yet');
    await page.getByRole('button', { name: 'Commit' }).click();
    await page.getByTestId('files').getByText('later.txt', { exact: true }).waitFor();
    eq(cli('txn', 'list', F).filter((t) => t.rid === rid2).map((t) => t.status), ['COMMITTED'], 'commit: silt txn list shows it COMMITTED');
    eq(await filesNow(), cli('files', F).map((f) => f.path), 'commit: the view as silt files');
    const first = cli('txn', 'list', F).find((t) => t.status === 'COMMITTED').rid;
    await page.getByLabel('As of transaction').selectOption(first);
    await page.waitForURL(/at=/);
    await page.getByTestId('files').waitFor();
    eq(await filesNow(), cli('files', F, '--at', first).map((f) => f.path), 'files as of a transaction, as silt files --at');
    eq(await page.locator('[data-write]').count(), 0, 'files as of a transaction: no write controls');
    // a branch from the first transaction, its view, then delete it
    await page.goto(`${BASE}/ui/datasets/${F}/transactions`);
    await page.getByTestId('transactions').waitFor();
    eq((await rowsOf(page, 'transactions')).map((r) => [r[0], r[2]]),
      cli('txn', 'list', F).filter((t) => t.branch === 'master').reverse().map((t) => [t.rid, t.status]),
      'transactions: as silt txn list, newest first');
    await axe(page, 'transactions (desktop, write token)');
    await page.locator('[data-testid=transactions] tbody tr').last().getByRole('button', { name: 'Branch from here' }).click();
    await page.getByLabel('New branch name').fill('dev');
    await page.getByRole('button', { name: 'Create branch' }).click();
    await page.getByTestId('branches').waitFor();
    eq((await rowsOf(page, 'branches')).map((r) => r[0]), cli('branch', 'list', F).map((b) => b.name), 'branches: as silt branch list');
    check(cli('branch', 'list', F).some((b) => b.name === 'dev'), 'branch from a transaction: silt branch list has dev');
    await page.getByRole('link', { name: 'dev', exact: true }).click();
    await page.getByTestId('files').waitFor();
    eq(await filesNow(), cli('files', `${F}@dev`).map((f) => f.path), 'switch branch: the view of dev, as silt files raw@dev');
    check((await filesNow()).length < cli('files', F).length, 'switch branch: dev differs from master');
    await page.goto(`${BASE}/ui/datasets/${F}/branches`);
    await page.getByRole('button', { name: 'Delete branch dev' }).click();
    await page.locator('[data-testid=branches] tr[data-branch=master]').waitFor();
    await page.waitForFunction(() => !document.querySelector('[data-testid=branches] tr[data-branch=dev]'));
    check(!cli('branch', 'list', F).some((b) => b.name === 'dev'), 'delete branch: silt branch list has no dev');
  }
  await page.goto(`${BASE}/ui/datasets/${F}/transactions`);
  await page.getByTestId('transactions').waitFor();
  await shot('transactions');
  await page.goto(`${BASE}/ui/datasets/${F}/branches`);
  await page.getByTestId('branches').waitFor();
  await axe(page, L('branches'));
  await shot('branches');

  check(page.problems.length === 0, L('no page errors, CSP violations or external requests'), page.problems.join('; '));
  await page.context().close();
}

// ---- a read-only token: no write controls; the API refuses writes ----
{
  const page = await newPage(1280, 800, false);
  page.on('console', (m) => { if (/Content Security Policy/.test(m.text())) page.problems.push(`CSP: ${m.text()}`); });
  await signIn(page, E.reader);
  eq(await page.getByTestId('signed-in').textContent(), 'Signed in as viewer, scope read, all datasets.',
    'read token: scope shown');
  for (const tab of ['overview', 'data', 'schema', 'history', 'sql']) {
    await page.goto(`${BASE}/ui/datasets/${E.ledger}/${tab}`);
    await page.locator('section.tab > *').first().waitFor();
    eq(await page.locator('[data-write]').count(), 0, `read token: no write controls on ${tab}`);
    if (tab === 'overview') {
      await page.getByTestId('plot').waitFor();
      check(await page.locator('[data-testid=plot] canvas').count() === 1, 'CSP kept: uPlot drew the plot');
    }
  }
  check(page.problems.length === 0, 'CSP kept: no violations, page errors or external requests on any tab',
    page.problems.join('; '));
  for (const tab of ['files', 'transactions', 'branches']) {
    await page.goto(`${BASE}/ui/datasets/${E.files.name}/${tab}`);
    await page.getByTestId(tab).waitFor();
    eq(await page.locator('[data-write]').count(), 0, `read token: no write controls on ${tab}`);
  }
  const status = await page.evaluate(async ([rid]) => (await fetch(`/api/v2/datasets/${rid}/files/x.csv/upload`, {
    method: 'POST', headers: { Authorization: `Bearer ${sessionStorage.getItem('silt.token')}`,
      'Content-Type': 'application/octet-stream' }, body: 'a' })).status, [E.files.rid]);
  eq(status, 403, 'read token: the API refuses an upload anyway');

  // ---- 401 returns to sign-in ----
  await page.evaluate(() => sessionStorage.setItem('silt.token', 'silt_revoked-or-wrong'));
  await page.goto(`${BASE}/ui/datasets/${E.ledger}/data`);
  await page.waitForURL(/\/ui\/signin\?expired=1/);
  eq(await page.locator('.signin .error').textContent(), 'The token was refused: sign in again.', '401 returns to sign-in');
  eq(await page.evaluate(() => sessionStorage.getItem('silt.token')), null, '401 forgets the token');
  check(page.problems.filter((p) => !p.includes('401')).length === 0, 'read token: no page errors', page.problems.join('; '));
  await page.context().close();
}

await browser.close();
process.exit(failed ? 1 : 0);
