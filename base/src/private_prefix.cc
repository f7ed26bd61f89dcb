#include "kiln/base/private_prefix.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace kiln::base {
namespace {

// Writes one byte of each page of [0, n): an atomic add of zero leaves the
// byte as it is on the private copy (a plain read then write could store a
// value read from the shared page before another process changed it).
void TouchPages(std::uint8_t* p, std::size_t n, std::size_t page) {
  for (std::size_t at = 0; at < n; at += page) {
    __atomic_fetch_add(p + at, std::uint8_t{0}, __ATOMIC_RELAXED);
  }
}

}  // namespace

int PrivatizePrefix(void* map, std::size_t size, PrefixLength length_of) {
  const long page_size = ::sysconf(_SC_PAGESIZE);
  const std::size_t page = page_size > 0 ? static_cast<std::size_t>(page_size) : 4096;
  auto* p = static_cast<std::uint8_t*>(map);
  TouchPages(p, std::min(size, page), page);  // the header is stable from here on
  const std::size_t n = std::min(size, length_of({p, size}));
  if (n > page) TouchPages(p + page, n - page, page);
  return ::mprotect(map, size, PROT_READ) == 0 ? 0 : errno;
}

}  // namespace kiln::base
