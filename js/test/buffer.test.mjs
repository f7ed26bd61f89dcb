// KilnBuffer (Kiln.allocate): bytes validated where they lie in the
// module's memory, without the copy a Uint8Array costs. The verdict must be
// the copy's on every golden case and on 2,000 mutants (the bytes are the
// same, only where they are differs); a freed buffer, another instance's
// buffer and anything that only looks like a buffer are refused before the
// module reads an address; views taken before the memory grows are
// detached, and bytes() after it sees the same bytes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { load } from '../index.mjs';
import { Kiln } from '../lib/abi.mjs';
import createKilnModule from '../dist/kiln-wasm.mjs';
import { block, namedTensors } from '../tools/block.mjs';
import { mutate, rng } from './mutants.mjs';

const golden = fileURLToPath(new URL('../../golden/cases/', import.meta.url));
const cases = readdirSync(golden)
  .filter((f) => f.endsWith('.klnt'))
  .sort()
  .map((f) => ({ name: f, bytes: new Uint8Array(readFileSync(golden + f)) }));
const kiln = await load();

function inBuffer(bytes) {
  const buf = kiln.allocate(bytes.length);
  buf.bytes().set(bytes);
  return buf;
}

test('buffer: validate and inspect of a KilnBuffer equal those of the copied bytes, on every golden case', () => {
  assert.ok(cases.length >= 160, `${cases.length} golden cases`);
  let rejected = 0;
  for (const c of cases) {
    const buf = inBuffer(c.bytes);
    try {
      assert.equal(buf.length, c.bytes.length);
      const want = kiln.validate(c.bytes);
      assert.deepEqual(kiln.validate(buf), want, c.name);
      assert.deepEqual(kiln.inspect(buf), kiln.inspect(c.bytes), c.name);
      for (const options of [{ prefix: true }, { maxTensors: 1 }, { maxBlockBytes: 100 }]) {
        assert.deepEqual(kiln.validate(buf, options), kiln.validate(c.bytes, options), `${c.name} ${JSON.stringify(options)}`);
      }
      rejected += want.ok ? 0 : 1;
    } finally {
      buf.free();
    }
  }
  assert.ok(rejected > 100, `${rejected} rejected`);
});

test('buffer: 2,000 mutants give the same verdict in a KilnBuffer as copied', () => {
  const r = rng(2026);
  const valid = cases.filter((c) => kiln.validate(c.bytes).ok);
  let rejected = 0;
  for (let i = 0; i < 2000; i++) {
    const bytes = mutate(valid[r(valid.length)].bytes, r);
    const buf = inBuffer(bytes);
    try {
      const want = kiln.validate(bytes);
      assert.deepEqual(kiln.validate(buf), want, `mutant ${i}`);
      rejected += want.ok ? 0 : 1;
    } finally {
      buf.free();
    }
  }
  assert.ok(rejected > 1000, `${rejected} of 2,000 rejected`);
});

test('buffer: the bytes are read where they lie: a change through bytes() changes the verdict', () => {
  const c = cases.find((x) => kiln.validate(x.bytes).ok && x.bytes.length > 64);
  const buf = inBuffer(c.bytes);
  try {
    assert.deepEqual(kiln.validate(buf), { ok: true });
    buf.bytes()[0] ^= 0xff; // the magic
    const after = kiln.validate(buf);
    assert.equal(after.ok, false);
    assert.equal(after.error.rule, 'H1');
  } finally {
    buf.free();
  }
});

test('buffer: a freed buffer is refused (ERR_KILN_STATE), free() twice is harmless', () => {
  const buf = inBuffer(cases[0].bytes);
  buf.free();
  buf.free();
  for (const call of [() => kiln.validate(buf), () => kiln.inspect(buf), () => buf.bytes()]) {
    assert.throws(call, (e) => e.code === 'ERR_KILN_STATE' && /freed/.test(e.message));
  }
  assert.equal(buf.length, cases[0].bytes.length);
});

test('buffer: an options getter that frees the buffer mid-call is refused, not a read of freed memory', () => {
  const buf = inBuffer(cases[0].bytes);
  const options = {
    get maxTensors() {
      buf.free();
      return 10;
    },
  };
  assert.throws(() => kiln.validate(buf, options), (e) => e.code === 'ERR_KILN_STATE');
});

test("buffer: another instance's buffer, a Proxy of one and a look-alike are TypeErrors", async () => {
  const other = new Kiln(await createKilnModule());
  const theirs = other.allocate(16);
  assert.throws(() => kiln.validate(theirs), (e) => e instanceof TypeError && /another instance/.test(e.message));
  assert.throws(() => kiln.inspect(theirs), TypeError);
  theirs.free();
  const mine = kiln.allocate(16);
  try {
    assert.throws(() => kiln.validate(new Proxy(mine, {})), TypeError);
    assert.throws(() => Reflect.apply(mine.bytes, {}, []), TypeError);
    const lookAlike = { length: 16, bytes: () => new Uint8Array(16), free() {} };
    assert.throws(() => kiln.validate(lookAlike), TypeError);
    assert.throws(() => kiln.validate(Object.create(mine)), TypeError);
  } finally {
    mine.free();
  }
});

test('buffer: the class reached through a buffer cannot make one (no forged address or length)', () => {
  const mine = kiln.allocate(16);
  try {
    const Buffer = mine.constructor;
    const forged = { kiln, ptr: 8, length: 64, freed: false };
    assert.throws(() => new Buffer(forged), TypeError);
    assert.throws(() => new Buffer(Symbol('KilnBuffer'), forged), TypeError);
    class Sub extends Buffer {
      constructor() {
        super(undefined, forged);
      }
    }
    assert.throws(() => new Sub(), TypeError);
    // No method of the instance takes a record from outside either.
    assert.deepEqual(
      Object.getOwnPropertyNames(Object.getPrototypeOf(kiln)).filter((n) => /buffer/i.test(n)),
      [],
    );
    mine.bytes().fill(0);
    assert.deepEqual(kiln.validate(mine), kiln.validate(new Uint8Array(16)));
  } finally {
    mine.free();
  }
});

test('buffer: allocate refuses lengths that are not integers in [0, 2^32-1]', () => {
  for (const bad of [-1, 1.5, 2 ** 32, Number.NaN, Infinity, '16', 16n, null, undefined]) {
    assert.throws(() => kiln.allocate(bad), RangeError, String(bad));
  }
  const empty = kiln.allocate(0);
  try {
    assert.equal(empty.bytes().length, 0);
    const v = kiln.validate(empty);
    assert.equal(v.ok, false);
    assert.deepEqual(v, kiln.validate(new Uint8Array(0)));
  } finally {
    empty.free();
  }
});

test('buffer: after the memory grows, old views are detached and bytes() sees the same bytes', async () => {
  const k = new Kiln(await createKilnModule());
  const b = block(namedTensors(1000, 1, [16]), 64 * 1000);
  const buf = k.allocate(b.length);
  const before = buf.bytes();
  before.set(b);
  const big = k.allocate(256 * 1024 * 1024); // more than the initial memory: it grows
  try {
    assert.equal(before.length, 0, 'a view from before the growth is detached');
    assert.deepEqual(buf.bytes(), b);
    assert.deepEqual(k.validate(buf), { ok: true });
  } finally {
    big.free();
    buf.free();
  }
});
