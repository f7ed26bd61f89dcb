// Validates one file at a time, off the page's thread. By default by random
// access (kiln.inspectBlob): a File has a size and can be sliced, so only
// the ranges the rules read are read (the header, the directory region, the
// payload bytes no tensor covers), and the verdict is `kiln validate FILE`'s,
// the file's size deciding H8. With `stream` set, the whole file is read
// with file.stream() chunk by chunk and fed to kiln's streaming validator
// (the WebAssembly module keeps the header and the directory region, never a
// payload byte), for sources that cannot seek; its verdict is `kiln validate
// -`'s on the same bytes. The block map: by random access, the validator's
// own (kiln_ranges_block_map: drawn from the bytes it kept and its verdict,
// nothing read again); a stream kept no bytes for the page, so its map is
// described from the file's first bytes and the stream's verdict.
//
// Messages in:  {id, file, stream}
// Messages out: {id, type: 'start', name} (escaped)
//               {id, type: 'progress', done, total}
//               {id, type: 'foreign', format}
//               {id, type: 'result', result, map, seconds, bytesRead, reads, mode}
//               {id, type: 'failed', message}
// The package through its two public entries (`kiln` and `kiln/map`, as
// web/build.sh copies the published files into web/lib/kiln/).
import { load } from './lib/kiln/index.mjs';
import { loadBlockMap } from './lib/kiln/map.mjs';
import { MAP_PREFIX_BYTES, PROGRESS_EVERY_MS, READ_CHUNK_BYTES } from './policy.js';

const ready = Promise.all([load(), loadBlockMap()]);

// Reads a byte stream into one buffer, reused for every chunk (a BYOB
// reader): a multi-GB file leaves no trail of chunks for the garbage
// collector, so memory stays flat. Streams without BYOB are read as they
// come. read() gives the next chunk, or null at the end.
//
// The stream, its reader and the read in flight are kept in `reading`, a
// module variable: a pending read of a Blob's stream is otherwise held only
// by the stream and its reader, which the garbage collector may take while
// the read waits, leaving the read unsettled for good (one file of a big
// drop "waiting", every file after it never started).
let reading = null;
function chunkReader(stream) {
  try {
    const reader = stream.getReader({ mode: 'byob' });
    reading = { stream, reader };
    let buffer = new ArrayBuffer(READ_CHUNK_BYTES);
    return {
      reader,
      read: async () => {
        const { value, done } = await reader.read(new Uint8Array(buffer, 0, READ_CHUNK_BYTES));
        if (done) return null;
        buffer = value.buffer;
        return value;
      },
    };
  } catch {
    const reader = stream.getReader();
    reading = { stream, reader };
    return {
      reader,
      read: async () => {
        const { value, done } = await reader.read();
        return done ? null : value;
      },
    };
  }
}

async function firstBytes(file, n) {
  const end = Math.min(file.size, n);
  return new Uint8Array(await file.slice(0, end).arrayBuffer());
}

// Bigints do not survive structured clone as JSON would need; they do as
// bigints, so results are posted as they are.
// The streaming path: every byte of the file, in order.
async function streamed(kiln, id, file) {
  const v = kiln.createStreamValidator();
  try {
    const { reader, read } = chunkReader(file.stream());
    let done = 0;
    let last = 0;
    let status = 'need-more';
    try {
      // Whole mode: a 'complete' block is read on, since a byte after
      // block_length is FRAME H8 (kiln validate's verdict). A block that ends
      // on a chunk boundary is complete before its trailing bytes are read:
      // the next read gives them (rejected) or the end of the file.
      while (status !== 'rejected') {
        const value = await read();
        if (value === null) break;
        status = v.feed(value);
        done += value.length;
        const now = performance.now();
        if (now - last >= PROGRESS_EVERY_MS) {
          last = now;
          postMessage({ id, type: 'progress', done, total: file.size });
        }
      }
      return { result: v.finish(), bytesRead: done, reads: null };
    } finally {
      if (status === 'rejected') await reader.cancel().catch(() => {});
      reading = null;
    }
  } finally {
    v.free();
  }
}

async function check(id, file, stream) {
  const [kiln, mapper] = await ready;
  postMessage({ id, type: 'start', name: kiln.escape(file.name) });
  const head = await firstBytes(file, kiln.policy.sniffBytes);
  const format = kiln.detectFormat(head);
  if (format !== 'kiln' && format !== 'unknown') {
    postMessage({ id, type: 'foreign', format });
    return;
  }
  const started = performance.now();
  // Random access reads only what the rules need (a reader failure is
  // thrown: 'failed', never a verdict).
  let result;
  let bytesRead;
  let reads;
  if (stream) {
    ({ result, bytesRead, reads } = await streamed(kiln, id, file));
  } else {
    ({ bytesRead, reads, ...result } = await kiln.inspectBlob(file, { map: true }));
  }
  const seconds = (performance.now() - started) / 1000;
  if (stream) postMessage({ id, type: 'progress', done: file.size, total: file.size });
  const header = result.header ?? null;
  let map = result.map;
  delete result.map;
  if (stream) {
    // The directory region (payload_base bytes) when it is small enough,
    // else the header alone.
    const headerBytes = kiln.policy.headerBytes;
    let prefixLength = headerBytes;
    if (header && header.payloadBase <= BigInt(MAP_PREFIX_BYTES)) prefixLength = Number(header.payloadBase);
    const prefix = await firstBytes(file, Math.max(prefixLength, headerBytes));
    map = mapper.describe(prefix, file.size, result.ok ? null : result.error);
  }
  // Names and layouts as `kiln validate` prints them (escaped here, where
  // the module is): the page never shows a raw name.
  const tensors = (result.tensors ?? []).map((t) => ({
    index: t.index,
    name: t.nameBytes.length === 0 ? '' : kiln.escape(t.nameBytes),
    dtype: t.dtypeName,
    shape: t.shape,
    offset: t.offset,
    length: t.length,
    quantisation: t.quantisation,
    layout: t.layout === null ? null : `${kiln.escape(t.layout)}/${t.blockSize}`,
  }));
  const summary = result.ok ? null : kiln.ruleSummary(result.error.rule);
  postMessage({
    id, type: 'result', ok: result.ok, error: result.ok ? null : result.error, summary,
    header, tensors, map, seconds, bytesRead, reads, mode: stream ? 'stream' : 'ranges',
  });
}

// One file at a time, in the order they were given.
let queue = Promise.resolve();
onmessage = (event) => {
  const { id, file, stream } = event.data;
  queue = queue.then(() => check(id, file, stream === true)).catch((e) =>
    postMessage({ id, type: 'failed', message: String(e?.message ?? e) }));
};
