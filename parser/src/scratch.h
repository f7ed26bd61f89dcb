// The parser's only heap memory: one u32 per tensor, taken from the caller's
// scratch when it is large enough, else allocated once, on first use. The
// size is tensor_count, which rule H8 has already checked against the bytes
// present (each tensor has a 128-byte descriptor in the buffer).
#ifndef KILN_SRC_SCRATCH_H_
#define KILN_SRC_SCRATCH_H_

#include <cstdint>
#include <memory>
#include <span>

namespace kiln::internal {

class Scratch {
 public:
  Scratch(std::span<std::uint32_t> caller, std::uint32_t words) : caller_(caller), words_(words) {}

  // tensor_count words.
  [[nodiscard]] std::span<std::uint32_t> Get() {
    if (caller_.size() >= words_) return caller_.first(words_);
    if (!owned_) owned_ = std::make_unique_for_overwrite<std::uint32_t[]>(words_);
    return {owned_.get(), words_};
  }

 private:
  std::span<std::uint32_t> caller_;
  std::uint32_t words_;
  std::unique_ptr<std::uint32_t[]> owned_;
};

}  // namespace kiln::internal

#endif  // KILN_SRC_SCRATCH_H_
