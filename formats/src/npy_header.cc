#include "npy_header.h"

#include <array>

#include "absl/strings/str_format.h"
#include "kiln/directory.h"
#include "reader_util.h"
#include "text_cursor.h"

namespace kiln::formats::internal {
namespace {

class DictParser : TextCursor {
 public:
  DictParser(std::string_view text, bool python2_longs) : TextCursor(text), longs_(python2_longs) {}

  FormatResult<NpyHeaderFields> Parse() {
    NpyHeaderFields f;
    if (!Dict(&f)) {
      return FormatError{"npy header byte " + std::to_string(pos_) + ": " + error_, pos_};
    }
    for (std::size_t k = 0; k < kKeys.size(); ++k) {
      if (!seen_[k]) return FormatError{absl::StrFormat("npy header lacks '%s'", kKeys[k]), 0};
    }
    return f;
  }

 private:
  static constexpr std::array<std::string_view, 3> kKeys = {"descr", "fortran_order", "shape"};

  bool Fail(std::string why) {
    error_ = std::move(why);
    return false;
  }

  bool Dict(NpyHeaderFields* f) {
    if (s_.empty() || s_[0] != '{') return Fail("the header does not start with '{'");
    ++pos_;
    while (!Eat('}')) {
      if (!Entry(f)) return false;
      if (Eat(',')) continue;
      if (Eat('}')) break;
      return Fail("expected ',' or '}'");
    }
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t')) ++pos_;
    if (pos_ < s_.size() && s_[pos_] == '\n') ++pos_;
    if (pos_ != s_.size()) {
      return Fail("unexpected text after the dict (only spaces or tabs, then one newline)");
    }
    return true;
  }

  bool Entry(NpyHeaderFields* f) {
    std::string key;
    if (!String(&key)) return false;
    std::size_t k = 0;
    while (k < kKeys.size() && kKeys[k] != key) ++k;
    if (k == kKeys.size()) return Fail("unexpected key " + Quoted(key));
    if (seen_[k]) return Fail("key " + Quoted(key) + " repeats");
    seen_[k] = true;
    if (!Eat(':')) return Fail("expected ':' after " + Quoted(key));
    if (k == 0) return Descr(&f->descr);
    if (k == 1) return Bool(&f->fortran_order);
    return Shape(&f->shape);
  }

  bool Descr(std::string* out) {
    SkipSpace();
    if (pos_ < s_.size() && s_[pos_] == '[') {
      return Fail("structured dtypes (descr is a list of fields) are not supported");
    }
    return String(out);
  }

  bool String(std::string* out) {
    SkipSpace();
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) {
      return Fail("expected a quoted string");
    }
    const char quote = s_[pos_++];
    const std::size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] != quote) {
      if (s_[pos_] == '\\') return Fail("escape sequences in strings are not supported");
      if (s_[pos_] == '\n') return Fail("unterminated string");
      ++pos_;
    }
    if (pos_ >= s_.size()) return Fail("unterminated string");
    out->assign(s_.substr(start, pos_ - start));
    ++pos_;
    return true;
  }

  bool Bool(bool* out) {
    SkipSpace();
    for (const auto& [word, value] : {std::pair{"True", true}, std::pair{"False", false}}) {
      if (s_.substr(pos_, std::string_view(word).size()) == word) {
        pos_ += std::string_view(word).size();
        *out = value;
        return true;
      }
    }
    return Fail("expected True or False");
  }

  // A tuple: "()", "(3,)", "(3, 4)" or "(3, 4,)". "(3)" is an int in Python,
  // not a tuple, so it is refused.
  bool Shape(std::vector<std::uint64_t>* out) {
    if (!Eat('(')) return Fail("shape is not a tuple");
    bool comma = false;
    while (!Eat(')')) {
      if (out->size() == kMaxRank) return Fail("shape has more than 8 dimensions");
      std::uint64_t d = 0;
      if (!Int(&d)) return false;
      out->push_back(d);
      comma = Eat(',');
      if (!comma) {
        if (Eat(')')) break;
        return Fail("expected ',' or ')' in shape");
      }
    }
    if (out->size() == 1 && !comma) return Fail("shape (n) is not a tuple; (n,) is");
    return true;
  }

  bool Int(std::uint64_t* out) {
    SkipSpace();
    const std::size_t start = pos_;
    std::uint64_t v = 0;
    const Digits digits = ReadDigits(&v);
    if (digits == Digits::kOverflow) return Fail("dimension exceeds 2^64-1");
    if (digits == Digits::kNone) return Fail("expected a non-negative integer");
    if (s_[start] == '0' && pos_ - start > 1) return Fail("integer with a leading zero");
    if (pos_ < s_.size() && s_[pos_] == 'L') {  // a Python 2 long, as NumPy once wrote
      if (!longs_) {
        return Fail("a Python 2 long (\"" + std::string(s_.substr(start, pos_ - start)) +
                    "L\") in a version 3.0 header");
      }
      ++pos_;
    }
    *out = v;
    return true;
  }

  bool longs_;
  std::string error_;
  std::array<bool, 3> seen_{};
};

}  // namespace

FormatResult<NpyHeaderFields> ParseNpyHeaderDict(std::string_view text, bool python2_longs) {
  return DictParser(text, python2_longs).Parse();
}

}  // namespace kiln::formats::internal
