// Rules H1..H9 and L1: the header, the framing of the block, the padding.
#include <string>

#include "kiln/internal/primitives.h"
#include "kiln/internal/rules.h"

namespace kiln::internal {
namespace {

constexpr std::uint8_t kMagic[4] = {'K', 'L', 'N', 'T'};
constexpr std::uint8_t kKnownFlags = kFlagNames | kFlagLittleEndian;

std::string Hex(Bytes b) {
  std::string out;
  for (std::uint8_t c : b) base::AppendFormat(&out, "%02x", c);
  return out.empty() ? "(none)" : out;
}

// H1: at least 4 bytes, and they are KLNT.
Check CheckMagic(ByteReader& r, Bytes buffer) {
  Bytes magic;
  if (!r.ReadBytes(sizeof(kMagic), &magic)) {
    return Fail(Rule::H1, 0, "buffer holds %d bytes (%s), too few for the magic KLNT",
                buffer.size(), Hex(buffer));
  }
  for (std::size_t i = 0; i < sizeof(kMagic); ++i) {
    if (magic[i] != kMagic[i]) {
      return Fail(Rule::H1, 0, "magic is %s, expected 4b4c4e54 (KLNT)", Hex(magic));
    }
  }
  return std::nullopt;
}

// H2: a byte 4, and it is 2.
Check CheckVersion(ByteReader& r) {
  std::uint8_t version = 0;
  if (!r.ReadU8(&version)) {
    return Fail(Rule::H2, hdr::kVersion, "buffer ends before the version byte");
  }
  if (version != hdr::kVersion2) {
    return Fail(Rule::H2, hdr::kVersion, "version is %d, expected 2", version);
  }
  return std::nullopt;
}

// H4: only the name and little-endian bits, and little-endian set.
Check CheckFlags(std::uint8_t flags) {
  if ((flags & ~kKnownFlags) != 0) {
    return Fail(Rule::H4, hdr::kFlags, "flags 0x%02x has unknown bits 0x%02x", flags,
                flags & ~kKnownFlags);
  }
  if ((flags & kFlagLittleEndian) == 0) {
    return Fail(Rule::H4, hdr::kFlags, "flags 0x%02x has the little-endian bit 1 clear", flags);
  }
  return std::nullopt;
}

// H5: bytes 6..7 and 32..63 are zero.
Check CheckReserved(HeaderBytes h) {
  for (const auto& [start, length] : {std::pair<std::size_t, std::size_t>{hdr::kReserved0, 2},
                                      std::pair<std::size_t, std::size_t>{hdr::kReserved1, 32}}) {
    if (const auto at = FirstNonzero(Bytes(h).subspan(start, length))) {
      return Fail(Rule::H5, start + *at, "reserved header byte %d is 0x%02x", start + *at,
                  h[start + *at]);
    }
  }
  return std::nullopt;
}

// H7: block_length fits, then the caller's limits.
Check CheckLengths(HeaderInfo& h, const Limits& limits) {
  // directory_bytes < 2^40 after H6, so 64 + directory_bytes + 63 cannot
  // overflow; it is still computed checked.
  const auto heap_end = CheckedAdd(kHeaderSize, h.directory_bytes);
  const auto base = heap_end ? AlignUp64(*heap_end) : std::nullopt;
  if (!base) {
    return Fail(Rule::H7, hdr::kDirectoryBytes,
                "64 + directory_bytes %d rounded up to 64 exceeds 2^64-1", h.directory_bytes);
  }
  const auto length = CheckedAdd(*base, h.payload_bytes);
  if (!length) {
    return Fail(Rule::H7, hdr::kPayloadBytes, "payload_base %d + payload_bytes %d exceeds 2^64-1",
                *base, h.payload_bytes);
  }
  h.payload_base = *base;
  h.block_length = *length;
  if (h.tensor_count > limits.max_tensors) {
    return Fail(Rule::H7, hdr::kTensorCount, "tensor_count %d exceeds the caller's limit %d",
                h.tensor_count, limits.max_tensors);
  }
  if (h.name_bytes > limits.max_name_bytes) {
    return Fail(Rule::H7, hdr::kNameBytes, "name_bytes %d exceeds the caller's limit %d",
                h.name_bytes, limits.max_name_bytes);
  }
  if (h.block_length > limits.max_block_bytes) {
    return Fail(Rule::H7, hdr::kPayloadBytes, "block_length %d exceeds the caller's limit %d",
                h.block_length, limits.max_block_bytes);
  }
  return std::nullopt;
}

}  // namespace

Result<HeaderInfo> CheckHeader(Bytes buffer, const Limits& limits) {
  ByteReader r(buffer);
  if (Check e = CheckMagic(r, buffer)) return *std::move(e);
  if (Check e = CheckVersion(r)) return *std::move(e);
  // H3: the whole 64-byte header.
  ByteReader whole(buffer);
  const std::optional<HeaderBytes> fixed = whole.ReadFixed<kHeaderSize>();
  if (!fixed) {
    return Fail(Rule::H3, buffer.size(), "buffer holds %d bytes, the header needs 64",
                buffer.size());
  }
  const HeaderBytes hb = *fixed;
  HeaderInfo h;
  h.flags = LoadLe<std::uint8_t, hdr::kFlags>(hb);
  if (Check e = CheckFlags(h.flags)) return *std::move(e);
  if (Check e = CheckReserved(hb)) return *std::move(e);

  h.tensor_count = LoadLe<std::uint32_t, hdr::kTensorCount>(hb);
  h.name_bytes = LoadLe<std::uint32_t, hdr::kNameBytes>(hb);
  h.payload_bytes = LoadLe<std::uint64_t, hdr::kPayloadBytes>(hb);
  h.directory_bytes = LoadLe<std::uint64_t, hdr::kDirectoryBytes>(hb);
  // H6: tensor_count * 128 + name_bytes < 2^40, so it cannot overflow.
  const std::uint64_t expected = std::uint64_t{h.tensor_count} * kDescriptorSize + h.name_bytes;
  if (h.directory_bytes != expected) {
    return Fail(Rule::H6, hdr::kDirectoryBytes,
                "directory_bytes %d != tensor_count %d * 128 + name_bytes %d = %d",
                h.directory_bytes, h.tensor_count, h.name_bytes, expected);
  }
  if (Check e = CheckLengths(h, limits)) return *std::move(e);
  return h;
}

Check CheckLength(std::uint64_t size, const HeaderInfo& h, Mode mode) {
  // H8: the buffer holds the block; in whole mode, nothing else.
  if (size < h.block_length) {
    return Fail(Rule::H8, size, "buffer holds %d bytes, block_length is %d", size, h.block_length);
  }
  if (mode == Mode::kWhole && size > h.block_length) {
    return Fail(Rule::H8, h.block_length, "%d trailing bytes after the %d-byte block",
                size - h.block_length, h.block_length);
  }
  return std::nullopt;
}

Error StreamGoesOnError(const HeaderInfo& h) {
  return Fail(Rule::H8, h.block_length,
              "trailing bytes: the stream goes on after the %d-byte block", h.block_length);
}

Check CheckNameFlag(const HeaderInfo& h) {
  // H9: an empty directory has no names.
  if (h.tensor_count == 0 && h.has_names()) {
    return Fail(Rule::H9, hdr::kFlags, "flags 0x%02x sets the name bit but tensor_count is 0",
                h.flags);
  }
  return std::nullopt;
}

Check CheckPadding(Bytes block, const HeaderInfo& h) {
  // L1: the padding between the heap and payload_base is zero.
  const std::uint64_t pad_start = kHeaderSize + h.directory_bytes;
  const Bytes pad =
      block.subspan(base::ToSize(pad_start), base::ToSize(h.payload_base - pad_start));
  if (const auto at = FirstNonzero(pad)) {
    return Fail(Rule::L1, pad_start + *at, "padding byte at %d is 0x%02x (padding runs [%d, %d))",
                pad_start + *at, pad[*at], pad_start, h.payload_base);
  }
  return std::nullopt;
}

}  // namespace kiln::internal
