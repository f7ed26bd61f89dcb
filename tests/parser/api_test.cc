// The public API: accessors of a valid directory, ReadHeader, prefix mode,
// error formatting, the rule and dtype tables.
#include <stdexcept>

#include "gtest/gtest.h"
#include "kiln/kiln.h"
#include "kiln/stable_prefix.h"
#include "support/block_builder.h"

namespace kiln {
namespace {

using testing::BlockSpec;
using testing::Buffer;
using testing::Build;
using testing::TensorSpec;

// weights: i8 [4, 3] per-axis quantised, its f32 scale, an opaque tensor.
BlockSpec Rich() {
  TensorSpec q;
  q.name = "layer.0.weight";
  q.dtype = 3;
  q.rank = 2;
  q.shape = {4, 3};
  q.scheme = 1;
  q.axis = 1;
  q.scale_index = 1;
  q.fill = 0x11;
  TensorSpec s;
  s.name = "layer.0.scale";
  s.shape = {3};
  s.fill = 0x22;
  TensorSpec o;
  o.name = "ggml \xCE\xB1";
  o.dtype = 0x8000;
  o.shape = {64};
  o.block_size = 32;
  o.layout = "ggml.q4_0";
  o.fill = 0x33;
  return BlockSpec{{q, s, o}, {}, {}};
}

TEST(Api, AccessorsAreViewsIntoTheBuffer) {
  const Buffer b = Build(Rich());
  const Result<Directory> r = Parse(b);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  const Directory& d = r.value();
  EXPECT_EQ(d.tensor_count(), 3u);
  EXPECT_EQ(d.block_length(), b.size());
  EXPECT_TRUE(d.header().has_names());
  EXPECT_EQ(d.block().data(), b.data());

  const Tensor q = d.tensor(0);
  EXPECT_EQ(q.index, 0u);
  EXPECT_EQ(q.name, "layer.0.weight");
  EXPECT_EQ(q.dtype, Dtype::kI8);
  EXPECT_EQ(q.rank, 2);
  EXPECT_EQ(std::vector<std::uint64_t>(q.dims().begin(), q.dims().end()),
            (std::vector<std::uint64_t>{4, 3}));
  EXPECT_EQ(q.element_count, 12u);
  EXPECT_EQ(q.byte_offset, 0u);
  EXPECT_EQ(q.byte_length, 12u);
  EXPECT_EQ(q.payload.data(), b.data() + d.header().payload_base);
  EXPECT_EQ(q.payload.size(), 12u);
  EXPECT_EQ(q.payload[0], 0x11);
  EXPECT_EQ(q.quant.scheme, QuantScheme::kPerAxis);
  EXPECT_EQ(q.quant.axis, 1);
  EXPECT_EQ(q.quant.scale_index, 1u);
  EXPECT_FALSE(q.quant.outer_index.has_value());
  // The name is a view into the heap, not a copy.
  EXPECT_EQ(reinterpret_cast<const std::uint8_t*>(q.name.data()), d.name_heap().data());

  const Tensor s = d.tensor(1);
  EXPECT_EQ(s.byte_offset, 64u);
  EXPECT_EQ(s.payload[11], 0x22);
  EXPECT_EQ(s.quant.scheme, QuantScheme::kNone);
  EXPECT_FALSE(s.quant.scale_index.has_value());

  const Tensor o = d.tensor(2);
  EXPECT_EQ(o.name, "ggml \xCE\xB1");
  EXPECT_EQ(o.dtype, Dtype::kOpaque);
  EXPECT_EQ(o.layout, "ggml.q4_0");
  EXPECT_EQ(o.block_size, 32u);
  EXPECT_EQ(o.byte_length, 36u);

  EXPECT_EQ(d.Find("layer.0.scale"), 1u);
  EXPECT_EQ(d.Find("missing"), std::nullopt);
  EXPECT_THROW((void)d.tensor(3), std::out_of_range);
}

TEST(Api, ScalarHasCountOne) {
  TensorSpec t;
  t.rank = 0;
  t.shape = {};
  const Buffer b = Build(BlockSpec{{t}, {}, {}});
  const Result<Directory> r = Parse(b);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r.value().tensor(0).element_count, 1u);
  EXPECT_EQ(r.value().tensor(0).byte_length, 4u);
  EXPECT_TRUE(r.value().tensor(0).dims().empty());
}

TEST(Api, ReadHeaderGivesBlockLengthFromTheFirst64Bytes) {
  const Buffer b = Build(Rich());
  const Result<HeaderInfo> h = ReadHeader(std::span(b).first(64));
  ASSERT_TRUE(h.ok()) << h.error().ToString();
  EXPECT_EQ(h.value().block_length, b.size());
  EXPECT_EQ(h.value().tensor_count, 3u);
  const Result<HeaderInfo> cut = ReadHeader(std::span(b).first(40));
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.error().rule, Rule::H3);
}

// The snapshot a mapped reader keeps (kiln/stable_prefix.h): a Kiln block's
// directory region, else the first 16 MiB of anything else, never more than
// the bytes there are.
TEST(Api, StablePrefixIsTheDirectoryRegionOrTheForeignCap) {
  const Buffer b = Build(Rich());
  const Result<HeaderInfo> h = ReadHeader(b);
  ASSERT_TRUE(h.ok());
  const std::uint64_t base = h.value().payload_base;
  ASSERT_LT(base, b.size());
  EXPECT_EQ(StablePrefixLength(b), base);
  EXPECT_EQ(StablePrefixLength(std::span(b).first(base)), base);
  EXPECT_EQ(StablePrefixLength(std::span(b).first(base - 1)), base - 1);  // cut in the heap
  EXPECT_EQ(StablePrefixLength(std::span(b).first(64)), 64u);
  // Not a block (or a header that fails H1..H7): the foreign cap.
  EXPECT_EQ(StablePrefixLength(std::span(b).first(63)), 63u);
  EXPECT_EQ(StablePrefixLength({}), 0u);
  Buffer npy(kForeignStablePrefix + 100, 0x20);
  npy[0] = 0x93;
  EXPECT_EQ(StablePrefixLength(npy), kForeignStablePrefix);
  EXPECT_EQ(StablePrefixLength(std::span(npy).first(100)), 100u);
  Buffer bad_version = b;
  bad_version[4] = 3;
  EXPECT_EQ(StablePrefixLength(bad_version), b.size());  // smaller than the cap
}

TEST(Api, PrefixModeFindsTheBlockInAStream) {
  Buffer stream = Build(Rich());
  const std::size_t first = stream.size();
  const Buffer second = Build(BlockSpec{});
  stream.insert(stream.end(), second.begin(), second.end());
  ParseOptions options;
  options.mode = Mode::kPrefix;
  const Result<Directory> a = Parse(stream, options);
  ASSERT_TRUE(a.ok()) << a.error().ToString();
  EXPECT_EQ(a.value().block_length(), first);
  const Result<Directory> b = Parse(std::span(stream).subspan(first), options);
  ASSERT_TRUE(b.ok()) << b.error().ToString();
  EXPECT_EQ(b.value().block_length(), 64u);
  const Result<Directory> whole = Parse(stream);
  ASSERT_FALSE(whole.ok());
  EXPECT_EQ(whole.error().rule, Rule::H8);
}

TEST(Api, ErrorToStringNamesClassRuleOffsetTensorAndValues) {
  TensorSpec t;
  t.shape = {3};  // 12 bytes
  Buffer b = Build(BlockSpec{{t}, {}, 8});
  const Result<Directory> r = Parse(b);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().ToString(),
            "TYPE D9 at byte 104 (tensor 0): range [0, 12) ends past payload_bytes 8");
}

TEST(Api, RuleTableRoundTrips) {
  EXPECT_EQ(kRuleCount, 37u);
  for (std::size_t i = 0; i < kRuleCount; ++i) {
    const auto rule = static_cast<Rule>(i);
    EXPECT_EQ(RuleFromName(RuleName(rule)), rule);
    EXPECT_FALSE(RuleSummary(rule).empty());
  }
  EXPECT_EQ(RuleFromName("X1"), std::nullopt);
  EXPECT_EQ(RuleClass(Rule::D3), ErrorClass::kFrame);
  EXPECT_EQ(RuleClass(Rule::N4), ErrorClass::kUtf8);
  EXPECT_EQ(RuleClass(Rule::D5), ErrorClass::kLimit);
}

TEST(Api, DtypeTableIsExactlyTheSpecCodes) {
  std::vector<std::uint16_t> found;
  for (std::uint32_t code = 0; code <= 0xFFFF; ++code) {
    if (FindDtype(static_cast<std::uint16_t>(code)) != nullptr) {
      found.push_back(static_cast<std::uint16_t>(code));
    }
  }
  const std::vector<std::uint16_t> want = {1,  2,  3,  4,  5,  6,  7,  9,  10, 11, 12, 13,
                                           14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 0x8000};
  EXPECT_EQ(found, want);
  EXPECT_EQ(FindDtype(21)->bits, 4u);
  EXPECT_EQ(FindDtype(15)->bits, 128u);
  EXPECT_EQ(FindDtypeByName("bf16")->dtype, Dtype::kBf16);
  // Scale dtypes (Q5, Q7): f16, bf16, f32, f64, f8_e4m3fn, f8_e8m0.
  std::vector<std::string_view> scales;
  for (std::uint16_t code : want) {
    if (FindDtype(code)->is_scale) scales.push_back(FindDtype(code)->name);
  }
  EXPECT_EQ(scales,
            (std::vector<std::string_view>{"f32", "f16", "f64", "bf16", "f8_e4m3fn", "f8_e8m0"}));
}

}  // namespace
}  // namespace kiln
