// The synthetic model the benchmarks share: N tensors with realistic names,
// f16/bf16/f32 dtypes and small shapes, encoded as a Kiln v2 block and as a
// safetensors header describing the same tensors.
#ifndef KILN_BENCH_SYNTHETIC_H_
#define KILN_BENCH_SYNTHETIC_H_

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::bench {

struct SynthTensor {
  std::string name;     // e.g. model.layers.17.self_attn.q_proj.weight
  std::uint16_t dtype;  // Kiln code: 10 f16, 16 bf16, 1 f32
  std::vector<std::uint64_t> shape;
  std::uint64_t bytes;  // element count * dtype size
};

// N tensors, deterministic.
[[nodiscard]] std::vector<SynthTensor> MakeTensors(std::size_t n);

// The same tensors renamed "t" + the index in base 36 (at most 5 bytes), so
// that 10,000 names fit a Kiln heap.
[[nodiscard]] std::vector<SynthTensor> WithShortNames(std::vector<SynthTensor> tensors);

// Whether a Kiln block can carry these names: heap slices start at a u16
// offset below 0xFFFF, so only about 64 KiB of names fit.
[[nodiscard]] bool NamesFit(const std::vector<SynthTensor>& tensors);

// A valid canonical Kiln v2 block (payloads in order, 64-byte aligned,
// zero gaps). Named when `named`, else every tensor unnamed.
[[nodiscard]] std::vector<std::uint8_t> KilnBlock(const std::vector<SynthTensor>& tensors,
                                                  bool named);

// The JSON header of a safetensors file holding the same tensors
// (contiguous data_offsets, no alignment).
[[nodiscard]] std::string SafetensorsHeader(const std::vector<SynthTensor>& tensors);

}  // namespace kiln::bench

#endif  // KILN_BENCH_SYNTHETIC_H_
