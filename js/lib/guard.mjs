// Input hardening: every value a caller hands the package is checked and
// made the package's own here, before anything reaches the WebAssembly
// module. Bytes are read through the engine's typed-array internals, never
// through the caller's object (a subclass may override `length`, a Proxy
// may answer anything).

// The largest u64 (built without a literal: it is a type's bound, not a limit).
export const U64_MAX = BigInt.asUintN(64, -1n);

// The errors the package throws on purpose; anything else escaping a call
// into the module means the module itself stopped.
const thrownHere = new WeakSet();
export function own(e) {
  thrownHere.add(e);
  return e;
}
export function isOwn(e) {
  return thrownHere.has(e);
}

export function stateError(message) {
  const e = new Error(`kiln: ${message}`);
  e.code = 'ERR_KILN_STATE';
  return own(e);
}

// The engine's own TypedArray internals, taken once.
export const U8 = Uint8Array;
const TypedArrayPrototype = Object.getPrototypeOf(Uint8Array.prototype);
function intrinsic(name) {
  const get = Object.getOwnPropertyDescriptor(TypedArrayPrototype, name).get;
  return (a) => Reflect.apply(get, a, []);
}
const typedArrayName = intrinsic(Symbol.toStringTag); // undefined for anything but a typed array
export const typedArrayBuffer = intrinsic('buffer');
export const typedArrayByteOffset = intrinsic('byteOffset');
export const typedArrayByteLength = intrinsic('byteLength');
const typedArraySet = TypedArrayPrototype.set;

// Copies src (a view from byteView) into dst at offset, through the
// intrinsic set().
export function copyInto(dst, src, offset) {
  Reflect.apply(typedArraySet, dst, [src, offset]);
}

export function isUint8Array(x) {
  return typedArrayName(x) === 'Uint8Array';
}

// A Uint8Array of the package's own over exactly the bytes `bytes` holds
// (read from its internal slots), or a TypeError: not a Uint8Array (a Proxy
// of one is not one), or its buffer detached (transferred).
export function byteView(bytes, where) {
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

const OPTION_KEYS = new Set(['prefix', 'maxTensors', 'maxNameBytes', 'maxBlockBytes']);

// { prefix, maxTensors, maxNameBytes, maxBlockBytes } checked: unknown keys
// and wrong types are TypeErrors, values out of range RangeErrors.
export function readOptions(options, where) {
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

const RANGE_OPTION_KEYS = new Set(['mergeGap', 'maxRange']);

// The options of random access (validateRanges, validateBlob): Options plus
// mergeGap and maxRange (numbers or bigints, as the limits) and map (a
// boolean: inspect's result carries the block map). Returns
// [options, { mergeGap, maxRange, map }].
export function readRangeOptions(options, where) {
  if (options === undefined || options === null || typeof options !== 'object' || Array.isArray(options)) {
    return [readOptions(options, where), {}];
  }
  const base = {};
  const ranges = {};
  for (const key of Object.keys(options)) {
    if (RANGE_OPTION_KEYS.has(key)) {
      ranges[key] = readLimit(options[key], key, where);
    } else if (key === 'map') {
      if (typeof options.map !== 'boolean') throw new TypeError(`kiln: ${where}: map must be a boolean`);
      ranges.map = options.map;
    } else {
      base[key] = options[key];
    }
  }
  return [readOptions(base, where), ranges];
}

// A file size for random access: an integer number or a bigint in
// [0, 2^53-1], so every offset asked for is an exact number.
export function readRangeSize(value, where) {
  const n = readLimit(value, 'size', where);
  if (n === undefined) throw new TypeError(`kiln: ${where}: size must be a number or a bigint, got undefined`);
  if (n > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`kiln: ${where}: size ${n} exceeds 2^53-1`);
  return n;
}

// Offsets, tensor indexes and counts that fit in a u32 are numbers; u64
// values are bigints (exact). An error offset and `consumed` count bytes the
// caller supplied, so they are below 2^53 and are numbers (checked).
export function exactNumber(value, what) {
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw own(new RangeError(`kiln: ${what} ${value} exceeds 2^53-1`));
  }
  return Number(value);
}

// blockMap's fileSize: a number below 2^53 or a bigint up to 2^64-1, at
// least the prefix's length.
export function readFileSize(fileSize, prefixLength) {
  if (typeof fileSize !== 'number' && typeof fileSize !== 'bigint') {
    throw new TypeError('kiln: blockMap: fileSize must be a number or a bigint');
  }
  if (typeof fileSize === 'number' && !Number.isSafeInteger(fileSize)) {
    throw new RangeError('kiln: blockMap: fileSize must be a whole number below 2^53');
  }
  const size = BigInt(fileSize);
  if (size < 0n || size > U64_MAX) throw new RangeError('kiln: blockMap: fileSize out of range');
  if (size < BigInt(prefixLength)) throw new RangeError('kiln: blockMap: prefix longer than the file');
  return size;
}

// A rejection as validate gives it ({class, rule, offset, tensor,
// message}), checked and made the package's own bytes for a kiln_error.
// abi: { noTensor, messageCapacity } as the module lays them out.
const CLASS_CODES = new Map([['FRAME', 1], ['TYPE', 2], ['LIMIT', 3], ['UTF8', 4]]);
export function readVerdict(verdict, abi) {
  if (typeof verdict !== 'object') throw new TypeError('kiln: blockMap: verdict must be null or an error object');
  const classCode = CLASS_CODES.get(verdict.class);
  if (classCode === undefined) throw new TypeError('kiln: blockMap: verdict.class must be FRAME, TYPE, LIMIT or UTF8');
  const rule = String(verdict.rule);
  if (!/^[A-Z][0-9]{1,2}$/.test(rule)) throw new TypeError('kiln: blockMap: verdict.rule must be a rule id such as D7');
  const offset = BigInt(verdict.offset); // a RangeError for a fraction
  if (offset < 0n || offset > U64_MAX) throw new RangeError('kiln: blockMap: verdict.offset out of range');
  const tensor = verdict.tensor == null ? abi.noTensor : verdict.tensor;
  if (!Number.isInteger(tensor) || tensor < 0 || tensor > abi.noTensor) throw new RangeError('kiln: blockMap: verdict.tensor out of range');
  const message = new TextEncoder().encode(String(verdict.message ?? '')).subarray(0, abi.messageCapacity - 1);
  return { classCode, rule: new TextEncoder().encode(rule), offset, tensor, message };
}
