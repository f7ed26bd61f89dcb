// GGUF metadata values: validation of their encoding, and rendering.
#ifndef KILN_FORMATS_SRC_GGUF_VALUE_H_
#define KILN_FORMATS_SRC_GGUF_VALUE_H_

#include <cstdint>
#include <string>

#include "kiln/base/bytes.h"
#include "kiln/formats/gguf.h"

namespace kiln::formats::internal {

// The longest metadata string value and the longest array kiln reads. ggml's
// gguf.cpp reads up to 2^30 of each; @huggingface/gguf 0.4.6 refuses arrays
// of more than 1,000,000 elements and strings of more than 10,000,000 bytes,
// and reads a string only as far as the 2,000,000-byte chunks it has fetched
// (a longer one can leave the next read outside them).
inline constexpr std::uint64_t kMaxGgufStringBytes = 1'000'000;
inline constexpr std::uint64_t kMaxGgufArrayElements = 1'000'000;

// Advances `r` past one value of `type`, checking every length against the
// bytes that remain (a count is compared with the smallest possible element
// size before any element is read). Arrays of arrays are refused, as ggml's
// gguf.cpp refuses them, so nothing recurses. Strings and arrays past the
// bounds above are refused. On failure sets *error.
[[nodiscard]] bool SkipGgufValue(base::ByteReader& r, std::uint32_t type, std::string* error);

}  // namespace kiln::formats::internal

#endif  // KILN_FORMATS_SRC_GGUF_VALUE_H_
