// The package's entry points: both module systems load it, every entry point
// checks its arguments (documented TypeError / RangeError / ERR_KILN_STATE,
// never a crash or a hang), detectFormat, escape and the browser-style load.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { load } from '../index.mjs';

const require = createRequire(import.meta.url);
const here = fileURLToPath(new URL('..', import.meta.url));
const golden = fileURLToPath(new URL('../../golden/cases/', import.meta.url));
const f32 = new Uint8Array(readFileSync(`${golden}kiln-v2-f32.klnt`));
const kiln = await load();

test('load() returns one instance', async () => {
  assert.equal(await load(), kiln);
  assert.equal(kiln.version, '0.1.0');
  assert.equal(kiln.abiVersion, 2);
});

test('CommonJS: require() gives load(), and it validates', async () => {
  const cjs = require('../index.cjs');
  assert.equal(typeof cjs.load, 'function');
  assert.deepEqual((await cjs.load()).validate(f32), { ok: true });
  // A separate CommonJS program, as a user writes it.
  const out = execFileSync(process.execPath, [
    '-e',
    `require(${JSON.stringify(here + 'index.cjs')}).load().then(k => console.log(JSON.stringify(k.validate(new Uint8Array([1,2,3])))))`,
  ]);
  assert.equal(JSON.parse(out).error.rule, 'H1');
});

test('index.mjs and the ES module glue load as ES modules where there is no process or require', () => {
  const out = execFileSync(process.execPath, ['--experimental-vm-modules', '--no-warnings', `${here}tools/browser-context.mjs`]);
  const { validate, streamed } = JSON.parse(out);
  assert.equal(validate.error.rule, 'D1');
  assert.deepEqual(streamed, validate.error);
});

const notBytes = [undefined, null, 'KLNT', 42, [75, 76, 78, 84], new ArrayBuffer(4), new Uint16Array(2), new DataView(new ArrayBuffer(4)), {}];

test('validate and inspect: anything but a Uint8Array is a TypeError', () => {
  for (const x of notBytes) {
    assert.throws(() => kiln.validate(x), TypeError);
    assert.throws(() => kiln.inspect(x), TypeError);
    assert.throws(() => kiln.detectFormat(x), TypeError);
  }
  assert.deepEqual(kiln.validate(Buffer.from(f32)), { ok: true }, 'a Buffer is a Uint8Array');
});

test('options: wrong types are TypeErrors, bad values RangeErrors', () => {
  for (const bad of ['x', 1, true, [], () => {}]) assert.throws(() => kiln.validate(f32, bad), TypeError);
  assert.throws(() => kiln.validate(f32, { maxTensor: 1 }), TypeError, 'unknown key');
  assert.throws(() => kiln.validate(f32, { prefix: 1 }), TypeError);
  assert.throws(() => kiln.validate(f32, { maxTensors: '5' }), TypeError);
  assert.throws(() => kiln.validate(f32, { maxTensors: null }), TypeError);
  for (const v of [-1, 1.5, NaN, Infinity, 2 ** 53, -1n, 1n << 64n]) {
    assert.throws(() => kiln.validate(f32, { maxBlockBytes: v }), RangeError, String(v));
    assert.throws(() => kiln.createStreamValidator({ maxBlockBytes: v }), RangeError, String(v));
  }
  assert.deepEqual(kiln.validate(f32, null), { ok: true });
  assert.deepEqual(kiln.validate(f32, {}), { ok: true });
  assert.deepEqual(kiln.validate(f32, { maxBlockBytes: (1n << 64n) - 1n }), { ok: true });
});

test('stream validator: use after free, feed after finish, non-bytes chunks', () => {
  const v = kiln.createStreamValidator();
  for (const x of notBytes) assert.throws(() => v.feed(x), TypeError);
  assert.equal(v.header, null);
  assert.equal(v.status, 'need-more');
  assert.throws(() => v.result(), { code: 'ERR_KILN_STATE' });
  assert.equal(v.feed(f32), 'complete');
  assert.equal(v.header.blockLength, 200n);
  const r = v.finish();
  assert.equal(v.finish(), r, 'finish() again: the same verdict');
  assert.throws(() => v.feed(f32), { code: 'ERR_KILN_STATE' });
  v.free();
  v.free();
  assert.throws(() => v.feed(f32), { code: 'ERR_KILN_STATE' });
  assert.throws(() => v.finish(), { code: 'ERR_KILN_STATE' });
  assert.throws(() => v.consumed, { code: 'ERR_KILN_STATE' });
});

test('stream validator: an empty stream, a settled rejection, a trailing byte', () => {
  const empty = kiln.createStreamValidator();
  assert.equal(empty.finish().error.rule, 'H1');
  empty.free();
  const v = kiln.createStreamValidator();
  assert.equal(v.feed(new Uint8Array([0x4b, 0x4c, 0x4e, 0x55])), 'rejected');
  assert.equal(v.feed(f32), 'rejected', 'a settled verdict does not change');
  assert.equal(v.consumed, 4);
  v.free();
  const t = kiln.createStreamValidator();
  assert.equal(t.feed(f32), 'complete');
  assert.equal(t.feed(new Uint8Array(1)), 'rejected');
  assert.deepEqual([t.finish().error.rule, t.finish().error.offset], ['H8', 200]);
  t.free();
});

test('validateStream: bad sources are TypeErrors (a rejected promise), source errors propagate', async () => {
  for (const x of [undefined, null, 42, 'KLNT', f32, {}]) {
    await assert.rejects(kiln.validateStream(x), TypeError, String(x));
  }
  await assert.rejects(kiln.validateStream(['KLNT']), TypeError, 'a string chunk');
  await assert.rejects(kiln.validateStream([f32], { prefix: 'yes' }), TypeError);
  const failing = new ReadableStream({ pull(c) { c.error(new Error('disk gone')); } });
  await assert.rejects(kiln.validateStream(failing), /disk gone/);
});

test('a large chunk is fed through the 1 MiB staging buffer (memory bounded)', () => {
  const v = kiln.createStreamValidator();
  const big = new Uint8Array(5 * (1 << 20) + 3);
  big.set(f32);
  // Valid up to byte 200, then the first trailing byte decides H8.
  assert.equal(v.feed(big), 'rejected');
  assert.equal(v.consumed, 201);
  v.free();
});

test('detectFormat: magic numbers only', () => {
  const enc = (s) => Uint8Array.from(s, (c) => c.charCodeAt(0));
  assert.equal(kiln.detectFormat(f32), 'kiln');
  assert.equal(kiln.detectFormat(enc('GGUF\x03\0\0\0')), 'gguf');
  assert.equal(kiln.detectFormat(enc('\x93NUMPY\x01\0')), 'npy');
  const st = new Uint8Array(16);
  st[0] = 4;
  st.set(enc('{"a"'), 8);
  assert.equal(kiln.detectFormat(st), 'safetensors');
  st[0] = 1;
  assert.equal(kiln.detectFormat(st), 'unknown', 'a header length of 1 is not safetensors');
  const zip = (name) => {
    const b = new Uint8Array(30 + name.length);
    b.set(enc('PK\x03\x04'));
    b[26] = name.length;
    b.set(enc(name), 30);
    return b;
  };
  assert.equal(kiln.detectFormat(zip('w.npy')), 'npz');
  assert.equal(kiln.detectFormat(zip('archive/data.pkl')), 'unknown', 'any other zip');
  assert.equal(kiln.detectFormat(new Uint8Array(0)), 'unknown');
  assert.equal(kiln.detectFormat(enc('KLN')), 'unknown');
});

test('escape: as kiln validate prints untrusted text', () => {
  assert.equal(kiln.escape('model.weight'), 'model.weight');
  assert.equal(kiln.escape('a\nb'), 'a\\x0ab');
  assert.equal(kiln.escape('a\u202eb'), 'a\\u{202e}b');
  assert.equal(kiln.escape(new Uint8Array([0x61, 0xff])), 'a\\xff');
  // Noncharacters (the page drew them as blank boxes), from a string and
  // from bytes; their neighbours U+FDCF, U+FDF0, U+FFFD, U+10FFFD stay.
  assert.equal(kiln.escape('n\ufdd0\ufdef\ufffe\uffff\u{1fffe}\u{10ffff}'),
    'n\\u{fdd0}\\u{fdef}\\u{fffe}\\u{ffff}\\u{1fffe}\\u{10ffff}');
  assert.equal(kiln.escape(new Uint8Array([0x6e, 0xef, 0xbf, 0xbe, 0xf4, 0x8f, 0xbf, 0xbf])),
    'n\\u{fffe}\\u{10ffff}');
  assert.equal(kiln.escape('\ufdcf\ufdf0\ufffd\u{10fffd}'), '\ufdcf\ufdf0\ufffd\u{10fffd}');
  assert.throws(() => kiln.escape(7), TypeError);
  assert.match(kiln.ruleSummary('H1'), /KLNT/);
  assert.equal(kiln.ruleSummary('Z9'), null);
});

test('validateStream: a 10 GiB block (generated as it is read), then a trailing byte: H8 at 10737418496, exact past 2^32', async () => {
  const size = 10n << 30n;
  // One named u8 tensor covering the whole payload: header, one descriptor,
  // the 1-byte heap "w", padding to 256.
  const head = new Uint8Array(256);
  const dv = new DataView(head.buffer);
  head.set([0x4b, 0x4c, 0x4e, 0x54, 2, 3]);
  dv.setUint32(8, 1, true);
  dv.setUint32(12, 1, true);
  dv.setBigUint64(16, size, true);
  dv.setBigUint64(24, 129n, true);
  dv.setUint16(64, 2, true);
  head[66] = 1;
  dv.setUint16(68, 0, true);
  dv.setUint16(70, 1, true);
  dv.setUint16(72, 0xffff, true);
  dv.setUint16(82, 0xffff, true);
  dv.setUint32(88, 0xffffffff, true);
  dv.setUint32(92, 0xffffffff, true);
  dv.setBigUint64(104, size, true);
  dv.setBigUint64(112, size, true);
  head[192] = 0x77;
  const chunk = new Uint8Array(8 << 20);
  let pulled = 0;
  async function* source() {
    yield head;
    for (let sent = 0n; sent < size; sent += BigInt(chunk.length)) {
      pulled++;
      yield chunk;
    }
    yield new Uint8Array(1);
  }
  const r = await kiln.validateStream(source());
  assert.equal(pulled, 1280);
  assert.deepEqual([r.error.class, r.error.rule, r.error.offset], ['FRAME', 'H8', 10737418496]);
  assert.equal(r.header.blockLength, 10737418496n);
});

test('kiln-validate: the kiln validate line form, standard input as a stream, exit statuses 0, 1, 2', () => {
  const cli = `${here}bin/kiln-validate.mjs`;
  const run = (args, input) => spawnSync(process.execPath, [cli, ...args], { input, encoding: 'utf8' });
  const trailing = `${golden}h8-trailing-byte.klnt`;
  const ok = run([`${golden}kiln-v2-f32.klnt`]);
  assert.deepEqual([ok.status, ok.stdout], [0, `${golden}kiln-v2-f32.klnt: ok\n`]);
  const bad = run(['-', trailing], readFileSync(trailing));
  assert.equal(bad.status, 1);
  assert.equal(
    bad.stdout,
    '-: FRAME H8 at byte 200: trailing bytes: the stream goes on after the 200-byte block\n' +
      `${trailing}: FRAME H8 at byte 200: 1 trailing bytes after the 200-byte block\n`,
  );
  const missing = run(['/nonexistent/x\n.klnt']);
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /^kiln-validate: \/nonexistent\/x\\x0a\.klnt: /);
  assert.equal(run([]).status, 2);
  assert.equal(run(['--bogus', 'x']).status, 2);
});
