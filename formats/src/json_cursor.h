// A strict JSON scanner for the safetensors header: the reader drives it
// through the one structure it expects, so no document tree is built and
// nesting can never run deep. Whitespace, words and integers are
// TextCursor's (text_cursor.h).
#ifndef KILN_FORMATS_SRC_JSON_CURSOR_H_
#define KILN_FORMATS_SRC_JSON_CURSOR_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "text_cursor.h"

namespace kiln::formats::internal {

class JsonCursor : public TextCursor {
 public:
  explicit JsonCursor(std::string_view text, std::size_t pos = 0) : TextCursor(text, pos) {}

  // Where the first failure happened.
  [[nodiscard]] std::size_t error_position() const { return error_at_; }

  // A string; escapes decoded, well-formed UTF-8 required.
  [[nodiscard]] bool String(std::string* out);
  // The same as a view: into the text when the string holds no escape (no
  // copy), else into *decoded, which then holds the decoded string (its
  // capacity at most the raw length).
  [[nodiscard]] bool StringView(std::string_view* out, std::string* decoded);
  // A non-negative integer without fraction or exponent, at most 2^64-1.
  [[nodiscard]] bool U64(std::uint64_t* out);

  // Records why parsing stopped; returns false for `return Fail(...)`.
  bool Fail(std::string why) { return FailAt(pos_, std::move(why)); }
  // The same, for a failure found at an earlier position.
  bool FailAt(std::size_t at, std::string why);
  // "byte N: why".
  [[nodiscard]] std::string Error() const;

 private:
  bool Escape(std::string* out);
  bool Hex4(std::uint32_t* out);

  std::string error_;
  std::size_t error_at_ = 0;
};

}  // namespace kiln::formats::internal

#endif  // KILN_FORMATS_SRC_JSON_CURSOR_H_
