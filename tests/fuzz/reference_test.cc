// The independent reference checker (fuzz/reference) as an oracle: it must
// give every golden case the manifest's verdict, and it must agree with
// kiln::Parse on every golden case, every single-bit flip and every
// truncation of every valid golden case, in both modes.
#include <cstddef>
#include <cstdint>
#include <iostream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "kiln/directory.h"
#include "reference_checker.h"
#include "support/block_builder.h"
#include "support/golden.h"

namespace {

using kiln::testing::Buffer;
using kiln::testing::GoldenCase;

// A verdict in the reference's terms ("" class and rule when ok).
struct Outcome {
  bool ok = true;
  std::string error_class;
  std::string rule;

  bool operator==(const Outcome&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Outcome& o) {
  return os << (o.ok ? std::string("ok") : o.error_class + " " + o.rule);
}

Outcome Reference(const Buffer& b, bool whole) {
  const kiln_ref::Verdict v = kiln_ref::Check(b.data(), b.size(), whole);
  return Outcome{v.ok, v.error_class, v.rule};
}

Outcome Kiln(const Buffer& b, bool whole) {
  kiln::ParseOptions options;
  options.mode = whole ? kiln::Mode::kWhole : kiln::Mode::kPrefix;
  const kiln::Result<kiln::Directory> r = kiln::Parse(b, options);
  if (r.ok()) return Outcome{};
  return Outcome{false, std::string(kiln::ErrorClassName(r.error().error_class)),
                 std::string(kiln::RuleName(r.error().rule))};
}

// Compares the two on one buffer in one mode; on a disagreement, counts it
// and reports the first few in full.
class Differ {
 public:
  void Compare(const Buffer& b, bool whole, const std::string& what) {
    ++compared_;
    const Outcome ref = Reference(b, whole);
    const Outcome kiln = Kiln(b, whole);
    if (ref == kiln) return;
    if (++disagreements_ <= 25) {
      ADD_FAILURE() << what << (whole ? " [whole]" : " [prefix]") << ": reference " << ref
                    << ", kiln " << kiln;
    }
  }
  [[nodiscard]] std::size_t compared() const { return compared_; }
  [[nodiscard]] std::size_t disagreements() const { return disagreements_; }

 private:
  std::size_t compared_ = 0;
  std::size_t disagreements_ = 0;
};

class ReferenceGoldenTest : public ::testing::TestWithParam<GoldenCase> {};

// The reference gives the manifest's verdict (whole-buffer mode).
TEST_P(ReferenceGoldenTest, MatchesManifest) {
  const GoldenCase& c = GetParam();
  const Buffer bytes = kiln::testing::ReadFile(c.path);
  const Outcome ref = Reference(bytes, /*whole=*/true);
  if (c.valid()) {
    EXPECT_TRUE(ref.ok) << c.name << " (" << c.description << "): reference says " << ref;
    return;
  }
  EXPECT_FALSE(ref.ok) << c.name << " (" << c.description << ") valid to the reference";
  EXPECT_EQ(ref.error_class, c.expect) << c.name << " (" << c.description << ")";
  EXPECT_EQ(ref.rule, c.rule) << c.name << " (" << c.description << ")";
}

// The reference and kiln agree on the case as it is, in both modes.
TEST_P(ReferenceGoldenTest, AgreesWithKiln) {
  const GoldenCase& c = GetParam();
  const Buffer bytes = kiln::testing::ReadFile(c.path);
  Differ differ;
  differ.Compare(bytes, true, c.name);
  differ.Compare(bytes, false, c.name);
  EXPECT_EQ(differ.disagreements(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Golden, ReferenceGoldenTest,
                         ::testing::ValuesIn(kiln::testing::LoadManifest()),
                         [](const auto& info) { return kiln::testing::TestName(info.param); });

// Every single-bit flip of every valid golden case, in both modes.
TEST(ReferenceDifferential, EveryBitFlipOfEveryValidCase) {
  Differ differ;
  std::size_t cases = 0;
  for (const GoldenCase& c : kiln::testing::ValidCases()) {
    ++cases;
    Buffer bytes = kiln::testing::ReadFile(c.path);
    for (std::size_t byte = 0; byte < bytes.size(); ++byte) {
      for (int bit = 0; bit < 8; ++bit) {
        bytes[byte] = static_cast<std::uint8_t>(bytes[byte] ^ (1u << bit));
        std::ostringstream what;
        what << c.name << " with bit " << bit << " of byte " << byte << " flipped (bit index "
             << byte * 8 + static_cast<std::size_t>(bit) << ")";
        differ.Compare(bytes, true, what.str());
        differ.Compare(bytes, false, what.str());
        bytes[byte] = static_cast<std::uint8_t>(bytes[byte] ^ (1u << bit));
      }
    }
  }
  std::cout << "[ reference ] bit flips: " << cases << " valid cases, " << differ.compared() / 2
            << " flipped buffers, " << differ.compared() << " comparisons, "
            << differ.disagreements() << " disagreements\n";
  ::testing::Test::RecordProperty("flip_comparisons", std::to_string(differ.compared()));
  EXPECT_GT(cases, 0u);
  EXPECT_EQ(differ.disagreements(), 0u);
}

// Every truncation (every length below the full one) of every valid golden
// case, in both modes.
TEST(ReferenceDifferential, EveryTruncationOfEveryValidCase) {
  Differ differ;
  std::size_t cases = 0;
  for (const GoldenCase& c : kiln::testing::ValidCases()) {
    ++cases;
    const Buffer bytes = kiln::testing::ReadFile(c.path);
    for (std::size_t len = 0; len < bytes.size(); ++len) {
      const Buffer cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(len));
      const std::string what = c.name + " cut to " + std::to_string(len) + " bytes";
      differ.Compare(cut, true, what);
      differ.Compare(cut, false, what);
    }
  }
  std::cout << "[ reference ] truncations: " << cases << " valid cases, " << differ.compared() / 2
            << " truncated buffers, " << differ.compared() << " comparisons, "
            << differ.disagreements() << " disagreements\n";
  ::testing::Test::RecordProperty("truncation_comparisons", std::to_string(differ.compared()));
  EXPECT_GT(cases, 0u);
  EXPECT_EQ(differ.disagreements(), 0u);
}

// Above 4096 tensors the reference sorts for N5 and P1 instead of comparing
// every pair; those paths give the same verdicts.
TEST(ReferenceDifferential, ManyTensorsUseTheSortedChecks) {
  constexpr std::size_t kCount = 5000;
  kiln::testing::BlockSpec spec;
  for (std::size_t i = 0; i < kCount; ++i) {
    kiln::testing::TensorSpec t;
    t.dtype = 2;  // u8 [1]
    t.shape = {1};
    t.name = "t" + std::to_string(i);
    spec.tensors.push_back(t);
  }
  const Buffer valid = kiln::testing::Build(spec);
  EXPECT_EQ(Reference(valid, true), Outcome{});
  EXPECT_EQ(Kiln(valid, true), Outcome{});

  kiln::testing::BlockSpec duplicate = spec;
  duplicate.tensors[kCount - 1].name = "t17";
  const Buffer dup = kiln::testing::Build(duplicate);
  EXPECT_EQ(Reference(dup, true), (Outcome{false, "TYPE", "N5"}));
  EXPECT_EQ(Kiln(dup, true), (Outcome{false, "TYPE", "N5"}));

  kiln::testing::BlockSpec overlap = spec;
  overlap.tensors[kCount - 1].byte_offset = 64 * 17;
  const Buffer over = kiln::testing::Build(overlap);
  EXPECT_EQ(Reference(over, true), (Outcome{false, "TYPE", "P1"}));
  EXPECT_EQ(Kiln(over, true), (Outcome{false, "TYPE", "P1"}));
}

}  // namespace
