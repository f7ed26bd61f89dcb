// The block map (kiln/kiln_c_map.h) for JavaScript: the description
// `kiln inspect --map` draws, made by the same C++ code in the WebAssembly
// module. The package's `kiln/map` entry (map.d.ts); the browser page (web/)
// draws it.
//
//   import { loadBlockMap } from 'kiln/map';
//   const map = await loadBlockMap();
//   const m = map.describe(prefix, fileSize, verdict);
//
// prefix: the file's first bytes (Uint8Array; its first payload_base bytes
// give names and payload ranges), fileSize: the file's length (number or
// bigint), verdict: null for a valid block, or the error of a rejection
// ({class, rule, offset, tensor, message}, as validate gives it). Returns
// {file_size, header, regions: [{kind, begin, end, tensor, label}], mark:
// {offset, tensor, field, verdict} | null, svg}; every offset is a bigint,
// labels are escaped as `kiln validate` escapes names, and svg is the map
// drawn by the library (kiln_block_map_svg), the SVG `kiln inspect --map`
// writes: the page shows it, so the map has one drawing.
import { load } from './lib/load.mjs';
import { normaliseMap as normalise } from './lib/mapjson.mjs';

// The package's one instance: the map adds no second copy of the module.
export function loadBlockMap() {
  return load().then((kiln) => ({
    describe: (prefix, fileSize, verdict) => normalise(kiln.blockMap(prefix, fileSize, verdict)),
  }));
}
