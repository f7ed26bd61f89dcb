// The block map (kiln/kiln_c_map.h) for JavaScript: the description
// `kiln inspect --map` draws, made by the same C++ code in the WebAssembly
// module. Used by the browser page (web/); not part of the package's API.
//
//   const map = await loadBlockMap();
//   const m = map.describe(prefix, fileSize, verdict);
//
// prefix: the file's first bytes (Uint8Array; its first payload_base bytes
// give names and payload ranges), fileSize: the file's length (number or
// bigint), verdict: null for a valid block, or the error of a rejection
// ({class, rule, offset, tensor, message}, as validate gives it). Returns
// {file_size, header, regions: [{kind, begin, end, tensor, label}], mark:
// {offset, tensor, field, verdict} | null}; every offset is a bigint, and
// labels are escaped as `kiln validate` escapes names.
import createKilnModule from '../dist/kiln-wasm.mjs';

const CLASS_CODES = { FRAME: 1, TYPE: 2, LIMIT: 3, UTF8: 4 };
const NO_TENSOR = 0xffffffff;
const MESSAGE_CAPACITY = 1024;
const OK = 0;
const utf8 = new TextDecoder('utf-8', { fatal: false });
const encoder = new TextEncoder();

function parseLayout(text) {
  const out = new Map();
  for (const item of text.split(';')) {
    const eq = item.indexOf('=');
    if (eq > 0) out.set(item.slice(0, eq), Number(item.slice(eq + 1)));
  }
  return out;
}

function cString(heap, ptr) {
  let end = ptr;
  while (heap[end] !== 0) end++;
  return utf8.decode(heap.subarray(ptr, end));
}

// Offsets come as JSON numbers (exact below 2^53) or decimal strings.
function big(v) {
  return typeof v === 'string' ? BigInt(v) : BigInt(v);
}

let modulePromise = null;

export function loadBlockMap() {
  if (modulePromise === null) modulePromise = createKilnModule();
  return modulePromise.then((m) => new BlockMapper(m));
}

class BlockMapper {
  #m;
  #layout;

  constructor(m) {
    this.#m = m;
    this.#layout = parseLayout(cString(m.HEAPU8, m._kiln_js_layout()));
  }

  #field(name) {
    const v = this.#layout.get(name);
    if (v === undefined) throw new Error(`kiln map: the module does not describe ${name}`);
    return v;
  }

  describe(prefix, fileSize, verdict) {
    if (!(prefix instanceof Uint8Array)) throw new TypeError('kiln map: prefix must be a Uint8Array');
    const size = BigInt(fileSize);
    if (size < BigInt(prefix.length)) throw new RangeError('kiln map: prefix longer than the file');
    const m = this.#m;
    const prefixPtr = m._malloc(Math.max(prefix.length, 1));
    const errPtr = m._malloc(this.#field('kiln_error'));
    const outPtr = m._malloc(8);
    if (prefixPtr === 0 || errPtr === 0 || outPtr === 0) {
      for (const p of [prefixPtr, errPtr, outPtr]) if (p !== 0) m._free(p);
      throw new RangeError('kiln map: out of memory');
    }
    try {
      m.HEAPU8.set(prefix, prefixPtr);
      let verdictPtr = 0;
      if (verdict) {
        verdictPtr = errPtr;
        const h = m.HEAPU8;
        h.fill(0, errPtr, errPtr + this.#field('kiln_error'));
        const dv = new DataView(h.buffer);
        dv.setInt32(errPtr + this.#field('kiln_error.error_class'), CLASS_CODES[verdict.class] ?? 0, true);
        const rule = encoder.encode(String(verdict.rule)).subarray(0, 3);
        h.set(rule, errPtr + this.#field('kiln_error.rule'));
        dv.setBigUint64(errPtr + this.#field('kiln_error.offset'), BigInt(verdict.offset), true);
        dv.setUint32(errPtr + this.#field('kiln_error.tensor'), verdict.tensor ?? NO_TENSOR, true);
        const message = encoder.encode(String(verdict.message ?? '')).subarray(0, MESSAGE_CAPACITY - 1);
        h.set(message, errPtr + this.#field('kiln_error.message'));
        dv.setUint32(errPtr + this.#field('kiln_error.message_length'), message.length, true);
      }
      const status = m._kiln_block_map_new(prefixPtr, prefix.length, size, verdictPtr, outPtr);
      if (status !== OK) throw new RangeError(`kiln map: kiln_block_map_new refused the arguments (status ${status})`);
      const map = new DataView(m.HEAPU8.buffer).getUint32(outPtr, true);
      try {
        const json = JSON.parse(cString(m.HEAPU8, m._kiln_block_map_json(map, 0)));
        return normalise(json);
      } finally {
        m._kiln_block_map_free(map);
      }
    } finally {
      m._free(prefixPtr);
      m._free(errPtr);
      m._free(outPtr);
    }
  }
}

function normalise(json) {
  const h = json.header;
  return {
    fileSize: big(json.file_size),
    header: h === null ? null : {
      flags: h.flags,
      tensorCount: h.tensor_count,
      nameBytes: h.name_bytes,
      payloadBytes: big(h.payload_bytes),
      directoryBytes: big(h.directory_bytes),
      payloadBase: big(h.payload_base),
      blockLength: big(h.block_length),
    },
    regions: json.regions.map((r) => ({
      kind: r.kind, begin: big(r.begin), end: big(r.end), tensor: r.tensor, label: r.label,
    })),
    mark: json.mark === null ? null : {
      offset: big(json.mark.offset), tensor: json.mark.tensor, field: json.mark.field, verdict: json.mark.verdict,
    },
  };
}
