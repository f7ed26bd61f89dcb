// The streaming validator against Parse: the verdict contract of
// kiln/stream.h (docs/spec.md, section 5.1) on every golden case, every
// single-bit flip and every truncation of the valid ones, in whole and
// prefix mode, cut into chunks of one byte, of random sizes, at the
// validator's own checkpoints and as one chunk.
#include <algorithm>
#include <functional>
#include <random>
#include <string>

#include "gtest/gtest.h"
#include "kiln/stream.h"
#include "stream_contract.h"
#include "support/golden.h"
#include "support/paths.h"

namespace kiln {
namespace {

using testing::Buffer;

// How far the "one byte" chunking feeds single bytes.
constexpr std::uint64_t kOneByteSpan = 1536;

// The size of the next chunk, given how many bytes are left and the
// validator (for the checkpoint chunking).
using Chunker = std::function<std::size_t(std::size_t left, const StreamValidator& v)>;

struct Chunking {
  std::string name;
  Chunker next;
};

std::vector<Chunking> Chunkings(std::uint32_t seed) {
  auto rng = std::make_shared<std::minstd_rand>(seed + 1);
  return {
      {"whole", [](std::size_t left, const StreamValidator&) { return left; }},
      // One byte at a time for the first kOneByteSpan bytes (every golden
      // case's header and directory, and most whole cases), then the rest
      // at once: keeps the bit-flip test near-linear in the larger cases.
      {"one byte",
       [](std::size_t left, const StreamValidator& v) {
         return v.consumed() < kOneByteSpan ? std::size_t{1} : left;
       }},
      {"random",
       [rng](std::size_t left, const StreamValidator&) {
         // Mostly small pieces, sometimes a large one.
         const std::size_t cap = (*rng)() % 4 == 0 ? left : 97;
         return 1 + static_cast<std::size_t>((*rng)() % std::max<std::size_t>(cap, 1));
       }},
      {"checkpoints",
       [](std::size_t left, const StreamValidator& v) {
         const std::uint64_t c = v.bytes_to_checkpoint();
         return c == 0 ? left : static_cast<std::size_t>(std::min<std::uint64_t>(c, left));
       }},
  };
}

void ExpectContract(const Buffer& t, Mode mode, const std::string& what) {
  // A seed from the bytes, without wrapping (the sanitize preset's integer checks trap on it).
  std::uint32_t seed = static_cast<std::uint32_t>(t.size() % 1'000'003);
  for (const std::uint8_t b : t) seed = (seed * 31 + b) % 1'000'003;
  for (const Chunking& c : Chunkings(seed)) {
    StreamValidator v({.mode = mode, .limits = {}});
    const kiln_fuzz::StreamRun run = kiln_fuzz::RunStream(t, mode, c.next, v);
    ASSERT_EQ(kiln_fuzz::ContractBreak(t, mode, run), "")
        << what << (mode == Mode::kWhole ? " whole, " : " prefix, ") << c.name << " chunks";
  }
}

// Whole mode on the bytes; prefix mode on the bytes followed by more.
void ExpectContractBothModes(const Buffer& b, const std::string& what) {
  ExpectContract(b, Mode::kWhole, what);
  Buffer more = b;
  more.insert(more.end(), {0x4b, 0x4c, 0x4e, 0x54, 0x02, 0xEE, 0x00, 0x11});
  ExpectContract(more, Mode::kPrefix, what + " + 8 bytes");
}

TEST(Stream, EveryGoldenCase) {
  const std::vector<testing::GoldenCase> cases = testing::LoadManifest();
  ASSERT_GT(cases.size(), 100u);
  for (const testing::GoldenCase& c : cases) {
    ExpectContractBothModes(testing::ReadFile(c.path), c.name);
    if (HasFatalFailure()) return;
  }
}

TEST(Stream, EveryTruncationOfValidCases) {
  for (const testing::GoldenCase& c : testing::ValidCases()) {
    const Buffer original = testing::ReadFile(c.path);
    for (std::size_t n = 0; n < original.size(); ++n) {
      const Buffer b(original.begin(), original.begin() + static_cast<std::ptrdiff_t>(n));
      ExpectContract(b, Mode::kWhole, c.name + " cut at " + std::to_string(n));
      if (HasFatalFailure()) return;
    }
  }
}

// One test per valid case, so that ctest runs them in parallel.
class StreamBitFlips : public ::testing::TestWithParam<testing::GoldenCase> {};

TEST_P(StreamBitFlips, EveryBitFlip) {
  const Buffer original = testing::ReadFile(GetParam().path);
  for (std::size_t bit = 0; bit < original.size() * 8; ++bit) {
    Buffer b = original;
    b[bit / 8] = static_cast<std::uint8_t>(b[bit / 8] ^ (1u << (bit % 8)));
    ExpectContractBothModes(b, GetParam().name + " bit " + std::to_string(bit));
    if (HasFatalFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(ValidCases, StreamBitFlips, ::testing::ValuesIn(testing::ValidCases()),
                         [](const auto& info) { return testing::TestName(info.param); });

// Blocks back to back in prefix mode: used() says where the next one starts.
TEST(Stream, PrefixModeBlocksBackToBack) {
  const std::vector<testing::GoldenCase> valid = testing::ValidCases();
  Buffer all;
  std::vector<std::uint64_t> lengths;
  for (const testing::GoldenCase& c : valid) {
    const Buffer b = testing::ReadFile(c.path);
    all.insert(all.end(), b.begin(), b.end());
    lengths.push_back(b.size());
  }
  std::span<const std::uint8_t> rest(all);
  std::size_t blocks = 0;
  StreamValidator v({.mode = Mode::kPrefix, .limits = {}});
  while (!rest.empty()) {
    const std::span<const std::uint8_t> chunk =
        rest.first(std::min<std::size_t>(rest.size(), 1000));
    const StreamStatus s = v.Feed(chunk);
    ASSERT_NE(s, StreamStatus::kRejected) << v.error().ToString();
    rest = rest.subspan(v.used());
    if (s == StreamStatus::kComplete) {
      ASSERT_LT(blocks, lengths.size());
      EXPECT_EQ(v.consumed(), lengths[blocks]);
      ++blocks;
      v = StreamValidator({.mode = Mode::kPrefix, .limits = {}});
    }
  }
  EXPECT_EQ(blocks, valid.size());
}

// A header whose directory exceeds the caller's limits is rejected at byte
// 64, before anything else is kept.
TEST(Stream, LimitsRejectAtByte64) {
  Buffer b =
      testing::ReadFile(std::string(::kiln::testing::GoldenDir()) + "/cases/kiln-v2-f32.klnt");
  StreamValidator v({.mode = Mode::kWhole, .limits = {.max_tensors = 0}});
  EXPECT_EQ(v.Feed(b), StreamStatus::kRejected);
  EXPECT_EQ(v.consumed(), 64u);
  EXPECT_EQ(v.used(), 64u);
  EXPECT_EQ(v.error().rule, Rule::H7);
  EXPECT_EQ(v.error().error_class, ErrorClass::kLimit);
}

// A foreign file is rejected at the byte that decides it.
TEST(Stream, ForeignMagicRejectedAfterFourBytes) {
  const Buffer gguf = {'G', 'G', 'U', 'F', 3, 0, 0, 0, 0, 0, 0, 0};
  StreamValidator v;
  EXPECT_EQ(v.Feed(gguf), StreamStatus::kRejected);
  EXPECT_EQ(v.consumed(), 4u);
  EXPECT_EQ(v.error().rule, Rule::H1);
  EXPECT_EQ(v.error().ToString(), Parse(gguf).error().ToString());
}

// bytes_to_checkpoint at each point of a valid block's life, in both modes:
// the header's 64 bytes, then up to payload_base, then up to block_length;
// once complete, 1 in whole mode (one more byte would be FRAME H8) and 0 in
// prefix mode; 0 after Finish() whatever came before.
TEST(Stream, BytesToCheckpointAtEachPhase) {
  const Buffer b =
      testing::ReadFile(std::string(::kiln::testing::GoldenDir()) + "/cases/kiln-v2-f32.klnt");
  const Result<Directory> d = Parse(b);
  ASSERT_TRUE(d.ok());
  const std::uint64_t base = d.value().header().payload_base;
  ASSERT_GT(b.size(), base);  // a payload region to cross
  for (const Mode mode : {Mode::kWhole, Mode::kPrefix}) {
    StreamValidator v({.mode = mode, .limits = {}});
    EXPECT_EQ(v.bytes_to_checkpoint(), 64u);
    ASSERT_EQ(v.Feed(std::span(b).first(10)), StreamStatus::kNeedMore);
    EXPECT_EQ(v.bytes_to_checkpoint(), 54u);
    ASSERT_EQ(v.Feed(std::span(b).subspan(10, 54)), StreamStatus::kNeedMore);
    EXPECT_EQ(v.bytes_to_checkpoint(), base - 64);
    ASSERT_EQ(v.Feed(std::span(b).subspan(64, base - 64)), StreamStatus::kNeedMore);
    EXPECT_EQ(v.bytes_to_checkpoint(), b.size() - base);
    ASSERT_EQ(v.Feed(std::span(b).subspan(base)), StreamStatus::kComplete);
    EXPECT_EQ(v.bytes_to_checkpoint(), mode == Mode::kWhole ? 1u : 0u);
    ASSERT_EQ(v.Finish(), StreamStatus::kComplete);
    EXPECT_EQ(v.bytes_to_checkpoint(), 0u);
  }
  // Finished early: rejected (H8), nothing more to read.
  StreamValidator early;
  ASSERT_EQ(early.Feed(std::span(b).first(10)), StreamStatus::kNeedMore);
  ASSERT_EQ(early.Finish(), StreamStatus::kRejected);
  EXPECT_EQ(early.bytes_to_checkpoint(), 0u);
}

}  // namespace
}  // namespace kiln
