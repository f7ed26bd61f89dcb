// kiln for JavaScript, CommonJS entry: the same API as index.mjs, which it
// imports on the first load() (load() is asynchronous anyway).
'use strict';

let esm = null;
function entry() {
  if (esm === null) esm = import('./index.mjs');
  return esm;
}

// Instantiates the WebAssembly module once (see index.d.ts).
function load() {
  return entry().then((m) => m.load());
}

// As index.mjs: a named load and a default export holding it.
module.exports = { load, default: { load } };
