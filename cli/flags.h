// Flags shared by the commands that parse a Kiln block (validate, inspect,
// unpack): one parser, so every command spells and checks them alike.
#ifndef KILN_CLI_FLAGS_H_
#define KILN_CLI_FLAGS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/directory.h"
#include "kiln/formats/policy.h"

namespace kiln::cli {

enum class FlagParse {
  kNotALimit,  // args[*i] is not a limit flag: the caller handles it
  kParsed,     // a limit flag and its value: *i is on the value
  kBadValue,   // a limit flag without a decimal u64 after it: *error says so
};

// The limit flags, one table (flags.cc) that maps each to the bounds of a
// formats::Policy (kiln/formats/policy.h, where every bound and its default
// is described). Exceeding one is LIMIT H7 (a Kiln input) or a reader's
// LIMIT error (a foreign input).
//
// If args[*i] is a limit flag that `allowed` lists (every limit flag when
// `allowed` is empty), reads its value into `policy` and advances *i past
// the flag. Byte counts take a K, M, G or T suffix (binary multiples);
// counts are plain decimal numbers.
[[nodiscard]] FlagParse ParsePolicyFlag(const std::vector<std::string>& args, std::size_t* i,
                                        const std::vector<std::string>& allowed,
                                        formats::Policy* policy, std::string* error);

// --max-tensors N, --max-name-bytes N, --max-block-bytes N: the limits of a
// Kiln input (ParsePolicyFlag on policy.kiln alone).
[[nodiscard]] FlagParse ParseLimitFlag(const std::vector<std::string>& args, std::size_t* i,
                                       Limits* limits, std::string* error);

// The default of --idle-timeout for `kiln validate` and `kiln ingest`
// (kiln/formats/policy.h says why).
using kiln::kDefaultIdleTimeoutSeconds;
// --idle-timeout SECONDS (0: wait for ever): if args[*i] is it, stores the
// value in *seconds and advances *i past the flag. kNotALimit when it is
// another flag.
[[nodiscard]] FlagParse ParseIdleTimeoutFlag(const std::vector<std::string>& args, std::size_t* i,
                                             std::uint64_t* seconds, std::string* error);

// --idle-timeout, then the limit flags of a Kiln input (ParseLimitFlag):
// the flags kiln validate, inspect and ingest share.
[[nodiscard]] FlagParse ParseTimeoutOrLimitFlag(const std::vector<std::string>& args,
                                                std::size_t* i, std::uint64_t* seconds,
                                                Limits* limits, std::string* error);

// A decimal u64, the whole of `text`.
[[nodiscard]] bool ParseU64(std::string_view text, std::uint64_t* out);

}  // namespace kiln::cli

#endif  // KILN_CLI_FLAGS_H_
