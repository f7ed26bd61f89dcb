// The shared primitives of base/ (used by the parser, the format readers
// and the command): the bounded reader, fixed-offset loads, zero scans and
// checked arithmetic.
#include <array>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kiln/base/bytes.h"
#include "kiln/base/checked.h"

namespace kiln::base {
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

// ByteSwap runs only on a big-endian host (inside LoadLe and StoreLe), so a
// little-endian CI sees it nowhere else: each width, and the top bit of the
// lowest byte moving to the highest (a shift that drops or sign-extends it
// shows here).
TEST(ByteSwap, ReversesTheBytesOfEachWidth) {
  EXPECT_EQ(ByteSwap<std::uint8_t>(0x81), 0x81);
  EXPECT_EQ(ByteSwap<std::uint16_t>(0x0102), 0x0201);
  EXPECT_EQ(ByteSwap<std::uint16_t>(0x80ff), 0xff80);
  EXPECT_EQ(ByteSwap<std::uint32_t>(0x01020304u), 0x04030201u);
  EXPECT_EQ(ByteSwap<std::uint32_t>(0x000000f1u), 0xf1000000u);
  EXPECT_EQ(ByteSwap<std::uint64_t>(0x0102030405060708ull), 0x0807060504030201ull);
  EXPECT_EQ(ByteSwap<std::uint64_t>(0xf0000000000000a5ull), 0xa5000000000000f0ull);
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

// The split multiply (the WebAssembly module's) and the compiler's checked
// one agree on the overflow flag and the product, at the 2^32 edges of
// either factor and at random magnitudes.
TEST(Checked, SplitMultiplyAgreesWithTheBuiltin) {
  const std::uint64_t edges[] = {0,
                                 1,
                                 2,
                                 0xffffffffull,
                                 1ull << 32,
                                 (1ull << 32) + 1,
                                 0x1ffffffffull,
                                 1ull << 33,
                                 4294967297ull,
                                 kMax / 2,
                                 kMax - 1,
                                 kMax};
  const auto agree = [](std::uint64_t a, std::uint64_t b) {
    std::uint64_t split = 0, builtin = 0;
    const bool o1 = MulOverflowSplit(a, b, &split);
    const bool o2 = __builtin_mul_overflow(a, b, &builtin);
    return o1 == o2 && split == builtin;
  };
  for (const std::uint64_t a : edges) {
    for (const std::uint64_t b : edges) ASSERT_TRUE(agree(a, b)) << a << " * " << b;
  }
  std::mt19937_64 rng(29);  // kiln's code never wraps, its tests neither (integer sanitizer)
  for (int i = 0; i < 200000; ++i) {
    const std::uint64_t a = rng() >> (rng() % 64), b = rng() >> (rng() % 64);
    ASSERT_TRUE(agree(a, b)) << a << " * " << b;
  }
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

// Each little-endian read either reads all its bytes and advances, or
// changes nothing: a 1..N-1 byte tail never moves the cursor.
TEST(ByteReader, LittleEndianReadsAdvanceOrChangeNothing) {
  const std::uint8_t data[] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b};
  ByteReader r{Bytes(data)};
  std::uint16_t u16 = 0;
  std::uint32_t u32 = 0;
  std::uint64_t u64 = 0;
  ASSERT_TRUE(r.ReadU16Le(&u16));
  EXPECT_EQ(u16, 0x0201);
  ASSERT_TRUE(r.ReadU64Le(&u64));
  EXPECT_EQ(u64, 0x0a09080706050403ull);
  EXPECT_EQ(r.position(), 10u);
  EXPECT_FALSE(r.ReadU16Le(&u16));
  EXPECT_FALSE(r.ReadU32Le(&u32));
  EXPECT_FALSE(r.ReadU64Le(&u64));
  EXPECT_EQ(u16, 0x0201);  // outputs untouched on failure
  EXPECT_EQ(u64, 0x0a09080706050403ull);
  EXPECT_EQ(r.position(), 10u);
  ByteReader r2{Bytes(data).first(7)};
  EXPECT_FALSE(r2.ReadU64Le(&u64));
  ASSERT_TRUE(r2.ReadU32Le(&u32));
  EXPECT_EQ(u32, 0x04030201u);
  EXPECT_EQ(r2.remaining(), 3u);
}

// Lengths from a file are u64: one larger than what remains (or than
// size_t) fails without being narrowed first.
TEST(ByteReader, SixtyFourBitLengthsAreCheckedBeforeUse) {
  const std::uint8_t data[] = {1, 2, 3};
  ByteReader r{Bytes(data)};
  Bytes out;
  EXPECT_FALSE(r.ReadBytes64(std::uint64_t{1} << 63, &out));
  EXPECT_FALSE(r.ReadBytes64(kMax, &out));
  EXPECT_FALSE(r.Skip64(4));
  EXPECT_EQ(r.position(), 0u);
  ASSERT_TRUE(r.ReadBytes64(2, &out));
  EXPECT_EQ(out.size(), 2u);
  EXPECT_TRUE(r.Skip64(1));
  EXPECT_EQ(r.remaining(), 0u);
}

TEST(Checked, ElementCount) {
  const std::vector<std::uint64_t> scalar;
  EXPECT_EQ(ElementCount(scalar), 1u);
  const std::vector<std::uint64_t> max = {4294967295ull, 4294967297ull};
  EXPECT_EQ(ElementCount(max), kMax);
  const std::vector<std::uint64_t> over = {1ull << 32, 1ull << 32};
  EXPECT_EQ(ElementCount(over), std::nullopt);
  const std::vector<std::uint64_t> zero_among_huge = {kMax, kMax, 0};  // D5: zero wins
  EXPECT_EQ(ElementCount(zero_among_huge), 0u);
}

// The dimension D5's message names: the first at which the product
// overflows, found only when the count is nullopt.
TEST(Checked, ElementCountOverflowDimension) {
  std::size_t dim = 99;
  const std::vector<std::uint64_t> over_at_2 = {1ull << 20, 1ull << 40, 1ull << 4, 3, kMax};
  EXPECT_EQ(ElementCount(over_at_2, &dim), std::nullopt);
  EXPECT_EQ(dim, 2u);
  const std::vector<std::uint64_t> over_at_1 = {kMax, 2};
  EXPECT_EQ(ElementCount(over_at_1, &dim), std::nullopt);
  EXPECT_EQ(dim, 1u);
  dim = 99;
  const std::vector<std::uint64_t> zero_after_overflow = {kMax, kMax, 0};
  EXPECT_EQ(ElementCount(zero_after_overflow, &dim), 0u);
  EXPECT_EQ(dim, 99u);  // left alone: the count is known
  const std::vector<std::uint64_t> fits = {1ull << 31, 1ull << 32};
  EXPECT_EQ(ElementCount(fits, &dim), 1ull << 63);
  EXPECT_EQ(dim, 99u);
  static_assert(ElementCount(std::array<std::uint64_t, 2>{3, 5}) == 15u);
}

}  // namespace
}  // namespace kiln::base
