// The kiln command's own I/O, end to end: inputs that are not regular files
// (a FIFO must not hang any command) or cannot be mapped, reports that cannot be written (a full
// disk must not look like a verdict), and output that stays linear in the
// input (one long name must not pad every row).
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_run.h"
#include "gtest/gtest.h"
#include "kiln/writer.h"
#include "support/golden.h"
#include "support/paths.h"
#include "support/sanitizers.h"
#include "support/temp_dir.h"
#include "support/write_block.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using testing::Outcome;
using testing::Quote;
using testing::RunKiln;

std::string Golden(const std::string& name) {
  return Quote(std::string(::kiln::testing::GoldenDir()) + "/cases/" + name + ".klnt");
}

using TempDir = testing::ScratchDir;

// Before the fix every command opened its input before checking it was a
// regular file, and open() of a FIFO waits for a writer: forever. RunKiln's
// timeout turns a hang into a failure (status 124).
TEST(CliIo, FifoIsRefusedPromptlyByEveryCommand) {
  TempDir tmp;
  for (const char* name : {"f.klnt", "f.npy", "f.safetensors", "f.gguf"}) {
    ASSERT_EQ(::mkfifo((tmp / name).c_str(), 0600), 0) << name;
  }
  const std::vector<std::string> commands = {
      "validate " + Quote(tmp / "f.klnt"),
      "validate --json " + Quote(tmp / "f.klnt"),
      "inspect " + Quote(tmp / "f.klnt"),
      "inspect --json " + Quote(tmp / "f.klnt"),
      "unpack " + Quote(tmp / "f.klnt") + " " + Quote(tmp / "dir"),
      "pack " + Quote(tmp / "o.klnt") + " a=" + Quote(tmp / "f.npy"),
      "convert " + Quote(tmp / "f.safetensors") + " " + Quote(tmp / "o.klnt"),
      "convert " + Quote(tmp / "f.gguf") + " " + Quote(tmp / "o.klnt"),
      "convert " + Quote(tmp / "f.klnt") + " " + Quote(tmp / "o.safetensors"),
  };
  for (const std::string& c : commands) {
    const Outcome r = RunKiln(c, "2>&1");
    EXPECT_EQ(r.status, 2) << c << "\n" << r.out;
    // validate reads a pipe as a stream (kiln validate -), so it waits a
    // bounded time for a writer, then gives up; the others refuse at once.
    const std::string why = c.starts_with("validate") ? "a FIFO with no writer (waited 2000 ms)"
                                                      : "not a regular file (a FIFO)";
    EXPECT_NE(r.out.find(why), std::string::npos) << c << "\n" << r.out;
  }
  EXPECT_FALSE(fs::exists(tmp / "dir"));
  EXPECT_FALSE(fs::exists(tmp / "o.klnt"));
}

TEST(CliIo, CharacterDeviceIsRefused) {
  const Outcome r = RunKiln("validate /dev/zero", "2>&1");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("not a regular file (a character device)"), std::string::npos) << r.out;
}

// Before the fix a report written to a full disk was lost and the exit
// status still said "valid" (0) or "invalid" (1).
TEST(CliIo, ReportOnAFullDiskIsExit2) {
  const std::vector<std::string> commands = {
      "validate " + Golden("kiln-v2-f32"),
      "validate --json " + Golden("kiln-v2-f32"),
      "validate " + Golden("kiln-pod-list-f32"),  // invalid: 1 without the failure
      "inspect " + Golden("kiln-v2-f32"),
      "inspect --json " + Golden("kiln-v2-f32"),
      "rules",
      "--help",
  };
  for (const std::string& c : commands) {
    const Outcome r = RunKiln(c, "2>&1 >/dev/full");
    EXPECT_EQ(r.status, 2) << c << "\n" << r.out;
    EXPECT_NE(r.out.find("cannot write the output"), std::string::npos) << c << "\n" << r.out;
  }
}

// `count` u8 tensors; tensor 0's name is `first`, the others "t<i>".
void WriteBlock(const std::string& path, const std::string& first, std::uint32_t count) {
  static const std::uint8_t kByte[1] = {1};
  BlockWriter w;
  for (std::uint32_t i = 0; i < count; ++i) {
    TensorRequest r;
    r.name = i == 0 ? first : "t" + std::to_string(i);
    r.dtype = Dtype::kU8;
    r.shape = {1};
    ASSERT_TRUE(w.Add(r, Payload::Bytes(kByte)).ok());
  }
  ASSERT_TRUE(testing::WriteBlockFile(w, path));
}

// Before the fix every row was padded to the widest name: one 5,000-byte
// name of control characters (20,000 columns escaped) made each of 2,000
// rows 20 KB, 40 MB in all.
TEST(CliIo, InspectOutputIsLinearWhenOneNameIsLong) {
  TempDir tmp;
  const std::string long_name(5000, '\x01');
  for (const std::uint32_t count : {500u, 2000u}) {
    const std::string path = tmp / ("b" + std::to_string(count) + ".klnt");
    WriteBlock(path, long_name, count);
    const Outcome r = RunKiln("inspect " + Quote(path), "2>&1");
    ASSERT_EQ(r.status, 0) << r.out.substr(0, 400);
    EXPECT_LT(r.out.size(), 100u * count) << count << " tensors";
    std::size_t longest = 0, start = 0;
    for (std::size_t nl; (nl = r.out.find('\n', start)) != std::string::npos; start = nl + 1) {
      longest = std::max(longest, nl - start);
    }
    EXPECT_LT(longest, 160u);
    EXPECT_NE(r.out.find("0      \\x01\\x01"), std::string::npos) << r.out.substr(0, 400);
    EXPECT_NE(r.out.find("..."), std::string::npos);
  }
  // The full name stays in --json.
  const Outcome j = RunKiln("inspect --json " + Quote(tmp / "b500.klnt"), "2>&1");
  ASSERT_EQ(j.status, 0);
  std::size_t escapes = 0;
  for (std::size_t at = 0; (at = j.out.find("\\u0001", at)) != std::string::npos; at += 6) {
    ++escapes;
  }
  EXPECT_EQ(escapes, 5000u);
}

// The caller limits of validate bound convert's kiln input too.
TEST(CliIo, ConvertLimitsTheKilnInput) {
  TempDir tmp;
  WriteBlock(tmp / "in.klnt", "a", 3);
  const std::string in = Quote(tmp / "in.klnt"), out = Quote(tmp / "o.safetensors");
  const Outcome over = RunKiln("convert " + in + " " + out + " --max-tensors 2", "2>&1");
  EXPECT_EQ(over.status, 1) << over.out;
  EXPECT_NE(over.out.find("LIMIT H7"), std::string::npos) << over.out;
  EXPECT_FALSE(fs::exists(tmp / "o.safetensors"));
  const Outcome ok = RunKiln("convert --max-tensors 3 " + in + " " + out, "2>&1");
  EXPECT_EQ(ok.status, 0) << ok.out;
  // The same flag bounds a safetensors input (formats::ReaderLimits).
  const Outcome back_over =
      RunKiln("convert --max-tensors 2 " + out + " " + Quote(tmp / "back.klnt"), "2>&1");
  EXPECT_EQ(back_over.status, 1) << back_over.out;
  EXPECT_FALSE(fs::exists(tmp / "back.klnt"));
  const Outcome back =
      RunKiln("convert --max-tensors 3 " + out + " " + Quote(tmp / "back.klnt"), "2>&1");
  EXPECT_EQ(back.status, 0) << back.out;
  EXPECT_EQ(RunKiln("convert " + in + " " + out + " --max-block-bytes", "2>&1").status, 2);
}

// Before the fix `ingest --from FIFO` opened the FIFO blocking and waited for
// a writer forever; now it waits a bounded time, as validate does.
TEST(CliIo, IngestFromAFifoWithNoWriterGivesUp) {
  TempDir tmp;
  ASSERT_EQ(::mkfifo((tmp / "in").c_str(), 0600), 0);
  const Outcome r =
      RunKiln("ingest --from " + Quote(tmp / "in") + " " + Quote(tmp / "out.klnt"), "2>&1");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("a FIFO with no writer"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(tmp / "out.klnt"));
  for (const auto& e : fs::directory_iterator(tmp.path())) {
    EXPECT_FALSE(e.path().filename().string().starts_with(".kiln-")) << e.path();
  }
}

// Before the fix a closed standard input let the output's temporary file
// become descriptor 0, and ingest read its own output back as the upload.
TEST(CliIo, ClosedStandardInputIsAnIoError) {
  TempDir tmp;
  const Outcome ingest = RunKiln("ingest " + Quote(tmp / "out.klnt"), "2>&1", "<&-");
  EXPECT_EQ(ingest.status, 2) << ingest.out;
  EXPECT_NE(ingest.out.find("standard input is closed"), std::string::npos) << ingest.out;
  EXPECT_FALSE(fs::exists(tmp / "out.klnt"));
  const Outcome validate = RunKiln("validate -", "2>&1", "<&-");
  EXPECT_EQ(validate.status, 2) << validate.out;
  EXPECT_NE(validate.out.find("standard input is closed"), std::string::npos) << validate.out;
}

// Before the fix a reader that went away (`kiln validate ... | head -1`)
// killed kiln with SIGPIPE: no message, status 141 in a shell. The test
// holds the read end of kiln's stdout, shrunk to one page, reads one byte
// and closes it while kiln is blocked on a full pipe with more to say. No
// shell: the earlier version put 3,000 quoted paths in one `sh -c` string,
// which passes the kernel's 128 KiB limit on one argument once the
// checkout's path is long enough, and then nothing ran at all.
TEST(CliIo, ReaderThatGoesAwayIsExit2) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  ASSERT_GT(::fcntl(p[0], F_SETPIPE_SZ, 4096), 0);
  const std::string file = std::string(::kiln::testing::GoldenDir()) + "/cases/kiln-v2-f32.klnt";
  std::vector<std::string> args = {"validate"};
  args.insert(args.end(), 3000, file);  // about 150 KB of report against a 4 KiB pipe
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(p[0]);
    ::signal(SIGPIPE, SIG_DFL);  // kiln must ignore it itself
    ::alarm(60);                 // a hang ends as SIGALRM, not as a stuck test
    testing::ExecKiln(args, -1, p[1], -1);
  }
  ::close(p[1]);
  char byte = 0;
  EXPECT_EQ(::read(p[0], &byte, 1), 1);  // kiln has started writing its report
  ::close(p[0]);
  int st = 0;
  ASSERT_EQ(::waitpid(pid, &st, 0), pid);
  ASSERT_TRUE(WIFEXITED(st)) << "killed by signal " << (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
  EXPECT_EQ(WEXITSTATUS(st), 2);
}

// Before the fix convert's list of the metadata it cannot carry over, on
// stderr, could be lost (2>/dev/full) while the run said success.
TEST(CliIo, LostMetadataReportIsExit2) {
  TempDir tmp;
  const std::string gguf = std::string(::kiln::testing::GoldenDir()) + "/../corpus/gguf/model.gguf";
  const std::string args = "convert " + Quote(gguf) + " " + Quote(tmp / "o.klnt");
  ASSERT_EQ(RunKiln(args, "2>/dev/null").status, 0);
  EXPECT_EQ(RunKiln(args, "2>/dev/full").status, 2);
}

// An input kiln cannot take is exit 1 with its reason on stderr; when that
// reason cannot be written (2>/dev/full) the run is exit 2, the report
// lost, whichever command: pack of a file that is not NumPy, convert of a
// file that is not safetensors.
TEST(CliIo, AnInvalidInputWhoseReasonIsLostIsExit2) {
  TempDir tmp;
  {
    std::ofstream(tmp / "bad.npy") << "not NumPy";
    std::ofstream(tmp / "bad.safetensors") << "not safetensors";
  }
  const std::vector<std::string> runs = {
      "pack " + Quote(tmp / "o.klnt") + " w=" + Quote(tmp / "bad.npy"),
      "convert " + Quote(tmp / "bad.safetensors") + " " + Quote(tmp / "o.klnt")};
  for (const std::string& args : runs) {
    EXPECT_EQ(RunKiln(args, "2>/dev/null").status, 1) << args;
    EXPECT_EQ(RunKiln(args, "2>/dev/full").status, 2) << args;
  }
  EXPECT_FALSE(std::filesystem::exists(tmp / "o.klnt"));
  // --version says what it is, exit 0.
  const Outcome v = RunKiln("--version", "2>&1");
  EXPECT_EQ(v.status, 0);
  EXPECT_TRUE(v.out.starts_with("kiln ") && v.out.ends_with(" (Kiln v2 tensor directory)\n"))
      << v.out;
}

// A name short in bytes but wide once escaped is cut too: twelve \x01 are
// 48 columns (the most a cell shows, shown whole), thirteen are 52 (cut to
// 45 columns and "...").
TEST(CliIo, InspectCutsANameThatEscapingMakesTooWide) {
  TempDir tmp;
  const auto escapes = [](const std::string& s) {
    std::size_t n = 0;
    for (std::size_t at = 0; (at = s.find("\\x01", at)) != std::string::npos; at += 4) ++n;
    return n;
  };
  WriteBlock(tmp / "w12.klnt", std::string(12, '\x01'), 1);
  const Outcome fits = RunKiln("inspect " + Quote(tmp / "w12.klnt"), "2>&1");
  ASSERT_EQ(fits.status, 0) << fits.out;
  EXPECT_EQ(escapes(fits.out), 12u) << fits.out;
  EXPECT_EQ(fits.out.find("..."), std::string::npos) << fits.out;
  WriteBlock(tmp / "w13.klnt", std::string(13, '\x01'), 1);
  const Outcome cut = RunKiln("inspect " + Quote(tmp / "w13.klnt"), "2>&1");
  ASSERT_EQ(cut.status, 0) << cut.out;
  EXPECT_EQ(escapes(cut.out), 11u) << cut.out;
  EXPECT_NE(cut.out.find("\\x01\\x01\\...  "), std::string::npos) << cut.out;
}

using testing::kAddressSanitizer;

// An input kiln cannot map (an address-space limit below the file's size):
// an I/O error (exit 2) that says why, never a crash.
TEST(CliIo, InputLargerThanTheAddressSpaceLimitIsAnIoError) {
  if (kAddressSanitizer) GTEST_SKIP() << "ASan reserves more address space than the limit";
  testing::ScratchDir tmp;
  const std::string big = tmp / "big.klnt";
  std::ofstream(big).close();
  std::filesystem::resize_file(big, std::uint64_t{1} << 30);  // sparse: takes no disk
  // 256 MiB of address space: enough to run kiln, not to map 1 GiB.
  const std::string cmd = "ulimit -v 262144 && timeout 60 " +
                          testing::Quote(::kiln::testing::KilnBinary()) + " validate " +
                          testing::Quote(big) + " 2>&1 </dev/null";
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
