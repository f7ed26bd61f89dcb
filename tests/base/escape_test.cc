// base::Escape, the one escaping function for untrusted text: one row per
// category it must make visible, and the text it must leave alone.
#include <cstdint>
#include <ios>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kiln/base/escape.h"
#include "kiln/base/format.h"
#include "kiln/base/utf8.h"

namespace kiln::base {
namespace {

struct EscapeRow {
  std::string label;
  std::string in;
  std::string want;
};

std::vector<EscapeRow> Rows() {
  return {
      // Left alone: printable ASCII, quotes, well-formed non-ASCII text.
      {"Ascii", "model.layers.0.weight", "model.layers.0.weight"},
      {"Quotes", "a\"b'c", "a\"b'c"},
      {"LatinGreekCjkEmoji", "caf\xc3\xa9 \xce\xb1 \xe4\xb8\xad \xf0\x9f\x98\x80",
       "caf\xc3\xa9 \xce\xb1 \xe4\xb8\xad \xf0\x9f\x98\x80"},
      {"Nbsp",
       "a\xc2\xa0"
       "b",
       "a\xc2\xa0"
       "b"},
      // The escape character itself.
      {"Backslash", "a\\x41", "a\\\\x41"},
      // C0 controls and DEL.
      {"Escape", "a\x1b[31mb", "a\\x1b[31mb"},
      {"Nul", std::string("a\0b", 3), "a\\x00b"},
      {"TabNewlineCr", "\t\n\r", "\\x09\\x0a\\x0d"},
      {"Del", "\x7f", "\\x7f"},
      // C1 controls, U+0080..U+009F (U+009B is CSI).
      {"C1First", "\xc2\x80", "\\u{0080}"},
      {"C1Csi", "x\xc2\x9by", "x\\u{009b}y"},
      {"C1Last", "\xc2\x9f", "\\u{009f}"},
      // Bidi controls.
      {"Rlo", "evil\xe2\x80\xaegpj.exe", "evil\\u{202e}gpj.exe"},
      {"Lre", "\xe2\x80\xaa", "\\u{202a}"},
      {"Isolates", "\xe2\x81\xa6\xe2\x81\xa9", "\\u{2066}\\u{2069}"},
      {"LrmRlm", "\xe2\x80\x8e\xe2\x80\x8f", "\\u{200e}\\u{200f}"},
      {"ArabicLetterMark", "\xd8\x9c", "\\u{061c}"},
      // Zero-width characters.
      {"Zwsp",
       "a\xe2\x80\x8b"
       "b",
       "a\\u{200b}b"},
      {"ZwnjZwj", "\xe2\x80\x8c\xe2\x80\x8d", "\\u{200c}\\u{200d}"},
      {"WordJoiner", "\xe2\x81\xa0", "\\u{2060}"},
      {"Bom",
       "\xef\xbb\xbf"
       "x",
       "\\u{feff}x"},
      // Line and paragraph separators.
      {"LineSeparator", "\xe2\x80\xa8", "\\u{2028}"},
      {"ParagraphSeparator", "\xe2\x80\xa9", "\\u{2029}"},
      // Tag characters.
      {"TagA", "\xf3\xa0\x81\x81", "\\u{e0041}"},
      {"TagFirstLast", "\xf3\xa0\x80\x80\xf3\xa0\x81\xbf", "\\u{e0000}\\u{e007f}"},
      {"AfterTags", "\xf3\xa0\x82\x80", "\xf3\xa0\x82\x80"},  // U+E0080 is not a tag
      // Format characters and other characters a terminal draws as nothing:
      // "model.weight" spelled five ways must not look the same.
      {"SoftHyphen", "model.\xc2\xadweight", "model.\\u{00ad}weight"},
      {"InvisibleTimes", "wei\xe2\x81\xa2ght", "wei\\u{2062}ght"},
      {"VariationSelector16", "weight\xef\xb8\x8f", "weight\\u{fe0f}"},
      {"MongolianVowelSeparator", "model\xe1\xa0\x8e", "model\\u{180e}"},
      {"HangulFiller", "\xe3\x85\xa4", "\\u{3164}"},
      {"CombiningGraphemeJoiner",
       "a\xcd\x8f"
       "b",
       "a\\u{034f}b"},
      {"ArabicNumberSign", "\xd8\x80", "\\u{0600}"},
      {"InterlinearAnnotation", "\xef\xbf\xb9", "\\u{fff9}"},
      {"BraillePatternBlank", "\xe2\xa0\x80", "\\u{2800}"},
      {"MusicalFormatControl", "\xf0\x9d\x85\xb3", "\\u{1d173}"},
      {"VariationSelector17", "\xf3\xa0\x84\x80", "\\u{e0100}"},
      // Noncharacters: the first and last of U+FDD0..U+FDEF, the last two
      // code points of plane 0, plane 1 and plane 16; and their neighbours,
      // which are characters and stay (U+FFFD is the replacement character).
      {"NoncharacterFdd0", "a\xef\xb7\x90z", "a\\u{fdd0}z"},
      {"NoncharacterFdef", "a\xef\xb7\xafz", "a\\u{fdef}z"},
      {"NoncharacterFffeFfff", "\xef\xbf\xbe\xef\xbf\xbf", "\\u{fffe}\\u{ffff}"},
      {"Noncharacter1fffe", "\xf0\x9f\xbf\xbe", "\\u{1fffe}"},
      {"Noncharacter1ffff", "\xf0\x9f\xbf\xbf", "\\u{1ffff}"},
      {"Noncharacter10fffe", "\xf4\x8f\xbf\xbe", "\\u{10fffe}"},
      {"Noncharacter10ffff", "a\xf4\x8f\xbf\xbfz", "a\\u{10ffff}z"},
      {"BeforeNoncharactersFdcf", "\xef\xb7\x8f", "\xef\xb7\x8f"},
      {"AfterNoncharactersFdf0", "\xef\xb7\xb0", "\xef\xb7\xb0"},
      {"ReplacementCharacterFffd", "\xef\xbf\xbd", "\xef\xbf\xbd"},
      {"ObjectReplacementFffc", "\xef\xbf\xbc", "\xef\xbf\xbc"},
      {"Before1fffe", "\xf0\x9f\xbf\xbd", "\xf0\x9f\xbf\xbd"},
      {"After1ffff", "\xf0\xa0\x80\x80", "\xf0\xa0\x80\x80"},
      {"Before10fffe", "\xf4\x8f\xbf\xbd", "\xf4\x8f\xbf\xbd"},
      // Bytes that are not well-formed UTF-8, one \xNN each.
      {"LoneContinuation",
       "a\x80"
       "b",
       "a\\x80b"},
      {"Overlong", "\xc0\xaf", "\\xc0\\xaf"},
      {"Surrogate", "\xed\xa0\x80", "\\xed\\xa0\\x80"},
      {"AboveMax", "\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"},
      {"TruncatedAtEnd", "a\xe2\x80", "a\\xe2\\x80"},
      {"Ff", "\xff", "\\xff"},
      // A raw C1 byte is not a C1 character: it is an invalid byte.
      {"RawC1Byte", "\x9b", "\\x9b"},
  };
}

class EscapeTest : public ::testing::TestWithParam<EscapeRow> {};

TEST_P(EscapeTest, MakesItVisible) { EXPECT_EQ(Escape(GetParam().in), GetParam().want); }

INSTANTIATE_TEST_SUITE_P(Categories, EscapeTest, ::testing::ValuesIn(Rows()),
                         [](const auto& info) { return info.param.label; });

// No two inputs print the same: the escape sequences themselves, typed as
// text, come out with their backslash escaped.
TEST(Escape, IsUnambiguous) {
  EXPECT_NE(Escape("\x1b"), Escape("\\x1b"));
  EXPECT_NE(Escape("\xc2\x9b"), Escape("\\u{009b}"));
  EXPECT_NE(Escape("\xff"), Escape("\\xff"));
}

// Output contains no byte below 0x20, no DEL, and only well-formed UTF-8,
// whatever the input (every 1- and 2-byte input).
TEST(Escape, OutputIsAlwaysSafe) {
  for (int a = 0; a < 256; ++a) {
    for (int b = 0; b < 256; ++b) {
      const std::string in = {static_cast<char>(a), static_cast<char>(b)};
      const std::string out = Escape(in);
      const Bytes bytes(reinterpret_cast<const std::uint8_t*>(out.data()), out.size());
      ASSERT_FALSE(FirstInvalidUtf8(bytes).has_value()) << a << "," << b;
      for (const char c : out) {
        const auto u = static_cast<unsigned char>(c);
        ASSERT_TRUE(u >= 0x20 && u != 0x7f) << a << "," << b;
      }
    }
  }
}

// A cut keeps whole characters and says so.
TEST(Escape, CutsAtCharacterBoundaries) {
  EXPECT_EQ(Escape("abcdef", 3), "abc...");
  EXPECT_EQ(Escape("abc", 3), "abc");
  EXPECT_EQ(Escape("ab\xce\xb1", 3), "ab...");  // no half of alpha
  EXPECT_EQ(Escape("ab\xce\xb1", 4), "ab\xce\xb1");
  EXPECT_EQ(Escape("\x1b\x1b", 1), "\\x1b...");
  EXPECT_EQ(Escape(std::string(1'000'000, 'x'), 80).size(), 83u);
}

// A quoted name shows where it ends: a quote inside is \x22, and the rest is
// Escape's (a name that ends in a backslash cannot swallow the closing quote).
TEST(Quoted, QuoteInsideIsEscapedAndTheCutKept) {
  EXPECT_EQ(Quoted("w"), "\"w\"");
  EXPECT_EQ(Quoted("a\"b"), "\"a\\x22b\"");
  EXPECT_EQ(Quoted("a\\"), "\"a\\\\\"");
  EXPECT_EQ(Quoted("x\xe2\x80\xae"), "\"x\\u{202e}\"");
  EXPECT_EQ(Quoted(std::string(100, 'n')), "\"" + std::string(64, 'n') + "...\"");
}

// JsonEscape: the same categories as Escape, in JSON's own escapes (finding:
// --json passed C1, bidi, separator and tag characters through raw, and
// wrote a byte that is not UTF-8 as \u00NN, the same as the character).
std::vector<EscapeRow> JsonRows() {
  return {
      {"Ascii", "model.layers.0.weight", "model.layers.0.weight"},
      {"LatinCjkEmoji", "caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80",
       "caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80"},
      {"QuoteBackslash", "a\"b\\c", "a\\\"b\\\\c"},
      {"TabNewline", "a\tb\nc", "a\\u0009b\\u000ac"},
      {"Nul", std::string("a\0b", 3), "a\\u0000b"},
      {"EscapeDel", "\x1b[31m\x7f", "\\u001b[31m\\u007f"},
      {"C1Nel",
       "a\xc2\x85"
       "b",
       "a\\u0085b"},
      {"C1Csi", "\xc2\x9b", "\\u009b"},
      {"RightToLeftOverride",
       "abc\xe2\x80\xae"
       "fdp.exe",
       "abc\\u202efdp.exe"},
      {"LeftToRightIsolate", "\xe2\x81\xa6x\xe2\x81\xa9", "\\u2066x\\u2069"},
      {"ArabicLetterMark", "\xd8\x9c", "\\u061c"},
      {"LineParagraphSeparator", "\xe2\x80\xa8\xe2\x80\xa9", "\\u2028\\u2029"},
      {"ZeroWidthJoinerAndBom", "\xe2\x80\x8d\xef\xbb\xbf", "\\u200d\\ufeff"},
      {"TagA", "\xf3\xa0\x81\x81", "\\udb40\\udc41"},
      {"SoftHyphenAndVariationSelector", "\xc2\xad\xef\xb8\x8f", "\\u00ad\\ufe0f"},
      {"VariationSelector17", "\xf3\xa0\x84\x80", "\\udb40\\udd00"},
      {"TagFirstLast", "\xf3\xa0\x80\x80\xf3\xa0\x81\xbf", "\\udb40\\udc00\\udb40\\udc7f"},
      // Noncharacters, as a surrogate pair above U+FFFF; their neighbours stay.
      {"NoncharactersFdd0Fdef", "\xef\xb7\x90\xef\xb7\xaf", "\\ufdd0\\ufdef"},
      {"NoncharactersFffeFfff", "\xef\xbf\xbe\xef\xbf\xbf", "\\ufffe\\uffff"},
      {"Noncharacter1fffe", "\xf0\x9f\xbf\xbe", "\\ud83f\\udffe"},
      {"Noncharacter10ffff", "\xf4\x8f\xbf\xbf", "\\udbff\\udfff"},
      {"NeighboursFdcfFdf0Fffd", "\xef\xb7\x8f\xef\xb7\xb0\xef\xbf\xbd",
       "\xef\xb7\x8f\xef\xb7\xb0\xef\xbf\xbd"},
      {"Neighbour10fffd", "\xf4\x8f\xbf\xbd", "\xf4\x8f\xbf\xbd"},
      // Bytes that are not well-formed UTF-8: PEP 383's lone surrogates.
      {"LoneLatin1Byte", "caf\xe9", "caf\\udce9"},
      {"TruncatedSequence", "\xc3", "\\udcc3"},
      {"Overlong", "\xc0\xaf", "\\udcc0\\udcaf"},
      {"EncodedSurrogate", "\xed\xa0\x80", "\\udced\\udca0\\udc80"},
      {"MixedValidAndInvalid", "\xc3\xa9\xe9", "\xc3\xa9\\udce9"},
  };
}

class JsonEscapeTest : public ::testing::TestWithParam<EscapeRow> {};

TEST_P(JsonEscapeTest, MakesItVisible) { EXPECT_EQ(JsonEscape(GetParam().in), GetParam().want); }

INSTANTIATE_TEST_SUITE_P(Categories, JsonEscapeTest, ::testing::ValuesIn(JsonRows()),
                         [](const auto& info) { return info.param.label; });

// The byte 0xE9 and the character U+00E9 never look the same.
TEST(JsonEscape, IsUnambiguous) {
  EXPECT_NE(JsonEscape("\xe9"), JsonEscape("\xc3\xa9"));
  EXPECT_NE(JsonEscape("\xe9"), JsonEscape("\\udce9"));
  EXPECT_NE(JsonEscape("\xc2\x85"), JsonEscape("\\u0085"));
}

// Output is printable ASCII plus well-formed UTF-8 of characters that are
// not hidden, whatever the input (every 1- and 2-byte input), and never a
// raw quote.
TEST(JsonEscape, OutputIsAlwaysSafe) {
  for (int a = 0; a < 256; ++a) {
    for (int b = 0; b < 256; ++b) {
      const std::string in = {static_cast<char>(a), static_cast<char>(b)};
      const std::string out = JsonEscape(in);
      const Bytes bytes(reinterpret_cast<const std::uint8_t*>(out.data()), out.size());
      ASSERT_FALSE(FirstInvalidUtf8(bytes).has_value()) << a << "," << b;
      ASSERT_EQ(Escape(out).find("\\u{"), std::string::npos) << a << "," << b;
      for (std::size_t i = 0; i < out.size(); ++i) {
        const auto u = static_cast<unsigned char>(out[i]);
        ASSERT_TRUE(u >= 0x20 && u != 0x7f) << a << "," << b;
        if (out[i] == '\\')
          ++i;  // an escape: its next character is not a quote that ends
        else
          ASSERT_NE(out[i], '"') << a << "," << b;
      }
    }
  }
}

// The UTF-8 form of a Unicode scalar value.
std::string Utf8(std::uint32_t cp) {
  std::string s;
  const auto put = [&s](std::uint32_t b) { s.push_back(static_cast<char>(b)); };
  if (cp < 0x80) {
    put(cp);
  } else if (cp < 0x800) {
    put(0xC0 | (cp >> 6)), put(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    put(0xE0 | (cp >> 12)), put(0x80 | ((cp >> 6) & 0x3F)), put(0x80 | (cp & 0x3F));
  } else {
    put(0xF0 | (cp >> 18)), put(0x80 | ((cp >> 12) & 0x3F)), put(0x80 | ((cp >> 6) & 0x3F)),
        put(0x80 | (cp & 0x3F));
  }
  return s;
}

// Unicode's definition (chapter 23.7): 66 code points, U+FDD0..U+FDEF and
// the last two of each of the 17 planes.
bool Noncharacter(std::uint32_t cp) {
  return (cp >= 0xFDD0 && cp <= 0xFDEF) || (cp & 0xFFFE) == 0xFFFE;
}

// Every noncharacter, in every output, written as its code point; and over
// every scalar value, neither output ever copies a character XML 1.0 forbids
// (the SVG writer adds only markup references to Escape's text).
TEST(Escape, EveryNoncharacterAndNothingXmlForbids) {
  int noncharacters = 0;
  for (std::uint32_t cp = 0; cp <= 0x10FFFF; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;  // surrogates: not scalar values
    const std::string raw = Utf8(cp);
    const std::string text = Escape(raw);
    const std::string json = JsonEscape(raw);
    if (Noncharacter(cp)) {
      ++noncharacters;
      const std::uint32_t v = cp - 0x10000;
      const std::string want_json =
          cp <= 0xFFFF ? Format("\\u%04x", cp)
                       : Format("\\u%04x\\u%04x", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
      ASSERT_EQ(text, Format("\\u{%04x}", cp)) << std::hex << cp;
      ASSERT_EQ(json, want_json) << std::hex << cp;
    }
    const bool xml_char = cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) ||
                          (cp >= 0xE000 && cp <= 0xFFFD) || cp >= 0x10000;
    if (!xml_char || Noncharacter(cp)) {
      ASSERT_NE(text, raw) << std::hex << cp;
      ASSERT_EQ(text.find(raw), std::string::npos) << std::hex << cp;
      ASSERT_EQ(json.find(raw), std::string::npos) << std::hex << cp;
    }
  }
  EXPECT_EQ(noncharacters, 66);
}

TEST(DecodeUtf8At, CodePoints) {
  const std::string s = "a\xc3\xa9\xe2\x80\xae\xf3\xa0\x81\x81";
  const Bytes b(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
  const std::uint32_t want[] = {0x61, 0xe9, 0x202e, 0xe0041};
  std::size_t i = 0;
  for (const std::uint32_t cp : want) {
    const auto d = DecodeUtf8At(b, i);
    ASSERT_TRUE(d.has_value());
    EXPECT_EQ(d->code_point, cp);
    i += d->length;
  }
  EXPECT_EQ(i, s.size());
}

}  // namespace
}  // namespace kiln::base
