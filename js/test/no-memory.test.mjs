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
import { block, namedTensors } from '../tools/block.mjs';

const KILN_OK = 0;
const KILN_NO_MEMORY = 4;

// A valid block: n u8 [64] tensors named t<base 36 index>, 64 bytes each,
// back to back (names: the parse needs scratch memory for the duplicate
// check, allocated when the block has more tensors than its stack holds).
function blockOf(n) {
  return block(namedTensors(n, 2, [64]), 64 * n);
}

test('no-memory: kiln_validate with the memory exhausted is KILN_NO_MEMORY, not an abort', async () => {
  const m = await createKilnModule();
  const b = blockOf(10000);
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
