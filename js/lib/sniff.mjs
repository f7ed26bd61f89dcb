// Format sniffing: the format of a file from its first bytes (pass at least
// the first SNIFF_BYTES; fewer may give 'unknown'). Looks only at magic
// numbers:
//   kiln         bytes 0..3 are "KLNT" (any version: validate says more)
//   gguf         bytes 0..3 are "GGUF"
//   npy          bytes 0..5 are "\x93NUMPY"
//   npz          a zip local file header ("PK\x03\x04") whose first member's
//                name ends in ".npy" (any other zip is 'unknown')
//   safetensors  an 8-byte little-endian header length N with
//                2 <= N <= SAFETENSORS_MAX_HEADER_BYTES, then "{" at byte 8
import { byteView } from './guard.mjs';
import { SAFETENSORS_MAX_HEADER_BYTES } from './policy.mjs';

// The zip local file header: its size, and where the name's length is.
const ZIP_LOCAL_HEADER_BYTES = 30;
const ZIP_NAME_LENGTH_AT = 26;

export function detectFormat(firstBytes) {
  const b = byteView(firstBytes, 'detectFormat');
  const starts = (text, at = 0) => b.length >= at + text.length && [...text].every((c, i) => b[at + i] === c.charCodeAt(0));
  if (starts('KLNT')) return 'kiln';
  if (starts('GGUF')) return 'gguf';
  if (starts('\x93NUMPY')) return 'npy';
  if (starts('PK\x03\x04') && b.length >= ZIP_LOCAL_HEADER_BYTES) {
    const nameLength = b[ZIP_NAME_LENGTH_AT] | (b[ZIP_NAME_LENGTH_AT + 1] << 8);
    if (b.length >= ZIP_LOCAL_HEADER_BYTES + nameLength && nameLength >= 4) {
      const name = String.fromCharCode(...b.subarray(ZIP_LOCAL_HEADER_BYTES, ZIP_LOCAL_HEADER_BYTES + nameLength));
      if (name.endsWith('.npy')) return 'npz';
    }
    return 'unknown';
  }
  if (b.length >= 9 && b[8] === 0x7b) {
    const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
    const n = dv.getBigUint64(0, true);
    if (n >= 2n && n <= SAFETENSORS_MAX_HEADER_BYTES) return 'safetensors';
  }
  return 'unknown';
}
