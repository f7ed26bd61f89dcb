// safetensors files: an 8-byte little-endian header length N, N bytes of
// JSON, then the data section, which the tensors' data_offsets cover.
//
// The reference is the safetensors crate (SafeTensors::deserialize, at 0.6.2
// and at main), and @huggingface/hub's parseSafetensorsMetadata; kiln reads
// no file either refuses (docs/compatibility.md lists where kiln is
// stricter, and why). Reading checks what they check: N at most 100,000,000
// (ReaderLimits::max_header_bytes) and at most 25,000,000 (the Hub's), N + 8
// bytes present; the header one JSON object, JSON whitespace allowed before
// and after it; each tensor entry an object {"dtype", "shape",
// "data_offsets"} (the crate also reads serde's array [dtype, shape,
// data_offsets]; the Hub does not, nor does kiln); no dimension above 2^32
// (the Hub's bound, even beside a zero); the element count
// the checked product of every dimension (a zero does not stop it: a product
// past 2^64-1 is refused), times the dtype's bits, a whole number of bytes
// equal to end - begin; the ranges, sorted by offset, tile the data section
// exactly (no gap, no overlap, nothing after the last one). kiln is stricter
// where the crate takes what a Kiln block cannot hold (more than 8
// dimensions, F4/F6 dtypes, an empty name, more tensors or name bytes than a
// block can name) or where it guesses: duplicate keys (the crate keeps the
// last), unknown fields in a tensor entry (ignored by the crate), a dtype
// written as {"F32": null}. Strings must be well-formed UTF-8 without lone
// surrogates; integers have no sign, fraction or exponent. A file with more
// __metadata__ entries than max_metadata_entries is refused as soon as the
// entry past the limit is read. The metadata is checked but not kept:
// ForEachSafetensorsMetadata() decodes it again, one entry at a time.
//
// Dtype names: those of the crate at 0.6.2, plus C64 (0.7.0) and
// F8_E4M3FNUZ, F8_E5M2FNUZ (after 0.7.0) are read. Writing uses only dtypes
// that 0.6.2 reads, so every file kiln writes loads in 0.6.2 and later.
//
// Writing lays the tensors out back to back in the order given (kiln keeps
// its own tensor order; the reference writer would sort by dtype and name)
// and writes the header as compact JSON with the keys of each entry in the
// order dtype, shape, data_offsets, padded with spaces to a multiple of 8
// bytes, as the reference writer does. It refuses a dimension above 2^32 or
// a header above 25,000,000 bytes, which the Hub would not read.
#ifndef KILN_FORMATS_SAFETENSORS_H_
#define KILN_FORMATS_SAFETENSORS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/dtype.h"
#include "kiln/formats/policy.h"
#include "kiln/formats/result.h"

namespace kiln::formats {

struct SafetensorsTensor {
  // A view into the file, or into SafetensorsFile's decoded names when the
  // name holds an escape.
  std::string_view name;
  std::string_view dtype_name;  // "F32", "BF16", ... (static storage)
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
  // The decoded form of the names that hold escapes (the views point here).
  // Move-only: a copy would point into this one.
  std::vector<std::unique_ptr<const std::string>> decoded_names;
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

// The first version of the reference crate that reads a dtype name.
enum class SafetensorsSince : std::uint8_t { k0_6_2, k0_7_0, kMain };

// A dtype name of the reference crate: kiln's dtype for it, if kiln has one.
struct SafetensorsDtype {
  std::string_view name;
  std::optional<Dtype> dtype;
  SafetensorsSince since;
};

// Dtype names, both ways: F64 F32 F16 BF16 I64 I32 I16 I8 U64 U32 U16 U8
// BOOL F8_E4M3 (kiln f8_e4m3fn) F8_E5M2 F8_E8M0 (0.6.2 and later), C64
// (0.7.0 and later), F8_E4M3FNUZ F8_E5M2FNUZ (after 0.7.0). The crate's F4,
// F6_E2M3 and F6_E3M2 have no kiln dtype.
[[nodiscard]] std::optional<SafetensorsDtype> LookUpSafetensorsDtype(std::string_view name);
[[nodiscard]] std::optional<Dtype> DtypeFromSafetensors(std::string_view name);
[[nodiscard]] std::optional<SafetensorsDtype> SafetensorsDtypeFor(Dtype dtype);
[[nodiscard]] std::optional<std::string_view> SafetensorsDtypeName(Dtype dtype);

// A tensor's size in bits as the reference counts it (Metadata::validate):
// the checked product of every dimension from 1, in order, a zero included
// (so [2^40, 2^40, 0] overflows), times the dtype's bits, checked. None on
// overflow.
[[nodiscard]] std::optional<std::uint64_t> SafetensorsBits(std::span<const std::uint64_t> shape,
                                                           Dtype dtype);

// One tensor to write.
struct SafetensorsEntry {
  std::string_view name;
  Dtype dtype = Dtype::kF32;
  std::span<const std::uint64_t> shape;
  std::uint64_t byte_length = 0;
};

// The file's first bytes: the 8-byte header length and the padded JSON
// header. The payloads follow, back to back, in the order of `tensors`.
// Refused (an error at offset 0: a writer has no input file): a dtype or
// name safetensors cannot carry, a shape its readers overflow on or the Hub
// refuses, a byte_length other than dtype and shape make, a header above the
// Hub's bound.
[[nodiscard]] FormatResult<std::string> SafetensorsHeader(
    std::span<const SafetensorsEntry> tensors);

}  // namespace kiln::formats

#endif  // KILN_FORMATS_SAFETENSORS_H_
