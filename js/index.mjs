// kiln for JavaScript: the Kiln v2 validator built to WebAssembly from the
// same C++ core as `kiln validate`, through its C ABI (kiln/kiln_c.h).
// Node (import or require), a browser page and a Web Worker; no bundler.
// The API is described in index.d.ts and README.md.
import createKilnModule from './dist/kiln-wasm.mjs';

// kiln_status
const OK = 0;
const INVALID = 1;
const NEED_MORE = 2;
const BAD_ARGUMENT = 3;
const NO_MEMORY = 4;
const INTERNAL_ERROR = 5;
const BUFFER_TOO_SMALL = 6;
const READ_FAILED = 7;

const NO_TENSOR = 0xffffffff;
const MESSAGE_CAPACITY = 1024; // KILN_MESSAGE_CAPACITY
const U64_MAX = (1n << 64n) - 1n;
// Chunks are copied into the module's memory through one staging buffer of
// this size, however large the chunk the caller hands over.
const STAGE_BYTES = 1 << 20;
const OPTION_KEYS = new Set(['prefix', 'maxTensors', 'maxNameBytes', 'maxBlockBytes']);
const RANGE_OPTION_KEYS = new Set(['mergeGap', 'maxRange']);
const QUANT_SCHEMES = [null, 'per-axis', 'grouped'];

const utf8 = new TextDecoder('utf-8', { fatal: false });
const utf8Strict = new TextDecoder('utf-8', { fatal: true });

// The errors this file throws on purpose; anything else escaping a call
// into the module means the module itself stopped.
const thrownHere = new WeakSet();
function own(e) {
  thrownHere.add(e);
  return e;
}

function stateError(message) {
  const e = new Error(`kiln: ${message}`);
  e.code = 'ERR_KILN_STATE';
  return own(e);
}

// The engine's own TypedArray internals, taken once: a caller's object is
// read through these (its internal slots), never through its own getters
// (a subclass may override `length`, a Proxy may answer anything).
const U8 = Uint8Array;
const TypedArrayPrototype = Object.getPrototypeOf(Uint8Array.prototype);
function intrinsic(name) {
  const get = Object.getOwnPropertyDescriptor(TypedArrayPrototype, name).get;
  return (a) => Reflect.apply(get, a, []);
}
const typedArrayName = intrinsic(Symbol.toStringTag); // undefined for anything but a typed array
const typedArrayBuffer = intrinsic('buffer');
const typedArrayByteOffset = intrinsic('byteOffset');
const typedArrayByteLength = intrinsic('byteLength');
const typedArraySet = TypedArrayPrototype.set;

function isUint8Array(x) {
  return typedArrayName(x) === 'Uint8Array';
}

// A Uint8Array of the package's own over exactly the bytes `bytes` holds
// (read from its internal slots), or a TypeError: not a Uint8Array (a Proxy
// of one is not one), or its buffer detached (transferred).
function byteView(bytes, where) {
  if (!isUint8Array(bytes)) {
    const what = bytes === null ? 'null' : typeof bytes !== 'object' ? typeof bytes : typedArrayName(bytes) ?? 'an object that is not a Uint8Array';
    throw new TypeError(`kiln: ${where}: expected a Uint8Array, got ${what}`);
  }
  const buffer = typedArrayBuffer(bytes);
  const offset = typedArrayByteOffset(bytes);
  const length = typedArrayByteLength(bytes);
  try {
    return new U8(buffer, offset, length);
  } catch (e) {
    // A detached buffer: the only way a view of the slots' own values fails.
    if (!(e instanceof TypeError)) throw e;
    throw new TypeError(`kiln: ${where}: the Uint8Array's buffer is detached (transferred elsewhere)`);
  }
}

function readLimit(value, name, where) {
  if (value === undefined) return undefined;
  if (typeof value === 'bigint') {
    if (value < 0n || value > U64_MAX) {
      throw new RangeError(`kiln: ${where}: ${name} ${value} is not in [0, 2^64-1]`);
    }
    return value;
  }
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new RangeError(`kiln: ${where}: ${name} ${value} is not an integer in [0, 2^53-1] (pass a bigint for more)`);
    }
    return BigInt(value);
  }
  throw new TypeError(`kiln: ${where}: ${name} must be a number or a bigint, got ${value === null ? 'null' : typeof value}`);
}

// { prefix, maxTensors, maxNameBytes, maxBlockBytes } checked: unknown keys
// and wrong types are TypeErrors, values out of range RangeErrors.
function readOptions(options, where) {
  if (options === undefined || options === null) return {};
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`kiln: ${where}: options must be an object, got ${Array.isArray(options) ? 'an array' : typeof options}`);
  }
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.has(key)) {
      throw new TypeError(`kiln: ${where}: unknown option ${JSON.stringify(key)} (known: ${[...OPTION_KEYS].join(', ')})`);
    }
  }
  const { prefix } = options;
  if (prefix !== undefined && typeof prefix !== 'boolean') {
    throw new TypeError(`kiln: ${where}: prefix must be a boolean, got ${prefix === null ? 'null' : typeof prefix}`);
  }
  return {
    prefix: prefix === true,
    maxTensors: readLimit(options.maxTensors, 'maxTensors', where),
    maxNameBytes: readLimit(options.maxNameBytes, 'maxNameBytes', where),
    maxBlockBytes: readLimit(options.maxBlockBytes, 'maxBlockBytes', where),
  };
}

// "kiln_error=1064;kiln_error.offset=8;..." from kiln_js_layout.
function parseLayout(text) {
  const out = new Map();
  for (const item of text.split(';')) {
    if (item === '') continue;
    const eq = item.indexOf('=');
    out.set(item.slice(0, eq), Number(item.slice(eq + 1)));
  }
  return out;
}

// Offsets, tensor indexes and counts that fit in a u32 are numbers; u64
// values are bigints (exact). An error offset and `consumed` count bytes the
// caller supplied, so they are below 2^53 and are numbers (checked).
function exactNumber(value, what) {
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw own(new RangeError(`kiln: ${what} ${value} exceeds 2^53-1`));
  }
  return Number(value);
}

// A rejection as validate gives it ({class, rule, offset, tensor,
// message}), checked and made the package's own bytes for kiln_error.
const CLASS_CODES = new Map([['FRAME', 1], ['TYPE', 2], ['LIMIT', 3], ['UTF8', 4]]);
function readVerdict(verdict) {
  if (typeof verdict !== 'object') throw new TypeError('kiln: blockMap: verdict must be null or an error object');
  const classCode = CLASS_CODES.get(verdict.class);
  if (classCode === undefined) throw new TypeError('kiln: blockMap: verdict.class must be FRAME, TYPE, LIMIT or UTF8');
  const rule = String(verdict.rule);
  if (!/^[A-Z][0-9]{1,2}$/.test(rule)) throw new TypeError('kiln: blockMap: verdict.rule must be a rule id such as D7');
  const offset = BigInt(verdict.offset); // a RangeError for a fraction
  if (offset < 0n || offset > U64_MAX) throw new RangeError('kiln: blockMap: verdict.offset out of range');
  const tensor = verdict.tensor == null ? NO_TENSOR : verdict.tensor;
  if (!Number.isInteger(tensor) || tensor < 0 || tensor > NO_TENSOR) throw new RangeError('kiln: blockMap: verdict.tensor out of range');
  const message = new TextEncoder().encode(String(verdict.message ?? '')).subarray(0, MESSAGE_CAPACITY - 1);
  return { classCode, rule: new TextEncoder().encode(rule), offset, tensor, message };
}

// The options of validateRanges/validateBlob: Options plus mergeGap and
// maxRange (numbers or bigints, as limits). Returns [options, range options].
function splitRangeOptions(options, where) {
  if (options === undefined || options === null) return [{}, {}];
  if (typeof options !== 'object' || Array.isArray(options)) return [readOptions(options, where), {}];
  const base = {};
  const ranges = {};
  for (const key of Object.keys(options)) {
    if (RANGE_OPTION_KEYS.has(key)) ranges[key] = readLimit(options[key], key, where);
    else base[key] = options[key];
  }
  return [readOptions(base, where), ranges];
}

// A file size: an integer number in [0, 2^53-1] or a bigint in that range
// (every offset asked for is then an exact number).
function readFileSize(value, where) {
  const n = readLimit(value, 'size', where);
  if (n === undefined) throw new TypeError(`kiln: ${where}: size must be a number or a bigint, got undefined`);
  if (n > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`kiln: ${where}: size ${n} exceeds 2^53-1`);
  return n;
}

// The reader failed or misbehaved: not a verdict.
function ioError(where, message, cause) {
  const e = new Error(`kiln: ${where}: ${message}`, cause === undefined ? undefined : { cause });
  e.code = 'ERR_KILN_IO';
  return own(e);
}

class Kiln {
  #m;
  #layout;
  #broken = null;
  #err; // kiln_error
  #verdict; // kiln_error: blockMap's verdict argument
  #opts; // kiln_options
  #hdr; // kiln_header
  #tensor; // kiln_tensor
  #word; // a size_t / pointer out-parameter
  #word2; // a second one (kiln_ranges_next, kiln_ranges_read)
  #ropts; // kiln_range_options
  #stage = 0; // STAGE_BYTES, allocated on first use
  #defaults; // the format's maxima from kiln_options_init

  constructor(m) {
    this.#m = m;
    const layoutPtr = m._kiln_js_layout();
    this.#layout = parseLayout(this.#cString(layoutPtr));
    const size = (name) => {
      const v = this.#layout.get(name);
      if (v === undefined) throw own(new Error(`kiln: the module does not describe ${name}`));
      return v;
    };
    // Every struct the module writes carries its struct_size, set once
    // here (the module never changes it).
    const sized = (name) => {
      const p = this.#malloc(size(name));
      this.#heap().fill(0, p, p + size(name));
      this.#view().setUint32(p + size(`${name}.struct_size`), size(name), true);
      return p;
    };
    this.#err = sized('kiln_error');
    this.#verdict = sized('kiln_error');
    this.#opts = this.#malloc(size('kiln_options'));
    this.#hdr = sized('kiln_header');
    this.#tensor = sized('kiln_tensor');
    this.#word = this.#malloc(8);
    this.#word2 = this.#malloc(8);
    this.#ropts = this.#malloc(size('kiln_range_options'));
    if (m._kiln_options_init(this.#opts) !== OK) throw new Error('kiln: kiln_options_init failed');
    const dv = this.#view();
    this.#defaults = {
      maxTensors: dv.getBigUint64(this.#opts + size('kiln_options.max_tensors'), true),
      maxNameBytes: dv.getBigUint64(this.#opts + size('kiln_options.max_name_bytes'), true),
      maxBlockBytes: dv.getBigUint64(this.#opts + size('kiln_options.max_block_bytes'), true),
    };
    this.version = this.#cString(m._kiln_version());
    this.abiVersion = m._kiln_abi_version();
    Object.freeze(this.#defaults);
  }

  // The module's memory, as it is now (it may grow during any call).
  #heap() {
    return this.#m.HEAPU8;
  }

  #view() {
    const h = this.#heap();
    return new DataView(h.buffer, h.byteOffset, h.byteLength);
  }

  #f(name) {
    return this.#layout.get(name);
  }

  #cString(ptr) {
    if (ptr === 0) return null;
    const h = this.#heap();
    let end = ptr;
    while (h[end] !== 0) end++;
    return utf8.decode(h.subarray(ptr, end));
  }

  #malloc(n) {
    const p = this.#m._malloc(Math.max(n, 1));
    if (p === 0) {
      throw own(new RangeError(`kiln: ${n} bytes do not fit in the WebAssembly module's memory (4 GiB at most); validate a large input with validateStream`));
    }
    return p;
  }

  // Runs a call into the module. fn reads no object of the caller's: every
  // argument is checked and made the package's own value (byteView,
  // readOptions) before #call, so a caller mistake is thrown before it and
  // never reaches the catch below. What does is the module stopping (an
  // abort or a trap; allocation failures are statuses, not stops): then
  // this instance is unusable, and the next load() instantiates a fresh
  // module.
  #call(fn) {
    if (this.#broken) throw stateError(`the WebAssembly module stopped earlier (${this.#broken}); call load() again`);
    try {
      return fn();
    } catch (e) {
      if (thrownHere.has(e)) throw e;
      this.#broken = String(e?.message ?? e);
      if (cached !== null && cachedInstance === this) {
        cached = null;
        cachedInstance = null;
      }
      // The runtime's own abort when it cannot grow the memory says so;
      // anything else (a trap) is a defect in kiln.
      const memory = /\bOOM\b|enlarge memory|out of memory/i.test(this.#broken);
      const out = new Error(
        `kiln: the WebAssembly module stopped (${this.#broken})${memory ? ': it ran out of memory' : ''}. Call load() again for a fresh one`,
      );
      out.code = memory ? 'ERR_KILN_NO_MEMORY' : 'ERR_KILN_INTERNAL';
      throw out;
    }
  }

  // KILN_NO_MEMORY and KILN_INTERNAL_ERROR: not verdicts, thrown.
  // detail: the kiln_error the call filled says more.
  #failure(status, where, detail = '') {
    const e = new Error(
      status === NO_MEMORY
        ? `kiln: ${where}: the WebAssembly module ran out of memory${detail ? ` (${detail})` : ''}`
        : `kiln: ${where}: internal error (status ${status})${detail ? `: ${detail}` : ''}`,
    );
    e.code = status === NO_MEMORY ? 'ERR_KILN_NO_MEMORY' : 'ERR_KILN_INTERNAL';
    return own(e);
  }

  #writeOptions(o) {
    const dv = this.#view();
    const p = this.#opts;
    this.#m._kiln_options_init(p);
    dv.setUint32(p + this.#f('kiln_options.mode'), o.prefix ? 1 : 0, true);
    if (o.maxTensors !== undefined) dv.setBigUint64(p + this.#f('kiln_options.max_tensors'), o.maxTensors, true);
    if (o.maxNameBytes !== undefined) dv.setBigUint64(p + this.#f('kiln_options.max_name_bytes'), o.maxNameBytes, true);
    if (o.maxBlockBytes !== undefined) dv.setBigUint64(p + this.#f('kiln_options.max_block_bytes'), o.maxBlockBytes, true);
    return p;
  }

  #readError() {
    const dv = this.#view();
    const h = this.#heap();
    const p = this.#err;
    const cls = dv.getInt32(p + this.#f('kiln_error.error_class'), true);
    const rulePtr = p + this.#f('kiln_error.rule');
    let ruleEnd = rulePtr;
    while (ruleEnd < rulePtr + 4 && h[ruleEnd] !== 0) ruleEnd++;
    const tensor = dv.getUint32(p + this.#f('kiln_error.tensor'), true);
    const length = dv.getUint32(p + this.#f('kiln_error.message_length'), true);
    const msgPtr = p + this.#f('kiln_error.message');
    return {
      // The C ABI names the class (kiln_error_class_name): no table of its own here.
      class: this.#cString(this.#m._kiln_error_class_name(cls)) || String(cls),
      rule: utf8.decode(h.subarray(rulePtr, ruleEnd)),
      offset: exactNumber(dv.getBigUint64(p + this.#f('kiln_error.offset'), true), 'error offset'),
      tensor: tensor === NO_TENSOR ? null : tensor,
      message: utf8.decode(h.subarray(msgPtr, msgPtr + length)),
    };
  }

  // A size_t or pointer the module stored in #word (wasm32: 4 bytes).
  #wordU32() {
    return this.#view().getUint32(this.#word, true);
  }

  // A uint64_t the module stored in #word.
  #wordU64() {
    return this.#view().getBigUint64(this.#word, true);
  }

  // A caller mistake the C ABI found (options it refused).
  #argumentError(where) {
    const e = this.#readError();
    return own(new RangeError(`kiln: ${where}: ${e.message || 'bad options'}`));
  }

  #readHeader(p) {
    const dv = this.#view();
    const u32 = (f) => dv.getUint32(p + this.#f(`kiln_header.${f}`), true);
    const u64 = (f) => dv.getBigUint64(p + this.#f(`kiln_header.${f}`), true);
    return {
      flags: u32('flags'),
      tensorCount: u32('tensor_count'),
      nameBytes: u32('name_bytes'),
      hasNames: u32('has_names') !== 0,
      payloadBytes: u64('payload_bytes'),
      directoryBytes: u64('directory_bytes'),
      payloadBase: u64('payload_base'),
      blockLength: u64('block_length'),
    };
  }

  #readTensor() {
    const dv = this.#view();
    const h = this.#heap();
    const p = this.#tensor;
    const off = (f) => p + this.#f(`kiln_tensor.${f}`);
    const u32 = (f) => dv.getUint32(off(f), true);
    const u64 = (f) => dv.getBigUint64(off(f), true);
    const ptr = (f) => dv.getUint32(off(f), true);
    const rank = u32('rank');
    const shape = [];
    for (let k = 0; k < rank; k++) shape.push(dv.getBigUint64(off('shape') + 8 * k, true));
    const namePtr = ptr('name');
    const nameLength = dv.getUint32(off('name_length'), true);
    const nameBytes = h.slice(namePtr, namePtr + nameLength);
    const layoutPtr = ptr('layout');
    const layoutLength = dv.getUint32(off('layout_length'), true);
    const scheme = u32('quant_scheme');
    const scale = u32('quant_scale_index');
    const outer = u32('quant_outer_index');
    const opaque = layoutLength > 0;
    return {
      index: u32('index'),
      // Names passed rule N4 (well-formed UTF-8), so the text is exact.
      name: utf8Strict.decode(nameBytes),
      nameBytes,
      dtype: u32('dtype'),
      dtypeName: this.#cString(ptr('dtype_name')),
      shape,
      elementCount: u64('element_count'),
      offset: u64('byte_offset'),
      length: u64('byte_length'),
      blockOffset: u64('block_offset'),
      layout: opaque ? utf8Strict.decode(h.subarray(layoutPtr, layoutPtr + layoutLength)) : null,
      blockSize: opaque ? u32('block_size') : null,
      quantisation:
        scheme === 0
          ? null
          : {
              scheme: QUANT_SCHEMES[scheme] ?? String(scheme),
              axis: u32('quant_axis'),
              groupSize: scheme === 2 ? u32('quant_group_size') : null,
              scaleIndex: scale === NO_TENSOR ? null : scale,
              outerIndex: outer === NO_TENSOR ? null : outer,
            },
    };
  }

  // Header and tensors of a validated directory (a pointer).
  #readDirectory(dir) {
    const m = this.#m;
    if (m._kiln_directory_header(dir, this.#hdr) !== OK) throw this.#failure(INTERNAL_ERROR, 'kiln_directory_header');
    const header = this.#readHeader(this.#hdr);
    if (m._kiln_directory_tensor_count(dir, this.#word) !== OK) throw this.#failure(INTERNAL_ERROR, 'kiln_directory_tensor_count');
    const count = this.#wordU32();
    const tensors = new Array(count);
    for (let i = 0; i < count; i++) {
      if (m._kiln_directory_tensor(dir, i, this.#tensor) !== OK) throw this.#failure(INTERNAL_ERROR, `kiln_directory_tensor(${i})`);
      tensors[i] = this.#readTensor();
    }
    return { header, tensors };
  }

  // Copies bytes (a view from byteView) into the module, runs fn(ptr,
  // length), frees the copy.
  #withBytes(bytes, fn) {
    const n = typedArrayByteLength(bytes);
    const p = this.#malloc(n);
    try {
      Reflect.apply(typedArraySet, this.#heap(), [bytes, p]);
      return fn(p, n);
    } finally {
      this.#m._free(p);
    }
  }

  validate(input, options) {
    const bytes = byteView(input, 'validate');
    const o = readOptions(options, 'validate');
    return this.#call(() =>
      this.#withBytes(bytes, (p, n) => {
        const status = this.#m._kiln_validate(p, n, this.#writeOptions(o), this.#err);
        if (status === OK) return { ok: true };
        if (status === INVALID) return { ok: false, error: this.#readError() };
        if (status === BAD_ARGUMENT) throw this.#argumentError('validate');
        throw this.#failure(status, 'validate', this.#readError().message);
      }),
    );
  }

  inspect(input, options) {
    const bytes = byteView(input, 'inspect');
    const o = readOptions(options, 'inspect');
    return this.#call(() =>
      this.#withBytes(bytes, (p, n) => {
        const status = this.#m._kiln_parse(p, n, this.#writeOptions(o), this.#word, this.#err);
        if (status === INVALID) return { ok: false, error: this.#readError() };
        if (status === BAD_ARGUMENT) throw this.#argumentError('inspect');
        if (status !== OK) throw this.#failure(status, 'inspect', this.#readError().message);
        const dir = this.#wordU32();
        try {
          return { ok: true, ...this.#readDirectory(dir) };
        } finally {
          this.#m._kiln_directory_free(dir);
        }
      }),
    );
  }

  createStreamValidator(options) {
    const o = readOptions(options, 'createStreamValidator');
    return this.#call(() => {
      const status = this.#m._kiln_stream_new(this.#writeOptions(o), this.#word, this.#err);
      if (status === BAD_ARGUMENT) throw this.#argumentError('createStreamValidator');
      if (status !== OK) throw this.#failure(status, 'createStreamValidator', this.#readError().message);
      return new StreamValidator(this, this.#wordU32());
    });
  }

  // --- for StreamValidator (module-private by convention) ---
  // chunk: a view from byteView.
  _streamFeed(s, chunk) {
    return this.#call(() => {
      const m = this.#m;
      if (this.#stage === 0) this.#stage = this.#malloc(STAGE_BYTES);
      let status = m._kiln_stream_status(s);
      let at = 0;
      // Pieces of at most STAGE_BYTES; a settled verdict takes no more bytes
      // (whole mode after complete: the next byte is the H8 verdict).
      const length = typedArrayByteLength(chunk);
      const buffer = typedArrayBuffer(chunk);
      const offset = typedArrayByteOffset(chunk);
      while (at < length && (status === NEED_MORE || status === OK)) {
        const n = Math.min(STAGE_BYTES, length - at);
        Reflect.apply(typedArraySet, this.#heap(), [new U8(buffer, offset + at, n), this.#stage]);
        status = m._kiln_stream_feed(s, this.#stage, n, this.#word);
        const used = this.#wordU32();
        if (status === BAD_ARGUMENT) throw stateError('feed() after finish()');
        if (status !== OK && status !== INVALID && status !== NEED_MORE) throw this.#failure(status, 'feed');
        at += used;
        if (used < n) break; // the verdict is settled
      }
      return status;
    });
  }

  _streamFinish(s) {
    return this.#call(() => this.#m._kiln_stream_finish(s));
  }

  _streamStatus(s) {
    return this.#call(() => this.#m._kiln_stream_status(s));
  }

  _streamConsumed(s) {
    return this.#call(() => {
      if (this.#m._kiln_stream_consumed(s, this.#word) !== OK) throw this.#failure(INTERNAL_ERROR, 'kiln_stream_consumed');
      return exactNumber(this.#wordU64(), 'consumed');
    });
  }

  _streamHeader(s) {
    return this.#call(() => (this.#m._kiln_stream_header(s, this.#hdr) === OK ? this.#readHeader(this.#hdr) : null));
  }

  _streamResult(s) {
    return this.#call(() => {
      const status = this.#m._kiln_stream_error(s, this.#err);
      if (status === INVALID) {
        const header = this.#m._kiln_stream_header(s, this.#hdr) === OK ? this.#readHeader(this.#hdr) : undefined;
        const out = { ok: false, error: this.#readError() };
        if (header) out.header = header;
        return out;
      }
      if (status === OK) {
        if (this.#m._kiln_stream_directory(s, this.#word) !== OK) throw this.#failure(INTERNAL_ERROR, 'kiln_stream_directory');
        return { ok: true, ...this.#readDirectory(this.#wordU32()) };
      }
      throw this.#failure(INTERNAL_ERROR, `the stream's verdict (status ${status})`);
    });
  }

  _streamFree(s) {
    if (!this.#broken) this.#m._kiln_stream_free(s);
  }

  // Random access (kiln_ranges_*): the ranges the rules read, asked of an
  // async reader; the verdict is validate()'s on the whole file.
  validateRanges(size, readRange, options) {
    return this.#validateRanges('validateRanges', false, size, readRange, options);
  }

  // As validateRanges, with inspect()'s header and tensors.
  inspectRanges(size, readRange, options) {
    return this.#validateRanges('inspectRanges', true, size, readRange, options);
  }

  async #validateRanges(where, inspect, size, readRange, options) {
    const fileSize = readFileSize(size, where);
    if (typeof readRange !== 'function') {
      throw new TypeError(`kiln: ${where}: readRange must be a function (offset, length) => Promise<Uint8Array>`);
    }
    const [o, ro] = splitRangeOptions(options, where);
    const r = this.#call(() => {
      const m = this.#m;
      const dv = this.#view();
      m._kiln_range_options_init(this.#ropts);
      if (ro.mergeGap !== undefined) dv.setBigUint64(this.#ropts + this.#f('kiln_range_options.merge_gap'), ro.mergeGap, true);
      if (ro.maxRange !== undefined) dv.setBigUint64(this.#ropts + this.#f('kiln_range_options.max_range'), ro.maxRange, true);
      const status = m._kiln_ranges_new(fileSize, this.#writeOptions(o), this.#ropts, this.#word, this.#err);
      if (status === BAD_ARGUMENT) throw this.#argumentError(where);
      if (status !== OK) throw this.#failure(status, where, this.#readError().message);
      return this.#wordU32();
    });
    try {
      for (;;) {
        const want = this.#call(() => {
          const status = this.#m._kiln_ranges_next(r, this.#word, this.#word2);
          if (status !== NEED_MORE) return null;
          const dv = this.#view();
          return { offset: exactNumber(dv.getBigUint64(this.#word, true), 'offset'), length: dv.getUint32(this.#word2, true) };
        });
        if (want === null) break;
        let got;
        try {
          got = await readRange(want.offset, want.length);
        } catch (e) {
          const message = `reading ${want.length} bytes at offset ${want.offset} failed: ${e?.message ?? e}`;
          this.#rangesFail(r);
          throw ioError(where, message, e);
        }
        if (got instanceof ArrayBuffer) got = new U8(got);
        if (!isUint8Array(got)) {
          const message = `the reader returned ${got === null ? 'null' : typeof got} for the ${want.length} bytes at offset ${want.offset}, not a Uint8Array`;
          this.#rangesFail(r);
          throw ioError(where, message);
        }
        const n = typedArrayByteLength(got);
        if (n !== want.length) {
          // As RangeValidator::Provide says it (the bytes are not copied in).
          const message = `the reader returned ${n} bytes for the ${want.length} bytes at offset ${want.offset}`;
          this.#rangesFail(r);
          throw ioError(where, message);
        }
        this.#call(() => {
          const m = this.#m;
          if (m._kiln_ranges_buffer(r, this.#word, this.#word2) !== NEED_MORE) throw this.#failure(INTERNAL_ERROR, 'kiln_ranges_buffer');
          Reflect.apply(typedArraySet, this.#heap(), [got, this.#wordU32()]);
          m._kiln_ranges_filled(r);
        });
      }
      return this.#call(() => {
        const m = this.#m;
        const status = m._kiln_ranges_error(r, this.#err);
        if (m._kiln_ranges_read(r, this.#word, this.#word2) !== OK) throw this.#failure(INTERNAL_ERROR, 'kiln_ranges_read');
        const dv = this.#view();
        const reads = exactNumber(dv.getBigUint64(this.#word, true), 'reads');
        const bytesRead = exactNumber(dv.getBigUint64(this.#word2, true), 'bytes read');
        if (status === OK) {
          if (!inspect) return { ok: true, bytesRead, reads };
          if (m._kiln_ranges_directory(r, this.#word) !== OK) throw this.#failure(INTERNAL_ERROR, 'kiln_ranges_directory');
          return { ok: true, ...this.#readDirectory(this.#wordU32()), bytesRead, reads };
        }
        if (status === INVALID) {
          const out = { ok: false, error: this.#readError() };
          if (inspect && m._kiln_ranges_header(r, this.#hdr) === OK) out.header = this.#readHeader(this.#hdr);
          return { ...out, bytesRead, reads };
        }
        if (status === READ_FAILED) throw ioError(where, this.#readError().message);
        throw this.#failure(status, where, this.#readError().message);
      });
    } finally {
      if (!this.#broken) this.#m._kiln_ranges_free(r);
    }
  }

  // The reader failed: the handle settles on KILN_READ_FAILED (no verdict;
  // the error thrown says why).
  #rangesFail(r) {
    if (!this.#broken) this.#call(() => this.#m._kiln_ranges_fail(r, 0, 0));
  }

  // A Blob or File, read through blob.slice(...).arrayBuffer().
  validateBlob(blob, options) {
    return this.#blob('validateBlob', false, blob, options);
  }

  inspectBlob(blob, options) {
    return this.#blob('inspectBlob', true, blob, options);
  }

  #blob(where, inspect, blob, options) {
    if (blob === null || typeof blob !== 'object' || typeof blob.slice !== 'function' || typeof blob.size !== 'number') {
      return Promise.reject(own(new TypeError(`kiln: ${where}: expected a Blob or a File`)));
    }
    const read = async (offset, length) => new U8(await blob.slice(offset, offset + length).arrayBuffer());
    return this.#validateRanges(where, inspect, blob.size, read, options);
  }

  async validateStream(source, options) {
    const o = readOptions(options, 'validateStream');
    const v = this.createStreamValidator(o);
    try {
      for await (const chunk of chunksOf(source)) {
        const status = v.feed(byteView(chunk, 'validateStream: a chunk of the source'));
        // A verdict is settled: stop reading (this cancels the source).
        if (status === 'rejected' || (status === 'complete' && o.prefix)) break;
      }
      v.finish();
      return v.result();
    } finally {
      v.free();
    }
  }

  detectFormat(firstBytes) {
    return detectFormat(firstBytes);
  }

  // Untrusted text (a name, a path) as `kiln validate` prints it: control,
  // bidi, zero-width and invalid bytes made visible (base::Escape).
  escape(text) {
    let bytes;
    if (typeof text === 'string') bytes = new TextEncoder().encode(text);
    else if (text !== null && typeof text === 'object') bytes = byteView(text, 'escape');
    else throw new TypeError(`kiln: escape: expected a string or a Uint8Array, got ${text === null ? 'null' : typeof text}`);
    return this.#call(() =>
      this.#withBytes(bytes, (p, n) => {
        // 4 bytes per input byte always suffice (\xNN), and the NUL: a
        // KILN_BUFFER_TOO_SMALL would be a defect.
        const cap = 4 * n + 16;
        const out = this.#malloc(cap);
        try {
          const status = this.#m._kiln_escape(p, n, out, cap, this.#word);
          if (status !== OK) throw this.#failure(status === BUFFER_TOO_SMALL ? INTERNAL_ERROR : status, 'escape');
          const length = this.#wordU32();
          return utf8.decode(this.#heap().subarray(out, out + length));
        } finally {
          this.#m._free(out);
        }
      }),
    );
  }

  // The block map (kiln/kiln_c_map.h): the description `kiln inspect --map`
  // draws, made by the same C++ code. prefix: the file's first bytes (its
  // first payload_base bytes give names and payload ranges); fileSize: the
  // file's length (number or bigint); verdict: null for a valid block, or
  // the error of a rejection as validate gives it. Returns the map's JSON
  // object (kiln_block_map_json); its offsets are numbers below 2^53 or
  // decimal strings.
  blockMap(prefix, fileSize, verdict) {
    const bytes = byteView(prefix, 'blockMap');
    if (typeof fileSize !== 'number' && typeof fileSize !== 'bigint') {
      throw new TypeError('kiln: blockMap: fileSize must be a number or a bigint');
    }
    if (typeof fileSize === 'number' && !Number.isSafeInteger(fileSize)) {
      throw new RangeError('kiln: blockMap: fileSize must be a whole number below 2^53');
    }
    const size = BigInt(fileSize);
    if (size < 0n || size > U64_MAX) throw new RangeError('kiln: blockMap: fileSize out of range');
    if (size < BigInt(typedArrayByteLength(bytes))) throw new RangeError('kiln: blockMap: prefix longer than the file');
    const v = verdict == null ? null : readVerdict(verdict);
    return this.#call(() =>
      this.#withBytes(bytes, (p, n) => {
        let verdictPtr = 0;
        if (v !== null) {
          const q = this.#verdict;
          verdictPtr = q;
          const h = this.#heap();
          h.fill(0, q, q + this.#f('kiln_error'));
          const dv = this.#view();
          dv.setUint32(q + this.#f('kiln_error.struct_size'), this.#f('kiln_error'), true);
          dv.setInt32(q + this.#f('kiln_error.error_class'), v.classCode, true);
          h.set(v.rule, q + this.#f('kiln_error.rule'));
          dv.setBigUint64(q + this.#f('kiln_error.offset'), v.offset, true);
          dv.setUint32(q + this.#f('kiln_error.tensor'), v.tensor, true);
          h.set(v.message, q + this.#f('kiln_error.message'));
          dv.setUint32(q + this.#f('kiln_error.message_length'), v.message.length, true);
        }
        const status = this.#m._kiln_block_map_new(p, n, size, verdictPtr, this.#word, this.#err);
        if (status === BAD_ARGUMENT) throw this.#argumentError('blockMap');
        if (status !== OK) throw this.#failure(status, 'blockMap', this.#readError().message);
        const map = this.#wordU32();
        try {
          if (this.#m._kiln_block_map_json(map, this.#word, 0) !== OK) throw this.#failure(INTERNAL_ERROR, 'kiln_block_map_json');
          return JSON.parse(this.#cString(this.#wordU32()));
        } finally {
          this.#m._kiln_block_map_free(map);
        }
      }),
    );
  }

  // The summary of a rule ("H1".."P2"), or null.
  ruleSummary(rule) {
    if (typeof rule !== 'string') throw new TypeError('kiln: ruleSummary: expected a string');
    const bytes = new TextEncoder().encode(rule);
    return this.#call(() =>
      this.#withBytes(bytes, (p, n) => (this.#m._kiln_rule_summary(p, n, this.#word) === OK ? this.#cString(this.#wordU32()) : null)),
    );
  }
}

// The chunks of a web ReadableStream, a Node Readable, an async iterable or
// an iterable. Breaking out of the loop cancels / destroys the source.
function chunksOf(source) {
  if (source !== null && typeof source === 'object') {
    if (typeof source.getReader === 'function') return readableStreamChunks(source);
    if (typeof source[Symbol.asyncIterator] === 'function' || typeof source[Symbol.iterator] === 'function') {
      if (isUint8Array(source)) {
        throw new TypeError('kiln: validateStream: the source is a Uint8Array; use validate(bytes), or pass [bytes]');
      }
      return source;
    }
  }
  throw new TypeError(
    `kiln: validateStream: expected a ReadableStream, a Node Readable or an (async) iterable of Uint8Array, got ${source === null ? 'null' : typeof source}`,
  );
}

async function* readableStreamChunks(stream) {
  const reader = stream.getReader();
  let done = false;
  try {
    for (;;) {
      const r = await reader.read();
      if (r.done) {
        done = true;
        return;
      }
      yield r.value;
    }
  } finally {
    if (!done) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}

const STATUS_NAMES = { [NEED_MORE]: 'need-more', [INVALID]: 'rejected', [OK]: 'complete' };
const registry = typeof FinalizationRegistry === 'function' ? new FinalizationRegistry((free) => free()) : null;

class StreamValidator {
  #kiln;
  #s;
  #finished = false;
  #result = null;

  constructor(kiln, s) {
    this.#kiln = kiln;
    this.#s = s;
    // A validator dropped without free() gives its memory back when it is
    // collected.
    registry?.register(this, () => kiln._streamFree(s), this);
  }

  #live(what) {
    if (this.#s === 0) throw stateError(`${what} after free()`);
  }

  feed(chunk) {
    this.#live('feed()');
    if (this.#finished) throw stateError('feed() after finish()');
    const bytes = byteView(chunk, 'feed');
    return STATUS_NAMES[this.#kiln._streamFeed(this.#s, bytes)];
  }

  finish() {
    this.#live('finish()');
    if (!this.#finished) {
      this.#kiln._streamFinish(this.#s);
      this.#finished = true;
      this.#result = this.#kiln._streamResult(this.#s);
    }
    return this.#result;
  }

  // The verdict after finish() (the same object finish() returned).
  result() {
    this.#live('result()');
    if (!this.#finished) throw stateError('result() before finish()');
    return this.#result;
  }

  get status() {
    this.#live('status');
    return STATUS_NAMES[this.#kiln._streamStatus(this.#s)];
  }

  get consumed() {
    this.#live('consumed');
    return this.#kiln._streamConsumed(this.#s);
  }

  get header() {
    this.#live('header');
    return this.#kiln._streamHeader(this.#s);
  }

  free() {
    if (this.#s === 0) return;
    registry?.unregister(this);
    this.#kiln._streamFree(this.#s);
    this.#s = 0;
  }
}

// The format of a file from its first bytes (pass at least the first 512
// bytes; fewer may give 'unknown'). Looks only at magic numbers:
//   kiln         bytes 0..3 are "KLNT" (any version: validate says more)
//   gguf         bytes 0..3 are "GGUF"
//   npy          bytes 0..5 are "\x93NUMPY"
//   npz          a zip local file header ("PK\x03\x04") whose first member's
//                name ends in ".npy" (any other zip is 'unknown')
//   safetensors  an 8-byte little-endian header length N with
//                2 <= N <= 100,000,000, then "{" at byte 8
function detectFormat(firstBytes) {
  const b = byteView(firstBytes, 'detectFormat');
  const starts = (text, at = 0) => b.length >= at + text.length && [...text].every((c, i) => b[at + i] === c.charCodeAt(0));
  if (starts('KLNT')) return 'kiln';
  if (starts('GGUF')) return 'gguf';
  if (starts('\x93NUMPY')) return 'npy';
  if (starts('PK\x03\x04') && b.length >= 30) {
    const nameLength = b[26] | (b[27] << 8);
    if (b.length >= 30 + nameLength && nameLength >= 4) {
      const name = String.fromCharCode(...b.subarray(30, 30 + nameLength));
      if (name.endsWith('.npy')) return 'npz';
    }
    return 'unknown';
  }
  if (b.length >= 9 && b[8] === 0x7b) {
    const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
    const n = dv.getBigUint64(0, true);
    if (n >= 2n && n <= 100000000n) return 'safetensors';
  }
  return 'unknown';
}

let cached = null;
let cachedInstance = null;

// Instantiates the WebAssembly module once; every call returns the same
// instance (a fresh one after the module stopped for lack of memory).
export function load() {
  if (cached === null) {
    const p = createKilnModule().then(
      (m) => {
        const k = new Kiln(m);
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

export default { load };
