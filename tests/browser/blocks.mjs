// Small Kiln v2 blocks for the browser test, written byte by byte from the
// layout in docs/spec.md (section 2); the test checks each with `kiln
// validate` before the page sees it.
import { openSync, writeSync, ftruncateSync, closeSync } from 'node:fs';

const F32 = 1;
const U8 = 2;

function align64(n) {
  return Math.ceil(n / 64) * 64;
}

// The header and directory region of a block of one tensor of `dtype`
// with shape [count] and byte_length `length`, named `name` (bytes).
// Returns {head, payloadBase, blockLength}; the payload is not included.
function oneTensor(name, dtype, count, length) {
  const nameBytes = Buffer.from(name, 'utf8');
  const directoryBytes = 128 + nameBytes.length;
  const payloadBase = align64(64 + directoryBytes);
  const head = Buffer.alloc(payloadBase);
  head.write('KLNT', 0, 'latin1');
  head[4] = 2;
  head[5] = nameBytes.length > 0 ? 0x03 : 0x02;
  head.writeUInt32LE(1, 8);
  head.writeUInt32LE(nameBytes.length, 12);
  head.writeBigUInt64LE(BigInt(length), 16);
  head.writeBigUInt64LE(BigInt(directoryBytes), 24);
  const d = 64;
  head.writeUInt16LE(dtype, d + 0);
  head[d + 2] = 1;
  head.writeUInt16LE(nameBytes.length > 0 ? 0 : 0xffff, d + 4);
  head.writeUInt16LE(nameBytes.length, d + 6);
  head.writeUInt16LE(0xffff, d + 8);
  head.writeUInt16LE(0xffff, d + 18);
  head.writeUInt32LE(0xffffffff, d + 24);
  head.writeUInt32LE(0xffffffff, d + 28);
  head.writeBigUInt64LE(0n, d + 32);
  head.writeBigUInt64LE(BigInt(length), d + 40);
  head.writeBigUInt64LE(BigInt(count), d + 48);
  nameBytes.copy(head, 64 + 128);
  return { head, payloadBase, blockLength: payloadBase + length };
}

// A valid block: one f32 vector of 4 elements named `name`.
export function namedBlock(name) {
  const { head } = oneTensor(name, F32, 4, 16);
  return Buffer.concat([head, Buffer.alloc(16, 0x3f)]);
}

// A valid block of exactly `total` bytes: one u8 tensor over the whole
// payload region, written sparse (the header, then a hole to the end).
export function writeSparseBlock(path, total) {
  const probe = oneTensor('big', U8, 1, 1);
  const length = total - probe.payloadBase;
  const { head } = oneTensor('big', U8, length, length);
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, head);
    ftruncateSync(fd, total);
  } finally {
    closeSync(fd);
  }
}

// A small safetensors file: one F32 tensor of 2 elements.
export function safetensorsFile() {
  const json = Buffer.from(JSON.stringify({ w: { dtype: 'F32', shape: [2], data_offsets: [0, 8] } }));
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  return Buffer.concat([len, json, Buffer.alloc(8)]);
}

// A valid unnamed block of `n` u8 tensors of one byte each, tensor i at
// payload offset 64 * i (as findings of a 100,000-tensor block were made).
export function writeManyTensorBlock(path, n) {
  const payloadBase = 64 + 128 * n;
  const head = Buffer.alloc(payloadBase);
  head.write('KLNT', 0, 'latin1');
  head[4] = 2;
  head[5] = 0x02;
  head.writeUInt32LE(n, 8);
  head.writeUInt32LE(0, 12);
  head.writeBigUInt64LE(BigInt(64 * n), 16);
  head.writeBigUInt64LE(BigInt(128 * n), 24);
  for (let i = 0; i < n; i++) {
    const d = 64 + 128 * i;
    head.writeUInt16LE(U8, d + 0);
    head[d + 2] = 1;
    head.writeUInt16LE(0xffff, d + 4);
    head.writeUInt16LE(0xffff, d + 8);
    head.writeUInt16LE(0xffff, d + 18);
    head.writeUInt32LE(0xffffffff, d + 24);
    head.writeUInt32LE(0xffffffff, d + 28);
    head.writeBigUInt64LE(BigInt(64 * i), d + 32);
    head.writeBigUInt64LE(1n, d + 40);
    head.writeBigUInt64LE(1n, d + 48);
  }
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, head);
    ftruncateSync(fd, payloadBase + 64 * n);
  } finally {
    closeSync(fd);
  }
}

// A valid named block of exactly `total` bytes shaped like a language model
// (about 1,500 tensors: per layer the attention projections, the MLP and
// two norms, f32 [1024, 1024], [2816, 1024], [1024]), written sparse: the
// header and directory, then a hole. The last tensor, a u8 vector, covers
// the payload left to the end, so no payload byte is uncovered.
export function writeModelLikeSparseBlock(path, total, layers = 166) {
  const tensors = [];
  const add = (name, dtype, shape, length) => tensors.push({ name: Buffer.from(name, 'utf8'), dtype, shape, length });
  add('model.embed_tokens.weight', F32, [32000n, 1024n], 32000n * 1024n * 4n);
  for (let i = 0; i < layers; i++) {
    const p = `model.layers.${i}.`;
    for (const m of ['q_proj', 'k_proj', 'v_proj', 'o_proj']) add(`${p}self_attn.${m}.weight`, F32, [1024n, 1024n], 1024n * 1024n * 4n);
    for (const m of ['gate_proj', 'up_proj']) add(`${p}mlp.${m}.weight`, F32, [2816n, 1024n], 2816n * 1024n * 4n);
    add(`${p}mlp.down_proj.weight`, F32, [1024n, 2816n], 2816n * 1024n * 4n);
    add(`${p}input_layernorm.weight`, F32, [1024n], 4096n);
    add(`${p}post_attention_layernorm.weight`, F32, [1024n], 4096n);
  }
  add('model.norm.weight', F32, [1024n], 4096n);
  const n = tensors.length + 1;
  const nameBytes = tensors.reduce((a, t) => a + t.name.length, 0) + 'lm_head.weight'.length;
  const directoryBytes = 128 * n + nameBytes;
  const payloadBase = align64(64 + directoryBytes);
  let at = 0n;
  for (const t of tensors) {
    t.offset = at;
    at += t.length; // every length is a multiple of 64
  }
  const rest = BigInt(total) - BigInt(payloadBase) - at;
  if (rest <= 0n) throw new Error(`writeModelLikeSparseBlock: ${total} bytes is too small`);
  tensors.push({ name: Buffer.from('lm_head.weight'), dtype: U8, shape: [rest], length: rest, offset: at });
  const head = Buffer.alloc(payloadBase);
  head.write('KLNT', 0, 'latin1');
  head[4] = 2;
  head[5] = 0x03;
  head.writeUInt32LE(n, 8);
  head.writeUInt32LE(nameBytes, 12);
  head.writeBigUInt64LE(at + rest, 16);
  head.writeBigUInt64LE(BigInt(directoryBytes), 24);
  let nameAt = 0;
  tensors.forEach((t, i) => {
    const d = 64 + 128 * i;
    head.writeUInt16LE(t.dtype, d + 0);
    head[d + 2] = t.shape.length;
    head.writeUInt16LE(nameAt, d + 4);
    head.writeUInt16LE(t.name.length, d + 6);
    head.writeUInt16LE(0xffff, d + 8);
    head.writeUInt16LE(0xffff, d + 18);
    head.writeUInt32LE(0xffffffff, d + 24);
    head.writeUInt32LE(0xffffffff, d + 28);
    head.writeBigUInt64LE(t.offset, d + 32);
    head.writeBigUInt64LE(t.length, d + 40);
    t.shape.forEach((s, k) => head.writeBigUInt64LE(s, d + 48 + 8 * k));
    t.name.copy(head, 64 + 128 * n + nameAt);
    nameAt += t.name.length;
  });
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, head);
    ftruncateSync(fd, total);
  } finally {
    closeSync(fd);
  }
  return n;
}
