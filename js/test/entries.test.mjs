// The package's public entries (package.json `exports`): `kiln` and
// `kiln/map`, by name, from ES modules and CommonJS; and the tarball `npm
// pack` would publish holds every file those entries import.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

const js = fileURLToPath(new URL('..', import.meta.url));
const f32 = fileURLToPath(new URL('../../golden/cases/kiln-v2-f32.klnt', import.meta.url));
const d1 = fileURLToPath(new URL('../../golden/cases/d1-dtype-0.klnt', import.meta.url));

// Runs a program in js/ (so `kiln` names this package through its exports).
function run(program, type) {
  const args = type === 'module' ? ['--input-type=module', '-e', program] : ['-e', program];
  return JSON.parse(execFileSync(process.execPath, args, { cwd: js, encoding: 'utf8' }));
}

const use = `
  const bytes = new Uint8Array(readFileSync(${JSON.stringify(d1)}));
  const kiln = await load();
  const verdict = kiln.validate(bytes).error;
  const map = (await loadBlockMap()).describe(bytes, bytes.length, verdict);
  console.log(JSON.stringify({ rule: verdict.rule, mark: String(map.mark.offset), regions: map.regions.length,
    same: kiln === await (await import('kiln')).load(),
    ok: kiln.validate(new Uint8Array(readFileSync(${JSON.stringify(f32)}))).ok }));`;

test('entries: kiln and kiln/map by name from an ES module, one instance', () => {
  const out = run(`import { load } from 'kiln'; import { loadBlockMap } from 'kiln/map'; import { readFileSync } from 'node:fs'; ${use}`, 'module');
  assert.deepEqual(out, { rule: 'D1', mark: '64', regions: out.regions, same: true, ok: true });
  assert.ok(out.regions > 0);
});

test('entries: kiln and kiln/map by name from CommonJS', () => {
  const out = run(`const { load } = require('kiln'); const { loadBlockMap } = require('kiln/map'); const { readFileSync } = require('node:fs');
    (async () => { ${use} })();`, 'commonjs');
  assert.deepEqual(out, { rule: 'D1', mark: '64', regions: out.regions, same: true, ok: true });
});

test('entries: no other subpath is exported (lib/ is internal)', () => {
  assert.throws(() => run(`import('kiln/lib/guard.mjs').then(() => console.log('{}'))`, 'module'), /ERR_PACKAGE_PATH_NOT_EXPORTED/);
});

test('entries: the tarball holds every file the entries import', () => {
  const packed = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: js, encoding: 'utf8' }));
  const files = new Set(packed[0].files.map((f) => f.path));
  const pkg = JSON.parse(readFileSync(join(js, 'package.json'), 'utf8'));
  const entries = Object.values(pkg.exports).flatMap((e) => (typeof e === 'string' ? [e] : Object.values(e)));
  entries.push(...Object.values(pkg.bin));
  const seen = new Set();
  const walk = (file) => {
    const path = normalize(file).replace(/^\.\//, '');
    if (seen.has(path)) return;
    seen.add(path);
    assert.ok(files.has(path), `${path} is not in the tarball (package.json files)`);
    if (!/\.(mjs|cjs)$/.test(path)) return;
    const text = readFileSync(join(js, path), 'utf8');
    for (const m of text.matchAll(/(?:from\s+|import\(\s*)'(\.{1,2}\/[^']+)'/g)) walk(join(dirname(path), m[1]));
  };
  entries.forEach(walk);
  for (const must of ['index.mjs', 'map.mjs', 'lib/abi.mjs', 'lib/guard.mjs', 'dist/kiln-wasm.mjs', 'index.d.ts', 'map.d.ts']) {
    assert.ok(seen.has(must), `${must} is reached from the entries`);
  }
});
