// The bounds of the foreign formats kiln reads and writes (safetensors, GGUF,
// NumPy), the format readers' limits, and the profiles the commands apply:
// what each limits, why, and its default. Kiln's own bounds (the named-tensor
// maxima, the upload and unpack policies, the idle timeout) are in
// kiln/policy.h (core), where the parser and every binding reach them; this
// header builds on it. Together the two are every default bound kiln applies
// (docs/limits.md); nothing else in the project defines one.
//
// Two kinds of number:
// - the format's maxima (kFormat*): what the Kiln v2 format, or a foreign
//   format's reference reader, allows at most; a larger value would read
//   files that cannot be represented, or that the reference refuses;
// - policies: what a caller that takes files from strangers sets below the
//   maxima (kUpload*, kUnpack*), so that one input costs a bounded amount of
//   memory, disk and time.
// The named profiles at the end group them as the commands apply them.
#ifndef KILN_FORMATS_POLICY_H_
#define KILN_FORMATS_POLICY_H_

#include <cstdint>
#include <limits>

#include "kiln/block.h"
#include "kiln/policy.h"

namespace kiln::formats {

// Kiln's own bounds, under the names this namespace has always used.
using kiln::kMaxKilnNameBytes;
using kiln::kMaxNamedKilnTensors;

// ---- Foreign formats' maxima ----------------------------------------------

// The longest safetensors JSON header: the reference implementation's own
// limit (it refuses a longer one), so a file kiln writes is one it reads.
inline constexpr std::uint64_t kMaxSafetensorsHeaderBytes = 100'000'000;
// The longest .npy header (the dict with its padding, after the length
// field): NumPy's own max_header_size, past which numpy.load refuses a file
// unless told to trust it (allow_pickle=True).
inline constexpr std::uint64_t kMaxNpyHeaderBytes = 10'000;
// NumPy's sizes are npy_intp, signed 64-bit: numpy.load refuses a shape
// unless the itemsize times the product of its nonzero dimensions is at most
// 2^63-1 ("array is too big"; a dimension of 2^63 or more fails before that),
// even when a zero dimension leaves the array empty.
inline constexpr std::uint64_t kNumpyMaxBytes = (std::uint64_t{1} << 63) - 1;

// ggml's own bounds (ggml.h, gguf.cpp): at most GGML_MAX_DIMS dimensions, a
// tensor name shorter than GGML_MAX_NAME bytes (gguf.cpp refuses 64 and more).
inline constexpr std::uint32_t kGgmlMaxDims = 4;
inline constexpr std::uint64_t kGgmlMaxName = 64;
// The bounds of the other reference, @huggingface/gguf 0.4.6, where they are
// tighter than gguf.cpp's: it refuses more key/value pairs, more tensors and
// dimensions above these, and reads nothing past the first 50,000,000 bytes
// (its buffer's limit; 48,000,000 leaves it the look-ahead it fetches).
inline constexpr std::uint64_t kGgufMaxKeyValues = 100'000;
inline constexpr std::uint64_t kGgufMaxTensors = 10'000'000;
inline constexpr std::uint64_t kGgufMaxDimension = std::uint64_t{1} << 32;
inline constexpr std::uint64_t kGgufMaxHeaderBytes = 48'000'000;
// It computes the data section's start as a JavaScript 32-bit integer, and
// reads a key only within the 500,000 bytes it has fetched ahead.
inline constexpr std::uint64_t kGgufMaxAlignment = std::uint64_t{1} << 30;
inline constexpr std::uint64_t kGgufMaxKeyBytes = 65'535;
// The longest metadata string value and the longest array kiln reads. ggml's
// gguf.cpp reads up to 2^30 of each; @huggingface/gguf 0.4.6 refuses arrays
// of more than 1,000,000 elements and strings of more than 10,000,000 bytes,
// and reads a string only as far as the 2,000,000-byte chunks it has fetched
// (a longer one can leave the next read outside them).
inline constexpr std::uint64_t kMaxGgufStringBytes = 1'000'000;
inline constexpr std::uint64_t kMaxGgufArrayElements = 1'000'000;

// GGUF key/value pairs, or safetensors __metadata__ entries: real files have
// tens to a few hundred (a GGUF vocabulary is one array value), and Kiln has
// no place for metadata anyway. While checking keys for repeats a reader
// keeps 4 bytes per entry (the safetensors reader 12 more, and the decoded
// key, for a key written with escapes).
inline constexpr std::uint64_t kDefaultMetadataEntries = 65'536;

// ---- The foreign-format readers' limits -------------------------------------
//
// Caller limits for the format readers (GGUF, safetensors, .npy). A file past
// a limit is refused as soon as the limit is crossed, before the rest is read.
struct ReaderLimits {
  // Tensors in one file. Default: kMaxNamedKilnTensors; a file with more
  // cannot become a Kiln block, so reading it to the end is wasted work. The
  // readers also stop when the names alone exceed kMaxKilnNameBytes.
  std::uint64_t max_tensors = kMaxNamedKilnTensors;
  // Default: kDefaultMetadataEntries.
  std::uint64_t max_metadata_entries = kDefaultMetadataEntries;
  // Bytes before the data: the safetensors JSON header, or a GGUF file's
  // header, metadata and tensor infos. Default kMaxSafetensorsHeaderBytes;
  // GGUF headers of real models (vocabulary included) are a few MB. Values
  // above 2^32-1 act as 2^32-1, which keeps the readers' per-entry
  // bookkeeping at 4 bytes.
  std::uint64_t max_header_bytes = kMaxSafetensorsHeaderBytes;
  // Default kMaxNpyHeaderBytes; a larger value reads files numpy.load
  // refuses.
  std::uint64_t max_npy_header_bytes = kMaxNpyHeaderBytes;
};

// ---- Profiles -------------------------------------------------------------
//
// Every bound one command applies to one input: the parser's, for a Kiln
// input; the readers', for a foreign input; and the longest block a
// conversion may write.
struct Policy {
  // A Kiln input (kiln validate, inspect, unpack, ingest, convert IN.klnt).
  Limits kiln;
  // A foreign input (kiln convert, kiln pack).
  ReaderLimits reader;
  // The longest Kiln block a conversion writes (--max-block-bytes).
  std::uint64_t max_block_bytes = std::numeric_limits<std::uint64_t>::max();
};

// The format's maxima: what kiln validate, inspect, convert and pack apply
// unless told otherwise (the Python package, which does not link the
// readers, applies kiln::Limits{} itself: the same Kiln limits).
inline constexpr Policy kFormatMaxima{};

// An upload service's policy: kiln ingest's defaults (kiln/policy.h).
inline constexpr Policy kUploadService = [] {
  Policy p;
  p.kiln = kUploadLimits;
  return p;
}();

// kiln unpack's defaults (kiln/policy.h).
inline constexpr Policy kUnpackPolicy = [] {
  Policy p;
  p.kiln = kUnpackLimits;
  return p;
}();

}  // namespace kiln::formats

#endif  // KILN_FORMATS_POLICY_H_
