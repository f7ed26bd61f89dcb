// Arithmetic at the edges of u64: every product, size and range is exact,
// and overflow is LIMIT (D5, D6, D8, H7), never a wrapped value.
#include <limits>

#include "gtest/gtest.h"
#include "kiln/directory.h"
#include "kiln/internal/layout.h"
#include "kiln/internal/rules.h"
#include "support/block_builder.h"

namespace kiln {
namespace {

using testing::BlockSpec;
using testing::Buffer;
using testing::Build;
using testing::Put;
using testing::TensorSpec;

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

Rule RuleOf(const Buffer& b) {
  const Result<Directory> r = Parse(b);
  EXPECT_FALSE(r.ok());
  return r.ok() ? Rule::H1 : r.error().rule;
}

// 2^64 - 1 = 3 * 5 * 17 * 257 * 641 * 65537 * 6700417.
TensorSpec ProductMax(std::uint16_t dtype) {
  TensorSpec s;
  s.dtype = dtype;
  s.rank = 7;
  s.shape = {3, 5, 17, 257, 641, 65537, 6700417, 0};
  return s;
}

TEST(Arithmetic, D5ProductOfExactly2Pow64Minus1Fits) {
  TensorSpec s = ProductMax(2);  // u8: size 2^64-1 fits too (D6)
  s.byte_length = kMax;          // D7 holds
  s.byte_offset = 0;             // D8: 0 + 2^64-1 fits
  EXPECT_EQ(RuleOf(Build(BlockSpec{{s}, {}, 64})), Rule::D9);
  s.byte_length = kMax - 1;
  EXPECT_EQ(RuleOf(Build(BlockSpec{{s}, {}, 64})), Rule::D7);
}

TEST(Arithmetic, D5ProductOf2Pow64IsLimit) {
  TensorSpec s = ProductMax(2);
  s.rank = 8;
  s.shape[7] = 2;  // (2^64-1) * 2
  s.byte_length = 0;
  EXPECT_EQ(RuleOf(Build(BlockSpec{{s}, {}, {}})), Rule::D5);
  TensorSpec t;
  t.rank = 2;
  t.shape = {1ull << 32, 1ull << 32};
  t.byte_length = 0;
  // The message shows the shape's rank dimensions, no more, and the error
  // points at the dimension whose product overflowed.
  const Buffer b = Build(BlockSpec{{t}, {}, {}});
  const Result<Directory> r = Parse(b);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().rule, Rule::D5);
  EXPECT_EQ(r.error().message,
            "element count of shape [4294967296, 4294967296] exceeds 2^64-1 (at dimension 1)");
  EXPECT_EQ(r.error().offset, internal::DescriptorFieldOffset(0, internal::desc::kShape) + 8);
}

TEST(Arithmetic, D5ZeroDimensionAmongHugeOnesCountsZero) {
  TensorSpec s;
  s.rank = 8;
  s.shape = {kMax, kMax, kMax, 0, kMax, kMax, kMax, kMax};
  s.byte_length = 0;
  const Buffer b = Build(BlockSpec{{s}, {}, {}});
  const Result<Directory> r = Parse(b);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r.value().tensor(0).element_count, 0u);
  EXPECT_EQ(r.value().tensor(0).byte_length, 0u);
}

TEST(Arithmetic, D6SizesNearTheTop) {
  using internal::ByteSize;
  EXPECT_EQ(ByteSize(kMax, 4), 1ull << 63);  // a 4-bit dtype never overflows
  EXPECT_EQ(ByteSize(kMax - 1, 4), (1ull << 63) - 1);
  EXPECT_EQ(ByteSize(3, 4), 2u);
  EXPECT_EQ(ByteSize(kMax, 8), kMax);
  EXPECT_EQ(ByteSize(kMax, 16), std::nullopt);
  EXPECT_EQ(ByteSize(1ull << 63, 16), std::nullopt);
  EXPECT_EQ(ByteSize((1ull << 63) - 1, 16), kMax - 1);
  EXPECT_EQ(ByteSize(1ull << 60, 128), std::nullopt);
  EXPECT_EQ(ByteSize((1ull << 60) - 1, 128), kMax - 15);
}

TEST(Arithmetic, D6FourBitCountOf2Pow64Minus1ReachesD7) {
  TensorSpec s = ProductMax(21);  // u4
  s.byte_length = 0;
  EXPECT_EQ(RuleOf(Build(BlockSpec{{s}, {}, {}})), Rule::D7);
  s.byte_length = 1ull << 63;  // the exact size: then the range is the problem
  EXPECT_EQ(RuleOf(Build(BlockSpec{{s}, {}, 64})), Rule::D9);
}

TEST(Arithmetic, D6SixteenBitSizeOf2Pow64IsLimit) {
  TensorSpec s;
  s.dtype = 16;  // bf16
  s.shape = {1ull << 63};
  s.byte_length = 0;
  EXPECT_EQ(RuleOf(Build(BlockSpec{{s}, {}, {}})), Rule::D6);
  s.shape = {(1ull << 63) - 1};
  EXPECT_EQ(RuleOf(Build(BlockSpec{{s}, {}, {}})), Rule::D7);
}

TEST(Arithmetic, D8RangeEndingAt2Pow64Minus1IsTypeD9) {
  TensorSpec s;
  s.dtype = 2;
  s.shape = {64};
  s.byte_offset = kMax - 127;  // 2^64 - 128, aligned; ends at 2^64 - 64
  EXPECT_EQ(RuleOf(Build(BlockSpec{{s}, {}, 64})), Rule::D9);
  s.shape = {63};
  s.byte_offset = kMax - 63;  // 2^64 - 64; ends at exactly 2^64 - 1
  EXPECT_EQ(RuleOf(Build(BlockSpec{{s}, {}, 64})), Rule::D9);
}

TEST(Arithmetic, D8RangeEndingAtOrPast2Pow64IsLimit) {
  TensorSpec s;
  s.dtype = 2;
  s.shape = {64};
  s.byte_offset = kMax - 63;  // ends at exactly 2^64
  EXPECT_EQ(RuleOf(Build(BlockSpec{{s}, {}, 64})), Rule::D8);
  s.byte_offset = kMax;  // ends at 2^64 + 63
  EXPECT_EQ(RuleOf(Build(BlockSpec{{s}, {}, 64})), Rule::D8);
}

TEST(Arithmetic, H7BlockLengthAtAndPast2Pow64) {
  Buffer b = Build(BlockSpec{});  // payload_base 64
  Put(b, 16, kMax - 64, 8);       // block_length exactly 2^64 - 1: fits, so H8
  EXPECT_EQ(RuleOf(b), Rule::H8);
  Put(b, 16, kMax - 63, 8);  // block_length 2^64
  EXPECT_EQ(RuleOf(b), Rule::H7);
  Put(b, 16, kMax, 8);
  EXPECT_EQ(RuleOf(b), Rule::H7);
}

}  // namespace
}  // namespace kiln
