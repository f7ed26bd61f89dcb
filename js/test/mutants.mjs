// Mutants of Kiln v2 blocks for the random-access tests (js/test and
// tests/browser): deterministic (xorshift32), so every run sees the same
// inputs. Not a test file itself.
// xorshift32: the same mutants on every run.
export function rng(seed) {
  let s = seed >>> 0 || 1;
  return (n) => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s % n;
  };
}

// One mutant: bytes set, flipped, cut or appended, often in the header and
// directory, where the rules look.
export function mutate(bytes, r) {
  let b = bytes.slice();
  const edits = 1 + r(3);
  for (let k = 0; k < edits; k++) {
    const kind = r(6);
    const near = b.length > 0 ? r(Math.min(b.length, r(2) === 0 ? 128 : b.length)) : 0;
    if (kind <= 1 && b.length > 0) b[near] = r(256);
    else if (kind === 2 && b.length > 0) b[near] ^= 1 << r(8);
    else if (kind === 3 && b.length > 0) b = b.slice(0, r(b.length));
    else if (kind === 4) {
      const more = new Uint8Array(b.length + 1 + r(8));
      more.set(b);
      if (r(2) === 0) more[b.length] = 1;
      b = more;
    } else if (b.length >= 8) {
      // A u64 field of the header set to a small or a huge value.
      const at = 8 * (1 + r(7));
      if (at + 8 <= b.length) new DataView(b.buffer).setBigUint64(at, r(2) === 0 ? BigInt(r(4096)) : 1n << BigInt(r(64)), true);
    }
  }
  return b;
}
