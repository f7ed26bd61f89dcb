// Loads the package in a real browser (headless Chromium): a page imports
// index.mjs with a plain <script type="module"> (no bundler), validates a
// golden case whole and as a Blob's stream, and a module Worker does the
// same. Prints what the page found and exits 0 when both agree with
// `kiln validate` (TYPE D1 at byte 64, tensor 0, for d1-dtype-0).
// Usage: node js/tools/browser-check.mjs [CHROMIUM]   (default: chromium)
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const browser = process.argv[2] ?? 'chromium';
const task = `
  const { load } = await import('/js/index.mjs');
  const kiln = await load();
  const bytes = new Uint8Array(await (await fetch('/golden/cases/d1-dtype-0.klnt')).arrayBuffer());
  const whole = kiln.validate(bytes).error;
  const streamed = (await kiln.validateStream(new Blob([bytes]).stream())).error;
  return { whole, streamed, format: kiln.detectFormat(bytes) };`;
const pages = {
  '/check.html': `<!doctype html><meta charset="utf-8"><pre id="out">pending</pre><script type="module">
    const run = async () => { ${task} };
    const worker = new Worker('/check-worker.mjs', { type: 'module' });
    const inWorker = new Promise((resolve) => { worker.onmessage = (e) => resolve(e.data); worker.onerror = (e) => resolve({ error: String(e.message) }); });
    let result;
    try { result = { page: await run(), worker: await inWorker }; } catch (e) { result = { error: String(e) }; }
    await fetch('/result', { method: 'POST', body: JSON.stringify(result) });
  </script>`,
  '/check-worker.mjs': `const run = async () => { ${task} }; run().then((r) => postMessage(r), (e) => postMessage({ error: String(e) }));`,
};
const types = { '.html': 'text/html', '.mjs': 'text/javascript', '.js': 'text/javascript', '.klnt': 'application/octet-stream' };
let chromium = null;
function finish(text, why) {
  chromium?.kill();
  server.close();
  console.log(text || `no result (${why})`);
  let ok = false;
  try {
    const r = JSON.parse(text);
    const want = (e) => e && e.class === 'TYPE' && e.rule === 'D1' && e.offset === 64 && e.tensor === 0;
    ok = [r.page, r.worker].every((x) => x && want(x.whole) && want(x.streamed) && x.format === 'kiln');
  } catch {}
  console.log(ok ? 'browser: the page and a module Worker give TYPE D1 at byte 64 (tensor 0)' : 'browser: FAILED');
  process.exit(ok ? 0 : 1);
}
const server = createServer(async (req, res) => {
  const path = new URL(req.url, 'http://x').pathname;
  if (path === '/result' && req.method === 'POST') {
    let body = '';
    for await (const c of req) body += c;
    res.end();
    finish(body);
    return;
  }
  const type = types[path.slice(path.lastIndexOf('.'))] ?? 'application/octet-stream';
  try {
    if (!(path in pages) && !/^\/(js|golden)\/[\w./-]+$/.test(path)) throw new Error('not served');
    if (path.includes('..')) throw new Error('not served');
    const body = pages[path] ?? (await readFile(root + path.slice(1)));
    res.writeHead(200, { 'content-type': type });
    res.end(body);
  } catch {
    res.writeHead(404);
    res.end();
  }
});
server.listen(0, '127.0.0.1', () => {
  const url = `http://127.0.0.1:${server.address().port}/check.html`;
  chromium = spawn(browser, ['--headless', '--no-sandbox', '--disable-gpu', '--remote-debugging-port=0', url], { stdio: 'ignore' });
  chromium.on('error', (e) => finish('', e.message));
  setTimeout(() => finish('', 'no answer from the page in 60 s'), 60000).unref();
});
