// The named fields of the header and of a descriptor (docs/spec.md,
// sections 2.2 and 2.3), built from layout.h's offsets: which field holds a
// byte of either record. Read by the block map to name the deciding byte of
// a verdict; no rule reads it.
#ifndef KILN_INTERNAL_FIELDS_H_
#define KILN_INTERNAL_FIELDS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "kiln/block.h"
#include "kiln/internal/layout.h"

namespace kiln::internal {

// A field of a record: its name and bytes [offset, offset + size), relative
// to the record.
struct Field {
  std::string_view name;
  std::size_t offset = 0;
  std::size_t size = 0;
};

// The field that holds one byte. For the shape, the slot that holds it
// (slot set; offset and size are the slot's eight bytes).
struct FieldHit {
  std::string_view name;
  std::size_t offset = 0;
  std::size_t size = 0;
  std::optional<std::size_t> slot;
};

namespace fields_detail {

struct Start {
  std::string_view name;
  std::size_t offset;
};

// Fields laid end to end: each ends where the next starts, the last at
// `record`. The starts are layout.h's offsets, so the sizes follow from them.
template <std::size_t N>
constexpr std::array<Field, N> Tile(const std::array<Start, N>& starts, std::size_t record) {
  std::array<Field, N> out{};
  for (std::size_t i = 0; i < N; ++i) {
    const std::size_t end = i + 1 < N ? starts[i + 1].offset : record;
    out[i] = {starts[i].name, starts[i].offset, end - starts[i].offset};
  }
  return out;
}

template <std::size_t N>
constexpr bool Tiles(const std::array<Field, N>& f, std::size_t record) {
  if (f[0].offset != 0) return false;
  for (std::size_t i = 0; i < N; ++i) {
    if (f[i].size == 0 || f[i].offset + f[i].size != (i + 1 < N ? f[i + 1].offset : record)) {
      return false;
    }
  }
  return true;
}

}  // namespace fields_detail

// docs/spec.md, section 2.2.
inline constexpr std::array<Field, 9> kHeaderFields =
    fields_detail::Tile<9>({{{"magic", hdr::kMagic},
                             {"version", hdr::kVersion},
                             {"flags", hdr::kFlags},
                             {"reserved", hdr::kReserved0},
                             {"tensor_count", hdr::kTensorCount},
                             {"name_bytes", hdr::kNameBytes},
                             {"payload_bytes", hdr::kPayloadBytes},
                             {"directory_bytes", hdr::kDirectoryBytes},
                             {"reserved", hdr::kReserved1}}},
                           kHeaderSize);

// docs/spec.md, section 2.3.
inline constexpr std::array<Field, 17> kDescriptorFields =
    fields_detail::Tile<17>({{{"dtype", desc::kDtype},
                              {"rank", desc::kRank},
                              {"reserved", desc::kReserved0},
                              {"name_off", desc::kNameOff},
                              {"name_len", desc::kNameLen},
                              {"layout_off", desc::kLayoutOff},
                              {"layout_len", desc::kLayoutLen},
                              {"block_size", desc::kBlockSize},
                              {"quant_scheme", desc::kQuantScheme},
                              {"quant_axis", desc::kQuantAxis},
                              {"group_size", desc::kGroupSize},
                              {"scale_index", desc::kScaleIndex},
                              {"outer_index", desc::kOuterIndex},
                              {"byte_offset", desc::kByteOffset},
                              {"byte_length", desc::kByteLength},
                              {"shape", desc::kShape},
                              {"reserved", desc::kReserved1}}},
                            kDescriptorSize);

static_assert(fields_detail::Tiles(kHeaderFields, kHeaderSize));
static_assert(fields_detail::Tiles(kDescriptorFields, kDescriptorSize));
// The sizes the offsets imply are the sizes the decode reads.
static_assert(kHeaderFields[4].size == sizeof(HeaderInfo::tensor_count));
static_assert(kHeaderFields[5].size == sizeof(HeaderInfo::name_bytes));
static_assert(kHeaderFields[6].size == sizeof(HeaderInfo::payload_bytes));
static_assert(kHeaderFields[7].size == sizeof(HeaderInfo::directory_bytes));
static_assert(kDescriptorFields[0].size == sizeof(RawDescriptor::dtype));
static_assert(kDescriptorFields[13].size == sizeof(RawDescriptor::byte_offset));
static_assert(kDescriptorFields[14].size == sizeof(RawDescriptor::byte_length));
static_assert(kDescriptorFields[15].size == sizeof(RawDescriptor::shape));
static_assert(kDescriptorFields[16].size == sizeof(RawDescriptor::reserved1));

namespace fields_detail {

template <std::size_t N>
constexpr FieldHit Find(const std::array<Field, N>& table, std::size_t within, bool shaped) {
  for (const Field& f : table) {
    if (within < f.offset || within - f.offset >= f.size) continue;
    if (!shaped || f.offset != desc::kShape) {
      return {f.name, f.offset, f.size, std::nullopt};
    }
    constexpr std::size_t kSlot = sizeof(RawDescriptor::shape[0]);
    const std::size_t slot = (within - f.offset) / kSlot;
    return {f.name, f.offset + slot * kSlot, kSlot, slot};
  }
  return {};
}

}  // namespace fields_detail

// The header field holding byte `within`. Precondition: within < kHeaderSize.
[[nodiscard]] constexpr FieldHit HeaderFieldAt(std::size_t within) {
  return fields_detail::Find(kHeaderFields, within, false);
}

// The descriptor field holding byte `within` of a descriptor (for the
// shape, its slot). Precondition: within < kDescriptorSize.
[[nodiscard]] constexpr FieldHit DescriptorFieldAt(std::size_t within) {
  return fields_detail::Find(kDescriptorFields, within, true);
}

}  // namespace kiln::internal

#endif  // KILN_INTERNAL_FIELDS_H_
