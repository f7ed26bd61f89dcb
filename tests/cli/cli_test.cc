// The kiln command end to end: output lines, JSON, exit codes.
#include <algorithm>
#include <string>

#include "cli_run.h"
#include "commands.h"
#include "gtest/gtest.h"
#include "support/golden.h"

namespace kiln {
namespace {

using testing::Outcome;
using testing::Quote;

// Runs the kiln binary with args; stderr goes to /dev/null unless kept.
Outcome Kiln(const std::string& args, bool keep_stderr = false) {
  return testing::RunKiln(args, keep_stderr ? "2>&1" : "2>/dev/null");
}

std::string Case(const std::string& name) {
  return Quote(std::string(KILN_GOLDEN_DIR) + "/cases/" + name + ".klnt");
}

TEST(Cli, ValidFileIsOk) {
  const Outcome r = Kiln("validate " + Case("kiln-v2-f32"));
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("kiln-v2-f32.klnt: ok\n"), std::string::npos) << r.out;
}

TEST(Cli, InvalidFileNamesClassRuleAndOffset) {
  const Outcome r = Kiln("validate " + Case("kiln-pod-list-f32") + " " + Case("kiln-v2-empty"));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("kiln-pod-list-f32.klnt: FRAME H1 at byte 0: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("kiln-v2-empty.klnt: ok"), std::string::npos) << r.out;
}

TEST(Cli, MissingFileIsExit2AndOthersStillChecked) {
  const Outcome r = Kiln("validate /nonexistent/x.klnt " + Case("kiln-v2-f32"), true);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("/nonexistent/x.klnt: cannot open"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("kiln-v2-f32.klnt: ok"), std::string::npos) << r.out;
}

TEST(Cli, DirectoryIsAnIoError) {
  const Outcome r = Kiln("validate " + Quote(KILN_GOLDEN_DIR), true);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("not a regular file"), std::string::npos) << r.out;
}

TEST(Cli, JsonArray) {
  const Outcome r =
      Kiln("validate --json " + Case("kiln-v2-f32") + " " + Case("kiln-pod-list-f32"));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out.front(), '[');
  EXPECT_NE(r.out.find(R"("ok": true)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(R"("class": "FRAME", "rule": "H1", "offset": 0)"), std::string::npos)
      << r.out;
}

TEST(Cli, InspectPrintsTheTable) {
  const Outcome r = Kiln("inspect " + Case("kiln-v2-f32"));
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("block_length 200"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("f32    [2]"), std::string::npos) << r.out;
  const Outcome j = Kiln("inspect --json " + Case("kiln-v2-f32"));
  EXPECT_EQ(j.status, 0);
  EXPECT_NE(j.out.find(R"("dtype": "f32", "shape": [2], "element_count": 2)"), std::string::npos)
      << j.out;
}

TEST(Cli, RulesTableHasEveryRule) {
  const Outcome r = Kiln("rules");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 37);
}

TEST(Cli, UsageErrorsExit2) {
  EXPECT_EQ(Kiln("").status, 2);
  EXPECT_EQ(Kiln("validate").status, 2);
  EXPECT_EQ(Kiln("validate --bogus x").status, 2);
  EXPECT_EQ(Kiln("frobnicate x").status, 2);
  EXPECT_EQ(Kiln("validate --max-tensors abc x").status, 2);
}

TEST(Cli, CallerLimitIsLimitH7) {
  const Outcome r = Kiln("validate --max-block-bytes 199 " + Case("kiln-v2-f32"));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("LIMIT H7 at byte 16"), std::string::npos) << r.out;
}

// Names are printed so that they cannot drive or disguise the terminal
// (base::Escape; every category in escape_test.cc).
TEST(Cli, PrintableEscapesControlsAndBidi) {
  EXPECT_EQ(base::Escape("a\x1b[31mb"), "a\\x1b[31mb");
  EXPECT_EQ(base::Escape("x\xc2\x9by"), "x\\u{009b}y");
  EXPECT_EQ(base::Escape("evil\u202egpj.exe"), "evil\\u{202e}gpj.exe");
  EXPECT_EQ(base::Escape("caf\xc3\xa9 \xce\xb1"), "caf\xc3\xa9 \xce\xb1");
}

// The command agrees with the manifest on every golden case, in one run.
TEST(Cli, EveryGoldenCaseMatchesTheManifest) {
  const std::vector<testing::GoldenCase> cases = testing::LoadManifest();
  ASSERT_FALSE(cases.empty());
  std::string args = "validate";
  for (const auto& c : cases) args += " " + Quote(c.path);
  const Outcome r = Kiln(args);
  EXPECT_EQ(r.status, 1);
  for (const auto& c : cases) {
    const std::string want =
        c.path + ": " + (c.valid() ? std::string("ok\n") : c.expect + " " + c.rule + " at byte ");
    EXPECT_NE(r.out.find(want), std::string::npos) << c.name << ": expected " << want;
  }
}

}  // namespace
}  // namespace kiln
