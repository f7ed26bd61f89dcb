// Makes the start of a file mapping this process's own copy, so that other
// processes writing the file can no longer change the bytes a parser checks
// and then reads again (a double fetch).
//
// Linux shows writes of other processes through a MAP_PRIVATE mapping until
// this process writes the page itself: only then does the kernel give it a
// private copy (copy-on-write). PrivatizePrefix writes each page of the prefix
// once, with an atomic add of zero (the instruction is redone on the private
// copy, so no byte changes), then makes the whole mapping read-only again.
#ifndef KILN_BASE_PRIVATE_PREFIX_H_
#define KILN_BASE_PRIVATE_PREFIX_H_

#include <cstddef>
#include <cstdint>
#include <span>

namespace kiln::base {

// How many leading bytes to privatize, given the bytes of the mapping whose
// first page is already private (so the length read from it is stable). The
// result is clamped to the mapping's size.
using PrefixLength = std::size_t (*)(std::span<const std::uint8_t> bytes);

// `map` is a MAP_PRIVATE mapping of `size` bytes made with PROT_READ |
// PROT_WRITE. Privatizes the first page, then [0, length_of(bytes)), then
// mprotects the mapping to PROT_READ. Memory cost: at most the privatized
// prefix (rounded up to pages). Returns 0 or an errno value (mprotect).
[[nodiscard]] int PrivatizePrefix(void* map, std::size_t size, PrefixLength length_of);

}  // namespace kiln::base

#endif  // KILN_BASE_PRIVATE_PREFIX_H_
