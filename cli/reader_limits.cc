#include "reader_limits.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "commands.h"
#include "flags.h"

namespace kiln::cli {
namespace {

std::uint64_t* Field(const std::string& flag, InputLimits* limits) {
  if (flag == "--max-tensors") return &limits->reader.max_tensors;
  if (flag == "--max-metadata-entries") return &limits->reader.max_metadata_entries;
  if (flag == "--max-header-bytes") return &limits->reader.max_header_bytes;
  if (flag == "--max-block-bytes") return &limits->max_block_bytes;
  if (flag == "--max-name-bytes") return &limits->kiln.max_name_bytes;
  return nullptr;
}

}  // namespace

std::optional<std::string> TakeLimitFlag(const std::vector<std::string>& args, std::size_t* i,
                                         const std::vector<std::string>& allowed,
                                         InputLimits* limits, bool* taken) {
  const std::string& flag = args[*i];
  std::uint64_t* field = Field(flag, limits);
  *taken = field != nullptr && std::find(allowed.begin(), allowed.end(), flag) != allowed.end();
  if (!*taken) return std::nullopt;
  // One parser for every command's limit flags: parse into a Limits, then
  // copy the value where this command keeps it.
  Limits parsed;
  std::string why;
  if (ParseLimitFlag(args, i, &parsed, &why) == FlagParse::kParsed) {
    *field = flag == "--max-tensors"
                 ? std::min(parsed.max_tensor_count, formats::kMaxNamedKilnTensors)
             : flag == "--max-block-bytes" ? parsed.max_block_length
             : flag == "--max-name-bytes"  ? parsed.max_name_bytes
                                           : parsed.max_block_length;
    if (flag == "--max-tensors") limits->kiln.max_tensor_count = parsed.max_tensor_count;
    if (flag == "--max-block-bytes") limits->kiln.max_block_length = parsed.max_block_length;
    return std::nullopt;
  }
  if (!why.empty()) return why;
  // --max-metadata-entries and --max-header-bytes are counts of their own.
  std::uint64_t value = 0;
  if (*i + 1 == args.size() || !ParseU64(args[*i + 1], &value)) return flag + " needs N";
  ++*i;
  *field = value;
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
