// Well-formed UTF-8 as RFC 3629 defines it (rule N4).
#ifndef KILN_SRC_UTF8_H_
#define KILN_SRC_UTF8_H_

#include <cstddef>
#include <optional>

#include "bytes.h"

namespace kiln::internal {

// The offset of the first byte that starts an ill-formed sequence (an
// overlong form, a surrogate, a code point above U+10FFFF, a stray or missing
// continuation byte, or a byte that never occurs in UTF-8), or nullopt when
// all of `bytes` is well-formed.
[[nodiscard]] std::optional<std::size_t> FirstInvalidUtf8(Bytes bytes);

}  // namespace kiln::internal

#endif  // KILN_SRC_UTF8_H_
