// Every size and limit the package's JavaScript uses, in one place. The
// values that mirror the C++ core are checked against it by
// test/policy.test.mjs (the header it names beside each); the others are
// the package's own choices. No other file of the package (or of the page,
// web/, whose own choices are in web/policy.js) writes a limit as a literal:
// test/policy.test.mjs fails on one.
//
// The caller's validation limits (maxTensors, maxNameBytes, maxBlockBytes)
// are not here: their defaults are the C ABI's (kiln_options_init), read
// from the WebAssembly module.

// The Kiln header's size in bytes: core/include/kiln/block.h kHeaderSize.
export const HEADER_BYTES = 64;

// detectFormat looks at most this far (pass at least this many first bytes).
export const SNIFF_BYTES = 512;

// The largest safetensors header length detectFormat takes for one:
// formats/include/kiln/formats/policy.h kMaxSafetensorsHeaderBytes.
export const SAFETENSORS_MAX_HEADER_BYTES = 100_000_000n;

// Chunks are copied into the module's memory through one staging buffer of
// this size, however large the chunk the caller hands over.
export const STAGE_BYTES = 1 << 20;

// The largest KilnBuffer allocate() makes: a WebAssembly module's memory
// is 32-bit addressed (4 GiB at most, less what the module itself holds, so
// a length this large fails as "does not fit").
export const MAX_BUFFER_BYTES = 0xffff_ffff;

// The public view: every instance's `policy` (index.d.ts, Policy).
export const policy = Object.freeze({
  headerBytes: HEADER_BYTES,
  sniffBytes: SNIFF_BYTES,
  safetensorsMaxHeaderBytes: SAFETENSORS_MAX_HEADER_BYTES,
  stageBytes: STAGE_BYTES,
});
