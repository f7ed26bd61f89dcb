// kiln: validate and inspect Kiln v2 tensor directories.
#include <charconv>
#include <cstring>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "commands.h"

namespace {

using kiln::cli::kExitUsage;

constexpr std::string_view kUsage = R"(usage:
  kiln validate [options] FILE...   check each file; prints "FILE: ok" or
                                    "FILE: CLASS RULE at byte N: message"
  kiln inspect [options] FILE       print the header and the tensor table
  kiln rules [--markdown]           print the rule table
  kiln pack [--max-tensors N] [--max-block-bytes N] OUT.klnt NAME=FILE.npy...
                                    one tensor per NumPy file, in order
  kiln unpack [--force] IN.klnt DIR one .npy (or raw .bin) per tensor and
                                    DIR/index.tsv; never overwrites without --force
  kiln convert IN OUT [--from FORMAT] [--to FORMAT]
                                    safetensors -> kiln, kiln -> safetensors,
                                    gguf -> kiln; FORMAT: kiln, safetensors,
                                    gguf (default: from the extension);
                                    limits: --max-tensors N, --max-metadata-entries N,
                                    --max-header-bytes N, --max-block-bytes N
  kiln --help | --version

options:
  --json                 machine-readable output
  --prefix               the block may be followed by other bytes (default:
                         the file is exactly one block; trailing bytes are H8)
  --max-tensors N        reject (LIMIT H7) a block with more than N tensors
  --max-name-bytes N     reject (LIMIT H7) a name heap larger than N bytes
  --max-block-bytes N    reject (LIMIT H7) a block longer than N bytes

exit status: 0 every file valid, 1 some file invalid, 2 usage or I/O error
(pack, unpack, convert: 1 also when an input cannot be represented)
)";

bool ParseU64(std::string_view text, std::uint64_t* out) {
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, *out, 10);
  return ec == std::errc() && ptr == end && !text.empty();
}

int Usage(std::string_view why) {
  std::cerr << "kiln: " << why << "\n" << kUsage;
  return kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return Usage("missing command");
  const std::string_view command = argv[1];
  if (command == "--help" || command == "-h" || command == "help") {
    std::cout << kUsage;
    return 0;
  }
  if (command == "--version") {
    std::cout << "kiln " << KILN_VERSION << " (Kiln v2 tensor directory)\n";
    return 0;
  }
  const std::vector<std::string> rest(argv + 2, argv + argc);
  if (command == "pack") return kiln::cli::RunPack(rest, std::cout, std::cerr);
  if (command == "unpack") return kiln::cli::RunUnpack(rest, std::cout, std::cerr);
  if (command == "convert") return kiln::cli::RunConvert(rest, std::cout, std::cerr);
  kiln::cli::Options options;
  bool markdown = false;
  bool only_files = false;
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto value = [&](std::uint64_t* out) { return i + 1 < argc && ParseU64(argv[++i], out); };
    if (only_files || arg.empty() || arg[0] != '-' || arg == "-") {
      options.files.emplace_back(arg);
    } else if (arg == "--") {
      only_files = true;
    } else if (arg == "--json") {
      options.json = true;
    } else if (arg == "--markdown") {
      markdown = true;
    } else if (arg == "--prefix") {
      options.parse.mode = kiln::Mode::kPrefix;
    } else if (arg == "--max-tensors") {
      if (!value(&options.parse.limits.max_tensor_count)) return Usage("--max-tensors needs N");
    } else if (arg == "--max-name-bytes") {
      if (!value(&options.parse.limits.max_name_bytes)) return Usage("--max-name-bytes needs N");
    } else if (arg == "--max-block-bytes") {
      if (!value(&options.parse.limits.max_block_length)) {
        return Usage("--max-block-bytes needs N");
      }
    } else {
      return Usage("unknown option " + std::string(arg));
    }
  }
  if (command == "rules") return kiln::cli::RunRules(markdown, std::cout);
  if (options.files.empty()) return Usage("no FILE given");
  if (command == "validate") return kiln::cli::RunValidate(options, std::cout, std::cerr);
  if (command == "inspect") return kiln::cli::RunInspect(options, std::cout, std::cerr);
  return Usage("unknown command " + std::string(command));
}
