// Accessors of a validated Directory. They decode descriptors on demand from
// the caller's buffer. The rules proved every field in range when Parse ran;
// the buffer contract (directory.h) says the bytes must not change after
// that, but a caller that breaks it (a file mapped MAP_PRIVATE that another
// process rewrites, a buffer reused too early) must get wrong values, never a
// read outside the buffer: so every view is clamped to the block here, and
// the rank to kMaxRank, instead of trusting the re-read fields.
#include <algorithm>
#include <stdexcept>

#include "kiln/directory.h"
#include "kiln/internal/layout.h"
#include "kiln/internal/primitives.h"
#include "kiln/internal/rules.h"

namespace kiln {
namespace {

// bytes[off, off + len), cut to what `bytes` holds. Identical to subspan for
// every field a parse validated; for bytes changed after the parse, a view
// that cannot leave the buffer.
std::span<const std::uint8_t> Clamped(std::span<const std::uint8_t> bytes, std::uint64_t off,
                                      std::uint64_t len) {
  if (off > bytes.size()) return {};
  const std::size_t at = static_cast<std::size_t>(off);
  return bytes.subspan(at,
                       static_cast<std::size_t>(std::min<std::uint64_t>(len, bytes.size() - at)));
}

}  // namespace

std::span<const std::uint8_t> Directory::name_heap() const {
  return Clamped(block_, internal::HeapStart(header_.tensor_count), header_.name_bytes);
}

Tensor Directory::tensor(std::uint32_t i) const {
  if (i >= header_.tensor_count) throw std::out_of_range("kiln::Directory::tensor: bad index");
  internal::RawDescriptor d = internal::DecodeDescriptor(internal::DescriptorAt(block_, i));
  d.rank = std::min<std::uint8_t>(d.rank, kMaxRank);  // D3 held; see the contract
  const std::span<const std::uint8_t> heap = name_heap();
  auto text = [&](std::uint16_t off, std::uint16_t len) -> std::string_view {
    if (len == 0) return {};
    const auto s = Clamped(heap, off, len);
    return {reinterpret_cast<const char*>(s.data()), s.size()};
  };
  Tensor t;
  t.index = i;
  t.name = text(d.name_off, d.name_len);
  t.dtype = static_cast<Dtype>(d.dtype);
  t.rank = d.rank;
  t.shape = d.shape;
  t.element_count = internal::ElementCount(d).value_or(0);  // D5 held
  t.byte_offset = d.byte_offset;
  t.byte_length = d.byte_length;
  // D9 held: payload_base + byte_offset cannot overflow for validated bytes;
  // for changed ones an overflow gives an empty view. A streamed directory
  // has no payload bytes (has_payloads() is false): its views stay empty.
  if (has_payloads_) {
    const std::optional<std::uint64_t> start =
        internal::CheckedAdd(header_.payload_base, d.byte_offset);
    if (start) t.payload = Clamped(block_, *start, d.byte_length);
  }
  t.layout = text(d.layout_off, d.layout_len);
  t.block_size = d.block_size;
  t.quant.scheme = static_cast<QuantScheme>(d.quant_scheme);
  t.quant.axis = d.quant_axis;
  t.quant.group_size = d.group_size;
  if (d.scale_index != kNoTensor) t.quant.scale_index = d.scale_index;
  if (d.outer_index != kNoTensor) t.quant.outer_index = d.outer_index;
  return t;
}

std::optional<std::uint32_t> Directory::Find(std::string_view name) const {
  for (std::uint32_t i = 0; i < header_.tensor_count; ++i) {
    if (tensor(i).name == name) return i;
  }
  return std::nullopt;
}

}  // namespace kiln
