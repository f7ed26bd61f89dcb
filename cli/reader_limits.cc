#include "reader_limits.h"

#include "absl/strings/str_format.h"
#include "commands.h"

namespace kiln::cli {

std::optional<int> CheckBlockLength(std::uint64_t block_length, const InputLimits& limits,
                                    std::string_view who, std::ostream& err) {
  if (block_length <= limits.max_block_bytes) return std::nullopt;
  err << absl::StrFormat(
      "%s: LIMIT H7: the block would be %d bytes, more than --max-block-bytes %d\n", who,
      block_length, limits.max_block_bytes);
  return kExitInvalid;
}

}  // namespace kiln::cli
