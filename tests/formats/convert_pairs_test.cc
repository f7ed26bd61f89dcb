// kiln convert's choice of conversion: the three supported pairs run, every
// other pair of known formats is a usage error (exit 2) that writes nothing,
// whether the formats come from the extensions or from --from / --to.
#include <filesystem>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "test_util.h"

namespace kiln::testing_formats {
namespace {

namespace fs = std::filesystem;

struct Pair {
  const char* name;
  const char* in;   // the input file's extension (a real file of that format)
  const char* out;  // the output's extension
  int status;
};

// Every pair of kiln, safetensors and gguf: the supported ones convert
// (exit 0), the other six are refused before the input is read.
constexpr Pair kPairs[] = {
    {"SafetensorsToKiln", "safetensors", "klnt", 0},
    {"GgufToKiln", "gguf", "klnt", 0},
    {"KilnToSafetensors", "klnt", "safetensors", 0},
    {"KilnToKiln", "klnt", "klnt", 2},
    {"KilnToGguf", "klnt", "gguf", 2},
    {"SafetensorsToSafetensors", "safetensors", "safetensors", 2},
    {"SafetensorsToGguf", "safetensors", "gguf", 2},
    {"GgufToGguf", "gguf", "gguf", 2},
    {"GgufToSafetensors", "gguf", "safetensors", 2},
};

class ConvertPairTest : public ::testing::TestWithParam<Pair> {
 protected:
  // One real input per format: a mutant that sends a refused pair down a
  // supported path then converts (exit 0) or fails on the input (exit 1).
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    std::string log;
    ASSERT_EQ(RunPython("write_safetensors.py", {*dir_ / "in.safetensors"}, &log), 0) << log;
    ASSERT_EQ(RunPython("write_gguf.py", {*dir_ / "in.gguf", *dir_ / "data"}, &log), 0) << log;
    const Outcome k = Convert({*dir_ / "in.safetensors", *dir_ / "in.klnt"});
    ASSERT_EQ(k.status, 0) << k.err;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::string In(const Pair& p) { return *dir_ / (std::string("in.") + p.in); }
  static std::string Out(const Pair& p, const std::string& stem) {
    return *dir_ / (stem + "." + p.out);
  }
  static TempDir* dir_;
};

TempDir* ConvertPairTest::dir_ = nullptr;

void ExpectOutcome(const Pair& p, const Outcome& r, const std::string& out) {
  EXPECT_EQ(r.status, p.status) << r.err;
  if (p.status == 0) {
    EXPECT_TRUE(fs::exists(out)) << out;
    return;
  }
  EXPECT_NE(r.err.find("kiln convert: this conversion is not supported\n"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(fs::exists(out)) << out;
}

TEST_P(ConvertPairTest, ByExtension) {
  const Pair& p = GetParam();
  const std::string out = Out(p, std::string("ext-") + p.name);
  ExpectOutcome(p, Convert({In(p), out}), out);
}

// The same pairs named by --from and --to, on paths whose extensions say
// nothing (or say something else: the flags win).
TEST_P(ConvertPairTest, ByFlags) {
  const Pair& p = GetParam();
  const std::string named = *dir_ / (std::string("flag-in-") + p.name);
  fs::copy_file(In(p), named);
  const auto format = [](const char* ext) {
    return std::string(ext) == "klnt" ? std::string("kiln") : std::string(ext);
  };
  const std::string out = *dir_ / (std::string("flag-out-") + p.name + ".npy");
  ExpectOutcome(p, Convert({"--from", format(p.in), named, out, "--to", format(p.out)}), out);
}

INSTANTIATE_TEST_SUITE_P(Convert, ConvertPairTest, ::testing::ValuesIn(kPairs),
                         [](const ::testing::TestParamInfo<Pair>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace kiln::testing_formats
