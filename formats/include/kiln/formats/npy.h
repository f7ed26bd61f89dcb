// NumPy .npy files: one array per file (format versions 1.0, 2.0 and 3.0).
//
// The header is a Python dict literal; it is read by a small strict parser
// that accepts exactly the keys 'descr', 'fortran_order' and 'shape' and no
// other Python syntax, so nothing in a file is ever evaluated.
//
// Supported dtypes (kiln name in brackets): <f2 [f16], <f4 [f32], <f8 [f64],
// |u1 [u8], |i1 [i8], <u2 [u16], <i2 [i16], <u4 [u32], <i4 [i32], <u8 [u64],
// <i8 [i64], |b1 [bool], <c8 [c64], <c16 [c128]. The big-endian forms (">f4",
// ...) are read too: their data must be byte-swapped to little-endian (see
// NpyArray::swap_width). Object arrays, strings, datetimes, void and
// structured dtypes are refused, and so is fortran_order True for rank 2 and
// above (for rank 0 and 1 the two orders are the same bytes).
#ifndef KILN_FORMATS_NPY_H_
#define KILN_FORMATS_NPY_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/dtype.h"
#include "kiln/formats/result.h"

namespace kiln::formats {

// A header longer than this is refused before it is read. NumPy's own
// default limit is 10,000 bytes; version 2.0 allows 4 GiB.
inline constexpr std::uint64_t kMaxNpyHeaderBytes = std::uint64_t{1} << 20;

struct NpyArray {
  std::uint8_t major_version = 1;  // 1, 2 or 3
  std::string descr;               // as written in the header, e.g. "<f4"
  Dtype dtype = Dtype::kF32;
  std::vector<std::uint64_t> shape;    // row-major, at most 8 dimensions
  std::span<const std::uint8_t> data;  // view into the file, exactly the array's bytes
  // 0 when `data` is little-endian (or one byte wide); otherwise the width of
  // the units to reverse to get little-endian (2, 4 or 8; a complex number
  // is two such units).
  unsigned swap_width = 0;
};

// Reads an .npy file held in memory. The returned data view points into it.
[[nodiscard]] FormatResult<NpyArray> ReadNpy(std::span<const std::uint8_t> file);

// The little-endian NumPy descr of a kiln dtype ("<f4"), or nullopt when
// NumPy has no such dtype (bf16, the f8, 4-bit and opaque dtypes).
[[nodiscard]] std::optional<std::string_view> NpyDescr(Dtype dtype);

// The bytes of a version 1.0 header (magic to the final newline) for a
// C-order array; the array's little-endian bytes follow it. Padded with
// spaces so that the data start at a multiple of 64, as NumPy does.
[[nodiscard]] FormatResult<std::string> NpyHeader(Dtype dtype,
                                                  std::span<const std::uint64_t> shape);

// Reverses the bytes of each `width`-byte unit of `data` (a trailing partial
// unit is left alone). Converts big-endian elements to little-endian.
void SwapBytes(std::span<std::uint8_t> data, unsigned width);

}  // namespace kiln::formats

#endif  // KILN_FORMATS_NPY_H_
