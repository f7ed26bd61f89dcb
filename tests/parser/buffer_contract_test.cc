// The buffer contract (directory.h): the caller's bytes must not change while
// a Directory is used; if they do, accessors may return wrong values but never
// a view or a read outside the buffer. Each case parses a valid block, then
// overwrites the fields the accessors re-read and checks that every view they
// hand out lies inside the buffer (and, under ASan, that nothing is read past
// it).
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kiln/kiln.h"
#include "support/block_builder.h"

namespace kiln {
namespace {

using testing::BlockSpec;
using testing::Buffer;
using testing::Build;
using testing::Desc;
using testing::Put;
using testing::TensorSpec;

BlockSpec ThreeNamed() {
  BlockSpec spec;
  for (int i = 0; i < 3; ++i) {
    TensorSpec t;
    t.name = "tensor." + std::to_string(i);
    t.shape = {4};
    spec.tensors.push_back(t);
  }
  spec.tensors[2].dtype = 0x8000;  // opaque, with a layout name
  spec.tensors[2].layout = "ggml.q4_0";
  spec.tensors[2].shape = {64};
  spec.tensors[2].block_size = 32;
  return spec;
}

bool Inside(const Buffer& b, const void* p, std::size_t n) {
  if (n == 0) return true;  // an empty view reads nothing, wherever it points
  const auto* q = static_cast<const std::uint8_t*>(p);
  return q >= b.data() && n <= b.size() && q <= b.data() + (b.size() - n);
}

// Calls every accessor and checks every view it returns.
void ExpectEveryViewInside(const Directory& d, const Buffer& b) {
  EXPECT_TRUE(Inside(b, d.block().data(), d.block().size()));
  EXPECT_TRUE(Inside(b, d.name_heap().data(), d.name_heap().size()));
  for (std::uint32_t i = 0; i < d.tensor_count(); ++i) {
    const Tensor t = d.tensor(i);
    EXPECT_LE(t.rank, kMaxRank) << "tensor " << i;
    EXPECT_LE(t.dims().size(), kMaxRank) << "tensor " << i;
    std::uint64_t sum = 0;
    for (const std::uint64_t v : t.dims()) sum ^= v;  // reads every dim: ASan sees a bad one
    (void)sum;
    EXPECT_TRUE(Inside(b, t.name.data(), t.name.size())) << "name of tensor " << i;
    EXPECT_TRUE(Inside(b, t.layout.data(), t.layout.size())) << "layout of tensor " << i;
    EXPECT_TRUE(Inside(b, t.payload.data(), t.payload.size())) << "payload of tensor " << i;
  }
  (void)d.Find("tensor.1");
  (void)d.Find(std::string(300, 'x'));
}

struct Change {
  const char* what;
  std::size_t field;  // descriptor field offset
  std::uint64_t value;
  std::size_t size;
};

TEST(BufferContract, FieldsChangedAfterParseNeverLeaveTheBuffer) {
  const Change changes[] = {
      {"rank 255", testing::kRank, 255, 1},
      {"name_off 0xFFFF", testing::kNameOff, 0xFFFF, 2},
      {"name_len 0xFFFF", testing::kNameLen, 0xFFFF, 2},
      {"layout_off 0xFFFF", testing::kLayoutOff, 0xFFFF, 2},
      {"layout_len 0xFFFF", testing::kLayoutLen, 0xFFFF, 2},
      {"byte_offset 2^64-1", testing::kOffset, ~std::uint64_t{0}, 8},
      {"byte_offset past the block", testing::kOffset, 1u << 20, 8},
      {"byte_length 2^64-1", testing::kLength, ~std::uint64_t{0}, 8},
      {"byte_length past the block", testing::kLength, 1u << 20, 8},
  };
  for (const Change& c : changes) {
    for (std::size_t i = 0; i < 3; ++i) {
      Buffer b = Build(ThreeNamed());
      const Result<Directory> r = Parse(b);
      ASSERT_TRUE(r.ok()) << r.error().ToString();
      Put(b, Desc(i, c.field), c.value, c.size);
      SCOPED_TRACE(std::string(c.what) + " in tensor " + std::to_string(i));
      ExpectEveryViewInside(r.value(), b);
    }
  }
}

TEST(BufferContract, RandomDirectoryBytesAfterParseNeverLeaveTheBuffer) {
  std::mt19937_64 rng(20261130);
  for (int round = 0; round < 500; ++round) {
    Buffer b = Build(ThreeNamed());
    const Result<Directory> r = Parse(b);
    ASSERT_TRUE(r.ok()) << r.error().ToString();
    const std::size_t end = static_cast<std::size_t>(testing::PayloadBase(b));
    for (std::size_t k = 64; k < end; ++k) {
      if (rng() % 4 == 0) b[k] = static_cast<std::uint8_t>(rng());
    }
    SCOPED_TRACE("round " + std::to_string(round));
    ExpectEveryViewInside(r.value(), b);
  }
}

}  // namespace
}  // namespace kiln
