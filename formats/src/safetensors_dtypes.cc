#include <algorithm>
#include <array>
#include <numeric>

#include "kiln/base/checked.h"
#include "kiln/formats/safetensors.h"

namespace kiln::formats {
namespace {

struct Name {
  std::string_view name;
  std::optional<Dtype> dtype;  // none: the crate knows it, kiln has no such dtype
  SafetensorsSince since;
};

constexpr auto k062 = SafetensorsSince::k0_6_2;

// Every dtype name of the reference crate (safetensors/src/tensor.rs, enum
// Dtype) at 0.6.2 and at main.
constexpr std::array<Name, 22> kNames = {{
    {"F64", Dtype::kF64, k062},
    {"F32", Dtype::kF32, k062},
    {"F16", Dtype::kF16, k062},
    {"BF16", Dtype::kBf16, k062},
    {"I64", Dtype::kI64, k062},
    {"I32", Dtype::kI32, k062},
    {"I16", Dtype::kI16, k062},
    {"I8", Dtype::kI8, k062},
    {"U64", Dtype::kU64, k062},
    {"U32", Dtype::kU32, k062},
    {"U16", Dtype::kU16, k062},
    {"U8", Dtype::kU8, k062},
    {"BOOL", Dtype::kBool, k062},
    {"F8_E4M3", Dtype::kF8E4m3fn, k062},  // the OCP/ONNX e4m3fn encoding
    {"F8_E5M2", Dtype::kF8E5m2, k062},
    {"F8_E8M0", Dtype::kF8E8m0, k062},
    // The format does not say which nibble holds the first element.
    {"F4", std::nullopt, k062},
    {"F6_E2M3", std::nullopt, k062},  // kiln has no 6-bit dtype
    {"F6_E3M2", std::nullopt, k062},
    {"C64", Dtype::kC64, SafetensorsSince::k0_7_0},
    {"F8_E4M3FNUZ", Dtype::kF8E4m3fnuz, SafetensorsSince::kMain},
    {"F8_E5M2FNUZ", Dtype::kF8E5m2fnuz, SafetensorsSince::kMain},
}};

const Name* Find(std::string_view name) {
  const auto* it =
      std::find_if(kNames.begin(), kNames.end(), [name](const Name& n) { return n.name == name; });
  return it == kNames.end() ? nullptr : it;
}

}  // namespace

std::optional<SafetensorsDtype> LookUpSafetensorsDtype(std::string_view name) {
  const Name* n = Find(name);
  if (n == nullptr) return std::nullopt;
  return SafetensorsDtype{n->name, n->dtype, n->since};
}

std::optional<Dtype> DtypeFromSafetensors(std::string_view name) {
  const Name* n = Find(name);
  return n == nullptr ? std::nullopt : n->dtype;
}

std::optional<SafetensorsDtype> SafetensorsDtypeFor(Dtype dtype) {
  const auto* it = std::find_if(kNames.begin(), kNames.end(),
                                [dtype](const Name& n) { return n.dtype == dtype; });
  if (it == kNames.end()) return std::nullopt;
  return SafetensorsDtype{it->name, it->dtype, it->since};
}

std::optional<std::uint64_t> SafetensorsBits(std::span<const std::uint64_t> shape, Dtype dtype) {
  // Every dimension in order, a zero included, as the crate multiplies them.
  const std::optional<std::uint64_t> bits =
      std::accumulate(shape.begin(), shape.end(), std::optional<std::uint64_t>(1),
                      [](std::optional<std::uint64_t> acc, std::uint64_t d) {
                        return acc ? base::CheckedMul(*acc, d) : std::nullopt;
                      });
  return bits ? base::CheckedMul(*bits, GetDtypeInfo(dtype).bits) : std::nullopt;
}

std::optional<std::string_view> SafetensorsDtypeName(Dtype dtype) {
  const auto d = SafetensorsDtypeFor(dtype);
  if (!d) return std::nullopt;
  return d->name;
}

}  // namespace kiln::formats
