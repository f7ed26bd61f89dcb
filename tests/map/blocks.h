// Blocks and maps for the block map's tests (block_map_test.cc,
// block_map_edges_test.cc, block_map_svg_test.cc).
#ifndef KILN_TESTS_MAP_BLOCKS_H_
#define KILN_TESTS_MAP_BLOCKS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "kiln/block_map.h"
#include "kiln/directory.h"
#include "support/block_builder.h"

namespace kiln::testing {

// An f32 vector of `n` elements named `name` (empty: unnamed).
inline TensorSpec Vec(std::uint64_t n, std::string name,
                      std::optional<std::uint64_t> byte_offset = std::nullopt) {
  TensorSpec t;
  t.shape = {n};
  t.name = std::move(name);
  t.byte_offset = byte_offset;
  return t;
}

// "t0", "t1", ...: built in two steps, as "t" + to_string(i) trips GCC
// 12's false -Wrestrict once inlined.
inline std::string NameT(std::uint32_t i) {
  std::string name = "t";
  name += std::to_string(i);
  return name;
}

// The map of a block: of its Directory when valid, of its bytes and the
// verdict when not.
inline map::BlockMap MapOf(const Buffer& b) {
  const Result<Directory> r = Parse(b);
  if (r.ok()) return map::Describe(r.value(), b.size());
  return map::Describe(b, b.size(), &r.error());
}

}  // namespace kiln::testing

#endif  // KILN_TESTS_MAP_BLOCKS_H_
