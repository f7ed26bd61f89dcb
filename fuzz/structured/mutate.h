// The mutations of the structure-aware fuzz target (fuzz_structured.cc): ONE
// change to a decoded block per call, chosen from the seed, pinning the
// fields it set on purpose so Derive keeps them.
#ifndef KILN_FUZZ_STRUCTURED_MUTATE_H_
#define KILN_FUZZ_STRUCTURED_MUTATE_H_

#include <cstddef>
#include <cstdint>
#include <random>

#include "codec.h"
#include "derive.h"

namespace kiln_fuzz::structured {

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

// Applies one mutation to `b`, recording in `pins` the fields it set. Some
// mutations hand a region to LLVMFuzzerMutate (the engine's byte mutator).
void Mutate(Block& b, Rng& rng, Pins& pins, std::size_t max_size);

}  // namespace kiln_fuzz::structured

#endif  // KILN_FUZZ_STRUCTURED_MUTATE_H_
