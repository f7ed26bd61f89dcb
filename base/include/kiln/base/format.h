// printf-style formatting whose format string is checked when the program
// is compiled: Format("tensor %d has dtype %s", i, name). The conversions
// are the few the messages use:
//   %d      an integer, in decimal
//   %s      text (std::string, std::string_view, const char*)
//   %02x %04x %08x
//           an integer, in lower-case hex, zero-padded to 2, 4 or 8 digits
//           (a negative value is shown as its unsigned twin of the same width)
//   %%      a percent sign
// A conversion that does not match its argument, a missing or an extra
// argument, or any other conversion is a compile error.
#ifndef KILN_BASE_FORMAT_H_
#define KILN_BASE_FORMAT_H_

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

namespace kiln::base {

namespace format_internal {

enum class Kind : std::uint8_t { kInteger, kText, kUnsupported };

template <typename T>
consteval Kind KindOf() {
  using U = std::remove_cvref_t<T>;
  if constexpr (std::is_integral_v<U> && !std::is_same_v<U, bool>) {
    return Kind::kInteger;
  } else if constexpr (std::is_convertible_v<const U&, std::string_view>) {
    return Kind::kText;
  } else {
    return Kind::kUnsupported;
  }
}

// One argument, type-erased.
struct Arg {
  bool negative = false;
  std::uint64_t magnitude = 0;  // |value| for %d
  std::uint64_t bits = 0;       // the value as its unsigned twin, for %x
  std::string_view text;
};

template <typename T>
Arg MakeArg(const T& value) {
  if constexpr (KindOf<T>() == Kind::kInteger) {
    using Unsigned = std::make_unsigned_t<T>;
    const auto bits = static_cast<Unsigned>(value);
    if constexpr (std::is_signed_v<T>) {
      // |value| without wrapping, also for the minimum: -(value + 1) fits
      // in T, and adding 1 in u64 cannot overflow (at most 2^63).
      const bool negative = value < 0;
      const std::uint64_t magnitude = negative ? static_cast<std::uint64_t>(-(value + 1)) + 1
                                               : static_cast<std::uint64_t>(value);
      return Arg{negative, magnitude, bits, {}};
    } else {
      return Arg{false, bits, bits, {}};
    }
  } else {
    return Arg{false, 0, 0, std::string_view(value)};
  }
}

// Not constexpr: calling it while checking a format string stops the
// compilation there, with this name in the message.
inline void FormatStringDoesNotMatchItsArguments() {}

// Checks `fmt` against the argument kinds; reached only in a constant
// expression, where a failure does not compile.
consteval void Check(std::string_view fmt, std::span<const Kind> kinds) {
  std::size_t next = 0;
  for (std::size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%') continue;
    const std::string_view rest = fmt.substr(i + 1);
    Kind want = Kind::kUnsupported;
    if (rest.starts_with("%")) {
      i += 1;
      continue;
    }
    if (rest.starts_with("d")) {
      want = Kind::kInteger;
      i += 1;
    } else if (rest.starts_with("s")) {
      want = Kind::kText;
      i += 1;
    } else if (rest.starts_with("02x") || rest.starts_with("04x") || rest.starts_with("08x")) {
      want = Kind::kInteger;
      i += 3;
    } else {
      FormatStringDoesNotMatchItsArguments();  // an unknown conversion
    }
    if (next >= kinds.size() || kinds[next] != want) FormatStringDoesNotMatchItsArguments();
    ++next;
  }
  if (next != kinds.size()) FormatStringDoesNotMatchItsArguments();  // too many arguments
}

void Append(std::string* out, std::string_view fmt, std::span<const Arg> args);

}  // namespace format_internal

// A format string checked, at compile time, against the types Args.
template <typename... Args>
class FormatString {
 public:
  template <typename S>
  requires std::convertible_to<const S&, std::string_view>
  // cppcheck-suppress noExplicitConstructor
  consteval FormatString(const S& s)  // NOLINT(google-explicit-constructor): a literal converts
      : text_(s) {
    constexpr format_internal::Kind kinds[sizeof...(Args) + 1] = {
        format_internal::KindOf<Args>()..., format_internal::Kind::kUnsupported};
    format_internal::Check(text_, std::span<const format_internal::Kind>(kinds, sizeof...(Args)));
  }
  [[nodiscard]] constexpr std::string_view text() const { return text_; }

 private:
  std::string_view text_;
};

// Appends the formatted text to *out.
template <typename... Args>
void AppendFormat(std::string* out, const FormatString<std::type_identity_t<Args>...>& fmt,
                  const Args&... args) {
  if constexpr (sizeof...(Args) == 0) {
    format_internal::Append(out, fmt.text(), {});
  } else {
    const format_internal::Arg erased[] = {format_internal::MakeArg(args)...};
    format_internal::Append(out, fmt.text(), erased);
  }
}

// The formatted text.
template <typename... Args>
[[nodiscard]] std::string Format(const FormatString<std::type_identity_t<Args>...>& fmt,
                                 const Args&... args) {
  std::string out;
  AppendFormat<Args...>(&out, fmt, args...);
  return out;
}

}  // namespace kiln::base

#endif  // KILN_BASE_FORMAT_H_
