// The C ABI's promise in the WebAssembly build: an allocation that fails is
// KILN_NO_MEMORY, never an abort. The module's memory (4 GiB at most) is
// taken with malloc first, all but less than 64 KiB, then kiln_validate is
// called on a valid block of 10,000 named tensors (Parse allocates scratch
// memory for them, 128 KiB): it returns
// KILN_NO_MEMORY, and once the memory is freed it accepts the block. The
// allocation fails in C++ (std::bad_alloc thrown and caught at the
// boundary), so this also checks the module's exception handling.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import createKilnModule from '../dist/kiln-wasm.mjs';

const KILN_OK = 0;
const KILN_NO_MEMORY = 4;

// A valid block: n u8 [64] tensors named t<base 36 index>, 64 bytes each,
// back to back (names: the parse needs scratch memory for the duplicate
// check, allocated when the block has more tensors than its stack holds).
function block(n) {
  const names = Array.from({ length: n }, (_, i) => `t${i.toString(36)}`);
  const heap = new TextEncoder().encode(names.join(''));
  const dirBytes = 128 * n + heap.length;
  const base = Math.ceil((64 + dirBytes) / 64) * 64;
  const b = new Uint8Array(base + 64 * n);
  const dv = new DataView(b.buffer);
  b.set([0x4b, 0x4c, 0x4e, 0x54, 2, 3]);
  dv.setUint32(8, n, true);
  dv.setUint32(12, heap.length, true);
  dv.setBigUint64(16, BigInt(64 * n), true);
  dv.setBigUint64(24, BigInt(dirBytes), true);
  let nameOff = 0;
  names.forEach((name, i) => {
    const d = 64 + 128 * i;
    dv.setUint16(d, 2, true);
    b[d + 2] = 1;
    dv.setUint16(d + 4, nameOff, true);
    dv.setUint16(d + 6, name.length, true);
    nameOff += name.length;
    dv.setUint16(d + 8, 0xffff, true);
    dv.setUint16(d + 18, 0xffff, true);
    dv.setUint32(d + 24, 0xffffffff, true);
    dv.setUint32(d + 28, 0xffffffff, true);
    dv.setBigUint64(d + 32, BigInt(64 * i), true);
    dv.setBigUint64(d + 40, 64n, true);
    dv.setBigUint64(d + 48, 64n, true);
  });
  b.set(heap, 64 + 128 * n);
  return b;
}

test('no-memory: kiln_validate with the memory exhausted is KILN_NO_MEMORY, not an abort', async () => {
  const m = await createKilnModule();
  const b = block(10000);
  const p = m._malloc(b.length);
  assert.notEqual(p, 0);
  m.HEAPU8.set(b, p);
  assert.equal(m._kiln_validate(p, b.length, 0, 0), KILN_OK);

  // Take the largest chunk that still fits, halving down to 64 KiB.
  const taken = [];
  for (let size = 2 ** 30; size >= 2 ** 16; ) {
    const q = m._malloc(size);
    if (q === 0) size /= 2;
    else taken.push(q);
  }
  assert.ok(taken.length > 0);
  assert.equal(m._malloc(2 ** 16), 0, 'the memory is all but exhausted');
  assert.equal(m._kiln_validate(p, b.length, 0, 0), KILN_NO_MEMORY);
  assert.equal(m._kiln_validate(p, b.length, 0, 0), KILN_NO_MEMORY, 'the module still answers');

  for (const q of taken) m._free(q);
  assert.equal(m._kiln_validate(p, b.length, 0, 0), KILN_OK);
  m._free(p);
});
