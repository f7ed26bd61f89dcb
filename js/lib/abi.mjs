// The C ABI (kiln/kiln_c.h) over the WebAssembly module: the structs the
// module reads and writes, laid out as kiln_js_layout says (no offset or
// size is written here), and the calls, with their statuses made results or
// thrown errors. Every argument reaching this file is already the package's
// own value (guard.mjs).
import {
  U8,
  byteView,
  copyInto,
  exactNumber,
  isOwn,
  own,
  readFileSize,
  readOptions,
  readVerdict,
  stateError,
  typedArrayBuffer,
  typedArrayByteLength,
  typedArrayByteOffset,
} from './guard.mjs';
import { MAX_BUFFER_BYTES, STAGE_BYTES, policy } from './policy.mjs';
import { detectFormat } from './sniff.mjs';
import { StreamValidator, validateStream } from './stream.mjs';
import { validateBlob, validateRanges } from './ranges.mjs';

// kiln_status
const OK = 0;
const INVALID = 1;
const NEED_MORE = 2;
const BAD_ARGUMENT = 3;
const NO_MEMORY = 4;
const INTERNAL_ERROR = 5;
const BUFFER_TOO_SMALL = 6;
const READ_FAILED = 7;

const STATUS_NAMES = { [NEED_MORE]: 'need-more', [INVALID]: 'rejected', [OK]: 'complete' };
const QUANT_SCHEMES = [null, 'per-axis', 'grouped'];

const utf8 = new TextDecoder('utf-8', { fatal: false });
const utf8Strict = new TextDecoder('utf-8', { fatal: true });

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

// Buffers in a module's own memory (Kiln.allocate): each KilnBuffer's
// record, { kiln, ptr, length, freed, view(where), release() } (the two
// operations made by allocate(), closing over its instance's private state),
// kept here and nowhere a caller can reach, so only a buffer allocate() made
// is read where it lies (a Proxy or a look-alike object is not one).
const BUFFERS = new WeakMap();

function bufferRecord(buffer, what) {
  const r = BUFFERS.get(buffer);
  if (r === undefined) throw own(new TypeError(`kiln: ${what}: not a KilnBuffer`));
  return r;
}

// Only allocate() makes a KilnBuffer: its constructor asks for this
// module-private token, so a caller who reaches the class through a
// buffer's `constructor` cannot file a record of its own (an address and a
// length of its choosing) for validate() to read.
const MAKE_BUFFER = Symbol('KilnBuffer');

// A buffer in the module's memory, for validate() and inspect() to read
// where it is (no copy): fill bytes() (e.g. fs.readSync(fd, buf.bytes())),
// validate(buf), free(). The module's memory may grow during any kiln call,
// which detaches every view taken before it: take bytes() again after one.
// A view must not be used after free(): its bytes are the allocator's again.
export class KilnBuffer {
  constructor(token, record) {
    if (token !== MAKE_BUFFER) throw own(new TypeError('kiln: KilnBuffer: make one with kiln.allocate(length)'));
    BUFFERS.set(this, record);
    Object.freeze(this);
  }

  /** The buffer's length in bytes. */
  get length() {
    return bufferRecord(this, 'length').length;
  }

  /** A view of the buffer in the module's memory as it is now. */
  bytes() {
    return bufferRecord(this, 'bytes').view('bytes');
  }

  /** Gives the memory back; later use of the buffer throws ERR_KILN_STATE. Idempotent. */
  free() {
    bufferRecord(this, 'free').release();
  }
}

export class Kiln {
  #m;
  #layout;
  #broken = null;
  #err; // kiln_error
  #verdict; // kiln_error: blockMap's verdict argument
  #opts; // kiln_options
  #hdr; // kiln_header
  #tensor; // kiln_tensor
  #word; // a size_t / pointer out-parameter
  #word2; // a second out-parameter (kiln_ranges_next, kiln_ranges_read)
  #ropts; // kiln_range_options
  #stage = 0; // STAGE_BYTES, allocated on first use
  #defaults; // the format's maxima from kiln_options_init
  #abi; // { noTensor, messageCapacity }: the C ABI's constants, from the module
  #onStop; // called once if the module stops

  // m: an instantiated module (dist/kiln-wasm.mjs); onStop(kiln): told when
  // the module stopped (load.mjs then forgets this instance).
  constructor(m, onStop = () => {}) {
    this.#m = m;
    this.#onStop = onStop;
    const layoutPtr = m._kiln_js_layout();
    this.#layout = parseLayout(this.#cString(layoutPtr));
    const size = (name) => {
      const v = this.#layout.get(name);
      if (v === undefined) throw own(new Error(`kiln: the module does not describe ${name}`));
      return v;
    };
    this.#abi = Object.freeze({ noTensor: size('KILN_NO_TENSOR'), messageCapacity: size('KILN_MESSAGE_CAPACITY') });
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
    // The package's sizes and limits (policy.mjs), frozen.
    this.policy = policy;
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
    // >>> 0: an address at or above 2 GiB comes back from the module as a
    // negative i32.
    const p = this.#m._malloc(Math.max(n, 1)) >>> 0;
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
      if (isOwn(e)) throw e;
      this.#broken = String(e?.message ?? e);
      this.#onStop(this);
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
      tensor: tensor === this.#abi.noTensor ? null : tensor,
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
              scaleIndex: scale === this.#abi.noTensor ? null : scale,
              outerIndex: outer === this.#abi.noTensor ? null : outer,
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
      copyInto(this.#heap(), bytes, p);
      return fn(p, n);
    } finally {
      this.#m._free(p);
    }
  }

  // The input of validate() and inspect(): a KilnBuffer of this instance's
  // (read where it lies) or a Uint8Array (byteView: copied in for the call).
  #source(input, where) {
    const r = BUFFERS.get(input);
    if (r === undefined) return { bytes: byteView(input, where) };
    this.#liveBuffer(r, where);
    return { buffer: r };
  }

  #liveBuffer(r, where) {
    if (r.kiln !== this) throw own(new TypeError(`kiln: ${where}: the KilnBuffer belongs to another instance of the module`));
    if (r.freed) throw stateError(`${where}: the KilnBuffer was freed`);
  }

  #withSource(src, fn) {
    if (!src.buffer) return this.#withBytes(src.bytes, fn);
    // Again: an options getter run since #source may have freed it.
    if (src.buffer.freed) throw stateError('the KilnBuffer was freed during the call');
    return fn(src.buffer.ptr, src.buffer.length);
  }

  /** A KilnBuffer of `length` bytes in the module's memory (a safe integer, at most 2^32 - 1). */
  allocate(length) {
    if (typeof length !== 'number' || !Number.isSafeInteger(length) || length < 0 || length > MAX_BUFFER_BYTES) {
      throw own(new RangeError(`kiln: allocate: length ${typeof length === 'number' ? length : typeof length} is not an integer in [0, 2^32-1]`));
    }
    return this.#call(() => {
      const record = { kiln: this, ptr: this.#malloc(length), length, freed: false };
      // The record's two operations close over this instance's private
      // state; nothing outside this file can call them with another record.
      record.view = (where) => {
        this.#liveBuffer(record, where);
        if (this.#broken) throw stateError(`the WebAssembly module stopped earlier (${this.#broken}); call load() again`);
        const h = this.#heap();
        return new U8(h.buffer, h.byteOffset + record.ptr, record.length);
      };
      record.release = () => {
        if (record.freed) return;
        record.freed = true;
        if (!this.#broken) this.#m._free(record.ptr);
      };
      Object.freeze(record.view);
      Object.freeze(record.release);
      return new KilnBuffer(MAKE_BUFFER, record);
    });
  }

  validate(input, options) {
    const src = this.#source(input, 'validate');
    const o = readOptions(options, 'validate');
    return this.#call(() =>
      this.#withSource(src, (p, n) => {
        const status = this.#m._kiln_validate(p, n, this.#writeOptions(o), this.#err);
        if (status === OK) return { ok: true };
        if (status === INVALID) return { ok: false, error: this.#readError() };
        if (status === BAD_ARGUMENT) throw this.#argumentError('validate');
        throw this.#failure(status, 'validate', this.#readError().message);
      }),
    );
  }

  inspect(input, options) {
    const src = this.#source(input, 'inspect');
    const o = readOptions(options, 'inspect');
    return this.#call(() =>
      this.#withSource(src, (p, n) => {
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

  // --- for StreamValidator (stream.mjs; module-private by convention) ---
  // A stream's status is given by name (STATUS_NAMES). chunk: a view from
  // byteView.
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
        copyInto(this.#heap(), new U8(buffer, offset + at, n), this.#stage);
        status = m._kiln_stream_feed(s, this.#stage, n, this.#word);
        const used = this.#wordU32();
        if (status === BAD_ARGUMENT) throw stateError('feed() after finish()');
        if (status !== OK && status !== INVALID && status !== NEED_MORE) throw this.#failure(status, 'feed');
        at += used;
        if (used < n) break; // the verdict is settled
      }
      return STATUS_NAMES[status];
    });
  }

  _streamFinish(s) {
    return this.#call(() => this.#m._kiln_stream_finish(s));
  }

  _streamStatus(s) {
    return this.#call(() => STATUS_NAMES[this.#m._kiln_stream_status(s)]);
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

  validateStream(source, options) {
    return validateStream(this, source, options);
  }

  // Random access (ranges.mjs): the ranges the rules read, asked of an
  // async reader; the verdict is validate()'s on the whole file.
  validateRanges(size, readRange, options) {
    return validateRanges(this, 'validateRanges', false, size, readRange, options);
  }

  inspectRanges(size, readRange, options) {
    return validateRanges(this, 'inspectRanges', true, size, readRange, options);
  }

  validateBlob(blob, options) {
    return validateBlob(this, 'validateBlob', false, blob, options);
  }

  inspectBlob(blob, options) {
    return validateBlob(this, 'inspectBlob', true, blob, options);
  }

  // --- for ranges.mjs (module-private by convention) ---
  // A new kiln_ranges for a file of fileSize bytes (a bigint); o: checked
  // options, ro: { mergeGap, maxRange } (bigints or undefined).
  _rangesNew(fileSize, o, ro, where) {
    return this.#call(() => {
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
  }

  // The range wanted now, { offset, length } (numbers), or null once settled.
  _rangesNext(r) {
    return this.#call(() => {
      if (this.#m._kiln_ranges_next(r, this.#word, this.#word2) !== NEED_MORE) return null;
      const dv = this.#view();
      return { offset: exactNumber(dv.getBigUint64(this.#word, true), 'offset'), length: dv.getUint32(this.#word2, true) };
    });
  }

  // bytes: a Uint8Array of exactly the wanted length (checked by ranges.mjs).
  _rangesFill(r, bytes) {
    this.#call(() => {
      const m = this.#m;
      if (m._kiln_ranges_buffer(r, this.#word, this.#word2) !== NEED_MORE) throw this.#failure(INTERNAL_ERROR, 'kiln_ranges_buffer');
      copyInto(this.#heap(), bytes, this.#wordU32());
      m._kiln_ranges_filled(r);
    });
  }

  // The reader failed: the handle settles on KILN_READ_FAILED (no verdict;
  // the error ranges.mjs throws says why).
  _rangesFail(r) {
    if (!this.#broken) this.#call(() => this.#m._kiln_ranges_fail(r, 0, 0));
  }

  // The verdict with bytesRead and reads; { readError: message } when the
  // handle settled on KILN_READ_FAILED by itself (a directory region that
  // does not fit in this address space).
  _rangesResult(r, inspect) {
    return this.#call(() => {
      const m = this.#m;
      const status = m._kiln_ranges_error(r, this.#err);
      if (m._kiln_ranges_read(r, this.#word, this.#word2) !== OK) throw this.#failure(INTERNAL_ERROR, 'kiln_ranges_read');
      const dv = this.#view();
      const counts = {
        bytesRead: exactNumber(dv.getBigUint64(this.#word2, true), 'bytes read'),
        reads: exactNumber(dv.getBigUint64(this.#word, true), 'reads'),
      };
      if (status === OK) {
        if (!inspect) return { ok: true, ...counts };
        if (m._kiln_ranges_directory(r, this.#word) !== OK) throw this.#failure(INTERNAL_ERROR, 'kiln_ranges_directory');
        return { ok: true, ...this.#readDirectory(this.#wordU32()), ...counts };
      }
      if (status === INVALID) {
        const out = { ok: false, error: this.#readError() };
        if (inspect && m._kiln_ranges_header(r, this.#hdr) === OK) out.header = this.#readHeader(this.#hdr);
        return { ...out, ...counts };
      }
      if (status === READ_FAILED) return { readError: this.#readError().message };
      throw this.#failure(status, 'the range validator\'s verdict', this.#readError().message);
    });
  }

  // The settled handle's block map (kiln_ranges_block_map: from the bytes it
  // kept and its own verdict), as blockMap returns it.
  _rangesMap(r) {
    return this.#call(() => {
      const status = this.#m._kiln_ranges_block_map(r, this.#word, this.#err);
      if (status !== OK) throw this.#failure(status, 'kiln_ranges_block_map', this.#readError().message);
      return this.#takeMap(this.#wordU32());
    });
  }

  _rangesFree(r) {
    if (!this.#broken) this.#m._kiln_ranges_free(r);
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
  // decimal strings; its `svg` is the map drawn (kiln_block_map_svg).
  blockMap(prefix, fileSize, verdict) {
    const bytes = byteView(prefix, 'blockMap');
    const size = readFileSize(fileSize, typedArrayByteLength(bytes));
    const v = verdict == null ? null : readVerdict(verdict, this.#abi);
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
        return this.#takeMap(this.#wordU32());
      }),
    );
  }

  // A kiln_block_map read as JSON with its drawing, then freed.
  #takeMap(map) {
    try {
      if (this.#m._kiln_block_map_json(map, this.#word, 0) !== OK) throw this.#failure(INTERNAL_ERROR, 'kiln_block_map_json');
      const json = JSON.parse(this.#cString(this.#wordU32()));
      // The map's one drawing (kiln_block_map_svg), the SVG `kiln inspect --map` writes.
      if (this.#m._kiln_block_map_svg(map, 0, 0, this.#word, 0) !== OK) throw this.#failure(INTERNAL_ERROR, 'kiln_block_map_svg');
      json.svg = this.#cString(this.#wordU32());
      return json;
    } finally {
      this.#m._kiln_block_map_free(map);
    }
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

