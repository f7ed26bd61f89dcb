// The Kiln v2 dtype table (rule D1), generated from dtypes.inc.
#ifndef KILN_DTYPE_H_
#define KILN_DTYPE_H_

#include <cstdint>
#include <string_view>

namespace kiln {

enum class Dtype : std::uint16_t {
#define KILN_DTYPE(e, code, name, bits, scale) e = (code),
#include "kiln/dtypes.inc"
#undef KILN_DTYPE
};

struct DtypeInfo {
  Dtype dtype;
  std::string_view name;  // "f32", "bf16", "opaque", ...
  std::uint32_t bits;     // bits per element; 0 for the opaque dtype
  bool is_scale;          // may be the dtype of a scale tensor (Q5, Q7)
};

// The table entry for a stored code, or nullptr when the code is not in the
// table (rule D1).
[[nodiscard]] const DtypeInfo* FindDtype(std::uint16_t code);
// The entry for a dtype value. Never null for a value this library produced.
[[nodiscard]] const DtypeInfo& GetDtypeInfo(Dtype dtype);
// Looks a dtype up by its table name ("f16"); nullptr when unknown.
[[nodiscard]] const DtypeInfo* FindDtypeByName(std::string_view name);

[[nodiscard]] constexpr bool IsOpaque(Dtype d) { return d == Dtype::kOpaque; }

}  // namespace kiln

#endif  // KILN_DTYPE_H_
