#include "kiln/dtype.h"

#include <array>

namespace kiln {
namespace {

constexpr std::array kDtypes = {
#define KILN_DTYPE(e, code, name, bits, scale) DtypeInfo{Dtype::e, name, bits, scale},
#include "kiln/dtypes.inc"
#undef KILN_DTYPE
};

}  // namespace

const DtypeInfo* FindDtype(std::uint16_t code) {
  for (const DtypeInfo& d : kDtypes) {
    if (static_cast<std::uint16_t>(d.dtype) == code) return &d;
  }
  return nullptr;
}

const DtypeInfo& GetDtypeInfo(Dtype dtype) {
  const DtypeInfo* d = FindDtype(static_cast<std::uint16_t>(dtype));
  // Every Dtype enumerator comes from the table, so only a value cast from an
  // unchecked integer can miss; fall back to the opaque entry.
  return d != nullptr ? *d : kDtypes.back();
}

const DtypeInfo* FindDtypeByName(std::string_view name) {
  for (const DtypeInfo& d : kDtypes) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

}  // namespace kiln
