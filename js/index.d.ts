// kiln for JavaScript: the Kiln v2 validator (the kiln C++ core built to
// WebAssembly). Verdicts are those of `kiln validate`: the same class, rule,
// byte offset, tensor and message for every input.
//
// Numbers: every u64 field of the format (header sizes, shapes, element
// counts, payload offsets and lengths) is a bigint, exact to 2^64-1; a JSON
// encoder needs a replacer for them. u32 fields (counts, indexes, flags) are
// numbers. An error's `offset` and a stream's `consumed` count bytes the
// caller supplied, so they are numbers below 2^53 (a value that would not
// be exact throws a RangeError instead of being rounded; no input a
// JavaScript runtime can hold reaches it).
//
// Errors thrown (never a crash, never a hang):
//   TypeError   an argument of the wrong type (bytes that are not a
//               Uint8Array, a chunk that is not one, a Proxy of one, a
//               Uint8Array whose buffer is detached, options that are not an
//               object, an unknown option key, a source that is not a stream).
//               Bytes are read through the typed-array internals (buffer,
//               offset, byte length), never through the object's own getters
//   RangeError  a value out of range (a negative or fractional limit, a
//               limit the C ABI refuses), or bytes that do not fit in the
//               module's memory (4 GiB at most; use validateStream)
//   Error with code 'ERR_KILN_IO'         random access (validateRanges,
//               validateBlob): the reader threw, or returned another
//               length than asked or no bytes. Never a verdict
//   Error with code 'ERR_KILN_STATE'      a stream validator used after
//               free(), fed after finish(), or read before finish()
//   Error with code 'ERR_KILN_NO_MEMORY'  the module could not get the
//               memory a call needed. The call changed nothing and the
//               instance goes on, unless the module itself stopped: then
//               later calls on it throw ERR_KILN_STATE and load() returns a
//               fresh instance
//   Error with code 'ERR_KILN_INTERNAL'   a defect in kiln (the C ABI's
//               KILN_INTERNAL_ERROR, or the module stopped on a trap: then,
//               as above, the instance is done and load() gives a fresh
//               one), never a verdict on the bytes. No argument, however
//               hostile, stops the module
// A rejected block is not an exception: it is a result with ok: false.
import type { BlockMapDescription } from './map.js';

/** Options of every validating call. */
export interface Options {
  /** The block starts the bytes and may be followed by other data (default: the bytes are exactly one block; a trailing byte is FRAME H8). */
  prefix?: boolean;
  /** Caller limits (exceeding one is LIMIT H7). Default: the format's maxima (2^32-1, 2^32-1, 2^64-1). Integer numbers up to 2^53-1 or bigints up to 2^64-1. */
  maxTensors?: number | bigint;
  maxNameBytes?: number | bigint;
  maxBlockBytes?: number | bigint;
}

/** Options of random-access validation (validateRanges, validateBlob): Options plus how the reads are cut. */
export interface RangeOptions extends Options {
  /** Two wanted payload ranges closer than this many bytes are read in one request (the covered bytes between are read, never looked at). 0: no byte a tensor covers is ever read. Default 65536; clamped to maxRange / 2. */
  mergeGap?: number | bigint;
  /** The longest single read. Default 1048576 (1 MiB). */
  maxRange?: number | bigint;
  /** inspectRanges/inspectBlob: the result carries the block map of its verdict (`map`), made from the bytes the validator kept; nothing is read again. */
  map?: boolean;
}

/**
 * Reads `length` bytes at `offset` (both numbers below 2^53; 1 <= length <= maxRange, the header up to 64),
 * e.g. with fetch and `Range: bytes=offset-(offset+length-1)`. Must resolve to exactly `length` bytes
 * (a Uint8Array or an ArrayBuffer); anything else, or a throw, is an I/O error (ERR_KILN_IO).
 */
export type RangeReader = (offset: number, length: number) => Promise<Uint8Array | ArrayBuffer> | Uint8Array | ArrayBuffer;

/** What random-access validation read: requests answered and their bytes. */
export interface RangeCounts {
  bytesRead: number;
  reads: number;
}

/** Why a block was rejected. */
export interface KilnError {
  class: 'FRAME' | 'TYPE' | 'LIMIT' | 'UTF8';
  /** "H1" .. "P2" (docs/spec.md). */
  rule: string;
  /** Byte offset from the start of the block. */
  offset: number;
  /** The descriptor index, or null when the rule is not about one tensor. */
  tensor: number | null;
  /** The field and the values it held; untrusted text in it is already escaped as `kiln validate` prints it. */
  message: string;
}

export type ValidateResult = { ok: true } | { ok: false; error: KilnError };

/** The header fields (rules H1..H7 and H9 held). */
export interface Header {
  flags: number;
  tensorCount: number;
  nameBytes: number;
  hasNames: boolean;
  payloadBytes: bigint;
  directoryBytes: bigint;
  /** Where the payload region starts. */
  payloadBase: bigint;
  /** payloadBase + payloadBytes. */
  blockLength: bigint;
}

export interface Quantisation {
  scheme: 'per-axis' | 'grouped';
  axis: number;
  /** Grouped only, else null. */
  groupSize: number | null;
  scaleIndex: number | null;
  outerIndex: number | null;
}

export interface Tensor {
  index: number;
  /** The name as text ('' when the block has no names). Raw: it may hold control or bidi characters; display it through escape(). */
  name: string;
  /** The name's bytes as stored. */
  nameBytes: Uint8Array;
  /** The format's dtype code, and its name ("f32", "bf16", "opaque", ...). */
  dtype: number;
  dtypeName: string;
  shape: bigint[];
  elementCount: bigint;
  /** From the start of the payload region. */
  offset: bigint;
  length: bigint;
  /** From the start of the block: payloadBase + offset. */
  blockOffset: bigint;
  /** Opaque dtypes: the layout name and elements per block; else null. */
  layout: string | null;
  blockSize: number | null;
  quantisation: Quantisation | null;
}

export type InspectResult =
  | { ok: true; header: Header; tensors: Tensor[] }
  | { ok: false; error: KilnError; header?: Header };

export type StreamStatus = 'need-more' | 'rejected' | 'complete';

/** Validates a block as its bytes arrive. Keeps the header and the directory region in the module's memory, never a payload byte. */
export interface StreamValidator {
  /** The next bytes (any size: they are copied in pieces of at most 1 MiB). Once 'rejected', further chunks are not taken. Whole mode: a byte after 'complete' is FRAME H8. */
  feed(chunk: Uint8Array): StreamStatus;
  /** The stream has ended: a block still incomplete is rejected (truncation). Returns the verdict; calling it again returns the same object. */
  finish(): InspectResult;
  /** The verdict after finish(). */
  result(): InspectResult;
  readonly status: StreamStatus;
  /** Bytes taken so far. */
  readonly consumed: number;
  /** The header once its rules held (at byte 64), else null. */
  readonly header: Header | null;
  /** Gives the validator's memory back; later calls (except free) throw. */
  free(): void;
}

/** What a web ReadableStream (file.stream()), a Node Readable or any (async) iterable of chunks is to validateStream. */
export type ByteSource =
  | ReadableStream<Uint8Array>
  | AsyncIterable<Uint8Array>
  | Iterable<Uint8Array>;

export type Format = 'kiln' | 'safetensors' | 'gguf' | 'npy' | 'npz' | 'unknown';

/**
 * A buffer in the module's memory (Kiln.allocate; the only way to make one). Fill bytes(), pass the
 * buffer to validate() or inspect(), free() it. The module's memory may grow during any kiln call,
 * which detaches every view taken before: take bytes() again after a call. A view must not be used
 * after free() (its bytes are the allocator's again), and its `.buffer` is the module's whole
 * memory: write only through the view. bytes(), validate() and inspect() of a freed buffer throw
 * an Error of code 'ERR_KILN_STATE' (length still answers); a buffer of another instance is a
 * TypeError.
 */
export interface KilnBuffer {
  readonly length: number;
  bytes(): Uint8Array;
  free(): void;
}

export interface Kiln {
  /** The library version ("0.1.0") and the C ABI version of the module. */
  readonly version: string;
  readonly abiVersion: number;
  /**
   * Validates bytes: a Uint8Array (copied into the module's memory for the call) or a KilnBuffer
   * of this instance (read where it lies, no copy).
   */
  validate(bytes: Uint8Array | KilnBuffer, options?: Options): ValidateResult;
  /** Validates and, when valid, returns the header and every tensor. */
  inspect(bytes: Uint8Array | KilnBuffer, options?: Options): InspectResult;
  /**
   * A buffer of `length` bytes (an integer in [0, 2^32-1]) in the module's memory, for validate()
   * and inspect() to read without a copy (see KilnBuffer). A length that is not such an integer, or
   * that does not fit in the module's memory, is a RangeError.
   */
  allocate(length: number): KilnBuffer;
  createStreamValidator(options?: Options): StreamValidator;
  /**
   * Random access: validates a file of `size` bytes (a number or bigint below 2^53) by asking `readRange`
   * only for the ranges the rules read, in order: the header, the directory region up to payload_base,
   * the payload bytes no tensor covers (P2). The verdict is validate()'s on the whole file (class, rule,
   * offset, tensor, message; `size` decides H8), with the bytes read and the number of reads. A reader
   * that throws or returns another length rejects with an Error of code 'ERR_KILN_IO', never a verdict.
   */
  validateRanges(size: number | bigint, readRange: RangeReader, options?: RangeOptions): Promise<ValidateResult & RangeCounts>;
  /** As validateRanges, with inspect()'s header and tensors (the tensors' bytes are not read). */
  inspectRanges(size: number | bigint, readRange: RangeReader, options?: RangeOptions): Promise<InspectResult & RangeCounts & { map?: BlockMapDescription }>;
  /** validateRanges over a Blob or File, read through blob.slice(start, end).arrayBuffer(). */
  validateBlob(blob: Blob, options?: RangeOptions): Promise<ValidateResult & RangeCounts>;
  /** inspectRanges over a Blob or File. */
  inspectBlob(blob: Blob, options?: RangeOptions): Promise<InspectResult & RangeCounts & { map?: BlockMapDescription }>;
  /** Reads the source chunk by chunk (memory stays bounded whatever its size) and stops reading once rejected. A source that fails rejects the promise with its error. */
  validateStream(source: ByteSource, options?: Options): Promise<InspectResult>;
  /**
   * The format from its magic bytes; pass at least the first 512 bytes. Looks only at:
   * kiln "KLNT" at 0; gguf "GGUF" at 0; npy "\x93NUMPY" at 0; npz a zip local header
   * whose first member's name ends in ".npy"; safetensors a little-endian u64 N in
   * [2, 10^8] then "{" at byte 8. It says nothing about validity.
   */
  detectFormat(firstBytes: Uint8Array): Format;
  /** Untrusted text (a name, a path) as `kiln validate` prints it (the same C++ function): controls, bidi, zero-width and other invisible characters, noncharacters and invalid bytes made visible. */
  escape(text: string | Uint8Array): string;
  /**
   * The block map (the description `kiln inspect --map` draws, from the same
   * C++ code): prefix is the file's first bytes (its first payload_base bytes
   * give names and payload ranges), fileSize the file's length, verdict null
   * for a valid block or the error validate gave. Returns the JSON object of
   * kiln_block_map_json (kiln/kiln_c_map.h): {file_size, header, regions,
   * mark}; offsets are numbers below 2^53, else decimal strings.
   */
  blockMap(prefix: Uint8Array, fileSize: number | bigint, verdict?: KilnError | null): BlockMapJson;
  /** The one-line statement of a rule ("H1".."P2"), or null. */
  ruleSummary(rule: string): string | null;
  /** The package's sizes and limits (js/lib/policy.mjs). */
  readonly policy: Policy;
}

/** The sizes the package works with; those that mirror the C++ core are checked against it by the package's tests. */
export interface Policy {
  /** The Kiln header's size in bytes (64): a block's first bytes that the header rules read. */
  readonly headerBytes: number;
  /** detectFormat looks at most this many first bytes (512): pass at least these. */
  readonly sniffBytes: number;
  /** The largest safetensors header length detectFormat takes for one (10^8, the C++ readers' bound). */
  readonly safetensorsMaxHeaderBytes: bigint;
  /** Chunks are copied into the module's memory in pieces of at most this many bytes (1 MiB). */
  readonly stageBytes: number;
}

/** Instantiates the WebAssembly module once; later calls return the same instance. */
export function load(): Promise<Kiln>;

declare const _default: { load: typeof load };
export default _default;

/** A u64 in kiln_block_map_json: a number below 2^53, else a decimal string. */
export type JsonU64 = number | string;

/** The JSON object of kiln_block_map_json (docs/c-api.md, the block map). */
export interface BlockMapJson {
  file_size: JsonU64;
  /** The header fields, when the header rules held. */
  header: {
    flags: number;
    tensor_count: number;
    name_bytes: number;
    payload_bytes: JsonU64;
    directory_bytes: JsonU64;
    payload_base: JsonU64;
    block_length: JsonU64;
  } | null;
  /** kind: kiln_region_kind_name (kiln/kiln_c_map.h); label escaped as `kiln validate` escapes names. */
  regions: Array<{ kind: string; begin: JsonU64; end: JsonU64; tensor: number | null; label: string }>;
  /** The byte the verdict marks, or null for a valid block. */
  mark: { offset: JsonU64; tensor: number | null; field: string; verdict: string } | null;
  /** The map drawn as a standalone SVG document (kiln_block_map_svg): what `kiln inspect --map` writes, every text in it escaped. */
  svg: string;
}
