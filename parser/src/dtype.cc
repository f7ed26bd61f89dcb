#include "kiln/dtype.h"

#include <array>

namespace kiln {
namespace {

constexpr std::array kDtypes = {
#define KILN_DTYPE(e, code, name, bits, scale) DtypeInfo{Dtype::e, name, bits, scale},
#include "kiln/dtypes.inc"
#undef KILN_DTYPE
};
static_assert(kDtypes.back().dtype == Dtype::kOpaque, "the opaque dtype ends the table");

// Index into kDtypes by code, for the dense codes 0..kDenseCodes-1; -1 where
// the code is not in the table.
constexpr std::size_t kDenseCodes = 32;
constexpr std::array<int, kDenseCodes> kDense = [] {
  std::array<int, kDenseCodes> t{};
  t.fill(-1);
  for (std::size_t i = 0; i < kDtypes.size(); ++i) {
    const auto code = static_cast<std::size_t>(kDtypes[i].dtype);
    if (code < kDenseCodes) t[code] = static_cast<int>(i);
  }
  return t;
}();

}  // namespace

const DtypeInfo* FindDtype(std::uint16_t code) {
  if (code < kDenseCodes) {
    const int i = kDense[code];
    return i < 0 ? nullptr : &kDtypes[static_cast<std::size_t>(i)];
  }
  return code == static_cast<std::uint16_t>(Dtype::kOpaque) ? &kDtypes.back() : nullptr;
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
