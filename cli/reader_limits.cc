#include "reader_limits.h"

#include "absl/strings/str_format.h"
#include "commands.h"
#include "flags.h"

namespace kiln::cli {

std::optional<std::string> TakeLimitFlag(const std::vector<std::string>& args, std::size_t* i,
                                         const std::vector<std::string>& allowed,
                                         InputLimits* limits, bool* taken) {
  std::string why;
  const FlagParse parsed = ParsePolicyFlag(args, i, allowed, limits, &why);
  *taken = parsed != FlagParse::kNotALimit;
  if (parsed == FlagParse::kBadValue) return why;
  return std::nullopt;
}

std::optional<int> CheckBlockLength(std::uint64_t block_length, const InputLimits& limits,
                                    std::string_view who, std::ostream& err) {
  if (block_length <= limits.max_block_bytes) return std::nullopt;
  err << absl::StrFormat(
      "%s: LIMIT H7: the block would be %d bytes, more than --max-block-bytes %d\n", who,
      block_length, limits.max_block_bytes);
  return kExitInvalid;
}

}  // namespace kiln::cli
