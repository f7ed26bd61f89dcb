// Reading safetensors files.
#include <algorithm>
#include <array>
#include <compare>
#include <deque>
#include <memory>
#include <optional>
#include <tuple>

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

// The __metadata__ keys, checked for repeats: where each starts (4 bytes a
// key; the header is below 2^32 bytes) and, for the few that hold escapes,
// their decoded form, decoded once as they are read.
class MetadataKeys {
 public:
  void Add(std::uint32_t at, std::string_view key, bool escaped) {
    at_.push_back(at);
    if (!escaped) return;
    const auto begin = static_cast<std::uint32_t>(decoded_.size());
    decoded_ += key;  // decoded keys are shorter than their raw text
    escaped_.push_back({at, begin, static_cast<std::uint32_t>(decoded_.size())});
  }
  [[nodiscard]] std::size_t size() const { return at_.size(); }

  // The position of a key that repeats an earlier one (in sorted order), if any.
  std::optional<std::uint32_t> FindRepeat(std::string_view text) {
    const auto key = [this, text](std::uint32_t at) { return Key(text, at); };
    std::sort(at_.begin(), at_.end(), [&key](std::uint32_t a, std::uint32_t b) {
      const std::strong_ordering c = key(a) <=> key(b);
      return c < 0 || (c == 0 && a < b);
    });
    for (std::size_t k = 1; k < at_.size(); ++k) {
      if (key(at_[k - 1]) == key(at_[k])) return at_[k];
    }
    return std::nullopt;
  }

  // The decoded key that starts at `at` (its opening quote).
  [[nodiscard]] std::string_view Key(std::string_view text, std::uint32_t at) const {
    const auto it = std::lower_bound(escaped_.begin(), escaped_.end(), at,
                                     [](const Escaped& e, std::uint32_t a) { return e.at < a; });
    if (it != escaped_.end() && it->at == at) {
      return std::string_view(decoded_).substr(it->begin, it->end - it->begin);
    }
    const std::size_t close = text.find('"', at + 1);  // validated: no escape inside
    return text.substr(at + 1, close - at - 1);
  }

 private:
  struct Escaped {
    std::uint32_t at, begin, end;
  };
  std::vector<std::uint32_t> at_;
  std::vector<Escaped> escaped_;  // in file order, so sorted by `at`
  std::string decoded_;
};

// The header's JSON object, driven through the one structure it may have.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const ReaderLimits& limits) : json_(text), limits_(limits) {}

  bool Parse(SafetensorsFile* file) {
    if (!json_.Eat('{')) return json_.Fail("the header is not a JSON object");
    if (json_.Eat('}')) return End() && Finish(file);
    do {
      json_.SkipSpace();  // `at` is the name's opening quote, as for metadata keys
      const std::size_t at = json_.position();
      std::string_view key;
      if (!json_.StringView(&key, &scratch_)) return false;
      if (!json_.Eat(':')) return json_.Fail("expected ':'");
      const bool ok = key == kMetadataKey ? Metadata(file) : Tensor(key, at, file);
      if (!ok) return false;
    } while (json_.Eat(','));
    if (!json_.Eat('}')) return json_.Fail("expected ',' or '}'");
    return End() && Finish(file);
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
    MetadataKeys keys;
    if (!json_.Eat('}')) {
      std::string value;
      do {
        std::string_view key, value_view;
        json_.SkipSpace();
        const auto at = static_cast<std::uint32_t>(json_.position());  // header < 2^32 bytes
        if (keys.size() == limits_.max_metadata_entries) {
          return json_.Fail(absl::StrFormat("__metadata__ has more than the limit of %d entries",
                                            limits_.max_metadata_entries));
        }
        if (!json_.StringView(&key, &scratch_)) return false;
        keys.Add(at, key, key.data() == scratch_.data());
        if (!json_.Eat(':')) return json_.Fail("expected ':'");
        if (!json_.StringView(&value_view, &value)) {
          return json_.Fail("metadata value is not a string");
        }
      } while (json_.Eat(','));
      if (!json_.Eat('}')) return json_.Fail("expected ',' or '}'");
    }
    file->metadata_count = keys.size();
    file->metadata_json = json_.text().substr(begin, json_.position() - begin);
    if (const auto repeat = keys.FindRepeat(json_.text())) {
      return json_.FailAt(*repeat,
                          "metadata key " + Quoted(keys.Key(json_.text(), *repeat)) + " repeats");
    }
    return true;
  }

  // The tensors, into a vector of their exact size.
  bool Finish(SafetensorsFile* file) {
    if (!UniqueNames()) return false;
    file->tensors.reserve(tensors_.size());
    for (SafetensorsTensor& t : tensors_) file->tensors.push_back(std::move(t));
    return true;
  }

  // No tensor name twice: the tensors' indices sorted by name, neighbours
  // compared (4 bytes a tensor).
  bool UniqueNames() {
    const auto& tensors = tensors_;
    std::vector<std::uint32_t> order(tensors.size());  // at most max_tensors < 2^32
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::uint32_t>(i);
    std::sort(order.begin(), order.end(), [&tensors](std::uint32_t a, std::uint32_t b) {
      return std::pair(tensors[a].name, a) < std::pair(tensors[b].name, b);
    });
    for (std::size_t k = 1; k < order.size(); ++k) {
      const SafetensorsTensor& t = tensors[order[k]];
      if (tensors[order[k - 1]].name == t.name) {
        return json_.FailAt(t.entry_offset - 8, "key " + Quoted(t.name) + " repeats");
      }
    }
    return true;
  }

  bool Tensor(std::string_view key, std::size_t at, SafetensorsFile* file) {
    if (tensors_.size() == limits_.max_tensors) {
      return json_.FailAt(
          at, absl::StrFormat("more than the limit of %d tensors%s", limits_.max_tensors,
                              limits_.max_tensors >= kMaxNamedKilnTensors
                                  ? " (a Kiln block names at most 65535)"
                                  : ""));
    }
    if (key.empty()) {
      return json_.FailAt(at, "a tensor has the empty name \"\", which a Kiln block cannot name");
    }
    if (!names_budget_.Add(key.size())) {
      return json_.FailAt(at,
                          absl::StrFormat("tensor names reach %d bytes at tensor %s, more than a "
                                          "Kiln name heap can address (%d)",
                                          names_budget_.used(), Quoted(key), kMaxKilnNameBytes));
    }
    if (key.data() == scratch_.data()) {  // decoded: keep it where the view can point
      file->decoded_names.push_back(std::make_unique<const std::string>(std::move(scratch_)));
      scratch_ = {};
      key = *file->decoded_names.back();
    }
    SafetensorsTensor t;
    t.name = key;
    t.entry_offset = 8 + at;
    json_.SkipSpace();
    const std::size_t entry_at = json_.position();
    if (json_.Eat('[')) {  // the crate reads it (serde's sequence form); the Hub does not
      return json_.FailAt(entry_at, "tensor " + Quoted(t.name) +
                                        " is written as the array [dtype, shape, data_offsets]: "
                                        "refused, @huggingface/hub reads only the object form");
    }
    if (!ObjectEntry(&t)) return false;
    tensors_.push_back(std::move(t));
    return true;
  }

  // {"dtype": ..., "shape": ..., "data_offsets": ...}, in any order.
  bool ObjectEntry(SafetensorsTensor* t) {
    const auto name = [t] { return Quoted(t->name); };  // for messages only
    if (!json_.Eat('{'))
      return json_.Fail("tensor " + name() + " is neither an object nor an array");
    bool seen[3] = {false, false, false};
    if (!json_.Eat('}')) {
      do {
        std::string_view field;
        if (!json_.StringView(&field, &scratch_)) return false;
        if (!json_.Eat(':')) return json_.Fail("expected ':'");
        int k = field == "dtype" ? 0 : field == "shape" ? 1 : field == "data_offsets" ? 2 : -1;
        if (k < 0) return json_.Fail("tensor " + name() + ": unknown field " + Quoted(field));
        if (seen[k])
          return json_.Fail("tensor " + name() + ": field " + std::string(field) + " repeats");
        seen[k] = true;
        if (!Field(k, t)) return false;
      } while (json_.Eat(','));
      if (!json_.Eat('}')) return json_.Fail("expected ',' or '}'");
    }
    if (!seen[0] || !seen[1] || !seen[2]) {
      return json_.Fail("tensor " + name() + " needs dtype, shape and data_offsets");
    }
    return true;
  }

  bool Field(int k, SafetensorsTensor* t) {
    return k == 0 ? ReadDtype(t) : k == 1 ? Shape(t) : Offsets(t);
  }

  bool ReadDtype(SafetensorsTensor* t) {
    std::string_view name;
    json_.SkipSpace();  // `at` is the dtype's opening quote
    const std::size_t at = json_.position();
    if (!json_.StringView(&name, &scratch_)) return json_.Fail("dtype is not a string");
    const auto known = LookUpSafetensorsDtype(name);
    if (!known) {
      return json_.FailAt(at, "tensor " + Quoted(t->name) + ": dtype " + Quoted(name) +
                                  " is not a safetensors dtype");
    }
    if (!known->dtype) {
      return json_.FailAt(at, "tensor " + Quoted(t->name) + ": dtype " + Quoted(name) +
                                  " is not supported (kiln has no such dtype)");
    }
    // Never looser than a reference reader: 0.6.2 refuses the names added
    // after it (docs/compatibility.md).
    if (known->since != SafetensorsSince::k0_6_2) {
      return json_.FailAt(
          at, "tensor " + Quoted(t->name) + ": dtype " + Quoted(name) +
                  " is refused: safetensors 0.6.2 does not read it (added in " +
                  (known->since == SafetensorsSince::k0_7_0 ? "0.7.0" : "a release after 0.7.0") +
                  ")");
    }
    t->dtype_name = known->name;
    t->dtype = *known->dtype;
    return true;
  }

  bool Shape(SafetensorsTensor* t) {
    if (!json_.Eat('[')) return json_.Fail("shape is not an array");
    std::array<std::uint64_t, kMaxRank> dims{};
    std::size_t rank = 0;
    if (!json_.Eat(']')) {
      do {
        if (rank == kMaxRank) {
          return json_.Fail("tensor " + Quoted(t->name) + " has more than 8 dimensions");
        }
        json_.SkipSpace();
        const std::size_t dim_at = json_.position();
        if (!json_.U64(&dims[rank])) return false;
        if (dims[rank] > kHubMaxSafetensorsDimension) {
          return json_.FailAt(dim_at, absl::StrFormat("tensor %s: dimension %d exceeds 2^32, the "
                                                      "largest @huggingface/hub reads",
                                                      Quoted(t->name), dims[rank]));
        }
        ++rank;
      } while (json_.Eat(','));
      if (!json_.Eat(']')) return json_.Fail("expected ',' or ']'");
    }
    t->shape.assign(dims.begin(), dims.begin() + static_cast<std::ptrdiff_t>(rank));
    return true;
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
  std::string scratch_;  // the decoded form of the last string with an escape
  // The tensors as they are read. A deque grows in blocks without copying, so
  // growth asks for about the tensors' size, where a vector's doubling asks
  // for up to four times it.
  std::deque<SafetensorsTensor> tensors_;
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
  const auto bits = SafetensorsBits(t.shape, t.dtype);  // then a whole number of bytes
  if (!bits) {
    return fail(absl::StrFormat("safetensors tensor %s: shape [%s] overflows", name,
                                absl::StrJoin(t.shape, ", ")));
  }
  if (*bits % 8 != 0) {
    return fail(
        absl::StrFormat("safetensors tensor %s: %s of shape [%s] is %d bits, not whole bytes", name,
                        t.dtype_name, absl::StrJoin(t.shape, ", "), *bits));
  }
  if (*bits / 8 != t.end - t.begin) {
    return fail(absl::StrFormat(
        "safetensors tensor %s: %s of shape [%s] is %d bytes, data_offsets cover %d", name,
        t.dtype_name, absl::StrJoin(t.shape, ", "), *bits / 8, t.end - t.begin));
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
  if (out->header_length > kHubMaxSafetensorsHeaderBytes) {
    return FormatError{absl::StrFormat("safetensors header length %d exceeds %d, the longest "
                                       "@huggingface/hub reads",
                                       out->header_length, kHubMaxSafetensorsHeaderBytes),
                       0};
  }
  base::Bytes header;
  if (!r.ReadBytes64(out->header_length, &header)) {
    return FormatError{absl::StrFormat("safetensors header length %d, but only %d bytes follow",
                                       out->header_length, r.remaining()),
                       0};
  }
  return base::AsText(header);
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
  const auto bad = std::find_if(out.tensors.begin(), out.tensors.end(), [&](const auto& t) {
    return CheckTensor(t, data.size()).has_value();
  });
  if (bad != out.tensors.end()) return *CheckTensor(*bad, data.size());
  // Offset order; equal ranges (empty tensors) in file order. In place: a
  // stable sort would ask for a buffer as large as the tensors.
  std::sort(out.tensors.begin(), out.tensors.end(), [](const auto& a, const auto& b) {
    return std::tuple(a.begin, a.end, a.entry_offset) < std::tuple(b.begin, b.end, b.entry_offset);
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
