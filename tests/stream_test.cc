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
#include "support/golden.h"

namespace kiln {
namespace {

using testing::Buffer;

// Completions longer than this are not built (a flipped bit can declare a
// block of 2^63 bytes); the decision point is still checked.
constexpr std::uint64_t kMaxCompletion = std::uint64_t{1} << 16;

// The size of the next chunk, given how many bytes are left and the
// validator (for the checkpoint chunking).
using Chunker = std::function<std::size_t(std::size_t left, const StreamValidator& v)>;

struct Chunking {
  std::string name;
  Chunker next;
};

std::vector<Chunking> Chunkings(std::uint32_t seed) {
  auto rng = std::make_shared<std::mt19937>(seed);
  return {
      {"whole", [](std::size_t left, const StreamValidator&) { return left; }},
      {"one byte", [](std::size_t, const StreamValidator&) { return std::size_t{1}; }},
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

struct Outcome {
  StreamStatus status = StreamStatus::kNeedMore;
  std::optional<Error> error;
  std::uint64_t consumed = 0;
  bool before_finish = false;  // settled by Feed, not by Finish
  std::optional<Directory> directory;
};

// Feeds `t` as the chunker cuts it. Stops at a rejection, and in prefix
// mode at completion; then Finish(). Checks the bookkeeping on the way.
Outcome Run(const Buffer& t, Mode mode, const Chunker& next, StreamValidator& v) {
  std::size_t at = 0;
  std::uint64_t used = 0;
  while (at < t.size()) {
    const std::size_t n = std::min(next(t.size() - at, v), t.size() - at);
    const StreamStatus s = v.Feed(std::span(t).subspan(at, n));
    at += n;
    used += v.used();
    EXPECT_LE(v.used(), n);
    if (s == StreamStatus::kRejected) break;
    if (s == StreamStatus::kComplete && mode == Mode::kPrefix) {
      EXPECT_EQ(v.Feed(std::span(t).subspan(at)), StreamStatus::kComplete);
      EXPECT_EQ(v.used(), 0u);
      break;
    }
  }
  Outcome o;
  o.before_finish = v.status() != StreamStatus::kNeedMore;
  o.status = v.Finish();
  EXPECT_EQ(used, v.consumed());
  o.consumed = v.consumed();
  if (o.status == StreamStatus::kRejected) o.error = v.error();
  if (o.status == StreamStatus::kComplete) o.directory = v.directory();
  return o;
}

std::string Show(const std::optional<Error>& e) { return e ? e->ToString() : "no error"; }

void ExpectSameError(const Error& got, const Error& want, const std::string& what) {
  EXPECT_EQ(got.ToString(), want.ToString()) << what;
  EXPECT_EQ(got.error_class, want.error_class) << what;
  EXPECT_EQ(got.rule, want.rule) << what;
  EXPECT_EQ(got.offset, want.offset) << what;
  EXPECT_EQ(got.tensor, want.tensor) << what;
}

// Where the contract says a rejection is decided: the header rules as soon
// as their bytes are in, the directory rules at payload_base, P2 at its
// byte, trailing bytes at the first one.
std::uint64_t DecisionPoint(const Error& e, const std::optional<HeaderInfo>& h) {
  switch (e.rule) {
    case Rule::H1:
      return 4;
    case Rule::H2:
      return 5;
    case Rule::H4:
      return 6;
    case Rule::H5:
    case Rule::P2:
      return e.offset + 1;
    case Rule::H3:
    case Rule::H6:
    case Rule::H7:
    case Rule::H9:
      return 64;
    case Rule::H8:
      return h ? h->block_length + 1 : 0;
    default:
      return h ? h->payload_base : 0;
  }
}

void ExpectSameDirectory(const Directory& got, const Directory& want, const std::string& what) {
  EXPECT_FALSE(got.has_payloads()) << what;
  ASSERT_EQ(got.tensor_count(), want.tensor_count()) << what;
  EXPECT_EQ(got.block_length(), want.block_length()) << what;
  for (std::uint32_t i = 0; i < got.tensor_count(); ++i) {
    const Tensor a = got.tensor(i), b = want.tensor(i);
    EXPECT_EQ(a.name, b.name) << what;
    EXPECT_EQ(a.layout, b.layout) << what;
    EXPECT_EQ(a.dtype, b.dtype) << what;
    EXPECT_EQ(a.shape, b.shape) << what;
    EXPECT_EQ(a.byte_offset, b.byte_offset) << what;
    EXPECT_EQ(a.byte_length, b.byte_length) << what;
    EXPECT_TRUE(a.payload.empty()) << what;
  }
}

// The stream reached block_length: the verdict is Parse's on the block.
void ExpectFullBlock(const Buffer& t, Mode mode, const HeaderInfo& h, const Outcome& o,
                     const std::string& what) {
  ParseOptions prefix;
  prefix.mode = Mode::kPrefix;
  const Result<Directory> want = Parse(t, prefix);  // the verdict on t[0, L)
  if (!want.ok()) {
    ASSERT_EQ(o.status, StreamStatus::kRejected) << what << ": want " << Show(want.error());
    ExpectSameError(*o.error, want.error(), what);
    EXPECT_TRUE(o.before_finish) << what;
    EXPECT_EQ(o.consumed, DecisionPoint(want.error(), h)) << what << ": " << Show(o.error);
    return;
  }
  if (mode == Mode::kWhole && t.size() > h.block_length) {
    ASSERT_EQ(o.status, StreamStatus::kRejected) << what;
    EXPECT_EQ(o.error->rule, Rule::H8) << what;
    EXPECT_EQ(o.error->error_class, ErrorClass::kFrame) << what;
    EXPECT_EQ(o.error->offset, h.block_length) << what;
    EXPECT_EQ(o.consumed, h.block_length + 1) << what;
    return;
  }
  ASSERT_EQ(o.status, StreamStatus::kComplete) << what << ": " << Show(o.error);
  EXPECT_EQ(o.consumed, h.block_length) << what;
  ExpectSameDirectory(*o.directory, want.value(), what);
}

// `t` zero-filled (or 0xFF-filled) to `length`.
Buffer Complete(const Buffer& t, std::uint64_t length, std::uint8_t fill) {
  Buffer c = t;
  c.resize(static_cast<std::size_t>(length), fill);
  return c;
}

// The stream ended before its block did (or before 64 bytes).
void ExpectShortStream(const Buffer& t, Mode mode, const std::optional<HeaderInfo>& h,
                       const Outcome& o, const std::string& what) {
  ASSERT_EQ(o.status, StreamStatus::kRejected) << what;
  if (!o.before_finish) {
    // Truncation: Parse's verdict on the bytes seen.
    ParseOptions options;
    options.mode = mode;
    const Result<Directory> want = Parse(t, options);
    ASSERT_FALSE(want.ok()) << what;
    ExpectSameError(*o.error, want.error(), what);
    EXPECT_EQ(o.consumed, t.size()) << what;
    // Nothing decided was missed: past the directory, the zero completion
    // is valid (every rule but P2 was decided, and P2 sees only zeros).
    if (h && t.size() >= h->payload_base && h->block_length - t.size() <= kMaxCompletion) {
      const Result<Directory> zero = Parse(Complete(t, h->block_length, 0));
      EXPECT_TRUE(zero.ok()) << what << ": missed "
                             << Show(zero.ok() ? std::nullopt : std::optional(zero.error()));
    }
    return;
  }
  // Rejected early: every completion to the declared length gets this error.
  EXPECT_EQ(o.consumed, DecisionPoint(*o.error, h)) << what << ": " << Show(o.error);
  EXPECT_LE(o.consumed, t.size()) << what;
  for (const std::uint8_t fill : {std::uint8_t{0}, std::uint8_t{0xFF}}) {
    Buffer c = Complete(t, std::max<std::uint64_t>(t.size(), 64), fill);
    const Result<HeaderInfo> ch = ReadHeader(c);
    if (ch.ok()) {
      if (ch.value().block_length - c.size() > kMaxCompletion) continue;
      c = Complete(c, ch.value().block_length, fill);
    }
    const Result<Directory> want = Parse(c);
    ASSERT_FALSE(want.ok()) << what << ": completion with " << int{fill} << " is valid";
    ExpectSameError(*o.error, want.error(), what + " (completion " + std::to_string(fill) + ")");
  }
}

void ExpectContract(const Buffer& t, Mode mode, const std::string& what) {
  const Result<HeaderInfo> hr = ReadHeader(std::span(t).first(std::min<std::size_t>(t.size(), 64)));
  std::optional<HeaderInfo> h;
  if (hr.ok()) h = hr.value();
  std::uint32_t seed = static_cast<std::uint32_t>(t.size());
  for (const std::uint8_t b : t) seed = seed * 31 + b;
  for (const Chunking& c : Chunkings(seed)) {
    StreamValidator v({.mode = mode, .limits = {}});
    const Outcome o = Run(t, mode, c.next, v);
    const std::string label =
        what + (mode == Mode::kWhole ? " whole, " : " prefix, ") + c.name + " chunks";
    if (h && t.size() >= h->block_length) {
      ExpectFullBlock(t, mode, *h, o, label);
    } else {
      ExpectShortStream(t, mode, h, o, label);
    }
    if (::testing::Test::HasFatalFailure()) return;
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

TEST(Stream, EveryBitFlipOfValidCases) {
  for (const testing::GoldenCase& c : testing::ValidCases()) {
    const Buffer original = testing::ReadFile(c.path);
    for (std::size_t bit = 0; bit < original.size() * 8; ++bit) {
      Buffer b = original;
      b[bit / 8] = static_cast<std::uint8_t>(b[bit / 8] ^ (1u << (bit % 8)));
      ExpectContractBothModes(b, c.name + " bit " + std::to_string(bit));
      if (HasFatalFailure()) return;
    }
  }
}

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
  Buffer b = testing::ReadFile(std::string(KILN_GOLDEN_DIR) + "/cases/kiln-v2-f32.klnt");
  StreamValidator v({.mode = Mode::kWhole, .limits = {.max_tensor_count = 0}});
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

}  // namespace
}  // namespace kiln
