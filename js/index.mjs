// kiln for JavaScript: the Kiln v2 validator built to WebAssembly from the
// same C++ core as `kiln validate`, through its C ABI (kiln/kiln_c.h).
// Node (import or require), a browser page and a Web Worker; no bundler.
// The API is described in index.d.ts and README.md; this file only names
// it. The code is in lib/ (docs/javascript.md, "Layout"):
//   lib/guard.mjs   input hardening (every caller value checked, made own)
//   lib/abi.mjs     the C ABI's structs and calls over the module
//   lib/stream.mjs  the streaming validator and validateStream's reading
//   lib/sniff.mjs   detectFormat (magic numbers)
//   lib/load.mjs    load(): one instance of the module
//   lib/policy.mjs  every size and limit the JavaScript uses
// The block map's wrapper is the package's `kiln/map` entry (map.mjs).
import { load } from './lib/load.mjs';

export { load };
export default { load };
