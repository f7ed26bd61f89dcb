// The caller limits of kiln convert and kiln pack, from the command line.
#ifndef KILN_CLI_READER_LIMITS_H_
#define KILN_CLI_READER_LIMITS_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "kiln/formats/limits.h"
#include "kiln/writer.h"

namespace kiln::cli {

struct InputLimits {
  // --max-tensors, --max-metadata-entries, --max-header-bytes. The CLI only
  // lowers max_tensors: a file with more than kMaxNamedKilnTensors tensors
  // cannot become a Kiln block.
  formats::ReaderLimits reader;
  // --max-block-bytes: the longest Kiln block to write (default: none).
  std::uint64_t max_block_bytes = std::numeric_limits<std::uint64_t>::max();
  // The same flags for a Kiln input (kiln convert IN.klnt): --max-tensors,
  // --max-block-bytes and --max-name-bytes, as kiln validate reads them.
  Limits kiln;
};

// When args[*i] is a limit flag that `allowed` lists, reads its value
// (advancing *i) and sets *taken; returns an error message when the value is
// missing or not a number, else nullopt. Values are read as the shared flag
// parser reads them (flags.h: byte counts take K, M, G, T).
[[nodiscard]] std::optional<std::string> TakeLimitFlag(const std::vector<std::string>& args,
                                                       std::size_t* i,
                                                       const std::vector<std::string>& allowed,
                                                       InputLimits* limits, bool* taken);

// Fails (exit code 1, a LIMIT H7 line on `err`) when a block of
// `block_length` bytes (BlockPlan::block_length) would exceed
// --max-block-bytes; nullopt when it fits.
[[nodiscard]] std::optional<int> CheckBlockLength(std::uint64_t block_length,
                                                  const InputLimits& limits, std::string_view who,
                                                  std::ostream& err);

}  // namespace kiln::cli

#endif  // KILN_CLI_READER_LIMITS_H_
