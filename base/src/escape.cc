#include "kiln/base/escape.h"

#include <algorithm>
#include <cstdint>
#include <optional>

#include "absl/strings/str_format.h"
#include "kiln/base/bytes.h"
#include "kiln/base/utf8.h"

namespace kiln::base {
namespace {

struct Range {
  std::uint32_t first;
  std::uint32_t last;
};

// Code points that are invisible or move text around: C1 controls, bidi
// controls, zero-width characters, line and paragraph separators, tags.
constexpr Range kHidden[] = {
    {0x0080, 0x009F},    // C1 controls (U+009B is CSI)
    {0x061C, 0x061C},    // Arabic letter mark
    {0x200B, 0x200F},    // zero-width space, ZWNJ, ZWJ, LRM, RLM
    {0x2028, 0x2029},    // line and paragraph separators
    {0x202A, 0x202E},    // bidi embeddings and overrides
    {0x2060, 0x2060},    // word joiner
    {0x2066, 0x2069},    // bidi isolates
    {0xFEFF, 0xFEFF},    // zero-width no-break space (BOM)
    {0xE0000, 0xE007F},  // tag characters
};

bool Hidden(std::uint32_t cp) {
  return std::any_of(std::begin(kHidden), std::end(kHidden),
                     [cp](const Range& r) { return cp >= r.first && cp <= r.last; });
}

// Appends one well-formed character, escaped if it must be.
void Put(std::string_view raw, std::uint32_t cp, std::string* out) {
  if (cp == '\\') {
    *out += "\\\\";
  } else if (cp < 0x20 || cp == 0x7F) {
    absl::StrAppendFormat(out, "\\x%02x", cp);
  } else if (Hidden(cp)) {
    absl::StrAppendFormat(out, "\\u{%04x}", cp);
  } else {
    *out += raw;
  }
}

}  // namespace

std::string Escape(std::string_view text, std::size_t max_bytes) {
  const Bytes bytes(reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
  std::string out;
  std::size_t i = 0;
  while (i < bytes.size()) {
    const std::optional<Utf8Sequence> s = DecodeUtf8At(bytes, i);
    const std::size_t len = s ? s->length : 1;
    if (len > max_bytes - std::min(max_bytes, i)) break;
    if (s) {
      Put(text.substr(i, len), s->code_point, &out);
    } else {
      absl::StrAppendFormat(&out, "\\x%02x", bytes[i]);
    }
    i += len;
  }
  if (i < bytes.size()) out += "...";
  return out;
}

std::string JsonEscape(std::string_view text) {
  const Bytes bytes(reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
  std::string out;
  std::size_t i = 0;
  while (i < bytes.size()) {
    const std::optional<Utf8Sequence> s = DecodeUtf8At(bytes, i);
    if (!s) {  // never ASCII: every byte below 0x80 is well-formed
      absl::StrAppendFormat(&out, "\\udc%02x", bytes[i]);
      ++i;
      continue;
    }
    const std::uint32_t cp = s->code_point;
    if (cp == '"' || cp == '\\') {
      out += '\\';
      out += static_cast<char>(cp);
    } else if (cp < 0x20 || cp == 0x7F || (Hidden(cp) && cp <= 0xFFFF)) {
      absl::StrAppendFormat(&out, "\\u%04x", cp);
    } else if (Hidden(cp)) {  // above U+FFFF: a surrogate pair
      const std::uint32_t v = cp - 0x10000;
      absl::StrAppendFormat(&out, "\\u%04x\\u%04x", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
    } else {
      out += text.substr(i, s->length);
    }
    i += s->length;
  }
  return out;
}

std::string Quoted(std::string_view text, std::size_t max_bytes) {
  const std::string escaped = Escape(text, max_bytes);
  std::string out;
  out.reserve(escaped.size() + 2);
  out.push_back('"');
  for (const char c : escaped) {
    if (c == '"') {
      out.append("\\x22");
    } else {
      out.push_back(c);
    }
  }
  out.push_back('"');
  return out;
}

}  // namespace kiln::base
