// UTF-8 well-formedness, as rule N4 checks it (RFC 3629).
#ifndef KILN_UTF8_H_
#define KILN_UTF8_H_

#include <string_view>

namespace kiln {

// True when `text` is well-formed UTF-8: no overlong forms, no surrogates,
// nothing above U+10FFFF, no stray or missing continuation bytes.
[[nodiscard]] bool IsWellFormedUtf8(std::string_view text);

}  // namespace kiln

#endif  // KILN_UTF8_H_
