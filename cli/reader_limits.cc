#include "reader_limits.h"

#include <algorithm>
#include <charconv>

#include "absl/strings/str_format.h"
#include "commands.h"

namespace kiln::cli {
namespace {

bool ParseU64(const std::string& text, std::uint64_t* out) {
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, *out, 10);
  return ec == std::errc() && ptr == end && !text.empty();
}

std::uint64_t* Field(const std::string& flag, InputLimits* limits) {
  if (flag == "--max-tensors") return &limits->reader.max_tensors;
  if (flag == "--max-metadata-entries") return &limits->reader.max_metadata_entries;
  if (flag == "--max-header-bytes") return &limits->reader.max_header_bytes;
  if (flag == "--max-block-bytes") return &limits->max_block_bytes;
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
  std::uint64_t value = 0;
  if (*i + 1 == args.size() || !ParseU64(args[*i + 1], &value)) return flag + " needs N";
  ++*i;
  *field = flag == "--max-tensors" ? std::min(value, formats::kMaxNamedKilnTensors) : value;
  return std::nullopt;
}

std::optional<int> CheckBlockLength(const BlockWriter& writer, const InputLimits& limits,
                                    std::string_view who, std::ostream& err) {
  const Result<std::uint64_t> length = writer.BlockLength();
  if (!length.ok() || length.value() <= limits.max_block_bytes) return std::nullopt;
  err << absl::StrFormat(
      "%s: LIMIT H7: the block would be %d bytes, more than --max-block-bytes %d\n", who,
      length.value(), limits.max_block_bytes);
  return kExitInvalid;
}

}  // namespace kiln::cli
