// Accessors of a validated Directory. They decode descriptors on demand; the
// rules already proved every field in range, so nothing here can fail.
#include <stdexcept>

#include "kiln/directory.h"
#include "layout.h"
#include "rules.h"

namespace kiln {

std::span<const std::uint8_t> Directory::name_heap() const {
  return block_.subspan(internal::HeapStart(header_.tensor_count), header_.name_bytes);
}

Tensor Directory::tensor(std::uint32_t i) const {
  if (i >= header_.tensor_count) throw std::out_of_range("kiln::Directory::tensor: bad index");
  const internal::RawDescriptor d = internal::DecodeDescriptor(internal::DescriptorAt(block_, i));
  const std::span<const std::uint8_t> heap = name_heap();
  auto text = [&](std::uint16_t off, std::uint16_t len) -> std::string_view {
    if (len == 0) return {};
    const auto s = heap.subspan(off, len);
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
  if (has_payloads_) {
    t.payload = block_.subspan(header_.payload_base + d.byte_offset, d.byte_length);
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
