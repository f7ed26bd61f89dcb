#include "json.h"

#include "absl/strings/str_format.h"
#include "kiln/base/escape.h"

namespace kiln::cli {

std::string JsonString(std::string_view text) { return "\"" + base::JsonEscape(text) + "\""; }

std::string ErrorFields(const Error& e) {
  std::string out = absl::StrFormat(R"("ok": false, "class": "%s", "rule": "%s", "offset": %d)",
                                    ErrorClassName(e.error_class), RuleName(e.rule), e.offset);
  if (e.tensor) absl::StrAppendFormat(&out, R"(, "tensor": %d)", *e.tensor);
  absl::StrAppendFormat(&out, R"(, "message": %s)", JsonString(e.message));
  return out;
}

}  // namespace kiln::cli
