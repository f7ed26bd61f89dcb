#include <algorithm>
#include <array>

#include "kiln/formats/safetensors.h"

namespace kiln::formats {
namespace {

struct Name {
  std::string_view name;
  Dtype dtype;
};

constexpr std::array<Name, 17> kNames = {{
    {"F64", Dtype::kF64},
    {"F32", Dtype::kF32},
    {"F16", Dtype::kF16},
    {"BF16", Dtype::kBf16},
    {"I64", Dtype::kI64},
    {"I32", Dtype::kI32},
    {"I16", Dtype::kI16},
    {"I8", Dtype::kI8},
    {"U64", Dtype::kU64},
    {"U32", Dtype::kU32},
    {"U16", Dtype::kU16},
    {"U8", Dtype::kU8},
    {"BOOL", Dtype::kBool},
    {"F8_E4M3", Dtype::kF8E4m3fn},  // the OCP/ONNX e4m3fn encoding
    {"F8_E5M2", Dtype::kF8E5m2},
    {"F8_E8M0", Dtype::kF8E8m0},
    {"C64", Dtype::kC64},
}};

}  // namespace

std::optional<Dtype> DtypeFromSafetensors(std::string_view name) {
  const auto* it =
      std::find_if(kNames.begin(), kNames.end(), [name](const Name& n) { return n.name == name; });
  if (it == kNames.end()) return std::nullopt;
  return it->dtype;
}

std::optional<std::string_view> SafetensorsDtypeName(Dtype dtype) {
  const auto* it = std::find_if(kNames.begin(), kNames.end(),
                                [dtype](const Name& n) { return n.dtype == dtype; });
  if (it == kNames.end()) return std::nullopt;
  return it->name;
}

}  // namespace kiln::formats
