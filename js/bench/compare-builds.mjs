// Two or more builds of the WebAssembly module side by side, in one run:
// the CPU time (user + system) of validate() on the 10,000-tensor block of
// bench.mjs part 1, with the copy into the module and without it (the
// block in a KilnBuffer), for each
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
import { block as blockWithPayload, namedTensors } from '../tools/block.mjs';

const [kilnBench, ...glues] = process.argv.slice(2);
if (!kilnBench || glues.length === 0) {
  console.error('usage: node js/bench/compare-builds.mjs KILN_BENCH GLUE.mjs...');
  process.exit(2);
}

// The block of bench.mjs part 1: 10,000 f32 [16] tensors named
// t<base 36 index>, 64 bytes each, in payload order.
function block10k() {
  return blockWithPayload(namedTensors(10000, 1, [16]), 64 * 10000);
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
  // Without the copy: the block in a KilnBuffer (allocate()), validated
  // where it lies.
  const buf = withCopy.allocate(block.length);
  buf.bytes().set(block);
  const noCopy = () => withCopy.validate(buf);
  if (!noCopy().ok) throw new Error(`${glue}: the block in a KilnBuffer is invalid`);
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
      `KilnBuffer (no copy) ${n.toFixed(0)} us (${(n / nat).toFixed(2)})`,
  );
}
