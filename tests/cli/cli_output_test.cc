// Where kiln's outputs may and may not land: a kiln killed by SIGINT,
// SIGTERM or SIGHUP leaves no temporary behind, ingest without --force never
// replaces an OUT that appears during the upload, and no writer replaces a
// FIFO (or a device, socket or directory) at its target.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli_run.h"
#include "gtest/gtest.h"
#include "kiln/writer.h"
#include "progress.h"
#include "remote_file.h"
#include "support/temp_dir.h"
#include "support/write_block.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using testing::Outcome;
using testing::Quote;
using testing::RunKiln;
using TempDir = testing::ScratchDir;

// A running kiln whose standard input is a pipe the test holds.
struct Child {
  pid_t pid = -1;
  int in = -1;  // the write end of kiln's stdin, -1 once closed
};

Child Spawn(const std::vector<std::string>& args) {
  int p[2];
  if (::pipe(p) != 0) return {};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(p[1]);
    // Whatever the test runner inherited, kiln starts with the defaults.
    for (const int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM,
                          SIGPROF, SIGXCPU}) {
      ::signal(sig, SIG_DFL);
    }
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    testing::ExecKiln(args, p[0], -1, -1);
  }
  ::close(p[0]);
  return {pid, p[1]};
}

bool SendAll(int fd, std::span<const std::uint8_t> bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n <= 0) return false;
    bytes = bytes.subspan(static_cast<std::size_t>(n));
  }
  return true;
}

int Wait(Child& c) {
  if (c.in >= 0) ::close(c.in);
  c.in = -1;
  int st = 0;
  ::waitpid(c.pid, &st, 0);
  return st;
}

// The names in `dir` that start with ".kiln-".
std::vector<std::string> Temporaries(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with(".kiln-")) names.push_back(name);
  }
  return names;
}

// Waits (at most 20 s) until a temporary in `dir` holds at least `bytes`
// (a file) or any entry (a directory).
bool WaitForTemporary(const fs::path& dir, std::uintmax_t bytes) {
  for (int i = 0; i < 20000; ++i) {
    for (const std::string& name : Temporaries(dir)) {
      std::error_code ec;
      const fs::path p = dir / name;
      if (fs::is_directory(p, ec) && !fs::is_empty(p, ec)) return true;
      if (fs::is_regular_file(p, ec) && fs::file_size(p, ec) >= bytes && !ec) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

// One u8 tensor of `size` bytes, as a whole block in memory.
std::vector<std::uint8_t> BigBlock(std::uint64_t size, std::vector<std::uint8_t>* payload) {
  payload->assign(size, 1);
  BlockWriter w;
  TensorRequest r;
  r.name = "w";
  r.dtype = Dtype::kU8;
  r.shape = {size};
  EXPECT_TRUE(w.Add(r, Payload::Bytes(*payload)).ok());
  return testing::BlockBytes(w);
}

// Before the fix the partial upload stayed as DIR/.kiln-XXXXXX, one per
// killed upload (checked by running this test without the handlers).
TEST(CliOutput, IngestKilledBySignalLeavesNoTemporary) {
  std::vector<std::uint8_t> payload;
  const std::vector<std::uint8_t> block = BigBlock(4'000'000, &payload);
  ASSERT_FALSE(block.empty());
  // SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM and SIGPROF end a process by default
  // too: before they were handled, each left its temporary. (SIGQUIT and
  // SIGXCPU are handled the same way; their default action dumps core, so
  // they are left out here.)
  for (const int sig : {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF}) {
    TempDir tmp;
    const std::string out = tmp / "out.klnt";
    Child c = Spawn({"ingest", out});
    ASSERT_GT(c.pid, 0);
    ASSERT_TRUE(SendAll(c.in, std::span(block).first(2'000'000)));
    ASSERT_TRUE(WaitForTemporary(tmp.path(), 1'000'000)) << strsignal(sig);
    ::kill(c.pid, sig);
    const int st = Wait(c);
    EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == sig) << strsignal(sig) << " status " << st;
    EXPECT_TRUE(Temporaries(tmp.path()).empty()) << strsignal(sig);
    EXPECT_FALSE(fs::exists(out)) << strsignal(sig);
  }
}

// Before the fix unpack's staging directory (.kiln-XXXXXX beside DIR, with
// the files written so far) stayed.
TEST(CliOutput, UnpackKilledBySignalLeavesNoStagingDirectory) {
  TempDir tmp;
  std::vector<std::uint8_t> payload;
  {
    const std::vector<std::uint8_t> block = BigBlock(std::uint64_t{256} << 20, &payload);
    ASSERT_FALSE(block.empty());
    std::ofstream(tmp / "in.klnt", std::ios::binary)
        .write(reinterpret_cast<const char*>(block.data()),
               static_cast<std::streamsize>(block.size()));
  }
  payload.clear();
  fs::create_directory(tmp / "o");
  Child c = Spawn({"unpack", tmp / "in.klnt", tmp / "o/dir"});
  ASSERT_GT(c.pid, 0);
  ASSERT_TRUE(WaitForTemporary(tmp / "o", 0));
  ::kill(c.pid, SIGINT);
  const int st = Wait(c);
  EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGINT) << "status " << st;
  EXPECT_TRUE(Temporaries(tmp / "o").empty());
  EXPECT_FALSE(fs::exists(tmp / "o/dir"));
}

// Before the fix "OUT exists" was checked only at the start: an OUT created
// during the upload was silently replaced (exit 0).
TEST(CliOutput, IngestNeverReplacesAnOutThatAppearsDuringTheUpload) {
  TempDir tmp;
  std::vector<std::uint8_t> payload;
  const std::vector<std::uint8_t> block = BigBlock(4'000'000, &payload);
  ASSERT_FALSE(block.empty());
  const std::string out = tmp / "out.klnt";
  Child c = Spawn({"ingest", out});
  ASSERT_GT(c.pid, 0);
  ASSERT_TRUE(SendAll(c.in, std::span(block).first(1'000'000)));
  ASSERT_TRUE(WaitForTemporary(tmp.path(), 500'000));
  const std::string theirs = "someone else's file, created during the upload\n";
  std::ofstream(out) << theirs;
  ASSERT_TRUE(SendAll(c.in, std::span(block).subspan(1'000'000)));
  const int st = Wait(c);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 2) << "status " << st;
  std::ifstream f(out);
  const std::string now((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(now, theirs);
  EXPECT_TRUE(Temporaries(tmp.path()).empty());
}

// A minimal .npy: two f32 zeros.
void WriteNpy(const std::string& path) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string file = std::string("\x93NUMPY\x01\x00", 8);
  file += static_cast<char>(header.size() & 0xff);
  file += static_cast<char>(header.size() >> 8);
  file += header + std::string(8, '\0');
  std::ofstream(path, std::ios::binary) << file;
}

// A minimal .safetensors: one F32 tensor of two zeros.
void WriteSafetensors(const std::string& path) {
  const std::string json = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  std::string file(8, '\0');
  file[0] = static_cast<char>(json.size());
  file += json + std::string(8, '\0');
  std::ofstream(path, std::ios::binary) << file;
}

bool IsFifo(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
}

// Before the fix pack and convert renamed their output over a FIFO (or a
// device node: as root, /dev/full) at OUT, exit 0.
TEST(CliOutput, PackAndConvertRefuseAFifoAtOut) {
  TempDir tmp;
  WriteNpy(tmp / "a.npy");
  WriteSafetensors(tmp / "a.safetensors");
  ASSERT_EQ(RunKiln("pack " + Quote(tmp / "ok.klnt") + " x=" + Quote(tmp / "a.npy"), "2>&1").status,
            0);
  const std::string fifo = tmp / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::vector<std::string> commands = {
      "pack " + Quote(fifo) + " x=" + Quote(tmp / "a.npy"),
      "convert " + Quote(tmp / "a.safetensors") + " " + Quote(fifo) + " --to kiln",
      "convert " + Quote(tmp / "ok.klnt") + " " + Quote(fifo) + " --to safetensors",
  };
  for (const std::string& c : commands) {
    const Outcome r = RunKiln(c, "2>&1");
    EXPECT_EQ(r.status, 2) << c << "\n" << r.out;
    EXPECT_NE(r.out.find("exists and is not a regular file (a FIFO)"), std::string::npos)
        << c << "\n"
        << r.out;
    EXPECT_TRUE(IsFifo(fifo)) << c;
    EXPECT_TRUE(Temporaries(tmp.path()).empty()) << c;
  }
}

TEST(CliOutput, WriterRefusesAFifoAtItsTarget) {
  TempDir tmp;
  const std::string fifo = tmp / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  static const std::uint8_t kByte[1] = {1};
  BlockWriter w;
  TensorRequest r;
  r.name = "x";
  r.dtype = Dtype::kU8;
  r.shape = {1};
  ASSERT_TRUE(w.Add(r, Payload::Bytes(kByte)).ok());
  const Result<BlockPlan> plan = w.Plan();
  ASSERT_TRUE(plan.ok()) << plan.error().ToString();
  const Result<std::uint64_t, WriteError> n = plan.value().WriteToFile(fifo);
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.error().step, WriteError::Step::kCreate) << n.error().ToString();
  EXPECT_NE(n.error().ToString().find("exists and is not a regular file (a FIFO)"),
            std::string::npos)
      << n.error().ToString();
  EXPECT_TRUE(IsFifo(fifo));
  EXPECT_TRUE(Temporaries(tmp.path()).empty());
  // A regular file or a symlink there is still replaced, as documented.
  ASSERT_TRUE(plan.value().WriteToFile(tmp / "plain").ok());
  ASSERT_TRUE(plan.value().WriteToFile(tmp / "plain").ok());
}

// The command's writes go out in chunks of at most 1 MiB, each advancing the
// progress line (progress.h): a write of 3 MiB and one byte shows a line at
// every MiB, then 100%, then ends the line.
TEST(CliProgress, WriteAllAdvancesTheLineAMiBAtATime) {
  TempDir tmp;
  const std::vector<std::uint8_t> bytes((std::size_t{3} << 20) + 1, 0x5a);
  std::ostringstream err;
  const int fd = ::open((tmp / "out").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  {
    cli::Progress progress(err, "unpack", bytes.size(), /*enabled=*/true);
    EXPECT_EQ(cli::WriteAll(fd, bytes, &progress), 0);
  }
  ::close(fd);
  EXPECT_EQ(fs::file_size(tmp / "out"), bytes.size());
  EXPECT_EQ(err.str(),
            "\runpack:  33% (1 of 3 MiB)\runpack:  66% (2 of 3 MiB)\runpack:  99% (3 of 3 MiB)"
            "\runpack: 100% (3 of 3 MiB)\n");
}

// kiln pack's limit flags with a value that is not a number: a usage error
// naming the flag, nothing read or written.
TEST(CliPack, ALimitFlagWithoutANumberIsAUsageError) {
  TempDir tmp;
  for (const std::string flag : {"--max-tensors", "--max-block-bytes"}) {
    const Outcome r = RunKiln(
        "pack " + Quote(tmp / "o.klnt") + " " + flag + " nope a=" + Quote(tmp / "missing.npy"),
        "2>&1");
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_NE(r.out.find("kiln pack: " + flag + " needs N"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("missing.npy"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(tmp / "o.klnt"));
  }
}

// Which names are URLs: http:// and https://, the scheme in any case, read
// within the name only (a prefix of a scheme followed in memory by the rest
// is not one); anything else is a path, even with "://" inside.
TEST(CliUrl, OnlyHttpAndHttpsSchemesInAnyCaseAreUrls) {
  for (const std::string_view url :
       {"http://a", "https://a", "HTTP://a", "HtTpS://x/y.klnt", "http://", "https://"}) {
    EXPECT_TRUE(cli::IsUrl(url)) << url;
  }
  for (const std::string_view path :
       {"", "h", "http", "http:/", "https:/", "xttp://a", "hxxp://a", "ftp://a", "file:///x",
        "http:\\\\a", "/tmp/http://x", " http://a", "https//a", "httpx://a"}) {
    EXPECT_FALSE(cli::IsUrl(path)) << path;
  }
  // The name "http" whose buffer goes on with "://": still a path.
  EXPECT_FALSE(cli::IsUrl(std::string_view("http://a", 4)));
  EXPECT_FALSE(cli::IsUrl(std::string_view("https://a", 5)));
  // A name of exactly the scheme is a URL (curl then refuses it: exit 2).
  const Outcome r = RunKiln("validate http://", "2>&1");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_EQ(r.out.find("No such file"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace kiln
