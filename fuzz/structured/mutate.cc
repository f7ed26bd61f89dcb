#include "mutate.h"

#include <algorithm>
#include <string_view>

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size);

namespace kiln_fuzz::structured {
namespace {

constexpr std::uint64_t kBoundaries[] = {
    0,
    1,
    2,
    7,
    8,
    9,
    63,
    64,
    65,
    127,
    128,
    255,
    256,
    0x7FFF,
    0x8000,
    0xFFFF,
    0xFFFFFFFF,
    0x100000000,
    0x8000000000000000,
    kU64Max,
};

constexpr std::string_view kBadUtf8[] = {
    "\xC0\x80",          // overlong NUL
    "\xED\xA0\x80",      // surrogate U+D800
    "\xF4\x90\x80\x80",  // above U+10FFFF
    "\x80",              // lone continuation byte
    "\xE2\x82",          // truncated sequence
};

constexpr std::string_view kNames[] = {
    "w",
    "layer.0.weight",
    "layer.0.scale",
    "\xC3\xA9",
    "\xE5\x90\x8D\xE5\x89\x8D",
    "\xF0\x9F\x94\xA5",
    "\xEF\xBF\xBF",
    "a/b",
    std::string_view("\0", 1),
};

constexpr std::string_view kLayouts[] = {"ggml.q4_K", "ggml.q8_0", "q", "ggml.iq2_xxs"};

std::uint64_t Neighbour(std::uint64_t v, bool up) {
  if (up) return v == kU64Max ? v : v + 1;
  return v == 0 ? v : v - 1;
}

// A boundary value for a field of `bits` bits holding `current`.
std::uint64_t BoundaryValue(Rng& rng, std::uint64_t current, unsigned bits) {
  const std::uint64_t mask = bits >= 64 ? kU64Max : (std::uint64_t{1} << bits) - 1;
  std::uint64_t v = 0;
  switch (rng.Below(4)) {
    case 0:
      v = Neighbour(current, rng.OneIn(2));
      break;
    case 1:
      v = Neighbour(rng.Pick(kBoundaries), rng.OneIn(2));
      break;
    default:
      v = rng.Pick(kBoundaries);
      break;
  }
  // Too wide for the field: its own maximum, or the low bits.
  if (v > mask) v = rng.OneIn(2) ? mask : (v & mask);
  return v;
}

Bytes FreshName(Rng& rng) {
  const std::string_view base = rng.Pick(kNames);
  Bytes name(base.begin(), base.end());
  if (!rng.OneIn(4)) {
    // A suffix so fresh names rarely collide (N5 is reached by DuplicateName).
    const std::uint64_t tag = rng.Below(1000000);
    name.push_back('.');
    for (char c : std::to_string(tag)) name.push_back(static_cast<std::uint8_t>(c));
  }
  return name;
}

bool HasNames(const Block& b) {
  return std::any_of(b.d.begin(), b.d.end(), [](const Descriptor& d) { return !d.name.empty(); });
}

// A small plain tensor: a fixed-width dtype, rank 0..3, dims 1..4.
Descriptor FreshDescriptor(Rng& rng, bool named) {
  Descriptor d;
  d.dtype = rng.Pick(kDtypes).code;
  d.rank = static_cast<std::uint8_t>(rng.Below(4));
  for (std::size_t k = 0; k < d.rank; ++k) d.shape[k] = 1 + rng.Below(4);
  d.byte_length = FixedSize(d, FixedBits(d.dtype)).value_or(0);
  if (named) d.name = FreshName(rng);
  return d;
}

// Stores text into the raw heap at the slice (off, len), in place and cut to
// the slice, so that a block encoded without Derive carries the change too.
void PatchHeap(Block& b, std::uint16_t off, std::uint16_t len, const Bytes& text) {
  for (std::size_t k = 0; k < len && k < text.size(); ++k) {
    const std::size_t at = std::size_t{off} + k;
    if (at < b.heap.size()) b.heap[at] = text[k];
  }
}

void MutateHeaderBoundary(Block& b, Rng& rng, Pins& pins) {
  const auto f = static_cast<HeaderField>(rng.Below(kHeaderFieldCount));
  const FieldInfo<Header>& info = kHeaderFields[f];
  info.set(b.h, BoundaryValue(rng, info.get(b.h), info.bits));
  pins.header.set(f);
}

void MutateDescBoundary(Block& b, Rng& rng, Pins& pins) {
  if (b.d.empty()) b.d.push_back(FreshDescriptor(rng, HasNames(b)));
  const std::size_t i = rng.Below(b.d.size());
  const auto f = static_cast<DescField>(rng.Below(kDescFieldCount));
  const FieldInfo<Descriptor>& info = kDescFields[f];
  info.set(b.d[i], BoundaryValue(rng, info.get(b.d[i]), info.bits));
  pins.PinDesc(i, f);
}

void MutateTensorCount(Block& b, Rng& rng, std::size_t max_size) {
  const std::size_t max_count = max_size / kiln::kDescriptorSize;
  const std::uint64_t op = b.d.empty() ? 0 : rng.Below(3);
  if (op == 1 || b.d.size() >= max_count) {  // remove
    if (!b.d.empty()) b.d.erase(b.d.begin() + static_cast<std::ptrdiff_t>(rng.Below(b.d.size())));
    return;
  }
  const std::size_t at = rng.Below(b.d.size() + 1);
  Descriptor d = op == 0 ? FreshDescriptor(rng, HasNames(b)) : b.d[rng.Below(b.d.size())];
  if (op == 2 && !d.name.empty() && rng.OneIn(2)) d.name = FreshName(rng);  // else N5
  b.d.insert(b.d.begin() + static_cast<std::ptrdiff_t>(at), std::move(d));
}

void MutateRank(Block& b, Rng& rng, Pins& pins) {
  if (b.d.empty()) b.d.push_back(FreshDescriptor(rng, HasNames(b)));
  const std::size_t i = rng.Below(b.d.size());
  Descriptor& d = b.d[i];
  static constexpr std::uint8_t kRanks[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 255};
  const std::uint8_t old = d.rank;
  d.rank = rng.OneIn(3) ? static_cast<std::uint8_t>(Neighbour(old, rng.OneIn(2)) & 0xFF)
                        : rng.Pick(kRanks);
  const std::size_t lo = std::min<std::size_t>(old, kiln::kMaxRank);
  const std::size_t hi = std::min<std::size_t>(d.rank, kiln::kMaxRank);
  for (std::size_t k = lo; k < hi; ++k) d.shape[k] = rng.OneIn(8) ? 0 : 1 + rng.Below(4);
  if (rng.OneIn(4)) {
    pins.PinDesc(i, kRank);  // keeps stale slots past the rank: D4
  } else {
    for (std::size_t k = hi; k < kiln::kMaxRank; ++k) d.shape[k] = 0;
  }
}

void MutateOffsetOrLength(Block& b, Rng& rng, Pins& pins) {
  static constexpr HeaderField kHeader[] = {kPayloadBytes, kNameBytes, kDirectoryBytes,
                                            kTensorCount};
  static constexpr DescField kDesc[] = {kByteOffset, kByteLength, kNameOff,
                                        kNameLen,    kLayoutOff,  kLayoutLen};
  const auto nudge = [&rng](std::uint64_t v, unsigned bits, std::uint64_t other) {
    std::uint64_t r = v;
    switch (rng.Below(8)) {
      case 0:
        r = AddSat(v, 1);
        break;
      case 1:
        r = SubSat(v, 1);
        break;
      case 2:
        r = AddSat(v, kAlign);
        break;
      case 3:
        r = SubSat(v, kAlign);
        break;
      case 4:
        r = AddSat(v, 1 + rng.Below(16));
        break;
      case 5:
        r = SubSat(v, 1 + rng.Below(16));
        break;
      case 6:
        r = v > kU64Max / 2 ? kU64Max : v * 2;
        break;
      default:
        r = other;
        break;  // another tensor's value: overlaps, shared slices
    }
    const std::uint64_t mask = bits >= 64 ? kU64Max : (std::uint64_t{1} << bits) - 1;
    return std::min(r, mask);
  };
  if (b.d.empty() || rng.OneIn(4)) {
    const HeaderField f = rng.Pick(kHeader);
    const FieldInfo<Header>& info = kHeaderFields[f];
    info.set(b.h, nudge(info.get(b.h), info.bits, info.get(b.h)));
    pins.header.set(f);
    return;
  }
  const std::size_t i = rng.Below(b.d.size());
  const Descriptor& j = b.d[rng.Below(b.d.size())];
  const DescField f = rng.Pick(kDesc);
  const FieldInfo<Descriptor>& info = kDescFields[f];
  std::uint64_t other = info.get(j);
  if (f == kByteOffset && rng.OneIn(2)) {
    other = AddSat(j.byte_offset, SubSat(j.byte_length, rng.OneIn(2) ? 0 : 1));  // end, end-1
  }
  info.set(b.d[i], nudge(info.get(b.d[i]), info.bits, other));
  pins.PinDesc(i, f);
}

// Gives every tensor a name when none has one (so a name can be broken).
void EnsureNames(Block& b, Rng& rng) {
  if (HasNames(b)) return;
  for (Descriptor& d : b.d) d.name = FreshName(rng);
}

void MutateBadUtf8(Block& b, Rng& rng) {
  if (b.d.empty()) b.d.push_back(FreshDescriptor(rng, true));
  EnsureNames(b, rng);
  Descriptor& d = b.d[rng.Below(b.d.size())];
  const bool layout = !d.layout.empty() && rng.OneIn(3);
  Bytes& text = layout ? d.layout : d.name;
  const std::string_view bad = rng.Pick(kBadUtf8);
  const std::size_t at = rng.Below(text.size() + 1);
  text.insert(text.begin() + static_cast<std::ptrdiff_t>(at), bad.begin(), bad.end());
  // Without Derive: overwrite the stored slice from the same position.
  const std::uint16_t off = layout ? d.layout_off : d.name_off;
  const std::uint16_t len = layout ? d.layout_len : d.name_len;
  if (at < len) {
    const Bytes tail(text.begin() + static_cast<std::ptrdiff_t>(at), text.end());
    PatchHeap(b, static_cast<std::uint16_t>(off + at), static_cast<std::uint16_t>(len - at), tail);
  }
}

void MutateSwapNames(Block& b, Rng& rng) {
  if (b.d.size() < 2) return MutateBadUtf8(b, rng);
  const std::size_t i = rng.Below(b.d.size());
  const std::size_t j = (i + 1 + rng.Below(b.d.size() - 1)) % b.d.size();
  Descriptor& x = b.d[i];
  Descriptor& y = b.d[j];
  if (rng.OneIn(4)) {
    std::swap(x.layout, y.layout);
    std::swap(x.layout_off, y.layout_off);
    std::swap(x.layout_len, y.layout_len);
  } else {
    std::swap(x.name, y.name);
    std::swap(x.name_off, y.name_off);  // without Derive: slices out of heap order (N3)
    std::swap(x.name_len, y.name_len);
  }
}

void MutateDuplicateName(Block& b, Rng& rng) {
  if (b.d.size() < 2) b.d.push_back(FreshDescriptor(rng, HasNames(b)));
  EnsureNames(b, rng);
  const std::size_t i = rng.Below(b.d.size());
  const std::size_t j = (i + 1 + rng.Below(b.d.size() - 1)) % b.d.size();
  const Descriptor& x = b.d[i];
  Descriptor& y = b.d[j];
  if (!x.layout.empty() && rng.OneIn(4)) {
    y.layout = x.layout;  // a repeated layout name is legal
    y.layout_off = x.layout_off;
    y.layout_len = x.layout_len;
  } else {
    y.name = x.name;  // N5; without Derive a shared slice (N3)
    y.name_off = x.name_off;
    y.name_len = x.name_len;
  }
}

// Quantisation scheme 0 with every quantisation field at its "none" value.
void ClearQuant(Descriptor& d) {
  d.quant_scheme = 0;
  d.quant_axis = kiln::kNoAxis;
  d.group_size = 0;
  d.scale_index = kiln::kNoTensor;
  d.outer_index = kiln::kNoTensor;
}

void MakePlainScale(Descriptor& s, Rng& rng) {
  s.dtype = rng.Pick(kScaleDtypes);
  ClearQuant(s);
  s.block_size = 0;
  s.layout.clear();
  s.layout_off = kiln::kNoHeapSlice;
  s.layout_len = 0;
}

// Quantises tensor i against scale tensor j and maybe outer tensor k, all
// consistent; one time in four one detail is then broken.
void MutateQuant(Block& b, Rng& rng) {
  const bool named = HasNames(b);
  while (b.d.size() < 2) b.d.push_back(FreshDescriptor(rng, named));
  const std::size_t n = b.d.size();
  const std::size_t i = rng.Below(n);
  const std::size_t j = (i + 1 + rng.Below(n - 1)) % n;
  Descriptor& w = b.d[i];
  if (FixedBits(w.dtype) == 0) {
    w.dtype = rng.Pick(kDtypes).code;
    w.block_size = 0;
    w.layout.clear();
    w.layout_off = kiln::kNoHeapSlice;
    w.layout_len = 0;
  }
  if (w.rank == 0 || w.rank > kiln::kMaxRank || rng.OneIn(4)) {
    w.rank = static_cast<std::uint8_t>(1 + rng.Below(3));
    w.shape = {};
    for (std::size_t k = 0; k < w.rank; ++k) w.shape[k] = rng.Below(9);
  }
  for (std::size_t k = 0; k < w.rank; ++k) w.shape[k] = std::min<std::uint64_t>(w.shape[k], 64);
  w.quant_scheme = static_cast<std::uint16_t>(1 + rng.Below(2));
  w.quant_axis = static_cast<std::uint16_t>(rng.Below(w.rank));
  const std::uint64_t dim = w.shape[w.quant_axis];
  w.group_size = w.quant_scheme == 1 ? 0 : static_cast<std::uint32_t>(1 + rng.Below(dim + 2));
  w.scale_index = static_cast<std::uint32_t>(j);
  w.outer_index = kiln::kNoTensor;

  Descriptor& s = b.d[j];
  MakePlainScale(s, rng);
  s.shape = {};
  if (w.quant_scheme == 1) {
    s.rank = 1;
    s.shape[0] = dim;
  } else {
    s.rank = w.rank;
    s.shape = w.shape;
    s.shape[w.quant_axis] = (dim + w.group_size - 1) / w.group_size;
  }

  if (n >= 3 && rng.OneIn(2)) {
    std::size_t k = rng.Below(n);
    while (k == i || k == j) k = (k + 1) % n;
    Descriptor& o = b.d[k];
    MakePlainScale(o, rng);
    o.rank = 0;
    o.shape = {};
    b.d[i].outer_index = static_cast<std::uint32_t>(k);
  }

  if (!rng.OneIn(4)) return;
  Descriptor& wq = b.d[i];
  Descriptor& sq = b.d[j];
  switch (rng.Below(6)) {
    case 0:
      sq.shape[wq.quant_scheme == 1 ? 0 : wq.quant_axis] += 1;
      break;  // Q6
    case 1:
      wq.scale_index = static_cast<std::uint32_t>(rng.OneIn(2) ? i : n);
      break;  // Q5
    case 2:
      sq.dtype = 6;
      break;  // i32: Q5
    case 3:
      wq.outer_index = static_cast<std::uint32_t>(rng.OneIn(2) ? i : j);
      break;  // Q7
    case 4:
      wq.quant_axis = wq.rank;
      break;  // Q3
    default:
      sq.quant_scheme = 1;
      break;  // Q5
  }
}

void MutateOpaque(Block& b, Rng& rng) {
  if (b.d.empty()) b.d.push_back(FreshDescriptor(rng, HasNames(b)));
  Descriptor& d = b.d[rng.Below(b.d.size())];
  d.dtype = kOpaque;
  static constexpr std::uint32_t kBlockSizes[] = {1, 2, 32, 256, 0xFFFF, 0xFFFFFFFF};
  d.block_size = rng.Pick(kBlockSizes);
  ClearQuant(d);
  d.shape = {};
  d.rank = static_cast<std::uint8_t>(1 + rng.Below(2));
  d.shape[0] = std::uint64_t{d.block_size} * rng.Below(5);
  if (d.rank == 2) d.shape[1] = 1 + rng.Below(3);
  const std::uint64_t blocks = d.shape[0] / d.block_size * (d.rank == 2 ? d.shape[1] : 1);
  d.byte_length = blocks * (1 + rng.Below(144));
  const std::string_view layout = rng.Pick(kLayouts);
  d.layout.assign(layout.begin(), layout.end());
  // Without Derive: the layout name goes at the end of the stored heap.
  d.layout_off = static_cast<std::uint16_t>(std::min<std::size_t>(b.heap.size(), 0xFFFE));
  d.layout_len = static_cast<std::uint16_t>(d.layout.size());
  b.heap.insert(b.heap.end(), d.layout.begin(), d.layout.end());
}

void MutateRegion(Block& b, Rng& rng, Pins& pins, std::size_t max_size) {
  switch (rng.Below(6)) {
    case 0: {  // the header
      std::array<std::uint8_t, kiln::kHeaderSize> raw{};
      EncodeHeader(b.h, raw.data());
      LLVMFuzzerMutate(raw.data(), raw.size(), raw.size());
      DecodeHeader(raw.data(), b.h);
      pins.header.set();
      return;
    }
    case 1:
    case 2: {  // a descriptor
      if (b.d.empty()) break;
      Descriptor& d = b.d[rng.Below(b.d.size())];
      std::array<std::uint8_t, kiln::kDescriptorSize> raw{};
      EncodeDescriptor(d, raw.data());
      LLVMFuzzerMutate(raw.data(), raw.size(), raw.size());
      DecodeDescriptor(raw.data(), d);
      return;
    }
    case 3: {  // the heap; the names are read from it again
      if (b.heap.empty()) break;
      const std::size_t cap = std::min<std::size_t>(b.heap.size() * 2 + 16, max_size / 2);
      const std::size_t size = b.heap.size();
      b.heap.resize(std::max(cap, size));
      b.heap.resize(LLVMFuzzerMutate(b.heap.data(), size, b.heap.size()));
      for (Descriptor& d : b.d) {
        d.name = d.name_len == 0 ? Bytes{} : Slice(b.heap, d.name_off, d.name_len);
        d.layout = d.layout_len == 0 ? Bytes{} : Slice(b.heap, d.layout_off, d.layout_len);
      }
      return;
    }
    default:
      break;
  }
  // A payload, mutated in place (same length).
  if (b.d.empty()) return;
  Descriptor& d = b.d[rng.Below(b.d.size())];
  if (d.data.empty()) return;
  LLVMFuzzerMutate(d.data.data(), d.data.size(), d.data.size());
  if (d.byte_offset < b.payload.size()) {
    std::copy(d.data.begin(), d.data.end(),
              b.payload.begin() + static_cast<std::ptrdiff_t>(d.byte_offset));
  }
}

void MutateEdges(Block& b, Rng& rng, Pins& pins) {
  if (rng.OneIn(2)) {  // trailing bytes: H8 in whole-buffer mode, fine in prefix mode
    const std::size_t count = 1 + rng.Below(64);
    for (std::size_t k = 0; k < count; ++k) {
      b.trailer.push_back(rng.OneIn(2) ? 0 : static_cast<std::uint8_t>(rng.Next()));
    }
    pins.trailer = true;
    return;
  }
  // A nonzero padding byte: L1.
  const std::uint64_t at = rng.Next();
  const auto value = static_cast<std::uint8_t>(1 + rng.Below(255));
  pins.padding_poke = std::make_pair(at, value);
  if (!b.padding.empty()) b.padding[at % b.padding.size()] = value;
}

}  // namespace

void Mutate(Block& b, Rng& rng, Pins& pins, std::size_t max_size) {
  switch (rng.Below(16)) {
    case 0:
      return MutateHeaderBoundary(b, rng, pins);
    case 1:
    case 2:
    case 3:
      return MutateDescBoundary(b, rng, pins);
    case 4:
      return MutateTensorCount(b, rng, max_size);
    case 5:
      return MutateRank(b, rng, pins);
    case 6:
    case 7:
      return MutateOffsetOrLength(b, rng, pins);
    case 8:
      return MutateBadUtf8(b, rng);
    case 9:
      return MutateSwapNames(b, rng);
    case 10:
      return MutateDuplicateName(b, rng);
    case 11:
      return MutateQuant(b, rng);
    case 12:
      return MutateOpaque(b, rng);
    case 13:
    case 14:
      return MutateRegion(b, rng, pins, max_size);
    default:
      return MutateEdges(b, rng, pins);
  }
}

}  // namespace kiln_fuzz::structured
