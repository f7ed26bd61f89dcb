// The page: files in, one card per file, validation in a Web Worker. Every
// text reaches the page through textContent or a text node, never as markup;
// the one exception is the block map, the SVG the library draws (the one
// drawing of the map, what `kiln inspect --map` writes), parsed as XML, never
// as HTML, with every text in it escaped by the library.
import { BYTES_PER_KIB } from './policy.js';

const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
const cards = new Map();
let nextId = 1;

const FOREIGN = {
  safetensors: 'this is a safetensors file: convert it with `kiln convert FILE OUT.klnt`',
  gguf: 'this is a GGUF file: convert it with `kiln convert FILE OUT.klnt`',
  npy: 'this is a NumPy .npy file: pack it into a block with `kiln pack OUT.klnt NAME=FILE.npy`',
  npz: 'this is a NumPy .npz archive: extract its .npy files and pack them with `kiln pack`',
};

function h(tag, props = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === 'text') e.textContent = v;
    else if (k === 'class') e.className = v;
    else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c);
  return e;
}

function addFiles(files) {
  const results = document.getElementById('results');
  for (const file of files) {
    const id = nextId++;
    const progress = h('progress', { max: '1', value: '0' });
    const state = h('p', { class: 'status', text: `${file.size} bytes: waiting` });
    const title = h('h2', { text: 'file' });
    const card = h('article', { class: 'card', 'data-state': 'checking' }, title, progress, state);
    results.append(card);
    cards.set(id, { card, title, progress, state, size: file.size });
    worker.postMessage({ id, file, stream: streamBox.checked });
  }
  document.getElementById('status').textContent = `${cards.size} file(s) given`;
}

// A byte count in the largest binary unit it reaches ("10.0 GiB").
function sizeText(n) {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let k = 0;
  let v = n;
  while (v >= BYTES_PER_KIB && k < units.length - 1) {
    v /= BYTES_PER_KIB;
    k++;
  }
  return k === 0 ? `${n} bytes` : `${v.toFixed(1)} ${units[k]}`;
}

// What was read: "read N KiB of M GiB" (random access) or the whole file.
function readText(msg, size) {
  const time = `in ${msg.seconds.toFixed(2)} s`;
  if (msg.mode === 'stream') return `${size} bytes checked (the whole file, streamed) ${time}`;
  return `read ${(msg.bytesRead / BYTES_PER_KIB).toFixed(1)} KiB of ${sizeText(size)} (${msg.reads} reads) ${time}`;
}

// `kiln validate`'s line for a verdict (Error::ToString).
function verdictLine(name, error) {
  if (error === null) return `${name}: ok`;
  const tensor = error.tensor === null ? '' : ` (tensor ${error.tensor})`;
  return `${name}: ${error.class} ${error.rule} at byte ${error.offset}${tensor}: ${error.message}`;
}

function quantText(q) {
  if (q === null) return '-';
  let out = q.scheme === 'per-axis' ? `axis ${q.axis}` : `axis ${q.axis} group ${q.groupSize}`;
  if (q.scaleIndex !== null) out += ` scale #${q.scaleIndex}`;
  if (q.outerIndex !== null) out += ` outer #${q.outerIndex}`;
  return out;
}

const COLUMNS = [
  ['index', (t) => t.index, (t) => t.index],
  ['name', (t) => t.name || '-', (t) => t.name],
  ['dtype', (t) => t.dtype, (t) => t.dtype],
  ['shape', (t) => `[${t.shape.join(', ')}]`, (t) => t.shape.reduce((a, b) => a * b, 1n)],
  ['offset', (t) => String(t.offset), (t) => t.offset],
  ['length', (t) => String(t.length), (t) => t.length],
  ['quant', (t) => quantText(t.quantisation), (t) => quantText(t.quantisation)],
  ['layout', (t) => t.layout ?? '-', (t) => t.layout ?? ''],
];

function compare(a, b) {
  return a < b ? -1 : a > b ? 1 : 0;
}

// The table shows at most ROWS_STEP rows at first and ROWS_STEP more per
// "show more": a block of 100,000 tensors never becomes 100,000 DOM rows at
// once. Sorting sorts the tensors (each column's keys computed once), then
// draws the rows shown.
const ROWS_STEP = 500;

function tensorTable(tensors) {
  const table = h('table', { class: 'tensors' });
  const headRow = h('tr');
  const body = h('tbody');
  const count = h('p', { class: 'status table-count' });
  const more = h('button', { type: 'button', class: 'show-more', text: `show ${ROWS_STEP} more` });
  const keys = new Map();
  let order = tensors;
  let shown = Math.min(ROWS_STEP, tensors.length);
  let sortColumn = 0;
  let ascending = true;
  const row = (t) => h('tr', {}, ...COLUMNS.map(([name, show]) =>
    h('td', { class: name === 'name' ? 'name' : name === 'dtype' ? '' : 'num', text: show(t) })));
  const showCount = () => {
    count.textContent = `${shown} of ${tensors.length} tensors shown`;
    more.hidden = shown >= tensors.length;
  };
  const fill = () => {
    if (!keys.has(sortColumn)) keys.set(sortColumn, tensors.map(COLUMNS[sortColumn][2]));
    const key = keys.get(sortColumn);
    const sign = ascending ? 1 : -1;
    const indices = tensors.map((_, i) => i);
    indices.sort((a, b) => sign * compare(key[a], key[b]) || tensors[a].index - tensors[b].index);
    order = indices.map((i) => tensors[i]);
    body.replaceChildren(...order.slice(0, shown).map(row));
    showCount();
    [...headRow.children].forEach((th, i) => {
      if (i === sortColumn) th.setAttribute('aria-sort', ascending ? 'ascending' : 'descending');
      else th.removeAttribute('aria-sort');
    });
  };
  more.addEventListener('click', () => {
    const next = Math.min(shown + ROWS_STEP, tensors.length);
    body.append(...order.slice(shown, next).map(row));
    shown = next;
    showCount();
  });
  COLUMNS.forEach(([name], i) => {
    const th = h('th', { text: name, scope: 'col', tabindex: '0' });
    const sort = () => {
      ascending = sortColumn === i ? !ascending : true;
      sortColumn = i;
      fill();
    };
    th.addEventListener('click', sort);
    th.addEventListener('keydown', (e) => { if (e.key === 'Enter') sort(); });
    headRow.append(th);
  });
  table.append(h('thead', {}, headRow), body);
  fill();
  return h('div', { class: 'table-section' }, count, table, more);
}

function headerFields(header) {
  const dl = h('dl', { class: 'fields' });
  const rows = [
    ['flags', `0x${header.flags.toString(16).padStart(2, '0')}`],
    ['tensor_count', header.tensorCount],
    ['name_bytes', header.nameBytes],
    ['directory_bytes', header.directoryBytes],
    ['payload_base', header.payloadBase],
    ['payload_bytes', header.payloadBytes],
    ['block_length', header.blockLength],
  ];
  for (const [k, v] of rows) dl.append(h('dt', { text: k }), h('dd', { text: String(v) }));
  return dl;
}

// The library's SVG in the page: parsed as an XML document (a parse error
// shows as text, not as a drawing), each region naming itself on hover.
function mapSection(map) {
  const hover = h('p', { class: 'hover', text: 'hover a region to name it' });
  const doc = new DOMParser().parseFromString(map.svg, 'image/svg+xml');
  const root = doc.documentElement;
  const drawing = root.localName === 'svg' && root.namespaceURI === 'http://www.w3.org/2000/svg'
    ? document.importNode(root, true)
    : h('p', { class: 'status', text: 'the block map could not be shown' });
  for (const rect of drawing.querySelectorAll('rect.region')) {
    const show = () => { hover.textContent = rect.querySelector('title')?.textContent ?? ''; };
    rect.addEventListener('mouseenter', show);
    rect.addEventListener('focus', show);
    rect.setAttribute('tabindex', '0');
  }
  return h('section', { class: 'map-section' }, h('h3', { text: 'Block map' }), h('div', { class: 'map' }, drawing), hover);
}

worker.onmessage = (event) => {
  const msg = event.data;
  const c = cards.get(msg.id);
  if (!c) return;
  if (msg.type === 'start') {
    c.name = msg.name;
    c.title.textContent = msg.name;
  } else if (msg.type === 'progress') {
    c.progress.value = msg.total === 0 ? 1 : msg.done / msg.total;
    c.state.textContent = `${msg.done} of ${msg.total} bytes checked`;
  } else if (msg.type === 'foreign') {
    c.card.dataset.state = 'foreign';
    c.card.dataset.format = msg.format;
    c.progress.remove();
    c.state.remove();
    c.card.append(h('p', { class: 'verdict foreign', text: FOREIGN[msg.format] ?? `this is a ${msg.format} file` }));
  } else if (msg.type === 'failed') {
    c.card.dataset.state = 'failed';
    c.state.textContent = `could not be checked: ${msg.message}`;
  } else if (msg.type === 'result') {
    c.card.dataset.state = msg.ok ? 'ok' : 'rejected';
    c.card.dataset.seconds = String(msg.seconds);
    c.card.dataset.mode = msg.mode;
    c.card.dataset.bytesRead = String(msg.bytesRead);
    c.progress.value = 1;
    c.state.textContent = readText(msg, c.size);
    c.card.append(h('p', { class: `verdict ${msg.ok ? 'ok' : 'bad'}`, text: verdictLine(c.name, msg.error) }));
    if (!msg.ok) {
      c.card.dataset.rule = msg.error.rule;
      c.card.dataset.offset = String(msg.error.offset);
      const link = h('a', { href: `lib/rules.html#${msg.error.rule}`, class: 'rule-link', text: `rule ${msg.error.rule}` });
      c.card.append(h('p', {}, link, document.createTextNode(`: ${msg.summary ?? ''}`)));
    }
    if (msg.header) c.card.append(headerFields(msg.header));
    if (msg.ok && msg.tensors.length > 0) c.card.append(tensorTable(msg.tensors));
    c.card.append(mapSection(msg.map));
  }
};
worker.onerror = (e) => {
  document.getElementById('status').textContent = `the checker stopped: ${e.message ?? 'unknown error'}`;
};

// Read every byte as a stream instead of by random access (off by default).
const streamBox = document.getElementById('stream');
const input = document.getElementById('files');
input.addEventListener('change', () => {
  addFiles([...input.files]);
  input.value = '';
});
const drop = document.getElementById('drop');
drop.addEventListener('dragover', (e) => {
  e.preventDefault();
  drop.classList.add('over');
});
drop.addEventListener('dragleave', () => drop.classList.remove('over'));
drop.addEventListener('drop', (e) => {
  e.preventDefault();
  drop.classList.remove('over');
  addFiles([...e.dataTransfer.files]);
});
document.body.dataset.ready = 'true';
