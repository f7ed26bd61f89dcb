// GGUF files (versions 2 and 3, little-endian), as written by llama.cpp.
//
// A file is read only when the three reference readers read it with the
// same tensors: ggml's gguf.cpp (gguf_init_from_file with no_alloc, as
// llama.cpp calls it), @huggingface/gguf and gguf-py's GGUFReader
// (docs/compatibility.md lists where kiln is stricter, and why;
// tests/loaders/gguf-* run the files through kiln and each).
//
// Every count and length is bounded by the bytes that remain and by the
// caller's ReaderLimits before anything is read: a tensor_count of 2^40 in a
// small file, or more tensors than a Kiln block can name, is refused at once.
// Nothing is allocated by a count from the file: lists grow only as entries
// are read. Metadata values are validated and not kept: ForEachGgufMetadata()
// walks the validated section again, and FormatGgufValue() renders one value.
//
// Metadata: at most 100,000 pairs; keys non-empty, unique, at most 65,535
// bytes, well-formed UTF-8 without NUL or a leading U+FEFF; strings of at
// most 1,000,000 bytes, arrays of at most 1,000,000 elements and never of
// arrays; general.alignment a u32 power of two up to 2^30 (default 32). The
// header (up to the end of the tensor infos) at most 48,000,000 bytes.
//
// Tensors: names unique, under 64 bytes (GGML_MAX_NAME), well-formed UTF-8
// without NUL or a leading U+FEFF; at most 4 dimensions (GGML_MAX_DIMS), each
// at most 2^32, the element count passing gguf.cpp's test against 2^63-1; a
// ggml type of ggml's type table up to Q1_0 (41; gguf-py knows no later
// one), the innermost dimension a multiple of its block size; no Q8_1 tensor
// with elements (gguf-py sizes its blocks at 40 bytes, ggml at 36), no BF16
// tensor of no dimensions, and, even with a zero dimension, at most 2^63-1
// bytes counting only the nonzero dimensions (gguf-py's numpy array). Layout
// as gguf.cpp requires it: the data section starts at the end of the tensor
// infos padded to the alignment, inside the file when there are tensors, and
// each tensor's offset is the sum of the sizes of the tensors before it in
// file order, each padded to the alignment (a tensor of no bytes included).
// Each tensor's bytes must lie inside the file. GGUF lists dimensions
// innermost first (ne[0] is the row length); GgufTensor::shape holds them
// reversed, in kiln's row-major order.
#ifndef KILN_FORMATS_GGUF_H_
#define KILN_FORMATS_GGUF_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/dtype.h"
#include "kiln/formats/policy.h"
#include "kiln/formats/result.h"

namespace kiln::formats {

enum class GgufType : std::uint32_t {
  kU8 = 0,
  kI8 = 1,
  kU16 = 2,
  kI16 = 3,
  kU32 = 4,
  kI32 = 5,
  kF32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kU64 = 10,
  kI64 = 11,
  kF64 = 12,
};

struct GgufKeyValue {
  std::string_view key;  // view into the file
  GgufType type = GgufType::kU8;
  // The value's encoded bytes (for an array: element type, count, elements).
  std::span<const std::uint8_t> raw;
};

// A ggml tensor type: elements per block and bytes per block (1 and the
// element width for the plain types).
struct GgmlType {
  std::uint32_t id;
  std::string_view name;  // "F32", "Q4_K", ...
  std::uint32_t block_size;
  std::uint32_t type_size;
  std::optional<Dtype> dtype;  // the kiln dtype of a plain type
};

// The type with this id, or nullptr when it is unknown (or removed from ggml).
[[nodiscard]] const GgmlType* FindGgmlType(std::uint32_t id);

struct GgufTensor {
  std::string_view name;  // view into the file
  const GgmlType* type = nullptr;
  std::vector<std::uint64_t> shape;  // row-major: ne reversed
  std::uint64_t offset = 0;          // relative to the data section
  std::span<const std::uint8_t> data;
};

struct GgufFile {
  std::uint32_t version = 3;
  std::uint64_t alignment = 32;
  std::uint64_t data_start = 0;  // absolute offset of the data section
  std::uint64_t metadata_count = 0;
  // The validated key/value section; ForEachGgufMetadata() walks it.
  std::span<const std::uint8_t> metadata_bytes;
  std::vector<GgufTensor> tensors;  // in file order
};

// Reads a GGUF file held in memory. Views point into it.
[[nodiscard]] FormatResult<GgufFile> ReadGguf(std::span<const std::uint8_t> file,
                                              const ReaderLimits& limits = {});

// Calls `visit` with each key/value pair of a file ReadGguf accepted, in
// file order, until it returns false. Allocates nothing.
void ForEachGgufMetadata(const GgufFile& file,
                         const std::function<bool(const GgufKeyValue&)>& visit);

// The value as text: numbers in decimal, strings as they are (the caller
// escapes them for a terminal), arrays as [a, b, ...]. Stops after about
// `max_chars` characters and marks the cut with "..." and the element count.
[[nodiscard]] std::string FormatGgufValue(const GgufKeyValue& kv, std::size_t max_chars = 80);

}  // namespace kiln::formats

#endif  // KILN_FORMATS_GGUF_H_
