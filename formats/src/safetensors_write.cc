// Writing safetensors headers.
#include <algorithm>
#include <array>
#include <span>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "kiln/base/bytes.h"
#include "kiln/base/checked.h"
#include "kiln/formats/safetensors.h"
#include "kiln/utf8.h"
#include "reader_util.h"

namespace kiln::formats {
namespace {

// A JSON string as serde_json (the reference) and Python's json module with
// ensure_ascii=False write it: short escapes where JSON has them, \u00xx for
// the other control characters, everything else as is.
std::string JsonQuoted(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          absl::StrAppendFormat(&out, "\\u%04x", static_cast<unsigned char>(c));
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

}  // namespace

FormatResult<std::string> SafetensorsHeader(std::span<const SafetensorsEntry> tensors) {
  std::string json = "{";
  std::unordered_set<std::string_view> names;
  std::uint64_t offset = 0;
  for (const SafetensorsEntry& t : tensors) {
    const auto dtype = SafetensorsDtypeFor(t.dtype);
    if (!dtype) {
      return FormatError{absl::StrFormat("tensor %s: safetensors has no dtype for kiln's %s",
                                         internal::Quoted(t.name), GetDtypeInfo(t.dtype).name)};
    }
    if (dtype->since != SafetensorsSince::k0_6_2) {  // what kiln writes, 0.6.2 reads
      return FormatError{absl::StrFormat(
          "tensor %s: kiln's %s is safetensors %s, which needs safetensors %s (0.6.2 refuses it); "
          "kiln writes only dtypes every safetensors reader since 0.6.2 reads",
          internal::Quoted(t.name), GetDtypeInfo(t.dtype).name, dtype->name,
          dtype->since == SafetensorsSince::k0_7_0 ? "0.7.0 or later" : "later than 0.7.0")};
    }
    if (t.name == "__metadata__" || !IsWellFormedUtf8(t.name) || !names.insert(t.name).second) {
      return FormatError{absl::StrFormat(
          "tensor %s: not usable as a safetensors name (reserved, repeated or not UTF-8)",
          internal::Quoted(t.name))};
    }
    const auto bits = SafetensorsBits(t.shape, t.dtype);
    if (!bits) {  // Kiln stops at a zero; the reference does not
      return FormatError{absl::StrFormat(
          "tensor %s: safetensors readers multiply every dimension of shape [%s], the zero "
          "included, and overflow; kiln cannot write it so that they read it",
          internal::Quoted(t.name), absl::StrJoin(t.shape, ", "))};
    }
    // Every reader refuses data_offsets that disagree with dtype and shape
    // (the reference's Metadata::validate): such a header is not written.
    if (*bits / 8 != t.byte_length) {
      return FormatError{absl::StrFormat(
          "tensor %s: %d bytes, but %s of shape [%s] is %d bytes; safetensors readers refuse "
          "data_offsets that disagree with dtype and shape",
          internal::Quoted(t.name), t.byte_length, dtype->name, absl::StrJoin(t.shape, ", "),
          *bits / 8)};
    }
    if (const auto big =
            std::find_if(t.shape.begin(), t.shape.end(),
                         [](std::uint64_t d) { return d > kHubMaxSafetensorsDimension; });
        big != t.shape.end()) {
      return FormatError{absl::StrFormat(
          "tensor %s: dimension %d of shape [%s] exceeds 2^32, the largest @huggingface/hub "
          "reads; kiln writes only files every safetensors reader reads",
          internal::Quoted(t.name), *big, absl::StrJoin(t.shape, ", "))};
    }
    const auto end = base::CheckedAdd(offset, t.byte_length);
    if (!end) return FormatError{"the tensors' total size exceeds 2^64-1"};
    absl::StrAppendFormat(&json, R"(%s%s:{"dtype":"%s","shape":[%s],"data_offsets":[%d,%d]})",
                          json.size() > 1 ? "," : "", JsonQuoted(t.name), dtype->name,
                          absl::StrJoin(t.shape, ","), offset, *end);
    offset = *end;
  }
  json += "}";
  json.append((8 - json.size() % 8) % 8, ' ');
  if (json.size() > kHubMaxSafetensorsHeaderBytes) {
    return FormatError{
        absl::StrFormat("the safetensors header would be %d bytes, above %d, the longest "
                        "@huggingface/hub reads",
                        json.size(), kHubMaxSafetensorsHeaderBytes)};
  }
  std::array<std::uint8_t, 8> length{};
  base::StoreLe<0>(std::span(length), std::uint64_t{json.size()});
  return std::string(length.begin(), length.end()) + json;
}

}  // namespace kiln::formats
