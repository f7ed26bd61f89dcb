// The drawing of the block map (map::Svg), which `kiln inspect --map`, the
// C ABI and the page all show: its geometry (the bar spans x = 10 to 1010,
// each region's width in proportion to its bytes when the smallest region
// gets a pixel, logarithmic otherwise, the mark at its byte's x) and, byte
// for byte, four reviewed drawings in golden/maps/ (a valid block to scale,
// a rejection with its mark, a logarithmic bar, a header that broke a
// rule). A change to the drawing is a change of those files: regenerate
// with KILN_UPDATE_MAP_GOLDEN=1 and review the diff.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/block_map.h"
#include "kiln/block_map_svg.h"
#include "kiln/directory.h"
#include "map/blocks.h"
#include "support/block_builder.h"
#include "support/paths.h"

namespace kiln::testing {
namespace {

// Tensors "ab" and "cd", the second at `second` in the payload region.
Buffer TwoAt(std::uint64_t second) {
  BlockSpec spec;
  spec.tensors.push_back(Vec(2, "ab"));
  spec.tensors.push_back(Vec(2, "cd", second));
  return Build(spec);
}

Buffer Small() { return TwoAt(64); }

Buffer Rejected() {
  Buffer b = Small();
  Put(b, Desc(1, kLength), 12, 8);  // D7
  return b;
}

// A 64 KiB gap beside 8-byte payloads: the smallest region is far below a
// pixel of a 1000-wide bar.
Buffer Logarithmic() { return TwoAt(65536); }

Buffer BadMagic() {
  Buffer b = Small();
  b[0] = 'X';
  return b;
}

struct Rect {
  std::uint64_t begin, end;
  double x, width;
};

std::vector<Rect> Rects(const std::string& svg) {
  static const std::regex re(
      "<rect class=\"region [a-z-]+\" data-kind=\"[a-z-]+\" data-begin=\"([0-9]+)\" "
      "data-end=\"([0-9]+)\" x=\"([0-9.]+)\" y=\"[0-9.]+\" width=\"([0-9.]+)\"");
  std::vector<Rect> out;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator();
       ++it) {
    out.push_back(
        {std::stoull((*it)[1]), std::stoull((*it)[2]), std::stod((*it)[3]), std::stod((*it)[4])});
  }
  return out;
}

// The bar: regions side by side from x = 10, 1000 wide in all.
void ExpectBar(const std::vector<Rect>& rects) {
  ASSERT_FALSE(rects.empty());
  EXPECT_NEAR(rects.front().x, 10, 0.01);
  for (std::size_t i = 1; i < rects.size(); ++i) {
    EXPECT_NEAR(rects[i].x, rects[i - 1].x + rects[i - 1].width, 0.02) << i;
  }
  EXPECT_NEAR(rects.back().x + rects.back().width, 1010, 0.05);
}

TEST(BlockMapSvg, ToScaleTheWidthsAreInProportionToTheBytes) {
  const Buffer b = Small();
  const std::vector<Rect> rects = Rects(map::Svg(MapOf(b), "t"));
  ExpectBar(rects);
  for (const Rect& r : rects) {
    EXPECT_NEAR(r.width,
                1000.0 * static_cast<double>(r.end - r.begin) / static_cast<double>(b.size()), 0.01)
        << r.begin;
  }
}

TEST(BlockMapSvg, BelowAPixelTheWidthsAreLogarithmic) {
  const Buffer b = Logarithmic();
  const std::vector<Rect> rects = Rects(map::Svg(MapOf(b), "t"));
  ExpectBar(rects);
  double sum = 0;
  for (const Rect& r : rects) sum += std::log2(1 + static_cast<double>(r.end - r.begin));
  for (const Rect& r : rects) {
    EXPECT_NEAR(r.width, 1000.0 * std::log2(1 + static_cast<double>(r.end - r.begin)) / sum, 0.01)
        << r.begin;
  }
}

// The mark's line stands at the x of its byte within its region.
TEST(BlockMapSvg, TheMarkStandsAtItsByte) {
  const Buffer b = Rejected();
  const map::BlockMap m = MapOf(b);
  ASSERT_TRUE(m.mark);
  const std::string svg = map::Svg(m, "t");
  const std::vector<Rect> rects = Rects(svg);
  double want = -1;
  for (const Rect& r : rects) {
    if (r.begin <= m.mark->offset && m.mark->offset < r.end) {
      want = r.x + r.width * static_cast<double>(m.mark->offset - r.begin) /
                       static_cast<double>(r.end - r.begin);
    }
  }
  ASSERT_GE(want, 10);
  std::smatch x;
  ASSERT_TRUE(
      std::regex_search(svg, x, std::regex("<g id=\"mark\"[^>]*>.*?<line x1=\"([0-9.]+)\"")))
      << svg;
  EXPECT_NEAR(std::stod(x[1]), want, 0.01);
}

// A region below a pixel of the logarithmic bar still gets one: 300 named
// one-byte tensors beside a 64 KiB gap make the bar's sum of log2 widths
// far above 1000.
TEST(BlockMapSvg, ARegionBelowAPixelGetsOne) {
  BlockSpec spec;
  for (std::uint32_t i = 0; i < 300; ++i) {
    TensorSpec t;
    t.dtype = 2;  // u8
    t.shape = {1};
    t.name = NameT(i);
    spec.tensors.push_back(t);
  }
  spec.tensors.back().byte_offset = 65536;
  const Buffer b = Build(spec);
  const map::BlockMap m = MapOf(b);
  const std::string svg = map::Svg(m, "t");
  ASSERT_NE(svg.find("scaled sections"), std::string::npos);
  const std::vector<Rect> rects = Rects(svg);
  double sum = 0;
  for (const Rect& r : rects) sum += std::log2(1 + static_cast<double>(r.end - r.begin));
  double end = 10;
  bool clamped = false;
  for (const Rect& r : rects) {
    const double w = 1000.0 * std::log2(1 + static_cast<double>(r.end - r.begin)) / sum;
    clamped = clamped || w < 1;
    EXPECT_NEAR(r.width, std::max(1.0, w), 0.01) << r.begin;
    EXPECT_NEAR(r.x, end, 0.05) << r.begin;
    end += std::max(1.0, w);
  }
  EXPECT_TRUE(clamped) << "no region fell below a pixel";
}

// To scale exactly when the smallest region is one pixel of 1000 or more:
// a 64,000-byte block whose smallest region is its 64-byte header is drawn
// to scale; one byte more and it is not.
TEST(BlockMapSvg, OnePixelIsEnoughToBeDrawnToScale) {
  for (const std::uint64_t size : {64000u, 64064u}) {
    BlockSpec spec;
    TensorSpec t;
    t.dtype = 2;  // u8, one tensor covering the payload: no gap
    t.shape = {size - 192};
    spec.tensors.push_back(t);
    const Buffer b = Build(spec);
    ASSERT_EQ(b.size(), size);
    const std::string svg = map::Svg(MapOf(b), "t");
    EXPECT_EQ(svg.find("drawn to scale") != std::string::npos, size == 64000u) << size;
  }
}

// On a logarithmic bar x is not linear in the offset: the mark stands in
// its own region, at its byte's fraction of it.
TEST(BlockMapSvg, TheMarkStandsAtItsByteOnALogarithmicBar) {
  Buffer b = Logarithmic();
  Put(b, Desc(1, kLength), 12, 8);  // D7
  const map::BlockMap m = MapOf(b);
  ASSERT_TRUE(m.mark);
  const std::string svg = map::Svg(m, "t");
  ASSERT_NE(svg.find("scaled sections"), std::string::npos);
  double want = -1;
  for (const Rect& r : Rects(svg)) {
    if (r.begin <= m.mark->offset && m.mark->offset < r.end) {
      want = r.x + r.width * static_cast<double>(m.mark->offset - r.begin) /
                       static_cast<double>(r.end - r.begin);
    }
  }
  std::smatch x;
  ASSERT_TRUE(
      std::regex_search(svg, x, std::regex("<g id=\"mark\"[^>]*>.*?<line x1=\"([0-9.]+)\"")));
  EXPECT_NEAR(std::stod(x[1]), want, 0.01);
}

// A verdict handed over by a caller (the C ABI takes one) may name a byte
// past every region: the mark is drawn at the bar's end, nothing is read
// past the regions.
TEST(BlockMapSvg, AMarkPastEveryRegionStandsAtTheBarsEnd) {
  const Buffer b = Small();
  const Result<Directory> bad = Parse(Rejected());
  ASSERT_FALSE(bad.ok());
  Error far = bad.error();
  far.offset = 1'000'000;
  const map::BlockMap m = map::Describe(b, b.size(), &far);
  const std::string svg = map::Svg(m, "t");
  const std::vector<Rect> rects = Rects(svg);
  ASSERT_FALSE(rects.empty());
  std::smatch x;
  ASSERT_TRUE(
      std::regex_search(svg, x, std::regex("<g id=\"mark\"[^>]*>.*?<line x1=\"([0-9.]+)\"")));
  EXPECT_NEAR(std::stod(x[1]), rects.back().x + rects.back().width, 0.01);
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(BlockMapSvg, ReviewedDrawings) {
  const std::string dir = std::string(::kiln::testing::GoldenDir()) + "/maps/";
  const bool update = std::getenv("KILN_UPDATE_MAP_GOLDEN") != nullptr;
  const std::vector<std::pair<std::string, Buffer>> cases = {{"valid-to-scale", Small()},
                                                             {"rejected-d7-mark", Rejected()},
                                                             {"logarithmic", Logarithmic()},
                                                             {"bad-magic", BadMagic()}};
  for (const auto& [name, bytes] : cases) {
    const std::string svg = map::Svg(MapOf(bytes), name + ".klnt");
    const std::string path = dir + name + ".svg";
    if (update) {
      std::ofstream(path, std::ios::binary) << svg;
      continue;
    }
    const std::string want = Slurp(path);
    ASSERT_FALSE(want.empty()) << path << " is missing (KILN_UPDATE_MAP_GOLDEN=1 makes it)";
    EXPECT_EQ(svg, want) << name;
  }
}

}  // namespace
}  // namespace kiln::testing
