// GGUF metadata values: validation of their encoding, and rendering.
#ifndef KILN_FORMATS_SRC_GGUF_VALUE_H_
#define KILN_FORMATS_SRC_GGUF_VALUE_H_

#include <cstdint>
#include <string>

#include "kiln/base/bytes.h"
#include "kiln/formats/gguf.h"
#include "kiln/formats/policy.h"

namespace kiln::formats::internal {

// kMaxGgufStringBytes, kMaxGgufArrayElements: kiln/formats/policy.h.

// Advances `r` past one value of `type`, checking every length against the
// bytes that remain (a count is compared with the smallest possible element
// size before any element is read). Arrays of arrays are refused, as ggml's
// gguf.cpp refuses them, so nothing recurses. Strings and arrays past the
// bounds above are refused. On failure sets *error.
[[nodiscard]] bool SkipGgufValue(base::ByteReader& r, std::uint32_t type, std::string* error);

}  // namespace kiln::formats::internal

#endif  // KILN_FORMATS_SRC_GGUF_VALUE_H_
