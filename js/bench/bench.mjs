// The npm package's numbers for docs/performance.md, in one run:
//   1. validate() of a block of 10,000 named f32 tensors (names
//      t<base 36 index>, as BM_KilnValidateShortNames) in the WebAssembly
//      build, in CPU time (user + system), with the copy into the module and
//      without it (kiln_validate on bytes already in the module), beside
//      the native Parse of the same block in the same run, interleaved,
//      when KILN_BENCH is given (kiln_bench's BM_KilnValidateShortNames/10000,
//      CPU time): medians and the wasm / native ratio. Then, for scale,
//      `kiln validate` in wall time (one process validating the file R + 1
//      times minus one validating it once, per validation: the file's open
//      and map included)
//   2. validateStream() of a 1 GiB block generated on the fly (nothing is
//      written to disk), in a fresh Node process: time and that process's
//      peak RSS, for a block whose payload is all tensors (covered bytes
//      are not read) and one whose payload is one uncovered gap (every byte
//      checked, P2)
//   3. the package's size (the glue with the module inside, raw and gzip)
//      and the time from a fresh process's import to a loaded module
// Usage: node js/bench/bench.mjs KILN_BINARY [KILN_BENCH]
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import createKilnModule from '../dist/kiln-wasm.mjs';
import { load } from '../index.mjs';
import { directory } from '../tools/block.mjs';

const here = fileURLToPath(new URL('..', import.meta.url));
const [kilnBinary, second] = process.argv.slice(2);
const mode = kilnBinary === '--stream-only' ? kilnBinary : '';
const kilnBench = second;


function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

const kiln = await load();
const results = {};

if (mode !== '--stream-only') {
  // 1. 10,000 tensors, f32 [16] each, names t<base 36 index>.
  const n = 10000;
  const tensors = Array.from({ length: n }, (_, i) => ({ name: `t${i.toString(36)}`, dtype: 1, shape: [16], offset: 64 * i, length: 64 }));
  const dir = directory(tensors, 64 * n);
  const block = new Uint8Array(dir.length + 64 * n);
  block.set(dir);
  if (!kiln.validate(block).ok) throw new Error(`bench block invalid: ${JSON.stringify(kiln.validate(block).error)}`);
  // CPU time (user + system, this process's), not wall time: the machine
  // these numbers come from is shared, and under load a wall time counts
  // the other processes' turns too. wasm and native are timed in the same
  // run, interleaved (wasm, wasm without the copy, native; then again),
  // and each is the median of its repetitions.
  const rounds = 200;
  const reps = 7;
  for (let i = 0; i < 20; i++) kiln.validate(block); // warm up
  const cpuUs = (fn) => {
    const t0 = process.cpuUsage();
    fn();
    const t = process.cpuUsage(t0);
    return (t.user + t.system) / rounds;
  };
  // validate() without the copy: a second instance of the module, the
  // block copied into its memory once, kiln_validate called on it (with
  // the default options, as validate(block) gives them, and no error
  // struct: the block is valid).
  const bare = await createKilnModule();
  const ptr = bare._malloc(block.length);
  if (ptr === 0) throw new Error('bench: no memory for the block');
  bare.HEAPU8.set(block, ptr);
  if (bare._kiln_validate(ptr, block.length, 0, 0) !== 0) throw new Error('bench: kiln_validate rejected the block');
  for (let i = 0; i < 20; i++) bare._kiln_validate(ptr, block.length, 0, 0); // warm up
  const nativeParse = () => {
    const out = execFileSync(kilnBench, [
      '--benchmark_filter=^BM_KilnValidateShortNames/10000$',
      '--benchmark_repetitions=1',
      '--benchmark_format=json',
    ]);
    const b = JSON.parse(out).benchmarks.find((x) => x.run_type === 'iteration');
    return b.cpu_time * { ns: 1e-3, us: 1, ms: 1e3 }[b.time_unit];
  };
  const wasm = [];
  const wasmNoCopy = [];
  const native = [];
  for (let r = 0; r < reps; r++) {
    wasm.push(
      cpuUs(() => {
        for (let i = 0; i < rounds; i++) kiln.validate(block);
      }),
    );
    wasmNoCopy.push(
      cpuUs(() => {
        for (let i = 0; i < rounds; i++) bare._kiln_validate(ptr, block.length, 0, 0);
      }),
    );
    if (kilnBench) native.push(nativeParse());
  }
  bare._free(ptr);
  results.wasm10k = median(wasm);
  results.wasm10kNoCopy = median(wasmNoCopy);
  results.blockBytes = block.length;
  console.log(
    `validate, 10,000 tensors (${results.blockBytes} bytes), CPU time per call, median of ${reps}: ` +
      `wasm validate() ${results.wasm10k.toFixed(0)} us (copy into the module included), ` +
      `wasm kiln_validate on bytes already in the module ${results.wasm10kNoCopy.toFixed(0)} us`,
  );
  if (kilnBench) {
    results.nativeParse10k = median(native);
    console.log(
      `native Parse in memory (kiln_bench BM_KilnValidateShortNames/10000, CPU time, median of ${reps}, ` +
        `interleaved with the wasm runs): ${results.nativeParse10k.toFixed(0)} us; ` +
        `wasm / native CPU time: ${(results.wasm10k / results.nativeParse10k).toFixed(2)} with the copy, ` +
        `${(results.wasm10kNoCopy / results.nativeParse10k).toFixed(2)} without`,
    );
  }

  // The command, for scale (wall time: one process, its open and map of
  // each file included).
  const tmp = mkdtempSync(join(tmpdir(), 'kiln-bench-'));
  try {
    const file = join(tmp, 'b10k.klnt');
    writeFileSync(file, block);
    const run = (times) => {
      const t0 = process.hrtime.bigint();
      execFileSync(kilnBinary, ['validate', ...Array(times).fill(file)], { stdio: ['ignore', 'ignore', 'inherit'] });
      return Number(process.hrtime.bigint() - t0) / 1e3;
    };
    run(1);
    const cmd = [];
    for (let r = 0; r < 5; r++) cmd.push((run(rounds + 1) - run(1)) / rounds);
    results.native10k = median(cmd);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  console.log(`native kiln validate, wall time per file (open and map included): ${results.native10k.toFixed(0)} us`);
}

// 2. 1 GiB streamed: chunks of 1 MiB generated as they are read.
const GiB = 1 << 30;
const MiB = 1 << 20;
async function streamGiB(label, tensors) {
  const dir = directory(tensors, GiB);
  const zeros = new Uint8Array(MiB);
  async function* source() {
    yield dir;
    for (let sent = 0; sent < GiB; sent += MiB) yield zeros;
  }
  const rssBefore = process.memoryUsage().rss;
  const t0 = process.hrtime.bigint();
  const r = await kiln.validateStream(source());
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  if (!r.ok) throw new Error(`${label}: ${JSON.stringify(r.error)}`);
  const peak = process.resourceUsage().maxRSS * 1024;
  console.log(
    `validateStream, 1 GiB (${label}): ${s.toFixed(2)} s, ${(GiB / MiB / s).toFixed(0)} MiB/s, ` +
      `peak RSS ${(peak / MiB).toFixed(1)} MiB (RSS before ${(rssBefore / MiB).toFixed(1)} MiB)`,
  );
}
if (mode !== '--stream-only') {
  // In a fresh process, so that its peak RSS is the stream's alone.
  const out = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--stream-only'], { stdio: 'inherit' });
  if (out.status !== 0) process.exit(1);
} else {
  // 1,024 u8 tensors of 1 MiB: the payload is covered, not read.
  await streamGiB(
    '1,024 tensors of 1 MiB',
    Array.from({ length: 1024 }, (_, i) => ({ name: `t${i}`, dtype: 2, shape: [MiB], offset: MiB * i, length: MiB })),
  );
  // One 64-byte tensor, then 1 GiB - 64 bytes of gap: every byte is checked (P2).
  await streamGiB('one uncovered gap', [{ name: 'w', dtype: 2, shape: [64], offset: 0, length: 64 }]);
}

if (mode !== '--stream-only') {
  // 3. Size and load time.
  const glue = readFileSync(join(here, 'dist/kiln-wasm.mjs'));
  const api = readFileSync(join(here, 'index.mjs'));
  console.log(
    `package: dist/kiln-wasm.mjs ${glue.length} bytes (gzip ${gzipSync(glue, { level: 9 }).length}), ` +
      `index.mjs ${api.length} bytes (gzip ${gzipSync(api, { level: 9 }).length})`,
  );
  const loads = [];
  for (let i = 0; i < 7; i++) {
    const out = spawnSync(process.execPath, [
      '--input-type=module',
      '-e',
      `const t0 = performance.now(); const { load } = await import(${JSON.stringify(join(here, 'index.mjs'))}); await load(); console.log(performance.now() - t0);`,
    ]);
    loads.push(Number(String(out.stdout).trim()));
  }
  console.log(`load: import + instantiate in a fresh Node process, median of 7: ${median(loads).toFixed(1)} ms`);
}
