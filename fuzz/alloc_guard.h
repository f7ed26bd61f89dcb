// Memory budgets of the fuzz targets, on the shared heap counter
// (tests/support/alloc_counter.h, linked into every fuzz target; it replaces
// operator new). A target aborts, which the engine reports as a crash, when
// the code under test asks for more heap bytes than its input's size plus a
// fixed budget while it runs on one input (docs/fuzzing.md, "Memory").
#ifndef KILN_FUZZ_ALLOC_GUARD_H_
#define KILN_FUZZ_ALLOC_GUARD_H_

#include <cstddef>
#include <cstdlib>

#include "support/alloc_counter.h"

namespace kiln_fuzz {

// kiln::Parse: its scratch (rules N5 and P1) is at most 16 bytes per 128-byte
// descriptor, so at most an eighth of the input; the rest is the error
// message (a few hundred bytes).
inline constexpr std::size_t kParseBudget = 4096;

// The format readers (ReadNpy, ReadSafetensors, ReadGguf): 64 KiB. What the
// seed corpus needs, measured with the counter: a .npy at most 263 bytes
// (the header dict and its error message), plain.safetensors 5,795 and
// metadata.safetensors 7,474, model.gguf 2,061 (names, shapes, metadata
// keys). 64 KiB is about ten times the largest; readers whose memory grows
// with the number of entries exceed it on larger inputs (docs/fuzzing.md).
inline constexpr std::size_t kReaderBudget = 64 * 1024;

// ReadSafetensors keeps a structure per tensor, so it may also ask for this
// many bytes per input byte (docs/fuzzing.md, "Memory"): a tensor costs at
// most about 290 bytes (104 for its SafetensorsTensor in the parse deque,
// 104 in the result vector, 4 for the repeat check, up to 64 for 8
// dimensions, up to 64 for a name that must be decoded), and its entry is at
// least 21 bytes of header ("a":["U8",[],[0,0]],), so 14 per byte; 16 leaves
// room for the containers' block rounding.
inline constexpr std::size_t kSafetensorsBytesPerInputByte = 16;

// Runs fn() and aborts when it asked for more than input_size + budget heap
// bytes (on this thread); returns what fn() returned.
template <typename Fn>
auto WithinBudget(std::size_t input_size, std::size_t budget, Fn&& fn) {
  const kiln::alloc::Scope scope;
  auto result = fn();
  const std::size_t asked = scope.Read().bytes;
  if (asked > budget && asked - budget > input_size) std::abort();
  return result;
}

}  // namespace kiln_fuzz

#endif  // KILN_FUZZ_ALLOC_GUARD_H_
