// Every truncation and every single-bit flip of every valid golden case.
#include "gtest/gtest.h"
#include "kiln/directory.h"
#include "support/golden.h"

namespace kiln {
namespace {

using testing::Buffer;
using testing::GoldenCase;

class ValidCaseTest : public ::testing::TestWithParam<GoldenCase> {};

// Touches every accessor of every tensor, so a bad view shows under ASan.
std::uint64_t TouchAll(const Directory& d) {
  std::uint64_t sum = d.block_length() + d.name_heap().size();
  for (std::uint32_t i = 0; i < d.tensor_count(); ++i) {
    const Tensor t = d.tensor(i);
    sum += t.name.size() + t.layout.size() + t.element_count + t.rank;
    for (std::uint8_t b : t.payload) sum += b;
    for (char c : t.name) sum += static_cast<unsigned char>(c);
  }
  return sum;
}

// Rule H3 or H8 (or H1/H2 for the shortest prefixes): every proper prefix of
// a valid block is FRAME, in whole and in prefix mode.
TEST_P(ValidCaseTest, EveryTruncationIsFrame) {
  const Buffer full = testing::ReadFile(GetParam().path);
  ASSERT_TRUE(Parse(full).ok());
  for (std::size_t n = 0; n < full.size(); ++n) {
    // A copy of exactly n bytes, so ASan sees any read past the end.
    const Buffer cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
    for (Mode mode : {Mode::kWhole, Mode::kPrefix}) {
      ParseOptions options;
      options.mode = mode;
      const Result<Directory> r = Parse(cut, options);
      ASSERT_FALSE(r.ok()) << "prefix of " << n << " bytes parsed";
      ASSERT_EQ(r.error().error_class, ErrorClass::kFrame)
          << "prefix of " << n << " bytes: " << r.error().ToString();
    }
  }
}

// A valid block followed by other bytes: FRAME H8 as a whole buffer, valid
// with the right block_length as a prefix.
TEST_P(ValidCaseTest, TrailingBytes) {
  Buffer b = testing::ReadFile(GetParam().path);
  const std::size_t length = b.size();
  b.push_back(0);
  const Result<Directory> whole = Parse(b);
  ASSERT_FALSE(whole.ok());
  EXPECT_EQ(whole.error().rule, Rule::H8);
  ParseOptions options;
  options.mode = Mode::kPrefix;
  const Result<Directory> prefix = Parse(b, options);
  ASSERT_TRUE(prefix.ok()) << prefix.error().ToString();
  EXPECT_EQ(prefix.value().block_length(), length);
}

// Every single-bit flip gives a verdict, without a crash, and the same
// verdict twice; a flip that stays valid yields a directory whose every
// accessor works.
TEST_P(ValidCaseTest, EveryBitFlipGivesAVerdict) {
  const Buffer original = testing::ReadFile(GetParam().path);
  std::size_t still_valid = 0;
  for (std::size_t bit = 0; bit < original.size() * 8; ++bit) {
    Buffer b = original;
    b[bit / 8] = static_cast<std::uint8_t>(b[bit / 8] ^ (1u << (bit % 8)));
    const Result<Directory> r = Parse(b);
    const Result<Directory> again = Parse(b);
    ASSERT_EQ(r.ok(), again.ok());
    if (r.ok()) {
      ++still_valid;
      EXPECT_EQ(TouchAll(r.value()), TouchAll(again.value()));
    } else {
      EXPECT_EQ(r.error().rule, again.error().rule);
      EXPECT_EQ(r.error().offset, again.error().offset);
      EXPECT_LE(r.error().offset, b.size());
    }
  }
  // Flips in payload bytes keep a block valid; flips in the header never do.
  EXPECT_LT(still_valid, original.size() * 8);
}

INSTANTIATE_TEST_SUITE_P(Golden, ValidCaseTest, ::testing::ValuesIn(testing::ValidCases()),
                         [](const auto& info) { return testing::TestName(info.param); });

}  // namespace
}  // namespace kiln
