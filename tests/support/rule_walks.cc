#include "support/rule_walks.h"

#include <cstdint>

#include "kiln/internal/heap_slices.h"
#include "kiln/internal/layout.h"
#include "kiln/internal/primitives.h"

namespace kiln::internal {
namespace {

// Calls add(slice) for every slice in heap order: the tensor names in
// descriptor order, then the layout names in descriptor order. After N1, N2,
// O1, O2 hold, a slice is present exactly when its length is nonzero.
template <typename Fn>
void ForEachSlice(Bytes block, const HeaderInfo& h, Fn add) {
  for (const bool layout : {false, true}) {
    for (std::uint32_t i = 0; i < h.tensor_count; ++i) {
      const DescriptorBytes d = DescriptorAt(block, i);
      const auto off = layout ? LoadLe<std::uint16_t, desc::kLayoutOff>(d)
                              : LoadLe<std::uint16_t, desc::kNameOff>(d);
      const auto len = layout ? LoadLe<std::uint16_t, desc::kLayoutLen>(d)
                              : LoadLe<std::uint16_t, desc::kNameLen>(d);
      if (len != 0) add(Slice{i, off, len, layout});
    }
  }
}

}  // namespace

Check CheckFraming(Bytes buffer, const HeaderInfo& h, Mode mode) {
  if (Check e = CheckLength(buffer.size(), h, mode)) return e;
  if (Check e = CheckNameFlag(h)) return e;
  return CheckPadding(buffer, h);
}

Check CheckHeapOrder(Bytes block, const HeaderInfo& h) {
  HeapSlices slices(block, h, false);
  ForEachSlice(block, h, [&](const Slice& s) { slices.Add(s); });
  return slices.OrderVerdict();
}

Check CheckHeapUtf8(Bytes block, const HeaderInfo& h) {
  HeapSlices slices(block, h, true);
  ForEachSlice(block, h, [&](const Slice& s) { slices.Add(s); });
  return slices.Utf8Verdict();
}

Check CheckScales(Bytes block, const HeaderInfo& h) {
  const auto at = [block](std::uint32_t j) { return DecodeDescriptor(DescriptorAt(block, j)); };
  for (std::uint32_t i = 0; i < h.tensor_count; ++i) {
    if (Check e = CheckQuantRefs(at(i), i, h.tensor_count, at)) return e;
  }
  return std::nullopt;
}

}  // namespace kiln::internal
