#include "block_map_svg.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

namespace kiln::cli {
namespace {

constexpr double kWidth = 1000;
constexpr double kLeft = 10;
constexpr double kBarTop = 60;
constexpr double kBarHeight = 60;
constexpr double kMinWidth = 1;
constexpr double kLine = 16;

std::string_view Fill(map::RegionKind kind) {
  switch (kind) {
    case map::RegionKind::kHeader:
      return "#4e79a7";
    case map::RegionKind::kDescriptor:
      return "#76b7b2";
    case map::RegionKind::kNameHeap:
      return "#59a14f";
    case map::RegionKind::kPadding:
      return "#bab0ac";
    case map::RegionKind::kPayload:
      return "#f28e2b";
    case map::RegionKind::kGap:
      return "#edc948";
    case map::RegionKind::kTrailing:
      return "#b07aa1";
    case map::RegionKind::kMissing:
      return "#ffffff";
    case map::RegionKind::kUnknown:
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

std::string RangeText(const map::Region& r) {
  // Appended in place: "[" + std::string&& trips GCC 12's -Wrestrict at -O3.
  std::string out = "[";
  out += std::to_string(r.begin);
  out += ", ";
  out += std::to_string(r.end);
  out += ')';
  return out;
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

std::string BlockMapSvg(const map::BlockMap& map, std::string_view title) {
  const std::vector<map::Region>& regions = map.regions;
  // To scale when the smallest region gets a pixel; else logarithmic sections.
  std::uint64_t total = 0;
  std::uint64_t smallest = UINT64_MAX;
  for (const map::Region& r : regions) {
    total = std::max(total, r.end);
    smallest = std::min(smallest, r.end - r.begin);
  }
  const bool to_scale =
      !regions.empty() && static_cast<double>(smallest) / static_cast<double>(total) * kWidth >= 1;
  std::vector<double> width(regions.size());
  double sum = 0;
  for (std::size_t i = 0; i < regions.size(); ++i) {
    const double bytes = static_cast<double>(regions[i].end - regions[i].begin);
    width[i] = to_scale ? bytes : std::log2(1 + bytes);
    sum += width[i];
  }
  std::transform(width.begin(), width.end(), width.begin(), [sum](double w) {
    return std::max(kMinWidth, sum > 0 ? w / sum * kWidth : kMinWidth);
  });
  std::vector<double> x(regions.size());
  double at = kLeft;
  for (std::size_t i = 0; i < regions.size(); ++i) {
    x[i] = at;
    at += width[i];
  }
  const double legend_top = kBarTop + kBarHeight + (map.mark ? 70 : 30);
  const double height = legend_top + kLine * static_cast<double>(regions.size() + 1) + 10;
  const double full_width = std::max(at, kLeft + kWidth) + kLeft;

  std::string out;
  out += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Num(full_width) + "\" height=\"" +
         Num(height) + "\" viewBox=\"0 0 " + Num(full_width) + " " + Num(height) +
         "\" font-family=\"monospace\" font-size=\"12\">\n";
  out += "<title>" + XmlEscape("Kiln block map: " + std::string(title)) + "</title>\n";
  out += "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  out += "<text x=\"" + Num(kLeft) + "\" y=\"20\" font-size=\"14\">" +
         XmlEscape(std::string(title) + ": " + std::to_string(map.file_size) + " bytes, " +
                   (map.mark ? map.mark->verdict : std::string("ok"))) +
         "</text>\n";
  out += "<text x=\"" + Num(kLeft) + "\" y=\"42\">" +
         (to_scale ? std::string("drawn to scale")
                   : std::string("scaled sections: each region as wide as log2 of its size")) +
         "</text>\n";
  for (std::size_t i = 0; i < regions.size(); ++i) {
    const map::Region& r = regions[i];
    const std::string kind(map::RegionKindName(r.kind));
    out += "<rect class=\"region ";
    out += kind;
    out += "\" data-kind=\"";
    out += kind;
    out += "\" data-begin=\"";
    out += std::to_string(r.begin);
    out += "\" data-end=\"";
    out += std::to_string(r.end);
    out += "\" x=\"";
    out += Num(x[i]);
    out += "\" y=\"";
    out += Num(kBarTop);
    out += "\" width=\"";
    out += Num(width[i]);
    out += "\" height=\"";
    out += Num(kBarHeight);
    out += "\" fill=\"";
    out += Fill(r.kind);
    out += "\" stroke=\"#333333\" stroke-width=\"0.5\"";
    if (r.kind == map::RegionKind::kMissing) out += " stroke-dasharray=\"4 2\"";
    out += "><title>";
    out += XmlEscape(r.label + ": bytes " + RangeText(r));
    out += "</title></rect>\n";
  }
  if (map.mark) {
    const map::Mark& m = *map.mark;
    // The region holding the byte (the end of the map for a byte past it).
    double mx = at;
    for (std::size_t i = 0; i < regions.size(); ++i) {
      const map::Region& r = regions[i];
      if (r.begin <= m.offset && m.offset < r.end) {
        const double frac =
            static_cast<double>(m.offset - r.begin) / static_cast<double>(r.end - r.begin);
        mx = x[i] + frac * width[i];
        break;
      }
    }
    const std::string text = "deciding byte " + std::to_string(m.offset) + ": " + m.field;
    out += "<g id=\"mark\" class=\"mark\" data-offset=\"" + std::to_string(m.offset) + "\">";
    out += "<title>" + XmlEscape(text) + "</title>";
    out += "<line x1=\"" + Num(mx) + "\" y1=\"" + Num(kBarTop - 8) + "\" x2=\"" + Num(mx) +
           "\" y2=\"" + Num(kBarTop + kBarHeight + 8) +
           "\" stroke=\"#d62728\" stroke-width=\"3\"/>";
    out += "<polygon points=\"" + Num(mx - 6) + "," + Num(kBarTop + kBarHeight + 20) + " " +
           Num(mx + 6) + "," + Num(kBarTop + kBarHeight + 20) + " " + Num(mx) + "," +
           Num(kBarTop + kBarHeight + 8) + "\" fill=\"#d62728\"/>";
    out += "<text x=\"" + Num(kLeft) + "\" y=\"" + Num(kBarTop + kBarHeight + 40) +
           "\" fill=\"#d62728\">" + XmlEscape(text) + "</text>";
    out += "</g>\n";
  }
  out += "<g class=\"legend\">\n";
  for (std::size_t i = 0; i < regions.size(); ++i) {
    const map::Region& r = regions[i];
    const double y = legend_top + kLine * static_cast<double>(i);
    out +=
        "<rect x=\"" + Num(kLeft) + "\" y=\"" + Num(y - 10) +
        "\" width=\"10\" height=\"10\" fill=\"" + std::string(Fill(r.kind)) +
        "\" stroke=\"#333333\"/><text x=\"" + Num(kLeft + 16) + "\" y=\"" + Num(y) + "\">" +
        XmlEscape(RangeText(r) + " " + std::string(map::RegionKindName(r.kind)) + ": " + r.label) +
        "</text>\n";
  }
  out += "</g>\n</svg>\n";
  return out;
}

}  // namespace kiln::cli
