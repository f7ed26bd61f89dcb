#include "kiln/base/format.h"

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace kiln::base::format_internal {
namespace {

void AppendNumber(std::string* out, std::uint64_t value, int base, std::size_t width) {
  char digits[24];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof(digits), value, base);
  static_cast<void>(ec);  // 24 digits hold any u64 in base 10 or 16
  const auto length = static_cast<std::size_t>(end - digits);
  if (length < width) out->append(width - length, '0');
  out->append(digits, length);
}

}  // namespace

void Append(std::string* out, std::string_view fmt, std::span<const Arg> args) {
  std::size_t next = 0;
  std::size_t i = 0;
  while (i < fmt.size()) {
    const std::size_t percent = fmt.find('%', i);
    if (percent == std::string_view::npos) {
      out->append(fmt.substr(i));
      break;
    }
    out->append(fmt.substr(i, percent - i));
    // The format string was checked when it was compiled: a conversion
    // follows every '%' and an argument every conversion.
    const char c = fmt[percent + 1];
    if (c == '%') {
      out->push_back('%');
      i = percent + 2;
      continue;
    }
    const Arg& a = args[next++];
    if (c == 'd') {
      if (a.negative) out->push_back('-');
      AppendNumber(out, a.magnitude, 10, 0);
      i = percent + 2;
    } else if (c == 's') {
      out->append(a.text);
      i = percent + 2;
    } else {  // 0Nx
      AppendNumber(out, a.bits, 16, static_cast<std::size_t>(fmt[percent + 2] - '0'));
      i = percent + 4;
    }
  }
}

}  // namespace kiln::base::format_internal
