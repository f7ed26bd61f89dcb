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

namespace kiln::cli {

enum class FlagParse {
  kNotALimit,  // args[*i] is not a limit flag: the caller handles it
  kParsed,     // a limit flag and its value: *i is on the value
  kBadValue,   // a limit flag without a decimal u64 after it: *error says so
};

// --max-tensors N, --max-name-bytes N, --max-block-bytes N: caller limits,
// exceeding one is LIMIT H7. If args[*i] is one, stores N in `limits` and
// advances *i past the flag.
[[nodiscard]] FlagParse ParseLimitFlag(const std::vector<std::string>& args, std::size_t* i,
                                       Limits* limits, std::string* error);

// The default of --idle-timeout for `kiln validate` and `kiln ingest`: a
// writer that sends nothing for this long is given up on (exit 2). What an
// upload service would set: long enough for a slow client, short enough
// that a stalled one cannot hold a worker forever.
inline constexpr std::uint64_t kDefaultIdleTimeoutSeconds = 60;
// --idle-timeout SECONDS (0: wait for ever): if args[*i] is it, stores the
// value in *seconds and advances *i past the flag. kNotALimit when it is
// another flag.
[[nodiscard]] FlagParse ParseIdleTimeoutFlag(const std::vector<std::string>& args, std::size_t* i,
                                             std::uint64_t* seconds, std::string* error);

// A decimal u64, the whole of `text`.
[[nodiscard]] bool ParseU64(std::string_view text, std::uint64_t* out);

}  // namespace kiln::cli

#endif  // KILN_CLI_FLAGS_H_
