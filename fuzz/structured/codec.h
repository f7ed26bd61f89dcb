// The block codec of the structure-aware fuzz target (fuzz_structured.cc):
// a Kiln v2 block decoded into its fields (header, every descriptor field,
// each tensor's name, layout name and payload bytes, and the raw heap,
// padding, payload region and trailing bytes) and encoded back. For any
// input Decode accepts, Encode(*Decode(x)) == x, byte for byte
// (tests/fuzz/structured_codec_test.cc proves it on every golden case).
//
// Written from docs/spec.md independently of parser/ (its own field tables
// and dtype table); it needs no fuzzing engine.
#ifndef KILN_FUZZ_STRUCTURED_CODEC_H_
#define KILN_FUZZ_STRUCTURED_CODEC_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "kiln/kiln.h"

namespace kiln_fuzz::structured {

using Bytes = std::vector<std::uint8_t>;

inline constexpr std::uint64_t kU64Max = std::numeric_limits<std::uint64_t>::max();
inline constexpr std::uint32_t kMagicLe = 0x544E4C4B;  // "KLNT"
inline constexpr std::uint8_t kVersion = 2;
inline constexpr std::uint16_t kOpaque = 0x8000;
inline constexpr std::uint64_t kAlign = kiln::kPayloadAlignment;

// The dtype table of docs/spec.md 2.4, kept here independently of the parser.
struct DtypeEntry {
  std::uint16_t code;
  std::uint8_t bits;
  bool scale;
};
inline constexpr DtypeEntry kDtypes[] = {
    {1, 32, true},   {2, 8, false},   {3, 8, false},   {4, 16, false},   {5, 16, false},
    {6, 32, false},  {7, 64, false},  {9, 8, false},   {10, 16, true},   {11, 64, true},
    {12, 32, false}, {13, 64, false}, {14, 64, false}, {15, 128, false}, {16, 16, true},
    {17, 8, true},   {18, 8, false},  {19, 8, false},  {20, 8, false},   {21, 4, false},
    {22, 4, false},  {23, 4, false},  {24, 8, true},
};
inline constexpr std::uint16_t kScaleDtypes[] = {1, 10, 11, 16, 17, 24};

// Bits per element of a fixed-width dtype; 0 for the opaque dtype and for
// codes not in the table.
unsigned FixedBits(std::uint16_t code);

// Saturating arithmetic: the fuzz build traps on any unsigned wrap.
inline std::uint64_t AddSat(std::uint64_t a, std::uint64_t b) {
  return a > kU64Max - b ? kU64Max : a + b;
}
inline std::uint64_t SubSat(std::uint64_t a, std::uint64_t b) { return a < b ? 0 : a - b; }
inline std::optional<std::uint64_t> AlignUp(std::uint64_t x) {
  if (x > kU64Max - (kAlign - 1)) return std::nullopt;
  return (x + (kAlign - 1)) & ~(kAlign - 1);
}

// The bytes [off, off + len) of v that exist.
Bytes Slice(const Bytes& v, std::uint64_t off, std::uint64_t len);

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

extern const FieldInfo<Header> kHeaderFields[kHeaderFieldCount];

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

extern const FieldInfo<Descriptor> kDescFields[kDescFieldCount];

// One header or descriptor from / to its 64 or 128 stored bytes.
void DecodeHeader(const std::uint8_t* p, Header& h);
void EncodeHeader(const Header& h, std::uint8_t* p);
void DecodeDescriptor(const std::uint8_t* p, Descriptor& d);
void EncodeDescriptor(const Descriptor& d, std::uint8_t* p);

// Splits `in` into the regions its header describes; nullopt when it is
// shorter than a header or claims more descriptors than it holds.
std::optional<Block> Decode(std::span<const std::uint8_t> in);
// The bytes of `b`, region after region as they are stored.
Bytes Encode(const Block& b);

}  // namespace kiln_fuzz::structured

#endif  // KILN_FUZZ_STRUCTURED_CODEC_H_
