// Deriving a decoded block's dependent fields (fuzz_structured.cc): after a
// mutation, the counts, the heap, the padding, the payload placement and the
// byte lengths are laid out again so the block reaches the deep rules, except
// for the fields the mutation pinned. Needs no fuzzing engine.
#ifndef KILN_FUZZ_STRUCTURED_DERIVE_H_
#define KILN_FUZZ_STRUCTURED_DERIVE_H_

#include <bitset>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>

#include "codec.h"

namespace kiln_fuzz::structured {

inline constexpr std::uint8_t kPayloadFill = 0xA5;  // bytes of a tensor the input did not hold

// Element counts and sizes (rules D5, D6), exact. nullopt when they
// overflow (or the rank is past 8).
std::optional<std::uint64_t> ElementCount(const Descriptor& d);
std::optional<std::uint64_t> FixedSize(const Descriptor& d, unsigned bits);
// Halves the largest dimension; false when there is none to halve.
bool HalveLargestDim(Descriptor& d);

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

// Lays the block out again so that it passes every rule the mutation did not
// aim at (as far as the shapes allow). False when nothing fits in max_size.
bool Derive(Block& b, const Pins& pins, std::size_t max_size);

}  // namespace kiln_fuzz::structured

#endif  // KILN_FUZZ_STRUCTURED_DERIVE_H_
