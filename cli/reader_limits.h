// The caller limits of kiln convert and kiln pack, from the command line
// (the bounds themselves: kiln/formats/policy.h).
#ifndef KILN_CLI_READER_LIMITS_H_
#define KILN_CLI_READER_LIMITS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "kiln/formats/policy.h"

namespace kiln::cli {

// Every bound of kiln convert and kiln pack: the format's maxima
// (formats::kFormatMaxima) lowered by the limit flags (ParsePolicyFlag,
// flags.h).
using InputLimits = formats::Policy;

// Fails (exit code 1, a LIMIT H7 line on `err`) when a block of
// `block_length` bytes (BlockPlan::block_length) would exceed
// --max-block-bytes; nullopt when it fits.
[[nodiscard]] std::optional<int> CheckBlockLength(std::uint64_t block_length,
                                                  const InputLimits& limits, std::string_view who,
                                                  std::ostream& err);

}  // namespace kiln::cli

#endif  // KILN_CLI_READER_LIMITS_H_
