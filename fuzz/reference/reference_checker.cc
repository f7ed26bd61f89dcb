// The reference checker: kiln-v2-rules.md, rule by rule, in checking order.
//
// Nothing here is shared with parser/. Every check carries the id of the
// rule it enforces. Arithmetic is exact (unsigned __int128); nothing wraps.
#include "reference_checker.h"

#include <algorithm>
#include <cstring>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln_ref {
namespace {

using U128 = unsigned __int128;

constexpr U128 kU64Max = 0xFFFFFFFFFFFFFFFFull;
constexpr std::uint16_t kOpaque = 0x8000;
constexpr std::uint16_t kNone16 = 0xFFFF;
constexpr std::uint32_t kNone32 = 0xFFFFFFFFu;
// Above this many tensors, N5 and P1 sort instead of comparing every pair.
constexpr std::size_t kPairwiseMax = 4096;

// Little-endian unsigned integer of n bytes (n <= 8) at p.
std::uint64_t Le(const std::uint8_t* p, int n) {
  std::uint64_t v = 0;
  for (int k = n - 1; k >= 0; --k) v = (v << 8) | p[k];
  return v;
}

// The dtype table of the rules file (the opaque code 0x8000 is separate).
struct Dtype {
  std::uint16_t code;
  unsigned bits;
  bool scale;  // f16, bf16, f32, f64, f8_e4m3fn, f8_e8m0 (rules Q5, Q7)
};

constexpr Dtype kDtypes[] = {
    {1, 32, true},     // f32
    {2, 8, false},     // u8
    {3, 8, false},     // i8
    {4, 16, false},    // u16
    {5, 16, false},    // i16
    {6, 32, false},    // i32
    {7, 64, false},    // i64
    {9, 8, false},     // bool
    {10, 16, true},    // f16
    {11, 64, true},    // f64
    {12, 32, false},   // u32
    {13, 64, false},   // u64
    {14, 64, false},   // c64
    {15, 128, false},  // c128
    {16, 16, true},    // bf16
    {17, 8, true},     // f8_e4m3fn
    {18, 8, false},    // f8_e4m3fnuz
    {19, 8, false},    // f8_e5m2
    {20, 8, false},    // f8_e5m2fnuz
    {21, 4, false},    // u4
    {22, 4, false},    // i4
    {23, 4, false},    // f4_e2m1
    {24, 8, true},     // f8_e8m0
};

// The table entry for a fixed-width code, or nullptr (opaque or unknown).
const Dtype* FindDtype(std::uint16_t code) {
  for (const Dtype& d : kDtypes) {
    if (d.code == code) return &d;
  }
  return nullptr;
}

bool IsScaleDtype(std::uint16_t code) {
  const Dtype* d = FindDtype(code);
  return d != nullptr && d->scale;
}

// RFC 3629 section 4 (the UTF8-octets grammar), byte ranges spelt out.
bool InRange(std::uint8_t b, std::uint8_t lo, std::uint8_t hi) { return b >= lo && b <= hi; }

bool IsWellFormedUtf8(const std::uint8_t* p, std::size_t n) {
  std::size_t i = 0;
  while (i < n) {
    const std::uint8_t b0 = p[i];
    std::size_t len = 0;
    std::uint8_t lo1 = 0x80, hi1 = 0xBF;  // allowed range of the second byte
    if (b0 <= 0x7F) {
      len = 1;
    } else if (InRange(b0, 0xC2, 0xDF)) {
      len = 2;
    } else if (b0 == 0xE0) {
      len = 3;
      lo1 = 0xA0;  // no overlong 3-byte form
    } else if (InRange(b0, 0xE1, 0xEC) || InRange(b0, 0xEE, 0xEF)) {
      len = 3;
    } else if (b0 == 0xED) {
      len = 3;
      hi1 = 0x9F;  // no surrogates U+D800..U+DFFF
    } else if (b0 == 0xF0) {
      len = 4;
      lo1 = 0x90;  // no overlong 4-byte form
    } else if (InRange(b0, 0xF1, 0xF3)) {
      len = 4;
    } else if (b0 == 0xF4) {
      len = 4;
      hi1 = 0x8F;  // nothing above U+10FFFF
    } else {
      return false;  // 80..C1 (continuation or overlong lead), F5..FF
    }
    if (n - i < len) return false;  // truncated sequence
    if (len >= 2 && !InRange(p[i + 1], lo1, hi1)) return false;
    for (std::size_t k = 2; k < len; ++k) {
      if (!InRange(p[i + k], 0x80, 0xBF)) return false;
    }
    i += len;
  }
  return true;
}

// One 128-byte descriptor, every field as stored.
struct Descriptor {
  std::uint16_t dtype;
  std::uint8_t rank;
  std::uint16_t name_off, name_len, layout_off, layout_len;
  std::uint32_t block_size;
  std::uint16_t scheme, axis;
  std::uint32_t group_size, scale_index, outer_index;
  std::uint64_t byte_offset, byte_length;
  std::uint64_t shape[8];
};

Descriptor ReadDescriptor(const std::uint8_t* d) {
  Descriptor t{};
  t.dtype = static_cast<std::uint16_t>(Le(d + 0, 2));
  t.rank = d[2];
  t.name_off = static_cast<std::uint16_t>(Le(d + 4, 2));
  t.name_len = static_cast<std::uint16_t>(Le(d + 6, 2));
  t.layout_off = static_cast<std::uint16_t>(Le(d + 8, 2));
  t.layout_len = static_cast<std::uint16_t>(Le(d + 10, 2));
  t.block_size = static_cast<std::uint32_t>(Le(d + 12, 4));
  t.scheme = static_cast<std::uint16_t>(Le(d + 16, 2));
  t.axis = static_cast<std::uint16_t>(Le(d + 18, 2));
  t.group_size = static_cast<std::uint32_t>(Le(d + 20, 4));
  t.scale_index = static_cast<std::uint32_t>(Le(d + 24, 4));
  t.outer_index = static_cast<std::uint32_t>(Le(d + 28, 4));
  t.byte_offset = Le(d + 32, 8);
  t.byte_length = Le(d + 40, 8);
  for (int k = 0; k < 8; ++k) t.shape[k] = Le(d + 48 + 8 * k, 8);
  return t;
}

Verdict Fail(const char* error_class, const char* rule) {
  return Verdict{false, error_class, rule};
}

// The first rule of one descriptor (D1..D10, N1, N2, O1..O3, Q1..Q4) that
// fails, or an empty rule.
Verdict CheckDescriptor(const std::uint8_t* d, const Descriptor& t, bool named,
                        std::uint64_t payload_bytes) {
  const bool opaque = t.dtype == kOpaque;
  const Dtype* dt = FindDtype(t.dtype);

  // D1: dtype is a code of the table (or the opaque code).
  if (dt == nullptr && !opaque) return Fail("TYPE", "D1");
  // D2: rank <= 8.
  if (t.rank > 8) return Fail("TYPE", "D2");
  // D3: byte 3 and bytes 112..127 are zero.
  if (d[3] != 0) return Fail("FRAME", "D3");
  for (int k = 112; k < 128; ++k) {
    if (d[k] != 0) return Fail("FRAME", "D3");
  }
  // D4: every shape slot at index >= rank is zero.
  for (int k = t.rank; k < 8; ++k) {
    if (t.shape[k] != 0) return Fail("TYPE", "D4");
  }
  // D5: the element count fits in u64. Rank 0 counts 1; any zero dimension
  // makes it 0; otherwise the exact product, stopped as soon as it exceeds
  // 2^64-1 (a product of two values <= 2^64-1 fits in 128 bits).
  bool any_zero = false;
  for (int k = 0; k < t.rank; ++k) {
    if (t.shape[k] == 0) any_zero = true;
  }
  U128 count = 1;
  if (any_zero) {
    count = 0;
  } else {
    for (int k = 0; k < t.rank; ++k) {
      count *= t.shape[k];
      if (count > kU64Max) return Fail("LIMIT", "D5");
    }
  }
  if (!opaque) {
    // D6: size = ceil(count * bits / 8) fits in u64 (count * bits < 2^72).
    const U128 size = (count * dt->bits + 7) / 8;
    if (size > kU64Max) return Fail("LIMIT", "D6");
    // D7: byte_length == size.
    if (static_cast<U128>(t.byte_length) != size) return Fail("TYPE", "D7");
  }
  // D8: byte_offset + byte_length fits in u64.
  const U128 end = static_cast<U128>(t.byte_offset) + t.byte_length;
  if (end > kU64Max) return Fail("LIMIT", "D8");
  // D9: byte_offset + byte_length <= payload_bytes.
  if (end > payload_bytes) return Fail("TYPE", "D9");
  // D10: byte_offset is a multiple of 64.
  if (t.byte_offset % 64 != 0) return Fail("TYPE", "D10");
  // N1: name flag clear: name_off == 0xFFFF and name_len == 0.
  if (!named && (t.name_off != kNone16 || t.name_len != 0)) return Fail("TYPE", "N1");
  // N2: name flag set: name_len > 0 and name_off != 0xFFFF.
  if (named && (t.name_len == 0 || t.name_off == kNone16)) return Fail("TYPE", "N2");
  // O1: non-opaque: block_size 0, layout_off 0xFFFF, layout_len 0.
  if (!opaque && (t.block_size != 0 || t.layout_off != kNone16 || t.layout_len != 0)) {
    return Fail("TYPE", "O1");
  }
  // O2: opaque: block_size > 0, layout_len > 0, layout_off != 0xFFFF, scheme 0.
  if (opaque &&
      (t.block_size == 0 || t.layout_len == 0 || t.layout_off == kNone16 || t.scheme != 0)) {
    return Fail("TYPE", "O2");
  }
  // O3: opaque: count is a multiple of block_size; blocks == 0 implies
  // byte_length == 0, otherwise byte_length is a nonzero multiple of blocks.
  if (opaque) {
    if (count % t.block_size != 0) return Fail("TYPE", "O3");
    const U128 blocks = count / t.block_size;
    if (blocks == 0) {
      if (t.byte_length != 0) return Fail("TYPE", "O3");
    } else if (t.byte_length == 0 || t.byte_length % blocks != 0) {
      return Fail("TYPE", "O3");
    }
  }
  // Q1: quant_scheme is 0, 1 or 2.
  if (t.scheme > 2) return Fail("TYPE", "Q1");
  // Q2: scheme 0: axis 0xFFFF, group_size 0, scale and outer 0xFFFFFFFF.
  if (t.scheme == 0 && (t.axis != kNone16 || t.group_size != 0 || t.scale_index != kNone32 ||
                        t.outer_index != kNone32)) {
    return Fail("TYPE", "Q2");
  }
  // Q3: scheme 1 or 2: rank >= 1 and quant_axis < rank.
  if (t.scheme != 0 && (t.rank < 1 || t.axis >= t.rank)) return Fail("TYPE", "Q3");
  // Q4: scheme 1: group_size 0; scheme 2: group_size >= 1.
  if (t.scheme == 1 && t.group_size != 0) return Fail("TYPE", "Q4");
  if (t.scheme == 2 && t.group_size < 1) return Fail("TYPE", "Q4");
  return Verdict{true, "", ""};
}

// A slice of the name heap.
struct Slice {
  std::uint64_t off;
  std::uint64_t len;
};

}  // namespace

Verdict Check(const std::uint8_t* data, std::size_t size, bool whole_buffer) {
  // ---- Header ----
  // H1: at least 4 bytes and they are KLNT.
  if (size < 4 || std::memcmp(data, "KLNT", 4) != 0) return Fail("FRAME", "H1");
  // H2: a byte 4 exists and it is 2.
  if (size < 5 || data[4] != 2) return Fail("FRAME", "H2");
  // H3: the whole 64-byte header is present.
  if (size < 64) return Fail("FRAME", "H3");
  // H4: flags has only bits 0 and 1, and bit 1 is set.
  const std::uint8_t flags = data[5];
  if ((flags & ~0x03u) != 0 || (flags & 0x02u) == 0) return Fail("FRAME", "H4");
  // H5: bytes 6..7 and 32..63 are zero.
  if (data[6] != 0 || data[7] != 0) return Fail("FRAME", "H5");
  for (int k = 32; k < 64; ++k) {
    if (data[k] != 0) return Fail("FRAME", "H5");
  }
  const std::uint64_t tensor_count = Le(data + 8, 4);
  const std::uint64_t name_bytes = Le(data + 12, 4);
  const std::uint64_t payload_bytes = Le(data + 16, 8);
  const std::uint64_t directory_bytes = Le(data + 24, 8);
  // H6: directory_bytes == tensor_count * 128 + name_bytes, exactly.
  if (static_cast<U128>(directory_bytes) != static_cast<U128>(tensor_count) * 128 + name_bytes) {
    return Fail("TYPE", "H6");
  }
  // H7: block_length = payload_base + payload_bytes fits in u64, with
  // payload_base = (64 + directory_bytes + 63) & ~63. (No caller limits: they
  // are all at the format maximum, so they cannot fire.)
  const U128 payload_base = (64 + static_cast<U128>(directory_bytes) + 63) / 64 * 64;
  const U128 block_length = payload_base + payload_bytes;
  if (block_length > kU64Max) return Fail("LIMIT", "H7");
  // H8: the buffer holds block_length bytes; in whole-buffer mode exactly.
  if (static_cast<U128>(size) < block_length) return Fail("FRAME", "H8");
  if (whole_buffer && static_cast<U128>(size) != block_length) return Fail("FRAME", "H8");
  // H9: tensor_count == 0 implies the name flag is clear.
  const bool named = (flags & 0x01u) != 0;
  if (tensor_count == 0 && named) return Fail("TYPE", "H9");
  // From here on every offset below block_length <= size is inside the buffer.
  const std::size_t heap_start = 64 + static_cast<std::size_t>(tensor_count) * 128;
  const std::size_t pad_start = 64 + static_cast<std::size_t>(directory_bytes);
  const std::size_t base = static_cast<std::size_t>(payload_base);
  // L1: every byte from 64 + directory_bytes up to payload_base is zero.
  for (std::size_t k = pad_start; k < base; ++k) {
    if (data[k] != 0) return Fail("TYPE", "L1");
  }

  // ---- Descriptors, in index order: D1..D10, N1, N2, O1..O3, Q1..Q4 ----
  const std::size_t n = static_cast<std::size_t>(tensor_count);
  std::vector<Descriptor> desc;
  desc.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint8_t* d = data + 64 + 128 * i;
    desc.push_back(ReadDescriptor(d));
    Verdict v = CheckDescriptor(d, desc.back(), named, payload_bytes);
    if (!v.ok) return v;
  }

  // ---- Name heap: N3, N4, N5 ----
  // Heap order: tensor names in descriptor order, then layout names in
  // descriptor order. After N1, N2, O1, O2 a name or layout is present
  // exactly when its length is nonzero.
  std::vector<Slice> slices;
  for (const Descriptor& t : desc) {
    if (t.name_len != 0) slices.push_back({t.name_off, t.name_len});
  }
  for (const Descriptor& t : desc) {
    if (t.layout_len != 0) slices.push_back({t.layout_off, t.layout_len});
  }
  // N3: the slices laid end to end from 0, ending exactly at name_bytes.
  std::uint64_t pos = 0;
  for (const Slice& s : slices) {
    if (s.off != pos) return Fail("TYPE", "N3");
    if (s.off + s.len > name_bytes) return Fail("TYPE", "N3");
    pos = s.off + s.len;
  }
  if (pos != name_bytes) return Fail("TYPE", "N3");
  // N4: every slice, on its own, is well-formed UTF-8 (heap order).
  const std::uint8_t* heap = data + heap_start;
  for (const Slice& s : slices) {
    if (!IsWellFormedUtf8(heap + s.off, static_cast<std::size_t>(s.len))) {
      return Fail("UTF8", "N4");
    }
  }
  // N5: tensor names are unique as raw bytes (layout names may repeat).
  if (named) {
    std::vector<std::string_view> names;
    for (const Descriptor& t : desc) {
      names.emplace_back(reinterpret_cast<const char*>(heap + t.name_off), t.name_len);
    }
    if (n <= kPairwiseMax) {
      for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = i + 1; j < n; ++j) {
          if (names[i] == names[j]) return Fail("TYPE", "N5");
        }
      }
    } else {
      std::sort(names.begin(), names.end());
      for (std::size_t i = 1; i < n; ++i) {
        if (names[i - 1] == names[i]) return Fail("TYPE", "N5");
      }
    }
  }

  // ---- Scales: for each descriptor with scheme 1 or 2, in index order: Q5, Q6, Q7 ----
  for (std::size_t i = 0; i < n; ++i) {
    const Descriptor& t = desc[i];
    if (t.scheme != 1 && t.scheme != 2) continue;
    // Q5: scale_index < tensor_count and != i; that tensor has scheme 0 and a
    // scale dtype.
    if (t.scale_index >= tensor_count || t.scale_index == i) return Fail("TYPE", "Q5");
    const Descriptor& s = desc[t.scale_index];
    if (s.scheme != 0 || !IsScaleDtype(s.dtype)) return Fail("TYPE", "Q5");
    // Q6: scheme 1: the scale is rank 1 with shape [shape[axis]]. Scheme 2:
    // same rank and dimensions, except dimension axis, which is
    // ceil(shape[axis] / group_size).
    const std::uint64_t dim = t.shape[t.axis];
    if (t.scheme == 1) {
      if (s.rank != 1 || s.shape[0] != dim) return Fail("TYPE", "Q6");
    } else {
      if (s.rank != t.rank) return Fail("TYPE", "Q6");
      for (int k = 0; k < t.rank; ++k) {
        std::uint64_t want = t.shape[k];
        if (k == t.axis) want = dim / t.group_size + (dim % t.group_size != 0 ? 1 : 0);
        if (s.shape[k] != want) return Fail("TYPE", "Q6");
      }
    }
    // Q7: outer_index is 0xFFFFFFFF, or < tensor_count and != i, naming a
    // rank-0 tensor with scheme 0 and a scale dtype.
    if (t.outer_index != kNone32) {
      if (t.outer_index >= tensor_count || t.outer_index == i) return Fail("TYPE", "Q7");
      const Descriptor& o = desc[t.outer_index];
      if (o.rank != 0 || o.scheme != 0 || !IsScaleDtype(o.dtype)) return Fail("TYPE", "Q7");
    }
  }

  // ---- Payloads: P1, P2 ----
  // Ranges [byte_offset, byte_offset + byte_length); zero-length ones are
  // ignored by both rules. D8 and D9 hold, so every end is <= payload_bytes.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;  // (start, end)
  for (const Descriptor& t : desc) {
    if (t.byte_length != 0) ranges.emplace_back(t.byte_offset, t.byte_offset + t.byte_length);
  }
  // P1: no two nonzero-length ranges overlap.
  if (ranges.size() <= kPairwiseMax) {
    for (std::size_t i = 0; i < ranges.size(); ++i) {
      for (std::size_t j = i + 1; j < ranges.size(); ++j) {
        if (ranges[i].first < ranges[j].second && ranges[j].first < ranges[i].second) {
          return Fail("TYPE", "P1");
        }
      }
    }
  } else {
    // Sorted by start, disjoint nonempty ranges each start at or after the
    // end of the one before.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> sorted = ranges;
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t i = 1; i < sorted.size(); ++i) {
      if (sorted[i].first < sorted[i - 1].second) return Fail("TYPE", "P1");
    }
  }
  // P2: every payload byte no range covers is zero. (P1 holds, so marking
  // costs at most payload_bytes steps.)
  const std::size_t payload_size = static_cast<std::size_t>(payload_bytes);
  std::vector<bool> covered(payload_size, false);
  for (const auto& [start, end] : ranges) {
    for (std::uint64_t k = start; k < end; ++k) covered[static_cast<std::size_t>(k)] = true;
  }
  const std::uint8_t* payload = data + base;
  for (std::size_t k = 0; k < payload_size; ++k) {
    if (!covered[k] && payload[k] != 0) return Fail("TYPE", "P2");
  }
  return Verdict{true, "", ""};
}

}  // namespace kiln_ref
