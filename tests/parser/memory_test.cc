// Memory bounds: this binary links the heap counter (support/alloc_counter.h)
// to count what a parse allocates. A hostile header (four billion tensors
// claimed) is refused in a few KiB, and a parse allocates at most one block
// of one u32 per tensor, none at all with caller scratch.
#include <cstring>
#include <string>
#include "gtest/gtest.h"

#include "kiln/directory.h"
#include "kiln/random_access.h"
#include "kiln/stream.h"
#include "support/alloc_counter.h"
#include "support/block_builder.h"
#include "support/colliding_names.h"

namespace kiln {
namespace {

using testing::BlockSpec;
using testing::Buffer;
using testing::Build;
using testing::Put;
using testing::TensorSpec;

struct Counted {
  std::size_t allocations;
  std::size_t bytes;
  bool ok;
};

Counted CountParse(const Buffer& b, const ParseOptions& options = {}) {
  const alloc::Scope scope;
  bool ok = false;
  {
    const Result<Directory> r = Parse(b, options);
    ok = r.ok();
  }
  const alloc::Stats s = scope.Read();
  return {s.allocations, s.bytes, ok};
}

// The counter itself: explicit ::operator new calls (a new-expression may be
// elided by the compiler; these calls may not).
TEST(AllocCounter, CountsAllocationsBytesLiveAndPeak) {
  const std::size_t live0 = alloc::LiveBytes();
  const alloc::Scope scope;
  void* a = ::operator new(1000);
  void* b = ::operator new[](24);
  EXPECT_EQ(alloc::LiveBytes(), live0 + 1024);
  ::operator delete(a);
  void* c = ::operator new(10);
  ::operator delete[](b);
  ::operator delete(c);
  const alloc::Stats s = scope.Read();
  EXPECT_EQ(s.allocations, 3u);
  EXPECT_EQ(s.bytes, 1034u);
  EXPECT_EQ(s.peak_extra, 1024u);
  EXPECT_EQ(alloc::LiveBytes(), live0);
}

TEST(Memory, FourBillionTensorsRefusedInAFewKiB) {
  Buffer b = Build(BlockSpec{});
  Put(b, 8, 4000000000u, 4);
  Put(b, 24, 4000000000ull * 128, 8);  // consistent: H6 holds
  const Counted c = CountParse(b);
  EXPECT_FALSE(c.ok);
  EXPECT_LE(c.bytes, 4096u);  // the error message only
}

// Many tensors with names, stored out of offset order: both N5 (the name
// table) and P1 (the offset order) need scratch, and share one allocation.
Buffer ManyTensors(std::uint32_t n) {
  BlockSpec spec;
  for (std::uint32_t i = 0; i < n; ++i) {
    TensorSpec t;
    t.name = "t";  // two steps: GCC 12 warns (-Wrestrict, falsely) of "t" + to_string
    t.name += std::to_string(i);
    t.byte_offset = std::uint64_t{n - 1 - i} * 64;
    spec.tensors.push_back(t);
  }
  return Build(spec);
}

TEST(Memory, ValidParseMakesOneAllocationOfAtMost16BytesPerTensor) {
  for (std::uint32_t n : {2u, 3u, 1000u, 1025u}) {
    const Buffer b = ManyTensors(n);
    const Counted c = CountParse(b);
    EXPECT_TRUE(c.ok);
    EXPECT_EQ(c.allocations, 1u) << n;
    EXPECT_EQ(c.bytes, ScratchWords(n) * sizeof(std::uint32_t)) << n;
    EXPECT_LE(c.bytes, 16u * n) << n;
  }
}

// Crafted names that run N5's table past its probe budget: the sorting
// fallback reuses the table's scratch, so the parse still allocates once.
TEST(Memory, NamesPastTheProbeBudgetStillMakeOneAllocation) {
  constexpr std::uint32_t kN = 256;
  const Counted c = CountParse(Build(testing::CollidingNamesSpec(kN)));
  EXPECT_TRUE(c.ok);
  EXPECT_EQ(c.allocations, 1u);
  EXPECT_EQ(c.bytes, ScratchWords(kN) * sizeof(std::uint32_t));
}

TEST(Memory, CallerScratchMeansNoAllocation) {
  const Buffer b = ManyTensors(1000);
  std::vector<std::uint32_t> scratch(ScratchWords(1000));
  ParseOptions options;
  options.scratch = scratch;
  const Counted c = CountParse(b, options);
  EXPECT_TRUE(c.ok);
  EXPECT_EQ(c.allocations, 0u);
}

TEST(Memory, CanonicalUnnamedBlockNeedsNoScratch) {
  BlockSpec spec;
  spec.tensors.resize(500);
  const Buffer b = Build(spec);
  const Counted c = CountParse(b);
  EXPECT_TRUE(c.ok);
  EXPECT_EQ(c.allocations, 0u);
}

// The streaming validator keeps what arrived, never what a header claims:
// four billion tensors claimed, 1 MiB of directory bytes fed in 64 KiB
// chunks, and the total allocated stays within a small multiple of the
// bytes that arrived (the kept region grows geometrically).
TEST(Memory, StreamKeepsOnlyWhatArrived) {
  Buffer b = Build(BlockSpec{});
  b.resize(std::size_t{1} << 20, 0);
  Put(b, 8, 0xFFFFFFFFu, 4);                       // tensor_count
  Put(b, 24, std::uint64_t{0xFFFFFFFF} * 128, 8);  // directory_bytes (H6 holds)
  std::size_t peak = 0;
  {
    const alloc::Scope scope;
    StreamValidator v;
    for (std::size_t at = 0; at < b.size(); at += 65536) {
      ASSERT_EQ(v.Feed(std::span(b).subspan(at, 65536)), StreamStatus::kNeedMore);
      peak = std::max(peak, scope.Read().bytes);
    }
    EXPECT_EQ(v.Finish(), StreamStatus::kRejected);
    EXPECT_EQ(v.error().rule, Rule::H8);
  }
  EXPECT_LE(peak, 4 * b.size() + 4096);
}

// A canonical block (descriptors in offset order, payloads packed, no
// names) needs no per-tensor scratch in the streaming validator either: its
// heap is the directory region it keeps (the header first, then the whole
// region), plus at most 1 KiB of bookkeeping. 4,096 tensors: an offset
// order sorted in scratch would be 16 KiB more.
TEST(Memory, StreamOfACanonicalBlockKeepsOnlyItsDirectoryRegion) {
  constexpr std::uint32_t kN = 4096;
  BlockSpec spec;
  TensorSpec packed;
  packed.shape = {16};  // 64 bytes of f32: no gap between payloads
  spec.tensors.assign(kN, packed);
  const Buffer b = Build(spec);
  const std::uint64_t directory_region = testing::PayloadBase(b);
  ASSERT_EQ(directory_region, 64u + kN * 128u);
  alloc::Stats s;
  {
    const alloc::Scope scope;
    StreamValidator v;
    ASSERT_EQ(v.Feed(b), StreamStatus::kComplete);
    ASSERT_EQ(v.Finish(), StreamStatus::kComplete);
    s = scope.Read();
  }
  EXPECT_LE(s.bytes, 64 + directory_region + 1024);
}

// RangeValidator: a hostile 1 GiB gap is read through one reused buffer of
// max_range bytes; the peak heap stays near 1 MiB.
TEST(Memory, RangeValidatorReadsAHugeGapThroughOneBuffer) {
  Buffer head = Build(BlockSpec{{TensorSpec{}}, std::nullopt, std::nullopt});
  const std::uint64_t payload = 64 + (std::uint64_t{1} << 30);
  Put(head, 16, payload, 8);
  const std::uint64_t size = testing::PayloadBase(head) + payload;
  const auto reader = [&](std::uint64_t offset, std::span<std::uint8_t> out, std::string*) {
    for (std::size_t i = 0; i < out.size(); ++i) {
      out[i] = offset + i < head.size() ? head[offset + i] : 0;
    }
    return true;
  };
  std::size_t peak = 0;
  {
    const alloc::Scope scope;
    const RangeValidator v = ValidateRanges(size, reader);
    EXPECT_EQ(v.status(), RangeStatus::kComplete);
    EXPECT_EQ(v.bytes_read(), size - 8);
    peak = scope.Read().peak_extra;
  }
  EXPECT_LE(peak, kDefaultMaxRange + 16384);
}

// A file whose size matches a header claiming four billion tensors (512
// GiB of descriptors): the directory region is kept only as its bytes
// arrive, one request ahead. The reader gives up after 8 MiB.
TEST(Memory, RangeValidatorKeepsOnlyWhatWasRead) {
  Buffer head = Build(BlockSpec{});
  Put(head, 8, 0xFFFFFFFFu, 4);                       // tensor_count
  Put(head, 24, std::uint64_t{0xFFFFFFFF} * 128, 8);  // directory_bytes (H6 holds)
  const std::uint64_t size = (std::uint64_t{0xFFFFFFFF} * 128 + 64 + 63) / 64 * 64;
  std::uint64_t served = 0;
  const auto reader = [&](std::uint64_t offset, std::span<std::uint8_t> out, std::string* why) {
    if (served >= (std::uint64_t{8} << 20)) {
      *why = "gave up";
      return false;
    }
    served += out.size();
    for (std::size_t i = 0; i < out.size(); ++i) {
      out[i] = offset + i < head.size() ? head[offset + i] : 0;
    }
    return true;
  };
  std::size_t peak = 0;
  {
    const alloc::Scope scope;
    const RangeValidator v = ValidateRanges(size, reader);
    EXPECT_EQ(v.status(), RangeStatus::kReadFailed);
    EXPECT_EQ(v.read_error(), "gave up");
    peak = scope.Read().peak_extra;
  }
  EXPECT_LE(peak, 4 * (std::size_t{8} << 20) + 4096);
}

}  // namespace
}  // namespace kiln
