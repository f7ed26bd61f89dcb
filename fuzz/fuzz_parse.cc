// libFuzzer target: raw bytes into the parser, in whole-buffer and prefix
// mode, touching every accessor of a valid result. The invariants a hostile
// input must never break (a deterministic verdict, an error offset within the
// buffer, the class being the rule's class, a valid directory's views inside
// the buffer, well-formed names) live in invariants.h, shared with the other
// targets.
#include <cstddef>
#include <cstdint>
#include <span>

#include "invariants.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  kiln_fuzz::CheckInvariants(std::span<const std::uint8_t>(data, size));
  return 0;
}
