#include "kiln/base/escape.h"

#include <algorithm>
#include <cstdint>
#include <optional>

#include "kiln/base/bytes.h"
#include "kiln/base/format.h"
#include "kiln/base/utf8.h"

namespace kiln::base {
namespace {

struct Range {
  std::uint32_t first;
  std::uint32_t last;
};

// Code points that are invisible or move text around: C1 controls, every
// format character (Unicode's Cf: bidi controls, zero-width characters,
// invisible operators, prepended concatenation marks, tags), line and
// paragraph separators, and the other characters a terminal draws as
// nothing (the combining grapheme joiner, Hangul and Khmer fillers,
// Mongolian and Unicode variation selectors, the blank braille pattern), so
// that two names never look the same while their bytes differ; and the 66
// noncharacters (U+FDD0..U+FDEF and the last two code points of every plane,
// U+nFFFE and U+nFFFF), which no font draws and XML 1.0 partly forbids.
// Spaces (Zs, such as U+00A0) stay: they are visible as white space.
constexpr Range kHidden[] = {
    {0x0080, 0x009F},      // C1 controls (U+009B is CSI)
    {0x00AD, 0x00AD},      // soft hyphen
    {0x034F, 0x034F},      // combining grapheme joiner
    {0x0600, 0x0605},      // Arabic number signs (prepended marks)
    {0x061C, 0x061C},      // Arabic letter mark
    {0x06DD, 0x06DD},      // Arabic end of ayah
    {0x070F, 0x070F},      // Syriac abbreviation mark
    {0x0890, 0x0891},      // Arabic pound and piastre marks above
    {0x08E2, 0x08E2},      // Arabic disputed end of ayah
    {0x115F, 0x1160},      // Hangul choseong and jungseong fillers
    {0x17B4, 0x17B5},      // Khmer inherent vowels
    {0x180B, 0x180F},      // Mongolian variation selectors and vowel separator
    {0x200B, 0x200F},      // zero-width space, ZWNJ, ZWJ, LRM, RLM
    {0x2028, 0x2029},      // line and paragraph separators
    {0x202A, 0x202E},      // bidi embeddings and overrides
    {0x2060, 0x206F},      // word joiner, invisible operators, isolates, deprecated
    {0x2800, 0x2800},      // braille pattern blank
    {0x3164, 0x3164},      // Hangul filler
    {0xFDD0, 0xFDEF},      // noncharacters
    {0xFE00, 0xFE0F},      // variation selectors
    {0xFEFF, 0xFEFF},      // zero-width no-break space (BOM)
    {0xFFA0, 0xFFA0},      // halfwidth Hangul filler
    {0xFFF0, 0xFFFB},      // ignorable, interlinear annotation controls
    {0xFFFE, 0xFFFF},      // noncharacters (plane 0)
    {0x110BD, 0x110BD},    // Kaithi number sign
    {0x110CD, 0x110CD},    // Kaithi number sign above
    {0x13430, 0x1343F},    // Egyptian hieroglyph format controls
    {0x1BCA0, 0x1BCA3},    // shorthand format controls
    {0x1D173, 0x1D17A},    // musical symbol format controls
    {0x1FFFE, 0x1FFFF},    // noncharacters of plane 1
    {0x2FFFE, 0x2FFFF},    // ... of plane 2
    {0x3FFFE, 0x3FFFF},    // ... 3
    {0x4FFFE, 0x4FFFF},    // ... 4
    {0x5FFFE, 0x5FFFF},    // ... 5
    {0x6FFFE, 0x6FFFF},    // ... 6
    {0x7FFFE, 0x7FFFF},    // ... 7
    {0x8FFFE, 0x8FFFF},    // ... 8
    {0x9FFFE, 0x9FFFF},    // ... 9
    {0xAFFFE, 0xAFFFF},    // ... 10
    {0xBFFFE, 0xBFFFF},    // ... 11
    {0xCFFFE, 0xCFFFF},    // ... 12
    {0xDFFFE, 0xDFFFF},    // ... 13
    {0xE0000, 0xE007F},    // tag characters
    {0xE0100, 0xE01EF},    // variation selectors supplement
    {0xEFFFE, 0xEFFFF},    // noncharacters of plane 14
    {0xFFFFE, 0xFFFFF},    // ... 15
    {0x10FFFE, 0x10FFFF},  // ... 16
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
    AppendFormat(out, "\\x%02x", cp);
  } else if (Hidden(cp)) {
    AppendFormat(out, "\\u{%04x}", cp);
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
      AppendFormat(&out, "\\x%02x", bytes[i]);
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
      AppendFormat(&out, "\\udc%02x", bytes[i]);
      ++i;
      continue;
    }
    const std::uint32_t cp = s->code_point;
    if (cp == '"' || cp == '\\') {
      out += '\\';
      out += static_cast<char>(cp);
    } else if (cp < 0x20 || cp == 0x7F || (Hidden(cp) && cp <= 0xFFFF)) {
      AppendFormat(&out, "\\u%04x", cp);
    } else if (Hidden(cp)) {  // above U+FFFF: a surrogate pair
      const std::uint32_t v = cp - 0x10000;
      AppendFormat(&out, "\\u%04x\\u%04x", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
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
