// PrivatizePrefix copies exactly the pages of the prefix: the first page
// always (the length is read from it), then every page that holds a byte of
// [0, length), and no page past it. The kernel counts the pages this process
// has copied as the mapping's "Anonymous" memory in /proc/self/smaps: the
// prefix is this process's own there, the rest still the file's (so a large
// file costs no memory past its directory).
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <optional>
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

// The "Anonymous:" kB of the mapping that starts at `start`, from
// /proc/self/smaps; nullopt when it is not listed.
std::optional<std::size_t> AnonymousKb(const void* start) {
  char prefix[32];
  std::snprintf(prefix, sizeof(prefix), "%lx-", reinterpret_cast<unsigned long>(start));
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool in = false;
  while (std::getline(smaps, line)) {
    if (!line.empty() && line.find(':') > line.find(' ')) {  // a mapping's first line
      in = line.rfind(prefix, 0) == 0;
      continue;
    }
    if (in && line.rfind("Anonymous:", 0) == 0) return std::stoul(line.substr(10));
  }
  return std::nullopt;
}

// Pages copied by PrivatizePrefix on a file of `size` bytes with a prefix
// of `length` bytes.
std::size_t PagesCopied(std::size_t size, std::size_t length) {
  testing::ScratchDir tmp;
  const std::string path = tmp / "file";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  EXPECT_GE(fd, 0);
  const std::string bytes(size, 'k');
  EXPECT_EQ(::write(fd, bytes.data(), size), static_cast<ssize_t>(size));
  void* map = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  ::close(fd);
  EXPECT_NE(map, MAP_FAILED);
  if (map == MAP_FAILED) return 0;
  g_length = length;
  EXPECT_EQ(base::PrivatizePrefix(map, size, &Length), 0);
  const std::optional<std::size_t> kb = AnonymousKb(map);
  ::munmap(map, size);
  EXPECT_TRUE(kb.has_value()) << "the mapping is not in /proc/self/smaps";
  return kb.value_or(0) * 1024 / PageSize();
}

TEST(PrivatizePrefix, CopiesThePrefixPagesAndNoOther) {
  const std::size_t page = PageSize();
  struct Case {
    std::size_t size, length, pages;
  };
  const Case cases[] = {
      {1, 1, 1},                // a one-byte file: its page
      {1, 0, 1},                // the first page whatever the length
      {4 * page, 0, 1},         //
      {4 * page, 1, 1},         //
      {4 * page, page, 1},      // a prefix of one page: not the next
      {4 * page, page + 1, 2},  // one byte into the second page: it too
      {4 * page, 2 * page, 2},  //
      {4 * page, 3 * page - 1, 3},
      {4 * page, 4 * page, 4},  // the whole file
      {4 * page, 9 * page, 4},  // a length past the end: clamped
      {3 * page + 7, 3 * page + 7, 4},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(PagesCopied(c.size, c.length), c.pages)
        << "a file of " << c.size << " bytes, a prefix of " << c.length;
  }
}

}  // namespace
}  // namespace kiln
