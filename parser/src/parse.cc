// Parse and ReadHeader: the rule groups, in the rule set's checking order.
// CheckBlock (every rule after H8) is shared with StreamValidator, which runs
// it on the directory region alone and checks the gaps (P2) as they arrive.
//
// One pass over the descriptors checks D1..Q4 for each (the fast path for
// plain tensors, else the precise per-rule checks) and gathers what the
// directory-wide rules need: whether the names tile the heap in order,
// whether any tensor is opaque or quantised, and, while the payload ranges
// come in offset order (the canonical layout), the first overlap (P1) and the
// first nonzero gap byte (P2). Those findings are only reported after every
// earlier rule has held, so the verdict is the same as checking each rule in
// turn; the full checks run whenever the pass could not settle a rule.
#include <cstring>

#include "kiln/directory.h"
#include "plain_descriptor.h"
#include "rules.h"

namespace kiln {
namespace {

using internal::Bytes;
using internal::Check;
using internal::DescriptorBytes;
using internal::DescriptorFacts;

class DirectoryScan {
 public:
  // read_gaps: the payload bytes are present and the gaps may be read.
  DirectoryScan(Bytes block, const HeaderInfo& h, bool read_gaps)
      : block_(block), h_(h), read_gaps_(read_gaps) {}

  void Add(std::uint32_t i, const DescriptorFacts& f) {
    if (f.name_len != 0) {
      names_in_order_ = names_in_order_ && f.name_off == names_end_;
      names_end_ = std::uint64_t{f.name_off} + f.name_len;
    }
    layouts_ = layouts_ || f.has_layout;
    quantised_ = quantised_ || f.quantised;
    if (f.byte_length != 0) AddRange(i, f.byte_offset, f.byte_offset + f.byte_length);
  }

  // N3 holds without looking further: the names tile the heap in order and
  // there are no layout names.
  [[nodiscard]] bool heap_settled() const {
    return names_in_order_ && !layouts_ && names_end_ == h_.name_bytes;
  }
  [[nodiscard]] bool quantised() const { return quantised_; }
  [[nodiscard]] bool ranges_sorted() const { return sorted_; }

  // P1 then P2 for ranges in offset order. Precondition: ranges_sorted()
  // and the gaps were read.
  [[nodiscard]] Check SortedPayloadVerdict() const {
    if (overlap_) return internal::OverlapError(block_, overlap_tensor_, overlap_prev_);
    if (gap_) return internal::CheckGapZero(block_, h_, gap_from_, gap_to_);
    return internal::CheckGapZero(block_, h_, cursor_, h_.payload_bytes);
  }

 private:
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
        internal::FirstNonzero(block_.subspan(h_.payload_base + cursor_, begin - cursor_))) {
      gap_ = true;  // reported (P2) only if no rule before it fails
      gap_from_ = cursor_;
      gap_to_ = begin;
    }
    has_prev_ = true;
    prev_ = i;
    cursor_ = end;
  }

  Bytes block_;
  const HeaderInfo& h_;
  bool read_gaps_;
  bool names_in_order_ = true;
  std::uint64_t names_end_ = 0;
  bool layouts_ = false;
  bool quantised_ = false;
  bool sorted_ = true;
  std::uint64_t last_begin_ = 0;
  bool has_prev_ = false;
  std::uint32_t prev_ = 0;            // the previous tensor with a nonzero range
  std::uint64_t cursor_ = 0;          // where its range ends
  bool overlap_ = false;              // the first overlap: tensor overlap_tensor_ starts
  std::uint32_t overlap_tensor_ = 0;  // before overlap_prev_ ends
  std::uint32_t overlap_prev_ = 0;
  bool gap_ = false;  // the first gap [gap_from_, gap_to_) holding a nonzero byte
  std::uint64_t gap_from_ = 0;
  std::uint64_t gap_to_ = 0;
};

// N4 holds for every name when the heap is all ASCII.
bool HeapIsAscii(Bytes heap) {
  std::uint64_t high = 0;
  std::size_t i = 0;
  for (; heap.size() - i >= 8; i += 8) {
    std::uint64_t w = 0;
    std::memcpy(&w, heap.data() + i, 8);
    high |= w;
  }
  for (; i < heap.size(); ++i) high |= heap[i];
  return (high & 0x8080808080808080ull) == 0;
}

}  // namespace

namespace internal {

Check CheckBlock(Bytes block, const HeaderInfo& h, Scratch& scratch, GapVisitor* gaps) {
  // H9, L1
  if (Check e = CheckNameFlag(h)) return e;
  if (Check e = CheckPadding(block, h)) return e;
  // Descriptors in index order: D1..D10, N1, N2, O1..O3, Q1..Q4.
  DirectoryScan scan(block, h, gaps == nullptr);
  for (std::uint32_t i = 0; i < h.tensor_count; ++i) {
    const DescriptorBytes d = DescriptorAt(block, i);
    DescriptorFacts facts;
    if (!PlainDescriptorOk(d, h, &facts)) {
      if (Check e = CheckDescriptor(block, h, i)) return e;
      facts = FactsOf(d);
    }
    scan.Add(i, facts);
  }
  // N3, N4, N5
  if (!scan.heap_settled()) {
    if (Check e = CheckHeapOrder(block, h)) return e;
  }
  const Bytes heap = block.subspan(HeapStart(h.tensor_count), h.name_bytes);
  if (!HeapIsAscii(heap)) {
    if (Check e = CheckHeapUtf8(block, h)) return e;
  }
  if (Check e = CheckUniqueNames(block, h, scratch)) return e;
  // Q5..Q7 in descriptor order
  if (scan.quantised()) {
    if (Check e = CheckScales(block, h)) return e;
  }
  // P1, P2
  if (gaps != nullptr) return CheckPayloads(block, h, scratch, *gaps);
  return scan.ranges_sorted() ? scan.SortedPayloadVerdict() : CheckPayloads(block, h, scratch);
}

}  // namespace internal

Result<HeaderInfo> ReadHeader(std::span<const std::uint8_t> first_bytes, const Limits& limits) {
  return internal::CheckHeader(first_bytes, limits);
}

Result<Directory> Parse(std::span<const std::uint8_t> buffer, const ParseOptions& options) {
  // H1..H7
  Result<HeaderInfo> header = internal::CheckHeader(buffer, options.limits);
  if (!header.ok()) return header.error();
  const HeaderInfo& h = header.value();
  // H8
  if (Check e = internal::CheckLength(buffer.size(), h, options.mode)) return *std::move(e);
  const Bytes block = buffer.first(h.block_length);
  // H9 .. P2
  internal::Scratch scratch(options.scratch);
  if (Check e = internal::CheckBlock(block, h, scratch, nullptr)) return *std::move(e);
  return Directory(h, block);
}

}  // namespace kiln
