// Just enough JSON output for the kiln command.
#ifndef KILN_CLI_JSON_H_
#define KILN_CLI_JSON_H_

#include <string>
#include <string_view>

#include "kiln/status.h"

namespace kiln::cli {

// A JSON string literal, quotes included, escaped by base::JsonEscape:
// controls, bidi, zero-width, separator and tag characters as \uNNNN, a byte
// that is not well-formed UTF-8 (a file name can be anything) as \udcNN
// (PEP 383), so the output is always valid JSON and never ambiguous.
[[nodiscard]] std::string JsonString(std::string_view text);

// The members that describe a rejection, without braces:
// "ok": false, "class": "TYPE", "rule": "D9", "offset": 104, "tensor": 0, "message": "..."
[[nodiscard]] std::string ErrorFields(const Error& e);

}  // namespace kiln::cli

#endif  // KILN_CLI_JSON_H_
