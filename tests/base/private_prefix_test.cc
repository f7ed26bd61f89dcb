// PrivatizePrefix copies exactly the pages of the prefix: the first page
// always (the length is read from it), then every page that holds a byte of
// [0, length), and no page past it: the prefix is this process's own (a
// write to the file no longer shows through the mapping there), the rest
// still the file's (so a large file costs no memory past its directory).
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "gtest/gtest.h"
#include "kiln/base/private_prefix.h"
#include "support/temp_dir.h"

namespace kiln {
namespace {

std::size_t PageSize() { return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)); }

// The prefix length the next PrivatizePrefix is given (PrefixLength is a
// plain function pointer).
std::size_t g_length = 0;
std::size_t Length(std::span<const std::uint8_t>) { return g_length; }

// Which pages of a file of `size` bytes PrivatizePrefix made this
// process's own, given a prefix of `length` bytes: "C" for a copied page,
// "S" for one still the file's. After the call each page's first byte is
// rewritten in the file (pwrite, as another process would): a copied page
// still shows the byte it had, a shared one the new byte.
std::string Pages(std::size_t size, std::size_t length) {
  testing::ScratchDir tmp;
  const std::string path = tmp / "file";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  EXPECT_GE(fd, 0);
  const std::string bytes(size, 'k');
  EXPECT_EQ(::write(fd, bytes.data(), size), static_cast<ssize_t>(size));
  void* map = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  EXPECT_NE(map, MAP_FAILED);
  if (map == MAP_FAILED) {
    ::close(fd);
    return "";
  }
  g_length = length;
  EXPECT_EQ(base::PrivatizePrefix(map, size, &Length), 0);
  const auto* p = static_cast<const volatile std::uint8_t*>(map);
  std::string pages;
  for (std::size_t at = 0; at < size; at += PageSize()) {
    EXPECT_EQ(::pwrite(fd, "n", 1, static_cast<off_t>(at)), 1);
    pages += p[at] == 'k' ? "C" : "S";
  }
  ::munmap(map, size);
  ::close(fd);
  return pages;
}

TEST(PrivatizePrefix, CopiesThePrefixPagesAndNoOther) {
  const std::size_t page = PageSize();
  struct Case {
    std::size_t size, length;
    const char* pages;
  };
  const Case cases[] = {
      {1, 1, "C"},                       // a one-byte file: its page
      {1, 0, "C"},                       // the first page whatever the length
      {4 * page, 0, "CSSS"},             //
      {4 * page, 1, "CSSS"},             //
      {4 * page, page, "CSSS"},          // a prefix of one page: not the next
      {4 * page, page + 1, "CCSS"},      // one byte into the second page: it too
      {4 * page, 2 * page, "CCSS"},      //
      {4 * page, 3 * page - 1, "CCCS"},  //
      {4 * page, 4 * page, "CCCC"},      // the whole file
      {4 * page, 9 * page, "CCCC"},      // a length past the end: clamped
      {3 * page + 7, 3 * page + 7, "CCCC"},
      {3 * page + 7, 3 * page, "CCCS"},  // the last, partial page not
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Pages(c.size, c.length), c.pages)
        << "a file of " << c.size << " bytes, a prefix of " << c.length;
  }
}

}  // namespace
}  // namespace kiln
