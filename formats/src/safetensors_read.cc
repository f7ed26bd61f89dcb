// Reading safetensors files.
#include <algorithm>
#include <unordered_set>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "checked.h"
#include "json_cursor.h"
#include "kiln/directory.h"
#include "kiln/formats/safetensors.h"
#include "text.h"

namespace kiln::formats {
namespace {

using internal::JsonCursor;
using internal::Quoted;

constexpr std::string_view kMetadataKey = "__metadata__";

// The header's JSON object, driven through the one structure it may have.
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : json_(text) {}

  bool Parse(SafetensorsFile* file) {
    if (!json_.Eat('{')) return json_.Fail("the header is not a JSON object");
    if (json_.Eat('}')) return End();
    do {
      std::string key;
      if (!json_.String(&key)) return false;
      if (!keys_.insert(key).second) return json_.Fail("key " + Quoted(key) + " repeats");
      if (!json_.Eat(':')) return json_.Fail("expected ':'");
      const bool ok = key == kMetadataKey ? Metadata(&file->metadata) : Tensor(key, file);
      if (!ok) return false;
    } while (json_.Eat(','));
    if (!json_.Eat('}')) return json_.Fail("expected ',' or '}'");
    return End();
  }

  [[nodiscard]] std::string Error() const { return json_.Error(); }

 private:
  bool End() { return json_.AtEnd() || json_.Fail("unexpected text after the header object"); }

  bool Metadata(std::vector<std::pair<std::string, std::string>>* out) {
    if (json_.EatWord("null")) return true;
    if (!json_.Eat('{')) return json_.Fail("__metadata__ is not an object of strings");
    if (json_.Eat('}')) return true;
    std::unordered_set<std::string> seen;
    do {
      std::string key, value;
      if (!json_.String(&key)) return false;
      if (!seen.insert(key).second) return json_.Fail("metadata key " + Quoted(key) + " repeats");
      if (!json_.Eat(':')) return json_.Fail("expected ':'");
      if (!json_.String(&value)) return json_.Fail("metadata value is not a string");
      out->emplace_back(std::move(key), std::move(value));
    } while (json_.Eat(','));
    return json_.Eat('}') || json_.Fail("expected ',' or '}'");
  }

  bool Tensor(const std::string& name, SafetensorsFile* file) {
    SafetensorsTensor t;
    t.name = name;
    if (!json_.Eat('{')) return json_.Fail("tensor " + Quoted(name) + " is not an object");
    bool seen[3] = {false, false, false};
    do {
      std::string field;
      if (!json_.String(&field)) return false;
      if (!json_.Eat(':')) return json_.Fail("expected ':'");
      int k = field == "dtype" ? 0 : field == "shape" ? 1 : field == "data_offsets" ? 2 : -1;
      if (k < 0) return json_.Fail("tensor " + Quoted(name) + ": unknown field " + Quoted(field));
      if (seen[k]) return json_.Fail("tensor " + Quoted(name) + ": field " + field + " repeats");
      seen[k] = true;
      const bool ok = k == 0 ? json_.String(&t.dtype_name) : k == 1 ? Shape(&t) : Offsets(&t);
      if (!ok) return false;
    } while (json_.Eat(','));
    if (!json_.Eat('}')) return json_.Fail("expected ',' or '}'");
    if (!seen[0] || !seen[1] || !seen[2]) {
      return json_.Fail("tensor " + Quoted(name) + " needs dtype, shape and data_offsets");
    }
    file->tensors.push_back(std::move(t));
    return true;
  }

  bool Shape(SafetensorsTensor* t) {
    if (!json_.Eat('[')) return json_.Fail("shape is not an array");
    if (json_.Eat(']')) return true;
    do {
      if (t->shape.size() == kMaxRank) {
        return json_.Fail("tensor " + Quoted(t->name) + " has more than 8 dimensions");
      }
      std::uint64_t d = 0;
      if (!json_.U64(&d)) return false;
      t->shape.push_back(d);
    } while (json_.Eat(','));
    return json_.Eat(']') || json_.Fail("expected ',' or ']'");
  }

  bool Offsets(SafetensorsTensor* t) {
    if (!json_.Eat('[') || !json_.U64(&t->begin) || !json_.Eat(',') || !json_.U64(&t->end) ||
        !json_.Eat(']')) {
      return json_.Fail("data_offsets is not [begin, end]");
    }
    return true;
  }

  JsonCursor json_;
  std::unordered_set<std::string> keys_;
};

std::optional<FormatError> CheckTensor(const SafetensorsTensor& t, std::uint64_t data_size) {
  const std::string name = Quoted(t.name);
  if (t.begin > t.end || t.end > data_size) {
    return FormatError{absl::StrFormat(
        "safetensors tensor %s: data_offsets [%d, %d) do not lie in the %d-byte data section", name,
        t.begin, t.end, data_size)};
  }
  const auto count = internal::ElementCount(t.shape);
  const auto size = count ? internal::Mul(*count, GetDtypeInfo(t.dtype).bits / 8) : std::nullopt;
  if (!size) {
    return FormatError{absl::StrFormat("safetensors tensor %s: shape [%s] overflows", name,
                                       absl::StrJoin(t.shape, ", "))};
  }
  if (*size != t.end - t.begin) {
    return FormatError{absl::StrFormat(
        "safetensors tensor %s: %s of shape [%s] is %d bytes, data_offsets cover %d", name,
        t.dtype_name, absl::StrJoin(t.shape, ", "), *size, t.end - t.begin)};
  }
  return std::nullopt;
}

// The ranges, in offset order, must tile [0, data_size) exactly.
std::optional<FormatError> CheckTiling(const std::vector<SafetensorsTensor>& tensors,
                                       std::uint64_t data_size) {
  std::uint64_t expected = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const SafetensorsTensor& t = tensors[i];
    if (t.begin < expected) {
      return FormatError{
          absl::StrFormat("safetensors tensor %s: data_offsets [%d, %d) overlap tensor %s",
                          Quoted(t.name), t.begin, t.end, Quoted(tensors[i - 1].name))};
    }
    if (t.begin > expected) {
      return FormatError{
          absl::StrFormat("safetensors data bytes [%d, %d) belong to no tensor (before tensor %s)",
                          expected, t.begin, Quoted(t.name))};
    }
    expected = t.end;
  }
  if (expected != data_size) {
    return FormatError{
        absl::StrFormat("safetensors data bytes [%d, %d) belong to no tensor (after the last one)",
                        expected, data_size)};
  }
  return std::nullopt;
}

}  // namespace

FormatResult<SafetensorsFile> ReadSafetensors(std::span<const std::uint8_t> file) {
  internal::ByteReader r(file);
  SafetensorsFile out;
  if (!r.Read(&out.header_length)) {
    return FormatError{absl::StrFormat(
        "safetensors file of %d bytes is too short for the 8-byte header length", file.size())};
  }
  if (out.header_length > kMaxSafetensorsHeaderBytes) {
    return FormatError{absl::StrFormat("safetensors header length %d exceeds the limit of %d",
                                       out.header_length, kMaxSafetensorsHeaderBytes)};
  }
  const auto header = r.Take(out.header_length);
  if (!header) {
    return FormatError{absl::StrFormat("safetensors header length %d, but only %d bytes follow",
                                       out.header_length, r.remaining())};
  }
  const std::string_view text = internal::AsText(*header);
  if (text.empty() || text[0] != '{')
    return FormatError{"safetensors header does not start with '{'"};
  HeaderParser parser(text);
  if (!parser.Parse(&out)) return FormatError{"safetensors header " + parser.Error()};

  const std::uint64_t data_size = r.remaining();
  const auto data = *r.Take(data_size);
  for (SafetensorsTensor& t : out.tensors) {
    const auto dtype = DtypeFromSafetensors(t.dtype_name);
    if (!dtype) {
      return FormatError{absl::StrFormat("safetensors tensor %s: dtype %s is not supported",
                                         Quoted(t.name), Quoted(t.dtype_name))};
    }
    t.dtype = *dtype;
    if (auto e = CheckTensor(t, data_size)) return *std::move(e);
  }
  std::stable_sort(out.tensors.begin(), out.tensors.end(), [](const auto& a, const auto& b) {
    return std::pair(a.begin, a.end) < std::pair(b.begin, b.end);
  });
  if (auto e = CheckTiling(out.tensors, data_size)) return *std::move(e);
  for (SafetensorsTensor& t : out.tensors) {
    t.data =
        data.subspan(static_cast<std::size_t>(t.begin), static_cast<std::size_t>(t.end - t.begin));
  }
  return out;
}

}  // namespace kiln::formats
