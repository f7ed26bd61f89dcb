// kiln convert: argument handling and the metadata report.
#include "convert.h"

#include <string_view>

#include "absl/strings/str_format.h"
#include "commands.h"
#include "flags.h"

namespace kiln::cli {
namespace {

enum class Format { kUnknown, kKiln, kSafetensors, kGguf };

constexpr std::string_view kConvertUsage =
    "usage: kiln convert IN OUT [--from FORMAT] [--to FORMAT] [--max-tensors N]\n"
    "                          [--max-block-bytes N] [--max-name-bytes N]\n"
    "  FORMAT is kiln, safetensors or gguf; by default the extension (.klnt, .safetensors,\n"
    "  .gguf) tells. Conversions: safetensors -> kiln, kiln -> safetensors, gguf -> kiln.\n"
    "  --max-*: limits on a kiln IN (LIMIT H7 past them), as for kiln validate.\n";

// Entries listed in the metadata report; the rest are counted.
constexpr std::size_t kMaxReported = 200;
constexpr std::size_t kMaxShown = 80;

int ConvertUsage(std::ostream& err, const std::string& why) {
  err << "kiln convert: " << why << "\n" << kConvertUsage;
  return kExitUsage;
}

Format Named(std::string_view s) {
  if (s == "kiln" || s == "klnt") return Format::kKiln;
  if (s == "safetensors") return Format::kSafetensors;
  if (s == "gguf") return Format::kGguf;
  return Format::kUnknown;
}

Format OfPath(std::string_view path) {
  const std::size_t dot = path.rfind('.');
  if (dot == std::string_view::npos || path.find('/', dot) != std::string_view::npos) {
    return Format::kUnknown;
  }
  const std::string_view ext = path.substr(dot + 1);
  if (ext == "klnt") return Format::kKiln;
  return ext == "safetensors" || ext == "gguf" ? Named(ext) : Format::kUnknown;
}

// At most `max` bytes, cut before a UTF-8 continuation byte, "..." marking a cut.
std::string Shorten(std::string_view s, std::size_t max) {
  if (s.size() <= max) return std::string(s);
  std::size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return std::string(s.substr(0, n)) + "...";
}

}  // namespace

void ReportDroppedMetadata(const std::vector<std::pair<std::string, std::string>>& entries,
                           std::ostream& err) {
  if (entries.empty()) return;
  err << absl::StrFormat("kiln convert: kiln has no place for metadata: %d %s not carried over:\n",
                         entries.size(), entries.size() == 1 ? "entry" : "entries");
  for (std::size_t i = 0; i < entries.size() && i < kMaxReported; ++i) {
    err << "  " << Printable(Shorten(entries[i].first, kMaxShown)) << "="
        << Printable(Shorten(entries[i].second, kMaxShown)) << "\n";
  }
  if (entries.size() > kMaxReported) {
    err << absl::StrFormat("  ... and %d more\n", entries.size() - kMaxReported);
  }
}

int RunConvert(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::vector<std::string> paths;
  Format from = Format::kUnknown, to = Format::kUnknown;
  Limits limits;
  bool limited = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::string why;
    if (const FlagParse f = ParseLimitFlag(args, &i, &limits, &why); f != FlagParse::kNotALimit) {
      if (f == FlagParse::kBadValue) return ConvertUsage(err, why);
      limited = true;
    } else if (a == "--from" || a == "--to") {
      if (i + 1 == args.size()) return ConvertUsage(err, a + " needs a FORMAT");
      const Format f = Named(args[++i]);
      if (f == Format::kUnknown) return ConvertUsage(err, "unknown format " + Printable(args[i]));
      (a == "--from" ? from : to) = f;
    } else if (a.size() > 1 && a[0] == '-') {
      return ConvertUsage(err, "unknown option " + Printable(a));
    } else {
      paths.push_back(a);
    }
  }
  if (paths.size() != 2) return ConvertUsage(err, "expects IN and OUT");
  if (from == Format::kUnknown) from = OfPath(paths[0]);
  if (to == Format::kUnknown) to = OfPath(paths[1]);
  if (from == Format::kUnknown || to == Format::kUnknown) {
    return ConvertUsage(err, "cannot tell the format of " +
                                 Printable(from == Format::kUnknown ? paths[0] : paths[1]) +
                                 " from its extension: give --from or --to");
  }
  if (limited && from != Format::kKiln) {
    return ConvertUsage(err, "--max-* apply to a kiln input only");
  }
  if (from == Format::kSafetensors && to == Format::kKiln) {
    return SafetensorsToKiln(paths[0], paths[1], out, err);
  }
  if (from == Format::kGguf && to == Format::kKiln) return GgufToKiln(paths[0], paths[1], out, err);
  if (from == Format::kKiln && to == Format::kSafetensors) {
    return KilnToSafetensors(paths[0], paths[1], limits, out, err);
  }
  return ConvertUsage(err, "this conversion is not supported");
}

}  // namespace kiln::cli
