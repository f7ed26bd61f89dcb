// The block map at its edges: names read from a rejected block's bytes (the
// last name ending at the heap's end or at the end of the bytes given, a
// name slice outside the heap that a C caller calls valid), a payload
// region that starts or ends with a gap, a tensor running past the payload
// region, a prefix that ends where the descriptor table does, one-byte
// fields and counts of one, places past the file and in an unknown layout,
// and the map of a random-access verdict.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kiln/block_map.h"
#include "kiln/directory.h"
#include "kiln/random_access.h"
#include "map/blocks.h"
#include "support/block_builder.h"

namespace kiln::testing {
namespace {

using map::BlockMap;
using map::Region;
using map::RegionKind;

void ExpectContiguousTo(const BlockMap& m, std::uint64_t end) {
  ASSERT_FALSE(m.regions.empty());
  EXPECT_EQ(m.regions.front().begin, 0u);
  for (std::size_t i = 1; i < m.regions.size(); ++i) {
    EXPECT_EQ(m.regions[i].begin, m.regions[i - 1].end) << "region " << i;
    EXPECT_LT(m.regions[i].begin, m.regions[i].end) << "region " << i;
  }
  EXPECT_EQ(m.regions.back().end, end);
}

std::vector<std::string> DescriptorLabels(const BlockMap& m) {
  std::vector<std::string> out;
  for (const Region& r : m.regions) {
    if (r.kind == RegionKind::kDescriptor) out.push_back(r.label);
  }
  return out;
}

const Region* FindKind(const BlockMap& m, RegionKind kind) {
  for (const Region& r : m.regions) {
    if (r.kind == kind) return &r;
  }
  return nullptr;
}

// Two named tensors, "ab" and "cd": the heap is "abcd", the last name ends
// exactly at the heap's end.
Buffer TwoNamed() {
  BlockSpec spec;
  spec.tensors.push_back(Vec(2, "ab"));
  spec.tensors.push_back(Vec(2, "cd"));
  return Build(spec);
}

// The end of the name heap: 64 + directory_bytes (the header's u64 at 24).
std::uint64_t HeapEnd(const Buffer& b) {
  std::uint64_t directory_bytes = 0;
  for (int k = 0; k < 8; ++k) directory_bytes |= std::uint64_t{b[24 + k]} << (8 * k);
  return 64 + directory_bytes;
}

// A block rejected at P2 (a nonzero byte in a gap) held every descriptor
// and name rule: its map names each tensor from the bytes, the last one too.
TEST(BlockMapEdges, ARejectedBlockNamesEveryTensorFromItsBytes) {
  BlockSpec spec;
  spec.tensors.push_back(Vec(2, "ab"));
  spec.tensors.push_back(Vec(2, "cd", 128));  // a gap at 8..127 of the payload
  Buffer b = Build(spec);
  b[PayloadBase(b) + 100] = 1;
  const Result<Directory> r = Parse(b);
  ASSERT_FALSE(r.ok());
  ASSERT_EQ(RuleName(r.error().rule), "P2");
  const BlockMap m = map::Describe(b, b.size(), &r.error());
  EXPECT_EQ(DescriptorLabels(m),
            (std::vector<std::string>{"descriptor 0 \"ab\"", "descriptor 1 \"cd\""}));
}

// A caller of the C ABI may hand over only the directory region of a valid
// block (no verdict): the last name ends where the bytes do, and is named.
TEST(BlockMapEdges, APrefixEndingWithTheLastNameNamesIt) {
  const Buffer whole = TwoNamed();
  ASSERT_TRUE(Parse(whole).ok());
  const Buffer prefix(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(HeapEnd(whole)));
  const BlockMap m = map::Describe(prefix, whole.size(), nullptr);
  EXPECT_EQ(DescriptorLabels(m),
            (std::vector<std::string>{"descriptor 0 \"ab\"", "descriptor 1 \"cd\""}));
}

// TwoNamed's map with tensor 1's name not shown.
void ExpectOnlyTheFirstNamed(const BlockMap& m) {
  EXPECT_EQ(DescriptorLabels(m), (std::vector<std::string>{"descriptor 0 \"ab\"", "descriptor 1"}));
}

// A block a C caller calls valid that is not: tensor 1's name slice runs
// past the heap (N3 broken) into the padding, which holds printable bytes.
// The map must not show those bytes as its name.
TEST(BlockMapEdges, ANameSliceOutsideTheHeapIsNotShown) {
  Buffer b = TwoNamed();
  const std::uint64_t heap_end = HeapEnd(b);
  ASSERT_LT(heap_end + 2, PayloadBase(b));  // padding after the heap
  b[heap_end] = 'Z';
  b[heap_end + 1] = 'Z';
  Put(b, Desc(1, kNameOff), 3, 2);  // "d" plus one byte past the heap
  ExpectOnlyTheFirstNamed(map::Describe(b, b.size(), nullptr));
}

// The same slice past the end of the bytes given: not read, not shown.
TEST(BlockMapEdges, ANameSlicePastTheBytesGivenIsNotRead) {
  const Buffer whole = TwoNamed();
  Buffer prefix(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(HeapEnd(whole)) - 1);
  ExpectOnlyTheFirstNamed(map::Describe(prefix, whole.size(), nullptr));
}

// Counts of one in labels: "1 byte", "1 tensor".
TEST(BlockMapEdges, CountsOfOneAreSingular) {
  BlockSpec spec;
  spec.tensors.push_back(Vec(1, "q"));
  const BlockMap m = map::Describe(Parse(Build(spec)).value(), Build(spec).size());
  const Region* heap = FindKind(m, RegionKind::kNameHeap);
  ASSERT_NE(heap, nullptr);
  EXPECT_EQ(heap->label, "name heap (1 byte)");
  BlockSpec two;
  two.tensors.push_back(Vec(1, "q"));
  two.tensors.push_back(Vec(1, "r"));
  const Buffer b2 = Build(two);
  const BlockMap m2 = map::Describe(Parse(b2).value(), b2.size());
  EXPECT_EQ(FindKind(m2, RegionKind::kNameHeap)->label, "name heap (2 bytes)");
}

// A payload region that starts with a gap (the only tensor at 64) and ends
// with one (payload_bytes past the tensor's end): both gaps drawn, from
// payload_base to block_length with no hole.
TEST(BlockMapEdges, GapsAtBothEndsOfThePayloadAreDrawn) {
  BlockSpec spec;
  spec.tensors.push_back(Vec(2, "", 64));
  spec.payload_bytes = 192;
  const Buffer b = Build(spec);
  const Result<Directory> r = Parse(b);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  const BlockMap m = map::Describe(r.value(), b.size());
  ExpectContiguousTo(m, b.size());
  const std::uint64_t base = PayloadBase(b);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> gaps, payloads;
  for (const Region& reg : m.regions) {
    if (reg.kind == RegionKind::kGap) gaps.emplace_back(reg.begin, reg.end);
    if (reg.kind == RegionKind::kPayload) payloads.emplace_back(reg.begin, reg.end);
  }
  EXPECT_EQ(gaps, (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{base, base + 64},
                                                                        {base + 72, base + 192}}));
  EXPECT_EQ(payloads,
            (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{base + 64, base + 72}}));
}

// A block a C caller calls valid whose last tensor runs past the payload
// region (D9 broken): the map still ends at the file's end, each byte in
// one region, and no payload region reaches past block_length.
TEST(BlockMapEdges, ATensorPastThePayloadRegionIsNotDrawnPastIt) {
  BlockSpec spec;
  spec.tensors.push_back(Vec(2, ""));
  spec.tensors.push_back(Vec(2, "", 64));
  Buffer b = Build(spec);
  Put(b, Desc(1, kOffset), 128, 8);  // past payload_bytes (72)
  ASSERT_FALSE(Parse(b).ok());
  const BlockMap m = map::Describe(b, b.size(), nullptr);
  ExpectContiguousTo(m, b.size());
  for (const Region& reg : m.regions) EXPECT_LE(reg.end, b.size()) << reg.label;
}

// The only tensor past the payload region (a C caller's invalid block): the
// walk's gap up to it and its range are both outside the region and
// dropped; the payload region is one gap from payload_base, no hole.
TEST(BlockMapEdges, TheOnlyTensorPastThePayloadRegionLeavesOneGap) {
  BlockSpec spec;
  spec.tensors.push_back(Vec(2, ""));
  Buffer b = Build(spec);
  Put(b, Desc(0, kOffset), 128, 8);
  ASSERT_FALSE(Parse(b).ok());
  const BlockMap m = map::Describe(b, b.size(), nullptr);
  ExpectContiguousTo(m, b.size());
  const Region* gap = FindKind(m, RegionKind::kGap);
  ASSERT_NE(gap, nullptr);
  EXPECT_EQ(gap->begin, PayloadBase(b));
}

// An unnamed block whose bytes end where its descriptor table ends (no heap)
// still has its payloads drawn per tensor.
TEST(BlockMapEdges, APrefixEndingAtTheDescriptorTableDrawsEachPayload) {
  BlockSpec spec;
  spec.tensors.push_back(Vec(2, ""));
  spec.tensors.push_back(Vec(2, ""));
  const Buffer whole = Build(spec);
  ASSERT_TRUE(Parse(whole).ok());
  const std::size_t table_end = 64 + 128 * 2;
  ASSERT_EQ(HeapEnd(whole), table_end);  // no heap
  const Buffer prefix(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(table_end));
  const BlockMap m = map::Describe(prefix, whole.size(), nullptr);
  int payloads = 0;
  for (const Region& reg : m.regions) payloads += reg.kind == RegionKind::kPayload ? 1 : 0;
  EXPECT_EQ(payloads, 2);
}

// A mark in a one-byte field says "byte N", not "bytes N..N".
TEST(BlockMapEdges, AOneByteFieldIsOneByte) {
  BlockSpec spec;
  spec.tensors.push_back(Vec(2, "w"));
  Buffer b = Build(spec);
  b[4] = 9;  // the major version
  const Result<Directory> r = Parse(b);
  ASSERT_FALSE(r.ok());
  const BlockMap m = map::Describe(b, b.size(), &r.error());
  ASSERT_TRUE(m.mark);
  EXPECT_EQ(m.mark->offset, 4u);
  EXPECT_NE(m.mark->field.find("(byte 4)"), std::string::npos) << m.mark->field;
  EXPECT_EQ(m.mark->field.find(".."), std::string::npos) << m.mark->field;
}

// Where a byte lies when the layout is unknown (the header broke a rule):
// that one byte. Past the file's end after block_length: up to that byte.
TEST(BlockMapEdges, PlacesInAnUnknownLayoutAndPastTheFile) {
  Buffer b = TwoNamed();
  b[0] = 'X';
  const Result<Directory> r = Parse(b);
  ASSERT_FALSE(r.ok());
  const BlockMap unknown = map::Describe(b, b.size(), &r.error());
  ASSERT_FALSE(unknown.header_known);
  const map::Place p = map::Locate(unknown, 100);
  EXPECT_EQ(p.kind, RegionKind::kUnknown);
  EXPECT_EQ(p.begin, 100u);
  EXPECT_EQ(p.end, 101u);
  EXPECT_EQ(map::FieldAt(unknown, 100), "byte 100 (after the header; layout unknown)");

  const Buffer good = TwoNamed();
  const BlockMap known = map::Describe(Parse(good).value(), good.size());
  const std::uint64_t past = good.size() + 10;
  const map::Place q = map::Locate(known, past);
  EXPECT_EQ(q.kind, RegionKind::kTrailing);
  EXPECT_EQ(q.begin, good.size());
  EXPECT_EQ(q.end, past + 1);
}

// The map of a random-access verdict is the map of the same bytes read
// whole: for a valid block (from its directory) and a rejected one.
TEST(BlockMapEdges, ARandomAccessVerdictMapsAsTheWholeFileDoes) {
  Buffer bad = TwoNamed();
  Put(bad, Desc(1, kLength), 12, 8);
  for (const Buffer& b : {TwoNamed(), bad}) {
    RangeValidator v(b.size());
    for (std::optional<ByteRange> want = v.NextRange(); want; want = v.NextRange()) {
      const auto first = static_cast<std::ptrdiff_t>(want->offset);
      v.Provide(std::span<const std::uint8_t>(b.data() + first, want->length));
    }
    const Result<Directory> whole = Parse(b);
    const BlockMap want = whole.ok() ? map::Describe(whole.value(), b.size())
                                     : map::Describe(b, b.size(), &whole.error());
    const BlockMap got = map::Describe(v);
    ASSERT_EQ(got.regions.size(), want.regions.size());
    for (std::size_t i = 0; i < got.regions.size(); ++i) {
      EXPECT_EQ(got.regions[i].kind, want.regions[i].kind) << i;
      EXPECT_EQ(got.regions[i].begin, want.regions[i].begin) << i;
      EXPECT_EQ(got.regions[i].end, want.regions[i].end) << i;
      EXPECT_EQ(got.regions[i].label, want.regions[i].label) << i;
    }
    EXPECT_EQ(got.mark.has_value(), want.mark.has_value());
    if (got.mark && want.mark) {
      EXPECT_EQ(got.mark->field, want.mark->field);
    }
  }
}

}  // namespace
}  // namespace kiln::testing
