// api.js — the UI's only way to the server: the public JSON routes of
// docs/server.md, each call with the signed-in token (sessionStorage).
// A 401 anywhere forgets the token and sends the user to sign-in.
const KEY = 'silt.token';

export const token = {
  get: () => sessionStorage.getItem(KEY),
  set: (t) => sessionStorage.setItem(KEY, t),
  clear: () => sessionStorage.removeItem(KEY),
};

export class ApiError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

let onUnauthorized = () => {};
export function setUnauthorizedHandler(fn) { onUnauthorized = fn; }

async function call(path, { method = 'GET', body, raw = false, headers = {} } = {}) {
  const h = { Authorization: `Bearer ${token.get() || ''}`, ...headers };
  if (body !== undefined && !(body instanceof Blob)) h['Content-Type'] = 'application/json';
  const resp = await fetch(path, {
    method, headers: h,
    body: body === undefined ? undefined : body instanceof Blob ? body : JSON.stringify(body),
  });
  if (resp.status === 401) {
    token.clear();
    onUnauthorized();
    throw new ApiError(401, 'signed out: the token was refused');
  }
  if (!resp.ok) {
    let msg = `${resp.status} ${resp.statusText}`;
    try { const j = await resp.json(); if (j.message) msg = j.message; } catch { /* not JSON */ }
    throw new ApiError(resp.status, msg);
  }
  if (raw) return resp;
  if (resp.status === 204) return null;
  const ct = resp.headers.get('Content-Type') || '';
  return ct.startsWith('application/json') ? resp.json() : resp.text();
}

const enc = encodeURIComponent;

export const api = {
  whoami: () => call('/odf/whoami'),
  datasets: (pageToken) => call('/odf/datasets' + (pageToken ? `?pageToken=${enc(pageToken)}` : '')),
  summary: (ds) => call(`/odf/${enc(ds)}/summary`),
  metadata: (ds, include) => call(`/odf/${enc(ds)}/metadata?include=${include}`),
  history: (ds, pageSize, pageToken) =>
    call(`/odf/${enc(ds)}/history?pageSize=${pageSize}` + (pageToken ? `&pageToken=${enc(pageToken)}` : '')),
  blockYaml: (ds, hash) => call(`/odf/${enc(ds)}/history/${enc(hash)}`),
  query: (req) => call('/odf/query', { method: 'POST', body: { dataFormat: 'JsonAoA', ...req } }),
  files: (rid, branch, at) => call(`/api/v2/datasets/${enc(rid)}/files?pageSize=1000&branchName=${enc(branch)}`
    + (at ? `&endTransactionRid=${enc(at)}` : '')),
  fileContent: (rid, path, branch, at) => call(`/api/v2/datasets/${enc(rid)}/files/${enc(path)}/content?branchName=${enc(branch)}`
    + (at ? `&endTransactionRid=${enc(at)}` : ''), { raw: true }),
  branches: (rid) => call(`/api/v2/datasets/${enc(rid)}/branches?pageSize=1000`),
  branch: (rid, b) => call(`/api/v2/datasets/${enc(rid)}/branches/${enc(b)}`),
  branchTxns: (rid, b) => call(`/api/v2/datasets/${enc(rid)}/branches/${enc(b)}/transactions?pageSize=50`),
  txn: (rid, t) => call(`/api/v2/datasets/${enc(rid)}/transactions/${enc(t)}`),
  startTxn: (rid, b, type) => call(`/api/v2/datasets/${enc(rid)}/transactions?branchName=${enc(b)}`,
    { method: 'POST', body: { transactionType: type } }),
  commitTxn: (rid, t) => call(`/api/v2/datasets/${enc(rid)}/transactions/${enc(t)}/commit`, { method: 'POST' }),
  abortTxn: (rid, t) => call(`/api/v2/datasets/${enc(rid)}/transactions/${enc(t)}/abort`, { method: 'POST' }),
  createBranch: (rid, name, txn) => call(`/api/v2/datasets/${enc(rid)}/branches`,
    { method: 'POST', body: txn ? { name, transactionRid: txn } : { name } }),
  deleteBranch: (rid, b) => call(`/api/v2/datasets/${enc(rid)}/branches/${enc(b)}`, { method: 'DELETE' }),
};
