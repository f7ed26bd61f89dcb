// \u escapes in a safetensors header (a tensor name here), at the surrogate
// boundaries: a high surrogate D800..DBFF followed by a low one DC00..DFFF
// is one code point; a lone or misordered surrogate is refused; the code
// points just outside the surrogate range are ordinary.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kiln/formats/safetensors.h"

namespace kiln::formats {
namespace {

struct EscapeCase {
  const char* label;
  const char* escaped;  // the name as written in the JSON
  const char* decoded;  // its UTF-8 bytes, or nullptr when refused
};

constexpr EscapeCase kCases[] = {
    {"FirstPair", "\\uD800\\uDC00", "\xF0\x90\x80\x80"},         // U+10000
    {"HighFirstLowLast", "\\uD800\\uDFFF", "\xF0\x90\x8F\xBF"},  // U+103FF
    {"HighLastLowFirst", "\\uDBFF\\uDC00", "\xF4\x8F\xB0\x80"},  // U+10FC00
    {"LastPair", "\\uDBFF\\uDFFF", "\xF4\x8F\xBF\xBF"},          // U+10FFFF
    {"BelowSurrogates", "\\uD7FF", "\xED\x9F\xBF"},
    {"AboveSurrogates", "\\uE000", "\xEE\x80\x80"},
    {"LoneHighFirst", "\\uD800", nullptr},
    {"LoneHighLast", "\\uDBFFx", nullptr},
    {"LoneLowFirst", "\\uDC00", nullptr},
    {"LoneLowLast", "\\uDFFF", nullptr},
    {"HighThenBelowLow", "\\uDBFF\\uDBFF", nullptr},
    {"HighThenAboveLow", "\\uD800\\uE000", nullptr},
};

class JsonEscapeTest : public ::testing::TestWithParam<EscapeCase> {};

TEST_P(JsonEscapeTest, TensorName) {
  const EscapeCase& c = GetParam();
  const std::string json =
      std::string("{\"") + c.escaped + R"(":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}})";
  std::vector<std::uint8_t> file;
  for (int k = 0; k < 8; ++k) file.push_back(static_cast<std::uint8_t>(json.size() >> (8 * k)));
  file.insert(file.end(), json.begin(), json.end());
  const auto r = ReadSafetensors(file);
  if (c.decoded == nullptr) {
    EXPECT_FALSE(r.ok()) << c.label;
    return;
  }
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r.value().tensors.size(), 1u);
  EXPECT_EQ(r.value().tensors[0].name, c.decoded);
}

INSTANTIATE_TEST_SUITE_P(Safetensors, JsonEscapeTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<EscapeCase>& info) {
                           return std::string(info.param.label);
                         });

}  // namespace
}  // namespace kiln::formats
