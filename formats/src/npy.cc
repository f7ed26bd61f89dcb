// Reading and writing NumPy .npy files.
#include "kiln/formats/npy.h"

#include <algorithm>
#include <array>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "kiln/base/bytes.h"
#include "kiln/base/checked.h"
#include "kiln/directory.h"
#include "npy_header.h"
#include "reader_util.h"

namespace kiln::formats {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";

struct NpyType {
  std::string_view descr;  // the little-endian form
  Dtype dtype;
  unsigned size;       // bytes per element
  unsigned swap_unit;  // bytes per byte-swapped unit; 0 for one-byte types
};

constexpr std::array<NpyType, 14> kTypes = {{
    {"<f2", Dtype::kF16, 2, 2},
    {"<f4", Dtype::kF32, 4, 4},
    {"<f8", Dtype::kF64, 8, 8},
    {"|u1", Dtype::kU8, 1, 0},
    {"|i1", Dtype::kI8, 1, 0},
    {"<u2", Dtype::kU16, 2, 2},
    {"<i2", Dtype::kI16, 2, 2},
    {"<u4", Dtype::kU32, 4, 4},
    {"<i4", Dtype::kI32, 4, 4},
    {"<u8", Dtype::kU64, 8, 8},
    {"<i8", Dtype::kI64, 8, 8},
    {"|b1", Dtype::kBool, 1, 0},
    {"<c8", Dtype::kC64, 8, 4},  // two f32 halves, each swapped on its own
    {"<c16", Dtype::kC128, 16, 8},
}};

const NpyType* Find(Dtype dtype) {
  const auto* it = std::find_if(kTypes.begin(), kTypes.end(),
                                [dtype](const NpyType& t) { return t.dtype == dtype; });
  return it == kTypes.end() ? nullptr : it;
}

// Why a dtype that is not in kTypes is refused.
std::string Unsupported(std::string_view descr) {
  const char kind = descr.size() > 1 ? descr[1] : '?';
  std::string why = "has no kiln equivalent";
  if (kind == 'O') why = "is an object array (Python objects, not numbers)";
  if (kind == 'U' || kind == 'S' || kind == 'a') why = "is a string dtype";
  if (kind == 'V') why = "is a void (raw record) dtype";
  if (kind == 'M' || kind == 'm') why = "is a datetime dtype";
  return absl::StrFormat("npy dtype %s %s: not supported", internal::Quoted(descr), why);
}

FormatResult<const NpyType*> LookUp(std::string_view descr, unsigned* swap_width) {
  if (descr.empty()) return FormatError{"npy descr is empty"};
  const char order = descr[0];
  const std::string_view code = descr.substr(1);
  for (const NpyType& t : kTypes) {
    if (t.descr.substr(1) != code) continue;
    if (t.size == 1 && (order == '|' || order == '<' || order == '>')) {
      *swap_width = 0;
      return &t;
    }
    if (t.size > 1 && (order == '<' || order == '>')) {
      *swap_width = order == '>' ? t.swap_unit : 0;
      return &t;
    }
    return FormatError{absl::StrFormat("npy descr %s: byte order '%c' is not '<' or '>'",
                                       internal::Quoted(descr), order)};
  }
  return FormatError{Unsupported(descr)};
}

// The orders agree when the array is empty or at most one dimension
// exceeds 1.
bool FortranIsCOrder(std::span<const std::uint64_t> shape) {
  return std::count(shape.begin(), shape.end(), 0) > 0 ||
         std::count_if(shape.begin(), shape.end(), [](std::uint64_t d) { return d > 1; }) <= 1;
}

// kNumpyMaxBytes: kiln/formats/policy.h.

// The array's data bytes, or why NumPy cannot hold it.
FormatResult<std::uint64_t> ArrayBytes(std::span<const std::uint64_t> shape, unsigned size) {
  // Of the nonzero dimensions; nullopt once the product overflows.
  const std::optional<std::uint64_t> bytes =
      std::accumulate(shape.begin(), shape.end(), std::optional<std::uint64_t>(size),
                      [](std::optional<std::uint64_t> acc, std::uint64_t d) {
                        return d == 0 || !acc ? acc : base::CheckedMul(*acc, d);
                      });
  if (!bytes || *bytes > kNumpyMaxBytes) {
    return FormatError{absl::StrFormat(
        "npy shape (%s) of %d-byte elements: the itemsize times the nonzero dimensions exceeds "
        "2^63-1 bytes, more than NumPy can hold (numpy.load refuses it)",
        absl::StrJoin(shape, ", "), size)};
  }
  return std::count(shape.begin(), shape.end(), 0) > 0 ? 0 : *bytes;
}

// The header text: where it starts and how long it says it is.
FormatResult<std::span<const std::uint8_t>> HeaderText(base::ByteReader& r, std::uint8_t major,
                                                       std::uint64_t limit) {
  std::uint64_t length = 0;
  const std::uint64_t at = r.position();
  if (major == 1) {
    std::uint16_t n = 0;
    if (!r.ReadU16Le(&n)) return FormatError{"npy file ends inside the header length", at};
    length = n;
  } else {
    std::uint32_t n = 0;
    if (!r.ReadU32Le(&n)) return FormatError{"npy file ends inside the header length", at};
    length = n;
  }
  if (length > limit) {
    return FormatError{
        absl::StrFormat("npy header length %d exceeds the limit of %d bytes (NumPy's "
                        "max_header_size)",
                        length, limit),
        at};
  }
  base::Bytes text;
  if (!r.ReadBytes64(length, &text)) {
    return FormatError{absl::StrFormat("npy header of %d bytes is truncated: %d bytes present",
                                       length, r.remaining()),
                       at};
  }
  return text;
}

}  // namespace

FormatResult<NpyArray> ReadNpy(std::span<const std::uint8_t> file, const ReaderLimits& limits) {
  base::ByteReader r(file);
  base::Bytes magic;
  if (!r.ReadBytes(kMagic.size(), &magic) || base::AsText(magic) != kMagic) {
    return FormatError{"not an npy file: the magic \\x93NUMPY is missing", 0};
  }
  std::uint8_t major = 0, minor = 0;
  if (!r.ReadU8(&major) || !r.ReadU8(&minor)) {
    return FormatError{"npy file ends inside the version", r.position()};
  }
  if (major < 1 || major > 3 || minor != 0) {
    return FormatError{
        absl::StrFormat("npy format version %d.%d: only 1.0, 2.0 and 3.0 are read", major, minor),
        6};
  }
  const auto text = HeaderText(r, major, limits.max_npy_header_bytes);
  if (!text.ok()) return text.error();
  const std::uint64_t dict_at = r.position() - text.value().size();
  // Errors past this point concern the header dict; they point into it.
  const auto fail = [dict_at](std::string message, std::uint64_t within = 0) {
    return FormatError{std::move(message), dict_at + within};
  };
  // NumPy drops the L of a Python 2 long ("3L") in versions 1.0 and 2.0 only.
  auto fields = internal::ParseNpyHeaderDict(base::AsText(text.value()), major <= 2);
  if (!fields.ok()) return fail(fields.error().message, fields.error().offset);

  NpyArray a;
  a.major_version = major;
  a.descr = std::move(fields.value().descr);
  a.shape = std::move(fields.value().shape);
  const auto type = LookUp(a.descr, &a.swap_width);
  if (!type.ok()) return fail(type.error().message);
  a.dtype = type.value()->dtype;
  const auto bytes = ArrayBytes(a.shape, type.value()->size);
  if (!bytes.ok()) return fail(bytes.error().message);
  if (fields.value().fortran_order && !FortranIsCOrder(a.shape)) {
    return fail(
        absl::StrFormat("npy array of shape (%s) is in Fortran order: not supported (save "
                        "numpy.ascontiguousarray(a) instead)",
                        absl::StrJoin(a.shape, ", ")));
  }
  if (r.remaining() != bytes.value()) {
    return FormatError{absl::StrFormat("npy array needs %d data bytes, the file has %d after its "
                                       "header",
                                       bytes.value(), r.remaining()),
                       r.position()};
  }
  (void)r.ReadBytes64(bytes.value(), &a.data);
  return a;
}

std::optional<std::string_view> NpyDescr(Dtype dtype) {
  const NpyType* t = Find(dtype);
  if (t == nullptr) return std::nullopt;
  return t->descr;
}

bool NpyCanHold(Dtype dtype, std::span<const std::uint64_t> shape) {
  const NpyType* t = Find(dtype);
  return t != nullptr && shape.size() <= kMaxRank && ArrayBytes(shape, t->size).ok();
}

FormatResult<std::string> NpyHeader(Dtype dtype, std::span<const std::uint64_t> shape) {
  const NpyType* t = Find(dtype);
  if (t == nullptr) {
    return FormatError{
        absl::StrFormat("NumPy has no dtype for kiln's %s", GetDtypeInfo(dtype).name)};
  }
  if (shape.size() > kMaxRank) return FormatError{"shape has more than 8 dimensions"};
  if (const auto bytes = ArrayBytes(shape, t->size); !bytes.ok()) return bytes.error();
  // Python's tuple repr: (), (3,), (3, 4).
  const std::string tuple = shape.size() == 1 ? absl::StrCat("(", shape[0], ",)")
                                              : absl::StrCat("(", absl::StrJoin(shape, ", "), ")");
  std::string dict =
      absl::StrFormat("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", t->descr, tuple);
  const std::size_t unpadded = kMagic.size() + 4 + dict.size() + 1;
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict += '\n';
  // Version 1.0, then the dict's length as a little-endian u16 (the dict is
  // at most a few hundred bytes: 8 dimensions of at most 20 digits).
  std::array<std::uint8_t, 4> version_and_length = {1, 0, 0, 0};
  base::StoreLe<2>(std::span(version_and_length), static_cast<std::uint16_t>(dict.size()));
  std::string out(kMagic);
  out.append(version_and_length.begin(), version_and_length.end());
  return out + dict;
}

void CopySwapped(std::span<const std::uint8_t> source, std::uint64_t at,
                 std::span<std::uint8_t> out, unsigned width) {
  if (width < 2) {
    std::copy_n(source.begin() + static_cast<std::ptrdiff_t>(at), out.size(), out.begin());
    return;
  }
  for (std::size_t k = 0; k < out.size(); ++k) {
    // Byte j of a unit comes from byte width-1-j of the same unit, wherever
    // the chunk boundaries fall; a unit cut short by the end of `source` is
    // copied as it is.
    const std::uint64_t i = at + k;
    const std::uint64_t unit = i - i % width;
    const bool whole = source.size() - unit >= width;  // unit <= i < source.size()
    out[k] = whole ? source[unit + (width - 1 - i % width)] : source[i];
  }
}

}  // namespace kiln::formats
