// BlockWriter: round trips, canonical bytes, streamed payloads, and request
// errors that carry the parser's class and rule.
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <random>

#include "gtest/gtest.h"
#include "kiln/internal/write_observer.h"
#include "kiln/kiln.h"
#include "kiln/writer.h"
#include "support/golden.h"
#include "support/temp_dir.h"
#include "support/write_block.h"

namespace kiln {
namespace {

using testing::Buffer;

// Two directories hold the same tensors (names, dtypes, shapes, layouts,
// quantisation, payload bytes).
void ExpectSameTensors(const Directory& a, const Directory& b, const std::string& what) {
  ASSERT_EQ(a.tensor_count(), b.tensor_count()) << what;
  for (std::uint32_t i = 0; i < a.tensor_count(); ++i) {
    const Tensor x = a.tensor(i), y = b.tensor(i);
    EXPECT_EQ(x.name, y.name) << what << " tensor " << i;
    EXPECT_EQ(x.dtype, y.dtype) << what << " tensor " << i;
    EXPECT_EQ(x.rank, y.rank) << what << " tensor " << i;
    EXPECT_EQ(x.shape, y.shape) << what << " tensor " << i;
    EXPECT_EQ(x.layout, y.layout) << what << " tensor " << i;
    EXPECT_EQ(x.block_size, y.block_size) << what << " tensor " << i;
    EXPECT_EQ(x.quant.scheme, y.quant.scheme) << what << " tensor " << i;
    EXPECT_EQ(x.quant.axis, y.quant.axis) << what << " tensor " << i;
    EXPECT_EQ(x.quant.group_size, y.quant.group_size) << what << " tensor " << i;
    EXPECT_EQ(x.quant.scale_index, y.quant.scale_index) << what << " tensor " << i;
    EXPECT_EQ(x.quant.outer_index, y.quant.outer_index) << what << " tensor " << i;
    EXPECT_TRUE(std::equal(x.payload.begin(), x.payload.end(), y.payload.begin(), y.payload.end()))
        << what << " tensor " << i;
  }
}

Buffer Rewrite(const Buffer& block) {
  const Result<Directory> d = Parse(block);
  EXPECT_TRUE(d.ok());
  if (!d.ok()) return {};
  Result<BlockWriter> w = BlockWriter::From(d.value());
  EXPECT_TRUE(w.ok()) << w.error().ToString();
  if (!w.ok()) return {};
  return testing::BlockBytes(w.value());
}

// A streamed directory (StreamValidator) has no payload views: From refuses
// it at the first tensor with payload bytes instead of handing back a writer
// that lacks them.
TEST(Writer, FromADirectoryWithoutPayloadsIsRefused) {
  testing::TensorSpec a;
  a.name = "a";
  testing::TensorSpec b;
  b.name = "b";
  const Buffer block = testing::Build({{a, b}, {}, {}});
  StreamValidator v;
  (void)v.Feed(block);
  ASSERT_EQ(v.Finish(), StreamStatus::kComplete);
  ASSERT_FALSE(v.directory().has_payloads());
  const Result<BlockWriter> w = BlockWriter::From(v.directory());
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().tensor, 0u);
  // The parsed buffer's directory is taken whole.
  const Result<Directory> d = Parse(block);
  ASSERT_TRUE(d.ok());
  const Result<BlockWriter> whole = BlockWriter::From(d.value());
  ASSERT_TRUE(whole.ok()) << whole.error().ToString();
  EXPECT_EQ(whole.value().tensor_count(), 2u);
}

// Parse, write, parse: the same tensors; written again: the same bytes. A
// valid case whose layout is already canonical comes back byte for byte.
TEST(Writer, EveryValidGoldenCaseRoundTrips) {
  std::size_t identical = 0, cases = 0;
  for (const testing::GoldenCase& c : testing::ValidCases()) {
    const Buffer original = testing::ReadFile(c.path);
    const Buffer written = Rewrite(original);
    const Result<Directory> a = Parse(original), b = Parse(written);
    ASSERT_TRUE(b.ok()) << c.name << ": " << b.error().ToString();
    ExpectSameTensors(a.value(), b.value(), c.name);
    EXPECT_EQ(Rewrite(written), written) << c.name << ": the canonical form is a fixed point";
    identical += written == original ? 1 : 0;
    ++cases;
    const bool laid_out_by_hand = c.description.find("order") != std::string::npos ||
                                  c.description.find("gap") != std::string::npos ||
                                  c.description.find("tail") != std::string::npos ||
                                  c.description.find("inside") != std::string::npos ||
                                  c.description.find("payload_bytes 64") != std::string::npos;
    if (!laid_out_by_hand) {
      EXPECT_EQ(written, original) << c.name << ": " << c.description;
    }
  }
  EXPECT_GE(identical, cases / 2);
}

// Random valid models: names or not, every dtype, ranks 0..8 with small
// dimensions (zeros too), opaque tensors, quantised tensors with scales.
Buffer RandomModel(std::mt19937_64& rng, std::vector<Buffer>& payloads) {
  auto pick = [&](std::uint64_t n) {
    return std::uniform_int_distribution<std::uint64_t>(0, n - 1)(rng);
  };
  static constexpr std::uint16_t kCodes[] = {1,  2,  3,  4,  5,  6,  7,  9,  10, 11, 12, 13,
                                             14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24};
  BlockWriter w;
  const bool named = pick(2) == 0;
  const std::uint64_t n = pick(12);
  payloads.clear();
  payloads.reserve(3 * n);
  auto add = [&](TensorRequest r, std::uint64_t bytes) {
    if (named) r.name = "t" + std::to_string(w.tensor_count()) + (pick(4) == 0 ? "\xCE\xB1" : "");
    payloads.emplace_back(bytes);
    for (auto& b : payloads.back()) b = static_cast<std::uint8_t>(pick(256));
    Result<std::uint32_t> i = w.Add(r, Payload::Bytes(payloads.back()));
    EXPECT_TRUE(i.ok()) << i.error().ToString();
  };
  for (std::uint64_t t = 0; t < n; ++t) {
    TensorRequest r;
    const std::uint64_t kind = pick(6);
    if (kind == 0) {  // opaque
      r.dtype = Dtype::kOpaque;
      r.layout = pick(2) ? "ggml.q4_K" : "ggml.q8_0";
      r.block_size = 32;
      const std::uint64_t blocks = pick(4);
      r.shape = {blocks * 32};
      add(r, blocks * (pick(2) ? 18 : 34));
      continue;
    }
    if (kind == 1) {  // quantised i8 [a, b] along an axis, scale then outer
      const std::uint64_t a = 1 + pick(5), b = 1 + pick(5);
      const std::uint32_t self = w.tensor_count();
      r.dtype = Dtype::kI8;
      r.shape = {a, b};
      r.axis = static_cast<std::uint16_t>(pick(2));
      const std::uint64_t along = r.shape[r.axis];
      r.scale_index = self + 1;
      r.outer_index = self + 2;
      TensorRequest s;
      s.dtype = Dtype::kF16;
      if (pick(2)) {
        r.scheme = QuantScheme::kPerAxis;
        s.shape = {along};
      } else {
        r.scheme = QuantScheme::kGrouped;
        r.group_size = static_cast<std::uint32_t>(1 + pick(3));
        s.shape = r.shape;
        s.shape[r.axis] = (along + r.group_size - 1) / r.group_size;
      }
      add(r, a * b);
      add(s, 2 * s.shape[0] * (s.shape.size() > 1 ? s.shape[1] : 1));
      TensorRequest o;
      o.dtype = Dtype::kF32;
      add(o, 4);
      continue;
    }
    r.dtype = static_cast<Dtype>(kCodes[pick(std::size(kCodes))]);
    const std::uint64_t rank = pick(9);
    std::uint64_t count = 1;
    for (std::uint64_t k = 0; k < rank; ++k) {
      r.shape.push_back(pick(7) == 0 ? 0 : 1 + pick(3));
      count *= r.shape.back();
    }
    add(r, (count * GetDtypeInfo(r.dtype).bits + 7) / 8);
  }
  return testing::BlockBytes(w);
}

TEST(Writer, RandomModelsRoundTripExactly) {
  std::mt19937_64 rng(20261129);
  std::vector<Buffer> payloads;
  for (int m = 0; m < 500; ++m) {
    const Buffer block = RandomModel(rng, payloads);
    const Result<Directory> d = Parse(block);
    ASSERT_TRUE(d.ok()) << "model " << m << ": " << d.error().ToString();
    // The payloads come back in order, byte for byte.
    ASSERT_EQ(d.value().tensor_count(), payloads.size());
    for (std::uint32_t i = 0; i < d.value().tensor_count(); ++i) {
      const auto p = d.value().tensor(i).payload;
      ASSERT_TRUE(std::equal(p.begin(), p.end(), payloads[i].begin(), payloads[i].end()))
          << "model " << m << " tensor " << i;
    }
    ASSERT_EQ(Rewrite(block), block) << "model " << m;
  }
}

TEST(Writer, StreamedPayloadToFile) {
  BlockWriter w;
  TensorRequest r;
  r.name = "big";
  r.dtype = Dtype::kU8;
  r.shape = {3 << 20};  // three chunks
  std::uint64_t produced = 0;
  ASSERT_TRUE(w.Add(r, Payload::Stream(3 << 20,
                                       [&](std::span<std::uint8_t> out) {
                                         for (auto& b : out)
                                           b = static_cast<std::uint8_t>(produced++ % 251);
                                         return true;
                                       }))
                  .ok());
  const std::string path = ::testing::TempDir() + "/kiln_writer_test.klnt";
  const Result<BlockPlan> plan = w.Plan();
  ASSERT_TRUE(plan.ok()) << plan.error().ToString();
  const Result<std::uint64_t, WriteError> n = plan.value().WriteToFile(path);
  ASSERT_TRUE(n.ok()) << n.error().ToString();
  const Buffer bytes = testing::ReadFile(path);
  std::remove(path.c_str());
  EXPECT_EQ(bytes.size(), n.value());
  const Result<Directory> d = Parse(bytes);
  ASSERT_TRUE(d.ok()) << d.error().ToString();
  const auto p = d.value().tensor(0).payload;
  ASSERT_EQ(p.size(), 3u << 20);
  for (std::size_t k = 0; k < p.size(); k += 4093) ASSERT_EQ(p[k], k % 251);
}

// A stream payload that ends early is an I/O failure (the source's), not a
// rule of the format.
TEST(Writer, StreamThatEndsEarlyIsAnIoError) {
  BlockWriter w;
  TensorRequest r;
  r.dtype = Dtype::kU8;
  r.shape = {100};
  ASSERT_TRUE(w.Add(r, Payload::Stream(100, [](std::span<std::uint8_t>) { return false; })).ok());
  const Result<BlockPlan> plan = w.Plan();  // no rule is broken
  ASSERT_TRUE(plan.ok()) << plan.error().ToString();
  const Result<std::vector<std::uint8_t>, WriteError> out = plan.value().WriteToMemory();
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().step, WriteError::Step::kPayload);
  EXPECT_EQ(out.error().message,
            "the payload source of tensor 0 ended 100 bytes before its 100 bytes");
  EXPECT_EQ(out.error().error_number, 0);  // no system call failed
  EXPECT_TRUE(out.error().path.empty());
}

// A sink that refuses bytes stops the writing there: the error names the
// block offset of the first refused byte (0: the header), and no errno.
TEST(Writer, SinkRefusalNamesTheOffset) {
  BlockWriter w;
  TensorRequest r;
  r.dtype = Dtype::kU8;
  r.shape = {100};
  const std::vector<std::uint8_t> bytes(100, 7);
  ASSERT_TRUE(w.Add(r, Payload::Bytes(bytes)).ok());
  ASSERT_TRUE(w.Add(r, Payload::Bytes(bytes)).ok());
  const Result<BlockPlan> plan = w.Plan();
  ASSERT_TRUE(plan.ok()) << plan.error().ToString();
  const std::uint64_t base = plan.value().block_length() - 228;  // 100, 28 of padding, 100
  for (const int refuse_at : {0, 1, 2, 3, 4}) {
    int calls = 0;
    std::uint64_t taken = 0;
    const auto written = plan.value().WriteTo([&](std::span<const std::uint8_t> b) {
      if (calls++ == refuse_at) return false;
      taken += b.size();
      return true;
    });
    ASSERT_FALSE(written.ok()) << refuse_at;
    EXPECT_EQ(written.error().step, WriteError::Step::kWrite);
    EXPECT_EQ(written.error().error_number, 0);
    // The header and directory, tensor 0's padding (none), tensor 0, the
    // padding after it, tensor 1.
    const std::uint64_t at[] = {0, base, base, base + 100, base + 128};
    EXPECT_EQ(taken, at[refuse_at]);
    EXPECT_EQ(written.error().message,
              "the sink refused the block's bytes at " + std::to_string(at[refuse_at]))
        << refuse_at;
  }
}

// A request that would break a rule fails with the parser's class and rule.
struct BadRequest {
  std::string label;
  std::string rule;
  std::function<Result<std::uint64_t>()> run;
};

TensorRequest F32(std::vector<std::uint64_t> shape, std::string name = "") {
  TensorRequest r;
  r.shape = std::move(shape);
  r.name = std::move(name);
  return r;
}

Result<std::uint64_t> AddAll(std::vector<std::pair<TensorRequest, std::uint64_t>> tensors) {
  static std::vector<std::uint8_t> zeros(1 << 16, 1);
  BlockWriter w;
  for (auto& [r, bytes] : tensors) {
    Result<std::uint32_t> i = w.Add(r, Payload::Bytes(std::span(zeros).first(bytes)));
    if (!i.ok()) return i.error();
  }
  const Result<BlockPlan> plan = w.Plan();
  if (!plan.ok()) return plan.error();
  return plan.value().block_length();
}

std::vector<BadRequest> BadRequests() {
  auto quant = [](QuantScheme s, std::uint16_t axis, std::uint32_t group, std::uint32_t scale) {
    TensorRequest r = F32({4, 6});
    r.dtype = Dtype::kI8;
    r.scheme = s;
    r.axis = axis;
    r.group_size = group;
    r.scale_index = scale;
    return r;
  };
  TensorRequest opaque = F32({64});
  opaque.dtype = Dtype::kOpaque;
  opaque.layout = "ggml.q4_0";
  opaque.block_size = 0;
  TensorRequest bad_dtype = F32({2});
  bad_dtype.dtype = static_cast<Dtype>(8);
  TensorRequest outer = quant(QuantScheme::kPerAxis, 1, 0, 1);
  outer.outer_index = 1;
  std::vector<std::pair<TensorRequest, std::uint64_t>> heap_full;
  for (int i = 0; i < 300; ++i)
    heap_full.push_back({F32({0}, std::string(250, 'a' + i % 26) + std::to_string(i)), 0});
  return {
      {"D1_DtypeNotInTable", "D1",
       [=] {
         return AddAll({{bad_dtype, 8}});
       }},
      {"D2_Rank9", "D2",
       [] {
         return AddAll({{F32({1, 1, 1, 1, 1, 1, 1, 1, 1}), 4}});
       }},
      {"D5_ShapeOverflows", "D5",
       [] {
         return AddAll({{F32({1ull << 32, 1ull << 32}), 0}});
       }},
      {"D7_PayloadTooShort", "D7",
       [] {
         return AddAll({{F32({3}), 8}});
       }},
      {"N2_MixedNames", "N2",
       [] {
         return AddAll({{F32({2}, "a"), 8}, {F32({2}), 8}});
       }},
      {"N2_NameAfterUnnamed", "N2",
       [] {
         return AddAll({{F32({2}), 8}, {F32({2}, "a"), 8}});
       }},
      {"N4_BadUtf8Name", "N4",
       [] {
         return AddAll({{F32({2}, "a\xC0\x80"), 8}});
       }},
      {"N5_DuplicateName", "N5",
       [] {
         return AddAll({{F32({2}, "w"), 8}, {F32({2}, "w"), 8}});
       }},
      {"O2_OpaqueBlockSize0", "O2",
       [=] {
         return AddAll({{opaque, 36}});
       }},
      {"Q3_AxisPastRank", "Q3",
       [=] {
         return AddAll({{quant(QuantScheme::kPerAxis, 2, 0, 1), 24}, {F32({6}), 24}});
       }},
      {"Q4_GroupWithScheme1", "Q4",
       [=] {
         return AddAll({{quant(QuantScheme::kPerAxis, 1, 2, 1), 24}, {F32({6}), 24}});
       }},
      {"Q5_ScaleMissing", "Q5",
       [=] {
         return AddAll({{quant(QuantScheme::kPerAxis, 1, 0, 1), 24}});
       }},
      {"Q6_ScaleWrongShape", "Q6",
       [=] {
         return AddAll({{quant(QuantScheme::kPerAxis, 1, 0, 1), 24}, {F32({4}), 16}});
       }},
      {"Q7_OuterNotScalar", "Q7",
       [=] {
         return AddAll({{outer, 24}, {F32({6}), 24}});
       }},
      {"H7_NameHeapFull", "H7", [=] { return AddAll(heap_full); }},
      {"H7_NameLongerThanNameLen", "H7",
       [] {
         return AddAll({{F32({0}, std::string(0x10000, 'n')), 0}});
       }},
  };
}

class WriterRequestTest : public ::testing::TestWithParam<BadRequest> {};

TEST_P(WriterRequestTest, FailsWithTheParsersRule) {
  const Result<std::uint64_t> r = GetParam().run();
  ASSERT_FALSE(r.ok()) << GetParam().label;
  EXPECT_EQ(RuleName(r.error().rule), GetParam().rule) << r.error().ToString();
  EXPECT_EQ(r.error().error_class, RuleClass(r.error().rule));
  EXPECT_FALSE(r.error().message.empty());
}

INSTANTIATE_TEST_SUITE_P(Writer, WriterRequestTest, ::testing::ValuesIn(BadRequests()),
                         [](const auto& info) { return info.param.label; });

// A WriteError made by its caller names no file, no errno (writer.h: "0
// when none") and says so.
TEST(Writer, ADefaultWriteErrorNamesNoFileAndNoErrno) {
  const WriteError e;
  EXPECT_TRUE(e.path.empty());
  EXPECT_EQ(e.error_number, 0);
  EXPECT_EQ(e.ToString(), "cannot write the block: ");
}

// A default Payload is no bytes: what an empty tensor takes.
TEST(Writer, ADefaultPayloadIsEmpty) {
  EXPECT_EQ(Payload{}.size(), 0u);
  BlockWriter w;
  ASSERT_TRUE(w.Add(F32({0}, "none"), Payload{}).ok());
  EXPECT_FALSE(w.Add(F32({1}, "one"), Payload{}).ok());  // f32 [1] needs 4 bytes
  EXPECT_EQ(w.tensor_count(), 1u);
  const Buffer out = testing::BlockBytes(w);
  const Result<Directory> d = Parse(out);
  ASSERT_TRUE(d.ok()) << d.error().ToString();
  EXPECT_EQ(d.value().tensor(0).byte_length, 0u);
}

TEST(Writer, HeapLimitNamesTheTensor) {
  std::vector<std::pair<TensorRequest, std::uint64_t>> tensors;
  BlockWriter w;
  Result<std::uint32_t> last = 0u;
  for (int i = 0; i < 300 && last.ok(); ++i) {
    last = w.Add(F32({0}, std::string(250, 'x') + std::to_string(i)), Payload::Bytes({}));
  }
  ASSERT_FALSE(last.ok());
  EXPECT_EQ(last.error().error_class, ErrorClass::kLimit);
  // Names 0..9 take 251 bytes, 10..99 252, then 253: name 260 would start at
  // 10 * 251 + 90 * 252 + 160 * 253 = 65,670, past the last u16 offset 65,534.
  EXPECT_EQ(last.error().tensor, 260u);
  EXPECT_NE(last.error().message.find("u16"), std::string::npos) << last.error().message;
}

// The heap's last offset a name may start at is 0xFFFE (0xFFFF means
// "unnamed"): names filling exactly 0xFFFF bytes leave none for the next one,
// which Add refuses (H7, naming it); one byte less and it starts at 0xFFFE.
TEST(Writer, ANameStartingAt0xFFFFIsH7AndAt0xFFFEIsWritten) {
  for (const std::size_t first : {std::size_t{0xFFFF}, std::size_t{0xFFFE}}) {
    BlockWriter w;
    ASSERT_TRUE(w.Add(F32({0}, std::string(first, 'a')), Payload::Bytes({})).ok());
    const Result<std::uint32_t> next = w.Add(F32({0}, "b"), Payload::Bytes({}));
    if (first == 0xFFFF) {
      ASSERT_FALSE(next.ok());
      EXPECT_EQ(next.error().rule, Rule::H7);
      EXPECT_EQ(next.error().tensor, 1u);
      EXPECT_NE(next.error().message.find("would start at heap offset 65535"), std::string::npos)
          << next.error().message;
      EXPECT_EQ(w.tensor_count(), 1u);
      continue;
    }
    ASSERT_TRUE(next.ok()) << next.error().ToString();
    const Buffer out = testing::BlockBytes(w);
    const Result<Directory> d = Parse(out);
    ASSERT_TRUE(d.ok()) << d.error().ToString();
    EXPECT_EQ(d.value().tensor(1).name, "b");
  }
}

// A layout name of 0xFFFF bytes (the most name_len holds) is written whole
// when it starts at heap offset 0 (an unnamed block); 0x10000 is refused.
TEST(Writer, ALayoutNameOf0xFFFFBytesIsWritten) {
  for (const std::size_t size : {std::size_t{0xFFFF}, std::size_t{0x10000}}) {
    BlockWriter w;
    TensorRequest r;
    r.dtype = Dtype::kOpaque;
    r.layout = std::string(size, 'l');
    r.block_size = 32;
    r.shape = {32};
    const std::vector<std::uint8_t> block(34, 0);
    const Result<std::uint32_t> added = w.Add(r, Payload::Bytes(block));
    if (size > 0xFFFF) {
      ASSERT_FALSE(added.ok());
      EXPECT_EQ(added.error().rule, Rule::H7);
      EXPECT_NE(added.error().message.find("65536 bytes does not fit name_len"), std::string::npos)
          << added.error().message;
      continue;
    }
    ASSERT_TRUE(added.ok()) << added.error().ToString();
    const Buffer out = testing::BlockBytes(w);
    const Result<Directory> d = Parse(out);
    ASSERT_TRUE(d.ok()) << d.error().ToString();
    EXPECT_EQ(d.value().tensor(0).layout.size(), 0xFFFFu);
  }
}

// A streamed payload may be declared up to 2^64 - 16 bytes long (Add takes
// it: it starts at 0), but then the block's length, payload_base plus that,
// passes 2^64 - 1: Plan refuses it (H7) and reads no payload byte.
TEST(Writer, BlockLengthPast2To64IsH7AtPlan) {
  BlockWriter w;
  const std::uint64_t end = ~std::uint64_t{0} - 15;
  const auto never = [](std::span<std::uint8_t>) {
    ADD_FAILURE() << "a payload was read";
    return false;
  };
  ASSERT_TRUE(w.Add(F32({end / 4}), Payload::Stream(end, never)).ok());
  const Result<BlockPlan> plan = w.Plan();
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().rule, Rule::H7);
  EXPECT_NE(plan.error().message.find("payload_base 192 + payload_bytes " + std::to_string(end) +
                                      " exceeds 2^64-1"),
            std::string::npos)
      << plan.error().message;
}

// A rule that needs every tensor (Q5 here: tensor 0's scale is tensor 1,
// which never comes) fails when the block is laid out (Plan), not in Add:
// there is then no plan, so nothing can be written.
TEST(Writer, LayoutErrorIsThePlansError) {
  BlockWriter w;
  TensorRequest r = F32({4, 6});
  r.dtype = Dtype::kI8;
  r.scheme = QuantScheme::kPerAxis;
  r.axis = 1;
  r.scale_index = 1;
  const std::vector<std::uint8_t> bytes(24, 1);
  ASSERT_TRUE(w.Add(r, Payload::Bytes(bytes)).ok());
  const Result<BlockPlan> plan = w.Plan();
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(RuleName(plan.error().rule), "Q5") << plan.error().ToString();
  EXPECT_EQ(plan.error().tensor, 0u);
  // Sealed again: the same verdict.
  const Result<BlockPlan> again = w.Plan();
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().ToString(), plan.error().ToString());
}

// writer.h: a streamed payload "is read once, in chunks of at most 1 MiB":
// the reader is asked for 1 MiB pieces, then the rest.
TEST(Writer, StreamIsReadInChunksOfAtMost1MiB) {
  BlockWriter w;
  TensorRequest r;
  r.dtype = Dtype::kU8;
  const std::uint64_t size = (std::uint64_t{5} << 19) + 3;  // 2.5 MiB + 3
  r.shape = {size};
  std::vector<std::size_t> asked;
  ASSERT_TRUE(w.Add(r, Payload::Stream(size,
                                       [&](std::span<std::uint8_t> out) {
                                         asked.push_back(out.size());
                                         std::fill(out.begin(), out.end(), 7);
                                         return true;
                                       }))
                  .ok());
  const Result<BlockPlan> plan = w.Plan();
  ASSERT_TRUE(plan.ok()) << plan.error().ToString();
  const Result<std::uint64_t, WriteError> n =
      plan.value().WriteTo([](std::span<const std::uint8_t>) { return true; });
  ASSERT_TRUE(n.ok()) << n.error().ToString();
  EXPECT_EQ(asked, (std::vector<std::size_t>{1 << 20, 1 << 20, (1 << 19) + 3}));
}

// A stream that ends early, written to a file: an I/O failure (not a rule
// of the format, not a count), and no file (neither the target nor a
// temporary).
TEST(Writer, StreamThatEndsEarlyWritesNoFile) {
  BlockWriter w;
  TensorRequest r;
  r.dtype = Dtype::kU8;
  r.shape = {100};
  ASSERT_TRUE(w.Add(r, Payload::Stream(100, [](std::span<std::uint8_t>) { return false; })).ok());
  const testing::ScratchDir dir;
  const Result<BlockPlan> plan = w.Plan();
  ASSERT_TRUE(plan.ok()) << plan.error().ToString();
  const Result<std::uint64_t, WriteError> n = plan.value().WriteToFile(dir / "short.klnt");
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.error().step, WriteError::Step::kPayload);
  EXPECT_EQ(n.error().path, dir / "short.klnt");
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

// A request's shape is checked before it is stored anywhere: any rank past
// 8 is D2, however far past (a descriptor has room for 8 dimensions).
TEST(Writer, RankFarPast8IsD2) {
  for (const std::size_t rank :
       {std::size_t{9}, std::size_t{10}, std::size_t{11}, std::size_t{64}, std::size_t{4096}}) {
    BlockWriter w;
    const Result<std::uint32_t> added = w.Add(F32(std::vector<std::uint64_t>(rank, 1)), {});
    ASSERT_FALSE(added.ok()) << rank;
    EXPECT_EQ(added.error().rule, Rule::D2) << rank;
    EXPECT_NE(added.error().message.find("rank is " + std::to_string(rank) + ", at most 8"),
              std::string::npos)
        << added.error().message;
    EXPECT_EQ(w.tensor_count(), 0u);
  }
}

// Payloads declared by their size (Payload::Stream) can add up to nearly
// 2^64 bytes without a byte being read: the next payload would start past
// the last multiple of 64 below 2^64, so Add refuses it (H7, naming that
// tensor's byte_offset) and the writer keeps the tensors before it.
TEST(Writer, PayloadStartingPastTheLastAlignedOffsetIsH7) {
  BlockWriter w;
  const std::uint64_t end = ~std::uint64_t{0} - 15;  // 2^64 - 16: not a multiple of 64 away
  const auto never = [](std::span<std::uint8_t>) {
    ADD_FAILURE() << "a payload was read";
    return false;
  };
  ASSERT_TRUE(w.Add(F32({end / 4}), Payload::Stream(end, never)).ok());
  const Result<std::uint32_t> added = w.Add(F32({1}), Payload::Stream(4, never));
  ASSERT_FALSE(added.ok());
  EXPECT_EQ(added.error().rule, Rule::H7);
  EXPECT_EQ(added.error().tensor, 1u);
  EXPECT_EQ(added.error().offset, 64u + 128u + 32u);  // descriptor 1's byte_offset
  EXPECT_NE(added.error().message.find("already end at " + std::to_string(end)), std::string::npos)
      << added.error().message;
  EXPECT_EQ(w.tensor_count(), 1u);
}

// Layout names follow every tensor name in the heap, so a layout can be the
// slice that would start past the last u16 offset: H7 naming that tensor,
// from Plan (so no plan, and no file).
TEST(Writer, LayoutPastTheHeapLimitIsH7) {
  BlockWriter w;
  TensorRequest r;
  r.name = std::string(0xFFFF, 'n');  // the heap's first 65,535 bytes
  r.dtype = Dtype::kOpaque;
  r.layout = "ggml.q8_0";
  r.block_size = 32;  // one block of 32 elements, 34 bytes
  r.shape = {32};
  const std::vector<std::uint8_t> block(34, 0);
  const Result<std::uint32_t> added = w.Add(r, Payload::Bytes(block));
  ASSERT_TRUE(added.ok()) << added.error().ToString();
  const Result<BlockPlan> plan = w.Plan();
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().rule, Rule::H7);
  EXPECT_EQ(plan.error().tensor, 0u);
  EXPECT_NE(plan.error().message.find("layout name would start at heap offset 65535"),
            std::string::npos)
      << plan.error().message;
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// The writer plans, then writes: each descriptor is encoded once, at Add,
// and the block is laid out once per Plan, however many sinks the plan is
// written to.
// Counts the writer's steps while it is installed (kiln/internal/write_observer.h).
class WriteStepCounter {
 public:
  WriteStepCounter() : previous_(internal::SetWriteObserver(&Count)) {
    descriptor_encodes = 0;
    directory_builds = 0;
  }
  ~WriteStepCounter() { internal::SetWriteObserver(previous_); }
  WriteStepCounter(const WriteStepCounter&) = delete;
  WriteStepCounter& operator=(const WriteStepCounter&) = delete;

  static inline std::atomic<std::uint64_t> descriptor_encodes{0};
  static inline std::atomic<std::uint64_t> directory_builds{0};

 private:
  static void Count(internal::WriteStep step) {
    switch (step) {
      case internal::WriteStep::kDescriptorEncode:
        ++descriptor_encodes;
        break;
      case internal::WriteStep::kDirectoryBuild:
        ++directory_builds;
        break;
    }
  }
  internal::WriteObserver previous_;
};

TEST(WriterPlan, OneEncodePerTensorOneDirectoryBuildPerWrite) {
  const WriteStepCounter c;
  BlockWriter w;
  const std::vector<std::uint8_t> bytes(24, 1);
  for (const char* name : {"a", "b", "c"}) {
    TensorRequest r;
    r.name = name;
    r.shape = {6};
    ASSERT_TRUE(w.Add(r, Payload::Bytes(bytes)).ok());
  }
  EXPECT_EQ(c.descriptor_encodes.load(), 3u);
  EXPECT_EQ(c.directory_builds.load(), 0u);

  const Result<BlockPlan> plan = w.Plan();
  ASSERT_TRUE(plan.ok()) << plan.error().ToString();
  EXPECT_EQ(c.directory_builds.load(), 1u);
  const auto memory = plan.value().WriteToMemory();
  ASSERT_TRUE(memory.ok());
  std::uint64_t sunk = 0;
  const auto n = plan.value().WriteTo([&](std::span<const std::uint8_t> b) {
    sunk += b.size();
    return true;
  });
  ASSERT_TRUE(n.ok());
  const testing::ScratchDir dir;
  const auto file = plan.value().WriteToFile(dir / "plan.klnt");
  ASSERT_TRUE(file.ok()) << file.error().ToString();
  EXPECT_EQ(c.directory_builds.load(), 1u);  // three writes, one layout
  EXPECT_EQ(memory.value().size(), plan.value().block_length());
  EXPECT_EQ(sunk, plan.value().block_length());
  EXPECT_EQ(file.value(), plan.value().block_length());
  EXPECT_EQ(testing::ReadFile(dir / "plan.klnt"), memory.value());
  EXPECT_TRUE(Parse(memory.value()).ok());

  // Sealed again: one more layout, no more encodes.
  ASSERT_TRUE(w.Plan().ok());
  EXPECT_EQ(c.directory_builds.load(), 2u);
  EXPECT_EQ(c.descriptor_encodes.load(), 3u);  // never again after Add
}

}  // namespace
}  // namespace kiln
