// Parse and ReadHeader: the rule groups, in the rule set's checking order.
#include "kiln/directory.h"
#include "rules.h"

namespace kiln {

Result<HeaderInfo> ReadHeader(std::span<const std::uint8_t> first_bytes, const Limits& limits) {
  return internal::CheckHeader(first_bytes, limits);
}

Result<Directory> Parse(std::span<const std::uint8_t> buffer, const ParseOptions& options) {
  using internal::Check;
  // H1..H7
  Result<HeaderInfo> header = internal::CheckHeader(buffer, options.limits);
  if (!header.ok()) return header.error();
  const HeaderInfo& h = header.value();
  // H8, H9, L1
  if (Check e = internal::CheckFraming(buffer, h, options.mode)) return *std::move(e);
  const std::span<const std::uint8_t> block = buffer.first(h.block_length);
  // Descriptors in index order: D1..D10, N1, N2, O1..O3, Q1..Q4.
  for (std::uint32_t i = 0; i < h.tensor_count; ++i) {
    if (Check e = internal::CheckDescriptor(block, h, i)) return *std::move(e);
  }
  internal::Scratch scratch(options.scratch, h.tensor_count);
  // N3, N4, N5
  if (Check e = internal::CheckHeap(block, h, scratch)) return *std::move(e);
  // Q5..Q7 in descriptor order
  if (Check e = internal::CheckScales(block, h)) return *std::move(e);
  // P1, P2
  if (Check e = internal::CheckPayloads(block, h, scratch)) return *std::move(e);
  return Directory(h, block);
}

}  // namespace kiln
