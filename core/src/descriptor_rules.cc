// Rules D1..D10, N1, N2, O1..O3 and Q1..Q4: one descriptor on its own.
#include <algorithm>
#include <bit>
#include <initializer_list>
#include <string>

#include "kiln/internal/primitives.h"
#include "kiln/internal/rules.h"

namespace kiln::internal {
namespace {

constexpr std::uint16_t kSchemeNone = 0;
constexpr std::uint16_t kSchemeGrouped = 2;

// What the checks of one descriptor share.
struct Ctx {
  const RawDescriptor& d;
  std::uint32_t i;
  const HeaderInfo& h;
  const DtypeInfo* dtype;  // set once D1 holds
  std::uint64_t count;     // set once D5 holds

  [[nodiscard]] std::uint64_t At(std::size_t field) const {
    return DescriptorFieldOffset(i, field);
  }
  [[nodiscard]] bool opaque() const { return IsOpaque(dtype->dtype); }
};

// The offset of the first field, in descriptor order, whose value is wrong:
// an error that covers several fields points at the one that broke it.
struct FieldCheck {
  // cppcheck-suppress unusedStructMember ; read through the find_if result
  std::size_t field;
  bool wrong;
};
std::size_t FirstWrongField(std::initializer_list<FieldCheck> fields) {
  const auto* wrong =
      std::find_if(fields.begin(), fields.end(), [](const FieldCheck& f) { return f.wrong; });
  return wrong != fields.end() ? wrong->field : fields.begin()->field;
}

// D3: byte 3 and bytes 112..127 are zero. The first nonzero byte is the one
// reported.
Check CheckReservedBytes(const Ctx& c) {
  if (c.d.reserved0 != 0) {
    return FailTensor(Rule::D3, c.At(desc::kReserved0), c.i,
                      "reserved descriptor byte %d is 0x%02x", desc::kReserved0, c.d.reserved0);
  }
  for (std::size_t w = 0; w < c.d.reserved1.size(); ++w) {
    const std::uint64_t word = c.d.reserved1[w];
    if (word == 0) continue;
    const auto in_word = static_cast<std::size_t>(std::countr_zero(word)) / 8;  // little-endian
    const std::size_t byte = desc::kReserved1 + 8 * w + in_word;
    const auto value = static_cast<std::uint8_t>(word >> (8 * in_word));
    return FailTensor(Rule::D3, c.At(byte), c.i, "reserved descriptor byte %d is 0x%02x", byte,
                      value);
  }
  return std::nullopt;
}

// D4: shape slots at and past rank are zero.
Check CheckUnusedSlots(const Ctx& c) {
  for (std::size_t k = c.d.rank; k < kMaxRank; ++k) {
    if (c.d.shape[k] != 0) {
      return FailTensor(Rule::D4, c.At(desc::kShape + 8 * k), c.i,
                        "shape[%d] is %d, but rank is %d", k, c.d.shape[k], c.d.rank);
    }
  }
  return std::nullopt;
}

// D6, D7: the byte size of a fixed-width dtype fits and equals byte_length.
Check CheckFixedSize(const Ctx& c) {
  const auto size = ByteSize(c.count, c.dtype->bits);
  if (!size) {
    return FailTensor(Rule::D6, c.At(desc::kShape), c.i,
                      "%d elements of %s (%d bits each) need more than 2^64-1 bytes", c.count,
                      c.dtype->name, c.dtype->bits);
  }
  if (c.d.byte_length != *size) {
    return FailTensor(Rule::D7, c.At(desc::kByteLength), c.i,
                      "byte_length is %d, but %d elements of %s shape %s take %d bytes",
                      c.d.byte_length, c.count, c.dtype->name, FormatShape(c.d), *size);
  }
  return std::nullopt;
}

// D8, D9, D10: the range fits, lies in the payload region, and is aligned.
Check CheckRange(const Ctx& c) {
  const auto end = CheckedAdd(c.d.byte_offset, c.d.byte_length);
  if (!end) {
    return FailTensor(Rule::D8, c.At(desc::kByteLength), c.i,
                      "byte_offset %d + byte_length %d exceeds 2^64-1", c.d.byte_offset,
                      c.d.byte_length);
  }
  if (*end > c.h.payload_bytes) {
    return FailTensor(Rule::D9, c.At(desc::kByteLength), c.i,
                      "range [%d, %d) ends past payload_bytes %d", c.d.byte_offset, *end,
                      c.h.payload_bytes);
  }
  if (c.d.byte_offset % kPayloadAlignment != 0) {
    return FailTensor(Rule::D10, c.At(desc::kByteOffset), c.i,
                      "byte_offset %d is not a multiple of 64", c.d.byte_offset);
  }
  return std::nullopt;
}

// N1, N2: the name fields agree with the name flag.
Check CheckNameFields(const Ctx& c) {
  if (!c.h.has_names()) {
    if (c.d.name_off != kNoHeapSlice || c.d.name_len != 0) {
      return FailTensor(Rule::N1,
                        c.At(FirstWrongField({{desc::kNameOff, c.d.name_off != kNoHeapSlice},
                                              {desc::kNameLen, c.d.name_len != 0}})),
                        c.i,
                        "name flag is clear, but name_off is 0x%04x and name_len %d "
                        "(expected 0xffff and 0)",
                        c.d.name_off, c.d.name_len);
    }
    return std::nullopt;
  }
  if (c.d.name_len == 0 || c.d.name_off == kNoHeapSlice) {
    return FailTensor(Rule::N2,
                      c.At(FirstWrongField({{desc::kNameOff, c.d.name_off == kNoHeapSlice},
                                            {desc::kNameLen, c.d.name_len == 0}})),
                      c.i,
                      "name flag is set, but name_off is 0x%04x and name_len %d "
                      "(every tensor needs a non-empty name)",
                      c.d.name_off, c.d.name_len);
  }
  return std::nullopt;
}

// O1, O2, O3: opaque layout fields.
Check CheckOpaque(const Ctx& c) {
  const RawDescriptor& d = c.d;
  if (!c.opaque()) {
    if (d.block_size != 0 || d.layout_off != kNoHeapSlice || d.layout_len != 0) {
      return FailTensor(Rule::O1,
                        c.At(FirstWrongField({{desc::kLayoutOff, d.layout_off != kNoHeapSlice},
                                              {desc::kLayoutLen, d.layout_len != 0},
                                              {desc::kBlockSize, d.block_size != 0}})),
                        c.i,
                        "dtype %s is not opaque, but block_size is %d, layout_off 0x%04x, "
                        "layout_len %d (expected 0, 0xffff, 0)",
                        c.dtype->name, d.block_size, d.layout_off, d.layout_len);
    }
    return std::nullopt;
  }
  if (d.block_size == 0 || d.layout_len == 0 || d.layout_off == kNoHeapSlice ||
      d.quant_scheme != kSchemeNone) {
    return FailTensor(Rule::O2,
                      c.At(FirstWrongField({{desc::kLayoutOff, d.layout_off == kNoHeapSlice},
                                            {desc::kLayoutLen, d.layout_len == 0},
                                            {desc::kBlockSize, d.block_size == 0},
                                            {desc::kQuantScheme, d.quant_scheme != kSchemeNone}})),
                      c.i,
                      "opaque tensor has block_size %d, layout_off 0x%04x, layout_len %d, "
                      "quant_scheme %d (needs block_size > 0, a layout name, scheme 0)",
                      d.block_size, d.layout_off, d.layout_len, d.quant_scheme);
  }
  if (c.count % d.block_size != 0) {
    return FailTensor(Rule::O3, c.At(desc::kBlockSize), c.i,
                      "element count %d is not a multiple of block_size %d", c.count, d.block_size);
  }
  const std::uint64_t blocks = c.count / d.block_size;
  if (blocks == 0 ? d.byte_length != 0 : (d.byte_length == 0 || d.byte_length % blocks != 0)) {
    return FailTensor(Rule::O3, c.At(desc::kByteLength), c.i,
                      "byte_length %d is not %s %d blocks of block_size %d", d.byte_length,
                      blocks == 0 ? "0 for" : "a nonzero multiple of", blocks, d.block_size);
  }
  return std::nullopt;
}

// Q1..Q4: the quantisation fields of this descriptor alone.
Check CheckQuantFields(const Ctx& c) {
  const RawDescriptor& d = c.d;
  if (d.quant_scheme > kSchemeGrouped) {
    return FailTensor(Rule::Q1, c.At(desc::kQuantScheme), c.i,
                      "quant_scheme is %d, expected 0, 1 or 2", d.quant_scheme);
  }
  if (d.quant_scheme == kSchemeNone) {
    if (d.quant_axis != kNoAxis || d.group_size != 0 || d.scale_index != kNoTensor ||
        d.outer_index != kNoTensor) {
      return FailTensor(Rule::Q2,
                        c.At(FirstWrongField({{desc::kQuantAxis, d.quant_axis != kNoAxis},
                                              {desc::kGroupSize, d.group_size != 0},
                                              {desc::kScaleIndex, d.scale_index != kNoTensor},
                                              {desc::kOuterIndex, d.outer_index != kNoTensor}})),
                        c.i,
                        "quant_scheme 0, but quant_axis is 0x%04x, group_size %d, scale_index "
                        "0x%08x, outer_index 0x%08x (expected 0xffff, 0, 0xffffffff, 0xffffffff)",
                        d.quant_axis, d.group_size, d.scale_index, d.outer_index);
    }
    return std::nullopt;
  }
  if (d.rank == 0 || d.quant_axis >= d.rank) {
    return FailTensor(Rule::Q3, c.At(desc::kQuantAxis), c.i,
                      "quant_scheme %d needs an axis below rank %d, quant_axis is %d",
                      d.quant_scheme, d.rank, d.quant_axis);
  }
  if ((d.quant_scheme == kSchemeGrouped) != (d.group_size != 0)) {
    return FailTensor(Rule::Q4, c.At(desc::kGroupSize), c.i,
                      "quant_scheme %d with group_size %d (scheme 1 needs 0, scheme 2 at least 1)",
                      d.quant_scheme, d.group_size);
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::uint64_t> ByteSize(std::uint64_t count, std::uint32_t bits) {
  if (bits % 8 != 0) {
    // Sub-byte dtypes (4 bits): ceil(count * bits / 8) without the product.
    const std::uint64_t per_byte = 8 / bits;
    return CeilDiv(count, per_byte);
  }
  return CheckedMul(count, bits / 8);
}

std::string FormatShape(const RawDescriptor& d) {
  std::string out = "[";
  for (std::size_t k = 0; k < d.rank && k < kMaxRank; ++k) {
    base::AppendFormat(&out, "%s%d", k == 0 ? "" : ", ", d.shape[k]);
  }
  return out + "]";
}

Check CheckFields(const RawDescriptor& d, std::uint32_t i, const HeaderInfo& h) {
  Ctx c{d, i, h, FindDtype(d.dtype), 0};
  if (c.dtype == nullptr) {  // D1
    return FailTensor(Rule::D1, c.At(desc::kDtype), i, "dtype 0x%04x is not in the dtype table",
                      d.dtype);
  }
  if (d.rank > kMaxRank) {  // D2
    return FailTensor(Rule::D2, c.At(desc::kRank), i, "rank is %d, at most 8", d.rank);
  }
  if (Check e = CheckReservedBytes(c)) return e;  // D3
  if (Check e = CheckUnusedSlots(c)) return e;    // D4
  std::size_t overflow_dim = 0;
  const auto count = ElementCount(d, &overflow_dim);
  if (!count) {  // D5
    return FailTensor(Rule::D5, c.At(desc::kShape + 8 * overflow_dim), i,
                      "element count of shape %s exceeds 2^64-1 (at dimension %d)", FormatShape(d),
                      overflow_dim);
  }
  c.count = *count;
  if (!c.opaque()) {
    if (Check e = CheckFixedSize(c)) return e;  // D6, D7
  }
  if (Check e = CheckRange(c)) return e;        // D8, D9, D10
  if (Check e = CheckNameFields(c)) return e;   // N1, N2
  if (Check e = CheckOpaque(c)) return e;       // O1, O2, O3
  if (Check e = CheckQuantFields(c)) return e;  // Q1..Q4
  return std::nullopt;
}

}  // namespace kiln::internal
