// Text taken from an untrusted file, made safe to quote in a message.
#ifndef KILN_FORMATS_SRC_TEXT_H_
#define KILN_FORMATS_SRC_TEXT_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace kiln::formats::internal {

// `text` in double quotes, cut after `max` bytes ("..." marks the cut), with
// control bytes, quotes and backslashes as \xNN: a hostile name can neither
// flood nor repaint a terminal through an error message.
[[nodiscard]] std::string Quoted(std::string_view text, std::size_t max = 64);

}  // namespace kiln::formats::internal

#endif  // KILN_FORMATS_SRC_TEXT_H_
