// The bounded reader, fixed-offset loads, zero scans and checked arithmetic.
#include <limits>

#include "bytes.h"
#include "checked.h"
#include "gtest/gtest.h"

namespace kiln::internal {
namespace {

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

TEST(ByteReader, FailedReadLeavesCursorUnchanged) {
  const std::uint8_t data[] = {1, 2, 3};
  ByteReader r{Bytes(data)};
  Bytes out;
  EXPECT_FALSE(r.ReadBytes(4, &out));
  EXPECT_EQ(r.position(), 0u);
  EXPECT_EQ(r.remaining(), 3u);
  std::uint8_t b = 0;
  ASSERT_TRUE(r.ReadU8(&b));
  EXPECT_EQ(b, 1);
  EXPECT_FALSE(r.ReadFixed<3>().has_value());
  EXPECT_EQ(r.position(), 1u);
  ASSERT_TRUE(r.ReadBytes(2, &out));
  EXPECT_EQ(out.size(), 2u);
  EXPECT_FALSE(r.ReadU8(&b));
  EXPECT_FALSE(r.Skip(1));
  EXPECT_TRUE(r.Skip(0));
}

TEST(ByteReader, EmptyBuffer) {
  ByteReader r{Bytes()};
  std::uint8_t b = 0;
  EXPECT_FALSE(r.ReadU8(&b));
  EXPECT_FALSE(r.ReadFixed<1>().has_value());
  EXPECT_EQ(r.remaining(), 0u);
}

TEST(LoadLe, LittleEndianAtOffset) {
  const std::uint8_t data[16] = {0, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0xff};
  const std::span<const std::uint8_t, 16> s(data);
  EXPECT_EQ((LoadLe<std::uint8_t, 9>(s)), 0xff);
  EXPECT_EQ((LoadLe<std::uint16_t, 1>(s)), 0x0201);
  EXPECT_EQ((LoadLe<std::uint32_t, 1>(s)), 0x04030201u);
  EXPECT_EQ((LoadLe<std::uint64_t, 1>(s)), 0x0807060504030201ull);
  EXPECT_EQ((LoadLe<std::uint64_t, 8>(s)), 0xff08ull);
}

TEST(FirstNonzero, FindsTheFirstAtEveryPosition) {
  for (std::size_t len = 0; len < 40; ++len) {
    std::vector<std::uint8_t> v(len, 0);
    EXPECT_FALSE(FirstNonzero(v).has_value());
    for (std::size_t at = 0; at < len; ++at) {
      std::fill(v.begin(), v.end(), 0);
      v[at] = 0x80;
      if (at + 1 < len) v[len - 1] = 1;
      ASSERT_EQ(FirstNonzero(v), at) << "len " << len;
    }
  }
}

TEST(Checked, AddBoundaries) {
  EXPECT_EQ(CheckedAdd(kMax - 1, 1), kMax);
  EXPECT_EQ(CheckedAdd(kMax, 1), std::nullopt);
  EXPECT_EQ(CheckedAdd(1ull << 63, 1ull << 63), std::nullopt);
  EXPECT_EQ(CheckedAdd(0, 0), 0u);
}

TEST(Checked, MulBoundaries) {
  // 2^64 - 1 = 3 * 5 * 17 * 257 * 641 * 65537 * 6700417
  EXPECT_EQ(CheckedMul(4294967295ull, 4294967297ull), kMax);
  EXPECT_EQ(CheckedMul(1ull << 32, 1ull << 32), std::nullopt);
  EXPECT_EQ(CheckedMul(kMax, 1), kMax);
  EXPECT_EQ(CheckedMul(kMax, 0), 0u);
  EXPECT_EQ(CheckedMul(kMax, 2), std::nullopt);
}

TEST(Checked, CeilDivAndAlign) {
  EXPECT_EQ(CeilDiv(kMax, 2), 1ull << 63);
  EXPECT_EQ(CeilDiv(10, 4), 3u);
  EXPECT_EQ(CeilDiv(0, 7), 0u);
  EXPECT_EQ(CeilDiv(8, 4), 2u);
  EXPECT_EQ(AlignUp64(0), 0u);
  EXPECT_EQ(AlignUp64(1), 64u);
  EXPECT_EQ(AlignUp64(64), 64u);
  EXPECT_EQ(AlignUp64(kMax - 63), kMax - 63);  // 2^64 - 64 is aligned
  EXPECT_EQ(AlignUp64(kMax - 62), std::nullopt);
  EXPECT_EQ(AlignUp64(kMax - 64 - 62), kMax - 63);
}

}  // namespace
}  // namespace kiln::internal
