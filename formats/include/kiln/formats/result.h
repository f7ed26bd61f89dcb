// The result of reading or writing a foreign format (NumPy, safetensors,
// GGUF). These errors are not Kiln rule violations, so they carry no class or
// rule id: a message that names the field and the values it held, and the
// byte offset in the file where the reader stopped.
#ifndef KILN_FORMATS_RESULT_H_
#define KILN_FORMATS_RESULT_H_

#include <cstdint>
#include <string>

#include "kiln/status.h"

namespace kiln::formats {

struct FormatError {
  std::string message;
  // Offset, from the start of the file, of the field or byte the reader
  // refused (for truncation: where the missing bytes start). 0 for errors of
  // a writer, which has no input file.
  std::uint64_t offset = 0;

  // "message (at byte N)".
  [[nodiscard]] std::string ToString() const {
    return message + " (at byte " + std::to_string(offset) + ")";
  }
};

// A value or the FormatError that prevented it. Cannot be ignored.
template <typename T>
using FormatResult = Result<T, FormatError>;

}  // namespace kiln::formats

#endif  // KILN_FORMATS_RESULT_H_
