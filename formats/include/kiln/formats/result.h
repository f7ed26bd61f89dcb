// The result of reading or writing a foreign format (NumPy, safetensors,
// GGUF). These errors are not Kiln rule violations, so they carry no class or
// rule id: only a message that names the field and the values it held.
#ifndef KILN_FORMATS_RESULT_H_
#define KILN_FORMATS_RESULT_H_

#include <string>
#include <utility>
#include <variant>

namespace kiln::formats {

struct FormatError {
  std::string message;
};

// A value or the FormatError that prevented it. Cannot be ignored.
template <typename T>
class [[nodiscard]] FormatResult {
 public:
  // Implicit on purpose, so a function returns a value or an error directly.
  FormatResult(T value) : v_(std::move(value)) {}    // NOLINT(google-explicit-constructor)
  FormatResult(FormatError e) : v_(std::move(e)) {}  // NOLINT(google-explicit-constructor)

  [[nodiscard]] bool ok() const { return v_.index() == 0; }
  // Precondition: ok(). Throws std::bad_variant_access otherwise.
  [[nodiscard]] const T& value() const& { return std::get<0>(v_); }
  [[nodiscard]] T& value() & { return std::get<0>(v_); }
  [[nodiscard]] T&& value() && { return std::get<0>(std::move(v_)); }
  // Precondition: !ok().
  [[nodiscard]] const FormatError& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, FormatError> v_;
};

}  // namespace kiln::formats

#endif  // KILN_FORMATS_RESULT_H_
