#include "text.h"

#include "absl/strings/str_format.h"

namespace kiln::formats::internal {

std::string Quoted(std::string_view text, std::size_t max) {
  std::string out = "\"";
  for (const char c : text.substr(0, max)) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f || c == '"' || c == '\\') {
      absl::StrAppendFormat(&out, "\\x%02x", u);
    } else {
      out += c;
    }
  }
  return out + (text.size() > max ? "...\"" : "\"");
}

}  // namespace kiln::formats::internal
