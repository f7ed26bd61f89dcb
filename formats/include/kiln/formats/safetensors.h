// safetensors files: an 8-byte little-endian header length N, N bytes of
// JSON, then the data section, which the tensors' data_offsets cover.
//
// Reading follows the reference implementation's checks: N at most
// 100,000,000 (ReaderLimits::max_header_bytes), the header starts with '{', every tensor's byte
// range matches its dtype and shape, and the ranges, sorted by offset, tile the data section
// exactly (no gap, no overlap, nothing after the last one), so no byte of the file is left
// unaccounted for. The JSON parser is strict: no duplicate keys, no unknown fields in a tensor
// entry, integers only where integers belong, well-formed UTF-8 in every string. A file with more
// tensors than ReaderLimits::max_tensors (by default, more than a Kiln block
// can name) or more __metadata__ entries than max_metadata_entries is
// refused as soon as the entry past the limit is read. The metadata is
// checked but not kept: ForEachSafetensorsMetadata() decodes it again, one
// entry at a time.
//
// Writing lays the tensors out back to back in the order given (kiln keeps
// its own tensor order; the reference writer would sort by dtype and name)
// and writes the header as compact JSON with the keys of each entry in the
// order dtype, shape, data_offsets, padded with spaces to a multiple of 8
// bytes, as the reference writer does.
#ifndef KILN_FORMATS_SAFETENSORS_H_
#define KILN_FORMATS_SAFETENSORS_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/dtype.h"
#include "kiln/formats/limits.h"
#include "kiln/formats/result.h"

namespace kiln::formats {

inline constexpr std::uint64_t kMaxSafetensorsHeaderBytes = 100'000'000;

struct SafetensorsTensor {
  std::string name;
  std::string dtype_name;  // as in the file: "F32", "BF16", ...
  Dtype dtype = Dtype::kF32;
  std::vector<std::uint64_t> shape;  // at most 8 dimensions
  std::uint64_t begin = 0;           // data_offsets, relative to the data section
  std::uint64_t end = 0;
  std::span<const std::uint8_t> data;  // view into the file
  std::uint64_t entry_offset = 0;      // where its name starts in the file
};

struct SafetensorsFile {
  std::uint64_t header_length = 0;
  // In data order (sorted by offset, as the reference loader orders them).
  std::vector<SafetensorsTensor> tensors;
  // The "__metadata__" string-to-string map: its entry count and its JSON
  // object, a view into the file (empty when absent or null).
  std::uint64_t metadata_count = 0;
  std::string_view metadata_json;
};

// Reads a safetensors file held in memory. Data views point into it.
[[nodiscard]] FormatResult<SafetensorsFile> ReadSafetensors(std::span<const std::uint8_t> file,
                                                            const ReaderLimits& limits = {});

// Calls `visit` with each __metadata__ key and value (decoded) of a file
// ReadSafetensors accepted, in file order, until it returns false. Holds one
// entry in memory at a time.
void ForEachSafetensorsMetadata(
    const SafetensorsFile& file,
    const std::function<bool(std::string_view key, std::string_view value)>& visit);

// Dtype names, both ways: F64 F32 F16 BF16 I64 I32 I16 I8 U64 U32 U16 U8
// BOOL F8_E4M3 (kiln f8_e4m3fn) F8_E5M2 F8_E8M0 C64.
[[nodiscard]] std::optional<Dtype> DtypeFromSafetensors(std::string_view name);
[[nodiscard]] std::optional<std::string_view> SafetensorsDtypeName(Dtype dtype);

// One tensor to write.
struct SafetensorsEntry {
  std::string_view name;
  Dtype dtype = Dtype::kF32;
  std::span<const std::uint64_t> shape;
  std::uint64_t byte_length = 0;
};

// The file's first bytes: the 8-byte header length and the padded JSON
// header. The payloads follow, back to back, in the order of `tensors`.
[[nodiscard]] FormatResult<std::string> SafetensorsHeader(
    std::span<const SafetensorsEntry> tensors);

}  // namespace kiln::formats

#endif  // KILN_FORMATS_SAFETENSORS_H_
