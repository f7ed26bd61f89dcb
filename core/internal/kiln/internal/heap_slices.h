// Rules N3 and N4 from the heap slices as the descriptor pass meets them.
//
// The heap holds the tensor names in descriptor order, then the layout
// names in descriptor order. A pass over the descriptors meets the two
// sequences interleaved (tensor i's name, then its layout name), so
// HeapSlices follows each as a chain of its own and joins them at the end:
// the layout chain must start where the name chain ends. Its verdicts are
// what a walk of the heap in order would find, slice by slice: the same
// rule, offset, tensor and message. The tests' walks
// (tests/support/rule_walks.h) feed the slices in heap order; Parse feeds them as it
// decodes each descriptor, so neither rule reads a descriptor again.
#ifndef KILN_INTERNAL_HEAP_SLICES_H_
#define KILN_INTERNAL_HEAP_SLICES_H_

#include <cstdint>
#include <optional>

#include "kiln/block.h"
#include "kiln/dtype.h"
#include "kiln/internal/fail.h"
#include "kiln/internal/layout.h"
#include "kiln/internal/primitives.h"
#include "kiln/status.h"

namespace kiln::internal {

// One slice of the heap, as a descriptor claims it.
struct Slice {
  std::uint32_t tensor = 0;
  std::uint16_t off = 0;
  std::uint16_t len = 0;
  bool layout = false;  // a layout name (else a tensor name)

  [[nodiscard]] std::uint64_t end() const { return std::uint64_t{off} + len; }
};

class HeapSlices {
 public:
  // check_utf8: test each slice for N4 (a heap that is all ASCII need not be).
  HeapSlices(Bytes block, const HeaderInfo& h, bool check_utf8)
      : block_(block), h_(h), check_utf8_(check_utf8) {}

  // The next slice of its kind, in descriptor order.
  void Add(const Slice& s) {
    Chain& c = s.layout ? layouts_ : names_;
    if (!c.first) {
      c.first = s;
      if (s.layout) c.cursor = s.off;  // where it should start is known at the end
    }
    if (!c.broken) {
      if (s.off != c.cursor || s.end() > h_.name_bytes) {
        c.broken = s;
        c.broken_cursor = c.cursor;
      } else {
        c.cursor = s.end();
      }
    }
    // Only while the chain holds: its slices are then disjoint and inside
    // the heap, so no byte is checked twice however the descriptors overlap
    // their slices (and once it breaks, N3 fails before N4 matters).
    if (check_utf8_ && !c.bad_utf8 && !c.broken) CheckUtf8(c, s);
  }

  // Every tensor name so far starts where the previous one ended, the first
  // at 0, and none ends past name_bytes: the names are distinct slices of
  // the heap, in order.
  [[nodiscard]] bool names_follow_on() const { return !names_.broken; }

  // N3: each slice starts where the previous one ended, the first at 0, none
  // ends past name_bytes, and the last ends at name_bytes.
  [[nodiscard]] Check OrderVerdict() const;
  // N4: every slice is well-formed UTF-8. Precondition: N3 held, and
  // check_utf8 was set.
  [[nodiscard]] Check Utf8Verdict() const;

 private:
  struct Chain {
    std::uint64_t cursor = 0;         // where the next slice must start
    std::optional<Slice> first;       // the chain's first slice
    std::optional<Slice> broken;      // the first slice that does not follow on
    std::uint64_t broken_cursor = 0;  // where it should have started
    std::optional<Slice> bad_utf8;    // the first slice that is not UTF-8
    std::size_t bad_at = 0;           // its first bad byte
  };

  void CheckUtf8(Chain& c, const Slice& s);
  [[nodiscard]] Error OrderError(const Slice& s, std::uint64_t cursor) const;

  Bytes block_;
  const HeaderInfo& h_;
  bool check_utf8_;
  Chain names_;
  Chain layouts_;
};

}  // namespace kiln::internal

#endif  // KILN_INTERNAL_HEAP_SLICES_H_
