// files.js — the tabs of a files dataset (Foundry API v2 routes only):
// Files (a branch's view, as of a transaction; download; for write tokens
// upload with progress and start / commit / abort of the open
// transaction), Transactions (a branch's, newest first; create a branch
// from one) and Branches (create, delete). Write controls carry
// data-write and are not rendered at all for a read token.
import { api, token } from './api.js';
import { session, go } from './app.js';
import { h, fmtBytes, shortHash, errorBox } from './dom.js';

const enc = encodeURIComponent;
const TYPES = ['UPDATE', 'APPEND', 'SNAPSHOT'];
const canWrite = () => session.who && session.who.scope !== 'read';
const here = (name, tab, q) => `/ui/datasets/${enc(name)}/${tab}` + (q ? `?${new URLSearchParams(q)}` : '');

// POST of a body with upload progress (fetch has none): resolves with the JSON answer.
function upload(url, file, onProgress) {
  return new Promise((resolve, reject) => {
    const x = new XMLHttpRequest();
    x.open('POST', url);
    x.setRequestHeader('Authorization', `Bearer ${token.get()}`);
    x.setRequestHeader('Content-Type', 'application/octet-stream');
    x.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded, e.total);
    x.onload = () => {
      let j = null;
      try { j = JSON.parse(x.responseText); } catch { /* empty */ }
      if (x.status === 401) { token.clear(); go('/ui/signin?expired=1', true); reject(new Error('signed out')); }
      else if (x.status >= 200 && x.status < 300) resolve(j);
      else reject(new Error((j && j.message) || `${x.status} ${x.statusText}`));
    };
    x.onerror = () => reject(new Error('the upload failed (connection)'));
    x.send(file);
  });
}

async function openTxn(rid, branch) {
  const b = await api.branch(rid, branch);
  if (!b.transactionRid) return null;
  const t = await api.txn(rid, b.transactionRid);
  return t.status === 'OPEN' ? t : null;
}

function branchPicker(branches, branch, onPick) {
  const pick = h('select', { id: 'branch' }, branches.map((b) => h('option', { value: b.name, selected: b.name === branch }, b.name)));
  pick.addEventListener('change', () => onPick(pick.value));
  return [h('label', { for: 'branch' }, 'Branch'), pick];
}

function writePanel(el, name, sum, branch, open) {
  const status = h('div', { 'aria-live': 'polite', 'data-testid': 'write-status' });
  const say = (...c) => status.replaceChildren(h('p', {}, ...c));
  const fail = (e) => status.replaceChildren(errorBox(e));
  const reload = () => go(here(name, 'files', { branch }), true);
  const files = h('input', { id: 'upload-files', type: 'file', multiple: true });
  const type = h('select', { id: 'upload-type' }, TYPES.map((t) => h('option', { value: t }, t)));
  const progress = h('progress', { max: 1, value: 0, 'aria-label': 'Upload progress' });
  async function doUpload() {
    const list = [...files.files];
    if (!list.length) return say('Choose one or more files first.');
    try {
      const txn = open || await api.startTxn(sum.rid, branch, type.value);
      const total = list.reduce((a, f) => a + f.size, 0) || 1;
      let done = 0;
      for (const f of list) {
        say(`Uploading ${f.name}…`);
        await upload(`/api/v2/datasets/${enc(sum.rid)}/files/${enc(f.name)}/upload?transactionRid=${enc(txn.rid)}`, f,
          (n) => { progress.value = (done + n) / total; });
        done += f.size;
      }
      progress.value = 1;
      if (!open) await api.commitTxn(sum.rid, txn.rid);
      say(`Uploaded ${list.length} file(s) into ${txn.rid}` + (open ? ' (still open: commit or abort it)' : ', committed') + '.');
      if (!open) setTimeout(reload, 0);
    } catch (e) { fail(e); }
  }
  const txnBox = open
    ? h('p', { 'data-testid': 'open-txn' }, `Open ${open.transactionType} transaction `, h('code', {}, open.rid), ' ',
      h('button', { type: 'button', 'data-write': '', onclick: () => api.commitTxn(sum.rid, open.rid).then(reload, fail) }, 'Commit'), ' ',
      h('button', { type: 'button', 'data-write': '', onclick: () => api.abortTxn(sum.rid, open.rid).then(reload, fail) }, 'Abort'))
    : h('p', {}, 'No open transaction on this branch. ',
      h('button', { type: 'button', 'data-write': '', onclick: () => api.startTxn(sum.rid, branch, type.value).then(reload, fail) },
        'Start transaction'));
  el.append(h('section', { class: 'card write', 'aria-label': 'Change files', 'data-write': '' },
    h('h2', {}, 'Change files'),
    h('div', { class: 'toolbar' },
      h('label', { for: 'upload-files' }, 'Files to upload'), files,
      open ? null : [h('label', { for: 'upload-type' }, 'Transaction type'), type],
      h('button', { type: 'button', 'data-write': '', onclick: doUpload }, open ? 'Upload into the open transaction' : 'Upload'),
      progress),
    txnBox, status));
}

export async function filesTab(el, name, sum, params) {
  const branch = params.get('branch') || 'master';
  const at = params.get('at') || '';
  const [branches, txns, open] = await Promise.all([api.branches(sum.rid), api.branchTxns(sum.rid, branch),
    openTxn(sum.rid, branch)]);
  const files = await api.files(sum.rid, branch, at);
  const asof = h('select', { id: 'asof' }, h('option', { value: '' }, 'latest'),
    txns.data.filter((t) => t.status === 'COMMITTED').map((t) =>
      h('option', { value: t.rid, selected: t.rid === at }, `${t.transactionType} ${t.closedTime} (${shortHash(t.rid)})`)));
  asof.addEventListener('change', () => go(here(name, 'files', asof.value ? { branch, at: asof.value } : { branch })));
  const download = async (f) => {
    const resp = await api.fileContent(sum.rid, f.path, branch, at);
    const a = h('a', { href: URL.createObjectURL(await resp.blob()), download: f.path.split('/').pop() });
    document.body.append(a); a.click(); a.remove();
  };
  el.append(h('div', { class: 'toolbar' }, branchPicker(branches.data, branch, (b) => go(here(name, 'files', { branch: b }))),
    h('label', { for: 'asof' }, 'As of transaction'), asof),
  h('div', { class: 'scroll' }, h('table', { class: 'grid', 'data-testid': 'files' },
    h('caption', { class: 'sr-only' }, `Files on branch ${branch}`),
    h('thead', {}, h('tr', {}, ['Path', 'Size', 'Updated', 'Transaction', ''].map((c) =>
      h('th', { scope: 'col' }, c || h('span', { class: 'sr-only' }, 'Download'))))),
    h('tbody', {}, files.data.map((f) => h('tr', {},
      h('td', {}, f.path), h('td', { class: 'num' }, fmtBytes(Number(f.sizeBytes))), h('td', {}, f.updatedTime || ''),
      h('td', {}, h('code', { title: f.transactionRid }, shortHash(f.transactionRid))),
      h('td', {}, h('button', { type: 'button', class: 'link', 'aria-label': `Download ${f.path}`, onclick: () => download(f) },
        'Download'))))))),
  files.nextPageToken ? h('p', { class: 'help' }, 'More files than shown (first 1000).') : '');
  if (canWrite() && !at) writePanel(el, name, sum, branch, open);
}

export async function transactionsTab(el, name, sum, params) {
  const branch = params.get('branch') || 'master';
  const [branches, txns] = await Promise.all([api.branches(sum.rid), api.branchTxns(sum.rid, branch)]);
  const status = h('div', { 'aria-live': 'polite' });
  const fromTxn = async (t) => {
    const input = h('input', { id: `branch-from-${t.rid}`, 'aria-label': 'New branch name', required: true });
    status.replaceChildren(h('form', { class: 'toolbar', 'data-write': '', onsubmit: async (ev) => {
      ev.preventDefault();
      try { await api.createBranch(sum.rid, input.value, t.rid); go(here(name, 'branches')); } catch (e) { status.append(errorBox(e)); }
    } }, h('span', {}, `New branch at ${shortHash(t.rid)}:`), input, h('button', { type: 'submit' }, 'Create branch')));
    input.focus();
  };
  el.append(h('div', { class: 'toolbar' }, branchPicker(branches.data, branch, (b) => go(here(name, 'transactions', { branch: b })))),
    h('div', { class: 'scroll' }, h('table', { class: 'grid', 'data-testid': 'transactions' },
      h('caption', { class: 'sr-only' }, `Transactions of branch ${branch}, newest first`),
      h('thead', {}, h('tr', {}, ['Transaction', 'Type', 'Status', 'Created', 'Closed', ''].map((c) =>
        h('th', { scope: 'col' }, c || h('span', { class: 'sr-only' }, 'Actions'))))),
      h('tbody', {}, txns.data.map((t) => h('tr', { 'data-rid': t.rid },
        h('td', {}, h('code', { title: t.rid }, t.rid)), h('td', {}, t.transactionType),
        h('td', {}, h('span', { class: `status status-${t.status}` }, t.status)),
        h('td', {}, t.createdTime), h('td', {}, t.closedTime || '–'),
        h('td', {}, canWrite() && t.status === 'COMMITTED'
          ? h('button', { type: 'button', class: 'link', 'data-write': '', onclick: () => fromTxn(t) }, 'Branch from here') : '')))))),
    txns.nextPageToken ? h('p', { class: 'help' }, 'Older transactions not shown.') : '', status);
}

export async function branchesTab(el, name, sum) {
  const branches = await api.branches(sum.rid);
  const status = h('div', { 'aria-live': 'polite', 'data-testid': 'branch-status' });
  const del = async (b) => {
    try { await api.deleteBranch(sum.rid, b.name); go(here(name, 'branches'), true); } catch (e) { status.replaceChildren(errorBox(e)); }
  };
  el.append(h('div', { class: 'scroll' }, h('table', { class: 'grid', 'data-testid': 'branches' },
    h('caption', { class: 'sr-only' }, 'Branches'),
    h('thead', {}, h('tr', {}, ['Branch', 'Latest transaction', ''].map((c) =>
      h('th', { scope: 'col' }, c || h('span', { class: 'sr-only' }, 'Actions'))))),
    h('tbody', {}, branches.data.map((b) => h('tr', { 'data-branch': b.name },
      h('td', {}, h('a', { href: here(name, 'files', { branch: b.name }) }, b.name)),
      h('td', {}, b.transactionRid ? h('code', {}, b.transactionRid) : '–'),
      h('td', {}, canWrite() && b.name !== 'master'
        ? h('button', { type: 'button', class: 'link', 'data-write': '', 'aria-label': `Delete branch ${b.name}`,
          onclick: () => del(b) }, 'Delete') : '')))))), status);
  if (!canWrite()) return;
  const input = h('input', { id: 'new-branch', required: true });
  el.append(h('form', { class: 'toolbar', 'data-write': '', onsubmit: async (ev) => {
    ev.preventDefault();
    try { await api.createBranch(sum.rid, input.value); go(here(name, 'branches'), true); } catch (e) { status.replaceChildren(errorBox(e)); }
  } }, h('label', { for: 'new-branch' }, 'New branch (empty)'), input, h('button', { type: 'submit' }, 'Create branch')));
}
