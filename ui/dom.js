// dom.js — building elements without innerHTML (so no markup from data is
// ever parsed) and small formatting helpers shared by the pages.
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

export const OPS = ['+A', '-R', '-C', '+C'];
export const OP_NAMES = ['append', 'retract', 'correct (old)', 'correct (new)'];

export function opCell(v) {
  const i = Number(v);
  return h('span', { class: `op op${i}`, title: OP_NAMES[i] || '' }, OPS[i] ?? String(v));
}

export function fmtBytes(n) {
  if (n === null || n === undefined) return '–';
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0, x = Number(n);
  while (x >= 1024 && i < u.length - 1) { x /= 1024; i++; }
  return i === 0 ? `${x} B` : `${x.toFixed(1)} ${u[i]}`;
}

export const fmtInt = (n) => (n === null || n === undefined ? '–' : Number(n).toLocaleString('en-US'));
export const shortHash = (s) => (s ? s.slice(0, 5) + '…' + s.slice(-8) : '–');

export function cellText(v) {
  if (v === null || v === undefined) return '';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

export function errorBox(e) {
  return h('p', { class: 'error', role: 'alert' }, e.message || String(e));
}
