// Valid Kiln v2 blocks for the package's benchmarks and tests.

// A valid block: tensors[i] = { name (ASCII), dtype, shape, offset, length }
// in payload order, payloadBytes in all. Only the directory region (header,
// descriptors, heap, padding) is built; the payload follows as zeros.
export function directory(tensors, payloadBytes) {
  const named = tensors.some((t) => t.name !== '');
  const heap = Buffer.from(tensors.map((t) => t.name).join(''), 'ascii');
  const dirBytes = 128 * tensors.length + heap.length;
  const base = Math.ceil((64 + dirBytes) / 64) * 64;
  const b = new Uint8Array(base);
  const dv = new DataView(b.buffer);
  b.set([0x4b, 0x4c, 0x4e, 0x54, 2, named ? 3 : 2]);
  dv.setUint32(8, tensors.length, true);
  dv.setUint32(12, heap.length, true);
  dv.setBigUint64(16, BigInt(payloadBytes), true);
  dv.setBigUint64(24, BigInt(dirBytes), true);
  let nameOff = 0;
  tensors.forEach((t, i) => {
    const d = 64 + 128 * i;
    dv.setUint16(d, t.dtype, true);
    b[d + 2] = t.shape.length;
    dv.setUint16(d + 4, named ? nameOff : 0xffff, true);
    dv.setUint16(d + 6, t.name.length, true);
    nameOff += t.name.length;
    dv.setUint16(d + 8, 0xffff, true);
    dv.setUint16(d + 18, 0xffff, true);
    dv.setUint32(d + 24, 0xffffffff, true);
    dv.setUint32(d + 28, 0xffffffff, true);
    dv.setBigUint64(d + 32, BigInt(t.offset), true);
    dv.setBigUint64(d + 40, BigInt(t.length), true);
    t.shape.forEach((n, k) => dv.setBigUint64(d + 48 + 8 * k, BigInt(n), true));
  });
  b.set(heap, 64 + 128 * tensors.length);
  return b;
}

// The directory region followed by its payload (zeros).
export function block(tensors, payloadBytes) {
  const dir = directory(tensors, payloadBytes);
  const b = new Uint8Array(dir.length + payloadBytes);
  b.set(dir);
  return b;
}

// n tensors named t<base 36 index>, 64 bytes each, back to back.
export function namedTensors(n, dtype, shape) {
  return Array.from({ length: n }, (_, i) => ({ name: `t${i.toString(36)}`, dtype, shape, offset: 64 * i, length: 64 }));
}
