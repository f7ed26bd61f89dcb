// A strict JSON scanner for the safetensors header: the reader drives it
// through the one structure it expects, so no document tree is built and
// nesting can never run deep.
#ifndef KILN_FORMATS_SRC_JSON_CURSOR_H_
#define KILN_FORMATS_SRC_JSON_CURSOR_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace kiln::formats::internal {

class JsonCursor {
 public:
  explicit JsonCursor(std::string_view text, std::size_t pos = 0) : s_(text), pos_(pos) {}

  [[nodiscard]] std::size_t position() const { return pos_; }
  // Where the first failure happened.
  [[nodiscard]] std::size_t error_position() const { return error_at_; }

  // Skips whitespace, then consumes `c` if it comes next.
  [[nodiscard]] bool Eat(char c);
  // Skips whitespace, then consumes `word` (true, false, null) if it comes next.
  [[nodiscard]] bool EatWord(std::string_view word);
  // A string; escapes decoded, well-formed UTF-8 required.
  [[nodiscard]] bool String(std::string* out);
  // The same as a view: into the text when the string holds no escape (no
  // copy), else into *decoded, which then holds the decoded string (its
  // capacity at most the raw length).
  [[nodiscard]] bool StringView(std::string_view* out, std::string* decoded);
  // A non-negative integer without fraction or exponent, at most 2^64-1.
  [[nodiscard]] bool U64(std::uint64_t* out);
  // Skips whitespace.
  void SkipSpace();
  // True when only whitespace is left.
  [[nodiscard]] bool AtEnd();

  // Records why parsing stopped; returns false for `return Fail(...)`.
  bool Fail(std::string why) { return FailAt(pos_, std::move(why)); }
  // The same, for a failure found at an earlier position.
  bool FailAt(std::size_t at, std::string why);
  [[nodiscard]] std::string_view text() const { return s_; }
  // "byte N: why".
  [[nodiscard]] std::string Error() const;

 private:
  bool Escape(std::string* out);
  bool Hex4(std::uint32_t* out);

  std::string_view s_;
  std::size_t pos_ = 0;
  std::string error_;
  std::size_t error_at_ = 0;
};

}  // namespace kiln::formats::internal

#endif  // KILN_FORMATS_SRC_JSON_CURSOR_H_
