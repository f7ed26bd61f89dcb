// Rules N3, N4, N5: the name heap as a whole.
#include <algorithm>
#include <string_view>

#include "kiln/base/escape.h"
#include "kiln/internal/heap_slices.h"
#include "kiln/internal/name_table.h"
#include "kiln/internal/primitives.h"
#include "kiln/internal/rules.h"

namespace kiln::internal {
namespace {

std::string_view What(const Slice& s) { return s.layout ? "layout name" : "name"; }

std::size_t FieldOf(const Slice& s) { return s.layout ? desc::kLayoutOff : desc::kNameOff; }

}  // namespace

void HeapSlices::CheckUtf8(Chain& c, const Slice& s) {
  const Bytes text = block_.subspan(base::ToSize(HeapStart(h_.tensor_count) + s.off), s.len);
  if (const auto bad = FirstInvalidUtf8(text)) {
    c.bad_utf8 = s;
    c.bad_at = *bad;
  }
}

Error HeapSlices::OrderError(const Slice& s, std::uint64_t cursor) const {
  const std::uint64_t at = DescriptorFieldOffset(s.tensor, FieldOf(s));
  if (s.off != cursor) {
    return FailTensor(Rule::N3, at, s.tensor,
                      "%s starts at heap offset %d, but the heap continues at %d (%s)", What(s),
                      s.off, cursor, s.off > cursor ? "a hole" : "reordered or overlapping");
  }
  return FailTensor(Rule::N3, at, s.tensor, "%s slice [%d, %d) ends past name_bytes %d", What(s),
                    s.off, s.end(), h_.name_bytes);
}

Check HeapSlices::OrderVerdict() const {
  if (names_.broken) return OrderError(*names_.broken, names_.broken_cursor);
  std::uint64_t cursor = names_.cursor;
  if (layouts_.first) {
    // The layout chain was followed from its own first slice: it holds once
    // that slice starts where the names end.
    if (layouts_.first->off != cursor) return OrderError(*layouts_.first, cursor);
    if (layouts_.broken) return OrderError(*layouts_.broken, layouts_.broken_cursor);
    cursor = layouts_.cursor;
  }
  if (cursor != h_.name_bytes) {
    return Fail(Rule::N3, HeapStart(h_.tensor_count) + cursor,
                "the last heap slice ends at %d, but name_bytes is %d", cursor, h_.name_bytes);
  }
  return std::nullopt;
}

Check HeapSlices::Utf8Verdict() const {
  for (const Chain* c : {&names_, &layouts_}) {
    if (!c->bad_utf8) continue;
    const Slice& s = *c->bad_utf8;
    const std::uint64_t at = HeapStart(h_.tensor_count) + s.off + c->bad_at;
    return FailTensor(Rule::N4, at, s.tensor,
                      "%s has an ill-formed UTF-8 sequence at its byte %d (0x%02x)", What(s),
                      c->bad_at, block_[base::ToSize(at)]);
  }
  return std::nullopt;
}

Error DuplicateNameError(Bytes block, const HeaderInfo& h, std::uint32_t dup, std::uint32_t first) {
  const std::string_view name = NameOf(block, h, dup);
  return FailTensor(Rule::N5, DescriptorFieldOffset(dup, desc::kNameOff), dup,
                    "name %s (%d bytes) repeats the name of tensor %d", base::Quoted(name),
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
    switch (table.Add(i, base::ToSize(heap + LoadLe<std::uint16_t, desc::kNameOff>(d)),
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
