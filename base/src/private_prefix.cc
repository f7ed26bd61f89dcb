#include "kiln/base/private_prefix.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace kiln::base {
namespace {

// Writes one byte of each page of [0, n), so the kernel gives this process
// its own copy of the page. The write must really happen: an atomic add of
// zero is "idempotent" and compilers may lower it to a fenced load (clang
// does on x86-64), which copies nothing. A volatile read then write stores
// the byte it read; if another process changed that byte in between, the
// private page holds the older value there: the copy is still this
// process's own and cannot change any more, which is what the parse needs.
void TouchPages(std::uint8_t* p, std::size_t n, std::size_t page) {
  for (std::size_t at = 0; at < n; at += page) {
    volatile std::uint8_t* const byte = p + at;
    const std::uint8_t value = *byte;
    *byte = value;
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
