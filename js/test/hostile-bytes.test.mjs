// Hostile byte arguments: the package reads a caller's Uint8Array through the
// engine's own TypedArray internals, never through the object's getters, and
// no argument error stops the shared WebAssembly instance.
//   lying-length   a Uint8Array subclass whose `length` getter lies is copied
//                  by its real byte length (nothing written past the copy)
//   detached       a Uint8Array whose buffer was transferred is a TypeError
//   proxy          a Proxy around a Uint8Array is a TypeError
//   instance-kept  after each, a stream in flight and the next call still work
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { load } from '../index.mjs';

const golden = fileURLToPath(new URL('../../golden/cases/', import.meta.url));
const f32 = new Uint8Array(readFileSync(`${golden}kiln-v2-f32.klnt`));
const kiln = await load();

class Liar extends Uint8Array {
  get length() {
    return 8;
  }
}

function liar(bytes) {
  const out = new Liar(bytes.length);
  Uint8Array.prototype.set.call(out, bytes);
  return out;
}

function detached(n) {
  const a = new Uint8Array(n);
  structuredClone(a.buffer, { transfer: [a.buffer] });
  return a;
}

// Every entry point that takes bytes, as a call on one argument.
const entries = {
  validate: (x) => kiln.validate(x),
  inspect: (x) => kiln.inspect(x),
  detectFormat: (x) => kiln.detectFormat(x),
  escape: (x) => kiln.escape(x),
  feed: (x) => {
    const v = kiln.createStreamValidator();
    try {
      return v.feed(x);
    } finally {
      v.free();
    }
  },
  validateStream: (x) => kiln.validateStream([x]),
};

// A stream in flight on the shared instance, and a fresh call, still work.
async function assertInstanceKept(inflight, what) {
  assert.equal(await load(), kiln, `${what}: load() still gives the same instance`);
  assert.equal(inflight.feed(f32.subarray(100)), 'complete', `${what}: the stream in flight`);
  assert.equal(inflight.finish().ok, true, `${what}: the stream in flight's verdict`);
  assert.deepEqual(kiln.validate(f32), { ok: true }, `${what}: validate afterwards`);
}

test('lying-length: a subclass is read by its real bytes in every entry point', async () => {
  const inflight = kiln.createStreamValidator();
  inflight.feed(f32.subarray(0, 100));
  // 4096 bytes that say they are 8: validated as the 4096 they are.
  const big = new Liar(4096).fill(0x41);
  assert.deepEqual(kiln.validate(big), kiln.validate(new Uint8Array(4096).fill(0x41)));
  // A valid block that says it is 8 bytes: valid (all of it was read).
  const block = liar(f32);
  assert.deepEqual(kiln.validate(block), { ok: true });
  assert.equal(kiln.inspect(block).ok, true);
  assert.equal(kiln.inspect(block).tensors.length, kiln.inspect(f32).tensors.length);
  const v = kiln.createStreamValidator();
  assert.equal(v.feed(block), 'complete');
  assert.equal(v.finish().ok, true);
  v.free();
  assert.equal((await kiln.validateStream([block])).ok, true);
  assert.equal(kiln.detectFormat(block), 'kiln');
  // Safetensors needs byte 8: the lie would hide it.
  const st = new Uint8Array(16);
  st[0] = 2;
  st[8] = 0x7b;
  assert.equal(kiln.detectFormat(liar(st)), 'safetensors');
  const name = new TextEncoder().encode('abcdefghij\u202e');
  assert.equal(kiln.escape(liar(name)), kiln.escape(name));
  await assertInstanceKept(inflight, 'lying-length');
});

for (const [kind, make] of [
  ['detached', () => detached(16)],
  ['proxy', () => new Proxy(new Uint8Array(16), {})],
  ['proxy of a detached array', () => new Proxy(detached(16), {})],
]) {
  test(`${kind}: a TypeError from every entry point, the instance kept`, async () => {
    const inflight = kiln.createStreamValidator();
    inflight.feed(f32.subarray(0, 100));
    for (const [where, call] of Object.entries(entries)) {
      const arg = make();
      if (where === 'validateStream') {
        await assert.rejects(call(arg), TypeError, `${kind}: ${where}`);
      } else {
        assert.throws(() => call(arg), TypeError, `${kind}: ${where}`);
      }
    }
    await assertInstanceKept(inflight, kind);
  });
}

test('detached: the message names the call and says the buffer is detached', () => {
  for (const [where, call] of Object.entries(entries)) {
    if (where === 'validateStream') continue;
    assert.throws(() => call(detached(4)), { name: 'TypeError', message: new RegExp(`^kiln: ${where}: .*detached`) }, where);
  }
});

test('an empty (not detached) Uint8Array is still bytes', () => {
  assert.equal(kiln.validate(new Uint8Array(0)).ok, false);
  assert.equal(kiln.detectFormat(new Uint8Array(0)), 'unknown');
  assert.equal(kiln.escape(new Uint8Array(0)), '');
});

// The block map goes through the same byte view and the one instance: a
// lying length maps the real bytes, a Proxy is a TypeError, a verdict that
// is not an error object is a TypeError, and the instance keeps working.
test('blockMap: hostile prefixes and verdicts', () => {
  const real = kiln.blockMap(f32, f32.length, null);
  assert.deepEqual(kiln.blockMap(liar(f32), f32.length, null), real);
  assert.equal(real.regions[0].kind, 'header');
  assert.throws(() => kiln.blockMap(new Proxy(f32, {}), f32.length, null), TypeError);
  assert.throws(() => kiln.blockMap(f32, f32.length - 1, null), RangeError);
  assert.throws(() => kiln.blockMap(f32, 2 ** 60, null), RangeError);
  assert.throws(() => kiln.blockMap(f32, f32.length, { class: 'NOPE', rule: 'H1', offset: 0 }), TypeError);
  assert.throws(() => kiln.blockMap(f32, f32.length, { class: 'FRAME', rule: '<b>', offset: 0 }), TypeError);
  // A rule id of the right shape that is no rule: the C ABI refuses it and
  // says which argument (kiln_block_map_new's error).
  assert.throws(() => kiln.blockMap(f32, f32.length, { class: 'FRAME', rule: 'Z9', offset: 0 }), {
    name: 'RangeError',
    message: /blockMap: verdict /,
  });
  const rejected = kiln.validate(f32.subarray(0, 100));
  assert.equal(rejected.ok, false);
  const m = kiln.blockMap(f32.subarray(0, 100), 100, rejected.error);
  assert.equal(Number(m.mark.offset), rejected.error.offset);
  assert.deepEqual(kiln.validate(f32), { ok: true });
});
