// Rules P1, P2: the payload region as a whole, and its walk in offset
// order (the gaps P2 checks; with the ranges, what the block map draws).
#include <algorithm>

#include "kiln/internal/rules.h"

namespace kiln::internal {
namespace {

struct Range {
  std::uint64_t begin;
  std::uint64_t end;  // D8 made begin + length fit
};

Range RangeOf(Bytes block, std::uint32_t i) {
  const DescriptorBytes d = DescriptorAt(block, i);
  const auto begin = LoadLe<std::uint64_t, desc::kByteOffset>(d);
  return {begin, begin + LoadLe<std::uint64_t, desc::kByteLength>(d)};
}

// The tensors with a nonzero range, in offset order. When the descriptors
// already list them in offset order (the canonical layout) this is a view of
// the descriptors and uses no scratch; otherwise their indices are sorted in
// scratch, O(N log N).
class OffsetOrder {
 public:
  OffsetOrder(Bytes block, std::uint32_t count, Scratch& scratch) : block_(block), count_(count) {
    std::uint64_t last = 0;
    for (std::uint32_t i = 0; i < count && sorted_; ++i) {
      const Range r = RangeOf(block, i);
      if (r.begin == r.end) continue;
      sorted_ = r.begin >= last;
      last = r.begin;
    }
    if (sorted_) return;
    const std::span<std::uint32_t> idx = scratch.Get(count);
    std::size_t n = 0;
    for (std::uint32_t i = 0; i < count; ++i) {
      const Range r = RangeOf(block, i);
      if (r.begin != r.end) idx[n++] = i;
    }
    order_ = idx.first(n);
    std::sort(order_.begin(), order_.end(), [&](std::uint32_t a, std::uint32_t b) {
      const std::uint64_t oa = RangeOf(block, a).begin;
      const std::uint64_t ob = RangeOf(block, b).begin;
      return oa != ob ? oa < ob : a < b;
    });
  }

  // Calls fn(index, range) in offset order until it returns an error.
  template <typename Fn>
  Check Walk(Fn fn) const {
    if (!sorted_) {
      for (std::uint32_t i : order_) {
        if (Check e = fn(i, RangeOf(block_, i))) return e;
      }
      return std::nullopt;
    }
    for (std::uint32_t i = 0; i < count_; ++i) {
      const Range r = RangeOf(block_, i);
      if (r.begin == r.end) continue;
      if (Check e = fn(i, r)) return e;
    }
    return std::nullopt;
  }

 private:
  Bytes block_;
  std::uint32_t count_;
  bool sorted_ = true;
  std::span<std::uint32_t> order_;
};

// P1: consecutive ranges in offset order do not overlap.
Check CheckNoOverlap(Bytes block, const OffsetOrder& order) {
  std::optional<std::uint32_t> prev;
  std::uint64_t prev_end = 0;
  return order.Walk([&](std::uint32_t i, Range r) -> Check {
    if (prev && r.begin < prev_end) return OverlapError(block, i, *prev);
    prev = i;
    prev_end = r.end;
    return std::nullopt;
  });
}

// The gaps between ranges, and after the last, to `gaps` (P2), each range
// to `on_range` (nothing for the rule; the block map's regions).
// Precondition: P1 held, so each range starts at or after the cursor.
template <typename OnRange>
Check WalkGaps(const HeaderInfo& h, const OffsetOrder& order, GapVisitor& gaps, OnRange on_range) {
  std::uint64_t cursor = 0;
  Check e = order.Walk([&](std::uint32_t i, Range r) -> Check {
    if (r.begin != cursor) {
      if (Check g = gaps.Gap(cursor, r.begin)) return g;
    }
    on_range(i, r);
    cursor = r.end;
    return std::nullopt;
  });
  if (e || cursor == h.payload_bytes) return e;
  return gaps.Gap(cursor, h.payload_bytes);
}

// P2 on the block's own bytes.
class ZeroGaps final : public GapVisitor {
 public:
  ZeroGaps(Bytes block, const HeaderInfo& h) : block_(block), h_(h) {}
  Check Gap(std::uint64_t from, std::uint64_t to) override {
    return CheckGapZero(block_, h_, from, to);
  }

 private:
  Bytes block_;
  const HeaderInfo& h_;
};

}  // namespace

Error OverlapError(Bytes block, std::uint32_t i, std::uint32_t prev) {
  const Range r = RangeOf(block, i), p = RangeOf(block, prev);
  return FailTensor(Rule::P1, DescriptorFieldOffset(i, desc::kByteOffset), i,
                    "range [%d, %d) overlaps range [%d, %d) of tensor %d", r.begin, r.end, p.begin,
                    p.end, prev);
}

Error GapByteError(const HeaderInfo& h, std::uint64_t pos, std::uint8_t value) {
  return Fail(Rule::P2, h.payload_base + pos,
              "payload byte %d (at byte %d of the block) is 0x%02x, but no tensor covers it", pos,
              h.payload_base + pos, value);
}

Check CheckGapBytes(const HeaderInfo& h, std::uint64_t pos, Bytes seen) {
  if (const auto at = FirstNonzero(seen)) return GapByteError(h, pos + *at, seen[*at]);
  return std::nullopt;
}

Check CheckGapZero(Bytes block, const HeaderInfo& h, std::uint64_t from, std::uint64_t to) {
  return CheckGapBytes(h, from,
                       block.subspan(base::ToSize(h.payload_base + from), base::ToSize(to - from)));
}

Check CheckPayloads(Bytes block, const HeaderInfo& h, Scratch& scratch, GapVisitor& gaps) {
  const OffsetOrder order(block, h.tensor_count, scratch);
  if (Check e = CheckNoOverlap(block, order)) return e;
  return WalkGaps(h, order, gaps, [](std::uint32_t, Range) {});
}

Check WalkPayloads(Bytes block, const HeaderInfo& h, Scratch& scratch, PayloadVisitor& visitor) {
  const OffsetOrder order(block, h.tensor_count, scratch);
  if (Check e = CheckNoOverlap(block, order)) return e;
  return WalkGaps(h, order, visitor,
                  [&](std::uint32_t i, Range r) { visitor.Range(i, r.begin, r.end); });
}

Check CheckPayloads(Bytes block, const HeaderInfo& h, Scratch& scratch) {
  ZeroGaps zero(block, h);
  return CheckPayloads(block, h, scratch, zero);
}

}  // namespace kiln::internal
