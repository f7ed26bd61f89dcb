// A value or the error that prevented it: what every part of kiln returns
// when it can fail (the parser with kiln::Error, the format readers with
// their own error type). kiln/status.h names it kiln::Result<T>, with
// kiln::Error as the default error.
#ifndef KILN_BASE_RESULT_H_
#define KILN_BASE_RESULT_H_

#include <utility>
#include <variant>

namespace kiln::base {

// Cannot be ignored.
template <typename T, typename E>
class [[nodiscard]] Result {
 public:
  // Implicit on purpose, so a function returns a value or an error directly.
  // cppcheck-suppress noExplicitConstructor
  Result(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  // cppcheck-suppress noExplicitConstructor
  Result(E error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  [[nodiscard]] bool ok() const { return v_.index() == 0; }
  // Precondition: ok(). Throws std::bad_variant_access otherwise.
  [[nodiscard]] const T& value() const& { return std::get<0>(v_); }
  [[nodiscard]] T& value() & { return std::get<0>(v_); }
  [[nodiscard]] T&& value() && { return std::get<0>(std::move(v_)); }
  // Precondition: !ok(). Throws std::bad_variant_access otherwise.
  [[nodiscard]] const E& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, E> v_;
};

}  // namespace kiln::base

#endif  // KILN_BASE_RESULT_H_
