// GGUF metadata values: validation of their encoding, and rendering.
#ifndef KILN_FORMATS_SRC_GGUF_VALUE_H_
#define KILN_FORMATS_SRC_GGUF_VALUE_H_

#include <cstdint>
#include <string>

#include "checked.h"
#include "kiln/formats/gguf.h"

namespace kiln::formats::internal {

// Arrays of arrays may nest this deep; deeper is refused, so the walk's
// recursion is bounded.
inline constexpr int kMaxGgufArrayDepth = 8;

// Advances `r` past one value of `type`, checking every length against the
// bytes that remain (a count is compared with the smallest possible element
// size before any element is read). On failure sets *error.
[[nodiscard]] bool SkipGgufValue(ByteReader& r, std::uint32_t type, int depth, std::string* error);

}  // namespace kiln::formats::internal

#endif  // KILN_FORMATS_SRC_GGUF_VALUE_H_
