// Random access: validateRanges/inspectRanges over any async range reader
// and validateBlob/inspectBlob over a Blob or File, driving the C ABI's
// range validator (kiln_ranges_*, through abi.mjs's _ranges* methods). The
// validator asks for the ranges its rules read, one at a time; each is
// asked of the caller's reader (outside any call into the module, so a
// reader that throws never stops the module), checked for its length and
// copied into the handle's buffer. A reader failure is ERR_KILN_IO, never a
// verdict.
import { U8, isUint8Array, own, readRangeOptions, readRangeSize, typedArrayByteLength } from './guard.mjs';
import { normaliseMap } from './mapjson.mjs';

// The reader failed or misbehaved: not a verdict.
function ioError(where, message, cause) {
  const e = new Error(`kiln: ${where}: ${message}`, cause === undefined ? undefined : { cause });
  e.code = 'ERR_KILN_IO';
  return own(e);
}

// kiln: the instance (abi.mjs); inspect: add inspect()'s header and tensors.
export async function validateRanges(kiln, where, inspect, size, readRange, options) {
  const fileSize = readRangeSize(size, where);
  if (typeof readRange !== 'function') {
    throw new TypeError(`kiln: ${where}: readRange must be a function (offset, length) => Promise<Uint8Array>`);
  }
  const [o, ro] = readRangeOptions(options, where);
  const r = kiln._rangesNew(fileSize, o, ro, where);
  try {
    for (let want = kiln._rangesNext(r); want !== null; want = kiln._rangesNext(r)) {
      const { offset, length } = want;
      let got;
      try {
        got = await readRange(offset, length);
      } catch (e) {
        kiln._rangesFail(r);
        throw ioError(where, `reading ${length} bytes at offset ${offset} failed: ${e?.message ?? e}`, e);
      }
      if (got instanceof ArrayBuffer) got = new U8(got);
      if (!isUint8Array(got)) {
        kiln._rangesFail(r);
        throw ioError(where, `the reader returned ${got === null ? 'null' : typeof got} for the ${length} bytes at offset ${offset}, not a Uint8Array`);
      }
      const n = typedArrayByteLength(got);
      if (n !== length) {
        // As RangeValidator::Provide says it; the bytes are not copied in.
        kiln._rangesFail(r);
        throw ioError(where, `the reader returned ${n} bytes for the ${length} bytes at offset ${offset}`);
      }
      kiln._rangesFill(r, got);
    }
    const result = kiln._rangesResult(r, inspect);
    if (result.readError !== undefined) throw ioError(where, result.readError);
    // The block map of this verdict, from the bytes the handle kept.
    if (inspect && ro.map) result.map = normaliseMap(kiln._rangesMap(r));
    return result;
  } finally {
    kiln._rangesFree(r);
  }
}

// A Blob or File: read through blob.slice(start, end).arrayBuffer().
export function validateBlob(kiln, where, inspect, blob, options) {
  if (blob === null || typeof blob !== 'object' || typeof blob.slice !== 'function' || typeof blob.size !== 'number') {
    return Promise.reject(own(new TypeError(`kiln: ${where}: expected a Blob or a File`)));
  }
  const read = async (offset, length) => new U8(await blob.slice(offset, offset + length).arrayBuffer());
  return validateRanges(kiln, where, inspect, blob.size, read, options);
}
