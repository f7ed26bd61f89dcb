#include "codec.h"

#include <algorithm>
#include <type_traits>

namespace kiln_fuzz::structured {

// Bits per element of a fixed-width dtype; 0 for the opaque dtype and for
// codes not in the table.
unsigned FixedBits(std::uint16_t code) {
  for (const DtypeEntry& e : kDtypes) {
    if (e.code == code) return e.bits;
  }
  return 0;
}

// The bytes [off, off + len) of v that exist.
Bytes Slice(const Bytes& v, std::uint64_t off, std::uint64_t len) {
  if (off >= v.size()) return {};
  const std::uint64_t n = std::min<std::uint64_t>(len, v.size() - off);
  return Bytes(v.begin() + static_cast<std::ptrdiff_t>(off),
               v.begin() + static_cast<std::ptrdiff_t>(off + n));
}

#define KILN_FIELD(S, member, nbits)                                                         \
  FieldInfo<S> {                                                                             \
    nbits, [](const S& s) -> std::uint64_t { return s.member; }, [](S& s, std::uint64_t v) { \
      s.member = static_cast<std::remove_reference_t<decltype(s.member)>>(v);                \
    }                                                                                        \
  }

const FieldInfo<Header> kHeaderFields[kHeaderFieldCount] = {
    KILN_FIELD(Header, magic, 32),         KILN_FIELD(Header, version, 8),
    KILN_FIELD(Header, flags, 8),          KILN_FIELD(Header, reserved0, 16),
    KILN_FIELD(Header, tensor_count, 32),  KILN_FIELD(Header, name_bytes, 32),
    KILN_FIELD(Header, payload_bytes, 64), KILN_FIELD(Header, directory_bytes, 64),
    KILN_FIELD(Header, reserved1[0], 64),  KILN_FIELD(Header, reserved1[1], 64),
    KILN_FIELD(Header, reserved1[2], 64),  KILN_FIELD(Header, reserved1[3], 64),
};

const FieldInfo<Descriptor> kDescFields[kDescFieldCount] = {
    KILN_FIELD(Descriptor, dtype, 16),        KILN_FIELD(Descriptor, rank, 8),
    KILN_FIELD(Descriptor, reserved0, 8),     KILN_FIELD(Descriptor, name_off, 16),
    KILN_FIELD(Descriptor, name_len, 16),     KILN_FIELD(Descriptor, layout_off, 16),
    KILN_FIELD(Descriptor, layout_len, 16),   KILN_FIELD(Descriptor, block_size, 32),
    KILN_FIELD(Descriptor, quant_scheme, 16), KILN_FIELD(Descriptor, quant_axis, 16),
    KILN_FIELD(Descriptor, group_size, 32),   KILN_FIELD(Descriptor, scale_index, 32),
    KILN_FIELD(Descriptor, outer_index, 32),  KILN_FIELD(Descriptor, byte_offset, 64),
    KILN_FIELD(Descriptor, byte_length, 64),  KILN_FIELD(Descriptor, shape[0], 64),
    KILN_FIELD(Descriptor, shape[1], 64),     KILN_FIELD(Descriptor, shape[2], 64),
    KILN_FIELD(Descriptor, shape[3], 64),     KILN_FIELD(Descriptor, shape[4], 64),
    KILN_FIELD(Descriptor, shape[5], 64),     KILN_FIELD(Descriptor, shape[6], 64),
    KILN_FIELD(Descriptor, shape[7], 64),     KILN_FIELD(Descriptor, reserved1[0], 64),
    KILN_FIELD(Descriptor, reserved1[1], 64),
};

#undef KILN_FIELD

namespace {

std::uint64_t LoadLe(const std::uint8_t* p, std::size_t width) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < width; ++i) v |= std::uint64_t{p[i]} << (8 * i);
  return v;
}

void StoreLe(std::uint8_t* p, std::uint64_t v, std::size_t width) {
  for (std::size_t i = 0; i < width; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

// Byte offset of each header / descriptor field (docs/spec.md 2.2, 2.3).
constexpr std::size_t kHeaderFieldOffset[kHeaderFieldCount] = {0,  4,  5,  6,  8,  12,
                                                               16, 24, 32, 40, 48, 56};
constexpr std::size_t kDescFieldOffset[kDescFieldCount] = {
    0, 2, 3, 4, 6, 8, 10, 12, 16, 18, 20, 24, 28, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120,
};

// Each field of `s` from / to its little-endian bytes at p + offsets[f].
template <typename S, std::size_t N>
void DecodeFields(const FieldInfo<S> (&fields)[N], const std::size_t (&offsets)[N],
                  const std::uint8_t* p, S& s) {
  for (std::size_t f = 0; f < N; ++f) fields[f].set(s, LoadLe(p + offsets[f], fields[f].bits / 8));
}

template <typename S, std::size_t N>
void EncodeFields(const FieldInfo<S> (&fields)[N], const std::size_t (&offsets)[N], const S& s,
                  std::uint8_t* p) {
  for (std::size_t f = 0; f < N; ++f) StoreLe(p + offsets[f], fields[f].get(s), fields[f].bits / 8);
}

}  // namespace

void DecodeHeader(const std::uint8_t* p, Header& h) {
  DecodeFields(kHeaderFields, kHeaderFieldOffset, p, h);
}
void EncodeHeader(const Header& h, std::uint8_t* p) {
  EncodeFields(kHeaderFields, kHeaderFieldOffset, h, p);
}
void DecodeDescriptor(const std::uint8_t* p, Descriptor& d) {
  DecodeFields(kDescFields, kDescFieldOffset, p, d);
}
void EncodeDescriptor(const Descriptor& d, std::uint8_t* p) {
  EncodeFields(kDescFields, kDescFieldOffset, d, p);
}

// Fills each descriptor's name, layout and data from the stored heap and
// payload region.
void ExtractContents(Block& b) {
  for (Descriptor& d : b.d) {
    d.name = d.name_len == 0 ? Bytes{} : Slice(b.heap, d.name_off, d.name_len);
    d.layout = d.layout_len == 0 ? Bytes{} : Slice(b.heap, d.layout_off, d.layout_len);
    d.data = Slice(b.payload, d.byte_offset, d.byte_length);
  }
}

// Splits `in` into the regions its header describes. Encode(*Decode(x)) == x.
std::optional<Block> Decode(std::span<const std::uint8_t> in) {
  if (in.size() < kiln::kHeaderSize) return std::nullopt;
  Block b;
  DecodeHeader(in.data(), b.h);
  const std::size_t room = (in.size() - kiln::kHeaderSize) / kiln::kDescriptorSize;
  if (b.h.tensor_count > room) return std::nullopt;
  std::size_t pos = kiln::kHeaderSize;
  b.d.resize(b.h.tensor_count);
  for (Descriptor& d : b.d) {
    DecodeDescriptor(in.data() + pos, d);
    pos += kiln::kDescriptorSize;
  }
  const std::size_t heap_len = std::min<std::size_t>(b.h.name_bytes, in.size() - pos);
  b.heap.assign(in.begin() + static_cast<std::ptrdiff_t>(pos),
                in.begin() + static_cast<std::ptrdiff_t>(pos + heap_len));
  pos += heap_len;
  // Below 2^40: no overflow.
  const std::uint64_t base = *AlignUp(pos - heap_len + std::uint64_t{b.h.name_bytes});
  const std::size_t pad_end = static_cast<std::size_t>(std::min<std::uint64_t>(base, in.size()));
  if (pos < pad_end) {
    b.padding.assign(in.begin() + static_cast<std::ptrdiff_t>(pos),
                     in.begin() + static_cast<std::ptrdiff_t>(pad_end));
    pos = pad_end;
  }
  const std::size_t payload_len =
      static_cast<std::size_t>(std::min<std::uint64_t>(b.h.payload_bytes, in.size() - pos));
  b.payload.assign(in.begin() + static_cast<std::ptrdiff_t>(pos),
                   in.begin() + static_cast<std::ptrdiff_t>(pos + payload_len));
  pos += payload_len;
  b.trailer.assign(in.begin() + static_cast<std::ptrdiff_t>(pos), in.end());
  ExtractContents(b);
  return b;
}

Bytes Encode(const Block& b) {
  Bytes out(kiln::kHeaderSize + kiln::kDescriptorSize * b.d.size());
  EncodeHeader(b.h, out.data());
  for (std::size_t i = 0; i < b.d.size(); ++i) {
    EncodeDescriptor(b.d[i], out.data() + kiln::kHeaderSize + kiln::kDescriptorSize * i);
  }
  out.insert(out.end(), b.heap.begin(), b.heap.end());
  out.insert(out.end(), b.padding.begin(), b.padding.end());
  out.insert(out.end(), b.payload.begin(), b.payload.end());
  out.insert(out.end(), b.trailer.begin(), b.trailer.end());
  return out;
}

}  // namespace kiln_fuzz::structured
