#include "layout.h"

namespace kiln::internal {

RawDescriptor DecodeDescriptor(DescriptorBytes d) {
  RawDescriptor r;
  r.dtype = LoadLe<std::uint16_t, desc::kDtype>(d);
  r.rank = LoadLe<std::uint8_t, desc::kRank>(d);
  r.name_off = LoadLe<std::uint16_t, desc::kNameOff>(d);
  r.name_len = LoadLe<std::uint16_t, desc::kNameLen>(d);
  r.layout_off = LoadLe<std::uint16_t, desc::kLayoutOff>(d);
  r.layout_len = LoadLe<std::uint16_t, desc::kLayoutLen>(d);
  r.block_size = LoadLe<std::uint32_t, desc::kBlockSize>(d);
  r.quant_scheme = LoadLe<std::uint16_t, desc::kQuantScheme>(d);
  r.quant_axis = LoadLe<std::uint16_t, desc::kQuantAxis>(d);
  r.group_size = LoadLe<std::uint32_t, desc::kGroupSize>(d);
  r.scale_index = LoadLe<std::uint32_t, desc::kScaleIndex>(d);
  r.outer_index = LoadLe<std::uint32_t, desc::kOuterIndex>(d);
  r.byte_offset = LoadLe<std::uint64_t, desc::kByteOffset>(d);
  r.byte_length = LoadLe<std::uint64_t, desc::kByteLength>(d);
  r.shape[0] = LoadLe<std::uint64_t, desc::kShape + 0>(d);
  r.shape[1] = LoadLe<std::uint64_t, desc::kShape + 8>(d);
  r.shape[2] = LoadLe<std::uint64_t, desc::kShape + 16>(d);
  r.shape[3] = LoadLe<std::uint64_t, desc::kShape + 24>(d);
  r.shape[4] = LoadLe<std::uint64_t, desc::kShape + 32>(d);
  r.shape[5] = LoadLe<std::uint64_t, desc::kShape + 40>(d);
  r.shape[6] = LoadLe<std::uint64_t, desc::kShape + 48>(d);
  r.shape[7] = LoadLe<std::uint64_t, desc::kShape + 56>(d);
  return r;
}

DescriptorBytes DescriptorAt(Bytes block, std::uint32_t i) {
  const std::size_t start = kHeaderSize + std::size_t{i} * kDescriptorSize;
  return block.subspan(start).first<kDescriptorSize>();
}

}  // namespace kiln::internal
