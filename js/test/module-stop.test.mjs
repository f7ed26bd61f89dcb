// A module that stops (a trap inside kiln_validate, simulated by
// js/fixtures/trapping-module.mjs) is reported as a defect, ERR_KILN_INTERNAL,
// not as running out of memory; the instance is done and load() gives a
// fresh one. Runs in a child process with loader hooks that give index.mjs
// the trapping module.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const js = fileURLToPath(new URL('..', import.meta.url));
const golden = fileURLToPath(new URL('../../golden/cases/kiln-v2-f32.klnt', import.meta.url));

const program = `
import { register } from 'node:module';
import { readFileSync } from 'node:fs';
register('./fixtures/trapping-hooks.mjs', new URL('file://${js}/'));
const { load } = await import('./index.mjs');
const k = await load();
const out = {};
try { k.validate(new Uint8Array([0xff, 1, 2, 3])); } catch (e) { out.code = e.code; out.message = e.message; }
try { k.validate(new Uint8Array(readFileSync(${JSON.stringify(golden)}))); } catch (e) { out.after = e.code; }
const k2 = await load();
out.fresh = k2 !== k;
out.freshOk = k2.validate(new Uint8Array(readFileSync(${JSON.stringify(golden)}))).ok;
console.log(JSON.stringify(out));
`;

test('module-stop: a trap is ERR_KILN_INTERNAL, the instance done, load() gives a fresh one', () => {
  const out = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', program], { cwd: js, encoding: 'utf8' }));
  assert.equal(out.code, 'ERR_KILN_INTERNAL', out.message);
  assert.match(out.message, /stopped \(memory access out of bounds\)/);
  assert.doesNotMatch(out.message, /out of memory/);
  assert.equal(out.after, 'ERR_KILN_STATE');
  assert.equal(out.fresh, true);
  assert.equal(out.freshOk, true);
});
