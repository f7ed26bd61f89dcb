// NumPy .npy files: one array per file (format versions 1.0, 2.0 and 3.0).
//
// ReadNpy reads a file only when numpy.load(path, allow_pickle=False) reads
// it too (NumPy 1.24, numpy/lib/format.py), with the same dtype, shape and
// bytes; the files it refuses that NumPy reads are listed, with the reason,
// in docs/compatibility.md. The rules:
// - the magic "\x93NUMPY", then version 1.0 (a 2-byte header length), 2.0
//   or 3.0 (4 bytes);
// - a header of at most ReaderLimits::max_npy_header_bytes (10,000 bytes,
//   NumPy's max_header_size);
// - the header is a Python dict literal, read by a small strict parser that
//   accepts exactly the keys 'descr', 'fortran_order' and 'shape', each
//   once, and no other Python syntax, so nothing in a file is ever
//   evaluated. It starts with '{' and may end in spaces or tabs and one
//   newline. A Python 2 long ("3L") is read in versions 1.0 and 2.0 only:
//   NumPy drops the L there and not in 3.0;
// - shape: a tuple of at most 8 non-negative integers, and the itemsize
//   times the product of the nonzero dimensions at most 2^63-1. NumPy's
//   sizes are signed 64-bit and numpy.load refuses a larger shape even when
//   a zero dimension leaves the array empty;
// - the data: exactly the array's bytes, nothing after them.
//
// Supported dtypes (kiln name in brackets): <f2 [f16], <f4 [f32], <f8 [f64],
// |u1 [u8], |i1 [i8], <u2 [u16], <i2 [i16], <u4 [u32], <i4 [i32], <u8 [u64],
// <i8 [i64], |b1 [bool], <c8 [c64], <c16 [c128]. The big-endian forms (">f4",
// ...) are read too: their data must be byte-swapped to little-endian (see
// NpyArray::swap_width); so are '<' and '>' for the one-byte types. Object
// arrays, strings, datetimes, void and structured dtypes are refused, and so
// are the forms whose meaning depends on the machine ("=f4", "f4", "|f4",
// "float32", "l"). fortran_order True is refused for an array with two or
// more dimensions greater than 1 and no zero dimension (kiln does not
// transpose); for the others the two orders are the same bytes.
#ifndef KILN_FORMATS_NPY_H_
#define KILN_FORMATS_NPY_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/dtype.h"
#include "kiln/formats/policy.h"
#include "kiln/formats/result.h"

namespace kiln::formats {

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
// Of `limits`, only max_npy_header_bytes applies.
[[nodiscard]] FormatResult<NpyArray> ReadNpy(std::span<const std::uint8_t> file,
                                             const ReaderLimits& limits = {});

// The little-endian NumPy descr of a kiln dtype ("<f4"), or nullopt when
// NumPy has no such dtype (bf16, the f8, 4-bit and opaque dtypes).
[[nodiscard]] std::optional<std::string_view> NpyDescr(Dtype dtype);

// Whether numpy.load can hold an array of this kiln dtype and shape: NumPy
// has the dtype (NpyDescr), and the shape obeys the rule above (a zero-element
// shape with a dimension of 2^63 or more, say, does not).
[[nodiscard]] bool NpyCanHold(Dtype dtype, std::span<const std::uint64_t> shape);

// The bytes of a version 1.0 header (magic to the final newline) for a
// C-order array; the array's little-endian bytes follow it. Padded with
// spaces so that the data start at a multiple of 64, as NumPy does. Fails
// when numpy.load could not read the file (!NpyCanHold).
[[nodiscard]] FormatResult<std::string> NpyHeader(Dtype dtype,
                                                  std::span<const std::uint64_t> shape);

// The byte swap that turns big-endian elements little-endian: fills `out`
// with bytes [at, at + out.size()) of `source` after the bytes of each
// `width`-byte unit of `source` are reversed (a trailing partial unit, and
// any unit when width < 2, is copied as it is). Units may straddle `at` and
// the end of `out`: a caller may copy a large array in chunks of any size.
// Requires at + out.size() <= source.size().
void CopySwapped(std::span<const std::uint8_t> source, std::uint64_t at,
                 std::span<std::uint8_t> out, unsigned width);

}  // namespace kiln::formats

#endif  // KILN_FORMATS_NPY_H_
