// Every golden case (golden/manifest.tsv) through validate, inspect, the
// streaming validator cut in several ways, and validateStream over a web
// ReadableStream and a Node stream: the verdict, class, rule, offset and
// tensor of the manifest.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { load } from '../index.mjs';

const golden = fileURLToPath(new URL('../../golden/', import.meta.url));

function manifest() {
  const rows = readFileSync(`${golden}manifest.tsv`, 'ascii')
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('#'))
    .slice(1);
  return rows.map((row) => {
    const [name, expect, rule, offset, tensor] = row.split('\t');
    const path = `${golden}cases/${name}.klnt`;
    const want =
      expect === 'ok'
        ? { ok: true }
        : { ok: false, class: expect, rule, offset: Number(offset), tensor: tensor === '-' ? null : Number(tensor) };
    return { name, path, want, bytes: new Uint8Array(readFileSync(path)) };
  });
}

const cases = manifest();
const kiln = await load();

// The four fields the manifest fixes, from a result.
function verdict(result) {
  if (result.ok) return { ok: true };
  const { class: cls, rule, offset, tensor } = result.error;
  return { ok: false, class: cls, rule, offset, tensor };
}

test('the manifest has the 165 golden cases', () => {
  assert.equal(cases.length, 165);
});

test('validate: every golden case as the manifest says', () => {
  for (const c of cases) assert.deepEqual(verdict(kiln.validate(c.bytes)), c.want, c.name);
});

test('inspect: the same verdicts, and a header and tensors for the valid ones', () => {
  for (const c of cases) {
    const r = kiln.inspect(c.bytes);
    assert.deepEqual(verdict(r), c.want, c.name);
    if (r.ok) {
      assert.equal(r.tensors.length, r.header.tensorCount, c.name);
      assert.equal(r.header.blockLength, BigInt(c.bytes.length), c.name);
    }
  }
});

// The stream validator fed in pieces of `size` bytes.
function streamed(bytes, size) {
  const v = kiln.createStreamValidator();
  try {
    for (let at = 0; at < bytes.length; at += size) {
      if (v.feed(bytes.subarray(at, Math.min(bytes.length, at + size))) === 'rejected') break;
    }
    return v.finish();
  } finally {
    v.free();
  }
}

// What a stream of the case's bytes reports (docs/spec.md, section 5.1): the
// manifest's verdict, except where a whole-buffer parse reports trailing
// bytes (FRAME H8 at block_length < length) but the block itself breaks a
// rule: a stream reports that rule, the verdict on the block's own bytes.
function streamWant(c) {
  const w = c.want;
  if (w.ok || w.rule !== 'H8' || w.offset >= c.bytes.length) return w;
  const own = kiln.validate(c.bytes.subarray(0, w.offset));
  return own.ok ? w : verdict(own);
}

test('streams differ from the manifest only where section 5.1 says (order-h8-before-h9)', () => {
  const differ = cases.filter((c) => streamWant(c) !== c.want).map((c) => c.name);
  assert.deepEqual(differ, ['order-h8-before-h9']);
});

for (const size of [1, 3, 64, 65, 1000, 1 << 20]) {
  test(`stream validator, chunks of ${size} bytes: every golden case as the manifest says`, () => {
    for (const c of cases) assert.deepEqual(verdict(streamed(c.bytes, size)), streamWant(c), c.name);
  });
}

test('stream validator: valid blocks give the header and tensors inspect gives', () => {
  for (const c of cases.filter((x) => x.want.ok)) {
    assert.deepEqual(streamed(c.bytes, 7), kiln.inspect(c.bytes), c.name);
  }
});

test('validateStream over a web ReadableStream: every golden case', async () => {
  for (const c of cases) {
    const stream = new ReadableStream({
      start(controller) {
        for (let at = 0; at < c.bytes.length; at += 50) controller.enqueue(c.bytes.slice(at, at + 50));
        controller.close();
      },
    });
    assert.deepEqual(verdict(await kiln.validateStream(stream)), streamWant(c), c.name);
  }
});

test('validateStream over a Node stream (fs.createReadStream): every golden case', async () => {
  for (const c of cases) {
    const r = await kiln.validateStream(createReadStream(c.path, { highWaterMark: 97 }));
    assert.deepEqual(verdict(r), streamWant(c), c.name);
  }
});

test('validateStream over an async generator and an array of chunks', async () => {
  for (const c of cases) {
    async function* gen() {
      for (let at = 0; at < c.bytes.length; at += 13) yield c.bytes.subarray(at, at + 13);
    }
    assert.deepEqual(verdict(await kiln.validateStream(gen())), streamWant(c), c.name);
    assert.deepEqual(verdict(await kiln.validateStream([c.bytes])), streamWant(c), c.name);
  }
});

test('validateStream stops reading once the verdict is a rejection', async () => {
  const bad = cases.find((c) => c.name === 'kiln-pod-list-f32');
  let pulled = 0;
  const stream = new ReadableStream({
    pull(controller) {
      pulled++;
      controller.enqueue(pulled === 1 ? bad.bytes : new Uint8Array(1 << 16));
      if (pulled > 1000) controller.close();
    },
  });
  const r = await kiln.validateStream(stream);
  assert.equal(r.error.rule, 'H1');
  assert.ok(pulled < 5, `pulled ${pulled} chunks`);
  const node = Readable.from((function* () { yield bad.bytes; for (;;) yield new Uint8Array(1 << 16); })());
  assert.equal((await kiln.validateStream(node)).error.rule, 'H1');
  assert.ok(node.destroyed, 'the Node stream is destroyed');
});

test('prefix mode: a valid block followed by other bytes', () => {
  const c = cases.find((x) => x.name === 'kiln-v2-f32');
  const more = new Uint8Array(c.bytes.length + 10);
  more.set(c.bytes);
  assert.equal(kiln.validate(more).error.rule, 'H8');
  assert.deepEqual(kiln.validate(more, { prefix: true }), { ok: true });
  const v = kiln.createStreamValidator({ prefix: true });
  assert.equal(v.feed(more), 'complete');
  assert.equal(v.consumed, c.bytes.length);
  assert.equal(v.finish().ok, true);
  v.free();
});

test('inspect: the fields of a named, quantised block', () => {
  const c = cases.find((x) => x.name === 'ok-quant-scheme2-ceil');
  const r = kiln.inspect(c.bytes);
  assert.equal(r.ok, true);
  assert.equal(r.header.hasNames, true);
  const w = r.tensors[0];
  assert.equal(w.dtypeName, 'i4');
  assert.deepEqual(w.shape, [4n, 70n]);
  assert.equal(w.length, 140n);
  assert.deepEqual(w.quantisation, { scheme: 'grouped', axis: 1, groupSize: 32, scaleIndex: 1, outerIndex: 2 });
  assert.equal(w.blockOffset, r.header.payloadBase + w.offset);
  assert.deepEqual(new TextEncoder().encode(w.name), w.nameBytes);
  const huge = kiln.inspect(cases.find((x) => x.name === 'ok-zero-dim-among-huge').bytes);
  assert.ok(huge.tensors.some((t) => t.shape.includes(1n << 63n)), 'u64 dimensions are exact bigints');
  const opaque = kiln.inspect(cases.find((x) => x.name === 'ok-opaque-q4k-unnamed').bytes).tensors[0];
  assert.equal(opaque.layout, 'ggml.q4_K');
  assert.equal(opaque.blockSize, 256);
  assert.equal(opaque.name, '');
});

test('limits: exceeding a caller limit is LIMIT H7', () => {
  const c = cases.find((x) => x.name === 'ok-named-llama-layer');
  assert.equal(kiln.validate(c.bytes, { maxTensors: 8 }).error.rule, 'H7');
  assert.equal(kiln.validate(c.bytes, { maxTensors: 9n }).ok, true);
  assert.equal(kiln.validate(c.bytes, { maxBlockBytes: c.bytes.length - 1 }).error.rule, 'H7');
  assert.equal(kiln.validate(c.bytes, { maxNameBytes: 0 }).error.class, 'LIMIT');
  const v = kiln.createStreamValidator({ maxTensors: 1 });
  assert.equal(v.feed(c.bytes), 'rejected');
  assert.equal(v.finish().error.rule, 'H7');
  v.free();
});
