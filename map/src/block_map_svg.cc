// The one drawing of the block map, in four parts: the layout (where each
// region goes), the heading, the bar of regions with the mark, the legend.
#include "kiln/block_map_svg.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

namespace kiln::map {
namespace {

constexpr double kWidth = 1000;
constexpr double kLeft = 10;
constexpr double kBarTop = 60;
constexpr double kBarHeight = 60;
constexpr double kMinWidth = 1;
constexpr double kLine = 16;
constexpr std::string_view kMarkColour = "#d62728";

std::string_view Fill(RegionKind kind) {
  switch (kind) {
    case RegionKind::kHeader:
      return "#4e79a7";
    case RegionKind::kDescriptor:
      return "#76b7b2";
    case RegionKind::kNameHeap:
      return "#59a14f";
    case RegionKind::kPadding:
      return "#bab0ac";
    case RegionKind::kPayload:
      return "#f28e2b";
    case RegionKind::kGap:
      return "#edc948";
    case RegionKind::kTrailing:
      return "#b07aa1";
    case RegionKind::kMissing:
      return "#ffffff";
    case RegionKind::kUnknown:
      return "#9c755f";
  }
  return "#9c755f";
}

std::string Num(double v) {
  char buf[32];
  static_cast<void>(
      std::snprintf(buf, sizeof buf, "%.2f", v));  // at most 31 characters: cut, never overrun
  return buf;
}

std::string RangeText(const Region& r) {
  // Appended in place: "[" + std::string&& trips GCC 12's -Wrestrict at -O3.
  std::string out = "[";
  out += std::to_string(r.begin);
  out += ", ";
  out += std::to_string(r.end);
  out += ')';
  return out;
}

// Where each region goes on the bar.
struct Layout {
  bool to_scale = false;
  std::vector<double> x;
  std::vector<double> width;
  double end = kLeft;  // right edge of the last region
};

// To scale when the smallest region gets a pixel; else logarithmic sections.
Layout LayOut(const std::vector<Region>& regions) {
  std::uint64_t total = 0;
  std::uint64_t smallest = UINT64_MAX;
  for (const Region& r : regions) {
    total = std::max(total, r.end);
    smallest = std::min(smallest, r.end - r.begin);
  }
  Layout l;
  l.to_scale =
      !regions.empty() && static_cast<double>(smallest) / static_cast<double>(total) * kWidth >= 1;
  double sum = 0;
  for (const Region& r : regions) {
    const double bytes = static_cast<double>(r.end - r.begin);
    l.width.push_back(l.to_scale ? bytes : std::log2(1 + bytes));
    sum += l.width.back();
  }
  for (double& w : l.width) {
    w = std::max(kMinWidth, sum > 0 ? w / sum * kWidth : kMinWidth);
    l.x.push_back(l.end);
    l.end += w;
  }
  return l;
}

// The x of byte `offset` (the end of the bar for a byte past it).
double XOf(const BlockMap& map, const Layout& l, std::uint64_t offset) {
  for (std::size_t i = 0; i < map.regions.size(); ++i) {
    const Region& r = map.regions[i];
    if (r.begin <= offset && offset < r.end) {
      const double frac =
          static_cast<double>(offset - r.begin) / static_cast<double>(r.end - r.begin);
      return l.x[i] + frac * l.width[i];
    }
  }
  return l.end;
}

void AppendHeading(const BlockMap& map, std::string_view title, const Layout& l, double height,
                   std::string& out) {
  const double full_width = std::max(l.end, kLeft + kWidth) + kLeft;
  out += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Num(full_width) + "\" height=\"" +
         Num(height) + "\" viewBox=\"0 0 " + Num(full_width) + " " + Num(height) +
         "\" font-family=\"monospace\" font-size=\"12\">\n";
  // Without a title (the page names the file itself): no "name: " prefix.
  const std::string named = title.empty() ? std::string() : std::string(title) + ": ";
  out += "<title>" +
         XmlEscape(title.empty() ? "Kiln block map" : "Kiln block map: " + std::string(title)) +
         "</title>\n";
  out += "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  out += "<text x=\"" + Num(kLeft) + "\" y=\"20\" font-size=\"14\">" +
         XmlEscape(named + std::to_string(map.file_size) + " bytes, " +
                   (map.mark ? map.mark->verdict : std::string("ok"))) +
         "</text>\n";
  out += "<text x=\"" + Num(kLeft) + "\" y=\"42\">" +
         (l.to_scale ? std::string("drawn to scale")
                     : std::string("scaled sections: each region as wide as log2 of its size")) +
         "</text>\n";
}

void AppendRegion(const Region& r, double x, double width, std::string& out) {
  const std::string kind(RegionKindName(r.kind));
  out += "<rect class=\"region " + kind + "\" data-kind=\"" + kind + "\" data-begin=\"" +
         std::to_string(r.begin) + "\" data-end=\"" + std::to_string(r.end) + "\" x=\"" + Num(x) +
         "\" y=\"" + Num(kBarTop) + "\" width=\"" + Num(width) + "\" height=\"" + Num(kBarHeight) +
         "\" fill=\"";
  out += Fill(r.kind);
  out += "\" stroke=\"#333333\" stroke-width=\"0.5\"";
  if (r.kind == RegionKind::kMissing) out += " stroke-dasharray=\"4 2\"";
  out += "><title>" + XmlEscape(r.label + ": bytes " + RangeText(r)) + "</title></rect>\n";
}

// A red line and arrow at the deciding byte, and a line of text naming it.
void AppendMark(const Mark& m, double mx, std::string& out) {
  const std::string colour(kMarkColour);
  const std::string text = "deciding byte " + std::to_string(m.offset) + ": " + m.field;
  const double below = kBarTop + kBarHeight;
  out += "<g id=\"mark\" class=\"mark\" data-offset=\"" + std::to_string(m.offset) + "\">";
  out += "<title>" + XmlEscape(text) + "</title>";
  out += "<line x1=\"" + Num(mx) + "\" y1=\"" + Num(kBarTop - 8) + "\" x2=\"" + Num(mx) +
         "\" y2=\"" + Num(below + 8) + "\" stroke=\"" + colour + "\" stroke-width=\"3\"/>";
  out += "<polygon points=\"" + Num(mx - 6) + "," + Num(below + 20) + " " + Num(mx + 6) + "," +
         Num(below + 20) + " " + Num(mx) + "," + Num(below + 8) + "\" fill=\"" + colour + "\"/>";
  out += "<text class=\"mark-text\" x=\"" + Num(kLeft) + "\" y=\"" + Num(below + 40) +
         "\" fill=\"" + colour + "\">" + XmlEscape(text) + "</text>";
  out += "</g>\n";
}

void AppendLegend(const std::vector<Region>& regions, double top, std::string& out) {
  out += "<g class=\"legend\">\n";
  for (std::size_t i = 0; i < regions.size(); ++i) {
    const Region& r = regions[i];
    const double y = top + kLine * static_cast<double>(i);
    out += "<rect x=\"" + Num(kLeft) + "\" y=\"" + Num(y - 10) +
           "\" width=\"10\" height=\"10\" fill=\"" + std::string(Fill(r.kind)) +
           "\" stroke=\"#333333\"/><text x=\"" + Num(kLeft + 16) + "\" y=\"" + Num(y) + "\">" +
           XmlEscape(RangeText(r) + " " + std::string(RegionKindName(r.kind)) + ": " + r.label) +
           "</text>\n";
  }
  out += "</g>\n";
}

}  // namespace

// Markup characters become references. Nothing else needs XML's attention:
// text reaching here has been through base::Escape, whose output holds no
// character XML 1.0 forbids (C0 controls, U+FFFE and U+FFFF are written
// \xNN and \u{NNNN} there, as are bytes that are not UTF-8).
std::string XmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string Svg(const BlockMap& map, std::string_view title) {
  const Layout l = LayOut(map.regions);
  const double legend_top = kBarTop + kBarHeight + (map.mark ? 70 : 30);
  const double height = legend_top + kLine * static_cast<double>(map.regions.size() + 1) + 10;
  std::string out;
  AppendHeading(map, title, l, height, out);
  for (std::size_t i = 0; i < map.regions.size(); ++i) {
    AppendRegion(map.regions[i], l.x[i], l.width[i], out);
  }
  if (map.mark) AppendMark(*map.mark, XOf(map, l, map.mark->offset), out);
  AppendLegend(map.regions, legend_top, out);
  out += "</svg>\n";
  return out;
}

}  // namespace kiln::map
