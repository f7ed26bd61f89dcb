// The rule-by-rule walks the tests compare the one-pass parse against: each
// checks its rules on its own, reading the block again (Parse checks them
// as it decodes each descriptor). Test code only.
#ifndef KILN_TESTS_SUPPORT_RULE_WALKS_H_
#define KILN_TESTS_SUPPORT_RULE_WALKS_H_

#include "kiln/directory.h"
#include "kiln/internal/rules.h"

namespace kiln::internal {

// H8, H9 and L1, once the header is known.
[[nodiscard]] Check CheckFraming(Bytes buffer, const HeaderInfo& h, Mode mode);
// N3: the heap is exactly the slices, in heap order.
[[nodiscard]] Check CheckHeapOrder(Bytes block, const HeaderInfo& h);
// N4: every slice is well-formed UTF-8. Precondition: N3 held.
[[nodiscard]] Check CheckHeapUtf8(Bytes block, const HeaderInfo& h);
// Q5..Q7 for every quantised tensor, in descriptor order (CheckQuantRefs
// on each).
[[nodiscard]] Check CheckScales(Bytes block, const HeaderInfo& h);

}  // namespace kiln::internal

#endif  // KILN_TESTS_SUPPORT_RULE_WALKS_H_
