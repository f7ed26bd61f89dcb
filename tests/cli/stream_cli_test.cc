// `kiln validate -` and `kiln ingest` end to end, with the input on a pipe:
// verdicts, exit codes, how much of the input is read, and that ingest
// leaves OUT only for a valid block and no temporary file ever.
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <span>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli_run.h"
#include "gtest/gtest.h"
#include "kiln/kiln.h"
#include "kiln/writer.h"
#include "size_arg.h"
#include "stream_input.h"
#include "support/block_builder.h"
#include "support/golden.h"
#include "support/paths.h"
#include "support/write_block.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using testing::Buffer;

struct KilnRun {
  int status = -1;
  std::string out;
  std::size_t unread = 0;  // bytes left in the input pipe afterwards
};

// Writes `input` to `fd`, then closes it; stops when the reader is gone.
void Feed(int fd, const Buffer& input) {
  for (std::size_t at = 0; at < input.size();) {
    const ssize_t n = ::write(fd, input.data() + at, input.size() - at);
    if (n <= 0) break;
    at += static_cast<std::size_t>(n);
  }
  ::close(fd);
}

// Runs kiln with `args`, `input` on a pipe as standard input (a 1 MiB pipe:
// an input up to that size is all in the pipe before kiln reads), stdout
// captured.
KilnRun Kiln(const std::vector<std::string>& args, const Buffer& input) {
  ::signal(SIGPIPE, SIG_IGN);  // kiln may stop reading before the end
  KilnRun r;
  int in[2], out[2];
  if (::pipe(in) != 0 || ::pipe(out) != 0) return r;
  ::fcntl(in[1], F_SETPIPE_SZ, 1 << 20);
  std::thread writer(Feed, in[1], std::cref(input));
  if (input.size() <= (1u << 20)) writer.join();
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (writer.joinable()) ::close(in[1]);
    ::close(out[0]);
    testing::ExecKiln(args, in[0], out[1], -1);
  }
  ::close(out[1]);
  char buf[4096];
  ssize_t n = 0;
  while ((n = ::read(out[0], buf, sizeof(buf))) > 0) r.out.append(buf, static_cast<std::size_t>(n));
  ::close(out[0]);
  int st = 0;
  ::waitpid(pid, &st, 0);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  int left = 0;
  ::ioctl(in[0], FIONREAD, &left);
  r.unread = static_cast<std::size_t>(left);
  ::close(in[0]);
  if (writer.joinable()) writer.join();
  return r;
}

Buffer Case(const std::string& name) {
  return testing::ReadFile(std::string(::kiln::testing::GoldenDir()) + "/cases/" + name + ".klnt");
}

// A valid block of `tensors` u8 tensors of `each` bytes, from the writer.
Buffer Block(std::uint32_t tensors, std::uint64_t each) {
  const std::vector<std::uint8_t> ones(each, 1);
  BlockWriter w;
  for (std::uint32_t i = 0; i < tensors; ++i) {
    TensorRequest r;
    r.dtype = Dtype::kU8;
    r.shape = {each};
    if (!w.Add(r, Payload::Bytes(ones)).ok()) return {};
  }
  return testing::BlockBytes(w);
}

// GuardStandardDescriptors, in a child that closed some of its descriptors
// 0 to 3: a closed 0 or 1 comes back on /dev/null, a closed 2 on /dev/full
// (a diagnostic written there fails, as a closed stderr's would), and stays
// open; 3 is not a standard descriptor and stays closed; the open ones are
// kept as they were; the two flags say whether 0 and 1 were closed. So the
// next file kiln opens never becomes its stdin, stdout or stderr.
enum GuardStep : int {
  kGuardHeld = 0,
  kNotOpen = 10,  // + the descriptor
  kWrongFile = 20,
  kWrongMode = 30,
  kChanged = 40,
  kFourthOpened = 50,
  kStdinFlagWrong = 51,
  kStdoutFlagWrong = 52,
};

int GuardWithClosed(unsigned closed) {  // bit k: descriptor k is closed first
  // Four distinct files on 0 to 3 first, whatever the test was started with.
  for (int fd = 0; fd <= 3; ++fd) {
    const int m = ::memfd_create("guard", 0);
    if (m < 0 || (m != fd && (::dup2(m, fd) != fd || ::close(m) != 0))) return kNotOpen + fd;
  }
  struct stat before[3];
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fstat(fd, &before[fd]) != 0) return kNotOpen + fd;
  }
  for (int fd = 0; fd <= 3; ++fd) {
    if ((closed >> fd) & 1) ::close(fd);
  }
  cli::GuardStandardDescriptors();
  const char* const files[] = {"/dev/null", "/dev/null", "/dev/full"};
  for (int fd = 0; fd <= 2; ++fd) {
    const int flags = ::fcntl(fd, F_GETFL);
    struct stat now {};
    if (flags == -1 || ::fstat(fd, &now) != 0) return kNotOpen + fd;
    if (((closed >> fd) & 1) == 0) {
      if (now.st_ino != before[fd].st_ino || now.st_dev != before[fd].st_dev) return kChanged + fd;
      continue;
    }
    char link[64];
    std::snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    if (fs::read_symlink(link) != files[fd]) return kWrongFile + fd;
    if ((flags & O_ACCMODE) != (fd == 0 ? O_RDONLY : O_WRONLY)) return kWrongMode + fd;
  }
  if (((closed >> 3) & 1) && (::fcntl(3, F_GETFD) != -1 || errno != EBADF)) return kFourthOpened;
  if (cli::StandardInputClosed() != ((closed & 1) != 0)) return kStdinFlagWrong;
  if (cli::StandardOutputClosed() != ((closed & 2) != 0)) return kStdoutFlagWrong;
  return kGuardHeld;
}

TEST(GuardStandardDescriptors, ClosedOnesComeBackOnDevNullAndDevFull) {
  for (const unsigned closed : {0b1111u, 0b0001u, 0b0010u, 0b0100u, 0b1000u, 0b0000u}) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) ::_exit(GuardWithClosed(closed));
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << status;
    EXPECT_EQ(WEXITSTATUS(status), kGuardHeld) << "descriptors closed (bits 0 to 3): " << closed;
  }
}

// A fresh directory for ingest outputs.
class Ingest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kiln-ingest-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    ::umount(dir_.c_str());
    fs::remove_all(dir_);
  }
  // The names in the directory (a leftover temporary file shows here).
  std::vector<std::string> Entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename());
    return names;
  }
  std::string Out() const { return (dir_ / "model.klnt").string(); }
  fs::path dir_;
};

TEST(ValidateStdin, ValidBlockIsOk) {
  const KilnRun r = Kiln({"validate", "-"}, Case("ok-all-dtypes"));
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "-: ok\n");
}

// The verdict line of the library's StreamValidator (which is Parse's for a
// stream of exactly the declared length, tests/parser/stream_test.cc), for every
// golden case.
TEST(ValidateStdin, EveryGoldenCaseAsTheStreamValidatorSays) {
  std::size_t same_as_parse = 0;
  for (const testing::GoldenCase& c : testing::LoadManifest()) {
    const Buffer b = testing::ReadFile(c.path);
    StreamValidator v;
    v.Feed(b);
    const bool ok = v.Finish() == StreamStatus::kComplete;
    const KilnRun r = Kiln({"validate", "-"}, b);
    EXPECT_EQ(r.status, ok ? 0 : 1) << c.name;
    EXPECT_EQ(r.out, "-: " + (ok ? "ok" : v.error().ToString()) + "\n") << c.name;
    const Result<Directory> parse = Parse(b);
    same_as_parse += r.out == "-: " + (parse.ok() ? "ok" : parse.error().ToString()) + "\n";
  }
  // All but the cases whose length is not the declared block length.
  EXPECT_GE(same_as_parse, testing::LoadManifest().size() - 6);
}

// A hostile header costs at most its 64 bytes: the rest stays in the pipe.
TEST(ValidateStdin, HostileHeaderReadsAtMost64Bytes) {
  Buffer b = Case("h8-four-billion-tensors");
  b.resize(std::size_t{1} << 20, 0);
  const KilnRun r = Kiln({"validate", "--max-tensors", "1000", "-"}, b);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out.rfind("-: LIMIT H7 at byte 8", 0), 0u) << r.out;
  EXPECT_GE(r.unread, b.size() - 64);
  // A foreign file: rejected at its magic.
  const KilnRun gguf = Kiln({"validate", "-"}, Buffer{'G', 'G', 'U', 'F', 3, 0, 0, 0});
  EXPECT_EQ(gguf.status, 1);
  EXPECT_EQ(gguf.out.rfind("-: FRAME H1 at byte 0: magic is 47475546", 0), 0u) << gguf.out;
}

// A named pipe is validated as a stream (not refused as non-regular), even
// when its writer comes after kiln has opened it.
TEST(ValidateStdin, NamedPipeIsReadAsAStream) {
  const fs::path fifo = fs::temp_directory_path() / ("kiln-fifo-" + std::to_string(::getpid()));
  fs::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const Buffer b = Case("ok-all-dtypes");
  std::thread writer([&] {
    ::usleep(100'000);
    Feed(::open(fifo.c_str(), O_WRONLY), b);
  });
  const KilnRun r = Kiln({"validate", fifo.string()}, {});
  writer.join();
  fs::remove(fifo);
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, fifo.string() + ": ok\n");
}

TEST(ValidateStdin, PrefixModeStopsAtTheBlock) {
  Buffer b = Case("kiln-v2-f32");
  const std::size_t block = b.size();
  b.resize(block + 1000, 0xEE);
  const KilnRun r = Kiln({"validate", "--prefix", "-"}, b);
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.unread, 1000u);
}

TEST_F(Ingest, ValidBlockBecomesOut) {
  const Buffer b = Block(20, 100'000);
  ASSERT_FALSE(b.empty());
  const KilnRun r = Kiln({"ingest", Out()}, b);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(testing::ReadFile(Out()), b);
  EXPECT_EQ(Entries(), std::vector<std::string>{"model.klnt"});
}

TEST_F(Ingest, RejectedEarlyLeavesNothing) {
  Buffer b = Block(8, 100'000);
  b[64] = 8;  // descriptor 0: dtype 8 is not in the table
  const KilnRun r = Kiln({"ingest", Out()}, b);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out.rfind("-: TYPE D1 at byte 64", 0), 0u) << r.out;
  EXPECT_TRUE(Entries().empty());
  EXPECT_EQ(r.unread, b.size() - 64 - 8 * 128);  // stopped reading at payload_base
}

TEST_F(Ingest, RejectedAtTheLastGapByte) {
  Buffer b = Case("ok-payload-wide-gaps-and-tail");
  b.back() = 1;  // the last byte of the zero tail
  const Result<Directory> want = Parse(b);
  ASSERT_FALSE(want.ok());
  ASSERT_EQ(want.error().rule, Rule::P2);
  const KilnRun r = Kiln({"ingest", Out()}, b);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "-: " + want.error().ToString() + "\n");
  EXPECT_TRUE(Entries().empty());
}

TEST_F(Ingest, TruncatedStreamLeavesNothing) {
  Buffer b = Block(3, 1000);
  b.pop_back();
  const KilnRun r = Kiln({"ingest", Out()}, b);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out.rfind("-: FRAME H8 at byte " + std::to_string(b.size()), 0), 0u) << r.out;
  EXPECT_TRUE(Entries().empty());
}

TEST_F(Ingest, ExistingOutNeedsForceAndNothingIsRead) {
  { std::ofstream(Out()) << "keep"; }
  const Buffer b = Case("kiln-v2-f32");
  const KilnRun r = Kiln({"ingest", Out()}, b);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.unread, b.size());
  EXPECT_EQ(testing::ReadFile(Out()), (Buffer{'k', 'e', 'e', 'p'}));
  const KilnRun forced = Kiln({"ingest", "--force", Out()}, b);
  EXPECT_EQ(forced.status, 0);
  EXPECT_EQ(testing::ReadFile(Out()), b);
}

TEST_F(Ingest, LimitsAreAnUploadPolicy) {
  const Buffer b = Block(2, 1000);
  const KilnRun small = Kiln({"ingest", "--max-block-bytes", "1K", Out()}, b);
  EXPECT_EQ(small.status, 1);
  EXPECT_EQ(small.out.rfind("-: LIMIT H7 at byte 16", 0), 0u) << small.out;
  EXPECT_TRUE(Entries().empty());
  EXPECT_EQ(Kiln({"ingest", "--max-tensors", "x", Out()}, b).status, 2);
  EXPECT_EQ(Kiln({"ingest", "--no-limits", Out()}, b).status, 0);
}

// A full file system: exit 2 and no temporary file left behind. Needs root
// (a private tmpfs); skipped otherwise.
TEST_F(Ingest, FullDiskIsExit2AndLeavesNothing) {
  if (::geteuid() != 0 || ::mount("tmpfs", dir_.c_str(), "tmpfs", 0, "size=256k") != 0) {
    GTEST_SKIP() << "needs root to mount a small tmpfs";
  }
  const Buffer b = Block(4, 200'000);
  const KilnRun r = Kiln({"ingest", Out()}, b);
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(Entries().empty());
}

// ReadStream reads at most 1 MiB at a time (its buffer, the memory
// docs/performance.md gives it): a block of some 3 MiB in a regular file,
// whose reads return all they ask for, reaches the sink in chunks of at
// most 1 MiB, the full ones exactly 1 MiB, every byte once and in order.
TEST(ReadStream, ReadsAtMost1MiBAtATime) {
  testing::BlockSpec spec;
  testing::TensorSpec t;
  t.shape = {(std::uint64_t{3} << 20) / 4 + 1000};  // f32
  spec.tensors.push_back(t);
  const Buffer block = testing::Build(spec);
  const fs::path path =
      fs::temp_directory_path() / ("kiln-read-stream-" + std::to_string(::getpid()));
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(block.data()),
             static_cast<std::streamsize>(block.size()));
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  StreamValidator v;
  std::vector<std::size_t> sizes;
  Buffer seen;
  std::ostringstream err;
  const cli::StreamOutcome o = cli::ReadStream(
      fd, v,
      [&](std::span<const std::uint8_t> chunk) {
        sizes.push_back(chunk.size());
        seen.insert(seen.end(), chunk.begin(), chunk.end());
        return true;
      },
      err, "-", 0);
  ::close(fd);
  fs::remove(path);
  EXPECT_EQ(o.io_error, "");
  EXPECT_FALSE(o.error.has_value()) << o.error->ToString();
  EXPECT_TRUE(seen == block) << seen.size() << " bytes of " << block.size();
  ASSERT_FALSE(sizes.empty());
  EXPECT_EQ(*std::max_element(sizes.begin(), sizes.end()), std::size_t{1} << 20);
}

TEST(SizeArg, SuffixesAreBinary) {
  EXPECT_EQ(cli::ParseSize("1048576"), 1048576u);
  EXPECT_EQ(cli::ParseSize("64K"), 65536u);
  EXPECT_EQ(cli::ParseSize("3k"), 3072u);
  EXPECT_EQ(cli::ParseSize("5M"), std::uint64_t{5} << 20);
  EXPECT_EQ(cli::ParseSize("7m"), std::uint64_t{7} << 20);
  EXPECT_EQ(cli::ParseSize("1g"), std::uint64_t{1} << 30);
  EXPECT_EQ(cli::ParseSize("17592186044415M"), std::uint64_t{17592186044415} << 20);
  EXPECT_FALSE(cli::ParseSize("17592186044416M"));  // 2^64
  EXPECT_EQ(cli::ParseSize("18446744073709551615"), ~std::uint64_t{0});
  EXPECT_FALSE(cli::ParseSize("18446744073709551616"));
  EXPECT_EQ(cli::ParseSize("10G"), std::uint64_t{10} << 30);
  EXPECT_EQ(cli::ParseSize("2t"), std::uint64_t{2} << 40);
  EXPECT_EQ(cli::ParseSize("16777215T"), std::uint64_t{16777215} << 40);
  EXPECT_FALSE(cli::ParseSize("16777216T"));  // 2^64
  EXPECT_FALSE(cli::ParseSize(""));
  EXPECT_FALSE(cli::ParseSize("G"));
  EXPECT_FALSE(cli::ParseSize("10GB"));
  EXPECT_FALSE(cli::ParseSize("-1"));
}

// The default upload policy's tensor limit (kiln ingest's usage: 100000):
// a header declaring 100,001 tensors stops at its tensor_count; 100,000 is
// within it (this header then fails elsewhere, not at that limit).
TEST_F(Ingest, DefaultTensorLimitIs100000) {
  Buffer b = Case("h8-four-billion-tensors");
  b.resize(std::size_t{1} << 20, 0);
  const auto declaring = [&b](std::uint32_t count) {
    Buffer c = b;
    const std::uint64_t directory_bytes = std::uint64_t{128} * count;  // H6 holds
    for (int k = 0; k < 4; ++k) c[8 + k] = static_cast<std::uint8_t>(count >> (8 * k));
    for (int k = 0; k < 8; ++k) c[24 + k] = static_cast<std::uint8_t>(directory_bytes >> (8 * k));
    return c;
  };
  const KilnRun over = Kiln({"ingest", Out()}, declaring(100'001));
  EXPECT_EQ(over.status, 1);
  EXPECT_EQ(over.out.rfind("-: LIMIT H7 at byte 8", 0), 0u) << over.out;
  EXPECT_NE(over.out.find("100001"), std::string::npos) << over.out;
  const KilnRun at = Kiln({"ingest", Out()}, declaring(100'000));
  EXPECT_EQ(at.status, 1);
  EXPECT_EQ(at.out.find("LIMIT H7 at byte 8"), std::string::npos) << at.out;
  EXPECT_TRUE(Entries().empty());
}

}  // namespace
}  // namespace kiln
