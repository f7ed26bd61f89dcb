// Rules N3, N4, N5: the name heap as a whole.
#include <algorithm>
#include <bit>
#include <cstring>
#include <string_view>

#include "absl/strings/escaping.h"

#include "primitives.h"
#include "rules.h"

namespace kiln::internal {
namespace {

// One slice of the heap, as a descriptor claims it.
struct Slice {
  std::uint32_t tensor;
  std::uint16_t off;
  std::uint16_t len;
  std::size_t field;      // desc::kNameOff or desc::kLayoutOff
  std::string_view what;  // "name" or "layout name"
};

// Calls fn(slice) for every slice in heap order: the tensor names in
// descriptor order, then the layout names in descriptor order. Stops at the
// first failure. After N1, N2, O1, O2 hold, a slice is present exactly when
// its length is nonzero.
template <typename Fn>
Check ForEachSlice(Bytes block, const HeaderInfo& h, Fn fn) {
  for (std::size_t field : {desc::kNameOff, desc::kLayoutOff}) {
    for (std::uint32_t i = 0; i < h.tensor_count; ++i) {
      const DescriptorBytes d = DescriptorAt(block, i);
      const bool name = field == desc::kNameOff;
      const auto off = name ? LoadLe<std::uint16_t, desc::kNameOff>(d)
                            : LoadLe<std::uint16_t, desc::kLayoutOff>(d);
      const auto len = name ? LoadLe<std::uint16_t, desc::kNameLen>(d)
                            : LoadLe<std::uint16_t, desc::kLayoutLen>(d);
      if (len == 0) continue;
      if (Check e = fn(Slice{i, off, len, field, name ? "name" : "layout name"})) return e;
    }
  }
  return std::nullopt;
}

}  // namespace

// N3: each slice starts where the previous one ended, the first at 0, none
// ends past name_bytes, and the last ends at name_bytes.
Check CheckHeapOrder(Bytes block, const HeaderInfo& h) {
  std::uint64_t cursor = 0;
  Check e = ForEachSlice(block, h, [&](const Slice& s) -> Check {
    const std::uint64_t at = DescriptorFieldOffset(s.tensor, s.field);
    if (s.off != cursor) {
      return FailTensor(Rule::N3, at, s.tensor,
                        "%s starts at heap offset %d, but the heap continues at %d (%s)", s.what,
                        s.off, cursor, s.off > cursor ? "a hole" : "reordered or overlapping");
    }
    const std::uint64_t end = std::uint64_t{s.off} + s.len;
    if (end > h.name_bytes) {
      return FailTensor(Rule::N3, at, s.tensor, "%s slice [%d, %d) ends past name_bytes %d", s.what,
                        s.off, end, h.name_bytes);
    }
    cursor = end;
    return std::nullopt;
  });
  if (e) return e;
  if (cursor != h.name_bytes) {
    return Fail(Rule::N3, HeapStart(h.tensor_count) + cursor,
                "the last heap slice ends at %d, but name_bytes is %d", cursor, h.name_bytes);
  }
  return std::nullopt;
}

// N4: every slice is well-formed UTF-8. Runs after N3, so slices are in range.
Check CheckHeapUtf8(Bytes block, const HeaderInfo& h) {
  const std::uint64_t heap = HeapStart(h.tensor_count);
  return ForEachSlice(block, h, [&](const Slice& s) -> Check {
    const Bytes text = block.subspan(heap + s.off, s.len);
    if (const auto bad = FirstInvalidUtf8(text)) {
      return FailTensor(Rule::N4, heap + s.off + *bad, s.tensor,
                        "%s has an ill-formed UTF-8 sequence at its byte %d (0x%02x)", s.what, *bad,
                        text[*bad]);
    }
    return std::nullopt;
  });
}

namespace {

std::string_view NameOf(Bytes block, const HeaderInfo& h, std::uint32_t i) {
  const DescriptorBytes d = DescriptorAt(block, i);
  const Bytes name =
      block.subspan(HeapStart(h.tensor_count) + LoadLe<std::uint16_t, desc::kNameOff>(d),
                    LoadLe<std::uint16_t, desc::kNameLen>(d));
  return {reinterpret_cast<const char*>(name.data()), name.size()};
}

// A 64-bit hash of a name. Multiplication in 128 bits and folding the halves
// never wraps (the integer sanitizer checks that), and every byte counts.
std::uint64_t Mix(std::uint64_t a, std::uint64_t b) {
  const unsigned __int128 p = static_cast<unsigned __int128>(a) * b;
  return static_cast<std::uint64_t>(p) ^ static_cast<std::uint64_t>(p >> 64);
}

std::uint64_t HashName(std::string_view s) {
  constexpr std::uint64_t kA = 0xa0761d6478bd642full, kB = 0xe7037ed1a0b428dbull;
  std::uint64_t h = Mix(s.size() ^ kA, kB);
  std::size_t i = 0;
  for (; s.size() - i >= 8; i += 8) {
    std::uint64_t w = 0;
    std::memcpy(&w, s.data() + i, 8);
    h = Mix(h ^ w ^ kA, kB);
  }
  if (i < s.size()) {
    std::uint64_t w = 0;
    std::memcpy(&w, s.data() + i, s.size() - i);
    h = Mix(h ^ w ^ kB, kA);
  }
  return h;
}

Error DuplicateError(Bytes block, const HeaderInfo& h, std::uint32_t dup, std::uint32_t first) {
  const std::string_view name = NameOf(block, h, dup);
  return FailTensor(
      Rule::N5, DescriptorFieldOffset(dup, desc::kNameOff), dup,
      "name \"%s\" (%d bytes) repeats the name of tensor %d",
      absl::CHexEscape(absl::string_view(name.data(), std::min<std::size_t>(name.size(), 64))),
      name.size(), first);
}

// Sorting the indices by (name, index): O(N log N) whatever the names are.
Check UniqueBySorting(Bytes block, const HeaderInfo& h, std::span<std::uint32_t> idx) {
  for (std::uint32_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::sort(idx.begin(), idx.end(), [&](std::uint32_t a, std::uint32_t b) {
    const int c = NameOf(block, h, a).compare(NameOf(block, h, b));
    return c != 0 ? c < 0 : a < b;
  });
  std::optional<std::uint32_t> dup;
  std::uint32_t first = 0;
  for (std::size_t k = 1; k < idx.size(); ++k) {
    if (NameOf(block, h, idx[k]) == NameOf(block, h, idx[k - 1])) {
      if (!dup || idx[k] < *dup) {
        dup = idx[k];
        first = idx[k - 1];
      }
    }
  }
  if (!dup) return std::nullopt;
  return DuplicateError(block, h, *dup, first);
}

}  // namespace

// N5: tensor names are unique as raw bytes. Names go into an open-addressing
// table of tensor indices in index order, so the first repeat found is the
// lowest index whose name an earlier tensor has. Probing is budgeted: names
// crafted to collide cannot make it quadratic, because past the budget the
// check falls back to sorting, which gives the same verdict.
Check CheckUniqueNames(Bytes block, const HeaderInfo& h, Scratch& scratch,
                       std::optional<std::uint64_t> probe_budget) {
  if (!h.has_names() || h.tensor_count < 2) return std::nullopt;
  // A power of two of at least twice the tensors: at most half full.
  const std::span<std::uint32_t> table = scratch.Get(ScratchWords(h.tensor_count));
  std::fill(table.begin(), table.end(), kNoTensor);
  const std::size_t mask = table.size() - 1;
  const std::uint64_t default_budget = 8 * std::uint64_t{h.tensor_count} + 1024;
  std::uint64_t budget = probe_budget ? *probe_budget : default_budget;
  for (std::uint32_t i = 0; i < h.tensor_count; ++i) {
    const std::string_view name = NameOf(block, h, i);
    for (std::size_t slot = HashName(name) & mask;; slot = (slot + 1) & mask) {
      if (budget == 0) return UniqueBySorting(block, h, table.first(h.tensor_count));
      --budget;
      if (table[slot] == kNoTensor) {
        table[slot] = i;
        break;
      }
      if (NameOf(block, h, table[slot]) == name) return DuplicateError(block, h, i, table[slot]);
    }
  }
  return std::nullopt;
}

}  // namespace kiln::internal
