// Reading GGUF files.
#include <algorithm>
#include <array>
#include <optional>
#include <unordered_set>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "gguf_value.h"
#include "kiln/base/bytes.h"
#include "kiln/base/checked.h"
#include "kiln/formats/gguf.h"
#include "kiln/utf8.h"
#include "reader_util.h"

namespace kiln::formats {
namespace {

using base::AsText;
using base::ByteReader;
using internal::Quoted;

// The fewest bytes a key/value pair and a tensor info can occupy: used to
// bound the counts by the file size before anything is read.
constexpr std::uint64_t kMinKeyValueBytes = 8 + 4 + 1;
constexpr std::uint64_t kMinTensorInfoBytes = 8 + 4 + 4 + 8;
// ggml type ids gguf-py treats apart (kiln/formats/policy.h).
constexpr std::uint32_t kGgmlQ8_1 = 9;
constexpr std::uint32_t kGgmlBf16 = 30;

// ggml's and @huggingface/gguf's bounds: kGgml*, kGguf* (kiln/formats/policy.h).

// Reads a GGUF string (u64 length, bytes) as a view; false when it runs past
// the end.
bool ReadString(ByteReader& r, std::string_view* out) {
  std::uint64_t n = 0;
  base::Bytes b;
  if (!r.ReadU64Le(&n) || !r.ReadBytes64(n, &b)) return false;
  *out = AsText(b);
  return true;
}

// The key of the pair that starts at `at` (validated earlier).
std::string_view KeyAt(std::span<const std::uint8_t> file, std::uint32_t at) {
  ByteReader r(file.subspan(at));
  std::string_view key;
  (void)ReadString(r, &key);
  return key;
}

class GgufParser {
 public:
  GgufParser(std::span<const std::uint8_t> file, const ReaderLimits& limits)
      : file_(file), limits_(limits), r_(file) {}

  FormatResult<GgufFile> Parse() {
    if (!Header() || !Metadata() || !UniqueKeys() || !TensorInfos() || !Layout()) {
      return FormatError{"gguf: " + error_, error_at_};
    }
    return std::move(out_);
  }

 private:
  template <typename... Args>
  bool Fail(const absl::FormatSpec<Args...>& format, const Args&... args) {
    return FailAt(r_.position(), format, args...);
  }
  template <typename... Args>
  bool FailAt(std::uint64_t at, const absl::FormatSpec<Args...>& format, const Args&... args) {
    error_ = absl::StrFormat(format, args...);
    error_at_ = at;
    return false;
  }

  bool Header() {
    base::Bytes magic;
    if (!r_.ReadBytes(4, &magic) || AsText(magic) != "GGUF") {
      return FailAt(0, "not a GGUF file (no magic)");
    }
    if (!r_.ReadU32Le(&out_.version)) return Fail("the file ends inside the version");
    if (out_.version == 0x02000000 || out_.version == 0x03000000) {
      return FailAt(4, "big-endian GGUF files are not supported");
    }
    if (out_.version != 2 && out_.version != 3) {
      return FailAt(4, "version %d is not supported (only 2 and 3)", out_.version);
    }
    if (!r_.ReadU64Le(&tensor_count_) || !r_.ReadU64Le(&kv_count_)) {
      return Fail("the file ends inside the header counts");
    }
    return CountsFit() && CountsWithinLimits();
  }

  bool CountsFit() {
    if (kv_count_ > r_.remaining() / kMinKeyValueBytes) {
      return FailAt(16, "metadata_kv_count %d cannot fit in the %d bytes that follow", kv_count_,
                    r_.remaining());
    }
    if (tensor_count_ > r_.remaining() / kMinTensorInfoBytes ||
        kv_count_ * kMinKeyValueBytes + tensor_count_ * kMinTensorInfoBytes > r_.remaining()) {
      return FailAt(8, "tensor_count %d cannot fit in the %d bytes that follow", tensor_count_,
                    r_.remaining());
    }
    return true;
  }

  // Counts the caller's limits refuse, checked before any entry is read.
  bool CountsWithinLimits() {
    if (tensor_count_ > limits_.max_tensors) {
      return FailAt(
          8, "tensor_count %d exceeds the limit of %d tensors%s", tensor_count_,
          limits_.max_tensors,
          tensor_count_ > kMaxNamedKilnTensors ? " (a Kiln block names at most 65535)" : "");
    }
    if (kv_count_ > limits_.max_metadata_entries) {
      return FailAt(16, "metadata_kv_count %d exceeds the limit of %d entries", kv_count_,
                    limits_.max_metadata_entries);
    }
    if (tensor_count_ > kGgufMaxTensors) {
      return FailAt(8, "tensor_count %d exceeds %d, the most @huggingface/gguf reads",
                    tensor_count_, kGgufMaxTensors);
    }
    if (kv_count_ > kGgufMaxKeyValues) {
      return FailAt(16, "metadata_kv_count %d exceeds %d, the most @huggingface/gguf reads",
                    kv_count_, kGgufMaxKeyValues);
    }
    const std::uint64_t least = r_.position() + kv_count_ * kMinKeyValueBytes +
                                tensor_count_ * kMinTensorInfoBytes;  // fits: bounded above
    if (least > HeaderLimit()) {
      return FailAt(8,
                    "%d key/value pairs and %d tensor infos need at least %d header bytes, more "
                    "than the limit of %d%s",
                    kv_count_, tensor_count_, least, HeaderLimit(), HeaderLimitWhy());
    }
    return true;
  }

  // The caller's limit, or 48,000,000 bytes when that is lower.
  std::uint64_t HeaderLimit() const {
    return std::min(internal::HeaderLimit(limits_), kGgufMaxHeaderBytes);
  }
  const char* HeaderLimitWhy() const {
    return HeaderLimit() < internal::HeaderLimit(limits_)
               ? " (@huggingface/gguf reads no GGUF header past the first 50,000,000 bytes)"
               : "";
  }

  bool WithinHeaderLimit() {
    if (r_.position() <= HeaderLimit()) return true;
    return Fail("the header exceeds the limit of %d bytes%s", HeaderLimit(), HeaderLimitWhy());
  }

  // A key or tensor name must read as the same text in every reader: no NUL
  // (a C reader stops there), well-formed UTF-8 and no leading U+FEFF (a
  // JavaScript TextDecoder replaces the one and drops the other). Empty when
  // it does; else what is wrong.
  static std::string TextProblem(std::string_view s) {
    if (s.find('\0') != std::string_view::npos) {
      return absl::StrFormat("holds a NUL byte at %d (a C reader sees a shorter name)",
                             s.find('\0'));
    }
    if (!IsWellFormedUtf8(s)) return "is not well-formed UTF-8";
    if (s.starts_with("\xEF\xBB\xBF")) {
      return "starts with U+FEFF (a TextDecoder drops it and reads another name)";
    }
    return "";
  }

  // Validates every pair, remembering where each starts (4 bytes per pair,
  // only for pairs already read).
  bool Metadata() {
    const std::size_t begin = r_.position();
    for (std::uint64_t i = 0; i < kv_count_; ++i) {
      const auto at = static_cast<std::uint32_t>(r_.position());  // <= the header limit
      std::string_view key;
      std::uint32_t type = 0;
      if (!ReadString(r_, &key)) return Fail("metadata key %d runs past the end of the file", i);
      if (key.empty()) return FailAt(at, "metadata key %d is empty", i);
      if (key.size() > kGgufMaxKeyBytes) {
        return FailAt(at, "metadata key %d %s is %d bytes long, more than %d", i, Quoted(key),
                      key.size(), kGgufMaxKeyBytes);
      }
      if (const std::string why = TextProblem(key); !why.empty()) {
        return FailAt(at, "metadata key %d %s %s", i, Quoted(key), why);
      }
      if (!r_.ReadU32Le(&type)) return Fail("the file ends inside the type of key %s", Quoted(key));
      const std::size_t start = r_.position();
      std::string why;
      if (!internal::SkipGgufValue(r_, type, &why)) {
        return FailAt(start, "metadata key %s: %s", Quoted(key), why);
      }
      if (!WithinHeaderLimit()) return false;
      const GgufKeyValue kv{key, static_cast<GgufType>(type),
                            file_.subspan(start, r_.position() - start)};
      if (key == "general.alignment" && !Alignment(kv, start)) return false;
      key_offsets_.push_back(at);
    }
    out_.metadata_count = kv_count_;
    out_.metadata_bytes = file_.subspan(begin, r_.position() - begin);
    return true;
  }

  // No key twice: the offsets sorted by key, neighbours compared.
  bool UniqueKeys() {
    const auto by_key = [this](std::uint32_t a, std::uint32_t b) {
      return std::pair(KeyAt(file_, a), a) < std::pair(KeyAt(file_, b), b);
    };
    std::sort(key_offsets_.begin(), key_offsets_.end(), by_key);
    for (std::size_t k = 1; k < key_offsets_.size(); ++k) {
      if (KeyAt(file_, key_offsets_[k - 1]) == KeyAt(file_, key_offsets_[k])) {
        return FailAt(key_offsets_[k], "metadata key %s repeats",
                      Quoted(KeyAt(file_, key_offsets_[k])));
      }
    }
    std::vector<std::uint32_t>().swap(key_offsets_);
    return true;
  }

  // general.alignment: a u32 power of two, 32 when absent (as gguf.cpp reads
  // it), at most 2^30.
  bool Alignment(const GgufKeyValue& kv, std::size_t at) {
    std::uint32_t a = 0;
    ByteReader r(kv.raw);
    if (kv.type != GgufType::kU32 || !r.ReadU32Le(&a)) {
      return FailAt(at, "general.alignment is not a u32");
    }
    if (a == 0 || (a & (a - 1)) != 0) {
      return FailAt(at, "general.alignment %d is not a power of two", a);
    }
    if (a > kGgufMaxAlignment) {
      return FailAt(at,
                    "general.alignment %d exceeds 2^30 (@huggingface/gguf computes the data "
                    "section's start in 32-bit arithmetic)",
                    a);
    }
    out_.alignment = a;
    return true;
  }

  bool TensorInfos() {
    std::unordered_set<std::string_view> names;
    internal::NameBudget budget;
    for (std::uint64_t i = 0; i < tensor_count_; ++i) {
      const std::size_t at = r_.position();
      GgufTensor t;
      if (!ReadString(r_, &t.name)) return Fail("tensor name %d runs past the end of the file", i);
      if (t.name.empty()) {  // both references read it; Kiln has no empty name
        return FailAt(at, "tensor name %d is empty (a Kiln name is at least one byte)", i);
      }
      if (t.name.size() >= kGgmlMaxName) {
        return FailAt(at, "tensor name %d %s is %d bytes long; ggml holds at most %d", i,
                      Quoted(t.name), t.name.size(), kGgmlMaxName - 1);
      }
      if (const std::string why = TextProblem(t.name); !why.empty()) {
        return FailAt(at, "tensor name %d %s %s", i, Quoted(t.name), why);
      }
      if (!budget.Add(t.name.size())) {
        return FailAt(at,
                      "tensor names reach %d bytes at tensor %s, more than a Kiln name heap "
                      "can address (%d)",
                      budget.used(), Quoted(t.name), kMaxKilnNameBytes);
      }
      if (!TensorInfo(&t, at) || !WithinHeaderLimit()) return false;
      if (!names.insert(t.name).second) return FailAt(at, "tensor name %s repeats", Quoted(t.name));
      out_.tensors.push_back(std::move(t));
    }
    return true;
  }

  bool TensorInfo(GgufTensor* t, std::size_t at) {
    const std::string name = Quoted(t->name);
    std::uint32_t n_dims = 0, type = 0;
    if (!r_.ReadU32Le(&n_dims)) return Fail("tensor %s: the file ends inside n_dims", name);
    if (n_dims > kGgmlMaxDims) {
      return FailAt(at, "tensor %s has %d dimensions; ggml holds at most %d", name, n_dims,
                    kGgmlMaxDims);
    }
    t->shape.resize(n_dims);
    for (std::uint32_t k = 0; k < n_dims; ++k) {  // ne[0] (innermost) lands last
      std::uint64_t& d = t->shape[n_dims - 1 - k];
      const std::size_t dim_at = r_.position();
      if (!r_.ReadU64Le(&d)) return Fail("tensor %s: the file ends inside its dimensions", name);
      if (d > static_cast<std::uint64_t>(INT64_MAX)) {  // gguf.cpp reads int64 ne, refuses < 0
        return FailAt(dim_at, "tensor %s: dimension %d exceeds 2^63-1 (negative as ggml's int64)",
                      name, d);
      }
      if (d > kGgufMaxDimension) {
        return FailAt(dim_at,
                      "tensor %s: dimension %d exceeds 2^32, the largest @huggingface/gguf reads",
                      name, d);
      }
    }
    if (!ElementCountBelowInt64Max(*t)) {
      return FailAt(at, "tensor %s: its element count reaches 2^63-1 (gguf.cpp's limit)", name);
    }
    const std::size_t type_at = r_.position();
    if (!r_.ReadU32Le(&type) || !r_.ReadU64Le(&t->offset)) {
      return Fail("tensor %s: the file ends inside its type and offset", name);
    }
    t->type = FindGgmlType(type);
    if (t->type == nullptr)
      return FailAt(type_at, "tensor %s has unknown ggml type %d", name, type);
    const std::uint64_t row = n_dims == 0 ? 1 : t->shape.back();
    if (row % t->type->block_size != 0) {
      return FailAt(at, "tensor %s: row length %d is not a multiple of the %s block size %d", name,
                    row, t->type->name, t->type->block_size);
    }
    return GgufPyReadsAlike(*t, at, type_at);
  }

  // What gguf-py (GGUFReader) would refuse or read otherwise than gguf.cpp
  // (kiln/formats/policy.h).
  bool GgufPyReadsAlike(const GgufTensor& t, std::size_t at, std::size_t type_at) {
    const std::string name = Quoted(t.name);
    const GgmlType& type = *t.type;
    if (type.id > kGgufPyMaxType) {
      return FailAt(type_at,
                    "tensor %s: ggml type %d (%s) is refused: gguf-py does not know it (its types "
                    "end at %d)",
                    name, type.id, type.name, kGgufPyMaxType);
    }
    const bool has_elements =
        std::find(t.shape.begin(), t.shape.end(), 0) == t.shape.end();  // [] is one element
    if (type.id == kGgmlQ8_1 && has_elements) {
      return FailAt(
          at,
          "tensor %s: Q8_1 with elements is refused: gguf-py would misread it (it sizes a "
          "Q8_1 block at %d bytes, ggml's block_q8_1 is %d), so it and gguf.cpp would "
          "read different bytes",
          name, kGgufPyQ8_1BlockBytes, type.type_size);
    }
    // gguf-py's numpy view: F16, F32, F64 and I8-I64 by element; any other
    // type as bytes, its innermost dimension turned into bytes.
    const bool by_element = type.block_size == 1 && type.dtype.has_value() && type.id != kGgmlBf16;
    if (!by_element && t.shape.empty()) {
      return FailAt(at,
                    "tensor %s: a %s tensor of no dimensions is refused: gguf-py reads %s as bytes "
                    "and has no innermost dimension to turn into them",
                    name, type.name, type.name);
    }
    std::optional<std::uint64_t> bytes = by_element ? type.type_size : 1;
    for (std::size_t k = 0; k < t.shape.size() && bytes; ++k) {
      std::uint64_t d = t.shape[k];
      if (!by_element && k + 1 == t.shape.size()) {
        const std::uint64_t block_bytes =
            type.id == kGgmlQ8_1 ? kGgufPyQ8_1BlockBytes : type.type_size;
        d = d / type.block_size * block_bytes;  // d <= 2^32: fits
      }
      if (d != 0) bytes = base::CheckedMul(*bytes, d);
    }
    if (!bytes || *bytes > kNumpyMaxBytes) {
      return FailAt(at,
                    "tensor %s: shape [%s] of %s is refused: gguf-py's numpy array would hold "
                    "more than 2^63-1 bytes counting its nonzero dimensions (numpy refuses it, "
                    "even empty)",
                    name, absl::StrJoin(t.shape, ", "), type.name);
    }
    return true;
  }

  // gguf.cpp's test, made on ne[0..3] (missing dimensions are 1) when no
  // dimension is 0: INT64_MAX/ne[1] <= ne[0], INT64_MAX/ne[2] <= ne[0]*ne[1]
  // or INT64_MAX/ne[3] <= ne[0]*ne[1]*ne[2] refuses the tensor. Each product
  // is formed only after the test before it passed, so none overflows.
  static bool ElementCountBelowInt64Max(const GgufTensor& t) {
    std::array<std::uint64_t, kGgmlMaxDims> ne = {1, 1, 1, 1};
    for (std::size_t k = 0; k < t.shape.size(); ++k) ne[k] = t.shape[t.shape.size() - 1 - k];
    if (std::find(ne.begin(), ne.end(), 0) != ne.end()) return true;
    constexpr auto kMax = static_cast<std::uint64_t>(INT64_MAX);
    std::uint64_t product = ne[0];
    for (std::size_t k = 1; k < kGgmlMaxDims; ++k) {
      if (kMax / ne[k] <= product) return false;
      product *= ne[k];
    }
    return true;
  }

  static std::optional<std::uint64_t> ByteSize(const GgufTensor& t) {
    const auto count = base::ElementCount(t.shape);
    if (!count) return std::nullopt;
    return base::CheckedMul(*count / t.type->block_size, t.type->type_size);
  }

  // gguf.cpp's layout: the data section starts at the end of the tensor
  // infos padded to the alignment, inside the file when there are tensors;
  // each tensor's offset is exactly the sum of the sizes of the tensors
  // before it in file order, each size padded to the alignment (no gap, no
  // other order, a tensor of no bytes at its place too). kiln also wants each
  // tensor's bytes inside the file (gguf.cpp with no_alloc does not look).
  bool Layout() {
    const std::uint64_t end = r_.position();
    const std::uint64_t a = out_.alignment;
    const auto start = base::CheckedAdd(end, (a - end % a) % a);
    if (!start) return Fail("the data section's start exceeds 2^64-1");
    out_.data_start = *start;
    if (!out_.tensors.empty() && out_.data_start > file_.size()) {
      return Fail(
          "the data section starts at %d (the end of the tensor infos padded to the alignment "
          "%d), past the end of the %d-byte file",
          out_.data_start, a, file_.size());
    }
    std::uint64_t expected = 0;  // gguf.cpp's running size of the data section
    for (GgufTensor& t : out_.tensors) {
      if (t.offset != expected) {
        return FailAt(std::min<std::uint64_t>(out_.data_start, file_.size()),
                      "tensor %s: data offset %d, but gguf.cpp requires %d (the sizes of the "
                      "tensors before it, each padded to the alignment %d)",
                      Quoted(t.name), t.offset, expected, a);
      }
      const std::optional<std::uint64_t> size = ByteSize(t);  // nullopt: overflow
      const auto begin = base::CheckedAdd(out_.data_start, t.offset);
      std::optional<std::uint64_t> stop;
      if (begin.has_value() && size.has_value()) stop = base::CheckedAdd(*begin, *size);
      if (!stop || *stop > file_.size()) {
        return FailAt(begin ? std::min<std::uint64_t>(*begin, file_.size()) : file_.size(),
                      "tensor %s: its %s bytes at data offset %d lie past the end of the %d-byte "
                      "file",
                      Quoted(t.name), t.type->name, t.offset, file_.size());
      }
      t.data = file_.subspan(static_cast<std::size_t>(*begin), static_cast<std::size_t>(*size));
      // Both fit: the padded size stays below the file size plus the alignment.
      expected += *size + (a - *size % a) % a;
    }
    return true;
  }

  std::span<const std::uint8_t> file_;
  ReaderLimits limits_;
  ByteReader r_;
  std::string error_;
  std::uint64_t error_at_ = 0;
  std::uint64_t tensor_count_ = 0;
  std::uint64_t kv_count_ = 0;
  std::vector<std::uint32_t> key_offsets_;
  GgufFile out_;
};

}  // namespace

FormatResult<GgufFile> ReadGguf(std::span<const std::uint8_t> file, const ReaderLimits& limits) {
  return GgufParser(file, limits).Parse();
}

void ForEachGgufMetadata(const GgufFile& file,
                         const std::function<bool(const GgufKeyValue&)>& visit) {
  ByteReader r(file.metadata_bytes);
  for (std::uint64_t i = 0; i < file.metadata_count; ++i) {
    GgufKeyValue kv;
    std::uint32_t type = 0;
    std::string why;
    if (!ReadString(r, &kv.key) || !r.ReadU32Le(&type)) return;  // validated: cannot happen
    const std::size_t start = r.position();
    if (!internal::SkipGgufValue(r, type, &why)) return;
    kv.type = static_cast<GgufType>(type);
    kv.raw = file.metadata_bytes.subspan(start, r.position() - start);
    if (!visit(kv)) return;
  }
}

}  // namespace kiln::formats
