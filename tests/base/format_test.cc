// kiln::base::Format: the conversions the messages use print what Abseil's
// StrFormat printed for them (the golden messages depend on it).
#include "kiln/base/format.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace kiln::base {
namespace {

TEST(Format, DecimalOfEveryIntegerWidth) {
  EXPECT_EQ(Format("%d", std::uint8_t{255}), "255");
  EXPECT_EQ(Format("%d", std::int8_t{-128}), "-128");
  EXPECT_EQ(Format("%d", 0), "0");
  EXPECT_EQ(Format("%d", -1), "-1");
  EXPECT_EQ(Format("%d", std::numeric_limits<std::uint64_t>::max()), "18446744073709551615");
  EXPECT_EQ(Format("%d", std::numeric_limits<std::int64_t>::min()), "-9223372036854775808");
  EXPECT_EQ(Format("%d", std::size_t{64}), "64");
}

TEST(Format, ZeroPaddedHex) {
  EXPECT_EQ(Format("0x%02x", std::uint8_t{0x0a}), "0x0a");
  EXPECT_EQ(Format("0x%02x", 0x1ff), "0x1ff");  // wider than the padding
  EXPECT_EQ(Format("0x%04x", std::uint16_t{0xbeef}), "0xbeef");
  EXPECT_EQ(Format("0x%04x", 7u), "0x0007");
  EXPECT_EQ(Format("%08x", std::uint32_t{0xABC}), "00000abc");
  // A negative value as its unsigned twin of the same width, as printf.
  EXPECT_EQ(Format("%02x", std::int8_t{-1}), "ff");
  EXPECT_EQ(Format("%08x", -2), "fffffffe");
}

TEST(Format, TextAndLiterals) {
  const std::string s = "name";
  const std::string_view v = "view";
  EXPECT_EQ(Format("%s %s %s", s, v, "literal"), "name view literal");
  EXPECT_EQ(Format("100%% of %d", 3), "100% of 3");
  EXPECT_EQ(Format("no conversions"), "no conversions");
  EXPECT_EQ(Format("%s", std::string_view("a\0b", 3)), std::string("a\0b", 3));
}

TEST(Format, AppendFormatAppends) {
  std::string out = "x=";
  AppendFormat(&out, "%d, y=%s", 1, "two");
  EXPECT_EQ(out, "x=1, y=two");
}

}  // namespace
}  // namespace kiln::base
