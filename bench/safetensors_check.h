// Two safetensors header checkers, as the reference reader validates a
// header: parse the JSON, map dtype names, compute each tensor's byte size
// from its shape with overflow checks, sort by data_offsets, require the
// ranges to be contiguous from 0 and the sizes to match, and the total to
// equal the data length. Used only by the benchmarks, as the baseline.
#ifndef KILN_BENCH_SAFETENSORS_CHECK_H_
#define KILN_BENCH_SAFETENSORS_CHECK_H_

#include <cstdint>
#include <string>

namespace simdjson {
struct padded_string;
}

namespace kiln::bench {

// With simdjson's On-Demand API: the best case (no DOM, names as views).
// Returns the number of tensors, or -1 when the header is invalid.
[[nodiscard]] long CheckSafetensorsSimdjson(const simdjson::padded_string& header,
                                            std::uint64_t data_length);

// With nlohmann::json, into a std::map<std::string, TensorInfo> with a
// std::vector shape: the data structures of the reference reader.
[[nodiscard]] long CheckSafetensorsNlohmann(const std::string& header, std::uint64_t data_length);

}  // namespace kiln::bench

#endif  // KILN_BENCH_SAFETENSORS_CHECK_H_
