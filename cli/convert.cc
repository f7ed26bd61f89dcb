// kiln convert: argument handling and the metadata report.
#include "convert.h"

#include <optional>
#include <string_view>
#include <vector>

#include "absl/strings/str_format.h"
#include "commands.h"
#include "flags.h"

namespace kiln::cli {
namespace {

enum class Format { kUnknown, kKiln, kSafetensors, kGguf };

constexpr std::string_view kConvertUsage =
    "usage: kiln convert IN OUT [--from FORMAT] [--to FORMAT] [limits]\n"
    "  FORMAT is kiln, safetensors or gguf; by default the extension (.klnt, .safetensors,\n"
    "  .gguf) tells. Conversions: safetensors -> kiln, kiln -> safetensors, gguf -> kiln.\n"
    "  limits: --max-tensors N (default and most 65535), --max-block-bytes N (none; K, M,\n"
    "  G, T suffixes): a larger input or block is refused (exit 1); for safetensors and\n"
    "  gguf inputs also --max-metadata-entries N (65536), --max-header-bytes N\n"
    "  (100000000); for a kiln input also --max-name-bytes N, as for kiln validate.\n";

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

// The arguments of kiln convert, parsed one way: the limit flags through
// the one table (ParsePolicyFlag, flags.h), --from/--to, then IN and OUT.
struct ConvertArgs {
  Format from = Format::kUnknown;
  Format to = Format::kUnknown;
  std::vector<std::string> paths;  // IN, OUT
  InputLimits limits;
};

// An exit code when the arguments are wrong. The formats not given are
// taken from the extensions.
std::optional<int> ParseArgs(const std::vector<std::string>& args, ConvertArgs* a,
                             std::ostream& err) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    std::string why;
    if (const FlagParse f = ParsePolicyFlag(args, &i, {}, &a->limits, &why);
        f == FlagParse::kBadValue) {
      return ConvertUsage(err, why);
    } else if (f == FlagParse::kParsed) {
      continue;
    } else if (arg == "--from" || arg == "--to") {
      if (i + 1 == args.size()) return ConvertUsage(err, arg + " needs a FORMAT");
      const Format named = Named(args[++i]);
      if (named == Format::kUnknown) {
        return ConvertUsage(err, "unknown format " + base::Escape(args[i]));
      }
      (arg == "--from" ? a->from : a->to) = named;
    } else if (arg.size() > 1 && arg[0] == '-') {
      return ConvertUsage(err, "unknown option " + base::Escape(arg));
    } else {
      a->paths.push_back(arg);
    }
  }
  if (a->paths.size() != 2) return ConvertUsage(err, "expects IN and OUT");
  if (a->from == Format::kUnknown) a->from = OfPath(a->paths[0]);
  if (a->to == Format::kUnknown) a->to = OfPath(a->paths[1]);
  if (a->from == Format::kUnknown || a->to == Format::kUnknown) {
    return ConvertUsage(err,
                        "cannot tell the format of " +
                            base::Escape(a->from == Format::kUnknown ? a->paths[0] : a->paths[1]) +
                            " from its extension: give --from or --to");
  }
  return std::nullopt;
}

}  // namespace

void ReportDroppedMetadata(std::uint64_t count, const MetadataWalk& walk, std::ostream& err) {
  if (count == 0) return;
  err << absl::StrFormat("kiln convert: kiln has no place for metadata: %d %s not carried over:\n",
                         count, count == 1 ? "entry" : "entries");
  std::size_t shown = 0;
  walk([&](std::string_view key, std::string_view value) {
    err << "  " << base::Escape(key, kMaxShown) << "=" << base::Escape(value, kMaxShown) << "\n";
    return ++shown < kMaxReported;
  });
  if (count > shown) err << absl::StrFormat("  ... and %d more\n", count - shown);
}

int RunConvert(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ConvertArgs a;
  if (const auto code = ParseArgs(args, &a, err)) return *code;
  const Format from = a.from, to = a.to;
  const std::vector<std::string>& paths = a.paths;
  const InputLimits& limits = a.limits;
  if (from == Format::kSafetensors && to == Format::kKiln) {
    return SafetensorsToKiln(paths[0], paths[1], limits, out, err);
  }
  if (from == Format::kGguf && to == Format::kKiln) {
    return GgufToKiln(paths[0], paths[1], limits, out, err);
  }
  if (from == Format::kKiln && to == Format::kSafetensors) {
    return KilnToSafetensors(paths[0], paths[1], limits.kiln, out, err);
  }
  return ConvertUsage(err, "this conversion is not supported");
}

}  // namespace kiln::cli
