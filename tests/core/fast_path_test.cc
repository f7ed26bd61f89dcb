// The fast paths of Parse never change a verdict. For every golden case and
// every single-bit flip of the valid ones, Parse agrees (rule, offset,
// tensor) with running each rule group's full check in the specified order,
// and the plain-descriptor fast path accepts only descriptors that the
// per-rule descriptor check accepts.
#include <algorithm>
#include <vector>

#include "gtest/gtest.h"
#include "kiln/directory.h"
#include "kiln/dtype.h"
#include "kiln/internal/plain_descriptor.h"
#include "kiln/internal/rules.h"
#include "support/colliding_names.h"
#include "support/golden.h"
#include "support/rule_walks.h"

namespace kiln {
namespace {

using internal::Check;
using testing::Buffer;

internal::RawDescriptor Decode(internal::Bytes block, std::uint32_t i) {
  return internal::DecodeDescriptor(internal::DescriptorAt(block, i));
}

// The plain-descriptor fast path as Parse calls it for this block.
bool PlainOk(const internal::RawDescriptor& d, const HeaderInfo& h) {
  return h.has_names() ? internal::PlainFieldsOk<true>(d, h) : internal::PlainFieldsOk<false>(d, h);
}

// Every rule group in order, with no fast path and no shortcut.
Check CheckRuleByRule(const Buffer& b) {
  const Result<HeaderInfo> hr = internal::CheckHeader(b, Limits{});
  if (!hr.ok()) return hr.error();
  const HeaderInfo& h = hr.value();
  if (Check e = internal::CheckFraming(b, h, Mode::kWhole)) return e;
  const internal::Bytes block = std::span(b).first(h.block_length);
  for (std::uint32_t i = 0; i < h.tensor_count; ++i) {
    if (Check e = internal::CheckFields(Decode(block, i), i, h)) return e;
  }
  internal::Scratch scratch({});
  if (Check e = internal::CheckHeapOrder(block, h)) return e;
  if (Check e = internal::CheckHeapUtf8(block, h)) return e;
  if (Check e = internal::CheckUniqueNames(block, h, scratch)) return e;
  if (Check e = internal::CheckScales(block, h)) return e;
  return internal::CheckPayloads(block, h, scratch);
}

// N5's sorting fallback (taken when crafted names exhaust the hash table's
// probe budget) gives the same verdict as the table.
TEST(FastPath, N5SortFallbackSameVerdict) {
  std::size_t named = 0;
  for (const testing::GoldenCase& c : testing::LoadManifest()) {
    const Buffer b = testing::ReadFile(c.path);
    const Result<HeaderInfo> hr = internal::CheckHeader(b, Limits{});
    if (!hr.ok() || internal::CheckFraming(b, hr.value(), Mode::kWhole)) continue;
    const internal::Bytes block = std::span(b).first(hr.value().block_length);
    // CheckUniqueNames's precondition: every descriptor rule and N3 held.
    bool descriptors_ok = true;
    for (std::uint32_t i = 0; i < hr.value().tensor_count && descriptors_ok; ++i) {
      descriptors_ok = !internal::CheckFields(Decode(block, i), i, hr.value()).has_value();
    }
    if (!descriptors_ok || internal::CheckHeapOrder(block, hr.value())) continue;
    internal::Scratch s1({}), s2({});
    const Check table = internal::CheckUniqueNames(block, hr.value(), s1);
    const Check sorted = internal::CheckUniqueNames(block, hr.value(), s2, 0);
    ASSERT_EQ(table.has_value(), sorted.has_value()) << c.name;
    if (table) {
      EXPECT_EQ(table->tensor, sorted->tensor) << c.name;
      EXPECT_EQ(table->message, sorted->message) << c.name;
    }
    named += hr.value().has_names() ? 1 : 0;
  }
  EXPECT_GT(named, 10u);
}

// The sorting fallback compares every neighbour, the first pair included.
// Forty names that collide in the table's first group (past its probe
// budget, so the fallback decides before the repeat is reached), the
// smallest of them twice, as the last two tensors: sorted, the repeat is the
// first pair.
TEST(FastPath, N5SortFallbackFindsARepeatThatSortsFirst) {
  constexpr std::uint32_t kN = 40;
  std::vector<std::string> names = testing::CollidingNames(kN - 1, kN);
  std::iter_swap(names.end() - 1, std::min_element(names.begin(), names.end()));
  names.push_back(names.back());
  testing::BlockSpec spec;
  for (const std::string& name : names) {
    testing::TensorSpec t;
    t.name = name;
    spec.tensors.push_back(t);
  }
  const Buffer block = testing::Build(spec);
  const Result<HeaderInfo> h = internal::CheckHeader(block, Limits{});
  ASSERT_TRUE(h.ok());
  internal::Scratch table_scratch({}), sort_scratch({});
  const Check table = internal::CheckUniqueNames(block, h.value(), table_scratch);
  const Check sorted = internal::CheckUniqueNames(block, h.value(), sort_scratch, 0);
  ASSERT_TRUE(table.has_value());
  ASSERT_TRUE(sorted.has_value());
  EXPECT_EQ(sorted->rule, Rule::N5);
  EXPECT_EQ(sorted->tensor, kN - 1);
  EXPECT_EQ(sorted->message, table->message);
}

struct Tally {
  std::size_t fast_accepts = 0;
};

void ExpectSameVerdict(const Buffer& b, const std::string& what, Tally& tally) {
  const Result<Directory> fast = Parse(b);
  const Check slow = CheckRuleByRule(b);
  ASSERT_EQ(fast.ok(), !slow.has_value())
      << what << ": Parse " << (fast.ok() ? "ok" : fast.error().ToString()) << ", rule by rule "
      << (slow ? slow->ToString() : "ok");
  if (slow) {
    EXPECT_EQ(fast.error().rule, slow->rule) << what;
    EXPECT_EQ(fast.error().offset, slow->offset) << what;
    EXPECT_EQ(fast.error().tensor, slow->tensor) << what;
  }
  // The plain fast path on each descriptor of a framed block.
  const Result<HeaderInfo> hr = internal::CheckHeader(b, Limits{});
  if (!hr.ok() || internal::CheckFraming(b, hr.value(), Mode::kWhole)) return;
  const internal::Bytes block = std::span(b).first(hr.value().block_length);
  for (std::uint32_t i = 0; i < hr.value().tensor_count; ++i) {
    const internal::DescriptorBytes bytes = internal::DescriptorAt(block, i);
    const internal::RawDescriptor d = internal::DecodeDescriptor(bytes);
    // The one decode loses nothing: encoding it gives back the 128 bytes.
    const auto again = internal::EncodeDescriptor(d);
    ASSERT_TRUE(std::equal(again.begin(), again.end(), bytes.begin()))
        << what << ": descriptor " << i << " does not survive decode then encode";
    const bool plain = PlainOk(d, hr.value());
    if (!plain) {
      // It takes every valid descriptor of a fixed-width dtype with no
      // layout and no quantisation (but a shape with a zero dimension whose
      // other dimensions' product overflows: its loop stops at the
      // overflow): a verdict never rests on that, but one it sends to
      // CheckFields is the slow path taken for nothing.
      const DtypeInfo* info = FindDtype(d.dtype);
      std::uint64_t product = 1;
      bool overflows = false;
      for (std::size_t k = 0; k < d.rank && k < d.shape.size(); ++k) {
        if (d.shape[k] != 0) overflows |= __builtin_mul_overflow(product, d.shape[k], &product);
      }
      if (info != nullptr && info->bits != 0 && d.layout_len == 0 && d.quant_scheme == 0 &&
          !overflows) {
        EXPECT_TRUE(internal::CheckFields(d, i, hr.value()).has_value())
            << what << ": the fast path passed on plain valid descriptor " << i;
      }
      continue;
    }
    ++tally.fast_accepts;
    const Check e = internal::CheckFields(d, i, hr.value());
    ASSERT_FALSE(e.has_value()) << what << ": fast path accepted descriptor " << i << " that fails "
                                << e->ToString();
    EXPECT_FALSE(d.layout_len != 0 || d.quant_scheme != 0);
  }
}

TEST(FastPath, EveryGoldenCaseSameVerdict) {
  Tally tally;
  for (const testing::GoldenCase& c : testing::LoadManifest()) {
    ExpectSameVerdict(testing::ReadFile(c.path), c.name, tally);
  }
  EXPECT_GT(tally.fast_accepts, 100u);  // the fast path is really taken
}

TEST(FastPath, EveryBitFlipOfValidCasesSameVerdict) {
  Tally tally;
  for (const testing::GoldenCase& c : testing::ValidCases()) {
    const Buffer original = testing::ReadFile(c.path);
    for (std::size_t bit = 0; bit < original.size() * 8; ++bit) {
      Buffer b = original;
      b[bit / 8] = static_cast<std::uint8_t>(b[bit / 8] ^ (1u << (bit % 8)));
      ExpectSameVerdict(b, c.name + " bit " + std::to_string(bit), tally);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
  EXPECT_GT(tally.fast_accepts, 1000u);
}

// Dtype codes in every descriptor of a valid case that the fast path takes:
// each code below 256 (the table, its gaps, the codes just past its end at
// 32), each single high bit (the opaque 0x8000 among them), 0x7fff, 0x8001
// and 0xffff give Parse's verdict, also on a tensor of no elements (whose
// byte_length 0 fits any width), and the ones of the same width are still
// taken by the fast path.
TEST(FastPath, EveryDtypeCodeSameVerdict) {
  std::vector<std::uint16_t> codes;
  for (std::uint16_t code = 0; code < 256; ++code) codes.push_back(code);
  for (int bit = 8; bit < 16; ++bit) codes.push_back(static_cast<std::uint16_t>(1u << bit));
  codes.insert(codes.end(), {0x7fff, 0x8001, 0xffff});
  Tally tally;
  std::size_t same_width = 0;
  std::size_t empty = 0;
  for (const testing::GoldenCase& c : testing::ValidCases()) {
    const Buffer original = testing::ReadFile(c.path);
    const Result<HeaderInfo> hr = internal::CheckHeader(original, Limits{});
    ASSERT_TRUE(hr.ok()) << c.name;
    const internal::Bytes block = std::span(original).first(hr.value().block_length);
    for (std::uint32_t i = 0; i < hr.value().tensor_count; ++i) {
      const internal::RawDescriptor plain = Decode(block, i);
      if (!PlainOk(plain, hr.value())) continue;
      if (plain.byte_length == 0) ++empty;
      const std::size_t at =
          static_cast<std::size_t>(internal::DescriptorAt(block, i).data() - block.data());
      for (const std::uint16_t code : codes) {
        internal::RawDescriptor d = plain;
        d.dtype = code;
        const auto bytes = internal::EncodeDescriptor(d);
        Buffer b = original;
        std::copy(bytes.begin(), bytes.end(), b.begin() + static_cast<std::ptrdiff_t>(at));
        const std::string what =
            c.name + " descriptor " + std::to_string(i) + " dtype " + std::to_string(code);
        ExpectSameVerdict(b, what, tally);
        if (::testing::Test::HasFatalFailure()) return;
        // Another dtype of the same width: still valid, still taken.
        const DtypeInfo* info = FindDtype(code);
        if (code != plain.dtype && info != nullptr && info->bits == FindDtype(plain.dtype)->bits) {
          ++same_width;
          EXPECT_TRUE(PlainOk(d, hr.value())) << what;
        }
      }
    }
  }
  EXPECT_GT(empty, 0u);       // some tensor of no elements was among them
  EXPECT_GT(same_width, 0u);  // and some other dtype of the same width
}

}  // namespace
}  // namespace kiln
