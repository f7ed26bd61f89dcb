// The block map (kiln/block_map.h): regions of valid and rejected blocks,
// the deciding byte and its field, escaped labels.
#include "kiln/block_map.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "kiln/directory.h"
#include "map/blocks.h"
#include "support/block_builder.h"
#include "support/golden.h"

namespace kiln::testing {
namespace {

using map::BlockMap;
using map::Region;
using map::RegionKind;

// Regions follow each other from byte 0 with no hole and no overlap.
void ExpectContiguous(const BlockMap& m) {
  ASSERT_FALSE(m.regions.empty());
  EXPECT_EQ(m.regions.front().begin, 0u);
  for (std::size_t i = 1; i < m.regions.size(); ++i) {
    EXPECT_EQ(m.regions[i].begin, m.regions[i - 1].end) << "region " << i;
    EXPECT_LT(m.regions[i].begin, m.regions[i].end) << "region " << i;
  }
}

std::vector<RegionKind> Kinds(const BlockMap& m) {
  std::vector<RegionKind> k;
  for (const Region& r : m.regions) k.push_back(r.kind);
  return k;
}

TEST(BlockMap, ValidBlockHasEveryRegionInOrder) {
  BlockSpec spec;
  spec.tensors.push_back(Vec(2, "a"));
  spec.tensors.push_back(Vec(3, "b", 128));
  const Buffer b = Build(spec);
  const BlockMap m = MapOf(b);
  EXPECT_FALSE(m.mark);
  ExpectContiguous(m);
  EXPECT_EQ(Kinds(m), (std::vector<RegionKind>{RegionKind::kHeader, RegionKind::kDescriptor,
                                               RegionKind::kDescriptor, RegionKind::kNameHeap,
                                               RegionKind::kPadding, RegionKind::kPayload,
                                               RegionKind::kGap, RegionKind::kPayload}));
  EXPECT_EQ(m.regions[1].label, "descriptor 0 \"a\"");
  EXPECT_EQ(m.regions[5].label, "payload of tensor 0 \"a\"");
  EXPECT_EQ(m.regions[5].tensor, 0u);
  EXPECT_EQ(m.regions[7].begin, PayloadBase(b) + 128);
  EXPECT_EQ(m.regions.back().end, b.size());
}

TEST(BlockMap, NamesAreEscapedAsValidateEscapesThem) {
  BlockSpec spec;
  spec.tensors.push_back(Vec(2, "<script>\xE2\x80\xAEgpj.exe\x1b"));
  const BlockMap m = MapOf(Build(spec));
  ASSERT_GE(m.regions.size(), 2u);
  EXPECT_EQ(m.regions[1].label, "descriptor 0 \"<script>\\u{202e}gpj.exe\\x1b\"");
  for (const Region& r : m.regions) {
    EXPECT_EQ(r.label.find("\xE2\x80\xAE"), std::string::npos);
    EXPECT_EQ(r.label.find('\x1b'), std::string::npos);
  }
}

struct RejectedCase {
  std::string name;
  Buffer bytes;
  std::string rule;
  std::string field;  // the mark's field
  RegionKind kind_at_mark;
};

std::vector<RejectedCase> RejectedCases() {
  std::vector<RejectedCase> cases;
  BlockSpec spec;
  spec.tensors.push_back(Vec(2, "w"));
  spec.tensors.push_back(Vec(2, "x"));
  const Buffer good = Build(spec);
  {
    Buffer b = good;
    b[0] = 'X';
    cases.push_back({"H1_magic", b, "H1", "header, magic (bytes 0..3)", RegionKind::kHeader});
  }
  {
    Buffer b = good;
    Put(b, Desc(1, kLength), 12, 8);
    cases.push_back({"D7_byte_length_of_tensor_1", b, "D7",
                     "descriptor 1, byte_length (bytes 40..47)", RegionKind::kDescriptor});
  }
  {
    Buffer b = good;
    Put(b, Desc(0, kShape + 8), 5, 8);
    cases.push_back({"D4_shape_slot", b, "D4", "descriptor 0, shape[1] (bytes 56..63)",
                     RegionKind::kDescriptor});
  }
  {
    Buffer b = good;
    b.resize(b.size() - 3);
    cases.push_back({"H8_truncated", b, "H8",
                     "payload region, byte " + std::to_string(b.size() - PayloadBase(good)) +
                         "; the file ends at byte " + std::to_string(b.size()),
                     RegionKind::kMissing});
  }
  {
    Buffer b = good;
    b.push_back(0);
    cases.push_back({"H8_trailing", b, "H8",
                     "byte " + std::to_string(good.size()) + ", after block_length " +
                         std::to_string(good.size()),
                     RegionKind::kTrailing});
  }
  {
    // A stray continuation byte as the first byte of the name heap (N4):
    // the byte right after the last descriptor is the heap's, not a
    // descriptor field.
    Buffer b = good;
    b[64 + 2 * 128] = 0x80;
    cases.push_back(
        {"N4_first_name_heap_byte", b, "N4", "name heap, byte 0", RegionKind::kNameHeap});
  }
  {
    Buffer b = good;
    b[PayloadBase(good) + 20] = 1;  // between tensor 0 (8 bytes) and tensor 1 at 64
    cases.push_back(
        {"P2_gap_byte", b, "P2", "payload region, byte 20 (gap (no tensor))", RegionKind::kGap});
  }
  return cases;
}

void PrintTo(const RejectedCase& c, std::ostream* os) { *os << c.name; }

class Rejected : public ::testing::TestWithParam<RejectedCase> {};

TEST_P(Rejected, MarksTheDecidingByteAndItsField) {
  const RejectedCase& c = GetParam();
  const Result<Directory> r = Parse(c.bytes);
  ASSERT_FALSE(r.ok());
  ASSERT_EQ(RuleName(r.error().rule), c.rule);
  const BlockMap m = map::Describe(c.bytes, c.bytes.size(), &r.error());
  ExpectContiguous(m);
  ASSERT_TRUE(m.mark);
  EXPECT_EQ(m.mark->offset, r.error().offset);
  EXPECT_EQ(m.mark->tensor, r.error().tensor);
  EXPECT_EQ(m.mark->field, c.field);
  EXPECT_EQ(m.mark->verdict, r.error().ToString());
  bool found = false;
  for (const Region& reg : m.regions) {
    if (reg.begin <= m.mark->offset && m.mark->offset < reg.end) {
      EXPECT_EQ(reg.kind, c.kind_at_mark) << reg.label;
      found = true;
    }
  }
  // A truncation's byte is where the missing bytes start: a missing region.
  EXPECT_TRUE(found);
}

INSTANTIATE_TEST_SUITE_P(Cases, Rejected, ::testing::ValuesIn(RejectedCases()),
                         [](const auto& info) { return info.param.name; });

TEST(BlockMap, ManyTensorsAreSummarised) {
  BlockSpec spec;
  for (std::uint32_t i = 0; i < map::kMaxItemRegions + 5; ++i) {
    spec.tensors.push_back(Vec(0, NameT(i)));
  }
  const Buffer b = Build(spec);
  const BlockMap m = MapOf(b);
  ExpectContiguous(m);
  EXPECT_LT(m.regions.size(), std::size_t{map::kMaxItemRegions} + 10);
}

// Blocks of kMaxItemRegions - 1, kMaxItemRegions and kMaxItemRegions + 1
// tensors of 4 payload bytes each: up to kMaxItemRegions tensors, every
// descriptor and every payload has a region of its own; past it, the extra
// descriptors share one region and the payloads are one region.
TEST(BlockMap, EachTensorHasItsRegionsUpToTheLimit) {
  for (const std::uint32_t n :
       {map::kMaxItemRegions - 1, map::kMaxItemRegions, map::kMaxItemRegions + 1}) {
    BlockSpec spec;
    for (std::uint32_t i = 0; i < n; ++i) spec.tensors.push_back(Vec(1, NameT(i)));
    const Buffer b = Build(spec);
    ASSERT_TRUE(Parse(b).ok()) << n;
    const BlockMap m = MapOf(b);
    ExpectContiguous(m);
    std::vector<const Region*> descriptors, payloads;
    for (const Region& r : m.regions) {
      if (r.kind == RegionKind::kDescriptor) descriptors.push_back(&r);
      if (r.kind == RegionKind::kPayload) payloads.push_back(&r);
    }
    const std::uint32_t each = std::min(n, map::kMaxItemRegions);
    if (n <= map::kMaxItemRegions) {
      ASSERT_EQ(descriptors.size(), n) << n;
      ASSERT_EQ(payloads.size(), n) << n;
      for (std::uint32_t i = 0; i < n; ++i) {
        const std::string name = "\"t" + std::to_string(i) + "\"";
        EXPECT_EQ(descriptors[i]->label, "descriptor " + std::to_string(i) + " " + name);
        EXPECT_EQ(payloads[i]->label, "payload of tensor " + std::to_string(i) + " " + name);
        EXPECT_EQ(payloads[i]->tensor, i);
        EXPECT_EQ(payloads[i]->begin, PayloadBase(b) + 64 * std::uint64_t{i}) << i;
        EXPECT_EQ(payloads[i]->end, payloads[i]->begin + 4) << i;
      }
    } else {
      ASSERT_EQ(descriptors.size(), each + 1u) << n;
      EXPECT_EQ(descriptors.back()->label,
                "descriptors " + std::to_string(each) + ".." + std::to_string(n - 1));
      EXPECT_EQ(descriptors.back()->begin, 64 + 128 * std::uint64_t{each});
      EXPECT_EQ(descriptors.back()->end, 64 + 128 * std::uint64_t{n});
      ASSERT_EQ(payloads.size(), 1u) << n;
      EXPECT_EQ(payloads[0]->label, "payload region (" +
                                        std::to_string(64 * std::uint64_t{n - 1} + 4) + " bytes, " +
                                        std::to_string(n) + " tensors)");
      EXPECT_EQ(payloads[0]->begin, PayloadBase(b));
      EXPECT_EQ(payloads[0]->end, b.size());
    }
  }
}

// The field at each boundary of the directory: the last descriptor byte,
// the first and last name-heap bytes, the first padding byte, the first
// payload byte.
TEST(BlockMap, FieldAtTheDirectoryBoundaries) {
  BlockSpec spec;
  spec.tensors.push_back(Vec(2, "w"));
  spec.tensors.push_back(Vec(2, "xyz"));
  const Buffer b = Build(spec);
  const BlockMap m = MapOf(b);
  ASSERT_TRUE(m.header_known);
  const std::uint64_t table_end = 64 + 2 * 128;
  const std::uint64_t dir_end = 64 + m.header.directory_bytes;
  ASSERT_EQ(dir_end, table_end + 4);  // the heap is "wxyz"
  ASSERT_LT(dir_end, m.header.payload_base);
  EXPECT_EQ(map::FieldAt(m, table_end - 1), "descriptor 1, reserved (bytes 112..127)");
  EXPECT_EQ(map::FieldAt(m, table_end), "name heap, byte 0");
  EXPECT_EQ(map::FieldAt(m, dir_end - 1), "name heap, byte 3");
  EXPECT_EQ(map::FieldAt(m, dir_end), "directory padding, byte 0");
  EXPECT_EQ(map::FieldAt(m, m.header.payload_base),
            "payload region, byte 0 (payload of tensor 0 \"w\")");
}

TEST(BlockMap, AHeaderClaimingHugeSizesCostsNothing) {
  BlockSpec spec;
  spec.tensors.push_back(Vec(2, ""));
  Buffer b = Build(spec);
  Put(b, 16, 0xFFFFFFFFFFFF0000ull, 8);  // payload_bytes near 2^64
  const Result<Directory> r = Parse(b);
  ASSERT_FALSE(r.ok());
  const BlockMap m = map::Describe(b, b.size(), &r.error());
  ExpectContiguous(m);
  EXPECT_LE(m.regions.size(), 8u);
  EXPECT_EQ(m.regions.back().kind, RegionKind::kMissing);
}

// Every golden case: the map covers the file from byte 0, and a rejection
// marks the manifest's offset and tensor.
class Golden : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(Golden, MapMarksTheManifestOffset) {
  const GoldenCase& c = GetParam();
  const Buffer b = ReadFile(c.path);
  const BlockMap m = MapOf(b);
  if (!b.empty()) ExpectContiguous(m);
  if (c.valid()) {
    EXPECT_FALSE(m.mark);
    return;
  }
  ASSERT_TRUE(m.mark);
  EXPECT_EQ(m.mark->offset, c.offset);
  EXPECT_EQ(m.mark->tensor, c.tensor);
  EXPECT_FALSE(m.mark->field.empty());
}

INSTANTIATE_TEST_SUITE_P(All, Golden, ::testing::ValuesIn(LoadManifest()),
                         [](const auto& info) { return TestName(info.param); });

}  // namespace
}  // namespace kiln::testing
