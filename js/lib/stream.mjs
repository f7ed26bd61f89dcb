// Streaming: the validator that takes a block's bytes as they arrive
// (StreamValidator, over a kiln_stream of the module) and validateStream's
// reading of a source (a web ReadableStream, a Node Readable, an (async)
// iterable of chunks).
import { byteView, isUint8Array, readOptions, stateError } from './guard.mjs';

const registry = typeof FinalizationRegistry === 'function' ? new FinalizationRegistry((free) => free()) : null;

// kiln: the instance (abi.mjs) whose _stream* methods drive the kiln_stream
// s; they give a stream's status by name ('need-more', 'rejected',
// 'complete').
export class StreamValidator {
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
    return this.#kiln._streamFeed(this.#s, bytes);
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
    return this.#kiln._streamStatus(this.#s);
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

// Reads source chunk by chunk into a validator of kiln's; stops reading
// (cancelling the source) once a verdict is settled.
export async function validateStream(kiln, source, options) {
  const o = readOptions(options, 'validateStream');
  const v = kiln.createStreamValidator(o);
  try {
    for await (const chunk of chunksOf(source)) {
      const status = v.feed(byteView(chunk, 'validateStream: a chunk of the source'));
      if (status === 'rejected' || (status === 'complete' && o.prefix)) break;
    }
    v.finish();
    return v.result();
  } finally {
    v.free();
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
