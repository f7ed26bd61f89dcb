#include "kiln/dtype.h"

#include <algorithm>
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
constexpr std::array<int, kDenseCodes> MakeDense() {
  std::array<int, kDenseCodes> t{};
  t.fill(-1);
  int i = 0;
  for (const DtypeInfo& d : kDtypes) {
    const auto code = static_cast<std::size_t>(d.dtype);
    if (code < kDenseCodes) t.at(code) = i;
    ++i;
  }
  return t;
}
constexpr std::array<int, kDenseCodes> kDense = MakeDense();

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
  const auto* it = std::find_if(kDtypes.begin(), kDtypes.end(),
                                [&](const DtypeInfo& d) { return d.name == name; });
  return it != kDtypes.end() ? it : nullptr;
}

}  // namespace kiln
