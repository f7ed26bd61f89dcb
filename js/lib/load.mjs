// Loading: instantiates the WebAssembly module (dist/kiln-wasm.mjs, the
// Emscripten glue with the module inside) once, and keeps that instance
// until the module stops (then the next load() makes a fresh one).
import createKilnModule from '../dist/kiln-wasm.mjs';
import { Kiln } from './abi.mjs';

let cached = null;
let cachedInstance = null;

// The instance k's module stopped: forget it if it is the cached one.
function stopped(k) {
  if (cached !== null && cachedInstance === k) {
    cached = null;
    cachedInstance = null;
  }
}

// Instantiates the WebAssembly module once; every call returns the same
// instance (a fresh one after the module stopped for lack of memory).
export function load() {
  if (cached === null) {
    const p = createKilnModule().then(
      (m) => {
        const k = new Kiln(m, stopped);
        if (cached === p) cachedInstance = k;
        return k;
      },
      (e) => {
        if (cached === p) cached = null;
        throw e;
      },
    );
    cached = p;
  }
  return cached;
}
