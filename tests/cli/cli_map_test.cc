// kiln validate on an input it cannot map (an address-space limit below the
// file's size): an I/O error (exit 2) that says why, never a crash.
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli_run.h"
#include "gtest/gtest.h"
#include "support/temp_dir.h"

namespace kiln {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif

TEST(CliMap, InputLargerThanTheAddressSpaceLimitIsAnIoError) {
  if (kAddressSanitizer) GTEST_SKIP() << "ASan reserves more address space than the limit";
  testing::ScratchDir tmp;
  const std::string big = tmp / "big.klnt";
  std::ofstream(big).close();
  std::filesystem::resize_file(big, std::uint64_t{1} << 30);  // sparse: takes no disk
  // 256 MiB of address space: enough to run kiln, not to map 1 GiB.
  const std::string cmd = "ulimit -v 262144 && timeout 60 " + testing::Quote(KILN_BINARY) +
                          " validate " + testing::Quote(big) + " 2>&1 </dev/null";
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  const int st = ::pclose(p);
  ASSERT_TRUE(WIFEXITED(st)) << out;
  EXPECT_EQ(WEXITSTATUS(st), 2) << out;
  EXPECT_NE(out.find("big.klnt: cannot map: "), std::string::npos) << out;
}

}  // namespace
}  // namespace kiln
