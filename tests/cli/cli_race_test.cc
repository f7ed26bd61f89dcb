// Finding F3: another process rewrites a descriptor of the file kiln is
// reading. kiln must never crash (a signal, exit > 128): the header and the
// directory are this process's own copy before they are parsed
// (cli/mapped_file.h), so every run sees one consistent directory and exits
// 0 (valid), 1 (a rule) or 2.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <string>
#include <thread>

#include "cli_run.h"
#include "gtest/gtest.h"
#include "support/block_builder.h"
#include "support/temp_dir.h"

namespace kiln::testing {
namespace {

constexpr std::size_t kTensors = 5000;

// Writes v little-endian at `at` of the open file (one pwrite).
void WriteU64(int fd, std::uint64_t v, std::size_t at) {
  Buffer b(8);
  Put(b, 0, v, 8);
  ASSERT_EQ(::pwrite(fd, b.data(), 8, static_cast<off_t>(at)), 8);
}

// Flips the last descriptor's offset, length and shape[0] between their
// valid values and hostile ones (the attacker's sequence) until `stop`.
void Flip(int fd, const std::atomic<bool>& stop) {
  const std::size_t last = kTensors - 1;
  while (!stop.load()) {
    WriteU64(fd, std::uint64_t{1} << 62, Desc(last, kLength));
    WriteU64(fd, std::uint64_t{1} << 61, Desc(last, kShape));
    WriteU64(fd, (std::uint64_t{1} << 63) - 64, Desc(last, kOffset));
    WriteU64(fd, 64 * last, Desc(last, kOffset));
    WriteU64(fd, 8, Desc(last, kLength));
    WriteU64(fd, 2, Desc(last, kShape));
  }
}

TEST(CliRace, DescriptorRewrittenWhileReadingNeverCrashes) {
  const ScratchDir dir;
  const std::string path = dir / "race.klnt";
  BlockSpec spec;
  spec.tensors.resize(kTensors);
  {
    const Buffer b = Build(spec);
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  }
  const int fd = ::open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  std::atomic<bool> stop{false};
  std::thread writer(Flip, fd, std::cref(stop));
  int runs = 0;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  for (int i = 0; std::chrono::steady_clock::now() < end; ++i, ++runs) {
    const std::string command = i % 2 == 0 ? "validate " : "inspect ";
    const Outcome r = RunKiln(command + Quote(path), "2>/dev/null >/dev/null");
    EXPECT_TRUE(r.status == 0 || r.status == 1 || r.status == 2)
        << command << "exited " << r.status << " (> 128: killed by signal status - 128)";
    if (r.status > 2) break;
  }
  stop.store(true);
  writer.join();
  ::close(fd);
  EXPECT_GT(runs, 0);
}

}  // namespace
}  // namespace kiln::testing
