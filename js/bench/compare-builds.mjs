// Two or more builds of the WebAssembly module side by side, in one run:
// the CPU time (user + system) of validate() on the 10,000-tensor block of
// bench.mjs part 1, with the copy into the module and without it, for each
// glue file given, interleaved with the native Parse of the same block
// (kiln_bench's BM_KilnValidateShortNames/10000, CPU time); medians, and
// each build's wasm / native ratio. For a change to the module's build
// flags: build it twice (js/build.sh), keep each js/dist/kiln-wasm.mjs
// under its own name, compare.
// Usage: node js/bench/compare-builds.mjs KILN_BENCH GLUE.mjs...
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { Kiln } from '../lib/abi.mjs';

const [kilnBench, ...glues] = process.argv.slice(2);
if (!kilnBench || glues.length === 0) {
  console.error('usage: node js/bench/compare-builds.mjs KILN_BENCH GLUE.mjs...');
  process.exit(2);
}

// The block of bench.mjs part 1: 10,000 f32 [16] tensors named
// t<base 36 index>, 64 bytes each, in payload order.
function block10k() {
  const n = 10000;
  const names = Array.from({ length: n }, (_, i) => `t${i.toString(36)}`);
  const heap = Buffer.from(names.join(''), 'ascii');
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
    dv.setUint16(d, 1, true);
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
    dv.setBigUint64(d + 48, 16n, true);
  });
  b.set(heap, 64 + 128 * n);
  return b;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rounds = 200;
const reps = 7;
const cpuUs = (fn) => {
  const t0 = process.cpuUsage();
  for (let i = 0; i < rounds; i++) fn();
  const t = process.cpuUsage(t0);
  return (t.user + t.system) / rounds;
};

const block = block10k();
const builds = [];
for (const glue of glues) {
  const { default: create } = await import(pathToFileURL(resolve(glue)).href);
  const withCopy = new Kiln(await create());
  const r = withCopy.validate(block);
  if (!r.ok) throw new Error(`${glue}: the block is invalid: ${JSON.stringify(r.error)}`);
  const bare = await create();
  const ptr = bare._malloc(block.length);
  if (ptr === 0) throw new Error(`${glue}: no memory for the block`);
  bare.HEAPU8.set(block, ptr);
  const noCopy = () => bare._kiln_validate(ptr, block.length, 0, 0);
  if (noCopy() !== 0) throw new Error(`${glue}: kiln_validate rejected the block`);
  for (let i = 0; i < 20; i++) withCopy.validate(block), noCopy(); // warm up
  const bytes = readFileSync(glue);
  builds.push({ glue, size: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length, withCopy, noCopy, copy: [], bare: [] });
}
const native = [];
for (let r = 0; r < reps; r++) {
  for (const b of builds) {
    b.copy.push(cpuUs(() => b.withCopy.validate(block)));
    b.bare.push(cpuUs(b.noCopy));
  }
  const out = execFileSync(kilnBench, [
    '--benchmark_filter=^BM_KilnValidateShortNames/10000$',
    '--benchmark_repetitions=1',
    '--benchmark_format=json',
  ]);
  const x = JSON.parse(out).benchmarks.find((y) => y.run_type === 'iteration');
  native.push(x.cpu_time * { ns: 1e-3, us: 1, ms: 1e3 }[x.time_unit]);
}
const nat = median(native);
console.log(`block: ${block.length} bytes; CPU time per validation, median of ${reps} interleaved repetitions`);
console.log(`native Parse (kiln_bench BM_KilnValidateShortNames/10000): ${nat.toFixed(0)} us`);
for (const b of builds) {
  const c = median(b.copy);
  const n = median(b.bare);
  console.log(
    `${b.glue} (${b.size} bytes, gzip ${b.gzip}): validate() ${c.toFixed(0)} us (wasm / native ${(c / nat).toFixed(2)}), ` +
      `without the copy ${n.toFixed(0)} us (${(n / nat).toFixed(2)})`,
  );
}
