// The block map marks the verdict's byte, by construction: for every golden
// case and 10,000 mutants of the valid ones (a fixed seed; bytes of the
// header, the descriptors, the name heap, the padding and the payload region
// changed, files cut short and extended), the mark is the Error's offset and
// tensor, and the field it names is the one that holds that offset. The
// expected field is worked out here from the layout as docs/spec.md states
// it (sections 2.1 to 2.3), written out below, not from core's field table.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/block_map.h"
#include "kiln/block_map_svg.h"
#include "kiln/directory.h"
#include "support/golden.h"

namespace kiln::testing {
namespace {

using map::BlockMap;
using map::Place;
using map::RegionKind;

struct SpecField {
  std::uint64_t offset;
  std::uint64_t size;
  std::string_view name;
};

// docs/spec.md, section 2.2 (the table, row by row).
constexpr std::array<SpecField, 9> kSpecHeader = {{
    {0, 4, "magic"},
    {4, 1, "version"},
    {5, 1, "flags"},
    {6, 2, "reserved"},
    {8, 4, "tensor_count"},
    {12, 4, "name_bytes"},
    {16, 8, "payload_bytes"},
    {24, 8, "directory_bytes"},
    {32, 32, "reserved"},
}};

// docs/spec.md, section 2.3.
constexpr std::array<SpecField, 17> kSpecDescriptor = {{
    {0, 2, "dtype"},
    {2, 1, "rank"},
    {3, 1, "reserved"},
    {4, 2, "name_off"},
    {6, 2, "name_len"},
    {8, 2, "layout_off"},
    {10, 2, "layout_len"},
    {12, 4, "block_size"},
    {16, 2, "quant_scheme"},
    {18, 2, "quant_axis"},
    {20, 4, "group_size"},
    {24, 4, "scale_index"},
    {28, 4, "outer_index"},
    {32, 8, "byte_offset"},
    {40, 8, "byte_length"},
    {48, 64, "shape"},
    {112, 16, "reserved"},
}};

std::uint64_t Le(const std::vector<std::uint8_t>& b, std::size_t at, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v |= std::uint64_t{b[at + i]} << (8 * i);
  return v;
}

// The spec's header arithmetic (section 2.1) on the header's bytes.
struct SpecLayout {
  std::uint64_t table_end;
  std::uint64_t dir_end;
  std::uint64_t payload_base;
  std::uint64_t block_length;
};

SpecLayout LayoutOf(const std::vector<std::uint8_t>& b) {
  const std::uint64_t count = Le(b, 8, 4);
  const std::uint64_t directory = Le(b, 24, 8);
  const std::uint64_t payload = Le(b, 16, 8);
  const std::uint64_t base = (64 + directory + 63) & ~std::uint64_t{63};
  return {64 + 128 * count, 64 + directory, base, base + payload};
}

bool HeaderRule(Rule r) {
  return r == Rule::H1 || r == Rule::H2 || r == Rule::H3 || r == Rule::H4 || r == Rule::H5 ||
         r == Rule::H6 || r == Rule::H7;
}

void ExpectSpecField(const SpecField& f, std::uint64_t record, std::uint64_t offset,
                     const Place& p) {
  std::uint64_t begin = record + f.offset;
  std::uint64_t size = f.size;
  if (f.name == "shape") {  // eight u64 slots
    const std::uint64_t slot = (offset - begin) / 8;
    EXPECT_EQ(p.slot, slot);
    begin += 8 * slot;
    size = 8;
  } else {
    EXPECT_FALSE(p.slot);
  }
  EXPECT_EQ(p.field, f.name);
  EXPECT_EQ(p.begin, begin);
  EXPECT_EQ(p.end, begin + size);
}

template <std::size_t N>
const SpecField& SpecFieldAt(const std::array<SpecField, N>& table, std::uint64_t within) {
  for (const SpecField& f : table) {
    if (f.offset <= within && within < f.offset + f.size) return f;
  }
  ADD_FAILURE() << "no field of the spec holds byte " << within;
  return table[0];
}

// Tally of what the marks landed on, so the test shows it reached each part.
struct Seen {
  std::map<RegionKind, int> kinds;
  std::set<Rule> rules;
  int rejected = 0;
  int valid = 0;
};

// Parses `b`, maps it from the verdict, and checks the mark.
void CheckMark(const std::vector<std::uint8_t>& b, Seen& seen, bool draw) {
  const Result<Directory> r = Parse(b);
  if (r.ok()) {
    ++seen.valid;
    const BlockMap m = map::Describe(r.value(), b.size());
    EXPECT_FALSE(m.mark);
    return;
  }
  const Error& e = r.error();
  ++seen.rejected;
  seen.rules.insert(e.rule);
  const BlockMap m = map::Describe(b, b.size(), &e);
  ASSERT_TRUE(m.mark) << e.ToString();
  const map::Mark& mark = *m.mark;
  SCOPED_TRACE(e.ToString() + " -> " + mark.field);
  EXPECT_EQ(mark.offset, e.offset);
  EXPECT_EQ(mark.tensor, e.tensor);
  EXPECT_EQ(mark.verdict, e.ToString());
  const Place& p = mark.place;
  ++seen.kinds[p.kind];
  const std::uint64_t off = e.offset;
  if (off < 64) {
    EXPECT_EQ(p.kind, RegionKind::kHeader);
    ExpectSpecField(SpecFieldAt(kSpecHeader, off), 0, off, p);
  } else if (HeaderRule(e.rule)) {
    EXPECT_EQ(p.kind, RegionKind::kUnknown);
  } else {
    const SpecLayout l = LayoutOf(b);
    if (off < l.table_end) {
      const std::uint64_t i = (off - 64) / 128;
      EXPECT_EQ(p.kind, RegionKind::kDescriptor);
      EXPECT_EQ(p.record, i);
      ExpectSpecField(SpecFieldAt(kSpecDescriptor, (off - 64) % 128), 64 + 128 * i, off, p);
    } else if (off < l.dir_end) {
      EXPECT_EQ(p.kind, RegionKind::kNameHeap);
      EXPECT_EQ(p.begin, l.table_end);
      EXPECT_EQ(p.end, l.dir_end);
    } else if (off < l.payload_base) {
      EXPECT_EQ(p.kind, RegionKind::kPadding);
      EXPECT_EQ(p.begin, l.dir_end);
      EXPECT_EQ(p.end, l.payload_base);
    } else if (off < l.block_length) {
      // A payload byte: the drawn region holding it (a gap for P2).
      EXPECT_TRUE(p.kind == RegionKind::kPayload || p.kind == RegionKind::kGap);
      if (e.rule == Rule::P2) {
        EXPECT_EQ(p.kind, RegionKind::kGap);
      }
      EXPECT_LE(p.begin, off);
      EXPECT_LT(off, p.end);
      EXPECT_GE(p.begin, l.payload_base);
      EXPECT_LE(p.end, l.block_length);
    } else {
      EXPECT_EQ(p.kind, RegionKind::kTrailing);
      EXPECT_EQ(p.begin, l.block_length);
    }
  }
  // The field text is Locate's answer.
  EXPECT_EQ(mark.field, map::FieldAt(m, off));
  if (draw) {
    const std::string svg = map::Svg(m, "t");
    EXPECT_NE(svg.find("<g id=\"mark\" class=\"mark\" data-offset=\"" + std::to_string(off) + "\""),
              std::string::npos);
  }
}

TEST(VerdictMark, EveryGoldenCase) {
  Seen seen;
  for (const GoldenCase& c : LoadManifest()) {
    SCOPED_TRACE(c.name);
    const Buffer b = ReadFile(c.path);
    CheckMark(b, seen, true);
  }
  EXPECT_GT(seen.rejected, 100);
  EXPECT_GT(seen.valid, 5);
}

// A mutant of `b`: a byte of one part changed, a cut or an extension.
std::vector<std::uint8_t> Mutate(const std::vector<std::uint8_t>& b, std::mt19937_64& rng) {
  std::vector<std::uint8_t> out = b;
  const SpecLayout l = b.size() >= 64 ? LayoutOf(b) : SpecLayout{64, 64, 64, 64};
  const auto pick = [&](std::uint64_t from, std::uint64_t to) -> std::optional<std::size_t> {
    to = std::min<std::uint64_t>(to, out.size());
    if (from >= to) return std::nullopt;
    return static_cast<std::size_t>(from + rng() % (to - from));
  };
  // A nonzero mask: one bit, or any byte.
  const auto mask = [&] {
    return static_cast<std::uint8_t>(rng() % 2 ? 1u << (rng() % 8) : 1 + rng() % 255);
  };
  std::optional<std::size_t> at;
  switch (rng() % 7) {
    case 0:
      at = pick(0, 64);
      break;
    case 1:
      at = pick(64, l.table_end);
      break;
    case 2:
      at = pick(l.table_end, l.dir_end);
      break;
    case 3:
      at = pick(l.dir_end, l.block_length);  // padding and the payload region
      break;
    case 4:
      at = pick(l.payload_base, l.block_length);
      break;
    case 5:
      out.resize(static_cast<std::size_t>(rng() % (out.size() + 1)));
      return out;
    default: {
      const std::size_t more = 1 + static_cast<std::size_t>(rng() % 80);
      for (std::size_t i = 0; i < more; ++i)
        out.push_back(static_cast<std::uint8_t>(rng() % 3 ? 0 : rng()));
      return out;
    }
  }
  if (!at) at = pick(0, out.size());
  if (at) out[*at] ^= mask();
  return out;
}

TEST(VerdictMark, TenThousandMutants) {
  std::vector<Buffer> seeds;
  for (const GoldenCase& c : ValidCases()) {
    const Buffer b = ReadFile(c.path);
    if (b.size() >= 64) seeds.push_back(b);
  }
  ASSERT_FALSE(seeds.empty());
  std::mt19937_64 rng(0x6b696c6e);  // "kiln"
  Seen seen;
  for (int n = 0; n < 10000; ++n) {
    std::vector<std::uint8_t> b = seeds[static_cast<std::size_t>(rng() % seeds.size())];
    const int rounds = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < rounds; ++k) b = Mutate(b, rng);
    SCOPED_TRACE("mutant " + std::to_string(n));
    CheckMark(b, seen, n % 16 == 0);
    if (::testing::Test::HasFailure()) break;  // one mutant's failures are enough to read
  }
  EXPECT_GT(seen.rejected, 7000);
  // The marks landed in every part of a block.
  for (const RegionKind k : {RegionKind::kHeader, RegionKind::kDescriptor, RegionKind::kNameHeap,
                             RegionKind::kPadding, RegionKind::kGap, RegionKind::kTrailing}) {
    EXPECT_GT(seen.kinds[k], 10) << map::RegionKindName(k);
  }
  EXPECT_GT(seen.rules.size(), 20u);
}

}  // namespace
}  // namespace kiln::testing
