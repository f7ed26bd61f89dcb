// Shared checks of the format-reader targets: a reader either refuses the
// input with a message or returns views that lie inside it.
#ifndef KILN_FUZZ_FORMAT_READERS_H_
#define KILN_FUZZ_FORMAT_READERS_H_

#include <cstdint>
#include <cstdlib>
#include <span>

namespace kiln_fuzz {

inline void Require(bool ok) {
  if (!ok) std::abort();
}

// `view` lies inside `in` (an empty view may point anywhere).
inline void RequireInside(std::span<const std::uint8_t> view, std::span<const std::uint8_t> in) {
  if (view.empty()) return;
  Require(view.data() >= in.data() && view.data() + view.size() <= in.data() + in.size());
}

}  // namespace kiln_fuzz

#endif  // KILN_FUZZ_FORMAT_READERS_H_
