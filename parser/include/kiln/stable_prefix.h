// How much of a mapped input a reader must see as one fixed snapshot: the
// bytes it checks and then reads again (see kiln/base/private_prefix.h).
#ifndef KILN_STABLE_PREFIX_H_
#define KILN_STABLE_PREFIX_H_

#include <cstddef>
#include <cstdint>
#include <span>

namespace kiln {

// Foreign inputs (NumPy, safetensors, GGUF) do not say up front where their
// metadata ends: their first 16 MiB are kept stable. That covers a NumPy
// header (10,000 bytes by default), the safetensors JSON header and the GGUF metadata
// and tensor-info region of real files (a large tokenizer vocabulary is a few
// MiB), and bounds the private copy: the memory tests hold `convert` of an
// 8 GiB sparse GGUF to 64 MiB of RSS. Past it, a reader must tolerate bytes
// that change (its checks bound every read by the mapping's size).
inline constexpr std::size_t kForeignStablePrefix = std::size_t{16} << 20;

// For a Kiln block whose header passes H1..H7 (default limits): its first
// payload_base bytes (header, descriptors, name heap), at most bytes.size().
// For anything else: min(bytes.size(), kForeignStablePrefix). Reads only the
// first 64 bytes, which must already be stable.
[[nodiscard]] std::size_t StablePrefixLength(std::span<const std::uint8_t> bytes);

}  // namespace kiln

#endif  // KILN_STABLE_PREFIX_H_
