#include "json.h"

#include "absl/strings/str_format.h"
#include "kiln/utf8.h"

namespace kiln::cli {

std::string JsonString(std::string_view text) {
  const bool utf8 = IsWellFormedUtf8(text);
  std::string out = "\"";
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20 || c == 0x7f || (c >= 0x80 && !utf8)) {
      absl::StrAppendFormat(&out, "\\u%04x", c);
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

std::string ErrorFields(const Error& e) {
  std::string out = absl::StrFormat(R"("ok": false, "class": "%s", "rule": "%s", "offset": %d)",
                                    ErrorClassName(e.error_class), RuleName(e.rule), e.offset);
  if (e.tensor) absl::StrAppendFormat(&out, R"(, "tensor": %d)", *e.tensor);
  absl::StrAppendFormat(&out, R"(, "message": %s)", JsonString(e.message));
  return out;
}

}  // namespace kiln::cli
