#include "gguf_value.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace kiln::formats {
namespace internal {
namespace {

using base::AsText;
using base::ByteReader;

// Bytes of a fixed-width value; 0 for string and array.
std::uint64_t FixedWidth(std::uint32_t type) {
  switch (static_cast<GgufType>(type)) {
    case GgufType::kU8:
    case GgufType::kI8:
    case GgufType::kBool:
      return 1;
    case GgufType::kU16:
    case GgufType::kI16:
      return 2;
    case GgufType::kU32:
    case GgufType::kI32:
    case GgufType::kF32:
      return 4;
    case GgufType::kU64:
    case GgufType::kI64:
    case GgufType::kF64:
      return 8;
    default:
      return 0;
  }
}

// The fewest bytes one element of `type` can occupy.
std::uint64_t MinWidth(std::uint32_t type) {
  if (type == static_cast<std::uint32_t>(GgufType::kString)) return 8;
  if (type == static_cast<std::uint32_t>(GgufType::kArray)) return 12;
  return FixedWidth(type);
}

bool SkipString(ByteReader& r, std::string* error) {
  std::uint64_t n = 0;
  const bool has_length = r.ReadU64Le(&n);
  if (has_length && n > kMaxGgufStringBytes) {
    *error = absl::StrFormat("a string of %d bytes, more than %d", n, kMaxGgufStringBytes);
    return false;
  }
  if (has_length && r.Skip64(n)) return true;
  *error = "a string runs past the end of the file";
  return false;
}

bool SkipArray(ByteReader& r, std::string* error) {
  std::uint32_t type = 0;
  std::uint64_t count = 0;
  if (!r.ReadU32Le(&type) || !r.ReadU64Le(&count)) {
    *error = "the file ends inside an array header";
    return false;
  }
  if (type == static_cast<std::uint32_t>(GgufType::kArray)) {
    *error = "an array of arrays (ggml's gguf.cpp refuses nested arrays)";
    return false;
  }
  if (type > static_cast<std::uint32_t>(GgufType::kF64)) {
    *error = absl::StrFormat("unknown array element type %d", type);
    return false;
  }
  if (count > r.remaining() / MinWidth(type)) {
    *error = absl::StrFormat("array of %d elements cannot fit in the %d bytes that remain", count,
                             r.remaining());
    return false;
  }
  if (count > kMaxGgufArrayElements) {
    *error = absl::StrFormat("an array of %d elements, more than %d", count, kMaxGgufArrayElements);
    return false;
  }
  if (const std::uint64_t w = FixedWidth(type)) return r.Skip64(count * w);
  for (std::uint64_t i = 0; i < count; ++i) {  // strings: nothing else is left
    if (!SkipString(r, error)) return false;
  }
  return true;
}

}  // namespace

bool SkipGgufValue(ByteReader& r, std::uint32_t type, std::string* error) {
  if (type > static_cast<std::uint32_t>(GgufType::kF64)) {
    *error = absl::StrFormat("unknown value type %d", type);
    return false;
  }
  if (const std::uint64_t w = FixedWidth(type)) {
    if (r.Skip64(w)) return true;
    *error = "the file ends inside a value";
    return false;
  }
  if (type == static_cast<std::uint32_t>(GgufType::kString)) return SkipString(r, error);
  return SkipArray(r, error);
}

namespace {

// Renders values already validated by SkipGgufValue, so reads cannot fail.
class Renderer {
 public:
  explicit Renderer(std::size_t max) : max_(max) {}

  // Returns false once the output is full.
  bool Value(ByteReader& r, std::uint32_t type) {
    if (type == static_cast<std::uint32_t>(GgufType::kArray)) return Array(r);
    return Scalar(r, type, false);
  }

  std::string Take() { return std::move(out_); }

 private:
  // A string or a number (array elements are never arrays).
  bool Scalar(ByteReader& r, std::uint32_t type, bool quote) {
    if (type == static_cast<std::uint32_t>(GgufType::kString)) {
      std::uint64_t n = 0;
      base::Bytes b;
      (void)r.ReadU64Le(&n);
      (void)r.ReadBytes64(n, &b);
      const std::string_view s = AsText(b);
      // Only what fits is copied, however long the string.
      if (!quote) return Put(s);
      return Put("\"") && Put(s) && Put("\"");
    }
    return Put(Number(r, type));
  }

  bool Put(std::string_view s) {
    if (out_.size() + s.size() <= max_) {
      out_ += s;
      return true;
    }
    out_ += s.substr(0, max_ - std::min(max_, out_.size()));
    out_ += "...";
    return false;
  }

  bool Array(ByteReader& r) {
    std::uint32_t type = 0;
    std::uint64_t count = 0;
    (void)r.ReadU32Le(&type);
    (void)r.ReadU64Le(&count);
    if (!Put("[")) return false;
    for (std::uint64_t i = 0; i < count; ++i) {
      if ((i > 0 && !Put(", ")) || !Scalar(r, type, true)) {
        out_ += absl::StrFormat(" (%d items)]", count);
        return false;
      }
    }
    return Put("]");
  }

  static std::string Number(ByteReader& r, std::uint32_t type) {
    std::uint64_t bits = 0;
    const std::uint64_t w = FixedWidth(type);
    for (std::uint64_t k = 0; k < w; ++k) {
      std::uint8_t b = 0;
      (void)r.ReadU8(&b);
      bits |= std::uint64_t{b} << (8 * k);
    }
    const auto sign = [&](int width) {  // sign-extends a `width`-bit value
      const int shift = 64 - width;
      return static_cast<std::int64_t>(bits << shift) >> shift;
    };
    switch (static_cast<GgufType>(type)) {
      case GgufType::kBool:
        return bits != 0 ? "true" : "false";
      case GgufType::kI8:
        return absl::StrCat(sign(8));
      case GgufType::kI16:
        return absl::StrCat(sign(16));
      case GgufType::kI32:
        return absl::StrCat(sign(32));
      case GgufType::kI64:
        return absl::StrCat(static_cast<std::int64_t>(bits));
      case GgufType::kF32: {
        float f = 0;
        const auto u = static_cast<std::uint32_t>(bits);
        std::memcpy(&f, &u, sizeof f);
        return absl::StrFormat("%g", f);
      }
      case GgufType::kF64: {
        double d = 0;
        std::memcpy(&d, &bits, sizeof d);
        return absl::StrFormat("%g", d);
      }
      default:
        return absl::StrCat(bits);
    }
  }

  std::size_t max_;
  std::string out_;
};

}  // namespace
}  // namespace internal

std::string FormatGgufValue(const GgufKeyValue& kv, std::size_t max_chars) {
  base::ByteReader r(kv.raw);
  internal::Renderer out(max_chars);
  (void)out.Value(r, static_cast<std::uint32_t>(kv.type));
  return out.Take();
}

}  // namespace kiln::formats
