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
//
// The pieces: structured/codec.{h,cc} (decode, encode), structured/derive.{h,cc}
// (the dependent fields), structured/mutate.{h,cc} (the mutations); this file
// holds the entry points.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>

#include "invariants.h"
#include "structured/codec.h"
#include "structured/derive.h"
#include "structured/mutate.h"

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size);

namespace {

using kiln_fuzz::structured::Block;
using kiln_fuzz::structured::Bytes;
using kiln_fuzz::structured::Decode;
using kiln_fuzz::structured::Derive;
using kiln_fuzz::structured::Encode;
using kiln_fuzz::structured::Mutate;
using kiln_fuzz::structured::Pins;
using kiln_fuzz::structured::Rng;

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
