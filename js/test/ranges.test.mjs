// Random-access validation (validateRanges, validateBlob): every golden
// case, the blocks whose length disagrees with their header, and 10,000
// mutants of the golden cases give validate()'s verdict on the whole bytes
// (ok, class, rule, offset, tensor, message), under several range options;
// a reader that throws, returns the wrong length or not bytes is an I/O
// error (code ERR_KILN_IO), never a verdict.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { load } from '../index.mjs';
import { loadBlockMap } from '../map.mjs';
import { rng, mutate } from './mutants.mjs';

const golden = fileURLToPath(new URL('../../golden/', import.meta.url));
const names = readFileSync(`${golden}manifest.tsv`, 'ascii')
  .split('\n')
  .filter((l) => l !== '' && !l.startsWith('#') && !l.startsWith('case\t'))
  .map((l) => l.split('\t')[0]);
const cases = names.map((name) => ({ name, bytes: new Uint8Array(readFileSync(`${golden}cases/${name}.klnt`)) }));
const kiln = await load();
const map = await loadBlockMap();

const OPTION_SETS = [undefined, { mergeGap: 0 }, { mergeGap: 0, maxRange: 1 }, { mergeGap: 7, maxRange: 16 }, { mergeGap: 64n, maxRange: 64n }];

// An in-memory reader that records what it was asked.
function reader(bytes) {
  const asked = [];
  const read = async (offset, length) => {
    asked.push([offset, length]);
    return bytes.slice(offset, offset + length);
  };
  return { read, asked };
}

async function same(bytes, name, options) {
  const want = kiln.validate(bytes);
  const { read, asked } = reader(bytes);
  const got = await kiln.validateRanges(bytes.length, read, options);
  const { bytesRead, reads, ...verdict } = got;
  assert.deepEqual(verdict, want, name);
  assert.equal(reads, asked.length, name);
  let end = 0;
  let sum = 0;
  for (const [offset, length] of asked) {
    assert.ok(length > 0 && offset >= end && offset + length <= bytes.length, `${name}: range ${offset}+${length}`);
    end = offset + length;
    sum += length;
  }
  assert.equal(bytesRead, sum, name);
  assert.ok(bytesRead <= bytes.length, name);
  return got;
}

test('every golden case: validateRanges gives validate()\'s verdict, under every option set', async () => {
  assert.equal(cases.length, 165);
  for (const c of cases) for (const o of OPTION_SETS) await same(c.bytes, c.name, o);
});

test('every golden case: validateBlob gives validate()\'s verdict', async () => {
  for (const c of cases) {
    const got = await kiln.validateBlob(new Blob([c.bytes]));
    const { bytesRead, reads, ...verdict } = got;
    assert.deepEqual(verdict, kiln.validate(c.bytes), c.name);
    assert.ok(bytesRead <= c.bytes.length && reads >= (c.bytes.length > 0 ? 1 : 0), c.name);
  }
});

test('map: true, every golden case and the length cases: inspectBlob\'s map is the whole file\'s map of its verdict', async () => {
  const f32 = cases.find((c) => c.name === 'kiln-v2-f32').bytes;
  const plusOne = new Uint8Array(f32.length + 1);
  plusOne.set(f32);
  const dtype = cases.find((c) => c.name === 'd1-dtype-25').bytes;
  const inputs = [...cases, { name: 'valid block + 1 byte', bytes: plusOne },
    { name: 'bad dtype, last 2 bytes cut', bytes: dtype.slice(0, dtype.length - 2) }];
  let marked = 0;
  for (const c of inputs) {
    const v = kiln.validate(c.bytes);
    const want = map.describe(c.bytes, c.bytes.length, v.ok ? null : v.error);
    const got = await kiln.inspectBlob(new Blob([c.bytes]), { map: true });
    assert.deepEqual(got.map, want, c.name);
    if (got.map.mark !== null) marked++;
    // Asked for nothing more than the verdict asked for.
    const plain = await kiln.inspectBlob(new Blob([c.bytes]));
    assert.equal(got.bytesRead, plain.bytesRead, c.name);
    assert.equal(plain.map, undefined, c.name);
  }
  assert.ok(marked > 100, `${marked} rejections marked`);
  await assert.rejects(kiln.inspectBlob(new Blob([f32]), { map: 1 }), TypeError);
});

test('lengths that disagree with the header: the size decides H8 as for the whole bytes', async () => {
  const f32 = cases.find((c) => c.name === 'kiln-v2-f32').bytes;
  const plusOne = new Uint8Array(f32.length + 1);
  plusOne.set(f32);
  const klnt = new Uint8Array(65);
  klnt.set([0x4b, 0x4c, 0x4e, 0x54, 0x02, 0x03]);
  const dtype = cases.find((c) => c.name === 'd1-dtype-25').bytes;
  for (const [bytes, name, rule, offset] of [
    [plusOne, 'valid block + 1 byte', 'H8', f32.length],
    [klnt, '65 bytes KLNT 02 03 0...', 'H8', 64],
    [dtype.slice(0, dtype.length - 2), 'bad dtype, last 2 bytes cut', 'H8', undefined],
  ]) {
    const got = await same(bytes, name);
    assert.equal(got.ok, false, name);
    assert.equal(got.error.class, 'FRAME', name);
    assert.equal(got.error.rule, rule, name);
    if (offset !== undefined) assert.equal(got.error.offset, offset, name);
    const blob = await kiln.validateBlob(new Blob([bytes]));
    assert.deepEqual(blob.error, got.error, name);
  }
});

test('10,000 mutants: validateRanges gives validate()\'s verdict (ok, class, rule, offset, tensor, message)', async () => {
  const r = rng(0x6b696c6e);
  const seen = new Map();
  for (let i = 0; i < 10000; i++) {
    const c = cases[r(cases.length)];
    const m = mutate(c.bytes, r);
    const got = await same(m, `mutant ${i} of ${c.name}`, OPTION_SETS[r(OPTION_SETS.length)]);
    const key = got.ok ? 'ok' : got.error.rule;
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  console.log(`mutants by verdict: ${[...seen].map(([k, v]) => `${k} ${v}`).join(', ')}`);
  // The mutants reach valid blocks and many rules.
  assert.ok(seen.has('ok') && seen.size >= 20, [...seen.keys()].join(' '));
});

test('a reader that throws, returns the wrong length or not bytes: ERR_KILN_IO, never a verdict', async () => {
  const bytes = cases.find((c) => c.name === 'ok-named-llama-layer').bytes;
  for (let failAt = 0; failAt < 3; failAt++) {
    const readers = {
      throws: (n) => {
        throw new Error('disk on fire');
      },
      rejects: async () => {
        throw new Error('network down');
      },
      short: async (o, n) => bytes.slice(o, o + n - 1),
      long: async (o, n) => new Uint8Array(n + 1),
      notBytes: async () => 'bytes',
      nothing: async () => undefined,
    };
    for (const [how, bad] of Object.entries(readers)) {
      let calls = 0;
      const read = (o, n) => (calls++ === failAt ? bad(o, n) : Promise.resolve(bytes.slice(o, o + n)));
      await assert.rejects(kiln.validateRanges(bytes.length, read), (e) => {
        assert.equal(e.code, 'ERR_KILN_IO', `${how} at ${failAt}: ${e.message}`);
        if (how === 'short') assert.match(e.message, /returned \d+ bytes for the \d+ bytes at offset/);
        if (how === 'throws') assert.match(e.message, /disk on fire/);
        return true;
      });
    }
  }
  // The instance goes on.
  const { bytesRead, reads, ...ok } = await kiln.validateRanges(bytes.length, reader(bytes).read);
  assert.deepEqual(ok, { ok: true });
  // A Blob whose slice fails.
  const broken = { size: bytes.length, slice: () => ({ arrayBuffer: () => Promise.reject(new Error('gone')) }) };
  await assert.rejects(kiln.validateBlob(broken), (e) => e.code === 'ERR_KILN_IO' && /gone/.test(e.message));
});

test('arguments: size, reader, options', async () => {
  const read = async () => new Uint8Array(0);
  await assert.rejects(kiln.validateRanges(-1, read), RangeError);
  await assert.rejects(kiln.validateRanges(2 ** 53, read), RangeError);
  await assert.rejects(kiln.validateRanges('64', read), TypeError);
  await assert.rejects(kiln.validateRanges(64, null), TypeError);
  await assert.rejects(kiln.validateRanges(64, read, { mergeGap: -1 }), RangeError);
  await assert.rejects(kiln.validateRanges(64, read, { nope: 1 }), TypeError);
  await assert.rejects(kiln.validateBlob(new Uint8Array(4)), TypeError);
  // A size of 0 is judged without a read.
  const { bytesRead, reads, ...v } = await kiln.validateRanges(0, () => assert.fail('read'));
  assert.deepEqual(v, kiln.validate(new Uint8Array(0)));
  assert.equal(reads, 0);
});

test('mergeGap 0: a valid block\'s payload is not read, only its directory region', async () => {
  const f32 = cases.find((c) => c.name === 'kiln-v2-f32').bytes;
  const valid = kiln.inspect(f32);
  assert.equal(valid.ok, true);
  const base = Number(valid.header.payloadBase);
  const got = await kiln.validateRanges(f32.length, reader(f32).read, { mergeGap: 0 });
  assert.equal(got.ok, true);
  assert.equal(got.bytesRead, base); // the header and directory region, not the 8 payload bytes
});

test('a directory region past the 32-bit address space: ERR_KILN_IO after the header, never a verdict', async () => {
  // 2^24 descriptors: payload_base = 64 + 2^31, more than a wasm32 vector
  // can hold (PTRDIFF_MAX). H1..H8 hold for a file of exactly that size, so
  // the validator would next want the directory region: it says it cannot
  // keep it, having read the header only.
  const header = new Uint8Array(64);
  const view = new DataView(header.buffer);
  header.set([0x4b, 0x4c, 0x4e, 0x54, 2, 0x02]);
  view.setUint32(8, 2 ** 24, true); // tensor_count
  view.setBigUint64(24, 2n ** 31n, true); // directory_bytes = 128 * tensor_count
  const size = 64 + 2 ** 31;
  const asked = [];
  const read = async (offset, length) => {
    asked.push([offset, length]);
    assert.equal(offset, 0, 'only the header is read');
    return header.slice(0, length);
  };
  await assert.rejects(kiln.validateRanges(size, read), (e) => {
    assert.equal(e.code, 'ERR_KILN_IO', e.message);
    assert.match(e.message, /the 2147483712-byte directory region does not fit in memory/);
    return true;
  });
  assert.deepEqual(asked, [[0, 64]]);
  // One tensor fewer (2^31 - 64 bytes of directory region) is not refused
  // for its size: the validator asks for the directory region.
  view.setUint32(8, 2 ** 24 - 1, true);
  view.setBigUint64(24, 2n ** 31n - 128n, true);
  asked.length = 0;
  const fewer = async (offset, length) => {
    asked.push([offset, length]);
    if (offset === 0) return header.slice(0, length);
    throw new Error('not served');
  };
  await assert.rejects(kiln.validateRanges(64 + 2 ** 31 - 128, fewer), (e) => e.code === 'ERR_KILN_IO' && /not served/.test(e.message));
  assert.equal(asked.length, 2);
  assert.equal(asked[1][0], 64);
});

