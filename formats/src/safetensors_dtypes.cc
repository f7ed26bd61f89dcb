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
  for (const Name& n : kNames) {
    if (n.name == name) return n.dtype;
  }
  return std::nullopt;
}

std::optional<std::string_view> SafetensorsDtypeName(Dtype dtype) {
  for (const Name& n : kNames) {
    if (n.dtype == dtype) return n.name;
  }
  return std::nullopt;
}

}  // namespace kiln::formats
