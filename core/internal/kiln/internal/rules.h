// The checks, grouped as the rule set groups them. Each returns the first
// rule of its group that fails (in checking order), or nullopt.
#ifndef KILN_INTERNAL_RULES_H_
#define KILN_INTERNAL_RULES_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "kiln/base/function_ref.h"
#include "kiln/block.h"
#include "kiln/dtype.h"
#include "kiln/internal/fail.h"
#include "kiln/internal/layout.h"
#include "kiln/internal/primitives.h"
#include "kiln/internal/scratch.h"
#include "kiln/status.h"

namespace kiln::internal {

// H1..H7 on the start of the buffer.
[[nodiscard]] Result<HeaderInfo> CheckHeader(Bytes buffer, const Limits& limits);
// H8 alone, for `size` bytes present (a stream that ended after `size`).
[[nodiscard]] Check CheckLength(std::uint64_t size, const HeaderInfo& h, Mode mode);
// H8 for a stream in whole mode that goes on past block_length (how many
// bytes follow is not known).
[[nodiscard]] Error StreamGoesOnError(const HeaderInfo& h);
// H9 alone: decided by the header.
[[nodiscard]] Check CheckNameFlag(const HeaderInfo& h);
// L1 alone. Precondition: `block` holds at least payload_base bytes.
[[nodiscard]] Check CheckPadding(Bytes block, const HeaderInfo& h);
// D1..D10, N1, N2, O1..O3, Q1..Q4 for descriptor i, on its decoded fields:
// the one check of a descriptor on its own, run by Parse on each descriptor
// it decodes and by the writer on each request it accepts.
[[nodiscard]] Check CheckFields(const RawDescriptor& d, std::uint32_t i, const HeaderInfo& h);
// Descriptor j of the directory being checked (decoded from the buffer, or
// the writer's own record).
using DescriptorLookup = base::FunctionRef<RawDescriptor(std::uint32_t)>;
// Q5..Q7 for descriptor i of `count` (nothing when its scheme is 0). Reads
// the scale and outer tensors through `descriptor`, each once.
[[nodiscard]] Check CheckQuantRefs(const RawDescriptor& d, std::uint32_t i, std::uint32_t count,
                                   DescriptorLookup descriptor);
// N5: tensor names are unique. Precondition: N3 held. probe_budget bounds
// the hash table's probes before it falls back to sorting (tests pass 0 to
// exercise the fallback); nullopt: 8 per tensor plus 1024.
[[nodiscard]] Check CheckUniqueNames(Bytes block, const HeaderInfo& h, Scratch& scratch,
                                     std::optional<std::uint64_t> probe_budget = std::nullopt);
// Receives the payload ranges no tensor covers, [from, to) relative to
// payload_base, in offset order: what rule P2 checks.
class GapVisitor {
 public:
  virtual ~GapVisitor() = default;
  // The first failure stops the walk.
  [[nodiscard]] virtual Check Gap(std::uint64_t from, std::uint64_t to) = 0;
};

// Receives the payload region in offset order: each tensor's nonzero range
// [begin, end) and each gap, relative to payload_base.
class PayloadVisitor : public GapVisitor {
 public:
  virtual void Range(std::uint32_t i, std::uint64_t begin, std::uint64_t end) = 0;
};

// P1, P2 over the payload region, sorting the ranges by offset.
[[nodiscard]] Check CheckPayloads(Bytes block, const HeaderInfo& h, Scratch& scratch);
// P1, then every gap to `gaps` (P2 is the visitor's to check). Needs only
// the descriptors: `block` may end at payload_base.
[[nodiscard]] Check CheckPayloads(Bytes block, const HeaderInfo& h, Scratch& scratch,
                                  GapVisitor& gaps);
// P1, then the walk CheckPayloads makes for P2, ranges included: every
// tensor's range and every gap to `visitor`, in offset order; returns the P1
// rejection, or what visitor.Gap returned. Precondition: D8 and D9 held for
// every descriptor (each range lies inside payload_bytes); `block` holds
// the descriptors.
[[nodiscard]] Check WalkPayloads(Bytes block, const HeaderInfo& h, Scratch& scratch,
                                 PayloadVisitor& visitor);
// The P2 rejection for payload byte `pos` (relative to payload_base).
[[nodiscard]] Error GapByteError(const HeaderInfo& h, std::uint64_t pos, std::uint8_t value);
// P2 on `seen`, uncovered payload bytes that start at payload offset `pos`:
// the rejection for the first nonzero one. The one test of a gap's bytes,
// shared by Parse (the whole block), the stream validator (bytes as they
// arrive) and the range validator (bytes as they are read).
[[nodiscard]] Check CheckGapBytes(const HeaderInfo& h, std::uint64_t pos, Bytes seen);
// Every rule after H8, in order: H9, L1, D1..Q4 per descriptor, N3..N5,
// Q5..Q7, P1 and P2. With `gaps` null, `block` is the whole block and P2 is
// checked on it; otherwise `block` may end at payload_base (the payloads
// need not be present) and P2 is left to `gaps` (CheckPayloads above).
[[nodiscard]] Check CheckBlock(Bytes block, const HeaderInfo& h, Scratch& scratch,
                               GapVisitor* gaps);
// What a verdict says of the block: the checks that run before its rule
// (docs/spec.md, section 4) held.
enum class Held : std::uint8_t {
  kNothing,      // H1..H7: the header is not known
  kHeader,       // H8, H9, L1, D1..Q4, N3, N4: H1..H7 held
  kDescriptors,  // N5, Q5..Q7, P1, P2: every descriptor rule, N3 and N4 held
};
[[nodiscard]] Held HeldBefore(Rule r);
// P1 for tensor i, whose range overlaps that of tensor prev.
[[nodiscard]] Error OverlapError(Bytes block, std::uint32_t i, std::uint32_t prev);
// P2 over the payload bytes [from, to), offsets from the payload region.
[[nodiscard]] Check CheckGapZero(Bytes block, const HeaderInfo& h, std::uint64_t from,
                                 std::uint64_t to);

// ceil(count * bits / 8), or nullopt when it exceeds 2^64-1.
[[nodiscard]] std::optional<std::uint64_t> ByteSize(std::uint64_t count, std::uint32_t bits);

// "[2, 3, 4]"
[[nodiscard]] std::string FormatShape(const RawDescriptor& d);

}  // namespace kiln::internal

#endif  // KILN_INTERNAL_RULES_H_
