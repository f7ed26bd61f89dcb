// Rules N3, N4, N5: the name heap as a whole.
#include <algorithm>
#include <string_view>

#include "absl/strings/escaping.h"

#include "name_table.h"
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

Error DuplicateNameError(Bytes block, const HeaderInfo& h, std::uint32_t dup, std::uint32_t first) {
  const std::string_view name = NameOf(block, h, dup);
  return FailTensor(
      Rule::N5, DescriptorFieldOffset(dup, desc::kNameOff), dup,
      "name \"%s\" (%d bytes) repeats the name of tensor %d",
      absl::CHexEscape(absl::string_view(name.data(), std::min<std::size_t>(name.size(), 64))),
      name.size(), first);
}

Check UniqueNamesBySorting(Bytes block, const HeaderInfo& h, std::span<std::uint32_t> idx) {
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
  return DuplicateNameError(block, h, *dup, first);
}

// N5: tensor names are unique as raw bytes (NameTable, name_table.h).
Check CheckUniqueNames(Bytes block, const HeaderInfo& h, Scratch& scratch,
                       std::optional<std::uint64_t> probe_budget) {
  if (!h.has_names() || h.tensor_count < 2) return std::nullopt;
  const std::span<std::uint32_t> words = scratch.Get(ScratchWords(h.tensor_count));
  NameTable table(block, h, words, probe_budget.value_or(DefaultProbeBudget(h.tensor_count)));
  const std::uint64_t heap = HeapStart(h.tensor_count);
  for (std::uint32_t i = 0; i < h.tensor_count; ++i) {
    const DescriptorBytes d = DescriptorAt(block, i);
    std::uint32_t first = 0;
    switch (table.Add(i, heap + LoadLe<std::uint16_t, desc::kNameOff>(d),
                      LoadLe<std::uint16_t, desc::kNameLen>(d), &first)) {
      case NameTable::Added::kNew:
        break;
      case NameTable::Added::kRepeat:
        return DuplicateNameError(block, h, i, first);
      case NameTable::Added::kOverBudget:
        return UniqueNamesBySorting(block, h, words.first(h.tensor_count));
    }
  }
  return std::nullopt;
}

}  // namespace kiln::internal
