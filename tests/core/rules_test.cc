// One table row (at least) per rule: a block that is valid except for the
// one defect the row names, and the class, rule, byte offset and tensor the
// parser must report. The expected class is written out in each row rather
// than taken from the rule list, so a wrong class in rules.inc fails here.
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kiln/directory.h"
#include "support/block_builder.h"

namespace kiln {
namespace {

using testing::BlockSpec;
using testing::Buffer;
using testing::Build;
using testing::Desc;
using testing::Put;
using testing::TensorSpec;
namespace t = kiln::testing;

constexpr std::uint64_t kMax = ~std::uint64_t{0};
constexpr std::uint64_t kNone = kMax;  // "do not check"

struct Row {
  std::string name;  // test name: starts with the rule id
  std::string cls;   // expected class, written out
  std::string rule;  // expected rule id
  std::function<Buffer()> make;
  std::uint64_t offset = kNone;           // expected byte offset
  std::optional<std::uint32_t> tensor{};  // expected tensor index
  Limits limits{};
};

TensorSpec F32(std::string name = "") {
  TensorSpec s;
  s.name = std::move(name);
  return s;
}

BlockSpec One(TensorSpec s = F32()) { return BlockSpec{{std::move(s)}, {}, {}}; }

// A valid block with one tensor, then `patch` applied.
std::function<Buffer()> Patched(BlockSpec spec, std::function<void(Buffer&)> patch) {
  return [spec, patch] {
    Buffer b = Build(spec);
    patch(b);
    return b;
  };
}
std::function<Buffer()> Built(BlockSpec spec) {
  return [spec] { return Build(spec); };
}
std::function<Buffer()> Bytes(Buffer b) {
  return [b] { return b; };
}

TensorSpec Opaque(std::uint64_t count, std::uint32_t block, std::string layout = "ggml.q4_0") {
  TensorSpec s;
  s.dtype = 0x8000;
  s.shape = {count};
  s.block_size = block;
  s.layout = std::move(layout);
  return s;
}

// A scheme-1 quantised i8 [4, 3] along axis 1 with an f32 [3] scale.
BlockSpec PerAxis() {
  TensorSpec q;
  q.dtype = 3;
  q.rank = 2;
  q.shape = {4, 3};
  q.scheme = 1;
  q.axis = 1;
  q.scale_index = 1;
  TensorSpec s;
  s.shape = {3};
  return BlockSpec{{q, s}, {}, {}};
}

// A scheme-2 quantised u4 [8, 10] along axis 1, groups of 4, f16 scale
// [8, 3], and an f32 outer scalar.
BlockSpec Grouped() {
  TensorSpec q;
  q.dtype = 21;
  q.rank = 2;
  q.shape = {8, 10};
  q.scheme = 2;
  q.axis = 1;
  q.group_size = 4;
  q.scale_index = 1;
  q.outer_index = 2;
  TensorSpec s;
  s.dtype = 10;
  s.rank = 2;
  s.shape = {8, 3};
  TensorSpec o;
  o.rank = 0;
  o.shape = {};
  return BlockSpec{{q, s, o}, {}, {}};
}

std::vector<Row> Rows() {
  std::vector<Row> rows;
  auto add = [&](Row r) { rows.push_back(std::move(r)); };
  const Buffer f32 = Build(One());

  // Header.
  add({"H1_BadMagic", "FRAME", "H1", Patched(One(), [](Buffer& b) { b[3] = 'X'; }), 0});
  for (std::size_t at = 0; at < 4; ++at) {  // each byte of the magic on its own
    add({"H1_MagicByte" + std::to_string(at) + "Wrong", "FRAME", "H1",
         Patched(One(), [at](Buffer& b) { b[at] = static_cast<std::uint8_t>(b[at] ^ 0x20); }), 0});
  }
  add({"H1_EmptyBuffer", "FRAME", "H1", Bytes({}), 0});
  add({"H1_ThreeBytesOfMagic", "FRAME", "H1", Bytes({'K', 'L', 'N'}), 0});
  add({"H1_FrozenList", "FRAME", "H1", Bytes({0x02, 0, 0, 0, 0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0}), 0});
  add({"H2_Version1", "FRAME", "H2", Patched(One(), [](Buffer& b) { b[4] = 1; }), 4});
  add({"H2_Version3", "FRAME", "H2", Patched(One(), [](Buffer& b) { b[4] = 3; }), 4});
  add({"H2_NoVersionByte", "FRAME", "H2", Bytes({'K', 'L', 'N', 'T'}), 4});
  add({"H3_HeaderCut", "FRAME", "H3", Bytes(Buffer(f32.begin(), f32.begin() + 63)), 63});
  add({"H4_UnknownFlagBit", "FRAME", "H4", Patched(One(), [](Buffer& b) { b[5] = 0x06; }), 5});
  add({"H4_LittleEndianClear", "FRAME", "H4", Patched(One(), [](Buffer& b) { b[5] = 0x00; }), 5});
  add({"H5_Byte7", "FRAME", "H5", Patched(One(), [](Buffer& b) { b[7] = 1; }), 7});
  add({"H5_Byte63", "FRAME", "H5", Patched(One(), [](Buffer& b) { b[63] = 0x80; }), 63});
  add({"H6_DirectoryBytesOffByOne", "TYPE", "H6",
       Patched(One(), [](Buffer& b) { Put(b, 24, 129, 8); }), 24});
  add({"H6_CountWithoutBytes", "TYPE", "H6", Patched(One(), [](Buffer& b) { Put(b, 8, 2, 4); }),
       24});
  add({"H7_BlockLengthOverflows", "LIMIT", "H7",
       Patched(One(), [](Buffer& b) { Put(b, 16, kMax - 191, 8); }), 16});
  add({"H7_CallerTensorLimit", "LIMIT", "H7", Built(One()), 8, {}, Limits{0, kMax, kMax}});
  add({"H7_CallerNameLimit", "LIMIT", "H7", Built(One(F32("abc"))), 12, {}, Limits{kMax, 2, kMax}});
  add({"H7_CallerBlockLimit", "LIMIT", "H7", Built(One()), 16, {}, Limits{kMax, kMax, 199}});
  add({"H8_Truncated", "FRAME", "H8", Bytes(Buffer(f32.begin(), f32.end() - 1)), 199});
  add({"H8_TrailingByte", "FRAME", "H8", Patched(One(), [](Buffer& b) { b.push_back(0); }), 200});
  add({"H8_FourBillionTensors", "FRAME", "H8",
       Patched(BlockSpec{},
               [](Buffer& b) {
                 Put(b, 8, 4000000000u, 4);
                 Put(b, 24, 4000000000ull * 128, 8);
               }),
       64});
  add({"H9_NameFlagOnEmpty", "TYPE", "H9", Patched(BlockSpec{}, [](Buffer& b) { b[5] = 3; }), 5});
  add({"L1_NonzeroPad", "TYPE", "L1",
       Patched(One(F32("ab")), [](Buffer& b) { b[64 + 128 + 2 + 5] = 1; }), 64 + 128 + 7});

  // Descriptor fields.
  add({"D1_Dtype8", "TYPE", "D1",
       Patched(One(), [](Buffer& b) { Put(b, Desc(0, t::kDtype), 8, 2); }), Desc(0, 0), 0});
  add({"D1_Dtype0x8001", "TYPE", "D1",
       Patched(One(), [](Buffer& b) { Put(b, Desc(0, t::kDtype), 0x8001, 2); }), Desc(0, 0), 0});
  add({"D2_Rank9", "TYPE", "D2", Patched(One(), [](Buffer& b) { b[Desc(0, t::kRank)] = 9; }),
       Desc(0, 2), 0});
  add({"D3_Byte3", "FRAME", "D3", Patched(One(), [](Buffer& b) { b[Desc(0, 3)] = 1; }), Desc(0, 3),
       0});
  add({"D3_Byte127", "FRAME", "D3", Patched(One(), [](Buffer& b) { b[Desc(0, 127)] = 1; }),
       Desc(0, 127), 0});
  add({"D4_SlotPastRank", "TYPE", "D4",
       Patched(One(), [](Buffer& b) { Put(b, Desc(0, t::kShape + 8), 5, 8); }), Desc(0, 56), 0});
  add({"D4_ScalarWithShape", "TYPE", "D4",
       Patched(One(), [](Buffer& b) { b[Desc(0, t::kRank)] = 0; }), Desc(0, 48), 0});
  {
    TensorSpec s;
    s.dtype = 2;
    s.rank = 2;
    s.shape = {1ull << 32, 1ull << 32};  // exactly 2^64 elements
    s.byte_length = 0;
    add({"D5_ProductIs2Pow64", "LIMIT", "D5", Built(One(s)), Desc(0, 56), 0});
  }
  {
    TensorSpec s;
    s.dtype = 10;
    s.shape = {1ull << 63};  // f16: 2^64 bytes
    s.byte_length = 0;
    add({"D6_F16SizeIs2Pow64", "LIMIT", "D6", Built(One(s)), Desc(0, 48), 0});
  }
  add({"D7_LengthTooLong", "TYPE", "D7",
       Patched(One(), [](Buffer& b) { Put(b, Desc(0, t::kLength), 12, 8); }), Desc(0, 40), 0});
  {
    TensorSpec s = F32();
    s.byte_offset = kMax - 7;  // 2^64 - 8, + 8 bytes ends at exactly 2^64
    add({"D8_EndWraps", "LIMIT", "D8", Built(BlockSpec{{s}, {}, 8}), Desc(0, 40), 0});
  }
  add({"D9_RangePastPayload", "TYPE", "D9",
       Patched(One(), [](Buffer& b) { Put(b, Desc(0, t::kOffset), 64, 8); }), Desc(0, 40), 0});
  {
    TensorSpec s = F32();
    s.byte_offset = 32;
    add({"D10_Misaligned", "TYPE", "D10", Built(BlockSpec{{s}, {}, 64}), Desc(0, 32), 0});
  }
  add({"N1_NameWithFlagClear", "TYPE", "N1", Patched(One(F32("w")), [](Buffer& b) { b[5] = 0x02; }),
       Desc(0, 4), 0});
  add({"N2_EmptyNameWithFlagSet", "TYPE", "N2", Built(BlockSpec{{F32("w"), F32()}, {}, {}}),
       Desc(1, 4), 1});
  add({"O1_LayoutLenOnF32", "TYPE", "O1",
       Patched(One(), [](Buffer& b) { Put(b, Desc(0, t::kLayoutLen), 4, 2); }), Desc(0, 10), 0});
  add({"N1_NameLenWithFlagClear", "TYPE", "N1",
       Patched(One(), [](Buffer& b) { Put(b, Desc(0, t::kNameLen), 1, 2); }), Desc(0, 6), 0});
  add({"N2_NameLenZeroPointsAtNameLen", "TYPE", "N2",
       Patched(BlockSpec{{F32("w"), F32("v")}, {}, {}},
               [](Buffer& b) { Put(b, Desc(1, t::kNameLen), 0, 2); }),
       Desc(1, 6), 1});
  add({"O1_BlockSize1OnF32", "TYPE", "O1",
       Patched(One(), [](Buffer& b) { Put(b, Desc(0, t::kBlockSize), 1, 4); }), Desc(0, 12), 0});
  add({"O1_BlockSizeOnF32", "TYPE", "O1",
       Patched(One(), [](Buffer& b) { Put(b, Desc(0, t::kBlockSize), 4, 4); }), Desc(0, 12), 0});
  add({"O2_OpaqueBlockSize0", "TYPE", "O2",
       Patched(One(Opaque(64, 32)), [](Buffer& b) { Put(b, Desc(0, t::kBlockSize), 0, 4); }),
       Desc(0, 12), 0});
  add({"O2_OpaqueQuantised", "TYPE", "O2",
       Patched(One(Opaque(64, 32)), [](Buffer& b) { Put(b, Desc(0, t::kScheme), 1, 2); }),
       Desc(0, 16), 0});
  add({"O3_CountNotMultiple", "TYPE", "O3", Built(One(Opaque(65, 32))), Desc(0, 12), 0});
  add({"O3_LengthNotMultiple", "TYPE", "O3",
       Patched(One(Opaque(64, 32)), [](Buffer& b) { Put(b, Desc(0, t::kLength), 35, 8); }),
       Desc(0, 40), 0});
  add({"O3_ZeroBlocksNonzeroLength", "TYPE", "O3",
       Patched(BlockSpec{{Opaque(0, 32)}, {}, 64},
               [](Buffer& b) { Put(b, Desc(0, t::kLength), 18, 8); }),
       Desc(0, 40), 0});
  add({"Q1_Scheme3", "TYPE", "Q1",
       Patched(One(), [](Buffer& b) { Put(b, Desc(0, t::kScheme), 3, 2); }), Desc(0, 16), 0});
  add({"Q2_Scheme0WithAxis", "TYPE", "Q2",
       Patched(One(), [](Buffer& b) { Put(b, Desc(0, t::kAxis), 0, 2); }), Desc(0, 18), 0});
  add({"Q2_Scheme0WithOuter", "TYPE", "Q2",
       Patched(One(), [](Buffer& b) { Put(b, Desc(0, t::kOuter), 0, 4); }), Desc(0, 28), 0});
  add({"Q3_AxisNotBelowRank", "TYPE", "Q3",
       Patched(PerAxis(), [](Buffer& b) { Put(b, Desc(0, t::kAxis), 2, 2); }), Desc(0, 18), 0});
  add({"Q4_Scheme1WithGroup", "TYPE", "Q4",
       Patched(PerAxis(), [](Buffer& b) { Put(b, Desc(0, t::kGroup), 2, 4); }), Desc(0, 20), 0});
  add({"Q4_Scheme2WithoutGroup", "TYPE", "Q4",
       Patched(Grouped(), [](Buffer& b) { Put(b, Desc(0, t::kGroup), 0, 4); }), Desc(0, 20), 0});

  // Heap.
  add({"N3_Reordered", "TYPE", "N3",
       Patched(BlockSpec{{F32("ab"), F32("cd")}, {}, {}},
               [](Buffer& b) {
                 Put(b, Desc(0, t::kNameOff), 2, 2);
                 Put(b, Desc(1, t::kNameOff), 0, 2);
               }),
       Desc(0, 4), 0});
  add({"N3_Hole", "TYPE", "N3",
       Patched(BlockSpec{{F32("ab"), F32("cd")}, {}, {}},
               [](Buffer& b) {
                 Put(b, Desc(1, t::kNameOff), 3, 2);
                 Put(b, Desc(1, t::kNameLen), 1, 2);
               }),
       Desc(1, 4), 1});
  add({"N3_ExtraByteAtEnd", "TYPE", "N3",
       Patched(BlockSpec{{F32("ab"), F32("cd")}, {}, {}},
               [](Buffer& b) { Put(b, Desc(1, t::kNameLen), 1, 2); }),
       64 + 2 * 128 + 3});
  add({"N3_SlicePastHeap", "TYPE", "N3",
       Patched(One(F32("ab")), [](Buffer& b) { Put(b, Desc(0, t::kNameLen), 3, 2); }), Desc(0, 4),
       0});
  add({"N4_Overlong", "UTF8", "N4", Built(One(F32("a\xC0\x80"))), 64 + 128 + 1, 0});
  add({"N4_Surrogate", "UTF8", "N4", Built(One(F32("\xED\xA0\x80"))), 64 + 128, 0});
  add({"N4_AboveMax", "UTF8", "N4", Built(One(F32("\xF4\x90\x80\x80"))), 64 + 128, 0});
  add({"N4_BadLayoutName", "UTF8", "N4", Built(One(Opaque(64, 32, "ggml.\xFF"))), 64 + 128 + 5, 0});
  add({"N5_Duplicate", "TYPE", "N5", Built(BlockSpec{{F32("w"), F32("v"), F32("w")}, {}, {}}),
       Desc(2, 4), 2});

  // Scales.
  add({"Q5_ScaleIsSelf", "TYPE", "Q5",
       Patched(PerAxis(), [](Buffer& b) { Put(b, Desc(0, t::kScale), 0, 4); }), Desc(0, 24), 0});
  add({"Q5_ScaleIndexIsTensorCount", "TYPE", "Q5",  // the first index past the end
       Patched(PerAxis(), [](Buffer& b) { Put(b, Desc(0, t::kScale), 2, 4); }), Desc(0, 24), 0});
  add({"Q7_OuterIndexIsTensorCount", "TYPE", "Q7",
       Patched(Grouped(), [](Buffer& b) { Put(b, Desc(0, t::kOuter), 3, 4); }), Desc(0, 28), 0});
  add({"Q5_ScaleOutOfRange", "TYPE", "Q5",
       Patched(PerAxis(), [](Buffer& b) { Put(b, Desc(0, t::kScale), 1000, 4); }), Desc(0, 24), 0});
  add({"Q5_ScaleDtypeI8", "TYPE", "Q5",
       Patched(PerAxis(),
               [](Buffer& b) {
                 Put(b, Desc(1, t::kDtype), 3, 2);
                 Put(b, Desc(1, t::kLength), 3, 8);
               }),
       Desc(0, 24), 0});
  add({"Q6_PerAxisWrongLength", "TYPE", "Q6",
       Patched(PerAxis(), [](Buffer& b) { Put(b, Desc(0, t::kAxis), 0, 2); }), Desc(0, 24), 0});
  add({"Q6_GroupedNotCeil", "TYPE", "Q6",
       Patched(Grouped(), [](Buffer& b) { Put(b, Desc(0, t::kGroup), 5, 4); }), Desc(0, 24), 0});
  add({"Q7_OuterIsSelf", "TYPE", "Q7",
       Patched(Grouped(), [](Buffer& b) { Put(b, Desc(0, t::kOuter), 0, 4); }), Desc(0, 28), 0});
  add({"Q7_OuterNotScalar", "TYPE", "Q7",
       Patched(Grouped(), [](Buffer& b) { Put(b, Desc(0, t::kOuter), 1, 4); }), Desc(0, 28), 0});

  // Payloads.
  {
    TensorSpec a = F32(), c = F32();
    c.byte_offset = 0;
    add({"P1_SameOffset", "TYPE", "P1", Built(BlockSpec{{a, c}, {}, {}}), Desc(1, 32), 1});
  }
  {
    TensorSpec a = F32(), c = F32();
    a.byte_offset = 128;  // [128, 136)
    c.byte_offset = 64;
    c.shape = {20};  // [64, 144)
    add({"P1_OutOfOrderOverlap", "TYPE", "P1", Built(BlockSpec{{a, c}, {}, {}}), Desc(0, 32), 0});
  }
  add({"P2_NonzeroTail", "TYPE", "P2",
       Patched(BlockSpec{{F32()}, {}, 64}, [](Buffer& b) { b.back() = 1; }), 192 + 63});
  add({"P2_NonzeroLeadingGap", "TYPE", "P2",
       Patched(BlockSpec{{[] {
                           TensorSpec s = F32();
                           s.byte_offset = 64;
                           return s;
                         }()},
                         {},
                         {}},
               [](Buffer& b) { b[192 + 10] = 7; }),
       192 + 10});
  return rows;
}

// Test names in failure output instead of the bytes of the row.
void PrintTo(const Row& row, std::ostream* os) { *os << row.name; }

class RuleTest : public ::testing::TestWithParam<Row> {};

TEST_P(RuleTest, ReportsTheRule) {
  const Row& row = GetParam();
  const Buffer b = row.make();
  ParseOptions options;
  options.limits = row.limits;
  const Result<Directory> r = Parse(b, options);
  ASSERT_FALSE(r.ok()) << row.name << " parsed as valid";
  const Error& e = r.error();
  EXPECT_EQ(RuleName(e.rule), row.rule) << e.ToString();
  EXPECT_EQ(ErrorClassName(e.error_class), row.cls) << e.ToString();
  if (row.offset != kNone) {
    EXPECT_EQ(e.offset, row.offset) << e.ToString();
  }
  if (row.tensor) {
    EXPECT_EQ(e.tensor, row.tensor) << e.ToString();
  }
  EXPECT_FALSE(e.message.empty());
}

INSTANTIATE_TEST_SUITE_P(Rules, RuleTest, ::testing::ValuesIn(Rows()),
                         [](const ::testing::TestParamInfo<Row>& info) { return info.param.name; });

// D3 names the first nonzero reserved byte and its value, wherever it lies
// in the eight-byte words the descriptor's reserved bytes are read as: the
// byte 3, then each of 112..127 holding a value of its own (0x5a at 123,
// the fourth byte of the second word), and a later nonzero byte in the same
// word not reported before an earlier one.
TEST(RuleMessages, D3NamesTheFirstNonzeroReservedByteAndItsValue) {
  std::vector<std::size_t> bytes = {3};
  for (std::size_t k = 112; k < 128; ++k) bytes.push_back(k);
  for (const std::size_t k : bytes) {
    const auto value = static_cast<std::uint8_t>(k == 123 ? 0x5a : 0x80 | (k & 0x7f));
    Buffer b = Build(One());
    b[Desc(0, k)] = value;
    const Result<Directory> r = Parse(b);
    ASSERT_FALSE(r.ok()) << k;
    char want[64];
    std::snprintf(want, sizeof want, "reserved descriptor byte %zu is 0x%02x", k, value);
    EXPECT_EQ(RuleName(r.error().rule), "D3") << k;
    EXPECT_EQ(r.error().offset, Desc(0, k)) << k;
    EXPECT_EQ(r.error().message, want) << k;
  }
  Buffer b = Build(One());
  b[Desc(0, 126)] = 0x01;
  b[Desc(0, 123)] = 0x5a;
  const Result<Directory> r = Parse(b);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().offset, Desc(0, 123));
  EXPECT_EQ(r.error().message, "reserved descriptor byte 123 is 0x5a");
}

// Every rule id has at least one row above.
TEST(RuleTable, EveryRuleHasARow) {
  const std::vector<Row> rows = Rows();
  for (std::size_t i = 0; i < kRuleCount; ++i) {
    const std::string id(RuleName(static_cast<Rule>(i)));
    bool found = false;
    for (const Row& r : rows) found = found || r.rule == id;
    EXPECT_TRUE(found) << "no row proves rule " << id;
  }
}

// The builders above produce valid blocks before they are broken.
TEST(RuleTable, BaseBlocksAreValid) {
  for (const BlockSpec& spec :
       {One(), One(F32("ab")), PerAxis(), Grouped(), One(Opaque(64, 32)), One(Opaque(0, 32))}) {
    const Buffer b = Build(spec);
    const Result<Directory> r = Parse(b);
    EXPECT_TRUE(r.ok()) << r.error().ToString();
  }
}

// The caller's limits are inclusive: a block whose tensor_count, name_bytes
// and block length equal them is read; each one less is H7 at its field.
TEST(RuleTable, CallerLimitsEqualToTheBlockHold) {
  const Buffer b = Build(One(F32("abc")));
  const Limits exact{1, 3, b.size()};
  ParseOptions o;
  o.limits = exact;
  const Result<Directory> r = Parse(b, o);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r.value().header().name_bytes, 3u);
  const std::pair<Limits, std::uint64_t> lower[] = {
      {{0, 3, b.size()}, 8}, {{1, 2, b.size()}, 12}, {{1, 3, b.size() - 1}, 16}};
  for (const auto& [limits, offset] : lower) {
    o.limits = limits;
    const Result<Directory> low = Parse(b, o);
    ASSERT_FALSE(low.ok()) << offset;
    EXPECT_EQ(low.error().rule, Rule::H7) << offset;
    EXPECT_EQ(low.error().offset, offset);
  }
}

}  // namespace
}  // namespace kiln
