// Draws a block map (what loadBlockMap of the package's `kiln/map`, js/map.mjs,
// describes: the map `kiln inspect --map` draws) as SVG, element by element with
// createElementNS; every text goes in through textContent.
const SVG = 'http://www.w3.org/2000/svg';
const WIDTH = 1000;
const BAR_TOP = 10;
const BAR_HEIGHT = 50;

export const FILL = {
  header: '#4e79a7',
  descriptor: '#76b7b2',
  'name-heap': '#59a14f',
  padding: '#bab0ac',
  payload: '#f28e2b',
  gap: '#edc948',
  trailing: '#b07aa1',
  missing: '#ffffff',
  unknown: '#9c755f',
};

function el(name, attrs) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

export function rangeText(r) {
  return `[${r.begin}, ${r.end})`;
}

// Region widths: to scale when the smallest region gets a pixel, else each
// region as wide as log2 of its size (scaled sections), as the command.
function layout(regions) {
  let total = 0n;
  let smallest = null;
  for (const r of regions) {
    if (r.end > total) total = r.end;
    const n = r.end - r.begin;
    if (smallest === null || n < smallest) smallest = n;
  }
  const toScale = regions.length > 0 && total > 0n && (Number(smallest) / Number(total)) * WIDTH >= 1;
  const raw = regions.map((r) => {
    const n = Number(r.end - r.begin);
    return toScale ? n : Math.log2(1 + n);
  });
  const sum = raw.reduce((a, b) => a + b, 0);
  const width = raw.map((w) => Math.max(1, sum > 0 ? (w / sum) * WIDTH : 1));
  const x = [];
  let at = 0;
  for (const w of width) {
    x.push(at);
    at += w;
  }
  return { toScale, width, x, end: at };
}

// Returns {svg, caption}: the drawing and a line telling its scale; hover
// text goes to `hoverLine` (an element whose textContent is set).
export function drawMap(map, hoverLine) {
  const { toScale, width, x, end } = layout(map.regions);
  const height = BAR_TOP + BAR_HEIGHT + (map.mark ? 30 : 10);
  const svg = el('svg', { width: Math.max(end, WIDTH), height, viewBox: `0 0 ${Math.max(end, WIDTH)} ${height}`, role: 'img' });
  const title = el('title', {});
  title.textContent = 'block map';
  svg.append(title);
  map.regions.forEach((r, i) => {
    const rect = el('rect', {
      class: `region ${r.kind}`,
      'data-kind': r.kind,
      'data-begin': r.begin,
      'data-end': r.end,
      x: x[i], y: BAR_TOP, width: width[i], height: BAR_HEIGHT,
      fill: FILL[r.kind] ?? '#999999', stroke: '#333333', 'stroke-width': 0.5,
    });
    if (r.kind === 'missing') rect.setAttribute('stroke-dasharray', '4 2');
    const t = el('title', {});
    const text = `${r.label}: bytes ${rangeText(r)}`;
    t.textContent = text;
    rect.append(t);
    rect.addEventListener('mouseenter', () => { hoverLine.textContent = text; });
    rect.addEventListener('focus', () => { hoverLine.textContent = text; });
    rect.setAttribute('tabindex', '0');
    svg.append(rect);
  });
  if (map.mark) {
    const m = map.mark;
    let mx = end;
    map.regions.forEach((r, i) => {
      if (r.begin <= m.offset && m.offset < r.end) {
        mx = x[i] + (Number(m.offset - r.begin) / Number(r.end - r.begin)) * width[i];
      }
    });
    const g = el('g', { id: 'mark', class: 'mark', 'data-offset': m.offset });
    const t = el('title', {});
    t.textContent = `deciding byte ${m.offset}: ${m.field}`;
    g.append(t);
    g.append(el('line', { x1: mx, y1: BAR_TOP - 6, x2: mx, y2: BAR_TOP + BAR_HEIGHT + 6, stroke: '#d62728', 'stroke-width': 3 }));
    g.append(el('polygon', {
      points: `${mx - 6},${BAR_TOP + BAR_HEIGHT + 18} ${mx + 6},${BAR_TOP + BAR_HEIGHT + 18} ${mx},${BAR_TOP + BAR_HEIGHT + 6}`,
      fill: '#d62728',
    }));
    svg.append(g);
  }
  const caption = toScale ? 'drawn to scale' : 'scaled sections: each region as wide as log2 of its size';
  return { svg, caption };
}
