// Invariants every fuzz target checks on every input, whatever its bytes:
//
// - the verdict is deterministic (parsing twice gives the same result);
// - a failed parse reports an error whose class is RuleClass(rule), whose
//   offset lies within the buffer and whose message is not empty;
// - a valid directory's block fits in the buffer (exactly, in whole-buffer
//   mode), each tensor's payload view has byte_length bytes inside the buffer,
//   and every name and layout name is well-formed UTF-8;
// - the two modes differ only in rule H8 (docs/spec.md, section 5): a block
//   valid in whole-buffer mode is valid in prefix mode with the same
//   block_length, and any failure other than H8 is the same in both modes.
//
// - a parse allocates at most its input's size plus kParseBudget, 4 KiB
//   (alloc_guard.h).
//
// A broken invariant aborts, which every fuzzing engine reports as a crash.
#ifndef KILN_FUZZ_INVARIANTS_H_
#define KILN_FUZZ_INVARIANTS_H_

#include <cstdint>
#include <cstdlib>
#include <span>

#include "alloc_guard.h"
#include "kiln/kiln.h"

namespace kiln_fuzz {
namespace internal {

inline void Require(bool ok) {
  if (!ok) std::abort();
}

// Reads every accessor of a valid directory, so that a view pointing outside
// the buffer is caught by ASan even when the explicit bounds check is wrong.
inline void TouchDirectory(const kiln::Directory& d, std::span<const std::uint8_t> in) {
  const std::uint8_t* lo = in.data();
  const std::uint8_t* hi = in.data() + in.size();
  volatile std::uint64_t sink = 0;
  for (std::uint32_t i = 0; i < d.tensor_count(); ++i) {
    const kiln::Tensor t = d.tensor(i);
    Require(t.payload.size() == t.byte_length);
    if (!t.payload.empty()) {
      Require(t.payload.data() >= lo && t.payload.data() + t.payload.size() <= hi);
      sink = sink ^ t.payload.front() ^ t.payload.back();
    }
    for (char c : t.name) sink = sink ^ static_cast<unsigned char>(c);
    for (char c : t.layout) sink = sink ^ static_cast<unsigned char>(c);
    Require(kiln::IsWellFormedUtf8(t.name) && kiln::IsWellFormedUtf8(t.layout));
    // XOR, not +: a sum of attacker-chosen u64 values may wrap, which the
    // fuzz build's -fsanitize=unsigned-integer-overflow would report.
    sink = sink ^ t.element_count ^ t.rank ^ t.block_size;
  }
}

// Parses `in` twice in one mode and checks the result; returns the first.
inline kiln::Result<kiln::Directory> CheckMode(std::span<const std::uint8_t> in, kiln::Mode mode) {
  kiln::ParseOptions options;
  options.mode = mode;
  kiln::Result<kiln::Directory> r =
      WithinBudget(in.size(), kParseBudget, [&] { return kiln::Parse(in, options); });
  const kiln::Result<kiln::Directory> again = kiln::Parse(in, options);
  Require(r.ok() == again.ok());
  if (r.ok()) {
    Require(r.value().block_length() <= in.size());
    Require(mode == kiln::Mode::kPrefix || r.value().block_length() == in.size());
    Require(r.value().block_length() == again.value().block_length());
    TouchDirectory(r.value(), in);
    return r;
  }
  const kiln::Error& e = r.error();
  Require(e.rule == again.error().rule && e.offset == again.error().offset);
  Require(e.error_class == kiln::RuleClass(e.rule));
  Require(e.offset <= in.size());
  Require(!e.message.empty());
  return r;
}

}  // namespace internal

// Runs the invariants above on `in` in whole-buffer and in prefix mode.
inline void CheckInvariants(std::span<const std::uint8_t> in) {
  const kiln::Result<kiln::Directory> whole = internal::CheckMode(in, kiln::Mode::kWhole);
  const kiln::Result<kiln::Directory> prefix = internal::CheckMode(in, kiln::Mode::kPrefix);
  if (whole.ok()) {
    internal::Require(prefix.ok() && prefix.value().block_length() == whole.value().block_length());
  } else if (whole.error().rule != kiln::Rule::H8) {
    internal::Require(!prefix.ok() && prefix.error().rule == whole.error().rule &&
                      prefix.error().offset == whole.error().offset);
  }
}

}  // namespace kiln_fuzz

#endif  // KILN_FUZZ_INVARIANTS_H_
