// The cursor the text readers share (the safetensors JSON header,
// json_cursor.h; the NumPy header dict, npy_header.cc): a position in a
// text, whitespace, single characters and words, and decimal integers read
// with checked arithmetic (base/decimal.h).
#ifndef KILN_FORMATS_SRC_TEXT_CURSOR_H_
#define KILN_FORMATS_SRC_TEXT_CURSOR_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "kiln/base/decimal.h"

namespace kiln::formats::internal {

class TextCursor {
 public:
  explicit TextCursor(std::string_view text, std::size_t pos = 0) : s_(text), pos_(pos) {}

  [[nodiscard]] std::size_t position() const { return pos_; }
  [[nodiscard]] std::string_view text() const { return s_; }

  // Skips whitespace: space, tab, LF and CR (JSON's, and what NumPy's
  // header dict may hold between tokens).
  void SkipSpace() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) {
      ++pos_;
    }
  }
  // Skips whitespace, then consumes `c` if it comes next.
  [[nodiscard]] bool Eat(char c) {
    SkipSpace();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  // Skips whitespace, then consumes `word` if it comes next.
  [[nodiscard]] bool EatWord(std::string_view word) {
    SkipSpace();
    if (s_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }
  // True when only whitespace is left.
  [[nodiscard]] bool AtEnd() {
    SkipSpace();
    return pos_ == s_.size();
  }

 protected:
  enum class Digits : std::uint8_t {
    kNone,      // no digit at the position
    kRead,      // *out holds them; the position is after the last
    kOverflow,  // more than 2^64-1; the position is on the digit that overflowed
  };
  // Reads the decimal digits at the position (no whitespace skipped).
  [[nodiscard]] Digits ReadDigits(std::uint64_t* out) {
    const base::Decimal d = base::ReadDecimal(s_, pos_);
    const std::size_t start = pos_;
    pos_ = d.end;
    if (d.overflow) return Digits::kOverflow;
    if (pos_ == start) return Digits::kNone;
    *out = d.value;
    return Digits::kRead;
  }

  std::string_view s_;
  std::size_t pos_ = 0;
};

}  // namespace kiln::formats::internal

#endif  // KILN_FORMATS_SRC_TEXT_CURSOR_H_
