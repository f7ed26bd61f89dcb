#include "json_cursor.h"

#include "kiln/utf8.h"

namespace kiln::formats::internal {
namespace {

void AppendUtf8(std::uint32_t cp, std::string* out) {
  auto put = [out](std::uint32_t b) { *out += static_cast<char>(b); };
  if (cp < 0x80) {
    put(cp);
  } else if (cp < 0x800) {
    put(0xC0 | (cp >> 6));
    put(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    put(0xE0 | (cp >> 12));
    put(0x80 | ((cp >> 6) & 0x3F));
    put(0x80 | (cp & 0x3F));
  } else {
    put(0xF0 | (cp >> 18));
    put(0x80 | ((cp >> 12) & 0x3F));
    put(0x80 | ((cp >> 6) & 0x3F));
    put(0x80 | (cp & 0x3F));
  }
}

}  // namespace

bool JsonCursor::FailAt(std::size_t at, std::string why) {
  if (error_.empty()) {
    error_ = std::move(why);
    error_at_ = at;
  }
  return false;
}

std::string JsonCursor::Error() const {
  return "byte " + std::to_string(error_at_) + ": " + error_;
}

bool JsonCursor::Hex4(std::uint32_t* out) {
  if (s_.size() - pos_ < 4) return Fail("truncated \\u escape");
  *out = 0;
  for (int k = 0; k < 4; ++k) {
    const char c = s_[pos_++];
    std::uint32_t v = 0;
    if (c >= '0' && c <= '9') {
      v = static_cast<std::uint32_t>(c - '0');
    } else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f') {
      v = static_cast<std::uint32_t>((c | 0x20) - 'a' + 10);
    } else {
      return Fail("bad hex digit in \\u escape");
    }
    *out = (*out << 4) | v;
  }
  return true;
}

// After the backslash.
bool JsonCursor::Escape(std::string* out) {
  if (pos_ >= s_.size()) return Fail("unterminated string");
  const char c = s_[pos_++];
  constexpr std::string_view kFrom = "\"\\/bfnrt", kTo = "\"\\/\b\f\n\r\t";
  if (const auto k = kFrom.find(c); k != std::string_view::npos) {
    *out += kTo[k];
    return true;
  }
  if (c != 'u') return Fail("unknown escape");
  std::uint32_t cp = 0;
  if (!Hex4(&cp)) return false;
  if (cp >= 0xDC00 && cp <= 0xDFFF) return Fail("lone low surrogate in \\u escape");
  if (cp >= 0xD800 && cp <= 0xDBFF) {
    std::uint32_t low = 0;
    if (s_.substr(pos_, 2) != "\\u") return Fail("high surrogate without a low surrogate");
    pos_ += 2;
    if (!Hex4(&low)) return false;
    if (low < 0xDC00 || low > 0xDFFF) return Fail("high surrogate without a low surrogate");
    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
  }
  AppendUtf8(cp, out);
  return true;
}

bool JsonCursor::String(std::string* out) {
  std::string_view view;
  if (!StringView(&view, out)) return false;
  if (view.data() != out->data()) out->assign(view);
  return true;
}

bool JsonCursor::StringView(std::string_view* out, std::string* decoded) {
  if (!Eat('"')) return Fail("expected a string");
  const std::size_t start = pos_;
  std::size_t escapes = 0;  // where the first escape is, 0 when none yet
  while (true) {            // the raw string: its end, and whether it escapes
    if (pos_ >= s_.size()) return Fail("unterminated string");
    const char c = s_[pos_];
    if (c == '"') break;
    if (static_cast<unsigned char>(c) < 0x20) return Fail("control character in a string");
    if (c == '\\') {
      if (escapes == 0) escapes = pos_ + 1;
      ++pos_;
      if (pos_ >= s_.size()) return Fail("unterminated string");
    }
    ++pos_;
  }
  const std::size_t end = pos_++;
  if (escapes == 0) {
    *out = s_.substr(start, end - start);
    if (!IsWellFormedUtf8(*out)) return FailAt(start, "string is not well-formed UTF-8");
    return true;
  }
  decoded->clear();
  decoded->reserve(end - start);  // an escape never decodes to more bytes than it takes
  decoded->append(s_.substr(start, escapes - 1 - start));
  pos_ = escapes - 1;
  while (pos_ < end) {
    const char c = s_[pos_++];
    if (c != '\\') {
      *decoded += c;
    } else if (!Escape(decoded)) {
      return false;
    }
  }
  pos_ = end + 1;
  *out = *decoded;
  if (!IsWellFormedUtf8(*out)) return FailAt(start, "string is not well-formed UTF-8");
  return true;
}

bool JsonCursor::U64(std::uint64_t* out) {
  SkipSpace();
  if (pos_ < s_.size() && s_[pos_] == '-') return Fail("negative number");
  const std::size_t start = pos_;
  std::uint64_t v = 0;
  const Digits digits = ReadDigits(&v);
  if (digits == Digits::kOverflow) return Fail("integer exceeds 2^64-1");
  if (digits == Digits::kNone) return Fail("expected an integer");
  if (s_[start] == '0' && pos_ - start > 1) return Fail("integer with a leading zero");
  if (pos_ < s_.size() && (s_[pos_] == '.' || s_[pos_] == 'e' || s_[pos_] == 'E')) {
    return Fail("expected an integer, not a fraction or exponent");
  }
  *out = v;
  return true;
}

}  // namespace kiln::formats::internal
