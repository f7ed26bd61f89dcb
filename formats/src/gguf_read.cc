// Reading GGUF files.
#include <algorithm>
#include <numeric>
#include <unordered_set>

#include "absl/strings/str_format.h"
#include "checked.h"
#include "gguf_value.h"
#include "kiln/directory.h"
#include "kiln/formats/gguf.h"
#include "text.h"

namespace kiln::formats {
namespace {

using internal::ByteReader;
using internal::Quoted;

// The fewest bytes a key/value pair and a tensor info can occupy: used to
// bound the counts by the file size before anything is allocated.
constexpr std::uint64_t kMinKeyValueBytes = 8 + 4 + 1;
constexpr std::uint64_t kMinTensorInfoBytes = 8 + 4 + 4 + 8;

class GgufParser {
 public:
  explicit GgufParser(std::span<const std::uint8_t> file) : file_(file), r_(file) {}

  FormatResult<GgufFile> Parse() {
    if (!Header() || !Metadata() || !Alignment() || !TensorInfos() || !Layout()) {
      return FormatError{"gguf: " + error_};
    }
    return std::move(out_);
  }

 private:
  template <typename... Args>
  bool Fail(const absl::FormatSpec<Args...>& format, const Args&... args) {
    error_ = absl::StrFormat(format, args...);
    return false;
  }

  bool String(std::string* out, std::string_view what) {
    std::uint64_t n = 0;
    if (!r_.Read(&n)) return Fail("the file ends inside the length of a %s", what);
    const auto bytes = r_.Take(n);
    if (!bytes) return Fail("a %s of %d bytes runs past the end of the file", what, n);
    out->assign(internal::AsText(*bytes));
    return true;
  }

  bool Header() {
    const auto magic = r_.Take(4);
    if (!magic || internal::AsText(*magic) != "GGUF") return Fail("not a GGUF file (no magic)");
    if (!r_.Read(&out_.version)) return Fail("the file ends inside the version");
    if (out_.version == 0x02000000 || out_.version == 0x03000000) {
      return Fail("big-endian GGUF files are not supported");
    }
    if (out_.version != 2 && out_.version != 3) {
      return Fail("version %d is not supported (only 2 and 3)", out_.version);
    }
    if (!r_.Read(&tensor_count_) || !r_.Read(&kv_count_)) {
      return Fail("the file ends inside the header counts");
    }
    if (kv_count_ > r_.remaining() / kMinKeyValueBytes) {
      return Fail("metadata_kv_count %d cannot fit in the %d bytes that follow", kv_count_,
                  r_.remaining());
    }
    if (tensor_count_ > r_.remaining() / kMinTensorInfoBytes ||
        kv_count_ * kMinKeyValueBytes + tensor_count_ * kMinTensorInfoBytes > r_.remaining()) {
      return Fail("tensor_count %d cannot fit in the %d bytes that follow", tensor_count_,
                  r_.remaining());
    }
    return true;
  }

  bool Metadata() {
    out_.metadata.reserve(static_cast<std::size_t>(kv_count_));
    std::unordered_set<std::string> keys;
    for (std::uint64_t i = 0; i < kv_count_; ++i) {
      GgufKeyValue kv;
      std::uint32_t type = 0;
      if (!String(&kv.key, "metadata key")) return false;
      if (!r_.Read(&type)) return Fail("the file ends inside the type of key %s", Quoted(kv.key));
      const std::uint64_t start = r_.position();
      std::string why;
      if (!internal::SkipGgufValue(r_, type, 0, &why)) {
        return Fail("metadata key %s: %s", Quoted(kv.key), why);
      }
      if (!keys.insert(kv.key).second) return Fail("metadata key %s repeats", Quoted(kv.key));
      kv.type = static_cast<GgufType>(type);
      kv.raw = file_.subspan(static_cast<std::size_t>(start),
                             static_cast<std::size_t>(r_.position() - start));
      out_.metadata.push_back(std::move(kv));
    }
    return true;
  }

  // general.alignment: a u32 power of two, 32 when absent (as llama.cpp reads it).
  bool Alignment() {
    for (const GgufKeyValue& kv : out_.metadata) {
      if (kv.key != "general.alignment") continue;
      std::uint32_t a = 0;
      ByteReader r(kv.raw);
      if (kv.type != GgufType::kU32 || !r.Read(&a)) {
        return Fail("general.alignment is not a u32");
      }
      if (a == 0 || (a & (a - 1)) != 0)
        return Fail("general.alignment %d is not a power of two", a);
      out_.alignment = a;
    }
    return true;
  }

  bool TensorInfos() {
    out_.tensors.reserve(static_cast<std::size_t>(tensor_count_));
    std::unordered_set<std::string> names;
    for (std::uint64_t i = 0; i < tensor_count_; ++i) {
      GgufTensor t;
      if (!String(&t.name, "tensor name") || !TensorInfo(&t)) return false;
      if (!names.insert(t.name).second) return Fail("tensor name %s repeats", Quoted(t.name));
      out_.tensors.push_back(std::move(t));
    }
    return true;
  }

  bool TensorInfo(GgufTensor* t) {
    const std::string name = Quoted(t->name);
    std::uint32_t n_dims = 0, type = 0;
    if (!r_.Read(&n_dims)) return Fail("tensor %s: the file ends inside n_dims", name);
    if (n_dims > kMaxRank) return Fail("tensor %s has %d dimensions, at most 8", name, n_dims);
    t->shape.resize(n_dims);
    for (std::uint32_t k = 0; k < n_dims; ++k) {  // ne[0] (innermost) lands last
      std::uint64_t& d = t->shape[n_dims - 1 - k];
      if (!r_.Read(&d)) return Fail("tensor %s: the file ends inside its dimensions", name);
      if (d > static_cast<std::uint64_t>(INT64_MAX)) {
        return Fail("tensor %s: dimension %d exceeds 2^63-1", name, d);
      }
    }
    if (!r_.Read(&type) || !r_.Read(&t->offset)) {
      return Fail("tensor %s: the file ends inside its type and offset", name);
    }
    t->type = FindGgmlType(type);
    if (t->type == nullptr) return Fail("tensor %s has unknown ggml type %d", name, type);
    const std::uint64_t row = n_dims == 0 ? 1 : t->shape.back();
    if (row % t->type->block_size != 0) {
      return Fail("tensor %s: row length %d is not a multiple of the %s block size %d", name, row,
                  t->type->name, t->type->block_size);
    }
    if (t->offset % out_.alignment != 0) {
      return Fail("tensor %s: offset %d is not a multiple of the alignment %d", name, t->offset,
                  out_.alignment);
    }
    return true;
  }

  std::optional<std::uint64_t> ByteSize(const GgufTensor& t) {
    const auto count = internal::ElementCount(t.shape);
    if (!count) return std::nullopt;
    return internal::Mul(*count / t.type->block_size, t.type->type_size);
  }

  // Each tensor's bytes inside the data section; no two overlap.
  bool Layout() {
    const std::uint64_t end = r_.position();
    const std::uint64_t a = out_.alignment;
    const auto start = internal::Add(end, (a - end % a) % a);
    if (!start) return Fail("the data section's start exceeds 2^64-1");
    out_.data_start = *start;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;  // (begin, tensor index)
    for (std::size_t i = 0; i < out_.tensors.size(); ++i) {
      GgufTensor& t = out_.tensors[i];
      const auto size = ByteSize(t);
      if (size == 0u) continue;  // no bytes, nothing to place
      const auto begin = internal::Add(out_.data_start, t.offset);
      const auto stop = begin && size ? internal::Add(*begin, *size) : std::nullopt;
      if (!stop || *stop > file_.size()) {
        return Fail(
            "tensor %s: its %s bytes at data offset %d lie past the end of the %d-byte "
            "file",
            Quoted(t.name), t.type->name, t.offset, file_.size());
      }
      t.data = file_.subspan(static_cast<std::size_t>(*begin), static_cast<std::size_t>(*size));
      ranges.emplace_back(t.offset, i);
    }
    std::sort(ranges.begin(), ranges.end());
    for (std::size_t k = 1; k < ranges.size(); ++k) {
      const GgufTensor& prev = out_.tensors[ranges[k - 1].second];
      const GgufTensor& next = out_.tensors[ranges[k].second];
      if (prev.offset + prev.data.size() > next.offset) {
        return Fail("tensors %s and %s overlap", Quoted(prev.name), Quoted(next.name));
      }
    }
    return true;
  }

  std::span<const std::uint8_t> file_;
  ByteReader r_;
  std::string error_;
  std::uint64_t tensor_count_ = 0;
  std::uint64_t kv_count_ = 0;
  GgufFile out_;
};

}  // namespace

FormatResult<GgufFile> ReadGguf(std::span<const std::uint8_t> file) {
  return GgufParser(file).Parse();
}

}  // namespace kiln::formats
