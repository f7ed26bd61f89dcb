// The subcommands of the kiln command.
#ifndef KILN_CLI_COMMANDS_H_
#define KILN_CLI_COMMANDS_H_

#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "flags.h"
#include "kiln/base/escape.h"
#include "kiln/directory.h"
#include "stream_input.h"

namespace kiln::cli {

// Exit codes: every file valid / some file invalid / usage or I/O error.
inline constexpr int kExitOk = 0;
inline constexpr int kExitInvalid = 1;
inline constexpr int kExitUsage = 2;

struct Options {
  bool json = false;
  bool map = false;  // inspect --map: the block map as SVG
  ParseOptions parse;
  // validate: a stream whose writer sends nothing this long is exit 2.
  std::uint64_t idle_timeout_seconds = kDefaultIdleTimeoutSeconds;
  std::vector<std::string> files;
};

// Validates the block read from `fd` (standard input, a pipe) as it arrives,
// with the options of `kiln validate`; `name` labels the progress line.
// `already_read` are bytes taken from `fd` before (fed first).
[[nodiscard]] StreamOutcome ValidateStream(int fd, const std::string& name, const Options& options,
                                           std::ostream& err,
                                           std::span<const std::uint8_t> already_read = {});

// kiln validate: one verdict per file; "-" and pipes are read as streams.
[[nodiscard]] int RunValidate(const Options& options, std::ostream& out, std::ostream& err);
// kiln inspect: the header and the tensor table of one file.
[[nodiscard]] int RunInspect(const Options& options, std::ostream& out, std::ostream& err);
// kiln rules: the rule table (Markdown with --markdown, else TSV).
[[nodiscard]] int RunRules(bool markdown, std::ostream& out);

// The format tools. `args` are the arguments after the command word.
// kiln pack OUT.klnt NAME=FILE.npy...: one tensor per .npy file, in order.
[[nodiscard]] int RunPack(const std::vector<std::string>& args, std::ostream& out,
                          std::ostream& err);
// kiln unpack [--force] IN.klnt DIR: one .npy (or raw .bin) file per tensor
// and DIR/index.tsv; file names are generated, never taken from the tensors.
[[nodiscard]] int RunUnpack(const std::vector<std::string>& args, std::ostream& out,
                            std::ostream& err);
// kiln ingest [options] OUT.klnt: a block from standard input (or --from
// FILE) to OUT, validated as it arrives; OUT appears only if it is valid.
[[nodiscard]] int RunIngest(const std::vector<std::string>& args, std::ostream& out,
                            std::ostream& err);
// kiln convert IN OUT [--from FORMAT] [--to FORMAT]: safetensors to kiln,
// kiln to safetensors, GGUF to kiln.
[[nodiscard]] int RunConvert(const std::vector<std::string>& args, std::ostream& out,
                             std::ostream& err);

// kiln clean [--min-age SECONDS] [--dry-run] DIR: removes the kiln
// temporaries in DIR whose process is gone (cli/clean.cc).
[[nodiscard]] int RunClean(const std::vector<std::string>& args, std::ostream& out,
                           std::ostream& err);

}  // namespace kiln::cli

#endif  // KILN_CLI_COMMANDS_H_
