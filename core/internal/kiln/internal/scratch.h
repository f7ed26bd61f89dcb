// The parser's only heap memory: scratch words taken from the caller's span
// when it is large enough, else allocated on first use. Every request is
// sized by tensor_count (at most ScratchWords(tensor_count) words), which
// rule H8 has already checked against the bytes present (each tensor has a
// 128-byte descriptor in the buffer). The checks run in an order where the
// largest request comes first, so a parse allocates at most once.
#ifndef KILN_INTERNAL_SCRATCH_H_
#define KILN_INTERNAL_SCRATCH_H_

#include <cstdint>
#include <memory>
#include <span>

namespace kiln::internal {

class Scratch {
 public:
  explicit Scratch(std::span<std::uint32_t> caller) : caller_(caller) {}

  // At least `words` words; their contents are unspecified.
  [[nodiscard]] std::span<std::uint32_t> Get(std::size_t words) {
    if (caller_.size() >= words) return caller_.first(words);
    if (owned_size_ < words) {
      owned_ = std::make_unique_for_overwrite<std::uint32_t[]>(words);
      owned_size_ = words;
    }
    return {owned_.get(), words};
  }

 private:
  std::span<std::uint32_t> caller_;
  std::unique_ptr<std::uint32_t[]> owned_;
  std::size_t owned_size_ = 0;
};

}  // namespace kiln::internal

#endif  // KILN_INTERNAL_SCRATCH_H_
