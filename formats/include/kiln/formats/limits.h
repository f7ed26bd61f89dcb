// Caller limits for the format readers (GGUF, safetensors, .npy). A file past
// a limit is refused as soon as the limit is crossed, before the rest is read.
#ifndef KILN_FORMATS_LIMITS_H_
#define KILN_FORMATS_LIMITS_H_

#include <cstdint>

namespace kiln::formats {

// The most tensors a Kiln block can hold when they are named (every
// safetensors and GGUF tensor is): a name is at least one byte and must
// start at a u16 heap offset below 0xFFFF (docs/spec.md, "Heap size").
inline constexpr std::uint64_t kMaxNamedKilnTensors = 0xFFFF;
// The most name bytes such a heap can address: the last name starts at
// offset 0xFFFE at the latest and is at most 0xFFFF bytes long.
inline constexpr std::uint64_t kMaxKilnNameBytes = 0xFFFE + 0xFFFF;

struct ReaderLimits {
  // Tensors in one file. Default: the Kiln maximum above; a file with more
  // cannot become a Kiln block, so reading it to the end is wasted work. The
  // readers also stop when the names alone exceed kMaxKilnNameBytes.
  std::uint64_t max_tensors = kMaxNamedKilnTensors;
  // GGUF key/value pairs, or safetensors __metadata__ entries. Default
  // 65,536: real files have tens to a few hundred (a GGUF vocabulary is one
  // array value), and Kiln has no place for metadata anyway. While checking
  // keys for repeats a reader keeps 4 bytes per entry (the safetensors reader
  // 12 more, and the decoded key, for a key written with escapes).
  std::uint64_t max_metadata_entries = 65'536;
  // Bytes before the data: the safetensors JSON header, or a GGUF file's
  // header, metadata and tensor infos. Default 100,000,000, the safetensors
  // reference's own header limit; GGUF headers of real models (vocabulary
  // included) are a few MB. Values above 2^32-1 act as 2^32-1, which keeps
  // the readers' per-entry bookkeeping at 4 bytes.
  std::uint64_t max_header_bytes = 100'000'000;
  // The longest .npy header (the dict with its padding, after the length
  // field). Default 10,000 bytes: NumPy's own max_header_size, past which
  // numpy.load refuses a file unless told to trust it (allow_pickle=True);
  // a larger value reads files numpy.load refuses.
  std::uint64_t max_npy_header_bytes = 10'000;
};

}  // namespace kiln::formats

#endif  // KILN_FORMATS_LIMITS_H_
