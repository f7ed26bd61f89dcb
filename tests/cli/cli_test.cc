// The kiln command end to end: output lines, JSON, exit codes.
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "cli_run.h"
#include "commands.h"
#include "gtest/gtest.h"
#include "kiln/writer.h"
#include "support/golden.h"
#include "support/paths.h"
#include "support/temp_dir.h"
#include "support/write_block.h"

namespace kiln {
namespace {

using testing::Outcome;
using testing::Quote;

// Runs the kiln binary with args; stderr goes to /dev/null unless kept.
Outcome Kiln(const std::string& args, bool keep_stderr = false) {
  return testing::RunKiln(args, keep_stderr ? "2>&1" : "2>/dev/null");
}

std::string Case(const std::string& name) {
  return Quote(std::string(::kiln::testing::GoldenDir()) + "/cases/" + name + ".klnt");
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
  const Outcome r = Kiln("validate " + Quote(::kiln::testing::GoldenDir()), true);
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

// The report, whole: an empty block has no table (not even its head row)
// and an empty tensor list; a plain tensor's "quant" is its scheme alone, a
// quantized one's adds axis, group size and the indexes it names.
TEST(Cli, InspectReportsAreExactlyTheFields) {
  const std::string golden = std::string(::kiln::testing::GoldenDir()) + "/cases/";
  const std::string empty = golden + "kiln-v2-empty.klnt";
  EXPECT_EQ(Kiln("inspect " + Case("kiln-v2-empty")).out,
            empty +
                ": ok\nversion 2, flags 0x02 (little-endian)\ntensor_count 0, name_bytes 0, "
                "directory_bytes 0, payload_base 64, payload_bytes 0, block_length 64\n");
  EXPECT_EQ(Kiln("inspect --json " + Case("kiln-v2-empty")).out,
            "{\"file\": \"" + empty +
                "\", \"ok\": true, \"header\": {\"version\": 2, \"flags\": 2, \"tensor_count\": 0, "
                "\"name_bytes\": 0, \"payload_bytes\": 0, \"directory_bytes\": 0, "
                "\"payload_base\": 64, \"block_length\": 64}, \"tensors\": []}\n");
  const std::string quant = golden + "ok-quant-scheme2-ceil.klnt";
  const std::string name = "model.layers.0.self_attn.o_proj.weight";
  const Outcome j = Kiln("inspect --json " + Case("ok-quant-scheme2-ceil"));
  EXPECT_EQ(j.status, 0);
  EXPECT_EQ(
      j.out,
      "{\"file\": \"" + quant +
          "\", \"ok\": true, \"header\": {\"version\": 2, \"flags\": 3, \"tensor_count\": 3, "
          "\"name_bytes\": 128, \"payload_bytes\": 260, \"directory_bytes\": 512, "
          "\"payload_base\": 576, \"block_length\": 836}, \"tensors\": [\n"
          "  {\"index\": 0, \"name\": \"" +
          name +
          "\", \"dtype\": \"i4\", \"shape\": [4, 70], "
          "\"element_count\": 280, \"byte_offset\": 0, \"byte_length\": 140, \"layout\": null, "
          "\"block_size\": 0, \"quant\": {\"scheme\": 2, \"axis\": 1, \"group_size\": 32, "
          "\"scale_index\": 1, \"outer_index\": 2}},\n"
          "  {\"index\": 1, \"name\": \"" +
          name +
          "_scale\", \"dtype\": \"f8_e8m0\", "
          "\"shape\": [4, 3], \"element_count\": 12, \"byte_offset\": 192, \"byte_length\": 12, "
          "\"layout\": null, \"block_size\": 0, \"quant\": {\"scheme\": 0}},\n"
          "  {\"index\": 2, \"name\": \"" +
          name +
          "_scale_2\", \"dtype\": \"f32\", \"shape\": [], "
          "\"element_count\": 1, \"byte_offset\": 256, \"byte_length\": 4, \"layout\": null, "
          "\"block_size\": 0, \"quant\": {\"scheme\": 0}}\n]}\n");
  const Outcome t = Kiln("inspect " + Case("ok-quant-scheme2-ceil"));
  EXPECT_EQ(t.status, 0);
  EXPECT_NE(t.out.find("\nindex  name  "), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("  axis 1 group 32 scale #1 outer #2  -\n1  "), std::string::npos) << t.out;
  EXPECT_EQ(std::count(t.out.begin(), t.out.end(), '\n'), 7) << t.out;
  // One FILE: a second is refused, not ignored.
  const Outcome two = Kiln("inspect " + Case("kiln-v2-empty") + " " + Case("kiln-v2-f32"), true);
  EXPECT_EQ(two.status, 2);
  EXPECT_EQ(two.out, "kiln inspect: expects exactly one FILE\n");
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

// kiln convert takes the formats from the extensions; when one tells
// nothing, the message names that path (the input's first, when both do),
// not the pair; a pair of known formats it has no conversion for is the
// other message. Nothing is written either way.
TEST(Cli, ConvertNamesThePathWhoseExtensionTellsNoFormat) {
  testing::ScratchDir tmp;
  // Named tensors: a block safetensors can hold.
  const std::string kiln_in =
      std::string(::kiln::testing::GoldenDir()) + "/cases/ok-named-llama-layer.klnt";
  const std::string xyz_in = tmp / "in.xyz";
  std::filesystem::copy_file(kiln_in, xyz_in);
  struct Conversion {
    std::string in, out, unknown;
  };
  const Conversion cases[] = {
      {kiln_in, tmp / "out.xyz", tmp / "out.xyz"},    // the output's extension
      {xyz_in, tmp / "out.klnt", xyz_in},             // the input's
      {xyz_in, tmp / "out.bin", xyz_in},              // both: the input is named
      {kiln_in, tmp / "out", tmp / "out"},            // no extension at all
      {xyz_in, tmp / "out.safetensors.xyz", xyz_in},  // the last extension counts
  };
  for (const Conversion& c : cases) {
    const Outcome r = Kiln("convert " + Quote(c.in) + " " + Quote(c.out), true);
    EXPECT_EQ(r.status, 2) << c.in << " -> " << c.out << "\n" << r.out;
    EXPECT_NE(r.out.find("kiln convert: cannot tell the format of " + c.unknown +
                         " from its extension: give --from or --to\n"),
              std::string::npos)
        << c.in << " -> " << c.out << "\n"
        << r.out;
    EXPECT_EQ(r.out.find("not supported"), std::string::npos) << r.out;
    EXPECT_FALSE(std::filesystem::exists(c.out)) << c.out;
  }
  // The flags settle what the extensions cannot.
  const Outcome flags = Kiln(
      "convert --from kiln " + Quote(xyz_in) + " " + Quote(tmp / "o.xyz") + " --to safetensors",
      true);
  EXPECT_EQ(flags.status, 0) << flags.out;
  EXPECT_TRUE(std::filesystem::exists(tmp / "o.xyz"));
}

// inspect --json of a rejected block is one JSON object, exactly the element
// validate --json gives for the file (verdict, class, rule, offset, tensor,
// message), exit 1, for every rejected golden case.
TEST(Cli, InspectJsonOfARejectedBlockIsValidateJsonsElement) {
  int rejected = 0;
  for (const testing::GoldenCase& c : testing::LoadManifest()) {
    if (c.valid()) continue;
    ++rejected;
    const Outcome inspect = Kiln("inspect --json " + Quote(c.path));
    const Outcome validate = Kiln("validate --json " + Quote(c.path));
    EXPECT_EQ(inspect.status, 1) << c.name;
    // validate --json: "[\n  {...}\n]\n"; its one element, unindented.
    const std::size_t open = validate.out.find('{');
    const std::size_t close = validate.out.rfind('}');
    ASSERT_TRUE(open != std::string::npos && close != std::string::npos) << validate.out;
    EXPECT_EQ(inspect.out, validate.out.substr(open, close - open + 1) + "\n") << c.name;
    EXPECT_NE(inspect.out.find("\"rule\": \"" + c.rule + "\""), std::string::npos) << inspect.out;
  }
  EXPECT_GT(rejected, 100);
}

// kiln convert's arguments: a format name it does not know, and an option
// it does not know (two characters long too), are usage errors naming them,
// with nothing written; a lone "-" is a path like any other (convert reads
// files, never standard input), so a file named "-" converts.
TEST(Cli, ConvertNamesAnUnknownFormatOrOptionAndTakesDashAsAPath) {
  testing::ScratchDir tmp;
  const std::string kiln_in =
      std::string(::kiln::testing::GoldenDir()) + "/cases/ok-named-llama-layer.klnt";
  const std::string out = tmp / "o.safetensors";
  for (const std::string flag : {"--from", "--to"}) {
    const Outcome r = Kiln("convert " + flag + " nope " + Quote(kiln_in) + " " + Quote(out), true);
    EXPECT_EQ(r.status, 2) << flag << "\n" << r.out;
    EXPECT_NE(r.out.find("kiln convert: unknown format nope\n"), std::string::npos) << r.out;
    EXPECT_FALSE(std::filesystem::exists(out)) << flag;
  }
  for (const std::string option : {"-x", "-xy", "--nope"}) {
    const Outcome r = Kiln("convert " + option + " " + Quote(kiln_in) + " " + Quote(out), true);
    EXPECT_EQ(r.status, 2) << option << "\n" << r.out;
    EXPECT_NE(r.out.find("kiln convert: unknown option " + option + "\n"), std::string::npos)
        << r.out;
    EXPECT_FALSE(std::filesystem::exists(out)) << option;
  }
  std::filesystem::copy_file(kiln_in, tmp / "-");
  const std::string cmd = "cd " + Quote(tmp.path()) + " && timeout 60 " +
                          Quote(::kiln::testing::KilnBinary()) +
                          " convert --from kiln - o.safetensors 2>&1 </dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string said;
  char buf[512];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) said.append(buf, n);
  const int st = pclose(p);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << said;
  EXPECT_TRUE(std::filesystem::exists(out)) << said;
}

TEST(Cli, ConvertRefusesAPairOfKnownFormatsWithoutAConversion) {
  testing::ScratchDir tmp;
  const std::string kiln_in = std::string(::kiln::testing::GoldenDir()) + "/cases/kiln-v2-f32.klnt";
  for (const char* out : {"out.klnt", "out.gguf"}) {
    const Outcome r = Kiln("convert " + Quote(kiln_in) + " " + Quote(tmp / out), true);
    EXPECT_EQ(r.status, 2) << out << "\n" << r.out;
    EXPECT_NE(r.out.find("kiln convert: this conversion is not supported\n"), std::string::npos)
        << out << "\n"
        << r.out;
    EXPECT_EQ(r.out.find("cannot tell the format"), std::string::npos) << r.out;
    EXPECT_FALSE(std::filesystem::exists(tmp / out)) << out;
  }
}

// A NumPy file of a dtype kiln has no equivalent for (a string dtype, <U1):
// a well-formed .npy that cannot be represented in a block.
std::string StringDtypeNpy() {
  std::string header = "{'descr': '<U1', 'fortran_order': False, 'shape': (2,), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string npy = "\x93NUMPY";
  npy += '\x01';
  npy += '\x00';
  npy += static_cast<char>(header.size() & 0xFF);
  npy += static_cast<char>(header.size() >> 8);
  npy += header;
  npy += std::string("a\0\0\0b\0\0\0", 8);
  return npy;
}

// The usage text states the exit statuses; each statement is read from
// `kiln --help` and held against what runs exit with, so a wrong statement
// (or a changed status) fails here.
TEST(Cli, UsageStatesTheExitStatusesRunsGive) {
  const Outcome help = Kiln("--help");
  ASSERT_EQ(help.status, 0);
  const std::string& text = help.out;

  // "exit status: 0 every file valid, 1 some file invalid, 2 usage or I/O error"
  std::smatch line;
  ASSERT_TRUE(std::regex_search(text, line, std::regex("exit status: ([^\\n]*)\\n"))) << text;
  std::map<std::string, int> stated;
  const std::string statements = line[1].str();
  const std::regex one("(\\d+) ([^,]+)(, |$)");
  for (auto it = std::sregex_iterator(statements.begin(), statements.end(), one);
       it != std::sregex_iterator(); ++it) {
    stated[(*it)[2].str()] = std::stoi((*it)[1].str());
  }
  ASSERT_EQ(stated.size(), 3u) << statements;
  ASSERT_EQ(stated.count("every file valid"), 1u) << statements;
  ASSERT_EQ(stated.count("some file invalid"), 1u) << statements;
  ASSERT_EQ(stated.count("usage or I/O error"), 1u) << statements;
  // The line after it: "(including a report that cannot be written)".
  EXPECT_NE(text.find("usage or I/O error\n(including a report that cannot be written)\n"),
            std::string::npos)
      << text;

  const std::string valid = Case("kiln-v2-f32");
  const std::string invalid = Case("kiln-pod-list-f32");
  EXPECT_EQ(Kiln("validate " + valid).status, stated["every file valid"]);
  EXPECT_EQ(Kiln("validate " + valid + " " + Case("kiln-v2-empty")).status,
            stated["every file valid"]);
  EXPECT_EQ(Kiln("validate " + valid + " " + invalid).status, stated["some file invalid"]);
  EXPECT_EQ(Kiln("validate " + invalid).status, stated["some file invalid"]);
  const int error = stated["usage or I/O error"];
  EXPECT_EQ(Kiln("validate --bogus " + valid).status, error);     // usage
  EXPECT_EQ(Kiln("validate /nonexistent/x.klnt").status, error);  // I/O: no such file
  EXPECT_EQ(Kiln("validate " + invalid + " /nonexistent/x.klnt").status, error);
  EXPECT_EQ(testing::RunKiln("validate " + valid, "2>/dev/null >/dev/full").status, error);

  testing::ScratchDir tmp;
  // "Inputs must be regular files (a FIFO or device is refused, exit 2)."
  std::smatch fifo;
  ASSERT_TRUE(std::regex_search(text, fifo, std::regex("a FIFO or device is refused, exit (\\d+)")))
      << text;
  ASSERT_EQ(::mkfifo((tmp / "fifo.klnt").c_str(), 0600), 0);
  EXPECT_EQ(Kiln("validate " + Quote(tmp / "fifo.klnt")).status, std::stoi(fifo[1].str()));
  EXPECT_EQ(Kiln("validate /dev/zero").status, std::stoi(fifo[1].str()));

  // "(pack, unpack, convert: 1 also when an input cannot be represented)"
  std::smatch also;
  ASSERT_TRUE(std::regex_search(
      text, also, std::regex("\\(([a-z, ]+): (\\d+) also when an input cannot be represented\\)")))
      << text;
  const int unrepresentable = std::stoi(also[2].str());
  {
    std::ofstream(tmp / "s.npy", std::ios::binary) << StringDtypeNpy();
    BlockWriter w;
    static const std::uint8_t kBytes[4] = {1, 2, 3, 4};
    TensorRequest r;  // unnamed: safetensors needs a name
    r.dtype = Dtype::kU8;
    r.shape = {4};
    ASSERT_TRUE(w.Add(r, Payload::Bytes(kBytes)).ok());
    ASSERT_TRUE(testing::WriteBlockFile(w, tmp / "unnamed.klnt"));
  }
  // One input of each command that its output cannot hold. unpack writes
  // any valid block (a dtype NumPy lacks goes to a raw .bin), so what it
  // cannot represent is a block that is not one.
  struct Run {
    std::string args;
    std::string says;  // why it refused
  };
  const std::map<std::string, Run> runs = {
      {"pack",
       {"pack " + Quote(tmp / "p.klnt") + " s=" + Quote(tmp / "s.npy"),
        "npy dtype \"<U1\" is a string dtype: not supported"}},
      {"unpack", {"unpack " + invalid + " " + Quote(tmp / "dir"), ": FRAME H1 at byte 0: "}},
      {"convert",
       {"convert " + Quote(tmp / "unnamed.klnt") + " " + Quote(tmp / "o.safetensors"),
        "tensor 0 has no name, and safetensors needs one"}},
  };
  const std::string commands = also[1].str();
  std::size_t named = 0;
  const std::regex word("[a-z]+");
  for (auto it = std::sregex_iterator(commands.begin(), commands.end(), word);
       it != std::sregex_iterator(); ++it, ++named) {
    const std::string command = it->str();
    ASSERT_EQ(runs.count(command), 1u) << "no run for " << command;
    const Outcome r = Kiln(runs.at(command).args, true);
    EXPECT_EQ(r.status, unrepresentable) << command << "\n" << r.out;
    EXPECT_NE(r.out.find(runs.at(command).says), std::string::npos) << command << "\n" << r.out;
  }
  EXPECT_EQ(named, runs.size()) << commands;
  EXPECT_FALSE(std::filesystem::exists(tmp / "p.klnt"));
  EXPECT_FALSE(std::filesystem::exists(tmp / "dir"));
  EXPECT_FALSE(std::filesystem::exists(tmp / "o.safetensors"));
}

}  // namespace
}  // namespace kiln
