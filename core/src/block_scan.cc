// CheckBlock: every rule after H8, in the rule set's checking order. The one
// block scan: Parse runs it on the whole block; StreamValidator runs it on the
// directory region alone and checks the gaps (P2) as they arrive.
//
// One pass over the descriptors decodes each once and checks D1..Q4 on the
// decoded fields (the fast path for plain tensors, else the precise per-rule
// checks). The same pass gathers what the directory-wide rules need of each
// descriptor: it follows the heap slices (N3, and N4 when the heap is not all
// ASCII), enters each name in N5's hash table, checks each quantised
// tensor's scale and outer references (Q5..Q7), and, while the payload
// ranges come in offset order (the canonical layout), finds the first
// overlap (P1) and the first nonzero gap byte (P2). Those findings are only
// reported after every earlier rule has held, so the verdict is the same as
// checking each rule in turn (tests/core/fast_path_test.cc).
//
// Two cases read descriptor fields again after the pass: payload ranges out
// of offset order (P1, P2 sort the tensors by byte_offset) and names that
// exhaust N5's probe budget (sorted by name). Keeping a copy of every range
// and name slice instead would cost up to 24 more bytes of scratch per
// tensor, past the bound of 16 that ScratchWords documents.
#include <cstring>

#include "kiln/internal/heap_slices.h"
#include "kiln/internal/name_table.h"
#include "kiln/internal/plain_descriptor.h"
#include "kiln/internal/rules.h"

namespace kiln {
namespace {

using internal::Bytes;
using internal::Check;
using internal::RawDescriptor;

class DirectoryScan {
 public:
  // read_gaps: the payload bytes are present and the gaps may be read.
  // check_utf8: the heap is not all ASCII, so N4 must look at each slice.
  DirectoryScan(Bytes block, const HeaderInfo& h, bool read_gaps, bool check_utf8,
                internal::Scratch& scratch)
      : h_(h),
        scratch_(scratch),
        block_(block),
        heap_(block, h, check_utf8),
        read_gaps_(read_gaps),
        hash_names_(h.has_names() && h.tensor_count >= 2) {}

  // Descriptor i, which passed D1..Q4.
  // kNamed: the block's name flag (in an unnamed block N1 made every
  // name_len 0, so the name work is compiled out of its pass).
  template <bool kNamed>
  void Add(std::uint32_t i, const RawDescriptor& d) {
    if constexpr (kNamed) AddName(i, d.name_off, d.name_len);  // N2: name_len > 0
    if (d.layout_len != 0) heap_.Add({i, d.layout_off, d.layout_len, true});
    if (d.quant_scheme != 0 && !quant_error_) {
      const auto at = [this](std::uint32_t j) {
        return internal::DecodeDescriptor(internal::DescriptorAt(block_, j));
      };
      quant_error_ = internal::CheckQuantRefs(d, i, h_.tensor_count, at);  // Q5..Q7
    }
    if (d.byte_length != 0) AddRange(i, d.byte_offset, d.byte_offset + d.byte_length);
  }

  // N3, then N4 (when the heap is not all ASCII).
  [[nodiscard]] const internal::HeapSlices& heap() const { return heap_; }

  // N5. Precondition: N3 and N4 held.
  [[nodiscard]] Check UniqueNamesVerdict(internal::Scratch& scratch) {
    if (duplicate_)
      return internal::DuplicateNameError(block_, h_, duplicate_->first, duplicate_->second);
    if (names_unsettled_) return internal::CheckUniqueNames(block_, h_, scratch);
    return std::nullopt;
  }

  // Q5..Q7: the first failure in descriptor order.
  [[nodiscard]] const Check& quant_error() const { return quant_error_; }

  [[nodiscard]] bool ranges_sorted() const { return sorted_; }

  // P1 then P2 for ranges in offset order. Precondition: ranges_sorted()
  // and the gaps were read.
  [[nodiscard]] Check SortedPayloadVerdict() const {
    if (overlap_) return internal::OverlapError(block_, overlap_tensor_, overlap_prev_);
    if (gap_) return internal::CheckGapZero(block_, h_, gap_from_, gap_to_);
    return internal::CheckGapZero(block_, h_, cursor_, h_.payload_bytes);
  }

 private:
  // N5's table takes a name only while the names tile the heap in order: a
  // name that does not follow on breaks N3, so N5 needs no verdict. That
  // also bounds the hashing by the heap's size: names that overlap (each
  // descriptor pointing at the same 64 KiB) would otherwise be hashed
  // again and again, 512 bytes of work per byte of input.
  void AddName(std::uint32_t i, std::uint16_t off, std::uint16_t len) {
    heap_.Add({i, off, len, false});
    if (!hash_names_ || duplicate_ || names_unsettled_) return;
    if (!heap_.names_follow_on()) {
      names_unsettled_ = true;  // N3 fails; should it not, CheckUniqueNames decides
      return;
    }
    if (!names_) {  // allocated once a first descriptor has passed
      names_.emplace(block_, h_, scratch_.Get(ScratchWords(h_.tensor_count)),
                     internal::DefaultProbeBudget(h_.tensor_count));
    }
    std::uint32_t first = 0;
    switch (names_->Add(i, base::ToSize(internal::HeapStart(h_.tensor_count) + off), len, &first)) {
      case internal::NameTable::Added::kNew:
        break;
      case internal::NameTable::Added::kRepeat:
        duplicate_.emplace(i, first);
        break;
      case internal::NameTable::Added::kOverBudget:
        names_unsettled_ = true;  // CheckUniqueNames sorts
        break;
    }
  }

  void AddRange(std::uint32_t i, std::uint64_t begin, std::uint64_t end) {
    if (!sorted_) return;
    if (begin < last_begin_) {
      sorted_ = false;  // CheckPayloads sorts them instead
      return;
    }
    last_begin_ = begin;
    if (overlap_) return;
    if (has_prev_ && begin < cursor_) {
      overlap_ = true;
      overlap_tensor_ = i;
      overlap_prev_ = prev_;
      return;
    }
    if (read_gaps_ && !gap_ && begin != cursor_ &&
        internal::FirstNonzero(block_.subspan(base::ToSize(h_.payload_base + cursor_),
                                              base::ToSize(begin - cursor_)))) {
      gap_ = true;  // reported (P2) only if no rule before it fails
      gap_from_ = cursor_;
      gap_to_ = begin;
    }
    has_prev_ = true;
    prev_ = i;
    cursor_ = end;
  }

  // Ordered for size (large members first), not by rule.
  std::optional<internal::NameTable> names_;  // N5, for a named block of 2 or more
  const HeaderInfo& h_;
  internal::Scratch& scratch_;
  std::uint64_t last_begin_ = 0;  // P1, P2 while the ranges come in offset order:
  std::uint64_t cursor_ = 0;      // where the previous range ends
  std::uint64_t gap_from_ = 0;    // the first gap [gap_from_, gap_to_) holding a
  std::uint64_t gap_to_ = 0;      // nonzero byte
  Bytes block_;
  Check quant_error_;                 // Q5..Q7
  internal::HeapSlices heap_;         // N3, N4
  std::uint32_t prev_ = 0;            // the previous tensor with a nonzero range
  std::uint32_t overlap_tensor_ = 0;  // the first overlap: tensor overlap_tensor_ starts
  std::uint32_t overlap_prev_ = 0;    // before overlap_prev_ ends
  std::optional<std::pair<std::uint32_t, std::uint32_t>> duplicate_;  // N5: (tensor, first)
  bool read_gaps_;
  bool hash_names_;
  bool names_unsettled_ = false;  // N5: the table gave no verdict
  bool sorted_ = true;
  bool has_prev_ = false;
  bool overlap_ = false;
  bool gap_ = false;
};

// N4 holds for every name when the heap is all ASCII.
bool HeapIsAscii(Bytes heap) {
  std::uint64_t high = 0;
  std::size_t i = 0;
  for (; heap.size() - i >= 32; i += 32) {  // four words at a time
    std::uint64_t w[4] = {};
    std::memcpy(w, heap.data() + i, 32);
    high |= (w[0] | w[1]) | (w[2] | w[3]);
  }
  for (; heap.size() - i >= 8; i += 8) {
    std::uint64_t w = 0;
    std::memcpy(&w, heap.data() + i, 8);
    high |= w;
  }
  for (; i < heap.size(); ++i) high |= heap[i];
  return (high & 0x8080808080808080ull) == 0;
}

// D1..Q4 for each descriptor, decoded once, and what the directory-wide
// rules need of it into `scan`. One loop per value of the name flag.
template <bool kNamed>
Check ScanDescriptors(Bytes block, const HeaderInfo& h, DirectoryScan& scan) {
  for (std::uint32_t i = 0; i < h.tensor_count; ++i) {
    const RawDescriptor d = internal::DecodeDescriptor(internal::DescriptorAt(block, i));
    if (!internal::PlainFieldsOk<kNamed>(d, h)) {
      if (Check e = internal::CheckFields(d, i, h)) return e;
    }
    scan.Add<kNamed>(i, d);
  }
  return std::nullopt;
}

}  // namespace

namespace internal {

Check CheckBlock(Bytes block, const HeaderInfo& h, Scratch& scratch, GapVisitor* gaps) {
  // H9, L1
  if (Check e = CheckNameFlag(h)) return e;
  if (Check e = CheckPadding(block, h)) return e;
  // Descriptors in index order: D1..D10, N1, N2, O1..O3, Q1..Q4, each
  // decoded once.
  const bool ascii =
      HeapIsAscii(block.subspan(base::ToSize(HeapStart(h.tensor_count)), h.name_bytes));
  DirectoryScan scan(block, h, gaps == nullptr, !ascii, scratch);
  if (Check e = h.has_names() ? ScanDescriptors<true>(block, h, scan)
                              : ScanDescriptors<false>(block, h, scan)) {
    return e;
  }
  // N3, N4, N5, from what the pass gathered
  if (Check e = scan.heap().OrderVerdict()) return e;
  if (!ascii) {
    if (Check e = scan.heap().Utf8Verdict()) return e;
  }
  if (Check e = scan.UniqueNamesVerdict(scratch)) return e;
  // Q5..Q7, checked in the pass
  if (scan.quant_error()) return scan.quant_error();
  // P1, P2
  if (gaps != nullptr) return CheckPayloads(block, h, scratch, *gaps);
  return scan.ranges_sorted() ? scan.SortedPayloadVerdict() : CheckPayloads(block, h, scratch);
}

// The checking order CheckBlock follows, as what each verdict implies held.
Held HeldBefore(Rule r) {
  switch (r) {
    case Rule::H1:
    case Rule::H2:
    case Rule::H3:
    case Rule::H4:
    case Rule::H5:
    case Rule::H6:
    case Rule::H7:
      return Held::kNothing;
    case Rule::H8:
    case Rule::H9:
    case Rule::L1:
    case Rule::D1:
    case Rule::D2:
    case Rule::D3:
    case Rule::D4:
    case Rule::D5:
    case Rule::D6:
    case Rule::D7:
    case Rule::D8:
    case Rule::D9:
    case Rule::D10:
    case Rule::N1:
    case Rule::N2:
    case Rule::O1:
    case Rule::O2:
    case Rule::O3:
    case Rule::Q1:
    case Rule::Q2:
    case Rule::Q3:
    case Rule::Q4:
    case Rule::N3:
    case Rule::N4:
      return Held::kHeader;
    case Rule::N5:
    case Rule::Q5:
    case Rule::Q6:
    case Rule::Q7:
    case Rule::P1:
    case Rule::P2:
      return Held::kDescriptors;
  }
  return Held::kNothing;
}

}  // namespace internal
}  // namespace kiln
