#include "derive.h"

#include <algorithm>
#include <span>

#include "kiln/base/checked.h"

namespace kiln_fuzz::structured {

std::optional<std::uint64_t> ElementCount(const Descriptor& d) {
  if (d.rank > kiln::kMaxRank) return std::nullopt;
  return kiln::base::ElementCount(std::span<const std::uint64_t>(d.shape).first(d.rank));
}

std::optional<std::uint64_t> FixedSize(const Descriptor& d, unsigned bits) {
  const std::optional<std::uint64_t> count = ElementCount(d);
  if (!count) return std::nullopt;
  const unsigned __int128 size = (static_cast<unsigned __int128>(*count) * bits + 7) / 8;
  if (size > kU64Max) return std::nullopt;
  return static_cast<std::uint64_t>(size);
}

bool HalveLargestDim(Descriptor& d) {
  const std::size_t rank = std::min<std::size_t>(d.rank, kiln::kMaxRank);
  std::size_t best = rank;
  for (std::size_t k = 0; k < rank; ++k) {
    if (d.shape[k] != 0 && (best == rank || d.shape[k] > d.shape[best])) best = k;
  }
  if (best == rank) return false;
  d.shape[best] /= 2;
  return true;
}

namespace {

// Sets byte_length from the shape and dtype; shrinks the shape (if allowed)
// until the tensor fits in `room` bytes.
void DeriveLength(Descriptor& d, std::uint64_t room, bool may_shrink) {
  if (d.rank > kiln::kMaxRank) return;
  if (const unsigned bits = FixedBits(d.dtype); bits != 0) {
    std::optional<std::uint64_t> size = FixedSize(d, bits);
    while (may_shrink && (!size || *size > room) && HalveLargestDim(d)) size = FixedSize(d, bits);
    if (size) d.byte_length = *size;
    return;
  }
  if (d.dtype != kOpaque || d.block_size == 0) return;
  const std::optional<std::uint64_t> count = ElementCount(d);
  if (!count || *count % d.block_size != 0) return;
  const std::uint64_t blocks = *count / d.block_size;
  if (blocks == 0) {
    d.byte_length = 0;
    return;
  }
  if (blocks > room) return;
  std::uint64_t width = std::max<std::uint64_t>(1, d.byte_length / blocks);
  if (width > room / blocks) width = 1;
  d.byte_length = blocks * width;
}

}  // namespace

bool Derive(Block& b, const Pins& pins, std::size_t max_size) {
  if (max_size < kiln::kHeaderSize) return false;
  Header& h = b.h;
  const auto keep = [&](HeaderField f) { return pins.header[f]; };
  if (!keep(kMagic)) h.magic = kMagicLe;
  if (!keep(kVersionField)) h.version = kVersion;
  if (!keep(kHeaderReserved0)) h.reserved0 = 0;
  for (std::size_t k = 0; k < 4; ++k) {
    if (!keep(static_cast<HeaderField>(kHeaderReserved1 + k))) h.reserved1[k] = 0;
  }
  if (!pins.trailer) b.trailer.clear();
  if (b.trailer.size() > max_size - kiln::kHeaderSize) return false;
  const std::size_t room = max_size - kiln::kHeaderSize - b.trailer.size();
  b.d.resize(std::min(b.d.size(), room / kiln::kDescriptorSize));
  const std::size_t n = b.d.size();

  for (std::size_t i = 0; i < n; ++i) {
    Descriptor& d = b.d[i];
    if (!pins.Desc(i, kDescReserved0)) d.reserved0 = 0;
    for (std::size_t k = 0; k < 2; ++k) {
      if (!pins.Desc(i, static_cast<DescField>(kDescReserved1 + k))) d.reserved1[k] = 0;
    }
    if (d.rank <= kiln::kMaxRank && !pins.Shape(i)) {
      std::fill(d.shape.begin() + d.rank, d.shape.end(), 0);
    }
  }

  // The heap: names in descriptor order, then layout names. Keep room for
  // the padding.
  const std::size_t directory = kiln::kHeaderSize + kiln::kDescriptorSize * n;
  const std::size_t heap_cap = SubSat(room, kiln::kDescriptorSize * n + (kAlign - 1));
  b.heap.clear();
  bool named = false;
  const auto place = [&](Bytes& text, std::uint16_t& off, std::uint16_t& len, bool pin_off,
                         bool pin_len) {
    text.resize(std::min({text.size(), heap_cap - b.heap.size(), std::size_t{0xFFFF}}));
    if (text.empty()) {
      if (!pin_off) off = kiln::kNoHeapSlice;
      if (!pin_len) len = 0;
      return;
    }
    // A heap past 65534 bytes cannot be expressed (docs/spec.md 7.5); the
    // offset is cut to 16 bits like any stored value.
    if (!pin_off) off = static_cast<std::uint16_t>(b.heap.size());
    if (!pin_len) len = static_cast<std::uint16_t>(text.size());
    b.heap.insert(b.heap.end(), text.begin(), text.end());
  };
  for (std::size_t i = 0; i < n; ++i) {
    Descriptor& d = b.d[i];
    place(d.name, d.name_off, d.name_len, pins.Desc(i, kNameOff), pins.Desc(i, kNameLen));
    named = named || !d.name.empty();
  }
  for (std::size_t i = 0; i < n; ++i) {
    Descriptor& d = b.d[i];
    place(d.layout, d.layout_off, d.layout_len, pins.Desc(i, kLayoutOff), pins.Desc(i, kLayoutLen));
  }

  if (!keep(kFlags)) {
    h.flags = static_cast<std::uint8_t>(kiln::kFlagLittleEndian | (named ? kiln::kFlagNames : 0));
  }
  if (!keep(kTensorCount)) h.tensor_count = static_cast<std::uint32_t>(n);
  if (!keep(kNameBytes)) h.name_bytes = static_cast<std::uint32_t>(b.heap.size());
  if (!keep(kDirectoryBytes)) {
    h.directory_bytes = std::uint64_t{h.tensor_count} * kiln::kDescriptorSize + h.name_bytes;
  }

  const std::size_t heap_end = directory + b.heap.size();
  const std::size_t base = static_cast<std::size_t>(*AlignUp(heap_end));
  b.padding.assign(base - heap_end, 0);
  if (pins.padding_poke && !b.padding.empty()) {
    b.padding[pins.padding_poke->first % b.padding.size()] = pins.padding_poke->second;
  }

  // Payloads in descriptor order, each at the next multiple of 64.
  const std::uint64_t budget = SubSat(max_size, base + b.trailer.size());
  b.payload.clear();
  std::uint64_t cursor = 0;
  std::uint64_t end_max = 0;
  for (std::size_t i = 0; i < n; ++i) {
    Descriptor& d = b.d[i];
    const std::uint64_t aligned = AlignUp(cursor).value_or(kU64Max);
    if (!pins.Desc(i, kByteLength)) {
      DeriveLength(d, SubSat(budget, aligned), !pins.Shape(i));
    }
    if (!pins.Desc(i, kByteOffset)) d.byte_offset = aligned;
    if (d.byte_offset > budget || d.byte_length > budget - d.byte_offset) continue;
    const std::uint64_t end = d.byte_offset + d.byte_length;
    if (b.payload.size() < end) b.payload.resize(end, 0);
    d.data.resize(d.byte_length, kPayloadFill);
    std::copy(d.data.begin(), d.data.end(),
              b.payload.begin() + static_cast<std::ptrdiff_t>(d.byte_offset));
    cursor = std::max(cursor, end);
    end_max = std::max(end_max, end);
  }
  if (keep(kPayloadBytes)) {
    b.payload.resize(std::min(h.payload_bytes, budget), 0);
  } else {
    h.payload_bytes = end_max;
    b.payload.resize(end_max, 0);
  }
  return true;
}

}  // namespace kiln_fuzz::structured
