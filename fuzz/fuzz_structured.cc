// Structure-aware libFuzzer target for Kiln v2 blocks.
//
// LLVMFuzzerCustomMutator decodes its input as a block into a Block struct
// (header fields; every descriptor field; each tensor's name, layout name and
// payload bytes; the raw heap, padding, payload region and any trailing
// bytes), applies ONE mutation chosen from the seed, and encodes it again.
// Input that cannot be decoded (shorter than a header, or claiming more
// descriptors than it holds) is handed to LLVMFuzzerMutate as raw bytes.
//
// The mutations: set a header or descriptor field to a boundary value (or
// the field's own value +-1); add, remove or duplicate a descriptor; change a
// rank; nudge an offset or a length; put ill-formed UTF-8 into a name; swap
// two names; duplicate a name; quantise a tensor against a scale (and maybe
// an outer) tensor; make a tensor opaque with a layout name; hand the header,
// a descriptor, the heap or a payload to LLVMFuzzerMutate; append trailing
// bytes or dirty the padding.
//
// After the mutation, 7 times in 8 the dependent fields are derived again so
// the block gets past the framing rules to the deep ones (heap, scales,
// payload ranges): tensor_count, name_bytes, directory_bytes, the names flag,
// heap slices laid end to end in heap order, zero padding to 64, payloads
// aligned to 64 in descriptor order, payload_bytes ending at the last
// payload, byte_length equal to the exact size of a fixed-width dtype (or
// blocks * width for the opaque dtype), and the framing bytes (magic,
// version, reserved bytes) restored. The field the mutation set is "pinned"
// and keeps its mutated value. The other time in 8 the mutated block is
// encoded as it is. Output never exceeds MaxSize: shapes too large for it are
// halved, unless the mutation pinned them.
//
// LLVMFuzzerCustomCrossOver splices descriptors (with their names and
// payloads) of two decoded blocks and derives the rest.
//
// LLVMFuzzerTestOneInput checks the shared invariants (invariants.h). Under
// AFL++ the custom mutator is not used; the target is then a plain one.
#include <algorithm>
#include <array>
#include <bitset>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "invariants.h"

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size);

namespace {

using Bytes = std::vector<std::uint8_t>;

constexpr std::uint64_t kU64Max = std::numeric_limits<std::uint64_t>::max();
constexpr std::uint32_t kMagicLe = 0x544E4C4B;  // "KLNT"
constexpr std::uint8_t kVersion = 2;
constexpr std::uint16_t kOpaque = 0x8000;
constexpr std::uint64_t kAlign = kiln::kPayloadAlignment;
constexpr std::uint8_t kPayloadFill = 0xA5;  // bytes of a tensor the input did not hold

// The dtype table of docs/spec.md 2.4, kept here independently of the parser.
struct DtypeEntry {
  std::uint16_t code;
  std::uint8_t bits;
  bool scale;
};
constexpr DtypeEntry kDtypes[] = {
    {1, 32, true},   {2, 8, false},   {3, 8, false},   {4, 16, false},   {5, 16, false},
    {6, 32, false},  {7, 64, false},  {9, 8, false},   {10, 16, true},   {11, 64, true},
    {12, 32, false}, {13, 64, false}, {14, 64, false}, {15, 128, false}, {16, 16, true},
    {17, 8, true},   {18, 8, false},  {19, 8, false},  {20, 8, false},   {21, 4, false},
    {22, 4, false},  {23, 4, false},  {24, 8, true},
};
constexpr std::uint16_t kScaleDtypes[] = {1, 10, 11, 16, 17, 24};

// Bits per element of a fixed-width dtype; 0 for the opaque dtype and for
// codes not in the table.
unsigned FixedBits(std::uint16_t code) {
  for (const DtypeEntry& e : kDtypes) {
    if (e.code == code) return e.bits;
  }
  return 0;
}

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

class Rng {
 public:
  explicit Rng(unsigned seed) : gen_(seed) {}
  std::uint64_t Next() { return gen_(); }
  // Uniform in [0, n); 0 when n is 0.
  std::uint64_t Below(std::uint64_t n) { return n == 0 ? 0 : gen_() % n; }
  bool OneIn(std::uint64_t n) { return Below(n) == 0; }
  template <typename T, std::size_t N>
  const T& Pick(const T (&a)[N]) {
    return a[Below(N)];
  }

 private:
  std::mt19937_64 gen_;
};

// Saturating arithmetic: the fuzz build traps on any unsigned wrap.
std::uint64_t AddSat(std::uint64_t a, std::uint64_t b) { return a > kU64Max - b ? kU64Max : a + b; }
std::uint64_t SubSat(std::uint64_t a, std::uint64_t b) { return a < b ? 0 : a - b; }
std::optional<std::uint64_t> AlignUp(std::uint64_t x) {
  if (x > kU64Max - (kAlign - 1)) return std::nullopt;
  return (x + (kAlign - 1)) & ~(kAlign - 1);
}

std::uint64_t LoadLe(const std::uint8_t* p, std::size_t width) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < width; ++i) v |= std::uint64_t{p[i]} << (8 * i);
  return v;
}

void StoreLe(std::uint8_t* p, std::uint64_t v, std::size_t width) {
  for (std::size_t i = 0; i < width; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

// The bytes [off, off + len) of v that exist.
Bytes Slice(const Bytes& v, std::uint64_t off, std::uint64_t len) {
  if (off >= v.size()) return {};
  const std::uint64_t n = std::min<std::uint64_t>(len, v.size() - off);
  return Bytes(v.begin() + static_cast<std::ptrdiff_t>(off),
               v.begin() + static_cast<std::ptrdiff_t>(off + n));
}

// ---------------------------------------------------------------------------
// The decoded block

struct Header {
  std::uint32_t magic = kMagicLe;
  std::uint8_t version = kVersion;
  std::uint8_t flags = kiln::kFlagLittleEndian;
  std::uint16_t reserved0 = 0;
  std::uint32_t tensor_count = 0;
  std::uint32_t name_bytes = 0;
  std::uint64_t payload_bytes = 0;
  std::uint64_t directory_bytes = 0;
  std::array<std::uint64_t, 4> reserved1{};  // bytes 32..63
};

struct Descriptor {
  std::uint16_t dtype = 1;
  std::uint8_t rank = 0;
  std::uint8_t reserved0 = 0;
  std::uint16_t name_off = kiln::kNoHeapSlice;
  std::uint16_t name_len = 0;
  std::uint16_t layout_off = kiln::kNoHeapSlice;
  std::uint16_t layout_len = 0;
  std::uint32_t block_size = 0;
  std::uint16_t quant_scheme = 0;
  std::uint16_t quant_axis = kiln::kNoAxis;
  std::uint32_t group_size = 0;
  std::uint32_t scale_index = kiln::kNoTensor;
  std::uint32_t outer_index = kiln::kNoTensor;
  std::uint64_t byte_offset = 0;
  std::uint64_t byte_length = 0;
  std::array<std::uint64_t, kiln::kMaxRank> shape{};
  std::array<std::uint64_t, 2> reserved1{};  // bytes 112..127
  // What the slices and the payload range held in the input (as far as the
  // input held them); Derive lays these out again.
  Bytes name;
  Bytes layout;
  Bytes data;
};

struct Block {
  Header h;
  std::vector<Descriptor> d;
  Bytes heap;     // the name heap as stored
  Bytes padding;  // as stored
  Bytes payload;  // the payload region as stored
  Bytes trailer;  // bytes after block_length
};

// Field tables: each field with its width in bits and an accessor, so that
// "set a field to a boundary value" is one piece of code for every field.
template <typename S>
struct FieldInfo {
  unsigned bits;
  std::uint64_t (*get)(const S&);
  void (*set)(S&, std::uint64_t);
};

#define KILN_FIELD(S, member, nbits)                                                         \
  FieldInfo<S> {                                                                             \
    nbits, [](const S& s) -> std::uint64_t { return s.member; }, [](S& s, std::uint64_t v) { \
      s.member = static_cast<std::remove_reference_t<decltype(s.member)>>(v);                \
    }                                                                                        \
  }

enum HeaderField : std::size_t {
  kMagic,
  kVersionField,
  kFlags,
  kHeaderReserved0,
  kTensorCount,
  kNameBytes,
  kPayloadBytes,
  kDirectoryBytes,
  kHeaderReserved1,  // four u64 slots
  kHeaderFieldCount = kHeaderReserved1 + 4,
};

const FieldInfo<Header> kHeaderFields[kHeaderFieldCount] = {
    KILN_FIELD(Header, magic, 32),         KILN_FIELD(Header, version, 8),
    KILN_FIELD(Header, flags, 8),          KILN_FIELD(Header, reserved0, 16),
    KILN_FIELD(Header, tensor_count, 32),  KILN_FIELD(Header, name_bytes, 32),
    KILN_FIELD(Header, payload_bytes, 64), KILN_FIELD(Header, directory_bytes, 64),
    KILN_FIELD(Header, reserved1[0], 64),  KILN_FIELD(Header, reserved1[1], 64),
    KILN_FIELD(Header, reserved1[2], 64),  KILN_FIELD(Header, reserved1[3], 64),
};

enum DescField : std::size_t {
  kDtype,
  kRank,
  kDescReserved0,
  kNameOff,
  kNameLen,
  kLayoutOff,
  kLayoutLen,
  kBlockSize,
  kQuantScheme,
  kQuantAxis,
  kGroupSize,
  kScaleIndex,
  kOuterIndex,
  kByteOffset,
  kByteLength,
  kShape0,
  kDescReserved1 = kShape0 + kiln::kMaxRank,  // two u64 slots
  kDescFieldCount = kDescReserved1 + 2,
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

// Byte offset of each header / descriptor field (docs/spec.md 2.2, 2.3).
constexpr std::size_t kHeaderFieldOffset[kHeaderFieldCount] = {0,  4,  5,  6,  8,  12,
                                                               16, 24, 32, 40, 48, 56};
constexpr std::size_t kDescFieldOffset[kDescFieldCount] = {
    0, 2, 3, 4, 6, 8, 10, 12, 16, 18, 20, 24, 28, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120,
};

void DecodeHeader(const std::uint8_t* p, Header& h) {
  for (std::size_t f = 0; f < kHeaderFieldCount; ++f) {
    kHeaderFields[f].set(h, LoadLe(p + kHeaderFieldOffset[f], kHeaderFields[f].bits / 8));
  }
}

void EncodeHeader(const Header& h, std::uint8_t* p) {
  for (std::size_t f = 0; f < kHeaderFieldCount; ++f) {
    StoreLe(p + kHeaderFieldOffset[f], kHeaderFields[f].get(h), kHeaderFields[f].bits / 8);
  }
}

void DecodeDescriptor(const std::uint8_t* p, Descriptor& d) {
  for (std::size_t f = 0; f < kDescFieldCount; ++f) {
    kDescFields[f].set(d, LoadLe(p + kDescFieldOffset[f], kDescFields[f].bits / 8));
  }
}

void EncodeDescriptor(const Descriptor& d, std::uint8_t* p) {
  for (std::size_t f = 0; f < kDescFieldCount; ++f) {
    StoreLe(p + kDescFieldOffset[f], kDescFields[f].get(d), kDescFields[f].bits / 8);
  }
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

// ---------------------------------------------------------------------------
// Element counts and sizes (rules D5, D6), exact

std::optional<std::uint64_t> ElementCount(const Descriptor& d) {
  if (d.rank > kiln::kMaxRank) return std::nullopt;
  for (std::size_t k = 0; k < d.rank; ++k) {
    if (d.shape[k] == 0) return 0;
  }
  std::uint64_t count = 1;
  for (std::size_t k = 0; k < d.rank; ++k) {
    if (__builtin_mul_overflow(count, d.shape[k], &count)) return std::nullopt;
  }
  return count;
}

std::optional<std::uint64_t> FixedSize(const Descriptor& d, unsigned bits) {
  const std::optional<std::uint64_t> count = ElementCount(d);
  if (!count) return std::nullopt;
  const unsigned __int128 size = (static_cast<unsigned __int128>(*count) * bits + 7) / 8;
  if (size > kU64Max) return std::nullopt;
  return static_cast<std::uint64_t>(size);
}

// Halves the largest dimension; false when there is none to halve.
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

// ---------------------------------------------------------------------------
// Deriving the dependent fields

// The fields a mutation set on purpose; Derive leaves them alone.
struct Pins {
  std::bitset<kHeaderFieldCount> header;
  std::size_t tensor = std::numeric_limits<std::size_t>::max();
  std::bitset<kDescFieldCount> fields;  // of descriptor `tensor`
  bool trailer = false;
  std::optional<std::pair<std::uint64_t, std::uint8_t>> padding_poke;  // (index, value)

  [[nodiscard]] bool Desc(std::size_t i, DescField f) const { return i == tensor && fields[f]; }
  [[nodiscard]] bool Shape(std::size_t i) const {
    if (i != tensor) return false;
    for (std::size_t k = 0; k < kiln::kMaxRank; ++k) {
      if (fields[kShape0 + k]) return true;
    }
    return fields[kRank];
  }
  void PinDesc(std::size_t i, DescField f) {
    tensor = i;
    fields.set(f);
  }
};

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

// Lays the block out again so that it passes every rule the mutation did not
// aim at (as far as the shapes allow). False when nothing fits in max_size.
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

// ---------------------------------------------------------------------------
// Mutations

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

void MakePlainScale(Descriptor& s, Rng& rng) {
  s.dtype = rng.Pick(kScaleDtypes);
  s.quant_scheme = 0;
  s.quant_axis = kiln::kNoAxis;
  s.group_size = 0;
  s.scale_index = kiln::kNoTensor;
  s.outer_index = kiln::kNoTensor;
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
  d.quant_scheme = 0;
  d.quant_axis = kiln::kNoAxis;
  d.group_size = 0;
  d.scale_index = kiln::kNoTensor;
  d.outer_index = kiln::kNoTensor;
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

std::size_t Emit(const Bytes& bytes, std::uint8_t* out, std::size_t max_size) {
  const std::size_t size = std::min(bytes.size(), max_size);
  if (size != 0) std::memcpy(out, bytes.data(), size);
  return size;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  kiln_fuzz::CheckInvariants(std::span<const std::uint8_t>(data, size));
  return 0;
}

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size,
                                               std::size_t max_size, unsigned int seed) {
  Rng rng(seed);
  std::optional<Block> block;
  if (!rng.OneIn(16)) block = Decode(std::span<const std::uint8_t>(data, size));
  if (!block) return LLVMFuzzerMutate(data, size, max_size);
  Pins pins;
  Mutate(*block, rng, pins, max_size);
  if (!rng.OneIn(8) && !Derive(*block, pins, max_size)) {
    return LLVMFuzzerMutate(data, size, max_size);
  }
  return Emit(Encode(*block), data, max_size);
}

extern "C" std::size_t LLVMFuzzerCustomCrossOver(const std::uint8_t* data1, std::size_t size1,
                                                 const std::uint8_t* data2, std::size_t size2,
                                                 std::uint8_t* out, std::size_t max_out_size,
                                                 unsigned int seed) {
  Rng rng(seed);
  std::optional<Block> a = Decode(std::span<const std::uint8_t>(data1, size1));
  const std::optional<Block> b = Decode(std::span<const std::uint8_t>(data2, size2));
  if (!a || !b || rng.OneIn(8)) {
    // Byte splice: a prefix of the first input, then a suffix of the second.
    const std::size_t cut1 = rng.Below(size1 + 1);
    const std::size_t cut2 = rng.Below(size2 + 1);
    Bytes bytes(data1, data1 + cut1);
    bytes.insert(bytes.end(), data2 + cut2, data2 + size2);
    return Emit(bytes, out, max_out_size);
  }
  // The first k descriptors of one block, then a run of the other's.
  a->d.resize(rng.Below(a->d.size() + 1));
  const std::size_t from = rng.Below(b->d.size() + 1);
  const std::size_t count = rng.Below(b->d.size() - from + 1);
  a->d.insert(a->d.end(), b->d.begin() + static_cast<std::ptrdiff_t>(from),
              b->d.begin() + static_cast<std::ptrdiff_t>(from + count));
  if (!Derive(*a, Pins{}, max_out_size)) return 0;
  return Emit(Encode(*a), out, max_out_size);
}
