// The differential test of the WebAssembly build against the native one:
// bit-flipped and truncated copies of every valid golden case (a fixed
// seed, so every run checks the same blocks) go through the package's
// validate() and through `kiln validate --json`; the verdicts must agree on
// ok, class, rule, offset, tensor and message. Each mutant also goes through
// the package's stream validator in chunks of a random size, which must give
// the native verdict's ok, class, rule, offset and tensor, except where
// docs/spec.md (section 5.1) says a stream differs: a block that breaks a
// rule, followed by trailing bytes, is that rule when streamed.
//
// Usage: node js/tools/differential.mjs KILN_BINARY [--count N] [--seed S]
//   --count   mutants in all (default 3000), spread over the valid cases
// Exit status 0 when every verdict agrees, 1 otherwise, 2 on usage or I/O.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { load } from '../index.mjs';

const args = process.argv.slice(2);
const kilnBinary = args[0];
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i < 0 ? fallback : Number(args[i + 1]);
};
const count = option('--count', 3000);
const seed = option('--seed', 1);
if (!kilnBinary || !Number.isSafeInteger(count) || count < 1 || !Number.isSafeInteger(seed)) {
  console.error('usage: node js/tools/differential.mjs KILN_BINARY [--count N] [--seed S]');
  process.exit(2);
}

// mulberry32: a small deterministic generator (the same mutants every run).
function generator(s) {
  let a = s >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const golden = fileURLToPath(new URL('../../golden/', import.meta.url));
const valid = readFileSync(`${golden}manifest.tsv`, 'ascii')
  .split('\n')
  .filter((l) => l !== '' && !l.startsWith('#'))
  .slice(1)
  .map((l) => l.split('\t'))
  .filter((row) => row[1] === 'ok')
  .map(([name]) => ({ name, bytes: new Uint8Array(readFileSync(`${golden}cases/${name}.klnt`)) }));

// Mutants: mostly single-bit flips (every region of the block), some
// truncations, and flips in the header (where one bit changes sizes).
const random = generator(seed);
const mutants = [];
for (let i = 0; i < count; i++) {
  const base = valid[i % valid.length];
  const bytes = base.bytes.slice();
  const pick = random();
  let how;
  if (pick < 0.15) {
    const length = Math.floor(random() * bytes.length);
    mutants.push({ how: `${base.name} cut to ${length}`, bytes: bytes.subarray(0, length) });
    continue;
  } else if (pick < 0.3) {
    const at = Math.floor(random() * Math.min(64, bytes.length));
    const bit = Math.floor(random() * 8);
    bytes[at] ^= 1 << bit;
    how = `${base.name} header bit ${at}.${bit}`;
  } else {
    const at = Math.floor(random() * bytes.length);
    const bit = Math.floor(random() * 8);
    bytes[at] ^= 1 << bit;
    how = `${base.name} bit ${at}.${bit}`;
  }
  mutants.push({ how, bytes });
}

const dir = mkdtempSync(join(tmpdir(), 'kiln-differential-'));
let status = 0;
try {
  const paths = mutants.map((m, i) => {
    const p = join(dir, `m${i}.klnt`);
    writeFileSync(p, m.bytes);
    return p;
  });
  const native = new Map();
  for (let at = 0; at < paths.length; at += 500) {
    const batch = paths.slice(at, at + 500);
    let out;
    try {
      out = execFileSync(kilnBinary, ['validate', '--json', ...batch], { maxBuffer: 1 << 28 });
    } catch (e) {
      if (e.status !== 1) throw e; // 1: some block is invalid
      out = e.stdout;
    }
    for (const item of JSON.parse(out)) native.set(item.file, item);
  }

  const kiln = await load();
  const fields = ['ok', 'class', 'rule', 'offset', 'tensor', 'message'];
  let agree = 0;
  let rejected = 0;
  const shown = [];
  let streamAgree = 0;
  const chunkRandom = generator(seed + 1);
  const streamed = (bytes) => {
    const size = 1 + Math.floor(chunkRandom() * 300);
    const v = kiln.createStreamValidator();
    try {
      for (let at = 0; at < bytes.length; at += size) {
        if (v.feed(bytes.subarray(at, at + size)) === 'rejected') break;
      }
      return v.finish();
    } finally {
      v.free();
    }
  };
  mutants.forEach((m, i) => {
    const n = native.get(paths[i]);
    const w = kiln.validate(m.bytes);
    const want = n.ok ? { ok: true } : { ok: false, class: n.class, rule: n.rule, offset: n.offset, tensor: n.tensor ?? null, message: n.message };
    const got = w.ok ? { ok: true } : { ok: false, ...w.error };
    if (!got.ok) rejected++;
    if (fields.every((f) => want[f] === got[f])) agree++;
    else if (shown.length < 10) shown.push(`${m.how}:\n  native ${JSON.stringify(want)}\n  wasm   ${JSON.stringify(got)}`);
    // The stream: the native verdict, or the verdict on the block's own
    // bytes when the native one is trailing bytes (H8 before the end).
    let streamWant = want;
    if (!want.ok && want.rule === 'H8' && want.offset < m.bytes.length) {
      const own = kiln.validate(m.bytes.subarray(0, want.offset));
      if (!own.ok) streamWant = { ok: false, ...own.error };
    }
    const s = streamed(m.bytes);
    const sGot = s.ok ? { ok: true } : { ok: false, ...s.error };
    if (fields.slice(0, 5).every((f) => streamWant[f] === sGot[f])) streamAgree++;
    else if (shown.length < 10) shown.push(`${m.how} (streamed):\n  want   ${JSON.stringify(streamWant)}\n  stream ${JSON.stringify(sGot)}`);
  });
  for (const s of shown) console.log(s);
  console.log(
    `differential (seed ${seed}): ${agree}/${mutants.length} mutants of ${valid.length} valid golden cases agree ` +
      `on ${fields.join(', ')} (${rejected} rejected, ${mutants.length - rejected} still valid)`,
  );
  console.log(
    `streamed in chunks of 1..300 bytes: ${streamAgree}/${mutants.length} agree on ${fields.slice(0, 5).join(', ')}`,
  );
  if (agree !== mutants.length || streamAgree !== mutants.length) status = 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(status);
