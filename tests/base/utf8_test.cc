// Rule N4: RFC 3629 well-formedness, byte sequence by byte sequence.
#include <string>

#include "gtest/gtest.h"
#include "kiln/base/utf8.h"
#include "kiln/utf8.h"

namespace kiln::base {
namespace {

struct Utf8Row {
  std::string label;
  std::string bytes;
  std::optional<std::size_t> first_bad;  // nullopt: well-formed
};

std::vector<Utf8Row> Rows() {
  return {
      {"Empty", "", std::nullopt},
      {"Ascii", "model.layers.0.weight", std::nullopt},
      {"TwoByteMin", "\xC2\x80", std::nullopt},
      {"TwoByteMax", "\xDF\xBF", std::nullopt},
      {"ThreeByteMin", "\xE0\xA0\x80", std::nullopt},
      {"BeforeSurrogates", "\xED\x9F\xBF", std::nullopt},
      {"AfterSurrogates", "\xEE\x80\x80", std::nullopt},
      {"BomAndFFFF", "\xEF\xBB\xBF\xEF\xBF\xBF", std::nullopt},
      {"FourByteMin", "\xF0\x90\x80\x80", std::nullopt},
      {"MaxCodePoint", "\xF4\x8F\xBF\xBF", std::nullopt},
      {"Greek", "\xCE\xB1\xCE\xB2", std::nullopt},
      {"NulIsWellFormed", std::string("a\0b", 3), std::nullopt},
      {"LoneContinuation", "a\x80", 1},
      {"OverlongTwoByteC0", "\xC0\x80", 0},
      {"OverlongTwoByteC1", "\xC1\xBF", 0},
      {"OverlongThreeByte", "\xE0\x9F\xBF", 0},
      {"OverlongFourByte", "\xF0\x8F\xBF\xBF", 0},
      {"SurrogateLow", "\xED\xA0\x80", 0},
      {"SurrogateHigh", "\xED\xBF\xBF", 0},
      {"AboveMaxF4", "\xF4\x90\x80\x80", 0},
      {"AboveMaxF5", "\xF5\x80\x80\x80", 0},
      {"ByteFF", "ab\xFF", 2},
      {"ByteFE", "\xFE", 0},
      {"TruncatedTwo", "x\xC3", 1},
      {"TruncatedThree", "\xE2\x82", 0},
      {"TruncatedFour", "\xF0\x9F\x98", 0},
      {"BadSecondContinuation", "\xE2\x28\xA1", 0},
      {"BadThirdContinuation", "\xF0\x9F\x98\x28", 0},
      {"GoodThenBad", "\xCE\xB1\xC0", 2},
  };
}

class Utf8Test : public ::testing::TestWithParam<Utf8Row> {};

TEST_P(Utf8Test, N4FirstInvalidByte) {
  const Utf8Row& row = GetParam();
  const Bytes b(reinterpret_cast<const std::uint8_t*>(row.bytes.data()), row.bytes.size());
  EXPECT_EQ(FirstInvalidUtf8(b), row.first_bad);
  EXPECT_EQ(IsWellFormedUtf8(row.bytes), !row.first_bad.has_value());
}

INSTANTIATE_TEST_SUITE_P(N4, Utf8Test, ::testing::ValuesIn(Rows()),
                         [](const auto& info) { return info.param.label; });

// Every two-byte lead with every second byte agrees with a direct reading of
// the RFC 3629 grammar.
TEST(Utf8Exhaustive, N4TwoByteSequences) {
  for (int a = 0; a < 256; ++a) {
    for (int b = 0; b < 256; ++b) {
      const std::uint8_t s[2] = {static_cast<std::uint8_t>(a), static_cast<std::uint8_t>(b)};
      const bool ascii_a = a < 0x80, ascii_b = b < 0x80;
      const bool pair = a >= 0xC2 && a <= 0xDF && b >= 0x80 && b <= 0xBF;
      EXPECT_EQ(!FirstInvalidUtf8(Bytes(s)).has_value(), (ascii_a && ascii_b) || pair)
          << a << "," << b;
    }
  }
}

}  // namespace
}  // namespace kiln::base
