// Reading safetensors files.
#include <algorithm>
#include <compare>
#include <unordered_set>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "json_cursor.h"
#include "kiln/base/bytes.h"
#include "kiln/base/checked.h"
#include "kiln/directory.h"
#include "kiln/formats/safetensors.h"
#include "reader_util.h"

namespace kiln::formats {
namespace {

using internal::JsonCursor;
using internal::Quoted;

constexpr std::string_view kMetadataKey = "__metadata__";

// The raw text of the JSON string that starts at `at` (its opening quote),
// already validated, and whether it holds an escape.
std::pair<std::string_view, bool> RawString(std::string_view text, std::size_t at) {
  std::size_t i = at + 1;
  bool escaped = false;
  while (text[i] != '"') {
    if (text[i] == '\\') {
      escaped = true;
      ++i;
    }
    ++i;
  }
  return {text.substr(at + 1, i - at - 1), escaped};
}

std::string DecodedString(std::string_view text, std::size_t at) {
  JsonCursor json(text, at);
  std::string out;
  (void)json.String(&out);
  return out;
}

// Compares the decoded JSON strings at `a` and `b`; strings without escapes
// (nearly all) compare as they are, without decoding.
std::strong_ordering CompareKeys(std::string_view text, std::size_t a, std::size_t b) {
  const auto [ra, ea] = RawString(text, a);
  const auto [rb, eb] = RawString(text, b);
  if (!ea && !eb) return ra <=> rb;
  return DecodedString(text, a) <=> DecodedString(text, b);
}

// The header's JSON object, driven through the one structure it may have.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const ReaderLimits& limits) : json_(text), limits_(limits) {}

  bool Parse(SafetensorsFile* file) {
    if (!json_.Eat('{')) return json_.Fail("the header is not a JSON object");
    if (json_.Eat('}')) return End();
    do {
      const std::size_t at = json_.position();
      std::string key;
      if (!json_.String(&key)) return false;
      if (!json_.Eat(':')) return json_.Fail("expected ':'");
      const bool ok = key == kMetadataKey ? Metadata(file) : Tensor(std::move(key), at, file);
      if (!ok) return false;
    } while (json_.Eat(','));
    if (!json_.Eat('}')) return json_.Fail("expected ',' or '}'");
    return End();
  }

  [[nodiscard]] std::string Error() const { return json_.Error(); }
  [[nodiscard]] std::size_t ErrorPosition() const { return json_.error_position(); }

 private:
  bool End() { return json_.AtEnd() || json_.Fail("unexpected text after the header object"); }

  bool Metadata(SafetensorsFile* file) {
    if (seen_metadata_) return json_.Fail("key \"__metadata__\" repeats");
    seen_metadata_ = true;
    if (json_.EatWord("null")) return true;
    if (!json_.Eat('{')) return json_.Fail("__metadata__ is not an object of strings");
    const std::size_t begin = json_.position() - 1;
    std::vector<std::uint32_t> keys;  // where each key starts; grows as keys are read
    if (!json_.Eat('}')) {
      do {
        std::string key, value;
        keys.push_back(static_cast<std::uint32_t>(json_.position()));  // header < 2^32 bytes
        if (keys.size() > limits_.max_metadata_entries) {
          return json_.Fail(absl::StrFormat("__metadata__ has more than the limit of %d entries",
                                            limits_.max_metadata_entries));
        }
        if (!json_.String(&key)) return false;
        if (!json_.Eat(':')) return json_.Fail("expected ':'");
        if (!json_.String(&value)) return json_.Fail("metadata value is not a string");
      } while (json_.Eat(','));
      if (!json_.Eat('}')) return json_.Fail("expected ',' or '}'");
    }
    file->metadata_count = keys.size();
    file->metadata_json = json_.text().substr(begin, json_.position() - begin);
    return UniqueKeys(std::move(keys));
  }

  // No metadata key twice: the keys' offsets sorted by key, neighbours
  // compared. Keys without escapes (nearly all) compare as they are.
  bool UniqueKeys(std::vector<std::uint32_t> keys) {
    const std::string_view text = json_.text();
    std::sort(keys.begin(), keys.end(), [text](std::uint32_t a, std::uint32_t b) {
      const std::strong_ordering c = CompareKeys(text, a, b);
      return c < 0 || (c == 0 && a < b);
    });
    for (std::size_t k = 1; k < keys.size(); ++k) {
      if (CompareKeys(text, keys[k - 1], keys[k]) == 0) {
        return json_.FailAt(keys[k],
                            "metadata key " + Quoted(DecodedString(text, keys[k])) + " repeats");
      }
    }
    return true;
  }

  bool Tensor(std::string key, std::size_t at, SafetensorsFile* file) {
    if (file->tensors.size() == limits_.max_tensors) {
      return json_.FailAt(
          at, absl::StrFormat("more than the limit of %d tensors%s", limits_.max_tensors,
                              limits_.max_tensors >= kMaxNamedKilnTensors
                                  ? " (a Kiln block names at most 65535)"
                                  : ""));
    }
    if (!names_budget_.Add(key.size())) {
      return json_.FailAt(at,
                          absl::StrFormat("tensor names reach %d bytes at tensor %s, more than a "
                                          "Kiln name heap can address (%d)",
                                          names_budget_.used(), Quoted(key), kMaxKilnNameBytes));
    }
    if (!tensor_names_.insert(key).second)
      return json_.FailAt(at, "key " + Quoted(key) + " repeats");
    SafetensorsTensor t;
    t.name = std::move(key);
    t.entry_offset = 8 + at;
    const std::string& name = t.name;
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
  ReaderLimits limits_;
  bool seen_metadata_ = false;
  internal::NameBudget names_budget_;
  std::unordered_set<std::string> tensor_names_;  // at most max_tensors
};

std::optional<FormatError> CheckTensor(const SafetensorsTensor& t, std::uint64_t data_size) {
  const std::string name = Quoted(t.name);
  const auto fail = [&t](std::string message) {
    return FormatError{std::move(message), t.entry_offset};
  };
  if (t.begin > t.end || t.end > data_size) {
    return fail(absl::StrFormat(
        "safetensors tensor %s: data_offsets [%d, %d) do not lie in the %d-byte data section", name,
        t.begin, t.end, data_size));
  }
  const auto count = base::ElementCount(t.shape);
  const auto size = count ? base::CheckedMul(*count, GetDtypeInfo(t.dtype).bits / 8) : std::nullopt;
  if (!size) {
    return fail(absl::StrFormat("safetensors tensor %s: shape [%s] overflows", name,
                                absl::StrJoin(t.shape, ", ")));
  }
  if (*size != t.end - t.begin) {
    return fail(absl::StrFormat(
        "safetensors tensor %s: %s of shape [%s] is %d bytes, data_offsets cover %d", name,
        t.dtype_name, absl::StrJoin(t.shape, ", "), *size, t.end - t.begin));
  }
  return std::nullopt;
}

// The ranges, in offset order, must tile [0, data_size) exactly. Offsets in
// errors count from the start of the file (the data start at `data_start`).
std::optional<FormatError> CheckTiling(const std::vector<SafetensorsTensor>& tensors,
                                       std::uint64_t data_start, std::uint64_t data_size) {
  std::uint64_t expected = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const SafetensorsTensor& t = tensors[i];
    if (t.begin < expected) {
      return FormatError{
          absl::StrFormat("safetensors tensor %s: data_offsets [%d, %d) overlap tensor %s",
                          Quoted(t.name), t.begin, t.end, Quoted(tensors[i - 1].name)),
          t.entry_offset};
    }
    if (t.begin > expected) {
      return FormatError{
          absl::StrFormat("safetensors data bytes [%d, %d) belong to no tensor (before tensor %s)",
                          expected, t.begin, Quoted(t.name)),
          data_start + expected};
    }
    expected = t.end;
  }
  if (expected != data_size) {
    return FormatError{
        absl::StrFormat("safetensors data bytes [%d, %d) belong to no tensor (after the last one)",
                        expected, data_size),
        data_start + expected};
  }
  return std::nullopt;
}

// The header: its length, bounded, and the JSON text.
FormatResult<std::string_view> HeaderText(base::ByteReader& r, const ReaderLimits& limits,
                                          SafetensorsFile* out) {
  if (!r.ReadU64Le(&out->header_length)) {
    return FormatError{
        absl::StrFormat("safetensors file of %d bytes is too short for the 8-byte header length",
                        r.remaining()),
        0};
  }
  if (out->header_length > internal::HeaderLimit(limits)) {
    return FormatError{absl::StrFormat("safetensors header length %d exceeds the limit of %d",
                                       out->header_length, internal::HeaderLimit(limits)),
                       0};
  }
  base::Bytes header;
  if (!r.ReadBytes64(out->header_length, &header)) {
    return FormatError{absl::StrFormat("safetensors header length %d, but only %d bytes follow",
                                       out->header_length, r.remaining()),
                       0};
  }
  const std::string_view text = base::AsText(header);
  if (text.empty() || text[0] != '{') {
    return FormatError{"safetensors header does not start with '{'", 8};
  }
  return text;
}

}  // namespace

FormatResult<SafetensorsFile> ReadSafetensors(std::span<const std::uint8_t> file,
                                              const ReaderLimits& limits) {
  base::ByteReader r(file);
  SafetensorsFile out;
  const FormatResult<std::string_view> text = HeaderText(r, limits, &out);
  if (!text.ok()) return text.error();
  HeaderParser parser(text.value(), limits);
  if (!parser.Parse(&out)) {
    return FormatError{"safetensors header " + parser.Error(), 8 + parser.ErrorPosition()};
  }
  const std::uint64_t data_start = r.position();
  base::Bytes data;
  (void)r.ReadBytes(r.remaining(), &data);
  for (SafetensorsTensor& t : out.tensors) {
    const auto dtype = DtypeFromSafetensors(t.dtype_name);
    if (!dtype) {
      return FormatError{absl::StrFormat("safetensors tensor %s: dtype %s is not supported",
                                         Quoted(t.name), Quoted(t.dtype_name)),
                         t.entry_offset};
    }
    t.dtype = *dtype;
    if (auto e = CheckTensor(t, data.size())) return *std::move(e);
  }
  std::stable_sort(out.tensors.begin(), out.tensors.end(), [](const auto& a, const auto& b) {
    return std::pair(a.begin, a.end) < std::pair(b.begin, b.end);
  });
  if (auto e = CheckTiling(out.tensors, data_start, data.size())) return *std::move(e);
  for (SafetensorsTensor& t : out.tensors) {
    t.data =
        data.subspan(static_cast<std::size_t>(t.begin), static_cast<std::size_t>(t.end - t.begin));
  }
  return out;
}

void ForEachSafetensorsMetadata(
    const SafetensorsFile& file,
    const std::function<bool(std::string_view key, std::string_view value)>& visit) {
  if (file.metadata_count == 0) return;
  JsonCursor json(file.metadata_json);
  if (!json.Eat('{')) return;  // validated: cannot happen
  std::string key, value;
  for (std::uint64_t i = 0; i < file.metadata_count; ++i) {
    if ((i > 0 && !json.Eat(',')) || !json.String(&key) || !json.Eat(':') || !json.String(&value)) {
      return;  // validated: cannot happen
    }
    if (!visit(key, value)) return;
  }
}

}  // namespace kiln::formats
