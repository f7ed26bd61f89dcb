#include "flags.h"

#include <charconv>
#include <optional>

#include "size_arg.h"

namespace kiln::cli {

bool ParseU64(std::string_view text, std::uint64_t* out) {
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, *out, 10);
  return ec == std::errc() && ptr == end && !text.empty();
}

FlagParse ParseLimitFlag(const std::vector<std::string>& args, std::size_t* i, Limits* limits,
                         std::string* error) {
  const std::string& flag = args[*i];
  std::uint64_t* target = nullptr;
  if (flag == "--max-tensors") target = &limits->max_tensor_count;
  if (flag == "--max-name-bytes") target = &limits->max_name_bytes;
  if (flag == "--max-block-bytes") target = &limits->max_block_length;
  if (target == nullptr) return FlagParse::kNotALimit;
  // Byte counts take a K, M, G or T suffix (binary multiples); the tensor
  // count is a plain number.
  std::optional<std::uint64_t> n;
  if (*i + 1 < args.size()) {
    std::uint64_t plain = 0;
    if (target == &limits->max_tensor_count) {
      if (ParseU64(args[*i + 1], &plain)) n = plain;
    } else {
      n = ParseSize(args[*i + 1]);
    }
  }
  if (!n) {
    *error = target == &limits->max_tensor_count ? flag + " needs N"
                                                 : flag + " needs N (or N with K, M, G, T)";
    return FlagParse::kBadValue;
  }
  *target = *n;
  ++*i;
  return FlagParse::kParsed;
}

FlagParse ParseIdleTimeoutFlag(const std::vector<std::string>& args, std::size_t* i,
                               std::uint64_t* seconds, std::string* error) {
  if (args[*i] != "--idle-timeout") return FlagParse::kNotALimit;
  // At most a day: the value becomes milliseconds for poll().
  constexpr std::uint64_t kMaxSeconds = 86'400;
  std::uint64_t n = 0;
  if (*i + 1 >= args.size() || !ParseU64(args[*i + 1], &n) || n > kMaxSeconds) {
    *error = "--idle-timeout needs SECONDS (0 to 86400; 0: no timeout)";
    return FlagParse::kBadValue;
  }
  *seconds = n;
  ++*i;
  return FlagParse::kParsed;
}

}  // namespace kiln::cli
