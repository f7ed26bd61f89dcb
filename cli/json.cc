#include "json.h"

#include "absl/strings/str_format.h"
#include "kiln/base/escape.h"

namespace kiln::cli {

// Appended in place: "\"" + std::string&& trips GCC 12's -Wrestrict at -O3.
std::string JsonString(std::string_view text) {
  std::string out = "\"";
  out += base::JsonEscape(text);
  out += '"';
  return out;
}

std::string ErrorFields(const Error& e) {
  std::string out = absl::StrFormat(R"("ok": false, "class": "%s", "rule": "%s", "offset": %d)",
                                    ErrorClassName(e.error_class), RuleName(e.rule), e.offset);
  if (e.tensor) absl::StrAppendFormat(&out, R"(, "tensor": %d)", *e.tensor);
  absl::StrAppendFormat(&out, R"(, "message": %s)", JsonString(e.message));
  return out;
}

}  // namespace kiln::cli
