// Crafted tensor names that collide in N5's hash table (internal::HashName
// is not keyed: anyone can search for names that hash alike), as an attacker
// would make them to drive the table past its probe budget. Parse must then
// decide N5 by its sorting fallback: same verdict, same one allocation.
#ifndef KILN_TESTS_SUPPORT_COLLIDING_NAMES_H_
#define KILN_TESTS_SUPPORT_COLLIDING_NAMES_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/block.h"
#include "kiln/internal/name_table.h"
#include "support/block_builder.h"

namespace kiln::testing {

// `count` distinct names ("c" and a number) whose probes all start at the
// table's first group, in the table of a block of `tensor_count` tensors.
inline std::vector<std::string> CollidingNames(std::size_t count, std::uint32_t tensor_count) {
  const std::size_t start_mask =
      (ScratchWords(tensor_count) - 1) & ~(internal::NameTable::kGroup - 1);
  std::vector<std::string> out;
  std::vector<std::uint8_t> at16;  // HashName reads a name at offset 16 or later
  for (std::uint64_t k = 0; out.size() < count; ++k) {
    std::string name = "c";
    name += std::to_string(k);
    at16.assign(16, 0);
    at16.insert(at16.end(), name.begin(), name.end());
    if ((internal::HashName(at16, 16, name.size()) & start_mask) == 0) out.push_back(name);
  }
  return out;
}

// A block of `count` tensors (TensorSpec's defaults) named by
// CollidingNames(count, count): distinct names, every probe in one group.
inline BlockSpec CollidingNamesSpec(std::uint32_t count) {
  BlockSpec spec;
  for (const std::string& name : CollidingNames(count, count)) {
    TensorSpec t;
    t.name = name;
    spec.tensors.push_back(t);
  }
  return spec;
}

}  // namespace kiln::testing

#endif  // KILN_TESTS_SUPPORT_COLLIDING_NAMES_H_
