// kiln: validate and inspect Kiln v2 tensor directories.
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "commands.h"
#include "flags.h"
#include "kiln/base/mapping_guard.h"
#include "kiln/base/output_file.h"
#include "stream_input.h"

namespace {

using kiln::cli::kExitUsage;

constexpr std::string_view kUsage = R"(usage:
  kiln validate [options] FILE...   check each file; prints "FILE: ok" or
                                    "FILE: CLASS RULE at byte N: message";
                                    FILE "-" (stdin) or a pipe is validated
                                    as the bytes arrive; an http:// or
                                    https:// URL is read with range
                                    requests (only the bytes the rules
                                    read; docs/cli.md, "Remote files")
  kiln inspect [options] FILE       print the header and the tensor table
                                    (FILE may be a URL)
  kiln inspect --map FILE           the block map as SVG (a rejected block too,
                                    its deciding byte marked; exit as inspect)
  kiln rules [--markdown]           print the rule table
  kiln pack [--max-tensors N] [--max-block-bytes N] OUT.klnt NAME=FILE.npy...
                                    one tensor per NumPy file, in order
  kiln unpack [--force] [--max-*] IN.klnt DIR
                                    one .npy (or raw .bin) per tensor and
                                    DIR/index.tsv, built beside DIR and renamed
                                    into place; --force replaces DIR whole;
                                    at most 100000 tensors unless --max-tensors
  kiln ingest [--force] [--from FILE] [--no-limits] [--max-* N] OUT.klnt
                                    take an upload: read a block from stdin
                                    (or FILE), validate it as it arrives, and
                                    only if it is valid fsync and rename it to
                                    OUT (limits default to 10G, 100000 tensors)
  kiln clean [--min-age SECONDS] [--dry-run] DIR
                                    remove the temporaries (.kiln-tmp.PID.XXXXXX)
                                    a killed kiln left in DIR: only those whose
                                    process is gone, at least SECONDS old
                                    (default 3600); never follows a link
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
                         (N may end in K, M, G or T: 10G is 10 GiB)
  --idle-timeout S       validate, ingest: give up (exit 2) on a stream
                         whose writer sends nothing for S seconds
                         (default 60; 0: wait for ever); validate,
                         inspect of a URL: on a reply slower than
                         1 KiB/s for S seconds

Inputs must be regular files (a FIFO or device is refused, exit 2).

exit status: 0 every file valid, 1 some file invalid, 2 usage or I/O error
(including a report that cannot be written)
(pack, unpack, convert: 1 also when an input cannot be represented)
)";

int Usage(std::string_view why) {
  std::cerr << "kiln: " << why << "\n" << kUsage;
  return kExitUsage;
}

// Every report on stdout is checked: a failed write is exit 2, never a
// verdict with a cut report. The commands check their own output
// (FinishReport); this catches the rest (--help, --version, rules) and
// anything stdio still holds.
int Finish(std::string_view command, int status) {
  if (kiln::cli::StandardOutputClosed() && status != kExitUsage) {
    // What was printed went to the /dev/null GuardStandardDescriptors put
    // there (--help, --version, rules): lost, like a failed write.
    std::cerr << "kiln " << command << ": cannot write the output: standard output is closed\n";
    return kExitUsage;
  }
  const bool seen = !std::cout;  // the command has reported it already
  std::cout.flush();
  // Diagnostics are reports too (convert lists the metadata it cannot carry
  // on stderr): when they could not be written, the run is not a success.
  const bool err_ok = static_cast<bool>(std::cerr) && std::fflush(stderr) == 0;
  if (std::cout && std::fflush(stdout) == 0 && std::ferror(stdout) == 0) {
    return err_ok || status == kExitUsage ? status : kExitUsage;
  }
  if (!seen) std::cerr << "kiln " << command << ": cannot write the output\n";
  return kExitUsage;
}

int Run(std::string_view command, const std::vector<std::string>& rest) {
  if (command == "--help" || command == "-h" || command == "help") {
    std::cout << kUsage;
    return 0;
  }
  if (command == "--version") {
    std::cout << "kiln " << KILN_VERSION << " (Kiln v2 tensor directory)\n";
    return 0;
  }
  if (command == "pack") return kiln::cli::RunPack(rest, std::cout, std::cerr);
  if (command == "unpack") return kiln::cli::RunUnpack(rest, std::cout, std::cerr);
  if (command == "convert") return kiln::cli::RunConvert(rest, std::cout, std::cerr);
  if (command == "ingest") return kiln::cli::RunIngest(rest, std::cout, std::cerr);
  if (command == "clean") return kiln::cli::RunClean(rest, std::cout, std::cerr);
  kiln::cli::Options options;
  bool markdown = false;
  bool only_files = false;
  for (std::size_t i = 0; i < rest.size(); ++i) {
    const std::string& arg = rest[i];
    std::string why;
    if (only_files || arg.empty() || arg[0] != '-' || arg == "-") {
      options.files.emplace_back(arg);
    } else if (arg == "--") {
      only_files = true;
    } else if (arg == "--json") {
      options.json = true;
    } else if (arg == "--map") {
      options.map = true;
    } else if (arg == "--markdown") {
      markdown = true;
    } else if (arg == "--prefix") {
      options.parse.mode = kiln::Mode::kPrefix;
    } else if (const auto f = kiln::cli::ParseTimeoutOrLimitFlag(
                   rest, &i, &options.idle_timeout_seconds, &options.parse.limits, &why);
               f == kiln::cli::FlagParse::kBadValue) {
      return Usage(why);
    } else if (f == kiln::cli::FlagParse::kNotALimit) {
      return Usage("unknown option " + arg);
    }
  }
  if (command == "rules") return kiln::cli::RunRules(markdown, std::cout);
  if (options.files.empty()) return Usage("no FILE given");
  if (std::count(options.files.begin(), options.files.end(), "-") > 1) {
    return Usage("standard input (-) given more than once");  // the second read finds it empty
  }
  if (command == "validate") return kiln::cli::RunValidate(options, std::cout, std::cerr);
  if (command == "inspect") return kiln::cli::RunInspect(options, std::cout, std::cerr);
  return Usage("unknown command " + std::string(command));
}

}  // namespace

int main(int argc, char** argv) {
  kiln::cli::GuardStandardDescriptors();
  // A reader that goes away (kiln validate ... | head -1) is a failed write
  // of the report, exit 2 with a message, not a silent death by SIGPIPE.
  (void)std::signal(SIGPIPE, SIG_IGN);
  // A temporary output (.kiln-tmp.PID.XXXXXX) is removed when kiln is killed by
  // SIGINT, SIGTERM, SIGHUP or another catchable deadly signal; the signal is
  // then re-raised (not once the output is in place: NoteOutputCommitted).
  kiln::base::InstallSignalCleanup();
  // An input truncated by another process while it is mapped is an I/O
  // error (exit 2, nothing committed), not a death by SIGBUS.
  kiln::base::InstallBusGuard();
  if (argc < 2) return Usage("missing command");
  const std::string_view command = argv[1];
  return Finish(command, Run(command, std::vector<std::string>(argv + 2, argv + argc)));
}
