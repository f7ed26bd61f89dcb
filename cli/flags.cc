#include "flags.h"

#include <charconv>

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
  if (*i + 1 == args.size() || !ParseU64(args[*i + 1], target)) {
    *error = flag + " needs N";
    return FlagParse::kBadValue;
  }
  ++*i;
  return FlagParse::kParsed;
}

}  // namespace kiln::cli
