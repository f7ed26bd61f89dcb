// Rules P1, P2: the payload region as a whole.
#include <algorithm>

#include "rules.h"

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
    const std::span<std::uint32_t> idx = scratch.Get();
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
Check CheckNoOverlap(const OffsetOrder& order) {
  std::optional<std::uint32_t> prev;
  Range prev_range{0, 0};
  return order.Walk([&](std::uint32_t i, Range r) -> Check {
    if (prev && r.begin < prev_range.end) {
      return FailTensor(Rule::P1, DescriptorFieldOffset(i, desc::kByteOffset), i,
                        "range [%d, %d) overlaps range [%d, %d) of tensor %d", r.begin, r.end,
                        prev_range.begin, prev_range.end, *prev);
    }
    prev = i;
    prev_range = r;
    return std::nullopt;
  });
}

// P2: the gaps between ranges, and after the last, are zero.
Check CheckGapsZero(Bytes block, const HeaderInfo& h, const OffsetOrder& order) {
  const Bytes payload = block.subspan(h.payload_base, h.payload_bytes);
  std::uint64_t cursor = 0;
  auto gap = [&](std::uint64_t end) -> Check {
    if (const auto at = FirstNonzero(payload.subspan(cursor, end - cursor))) {
      const std::uint64_t pos = cursor + *at;
      return Fail(Rule::P2, h.payload_base + pos,
                  "payload byte %d (at byte %d of the block) is 0x%02x, but no tensor covers it",
                  pos, h.payload_base + pos, payload[pos]);
    }
    return std::nullopt;
  };
  Check e = order.Walk([&](std::uint32_t, Range r) -> Check {
    if (Check g = gap(r.begin)) return g;
    cursor = r.end;
    return std::nullopt;
  });
  if (e) return e;
  return gap(h.payload_bytes);
}

}  // namespace

Check CheckPayloads(Bytes block, const HeaderInfo& h, Scratch& scratch) {
  const OffsetOrder order(block, h.tensor_count, scratch);
  if (Check e = CheckNoOverlap(order)) return e;
  return CheckGapsZero(block, h, order);
}

}  // namespace kiln::internal
