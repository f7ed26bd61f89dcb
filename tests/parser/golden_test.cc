// Every golden case against the manifest's expected outcome: class, rule,
// byte offset and tensor.
#include <map>
#include <set>

#include "gtest/gtest.h"
#include "kiln/directory.h"
#include "support/golden.h"
#include "support/paths.h"

namespace kiln {
namespace {

using testing::GoldenCase;

class GoldenTest : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(GoldenTest, MatchesManifest) {
  const GoldenCase& c = GetParam();
  const testing::Buffer bytes = testing::ReadFile(c.path);
  const Result<Directory> r = Parse(bytes);
  if (c.valid()) {
    EXPECT_TRUE(r.ok()) << c.name << " (" << c.description << "): " << r.error().ToString();
    return;
  }
  ASSERT_FALSE(r.ok()) << c.name << " (" << c.description << ") parsed as valid";
  EXPECT_EQ(ErrorClassName(r.error().error_class), c.expect) << r.error().ToString();
  EXPECT_EQ(RuleName(r.error().rule), c.rule) << r.error().ToString();
  ASSERT_TRUE(c.offset.has_value()) << c.name << ": a negative case needs an offset";
  EXPECT_EQ(r.error().offset, *c.offset) << r.error().ToString();
  EXPECT_EQ(r.error().tensor, c.tensor) << r.error().ToString();
}

INSTANTIATE_TEST_SUITE_P(Golden, GoldenTest, ::testing::ValuesIn(testing::LoadManifest()),
                         [](const auto& info) { return testing::TestName(info.param); });

// Every rule has at least one golden negative case, and every manifest rule
// id and class is a real one that agrees with the rule list.
TEST(GoldenManifest, EveryRuleHasANegativeCase) {
  std::set<std::string> covered;
  for (const GoldenCase& c : testing::LoadManifest()) {
    if (c.valid()) {
      EXPECT_EQ(c.rule, "-") << c.name;
      EXPECT_FALSE(c.offset.has_value()) << c.name;
      EXPECT_FALSE(c.tensor.has_value()) << c.name;
      continue;
    }
    const std::optional<Rule> rule = RuleFromName(c.rule);
    ASSERT_TRUE(rule.has_value()) << c.name << ": unknown rule " << c.rule;
    EXPECT_EQ(ErrorClassName(RuleClass(*rule)), c.expect) << c.name;
    covered.insert(c.rule);
  }
  for (std::size_t i = 0; i < kRuleCount; ++i) {
    const std::string id(RuleName(static_cast<Rule>(i)));
    EXPECT_TRUE(covered.count(id)) << "no golden negative case for rule " << id;
  }
}

// The three cases the format's text names are present with their outcomes.
TEST(GoldenManifest, SpecCasesPresent) {
  std::map<std::string, std::string> want = {
      {"kiln-v2-empty", "ok"}, {"kiln-v2-f32", "ok"}, {"kiln-pod-list-f32", "FRAME"}};
  for (const GoldenCase& c : testing::LoadManifest()) {
    if (want.count(c.name)) {
      EXPECT_EQ(c.expect, want[c.name]) << c.name;
      want.erase(c.name);
    }
  }
  EXPECT_TRUE(want.empty()) << "missing: " << want.begin()->first;
  EXPECT_EQ(testing::ReadFile(std::string(::kiln::testing::GoldenDir()) + "/cases/kiln-v2-f32.klnt")
                .size(),
            200u);
  EXPECT_EQ(
      testing::ReadFile(std::string(::kiln::testing::GoldenDir()) + "/cases/kiln-v2-empty.klnt")
          .size(),
      64u);
}

// N3's message says which way the heap is wrong: a slice that starts past
// where the heap continues (a hole), one that starts before it (reordered or
// overlapping), and one that ends past name_bytes.
TEST(GoldenMessages, N3SaysHowTheHeapIsWrong) {
  const std::pair<std::string, std::string> cases[] = {
      {"n3-hole", "name starts at heap offset 6, but the heap continues at 5 (a hole)"},
      {"n3-layouts-overlap-names",
       "layout name starts at heap offset 20, but the heap continues at 21 (reordered or "
       "overlapping)"},
      {"n3-slice-past-name-bytes", "name slice [0, 7) ends past name_bytes 6"},
  };
  for (const auto& [name, message] : cases) {
    const testing::Buffer bytes =
        testing::ReadFile(std::string(testing::GoldenDir()) + "/cases/" + name + ".klnt");
    const Result<Directory> r = Parse(bytes);
    ASSERT_FALSE(r.ok()) << name;
    EXPECT_EQ(r.error().rule, Rule::N3) << name;
    EXPECT_EQ(r.error().message, message) << name;
  }
}

}  // namespace
}  // namespace kiln
