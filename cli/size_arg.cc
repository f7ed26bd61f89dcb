#include "size_arg.h"

#include <charconv>

namespace kiln::cli {

std::optional<std::uint64_t> ParseSize(std::string_view text) {
  unsigned shift = 0;
  if (!text.empty()) {
    switch (text.back()) {
      case 'K':
      case 'k':
        shift = 10;
        break;
      case 'M':
      case 'm':
        shift = 20;
        break;
      case 'G':
      case 'g':
        shift = 30;
        break;
      case 'T':
      case 't':
        shift = 40;
        break;
      default:
        break;
    }
  }
  if (shift != 0) text.remove_suffix(1);
  std::uint64_t v = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v, 10);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  if (shift != 0 && v > (~std::uint64_t{0} >> shift)) return std::nullopt;
  return v << shift;
}

}  // namespace kiln::cli
