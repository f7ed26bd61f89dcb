// kiln inspect --map: the block map as SVG, for a valid and a rejected block
// (exit status as inspect's), well-formed XML, the deciding byte marked, and
// a hostile tensor name escaped (no markup, no raw bidi or control byte).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <ostream>
#include <string>

#include "cli_run.h"
#include "support/block_builder.h"
#include "support/paths.h"
#include "support/temp_dir.h"

namespace kiln::testing {
namespace {

const std::string kGolden = std::string(::kiln::testing::GoldenDir()) + "/cases/";

// True when python's XML parser accepts the document.
bool WellFormed(const std::string& svg, const ScratchDir& dir) {
  const std::string path = dir / "map.svg";
  std::ofstream(path, std::ios::binary) << svg;
  const std::string cmd =
      "/usr/bin/python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' " +
      Quote(path) + " 2>/dev/null";
  return std::system(cmd.c_str()) == 0;
}

void WriteBlock(const BlockSpec& spec, const std::string& path) {
  const Buffer b = Build(spec);
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

TEST(CliBlockMap, ValidBlockIsAnSvgWithoutMark) {
  ScratchDir dir;
  const Outcome r = RunKiln("inspect --map " + Quote(kGolden + "kiln-v2-f32.klnt"), "2>/dev/null");
  EXPECT_EQ(r.status, 0);
  EXPECT_TRUE(WellFormed(r.out, dir)) << r.out;
  EXPECT_NE(r.out.find("data-kind=\"header\""), std::string::npos);
  EXPECT_NE(r.out.find("data-kind=\"payload\""), std::string::npos);
  EXPECT_EQ(r.out.find("id=\"mark\""), std::string::npos);
}

struct MarkCase {
  std::string file;
  std::string offset;
  std::string field;
};

void PrintTo(const MarkCase& c, std::ostream* os) { *os << c.file; }

class CliBlockMapRejected : public ::testing::TestWithParam<MarkCase> {};

TEST_P(CliBlockMapRejected, MarksTheDecidingByte) {
  const MarkCase& c = GetParam();
  ScratchDir dir;
  const Outcome r = RunKiln("inspect --map " + Quote(kGolden + c.file), "2>/dev/null");
  EXPECT_EQ(r.status, 1);  // as kiln inspect on an invalid block
  EXPECT_TRUE(WellFormed(r.out, dir)) << r.out;
  EXPECT_NE(r.out.find("<g id=\"mark\" class=\"mark\" data-offset=\"" + c.offset + "\">"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("deciding byte " + c.offset + ": " + c.field), std::string::npos) << r.out;
}

INSTANTIATE_TEST_SUITE_P(Golden, CliBlockMapRejected,
                         ::testing::Values(MarkCase{"d7-byte-length-short.klnt", "104",
                                                    "descriptor 0, byte_length (bytes 40..47)"},
                                           MarkCase{"h1-byte-swapped-magic.klnt", "0",
                                                    "header, magic (bytes 0..3)"},
                                           MarkCase{"d1-dtype-8-descriptor-1.klnt", "192",
                                                    "descriptor 1, dtype (bytes 0..1)"}),
                         [](const auto& info) {
                           std::string n = info.param.file.substr(0, info.param.file.find('.'));
                           for (char& ch : n) ch = (ch == '-') ? '_' : ch;
                           return n;
                         });

TEST(CliBlockMap, HostileNameIsEscaped) {
  ScratchDir dir;
  BlockSpec spec;
  TensorSpec t;
  t.name =
      "<img src=x onerror=alert(1)>\xE2\x80\xAE"
      "gpj.exe\x1b[2J";
  spec.tensors.push_back(t);
  const std::string path = dir / "hostile.klnt";
  WriteBlock(spec, path);
  const Outcome r = RunKiln("inspect --map " + Quote(path), "2>/dev/null");
  EXPECT_EQ(r.status, 0);
  EXPECT_TRUE(WellFormed(r.out, dir)) << r.out;
  EXPECT_EQ(r.out.find("<img"), std::string::npos);
  EXPECT_NE(r.out.find("&lt;img src=x onerror=alert(1)&gt;\\u{202e}gpj.exe\\x1b[2J"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("\xE2\x80\xAE"), std::string::npos);
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
}

// XML 1.0 forbids U+FFFE, U+FFFF (well-formed UTF-8, a valid name): through a
// tensor name and through the file name in <title>, the SVG still parses.
TEST(CliBlockMap, CharactersXmlForbidsAreEscaped) {
  ScratchDir dir;
  BlockSpec spec;
  TensorSpec t;
  t.name = "a\xEF\xBF\xBE\xEF\xBF\xBFz";
  spec.tensors.push_back(t);
  const std::string path = dir / "x\xEF\xBF\xBF.klnt";
  WriteBlock(spec, path);
  const Outcome r = RunKiln("inspect --map " + Quote(path), "2>/dev/null");
  EXPECT_EQ(r.status, 0);
  EXPECT_TRUE(WellFormed(r.out, dir)) << r.out;
  EXPECT_EQ(r.out.find("\xEF\xBF\xBE"), std::string::npos);
  EXPECT_EQ(r.out.find("\xEF\xBF\xBF"), std::string::npos);
  EXPECT_NE(r.out.find("a\\u{fffe}\\u{ffff}z"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("x\\u{ffff}.klnt"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace kiln::testing
