// Parse and ReadHeader: H1..H8 on the buffer, then core's block scan
// (CheckBlock, core/src/block_scan.cc) for every rule after H8.
#include "kiln/directory.h"
#include "kiln/internal/rules.h"

namespace kiln {

using internal::Bytes;
using internal::Check;

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
  const Bytes block = buffer.first(base::ToSize(h.block_length));
  // H9 .. P2
  internal::Scratch scratch(options.scratch);
  if (Check e = internal::CheckBlock(block, h, scratch, nullptr)) return *std::move(e);
  return Directory(h, block);
}

}  // namespace kiln
