// app.js — the UI's entry: a small router over /ui/ paths (history API;
// the server answers index.html for every /ui/ path), the header, and the
// sign-in page. Routes:
//   /ui/signin                       sign-in
//   /ui/ , /ui/datasets              the datasets list
//   /ui/datasets/NAME[/TAB]          a dataset (TAB: overview, data, schema, sql, history, files)
import { api, token, setUnauthorizedHandler } from './api.js';
import { h, errorBox } from './dom.js';
import { datasetsPage } from './datasets.js';
import { datasetPage } from './dataset.js';

export const session = { who: null };

export function go(path, replace = false) {
  if (replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  render();
}

// Links inside the UI route without a reload.
document.addEventListener('click', (ev) => {
  const a = ev.target.closest('a[href^="/ui/"]');
  if (!a || ev.ctrlKey || ev.metaKey || ev.shiftKey || a.hasAttribute('download')) return;
  ev.preventDefault();
  go(a.getAttribute('href'));
});
window.addEventListener('popstate', () => render());
setUnauthorizedHandler(() => {
  session.who = null;
  if (location.pathname !== '/ui/signin') go('/ui/signin?expired=1', true);
});

function nav() {
  const n = document.getElementById('nav');
  n.replaceChildren();
  if (!session.who) return;
  n.append(
    h('a', { href: '/ui/datasets' }, 'Datasets'),
    h('span', { class: 'who', 'data-testid': 'who' }, `${session.who.name} (${session.who.scope})`),
    h('button', { type: 'button', class: 'link', onclick: () => { token.clear(); session.who = null; go('/ui/signin'); } },
      'Sign out'));
}

function signinPage(main, params) {
  const input = h('input', { id: 'token', type: 'password', autocomplete: 'off', required: true,
    'aria-describedby': 'token-help', spellcheck: 'false' });
  const status = h('div', { id: 'signin-status', 'aria-live': 'polite' });
  if (params.get('expired')) status.append(h('p', { class: 'error', role: 'alert' }, 'The token was refused: sign in again.'));
  const form = h('form', { class: 'card signin', onsubmit: async (ev) => {
    ev.preventDefault();
    token.set(input.value.trim());
    status.replaceChildren(h('p', {}, 'Checking…'));
    try {
      session.who = await api.whoami();
      const list = await api.datasets();
      nav();
      status.replaceChildren(
        h('p', { 'data-testid': 'signed-in' }, `Signed in as ${session.who.name}, scope ${session.who.scope}` +
          (session.who.datasets.length ? `, datasets ${session.who.datasets.join(', ')}` : ', all datasets') + '.'),
        h('p', {}, `${list.data.length}${list.nextPageToken ? '+' : ''} visible datasets: `,
          list.data.map((d, i) => [i ? ', ' : '', h('a', { href: `/ui/datasets/${encodeURIComponent(d.name)}` }, d.name)])),
        h('p', {}, h('a', { href: '/ui/datasets', class: 'button' }, 'Open the datasets')));
    } catch (e) {
      status.replaceChildren(errorBox(e.status === 401 ? new Error('The token was refused.') : e));
    }
  } },
  h('h1', {}, 'Sign in'),
  h('label', { for: 'token' }, 'Token'),
  input,
  h('p', { id: 'token-help', class: 'help' },
    'A token from `silt token create` (or the server\'s SILT_ADMIN_TOKEN). It is kept in this tab only (sessionStorage).'),
  h('button', { type: 'submit' }, 'Sign in'),
  status);
  main.append(form);
  input.focus();
}

export async function render() {
  const main = document.getElementById('main');
  main.replaceChildren();
  const path = location.pathname.replace(/\/+$/, '');
  const params = new URLSearchParams(location.search);
  const parts = path.split('/').slice(2).map(decodeURIComponent); // after /ui
  if (parts[0] === 'signin' || !token.get()) {
    if (parts[0] !== 'signin') return go('/ui/signin', true);
    document.title = 'Sign in · silt';
    nav();
    return signinPage(main, params);
  }
  try {
    if (!session.who) session.who = await api.whoami();
  } catch (e) {
    if (e.status !== 401) main.append(errorBox(e));
    return;
  }
  nav();
  if (parts.length === 0 || (parts[0] === 'datasets' && parts.length === 1)) return datasetsPage(main, params);
  if (parts[0] === 'datasets') return datasetPage(main, parts[1], parts[2] || 'overview', params);
  main.append(h('h1', {}, 'Not found'), h('p', {}, h('a', { href: '/ui/datasets' }, 'Back to the datasets')));
}

render();
