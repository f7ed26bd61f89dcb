// Hostile conditions around the kiln command rather than hostile bytes in
// its input: a file-size limit hit mid-write, a writer that stalls, a report
// that cannot be written after the work is done, an input truncated while
// it is mapped, hostile names in machine output, and the temporaries a
// SIGKILL leaves behind.
#include <fcntl.h>
#include <linux/fs.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cli_run.h"
#include "gtest/gtest.h"
#include "kiln/writer.h"
#include "support/block_builder.h"
#include "support/immutable.h"
#include "support/paths.h"
#include "support/sanitizers.h"
#include "support/temp_dir.h"
#include "support/write_block.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using TempDir = testing::ScratchDir;

struct Ran {
  int status = -1;  // the raw wait status
  std::string err;  // what kiln wrote on stderr
  [[nodiscard]] int code() const { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }
};

// Runs kiln with `args`, stdin `in` (-1: /dev/null) and stdout `out` (-1:
// /dev/null), after `setup` ran in the child; collects stderr. SIGALRM ends
// a kiln that hangs after 60 s (the alarm survives the exec).
Ran RunKilnWith(
    const std::vector<std::string>& args, int in, int out,
    const std::function<void()>& setup = [] {}) {
  int e[2];
  Ran r;
  if (::pipe(e) != 0) return r;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(e[0]);
    for (const int sig : {SIGINT, SIGTERM, SIGHUP, SIGXFSZ, SIGBUS}) ::signal(sig, SIG_DFL);
    ::alarm(60);
    setup();
    testing::ExecKiln(args, in, out, e[1]);
  }
  ::close(e[1]);
  char buf[4096];
  ssize_t n = 0;
  while ((n = ::read(e[0], buf, sizeof(buf))) > 0) r.err.append(buf, static_cast<std::size_t>(n));
  ::close(e[0]);
  ::waitpid(pid, &r.status, 0);
  return r;
}

// RunKilnWith with `dir` as kiln's working directory (exit 126 if it cannot
// be entered).
Ran RunKilnIn(const std::string& dir, const std::vector<std::string>& args) {
  return RunKilnWith(args, -1, -1, [&dir] {
    if (::chdir(dir.c_str()) != 0) ::_exit(126);
  });
}

void WriteFile(const std::string& path, std::string_view bytes) {
  std::ofstream(path, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// One u8 tensor named "w" of `size` bytes of 1, as a whole block.
std::string BigBlock(std::uint64_t size) {
  const std::vector<std::uint8_t> payload(size, 1);
  BlockWriter w;
  TensorRequest r;
  r.name = "w";
  r.dtype = Dtype::kU8;
  r.shape = {size};
  EXPECT_TRUE(w.Add(r, Payload::Bytes(payload)).ok());
  const std::vector<std::uint8_t> bytes = testing::BlockBytes(w);
  return std::string(bytes.begin(), bytes.end());
}

// A NumPy 1.0 file of `size` u8 bytes of 1.
std::string BigNpy(std::uint64_t size) {
  std::string dict =
      "{'descr': '|u1', 'fortran_order': False, 'shape': (" + std::to_string(size) + ",), }";
  while ((10 + dict.size() + 1) % 64 != 0) dict += ' ';
  dict += '\n';
  std::string out = "\x93NUMPY\x01";
  out += '\0';
  out += static_cast<char>(dict.size() & 0xff);
  out += static_cast<char>(dict.size() >> 8);
  return out + dict + std::string(size, '\1');
}

// A safetensors file: `header` padded with spaces to a multiple of 8 bytes,
// after its length (u64, little-endian), then `size` data bytes of 1.
std::string SafetensorsBytes(std::string header, std::uint64_t size) {
  while (header.size() % 8 != 0) header += ' ';
  std::string out;
  for (int i = 0; i < 8; ++i) out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + std::string(size, '\1');
}

// A safetensors file with one U8 tensor "w" of `size` bytes of 1.
std::string BigSafetensors(std::uint64_t size) {
  return SafetensorsBytes(R"({"w":{"dtype":"U8","shape":[)" + std::to_string(size) +
                              R"(],"data_offsets":[0,)" + std::to_string(size) + "]}}",
                          size);
}

std::string ReadAll(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// The names in `dir`, sorted.
std::vector<std::string> Entries(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// ---------------------------------------------------------------------------
// Finding 1: a file-size limit (ulimit -f) hit mid-write. Before the fix each
// command died of SIGXFSZ (status "killed by signal 25") and left its
// temporary file or staging directory in o/.
TEST(CliHostile, FileSizeLimitIsAWriteErrorAndLeavesNothing) {
  TempDir tmp;
  constexpr std::uint64_t kSize = 4 << 20;  // 4 MiB, past the 1 MiB limit
  WriteFile(tmp / "in.klnt", BigBlock(kSize));
  WriteFile(tmp / "in.npy", BigNpy(kSize));
  WriteFile(tmp / "in.safetensors", BigSafetensors(kSize));
  fs::create_directory(tmp / "o");
  struct Case {
    const char* command;
    std::vector<std::string> args;
    bool stdin_block;
  };
  const Case cases[] = {
      {"ingest", {"ingest", tmp / "o/out.klnt"}, true},
      {"convert", {"convert", tmp / "in.safetensors", tmp / "o/out.klnt"}, false},
      {"pack", {"pack", tmp / "o/out.klnt", "w=" + (tmp / "in.npy")}, false},
      {"unpack", {"unpack", tmp / "in.klnt", tmp / "o/dir"}, false},
      {"convert", {"convert", tmp / "in.klnt", tmp / "o/out.safetensors"}, false},
  };
  for (const Case& c : cases) {
    const int in = c.stdin_block ? ::open((tmp / "in.klnt").c_str(), O_RDONLY) : -1;
    const int out = ::open((tmp / "stdout").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const Ran r = RunKilnWith(c.args, in, out, [] {
      const rlimit limit{1 << 20, 1 << 20};
      ::setrlimit(RLIMIT_FSIZE, &limit);
    });
    if (in >= 0) ::close(in);
    ::close(out);
    // Nothing reports an output that was not written.
    EXPECT_EQ(ReadAll(tmp / "stdout"), "") << c.command;
    EXPECT_TRUE(WIFEXITED(r.status))
        << c.command << ": killed by signal " << (WIFSIGNALED(r.status) ? WTERMSIG(r.status) : 0);
    EXPECT_EQ(r.code(), 2) << c.command << ": " << r.err;
    EXPECT_NE(r.err.find("File too large"), std::string::npos) << c.command << ": " << r.err;
    EXPECT_TRUE(Entries(tmp / "o").empty())
        << c.command << " left " << (Entries(tmp / "o").empty() ? "" : Entries(tmp / "o")[0]);
  }
}

// ---------------------------------------------------------------------------
// Finding 2: a writer that connects and then sends nothing. Before the fix
// validate and ingest waited for ever (there was no --idle-timeout: the
// runs below ended with "unknown option" instead of the timeout).
TEST(CliHostile, StalledWriterIsGivenUpOn) {
  TempDir tmp;
  fs::create_directory(tmp / "o");
  const std::string block = BigBlock(1 << 20);
  ASSERT_EQ(::mkfifo((tmp / "fifo").c_str(), 0600), 0);
  struct Case {
    const char* name;
    std::vector<std::string> args;
    bool via_fifo;  // the stream is a named FIFO given as a path, not stdin
  };
  const Case cases[] = {
      {"validate -", {"validate", "--idle-timeout", "1", "-"}, false},
      {"validate FIFO", {"validate", "--idle-timeout", "1", tmp / "fifo"}, true},
      {"ingest", {"ingest", "--idle-timeout", "1", tmp / "o/out.klnt"}, false},
      {"ingest --from FIFO",
       {"ingest", "--idle-timeout", "1", "--from", tmp / "fifo", tmp / "o/out.klnt"},
       true},
  };
  for (const Case& c : cases) {
    for (const std::size_t sent : {std::size_t{0}, std::size_t{100}, std::size_t{300'000}}) {
      int p[2] = {-1, -1};
      int writer = -1;
      int in = -1;
      if (c.via_fifo) {
        // Opened for reading and writing here, so kiln sees a connected writer.
        writer = ::open((tmp / "fifo").c_str(), O_RDWR);
      } else {
        ASSERT_EQ(::pipe(p), 0);
        writer = p[1];
        in = p[0];
      }
      ASSERT_GE(writer, 0);
      // What fits in the pipe (64 KiB), without blocking; then silence, the
      // writing end still open.
      ASSERT_EQ(::fcntl(writer, F_SETFL, O_NONBLOCK), 0);
      if (sent > 0) {
        ASSERT_GT(::write(writer, block.data(), sent), 0);
      }
      const auto start = std::chrono::steady_clock::now();
      const Ran r = RunKilnWith(c.args, in, -1, [] { ::alarm(20); });
      const double took =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      ::close(writer);
      if (in >= 0) ::close(in);
      EXPECT_EQ(r.code(), 2) << c.name << " after " << sent << " bytes, status " << r.status << ": "
                             << r.err;
      EXPECT_NE(r.err.find("no data for 1 s (--idle-timeout)"), std::string::npos)
          << c.name << " after " << sent << ": " << r.err;
      EXPECT_LT(took, 10.0) << c.name;
      EXPECT_TRUE(Entries(tmp / "o").empty()) << c.name << " after " << sent << " left a file";
    }
  }
}

// The flag's bounds: a value that is not a number of seconds is a usage
// error, and 0 (no timeout) still reads a writer that finishes.
TEST(CliHostile, IdleTimeoutFlagValues) {
  TempDir tmp;
  WriteFile(tmp / "in.klnt", BigBlock(1000));
  for (const char* bad : {"x", "-1", "86401", ""}) {
    const Ran r = RunKilnWith({"validate", "--idle-timeout", bad, "-"}, -1, -1);
    EXPECT_EQ(r.code(), 2) << bad;
    EXPECT_NE(r.err.find("--idle-timeout needs SECONDS"), std::string::npos) << bad << r.err;
  }
  const int in = ::open((tmp / "in.klnt").c_str(), O_RDONLY);
  const Ran r = RunKilnWith({"ingest", "--idle-timeout", "0", tmp / "out.klnt"}, in, -1);
  ::close(in);
  EXPECT_EQ(r.code(), 0) << r.err;
  EXPECT_TRUE(fs::exists(tmp / "out.klnt"));

  // Up to a day, before or after FILE; the flag last, without its value,
  // is the same usage error.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"validate", "--idle-timeout", "86400", tmp / "in.klnt"},
        {"validate", tmp / "in.klnt", "--idle-timeout", "86400"}}) {
    const Ran day = RunKilnWith(args, -1, -1);
    EXPECT_EQ(day.code(), 0) << args[1] << ": " << day.err;
  }
  const Ran last = RunKilnWith({"validate", tmp / "in.klnt", "--idle-timeout"}, -1, -1);
  EXPECT_EQ(last.code(), 2) << last.err;
  EXPECT_NE(last.err.find("--idle-timeout needs SECONDS (0 to 86400; 0: no timeout)"),
            std::string::npos)
      << last.err;
}

// ---------------------------------------------------------------------------
// Finding 3: the exit status alone says whether OUT (ingest, pack, convert)
// or DIR (unpack) was committed. Before the fix the report was written after
// the rename:
// with stdout at /dev/full the run was exit 2 with OUT in place, and with
// stdout closed exit 0 with the report lost.
TEST(CliHostile, ExitStatusAloneSaysWhetherTheOutputWasCommitted) {
  TempDir tmp;
  WriteFile(tmp / "in.klnt", BigBlock(100'000));
  WriteFile(tmp / "in.npy", BigNpy(100'000));
  struct Stdout {
    const char* name;
    int fd;  // -1 /dev/null, kClosed, or a descriptor
    int want;
  };
  const int full = ::open("/dev/full", O_WRONLY);
  ASSERT_GE(full, 0);
  const Stdout outs[] = {
      {"/dev/null", -1, 0}, {"/dev/full", full, 2}, {"closed", testing::kClosed, 2}};
  struct Command {
    const char* name;
    std::string target;
    std::vector<std::string> args;
    bool stdin_block;
  };
  const Command commands[] = {
      {"ingest", tmp / "out.klnt", {"ingest", tmp / "out.klnt"}, true},
      {"unpack", tmp / "dir", {"unpack", tmp / "in.klnt", tmp / "dir"}, false},
      {"pack", tmp / "p.klnt", {"pack", tmp / "p.klnt", "w=" + (tmp / "in.npy")}, false},
      {"convert to safetensors",
       tmp / "c.safetensors",
       {"convert", tmp / "in.klnt", tmp / "c.safetensors"},
       false},
  };
  for (const Stdout& o : outs) {
    for (const Command& c : commands) {
      fs::remove_all(c.target);
      const int in = c.stdin_block ? ::open((tmp / "in.klnt").c_str(), O_RDONLY) : -1;
      const Ran r = RunKilnWith(c.args, in, o.fd);
      if (in >= 0) ::close(in);
      EXPECT_EQ(r.code(), o.want) << c.name << " stdout " << o.name << ": " << r.err;
      // Exit 0 if and only if the output is in place.
      EXPECT_EQ(fs::exists(c.target), r.code() == 0) << c.name << " stdout " << o.name;
      if (o.want != 0) {
        EXPECT_NE(r.err.find("cannot write the output"), std::string::npos) << r.err;
      }
      for (const std::string& name : Entries(tmp.path())) {
        EXPECT_FALSE(name.starts_with(".kiln"))
            << c.name << " stdout " << o.name << " left " << name;
      }
    }
  }
  ::close(full);
}

// Commands that print without a report of their own (--help, --version,
// rules) on a standard output the caller closed: before, what they printed
// went to the /dev/null kiln put on descriptor 1, and they exited 0.
TEST(CliHostile, ClosedStandardOutputIsExit2ForEveryCommand) {
  const std::vector<std::vector<std::string>> commands = {
      {"--help"}, {"--version"}, {"rules"}, {"rules", "--markdown"}};
  for (const auto& args : commands) {
    const Ran r = RunKilnWith(args, -1, testing::kClosed);
    EXPECT_EQ(r.code(), 2) << args[0] << ": " << r.err;
    EXPECT_NE(r.err.find("standard output is closed"), std::string::npos) << r.err;
  }
}

// Standard input can be read once: a second "-" found it empty and was
// reported as an invalid block (FRAME H1, exit 1) instead of a usage error.
TEST(CliHostile, StandardInputTwiceIsAUsageError) {
  const Ran r = RunKilnWith({"validate", "-", "-"}, -1, -1);
  EXPECT_EQ(r.code(), 2) << r.err;
  EXPECT_NE(r.err.find("more than once"), std::string::npos) << r.err;
}

// convert lists the metadata it cannot carry on stderr. Before, a closed
// stderr became /dev/null: the list was lost, OUT committed, exit 0.
TEST(CliHostile, ClosedStandardErrorLosesNoDiagnostic) {
  TempDir tmp;
  const std::string header = R"({"__metadata__":{"format":"pt"},"w":{"dtype":"U8","shape":[8],)"
                             R"("data_offsets":[0,8]}})";
  std::string file(8, '\0');
  std::uint64_t n = header.size();
  for (int k = 0; k < 8; ++k) file[static_cast<std::size_t>(k)] = static_cast<char>(n >> (8 * k));
  file += header + std::string(8, '\1');
  WriteFile(tmp / "m.safetensors", file);
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(p[0]);
    testing::ExecKiln({"convert", tmp / "m.safetensors", tmp / "m.klnt"}, -1, p[1],
                      testing::kClosed);
  }
  ::close(p[1]);
  char buf[256];
  while (::read(p[0], buf, sizeof(buf)) > 0) {
  }
  ::close(p[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 2);
  EXPECT_FALSE(fs::exists(tmp / "m.klnt"));
  for (const std::string& name : Entries(tmp.path())) {
    EXPECT_FALSE(name.starts_with(".kiln")) << "left " << name;
  }
  // With stderr open the same conversion succeeds and says what it dropped.
  const Ran ok = RunKilnWith({"convert", tmp / "m.safetensors", tmp / "m.klnt"}, -1, -1);
  EXPECT_EQ(ok.code(), 0) << ok.err;
  EXPECT_NE(ok.err.find("format"), std::string::npos) << ok.err;
}

// ---------------------------------------------------------------------------
// Finding 5: hostile names in machine output. Before the fix inspect --json
// and validate --json passed C1, bidi, separator and tag characters through
// raw (and wrote a file name's byte 0xE9 as \u00e9, the same as the
// character), and index.tsv passed everything but C0, DEL and C1 raw.
struct HostileName {
  const char* label;
  std::string name;
  const char* json;  // how --json writes it (inside the quotes)
  const char* tsv;   // how index.tsv writes it
};

std::vector<HostileName> HostileNames() {
  return {
      {"c1 NEL",
       "a\xc2\x85"
       "b",
       "a\\u0085b", "a\\u{0085}b"},
      {"c1 CSI",
       "\xc2\x9b"
       "31m",
       "\\u009b31m", "\\u{009b}31m"},
      {"right-to-left override",
       "exe.\xe2\x80\xae"
       "fdp",
       "exe.\\u202efdp", "exe.\\u{202e}fdp"},
      {"isolates", "\xe2\x81\xa6x\xe2\x81\xa9", "\\u2066x\\u2069", "\\u{2066}x\\u{2069}"},
      {"line separator",
       "a\xe2\x80\xa8"
       "b",
       "a\\u2028b", "a\\u{2028}b"},
      {"paragraph separator",
       "a\xe2\x80\xa9"
       "b",
       "a\\u2029b", "a\\u{2029}b"},
      {"tag", "t\xf3\xa0\x81\x81", "t\\udb40\\udc41", "t\\u{e0041}"},
      {"tab forges a column", "a\tb", "a\\u0009b", "a\\x09b"},
      {"newline forges a row", "a\n9\tx\tf32", "a\\u000a9\\u0009x\\u0009f32",
       "a\\x0a9\\x09x\\x09f32"},
      {"backslash", "a\\x09", "a\\\\x09", "a\\\\x09"},
      {"quote", "a\"b", "a\\\"b", "a\"b"},
      // Noncharacters (no font draws them; the page showed blank boxes): the
      // first and last of U+FDD0..U+FDEF, the end of planes 0, 1 and 16.
      {"noncharacters FDD0 FDEF", "n\xef\xb7\x90\xef\xb7\xaf", "n\\ufdd0\\ufdef",
       "n\\u{fdd0}\\u{fdef}"},
      {"noncharacters FFFE FFFF", "n\xef\xbf\xbe\xef\xbf\xbf", "n\\ufffe\\uffff",
       "n\\u{fffe}\\u{ffff}"},
      {"noncharacter 1FFFE", "n\xf0\x9f\xbf\xbe", "n\\ud83f\\udffe", "n\\u{1fffe}"},
      {"noncharacter 10FFFF", "n\xf4\x8f\xbf\xbf", "n\\udbff\\udfff", "n\\u{10ffff}"},
      // Their neighbours U+FDCF, U+FDF0, U+FFFD and U+10FFFD are characters.
      {"neighbours of noncharacters", "n\xef\xb7\x8f\xef\xb7\xb0\xef\xbf\xbd\xf4\x8f\xbf\xbd",
       "n\xef\xb7\x8f\xef\xb7\xb0\xef\xbf\xbd\xf4\x8f\xbf\xbd",
       "n\xef\xb7\x8f\xef\xb7\xb0\xef\xbf\xbd\xf4\x8f\xbf\xbd"},
  };
}

std::string HostileNamesBlock() {
  BlockWriter w;
  const std::vector<std::uint8_t> payload(4, 0);
  for (const HostileName& h : HostileNames()) {
    TensorRequest r;
    r.name = h.name;
    r.dtype = Dtype::kU8;
    r.shape = {4};
    EXPECT_TRUE(w.Add(r, Payload::Bytes(payload)).ok()) << h.label;
  }
  const std::vector<std::uint8_t> bytes = testing::BlockBytes(w);
  return std::string(bytes.begin(), bytes.end());
}

// Whether `text` holds one of the characters the reports must never print raw.
bool HasHiddenCharacter(const std::string& text) {
  for (const char* raw : {"\xc2\x85", "\xc2\x9b", "\xe2\x80\xae", "\xe2\x81\xa6", "\xe2\x80\xa8",
                          "\xe2\x80\xa9", "\xf3\xa0\x81\x81", "\t", "\xef\xb7\x90", "\xef\xb7\xaf",
                          "\xef\xbf\xbe", "\xef\xbf\xbf", "\xf0\x9f\xbf\xbe", "\xf4\x8f\xbf\xbf"}) {
    if (text.find(raw) != std::string::npos) return true;
  }
  return false;
}

TEST(CliHostile, InspectJsonEscapesHostileNames) {
  TempDir tmp;
  WriteFile(tmp / "in.klnt", HostileNamesBlock());
  const int out = ::open((tmp / "out.json").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  const Ran r = RunKilnWith({"inspect", "--json", tmp / "in.klnt"}, -1, out);
  ::close(out);
  ASSERT_EQ(r.code(), 0) << r.err;
  const std::string json = ReadAll(tmp / "out.json");
  EXPECT_FALSE(HasHiddenCharacter(json)) << json;
  for (const HostileName& h : HostileNames()) {
    EXPECT_NE(json.find("\"" + std::string(h.json) + "\""), std::string::npos)
        << h.label << " not written as " << h.json << " in " << json;
  }
}

TEST(CliHostile, IndexTsvEscapesHostileNames) {
  TempDir tmp;
  WriteFile(tmp / "in.klnt", HostileNamesBlock());
  const Ran r = RunKilnWith({"unpack", tmp / "in.klnt", tmp / "dir"}, -1, -1);
  ASSERT_EQ(r.code(), 0) << r.err;
  const std::string tsv = ReadAll(tmp / "dir/index.tsv");
  std::vector<std::string> lines;
  for (std::size_t at = 0; at < tsv.size();) {
    const std::size_t nl = tsv.find('\n', at);
    ASSERT_NE(nl, std::string::npos) << "last line unterminated";
    lines.push_back(tsv.substr(at, nl - at));
    at = nl + 1;
  }
  const std::vector<HostileName> names = HostileNames();
  ASSERT_EQ(lines.size(), names.size() + 1) << "a name forged a row:\n" << tsv;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string& line = lines[i + 1];
    EXPECT_EQ(std::count(line.begin(), line.end(), '\t'), 7) << names[i].label << ": " << line;
    EXPECT_TRUE(line.starts_with(std::to_string(i) + "\t" + names[i].tsv + "\t"))
        << names[i].label << ": " << line << " (want " << names[i].tsv << ")";
  }
}

// A file name (any bytes) in validate --json: the byte 0xE9 is \udce9 (as
// Python's surrogateescape reads it), the character U+00E9 is itself.
TEST(CliHostile, JsonFileNamesAreUnambiguous) {
  TempDir tmp;
  const std::string block = BigBlock(8);
  const std::string byte_name = tmp / "caf\xe9.klnt";
  const std::string char_name = tmp / "caf\xc3\xa9.klnt";
  const std::string bidi_name = tmp /
                                "exe.\xe2\x80\xae"
                                "fdp.klnt";
  for (const std::string& p : {byte_name, char_name, bidi_name}) WriteFile(p, block);
  const int out = ::open((tmp / "out.json").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  const Ran r = RunKilnWith({"validate", "--json", byte_name, char_name, bidi_name}, -1, out);
  ::close(out);
  ASSERT_EQ(r.code(), 0) << r.err;
  const std::string json = ReadAll(tmp / "out.json");
  EXPECT_NE(json.find("caf\\udce9.klnt\""), std::string::npos) << json;
  EXPECT_NE(json.find("caf\xc3\xa9.klnt\""), std::string::npos) << json;
  EXPECT_NE(json.find("exe.\\u202efdp.klnt\""), std::string::npos) << json;
  EXPECT_EQ(json.find("\\u00e9"), std::string::npos) << json;
  EXPECT_FALSE(HasHiddenCharacter(json)) << json;
}

// Noncharacters in a file name and in tensor names, through every report
// of a valid and of a rejected block: the text reports write \u{NNNN} (as
// base::Escape), --json writes \uNNNN (a surrogate pair above U+FFFF), and
// neither writes one raw; U+FDCF, U+FDF0, U+FFFD and U+10FFFD stay as they
// are. Before the fix only `inspect --map` escaped U+FFFE and U+FFFF.
TEST(CliHostile, NoncharactersAreEscapedInEveryReport) {
  TempDir tmp;
  // The file name holds U+FFFE and U+10FFFF; the block, every name of
  // HostileNames() (the noncharacter rows among them).
  const std::string valid = tmp / "v\xef\xbf\xbe\xf4\x8f\xbf\xbf.klnt";
  WriteFile(valid, HostileNamesBlock());
  // A rejection that quotes a name: tensor 1 repeats tensor 0's name (N5).
  testing::BlockSpec spec;
  for (int i = 0; i < 2; ++i) {
    testing::TensorSpec t;
    t.name = "d\xef\xb7\x90\xef\xbf\xbf\xf0\x9f\xbf\xbe\xef\xbf\xbd";  // FDD0 FFFF 1FFFE FFFD
    spec.tensors.push_back(t);
  }
  const testing::Buffer dup = testing::Build(spec);
  const std::string rejected = tmp / "r\xef\xb7\xaf.klnt";  // U+FDEF
  WriteFile(rejected, std::string(dup.begin(), dup.end()));

  const auto run = [&](const std::vector<std::string>& args, int want) {
    const std::string path = tmp / "out";
    const int out = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const Ran r = RunKilnWith(args, -1, out);
    ::close(out);
    EXPECT_EQ(r.code(), want) << args[0] << " " << args[1] << ": " << r.err;
    EXPECT_FALSE(HasHiddenCharacter(r.err)) << r.err;
    return ReadAll(path);
  };

  const std::string text = run({"inspect", valid}, 0);
  EXPECT_FALSE(HasHiddenCharacter(text)) << text;
  EXPECT_TRUE(text.starts_with(tmp / "v\\u{fffe}\\u{10ffff}.klnt: ok\n")) << text;
  for (const HostileName& h : HostileNames()) {
    if (std::string_view(h.label).find("noncharacter") == std::string_view::npos) continue;
    EXPECT_NE(text.find(" " + std::string(h.tsv) + " "), std::string::npos)
        << h.label << " not written as " << h.tsv << " in " << text;
  }

  const std::string json = run({"inspect", "--json", valid}, 0);
  EXPECT_FALSE(HasHiddenCharacter(json)) << json;
  EXPECT_NE(json.find("v\\ufffe\\udbff\\udfff.klnt\""), std::string::npos) << json;

  const std::string both = run({"validate", "--json", valid, rejected}, 1);
  EXPECT_FALSE(HasHiddenCharacter(both)) << both;
  EXPECT_NE(both.find("v\\ufffe\\udbff\\udfff.klnt\""), std::string::npos) << both;
  EXPECT_NE(both.find("r\\ufdef.klnt\""), std::string::npos) << both;
  // The message quotes the name as the text reports do (base::Quoted), and
  // --json escapes that text's backslashes and quotes.
  EXPECT_NE(both.find("name \\\"d\\\\u{fdd0}\\\\u{ffff}\\\\u{1fffe}\xef\xbf\xbd\\\" (14 bytes) "
                      "repeats the name of tensor 0"),
            std::string::npos)
      << both;

  const std::string verdict = run({"validate", rejected}, 1);
  EXPECT_FALSE(HasHiddenCharacter(verdict)) << verdict;
  EXPECT_NE(verdict.find("r\\u{fdef}.klnt: "), std::string::npos) << verdict;
  EXPECT_NE(verdict.find("name \"d\\u{fdd0}\\u{ffff}\\u{1fffe}\xef\xbf\xbd\" (14 bytes)"),
            std::string::npos)
      << verdict;
}

// ---------------------------------------------------------------------------
// Finding 6: temporaries a SIGKILL leaves. Before the fix they were named
// .kiln-XXXXXX (nothing said which process made them) and nothing removed
// them: `kiln clean` did not exist.

// Starts kiln with a pipe as stdin; returns its pid and the pipe's write end.
std::pair<pid_t, int> SpawnWithPipe(const std::vector<std::string>& args) {
  int p[2];
  if (::pipe(p) != 0) return {-1, -1};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(p[1]);
    testing::ExecKiln(args, p[0], -1, -1);
  }
  ::close(p[0]);
  return {pid, p[1]};
}

// The first entry of `dir` named .kiln-tmp.*, waiting (at most 20 s) until
// it is a file of at least `bytes` (a directory with something in it when
// `bytes` is 0).
std::string WaitForTemporary(const fs::path& dir, std::uintmax_t bytes) {
  for (int i = 0; i < 20000; ++i) {
    for (const std::string& name : Entries(dir)) {
      if (!name.starts_with(".kiln-tmp.")) continue;
      std::error_code ec;
      const fs::path p = dir / name;
      if (bytes == 0 && fs::is_directory(p, ec) && !fs::is_empty(p, ec)) return name;
      if (bytes > 0 && fs::is_regular_file(p, ec) && fs::file_size(p, ec) >= bytes && !ec) {
        return name;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return "";
}

TEST(CliHostile, CleanRemovesOnlyTheTemporariesOfDeadKilns) {
  ::signal(SIGPIPE, SIG_IGN);
  TempDir tmp;
  const fs::path o = tmp.path() / "o";
  fs::create_directory(o);
  // An ingest killed mid-upload.
  const std::string block = BigBlock(4'000'000);
  auto [ingest, in] = SpawnWithPipe({"ingest", (o / "out.klnt").string()});
  ASSERT_GT(ingest, 0);
  ASSERT_EQ(::write(in, block.data(), 1'000'000), 1'000'000);
  const std::string left_file = WaitForTemporary(o, 500'000);
  ASSERT_FALSE(left_file.empty());
  EXPECT_TRUE(left_file.starts_with(".kiln-tmp." + std::to_string(ingest) + "."))
      << left_file << " does not name process " << ingest;
  ::kill(ingest, SIGKILL);
  ::waitpid(ingest, nullptr, 0);
  ::close(in);
  // An unpack killed mid-write: its staging directory.
  WriteFile(tmp / "big.klnt", BigBlock(std::uint64_t{64} << 20));
  auto [unpack, unused] = SpawnWithPipe({"unpack", tmp / "big.klnt", (o / "dir").string()});
  const std::string left_dir = WaitForTemporary(o, 0);
  ASSERT_FALSE(left_dir.empty());
  ::kill(unpack, SIGKILL);
  ::waitpid(unpack, nullptr, 0);
  ::close(unused);
  ASSERT_TRUE(fs::exists(o / left_file));
  ASSERT_TRUE(fs::is_directory(o / left_dir));

  // What clean must leave alone.
  WriteFile(tmp / "victim", "victim");
  const std::string live = ".kiln-tmp." + std::to_string(::getpid()) + ".Abc123";
  WriteFile((o / live).string(), "a live process's temporary");
  fs::create_symlink(tmp / "victim", o / ".kiln-tmp.999999.abcdef");  // a look-alike link
  fs::create_directory(o / ".kiln-tmp.999998.zzzzzz");                // holds a link
  fs::create_symlink(tmp / "victim", o / ".kiln-tmp.999998.zzzzzz/x");
  fs::create_directory_symlink(tmp.path(), o / ".kiln-tmp.999997.linked");
  const std::vector<std::string> others = {"unrelated.txt", ".kiln-tmp.123.abc", ".kiln-ABCdef",
                                           ".kiln-tmp.0123.abcdef", ".kiln-tmp.12.abcdef.x"};
  for (const std::string& name : others) WriteFile((o / name).string(), name);

  // The default minimum age (an hour) keeps what was just killed.
  const Ran young = RunKilnWith({"clean", o.string()}, -1, -1);
  EXPECT_EQ(young.code(), 0) << young.err;
  EXPECT_TRUE(fs::exists(o / left_file));
  EXPECT_TRUE(fs::exists(o / left_dir));

  const Ran r = RunKilnWith({"clean", "--min-age", "0", o.string()}, -1, -1);
  EXPECT_EQ(r.code(), 0) << r.err;
  EXPECT_FALSE(fs::exists(o / left_file)) << "the killed ingest's temporary stayed";
  EXPECT_FALSE(fs::exists(o / left_dir)) << "the killed unpack's staging directory stayed";
  EXPECT_TRUE(fs::exists(o / live)) << "a live process's temporary was removed";
  EXPECT_TRUE(fs::is_symlink(o / ".kiln-tmp.999999.abcdef"));
  EXPECT_TRUE(fs::is_symlink(o / ".kiln-tmp.999998.zzzzzz/x"));
  EXPECT_TRUE(fs::is_symlink(o / ".kiln-tmp.999997.linked"));
  EXPECT_EQ(ReadAll(tmp / "victim"), "victim");
  for (const std::string& name : others) EXPECT_EQ(ReadAll((o / name).string()), name) << name;
  EXPECT_FALSE(fs::exists(o / "out.klnt"));
  EXPECT_TRUE(fs::exists(tmp / "big.klnt"));  // nothing outside DIR

  // DIR itself may not be a symlink; a missing DIR is an I/O error.
  fs::create_directory_symlink(o, tmp.path() / "link");
  EXPECT_EQ(RunKilnWith({"clean", tmp / "link"}, -1, -1).code(), 2);
  // Nor through "link/" (a trailing slash makes open() follow the link even
  // with O_NOFOLLOW): before, this removed the stale temporary inside.
  WriteFile(o / ".kiln-tmp.999996.qqqqqq", "stale");
  for (const char* slashes : {"/", "//"}) {
    EXPECT_EQ(RunKilnWith({"clean", "--min-age", "0", (tmp / "link") + slashes}, -1, -1).code(), 2)
        << slashes;
    EXPECT_TRUE(fs::exists(o / ".kiln-tmp.999996.qqqqqq")) << slashes;
  }
  EXPECT_EQ(RunKilnWith({"clean", tmp / "missing"}, -1, -1).code(), 2);
  EXPECT_EQ(RunKilnWith({"clean"}, -1, -1).code(), 2);
}

// The start of a temporary's name whose process is gone: PID 2^31-1, above
// any pid_max, so no process can hold it.
constexpr char kDeadTemporary[] = ".kiln-tmp.2147483647.";

// Sets the access and modification times of `path` (not following a link)
// to `seconds_ago` before now.
void SetAge(const fs::path& path, std::time_t seconds_ago) {
  const std::time_t when = std::time(nullptr) - seconds_ago;
  const timespec times[2] = {{when, 0}, {when, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW), 0) << path;
}

// What kiln clean says about each temporary it finds, and what it does,
// with and without --dry-run. The live process is this test. Ages: two
// hours old, just now, and an hour in the future.

TEST(CliHostile, CleanSaysWhatItKeepsAndWhy) {
  TempDir tmp;
  const fs::path o = tmp.path() / "o";
  fs::create_directory(o);
  const std::string dead = kDeadTemporary;
  // Removed: an old file and an old staging directory of plain old files.
  WriteFile(o / (dead + "file01"), "x");
  fs::create_directory(o / (dead + "dir001"));
  for (const char* f : {"a", "b"}) {
    WriteFile(o / (dead + "dir001") / f, f);
    SetAge(o / (dead + "dir001") / f, 7200);
  }
  // Kept, each for its own reason.
  fs::create_directory(o / (dead + "subdir"));
  fs::create_directory(o / (dead + "subdir") / "sub");
  fs::create_directory(o / (dead + "young1"));
  WriteFile(o / (dead + "young1") / "new", "n");
  WriteFile(o / (dead + "young2"), "y");
  WriteFile(o / (dead + "future"), "f");
  ASSERT_EQ(::mkfifo((o / (dead + "fifo01")).c_str(), 0600), 0);
  fs::create_symlink(tmp / "elsewhere", o / (dead + "link01"));
  const std::string live = ".kiln-tmp." + std::to_string(::getpid()) + ".live01";
  WriteFile(o / live, "l");
  for (const std::string& old : {dead + "file01", dead + "dir001", dead + "subdir", dead + "young1",
                                 dead + "fifo01", live}) {
    SetAge(o / old, 7200);
  }
  SetAge(o / (dead + "link01"), 7200);
  SetAge(o / (dead + "future"), -3600);
  const std::vector<std::string> kept = {
      "kept " + dead + "subdir: holds \"sub\", which is not a regular file\n",
      "kept " + dead + "young1: holds a file younger than 3600 s\n",
      "kept " + dead + "young2: younger than 3600 s\n",
      "kept " + dead + "future: younger than 3600 s\n",
      "kept " + dead + "fifo01: not a regular file or directory\n",
      "kept " + dead + "link01: a symbolic link, not a kiln temporary\n",
      "kept " + live + ": process " + std::to_string(::getpid()) + " is running\n",
  };
  const auto entries = Entries(o);
  const auto expect_report = [&](const testing::Outcome& r, const std::string& verb,
                                 const std::string& summary) {
    EXPECT_EQ(r.status, 0) << r.out;
    for (const std::string& line : kept)
      EXPECT_NE(r.out.find(line), std::string::npos) << line << r.out;
    for (const std::string& gone : {dead + "file01", dead + "dir001"}) {
      EXPECT_NE(r.out.find(verb + " " + gone + "\n"), std::string::npos) << gone << r.out;
    }
    EXPECT_TRUE(r.out.ends_with(summary)) << r.out;
  };
  const testing::Outcome dry =
      testing::RunKiln("clean --dry-run " + testing::Quote(o.string()), "2>&1");
  expect_report(dry, "would remove", "2 to remove, 7 kept\n");
  EXPECT_EQ(Entries(o), entries) << "--dry-run removed something";

  const testing::Outcome r = testing::RunKiln("clean " + testing::Quote(o.string()), "2>&1");
  expect_report(r, "removed", "2 removed, 7 kept\n");
  EXPECT_FALSE(fs::exists(o / (dead + "file01")));
  EXPECT_FALSE(fs::exists(o / (dead + "dir001")));
  EXPECT_EQ(Entries(o).size(), entries.size() - 2);
}

// kiln clean's arguments: options after DIR, "-" as a directory's name, the
// root directory (a "/" that is all slashes is not trimmed to nothing), and
// --min-age without its value.
TEST(CliHostile, CleanArguments) {
  TempDir tmp;
  const fs::path o = tmp.path() / "o";
  fs::create_directory(o);
  WriteFile(o / (std::string(kDeadTemporary) + "abcdef"), "x");
  const testing::Outcome late =
      testing::RunKiln("clean --dry-run " + testing::Quote(o.string()) + " --min-age 0", "2>&1");
  EXPECT_EQ(late.status, 0) << late.out;
  EXPECT_TRUE(late.out.ends_with("1 to remove, 0 kept\n")) << late.out;

  const testing::Outcome dash = testing::RunKiln("clean --dry-run -", "2>&1", "</dev/null");
  EXPECT_EQ(dash.status, 2) << dash.out;
  EXPECT_TRUE(dash.out.starts_with("kiln clean: -: No such file or directory\n")) << dash.out;

  const testing::Outcome root = testing::RunKiln("clean --dry-run /", "2>/dev/null");
  EXPECT_EQ(root.status, 0) << root.out;
  EXPECT_NE(root.out.find(" to remove, "), std::string::npos) << root.out;

  // Standard input closed: kiln puts /dev/null in its place before any
  // command runs, and clean works as before.
  const testing::Outcome no_stdin = testing::RunKiln(
      "clean --dry-run " + testing::Quote(o.string()) + " --min-age 0", "2>&1", "<&-");
  EXPECT_EQ(no_stdin.status, 0) << no_stdin.out;
  EXPECT_TRUE(no_stdin.out.ends_with("1 to remove, 0 kept\n")) << no_stdin.out;

  const testing::Outcome no_value = testing::RunKiln("clean --min-age", "2>&1");
  EXPECT_EQ(no_value.status, 2) << no_value.out;
  EXPECT_TRUE(no_value.out.starts_with("kiln clean: --min-age needs SECONDS\n")) << no_value.out;
}

using testing::SetImmutable;

// A temporary kiln clean cannot remove (an immutable file, alone or inside
// a staging directory) is an error that names it and why (exit 2), never
// reported as removed; the others are removed all the same.
TEST(CliHostile, CleanNamesWhatItCannotRemove) {
  TempDir tmp;
  const fs::path o = tmp.path() / "o";
  fs::create_directory(o);
  const std::string dead = kDeadTemporary;
  WriteFile(o / (dead + "stuck1"), "x");
  fs::create_directory(o / (dead + "stuck2"));
  WriteFile(o / (dead + "stuck2") / "f", "y");
  WriteFile(o / (dead + "gone01"), "z");
  if (!SetImmutable(o / (dead + "stuck1"), true)) {
    GTEST_SKIP() << "no immutable attribute here (file system or capability)";
  }
  ASSERT_TRUE(SetImmutable(o / (dead + "stuck2") / "f", true));
  const testing::Outcome r =
      testing::RunKiln("clean --min-age 0 " + testing::Quote(o.string()), "2>&1");
  EXPECT_TRUE(SetImmutable(o / (dead + "stuck1"), false));
  EXPECT_TRUE(SetImmutable(o / (dead + "stuck2") / "f", false));
  EXPECT_EQ(r.status, 2) << r.out;
  for (const std::string& name : {dead + "stuck1", dead + "stuck2"}) {
    EXPECT_NE(r.out.find("kiln clean: " + o.string() + ": cannot remove " + name +
                         ": Operation not permitted\n"),
              std::string::npos)
        << name << "\n"
        << r.out;
    EXPECT_EQ(r.out.find("removed " + name), std::string::npos) << r.out;
  }
  EXPECT_NE(r.out.find("removed " + dead + "gone01\n"), std::string::npos) << r.out;
  EXPECT_TRUE(r.out.ends_with("1 removed, 2 kept\n")) << r.out;
  EXPECT_FALSE(fs::exists(o / (dead + "gone01")));
  EXPECT_TRUE(fs::exists(o / (dead + "stuck2") / "f"));
}

// DIR given as a symbolic link is refused as one, with or without
// trailing slashes, however short its name ("L/" is two characters; open()
// would follow "L/" despite O_NOFOLLOW): nothing behind the link is
// touched. Before, the message was open()'s ENOTDIR, "Not a directory".
TEST(CliHostile, CleanRefusesALinkWithOrWithoutSlashes) {
  TempDir tmp;
  const fs::path real = tmp.path() / "real";
  const fs::path left = real / (std::string(kDeadTemporary) + "abcdef");
  fs::create_directory(real);
  WriteFile(left, "x");
  fs::create_directory_symlink(real, tmp.path() / "L");
  const std::string where = tmp.path();
  for (const char* dir : {"L", "L/", "L//"}) {
    const Ran r = RunKilnIn(where, {"clean", "--min-age", "0", dir});
    EXPECT_EQ(r.code(), 2) << dir << ": " << r.err;
    EXPECT_EQ(r.err, "kiln clean: L: is a symbolic link (give the directory itself)\n") << dir;
  }
  EXPECT_TRUE(fs::exists(left));
  // Not a link: the reason open() gave.
  WriteFile(tmp.path() / "f", "x");
  for (const auto& [dir, why] :
       {std::pair{"f", "Not a directory"}, std::pair{"missing", "No such file or directory"}}) {
    const Ran r = RunKilnIn(where, {"clean", dir});
    EXPECT_EQ(r.code(), 2) << dir;
    EXPECT_EQ(r.err, std::string("kiln clean: ") + dir + ": " + why + "\n");
  }
}

// With descriptors running out (RLIMIT_NOFILE from 3 to 32) kiln clean
// lists and removes, or stops with the reason, exit 2: at the limit where
// DIR opens but its listing's descriptor does not, "cannot list: Too many
// open files". Never a crash, never a listing of a descriptor that failed
// ("Bad file descriptor"), and the dead temporary is removed or left whole.
TEST(CliHostile, CleanWithDescriptorsRunningOut) {
  TempDir tmp;
  const fs::path o = tmp.path() / "o";
  const std::string staged = std::string(kDeadTemporary) + "dir001";
  bool list_failed = false;
  bool removed = false;
  for (rlim_t limit = 3; limit <= 32; ++limit) {
    const std::string label = "RLIMIT_NOFILE " + std::to_string(limit);
    fs::create_directories(o / staged);
    WriteFile(o / staged / "f", "x");
    const auto limited = [limit] {
      const rlimit l = {limit, limit};
      ::setrlimit(RLIMIT_NOFILE, &l);
    };
    // Below what kiln needs to start at all (the dynamic loader's, or a
    // sanitizer runtime's, descriptors) there is nothing of kiln's to test.
    if (RunKilnWith({"--version"}, -1, -1, limited).code() != 0) continue;
    const int out = ::open((tmp / "out").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    ASSERT_GE(out, 0);
    const Ran r = RunKilnWith({"clean", "--min-age", "0", o.string()}, -1, out, limited);
    ::close(out);
    const std::string said = ReadAll(tmp / "out") + r.err;
    ASSERT_TRUE(WIFEXITED(r.status)) << label << ": killed by signal " << WTERMSIG(r.status);
    EXPECT_EQ(said.find("Bad file descriptor"), std::string::npos) << label << ": " << said;
    if (r.code() == 0) {  // removed, or kept with the reason
      if (fs::exists(o / staged)) {
        EXPECT_NE(said.find("kept " + staged + ": cannot "), std::string::npos) << label << said;
        EXPECT_NE(said.find("Too many open files"), std::string::npos) << label << said;
        EXPECT_TRUE(fs::exists(o / staged / "f")) << label;
      } else {
        EXPECT_NE(said.find("removed " + staged), std::string::npos) << label << said;
        removed = true;
      }
      continue;
    }
    EXPECT_EQ(r.code(), 2) << label << ": " << r.err;
    EXPECT_NE(r.err.find("Too many open files"), std::string::npos) << label << ": " << r.err;
    list_failed |= r.err == "kiln clean: " + o.string() + ": cannot list: Too many open files\n";
    EXPECT_TRUE(!fs::exists(o / staged) || fs::exists(o / staged / "f")) << label << ": " << r.err;
  }
  // Under ASan the one limit at which DIR opens and its listing cannot is
  // below what the runtime needs (its checks open a pipe): kiln does not start.
  if (!testing::kAddressSanitizer) {
    EXPECT_TRUE(list_failed) << "no limit stopped kiln clean at the listing of DIR";
  }
  EXPECT_TRUE(removed) << "no limit let kiln clean finish";
}

// Runs kiln with `args`, its standard error a terminal (a pseudo-terminal
// whose other end this test reads); returns what it showed there and sets
// `code` to its exit status.
std::string RunOnATerminal(const std::vector<std::string>& args, int* code) {
  *code = -1;
  const int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0) return "";
  const std::string slave_path = ::ptsname(master);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setsid();
    const int slave = ::open(slave_path.c_str(), O_RDWR);
    if (slave < 0) ::_exit(127);
    testing::ExecKiln(args, -1, -1, slave);
  }
  std::string shown;
  char buf[4096];
  ssize_t n = 0;
  // EIO once kiln (the last holder of the terminal) has exited.
  while ((n = ::read(master, buf, sizeof(buf))) > 0) shown.append(buf, static_cast<std::size_t>(n));
  ::close(master);
  int status = 0;
  ::waitpid(pid, &status, 0);
  *code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return shown;
}

// On a terminal, kiln convert of more than 64 MiB (and only then) shows its
// progress: after
// each MiB the percent done, rounded down, over the last line (a carriage
// return), the last "100% (65 of 65 MiB)" and then a new line; both ways,
// safetensors to kiln and back.
TEST(CliHostile, ConvertShowsItsProgressOnATerminal) {
  TempDir tmp;
  WriteFile(tmp / "in.safetensors", BigSafetensors(std::uint64_t{65} << 20));
  for (const auto& [in, out] : {std::pair{tmp / "in.safetensors", tmp / "mid.klnt"},
                                std::pair{tmp / "mid.klnt", tmp / "out.safetensors"}}) {
    int code = -1;
    const std::string shown = RunOnATerminal({"convert", in, out}, &code);
    EXPECT_EQ(code, 0) << shown;
    std::vector<int> percents;
    for (std::size_t at = shown.find("\rkiln convert: "); at != std::string::npos;
         at = shown.find("\rkiln convert: ", at + 1)) {
      percents.push_back(std::atoi(shown.c_str() + at + 15));
    }
    ASSERT_FALSE(percents.empty()) << in << ": " << shown;
    // Advanced a MiB at a time: 1 of 65 is 1%, 2 of 65 is 3%.
    EXPECT_EQ(percents.front(), 1) << in;
    EXPECT_EQ(percents.size(), 65u) << in;
    for (std::size_t i = 1; i < percents.size(); ++i) {
      EXPECT_EQ(percents[i], static_cast<int>((i + 1) * 100 / 65)) << in << " at " << i;
    }
    EXPECT_TRUE(shown.ends_with("\rkiln convert: 100% (65 of 65 MiB)\r\n")) << in << ": " << shown;
  }
  EXPECT_EQ(ReadAll(tmp / "out.safetensors"), ReadAll(tmp / "in.safetensors"));
  // 64 MiB exactly is not more than 64 MiB: nothing is shown.
  WriteFile(tmp / "64.safetensors", BigSafetensors(std::uint64_t{64} << 20));
  int code = -1;
  EXPECT_EQ(RunOnATerminal({"convert", tmp / "64.safetensors", tmp / "64.klnt"}, &code), "");
  EXPECT_EQ(code, 0);
}

// kiln pack: an argument without a NAME (no '=', or nothing before it) is
// a usage error that names it, never a tensor named after its path or an
// unnamed one; --max-tensors N takes N inputs; and its progress on a
// terminal ends at 100% of what it packs.
TEST(CliHostile, PackArgumentsAndProgress) {
  TempDir tmp;
  const std::string npy = tmp / "a.npy";
  WriteFile(npy, BigNpy(std::uint64_t{65} << 20));
  for (const std::string& arg : {npy, "=" + npy}) {
    const Ran r = RunKilnWith({"pack", tmp / "out.klnt", arg}, -1, -1);
    EXPECT_EQ(r.code(), 2) << arg;
    EXPECT_TRUE(r.err.starts_with("kiln pack: argument \"" + arg + "\" is not NAME=FILE.npy\n"))
        << r.err;
    EXPECT_FALSE(fs::exists(tmp / "out.klnt")) << arg;
  }
  const Ran two =
      RunKilnWith({"pack", "--max-tensors", "2", tmp / "two.klnt", "a=" + npy, "b=" + npy}, -1, -1);
  EXPECT_EQ(two.code(), 0) << two.err;
  int code = -1;
  const std::string shown = RunOnATerminal({"pack", tmp / "out.klnt", "w=" + npy}, &code);
  EXPECT_EQ(code, 0) << shown;
  EXPECT_TRUE(shown.ends_with("\rkiln pack: 100% (65 of 65 MiB)\r\n")) << shown;
}

// A Kiln block of `quantised` per-axis quantised I8 tensors (the first
// named with 100 'q's, then q01, q02...) sharing one F32 scale tensor, then
// a plain F32 tensor.
std::string QuantisedBlock(int quantised) {
  BlockWriter w;
  static const std::uint8_t kValues[24] = {};
  static const std::uint8_t kScale[16] = {};
  for (int i = 0; i < quantised; ++i) {
    TensorRequest r;
    r.name = i == 0 ? std::string(100, 'q') : (i < 10 ? "q0" : "q") + std::to_string(i);
    r.dtype = Dtype::kI8;
    r.shape = {4, 6};
    r.scheme = QuantScheme::kPerAxis;
    r.axis = 0;
    r.scale_index = static_cast<std::uint32_t>(quantised);
    EXPECT_TRUE(w.Add(r, Payload::Bytes(kValues)).ok());
  }
  TensorRequest scale;
  scale.name = "scale";
  scale.dtype = Dtype::kF32;
  scale.shape = {4};
  EXPECT_TRUE(w.Add(scale, Payload::Bytes(kScale)).ok());
  const std::vector<std::uint8_t> bytes = testing::BlockBytes(w);
  return std::string(bytes.begin(), bytes.end());
}

// kiln convert to safetensors names the quantised tensors whose scale
// references it drops: each name cut at 80 bytes, the first included, at
// most 20 of them ("..." after); nothing when none is quantised.
TEST(CliHostile, ConvertToSafetensorsNamesTheTensorsThatLoseTheirQuantisation) {
  TempDir tmp;
  for (const int quantised : {0, 1, 20, 21}) {
    const std::string in = tmp / ("in" + std::to_string(quantised) + ".klnt");
    WriteFile(in, QuantisedBlock(quantised));
    const Ran r = RunKilnWith(
        {"convert", in, tmp / ("out" + std::to_string(quantised) + ".safetensors")}, -1, -1);
    EXPECT_EQ(r.code(), 0) << r.err;
    if (quantised == 0) {
      EXPECT_EQ(r.err, "") << "nothing is lost";
      continue;
    }
    std::string want =
        "kiln convert: safetensors has no place for quantisation parameters: " +
        std::to_string(quantised) +
        " tensors keep their values but lose axis, group size and scale references: \"" +
        std::string(80, 'q') + "\"";
    for (int i = 1; i < std::min(quantised, 20); ++i) {
      want += " \"q" + std::string(i < 10 ? "0" : "") + std::to_string(i) + "\"";
    }
    want += quantised > 20 ? " ...\n" : "\n";
    EXPECT_EQ(r.err, want) << quantised;
  }
}

// A limit flag of the foreign formats' readers given to a command that
// reads only Kiln blocks is an unknown option there (exit 2), as is a flag
// no command has; the Kiln input's limits are taken.
TEST(CliHostile, ValidateTakesOnlyTheKilnInputsLimitFlags) {
  const std::string block = std::string(testing::GoldenDir()) + "/cases/ok-quant-scheme1.klnt";
  for (const std::string flag : {"--max-metadata-entries", "--max-header-bytes", "--max-bogus"}) {
    const Ran r = RunKilnWith({"validate", flag, "5", block}, -1, -1);
    EXPECT_EQ(r.code(), 2) << flag << ": " << r.err;
    EXPECT_TRUE(r.err.starts_with("kiln: unknown option " + flag + "\nusage:\n")) << r.err;
  }
  const Ran ok = RunKilnWith({"validate", "--max-tensors", "5", block}, -1, -1);
  EXPECT_EQ(ok.code(), 0) << ok.err;
}

// kiln ingest to a directory it cannot create its temporary in says so at
// once, before it reads a byte of the upload (its writer, still connected,
// has sent nothing: an ingest that read first would wait for it).
TEST(CliHostile, IngestWhereItCannotWriteReadsNothing) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  const std::string start = BigBlock(1000).substr(0, 100);  // the upload's first bytes
  ASSERT_EQ(::write(p[1], start.data(), start.size()), 100);
  const Ran r =
      RunKilnWith({"ingest", "--idle-timeout", "2", "/nonexistent/kiln-test/out.klnt"}, p[0], -1);
  ::close(p[1]);
  char left[200];
  EXPECT_EQ(::read(p[0], left, sizeof(left)), 100) << "ingest read the upload";
  ::close(p[0]);
  EXPECT_EQ(r.code(), 2) << r.err;
  EXPECT_EQ(r.err,
            "kiln ingest: /nonexistent/kiln-test/out.klnt: cannot create a temporary file in its "
            "directory: No such file or directory\n");
}

// kiln ingest --from commits exactly the bytes it was given: from a file,
// and from a FIFO, whose first bytes are read before the upload starts
// (to wait for its writer) and must be written first; kiln validate of
// the FIFO judges those bytes too.
TEST(CliHostile, IngestFromCommitsTheBytesItWasGiven) {
  TempDir tmp;
  ASSERT_EQ(::mkfifo((tmp / "fifo").c_str(), 0600), 0);
  for (const std::uint64_t size : {std::uint64_t{1000}, std::uint64_t{3} << 20}) {
    const std::string block = BigBlock(size);
    WriteFile(tmp / "in.klnt", block);
    const Ran r =
        RunKilnWith({"ingest", "--force", "--from", tmp / "in.klnt", tmp / "out.klnt"}, -1, -1);
    EXPECT_EQ(r.code(), 0) << r.err;
    EXPECT_EQ(ReadAll(tmp / "out.klnt"), block) << size;

    // The block, written into the FIFO once a reader opens it.
    const auto feed = [&] {
      const int fd = ::open((tmp / "fifo").c_str(), O_WRONLY);
      if (fd < 0) return;
      for (std::size_t at = 0; at < block.size();) {
        const ssize_t n = ::write(fd, block.data() + at, block.size() - at);
        if (n <= 0) break;
        at += static_cast<std::size_t>(n);
      }
      ::close(fd);
    };
    std::thread writer(feed);
    const Ran f =
        RunKilnWith({"ingest", "--force", "--from", tmp / "fifo", tmp / "out.klnt"}, -1, -1);
    writer.join();
    EXPECT_EQ(f.code(), 0) << f.err;
    EXPECT_EQ(ReadAll(tmp / "out.klnt"), block) << "from a FIFO, " << size;

    // kiln validate FIFO judges the same bytes, its first one included.
    std::thread validated(feed);
    const Ran v = RunKilnWith({"validate", tmp / "fifo"}, -1, -1);
    validated.join();
    EXPECT_EQ(v.code(), 0) << "validate FIFO, " << size << ": " << v.err;
  }
}

// kiln inspect's quant column: a per-axis tensor's axis, a grouped one's
// axis and group size, then the scale and outer tensors' indices; "-" for
// a tensor that is not quantised.
TEST(CliHostile, InspectShowsEachTensorsQuantisation) {
  const std::string cases = std::string(testing::GoldenDir()) + "/cases/";
  const struct {
    const char* file;
    const char* row;
  } wants[] = {
      {"ok-quant-scheme1.klnt",
       "0      model.layers.0.mlp.down_proj.weight        i8     [4, 16]  0       64      "
       "axis 0 scale #1 outer #2  -\n"},
      {"ok-quant-scheme1.klnt",
       "1      model.layers.0.mlp.down_proj.weight_scale  f16    [4]      64      8       "
       "-                         -\n"},
      {"ok-quant-scheme2-ceil.klnt",
       "0      model.layers.0.self_attn.o_proj.weight          i4       [4, 70]  0       140     "
       "axis 1 group 32 scale #1 outer #2  -\n"},
  };
  for (const auto& w : wants) {
    const testing::Outcome r = testing::RunKiln("inspect " + testing::Quote(cases + w.file), "");
    EXPECT_EQ(r.status, 0) << w.file;
    EXPECT_NE(r.out.find(w.row), std::string::npos) << w.row << "not in:\n" << r.out;
  }
}

// kiln pack takes --max-tensors and --max-block-bytes, no other reader
// limit: another is not an option of pack, so it stands where OUT.klnt is
// due (exit 2, nothing written).
TEST(CliHostile, PackTakesOnlyItsTwoLimitFlags) {
  TempDir tmp;
  WriteFile(tmp / "w.npy", BigNpy(16));
  for (const std::string flag :
       {"--max-metadata-entries", "--max-header-bytes", "--max-name-bytes"}) {
    const Ran r = RunKilnWith({"pack", flag, "5", tmp / "out.klnt", "w=" + tmp / "w.npy"}, -1, -1);
    EXPECT_EQ(r.code(), 2) << flag << ": " << r.err;
    EXPECT_TRUE(r.err.starts_with("kiln pack: missing OUT.klnt\n")) << flag << ": " << r.err;
    EXPECT_FALSE(fs::exists(tmp / "out.klnt")) << flag;
  }
  const Ran ok = RunKilnWith({"pack", "--max-tensors", "1", "--max-block-bytes", "1M",
                              tmp / "out.klnt", "w=" + tmp / "w.npy"},
                             -1, -1);
  EXPECT_EQ(ok.code(), 0) << ok.err;
}

// A safetensors file with `entries` __metadata__ entries (k0000=v0000...)
// and one U8 tensor of one byte.
std::string SafetensorsWithMetadata(int entries) {
  std::string header = R"({"__metadata__":{)";
  for (int i = 0; i < entries; ++i) {
    char entry[32];
    std::snprintf(entry, sizeof(entry), R"(%s"k%04d":"v%04d")", i == 0 ? "" : ",", i, i);
    header += entry;
  }
  header += R"(},"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})";
  return SafetensorsBytes(header, 1);
}

// A safetensors file kiln cannot hold: 300 names of 254 bytes, 76,200 bytes
// of names where kiln's heap holds about 64 KiB (name_off is a u16). convert
// names the first tensor that does not fit (its name cut at 200 bytes) and
// why, exit 1, and writes nothing: never a block without the rest.
TEST(CliHostile, ConvertRefusesNamesBeyondKilnsHeap) {
  TempDir tmp;
  std::string header = "{";
  for (int i = 0; i < 300; ++i) {
    char name[8];
    std::snprintf(name, sizeof(name), "t%03d", i);
    header += std::string(i == 0 ? "" : ",") + "\"" + name + std::string(250, 'x') +
              R"(":{"dtype":"U8","shape":[1],"data_offsets":[)" + std::to_string(i) + "," +
              std::to_string(i + 1) + "]}";
  }
  WriteFile(tmp / "in.safetensors", SafetensorsBytes(header + "}", 300));
  const Ran r = RunKilnWith({"convert", tmp / "in.safetensors", tmp / "out.klnt"}, -1, -1);
  EXPECT_EQ(r.code(), 1) << r.err;
  EXPECT_TRUE(r.err.starts_with("kiln convert: tensor \"t259" + std::string(196, 'x') +
                                "\" cannot be stored in kiln: LIMIT H7 at byte 33220 (tensor "
                                "259): name \"t259"))
      << r.err;
  EXPECT_NE(r.err.find("would start at heap offset 65786, but name_off is a u16"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(Entries(tmp.path()), std::vector<std::string>{"in.safetensors"});
}

// kiln convert names every metadata entry it drops, up to 200 (then counts
// the rest): one entry is named as one, 200 are all listed, 201 leave one
// counted.
TEST(CliHostile, ConvertNamesUpTo200DroppedMetadataEntries) {
  TempDir tmp;
  for (const int entries : {1, 200, 201}) {
    WriteFile(tmp / "in.safetensors", SafetensorsWithMetadata(entries));
    const Ran r = RunKilnWith(
        {"convert", tmp / "in.safetensors", tmp / ("out" + std::to_string(entries) + ".klnt")}, -1,
        -1);
    EXPECT_EQ(r.code(), 0) << r.err;
    const std::string head =
        "kiln convert: kiln has no place for metadata: " + std::to_string(entries) +
        (entries == 1 ? " entry" : " entries") + " not carried over:\n";
    EXPECT_TRUE(r.err.starts_with(head)) << r.err.substr(0, 200);
    int listed = 0;
    for (std::size_t at = r.err.find("\n  k"); at != std::string::npos;
         at = r.err.find("\n  k", at + 1)) {
      ++listed;
    }
    EXPECT_EQ(listed, std::min(entries, 200)) << entries;
    EXPECT_EQ(r.err.find("  ... and 1 more\n") != std::string::npos, entries == 201) << entries;
    EXPECT_NE(r.err.find("  k0000=v0000\n"), std::string::npos) << entries;
  }
}

// The format is told from a path's last extension only: a file named
// exactly like a format ("klnt", no dot) tells nothing.
TEST(CliHostile, ConvertTellsNoFormatFromANameWithoutADot) {
  TempDir tmp;
  const std::string dir = tmp.path().string();
  fs::copy_file(std::string(testing::GoldenDir()) + "/cases/ok-named-llama-layer.klnt",
                tmp / "klnt");
  const Ran r = RunKilnIn(dir, {"convert", "klnt", "out.safetensors"});
  EXPECT_EQ(r.code(), 2) << r.err;
  EXPECT_TRUE(r.err.starts_with(
      "kiln convert: cannot tell the format of klnt from its extension: give --from or --to\n"))
      << r.err;
  EXPECT_FALSE(fs::exists(tmp / "out.safetensors"));
}

// ---------------------------------------------------------------------------
// Finding 4: a mapped input truncated by another process while kiln reads
// it. The preloaded library truncates the file right after kiln maps it, so
// every read past the new end is a read of a page the file no longer has.
// Before the fix each command died of SIGBUS (signal 7), leaving unpack's
// staging directory and convert's temporary behind.

// Two u8 tensors of `size` + 1 bytes each: the padding after each payload
// is a gap validation reads (P2), far from the header.
std::string BlockWithGaps(std::uint64_t size) {
  const std::vector<std::uint8_t> payload(size + 1, 1);
  BlockWriter w;
  for (const char* name : {"a", "b"}) {
    TensorRequest r;
    r.name = name;
    r.dtype = Dtype::kU8;
    r.shape = {size + 1};
    EXPECT_TRUE(w.Add(r, Payload::Bytes(payload)).ok());
  }
  const std::vector<std::uint8_t> bytes = testing::BlockBytes(w);
  return std::string(bytes.begin(), bytes.end());
}

TEST(CliHostile, InputTruncatedWhileMappedIsAnIoError) {
  TempDir tmp;
  constexpr std::uint64_t kSize = 8 << 20;
  const fs::path o = tmp.path() / "o";
  struct Case {
    const char* name;
    std::string input;  // the file that is truncated
    std::string bytes;
    std::vector<std::string> args;
  };
  const std::string klnt = fs::canonical(tmp.path()).string() + "/in.klnt";
  const std::string st = fs::canonical(tmp.path()).string() + "/in.safetensors";
  const std::string npy = fs::canonical(tmp.path()).string() + "/in.npy";
  const Case cases[] = {
      {"validate", klnt, BlockWithGaps(kSize), {"validate", klnt}},
      {"validate --json", klnt, BlockWithGaps(kSize), {"validate", "--json", klnt}},
      {"unpack", klnt, BlockWithGaps(kSize), {"unpack", klnt, (o / "dir").string()}},
      {"convert kiln->safetensors",
       klnt,
       BlockWithGaps(kSize),
       {"convert", klnt, (o / "out.safetensors").string()}},
      {"convert safetensors->kiln",
       st,
       BigSafetensors(kSize),
       {"convert", st, (o / "out.klnt").string()}},
      {"pack", npy, BigNpy(kSize), {"pack", (o / "out.klnt").string(), "w=" + npy}},
  };
  for (const Case& c : cases) {
    // Cut in the payload (1 MiB), to nothing (the header's page too), and by
    // its last byte: a cut inside the last page raises no SIGBUS, the lost
    // byte silently reads as zero, and only the file's size tells.
    for (const std::uint64_t cut_to :
         {std::uint64_t{1} << 20, std::uint64_t{0}, std::uint64_t{c.bytes.size() - 1}}) {
      fs::remove_all(o);
      fs::create_directory(o);
      WriteFile(c.input, c.bytes);
      const std::string spec = std::to_string(cut_to) + ":" + c.input;
      const Ran r = RunKilnWith(c.args, -1, -1, [&] {
        ::setenv("LD_PRELOAD", ::kiln::testing::FaultPreloadLibrary(), 1);
        ::setenv("KILN_TEST_TRUNCATE_ON_MAP", spec.c_str(), 1);
        ::setenv("ASAN_OPTIONS", "verify_asan_link_order=0", 1);
      });
      const std::string label = std::string(c.name) + " cut to " + std::to_string(cut_to);
      if (fs::file_size(c.input) != cut_to) {
        // A runtime linked into kiln itself (a static sanitizer runtime)
        // resolves mmap before a preloaded library can.
        GTEST_SKIP() << label << ": the preloaded library did not run, the file was not truncated";
      }
      EXPECT_TRUE(WIFEXITED(r.status))
          << label << ": killed by signal " << (WIFSIGNALED(r.status) ? WTERMSIG(r.status) : 0);
      EXPECT_EQ(r.code(), 2) << label << ": " << r.err;
      EXPECT_NE(r.err.find("truncated while it was read"), std::string::npos)
          << label << ": " << r.err;
      EXPECT_TRUE(Entries(o).empty()) << label << " left " << Entries(o).front();
    }
  }
  // A cut to nothing takes the header inspect privatizes first. Then cuts
  // after the mapping was checked (the file's last fstat before it is
  // parsed: the open's, then the mapping's check once its prefix is
  // private; validate opens the file once more before, to learn its kind):
  // in the payload, where validation reads the gaps (P2), and by the last
  // byte (a gap), which only the size tells. inspect sees them after
  // parsing, validate before its verdict (never one on the zeros a cut page
  // reads as), unpack at its commit (the files it copied are whole). A cut
  // one fstat earlier is seen while the file is mapped, before any parse.
  const std::string block = BlockWithGaps(kSize);
  struct Cut {
    std::vector<std::string> args;
    const char* variable;
    std::string spec;
  };
  const std::vector<std::string> inspect = {"inspect", klnt};
  const std::vector<std::string> validate = {"validate", klnt};
  const std::vector<std::string> unpack = {"unpack", klnt, (o / "dir").string()};
  const auto at = [&](int fstat, std::uint64_t size) {
    return std::to_string(fstat) + ":" + std::to_string(size) + ":" + klnt;
  };
  const std::uint64_t payload = 1048576;
  const std::uint64_t last = block.size() - 1;
  const char* after_fstat = "KILN_TEST_TRUNCATE_AFTER_FSTAT";
  for (const Cut& c :
       {Cut{inspect, "KILN_TEST_TRUNCATE_ON_MAP", "0:" + klnt},
        Cut{inspect, after_fstat, at(2, payload)}, Cut{inspect, after_fstat, at(2, last)},
        Cut{validate, after_fstat, at(2, payload)}, Cut{validate, after_fstat, at(2, last)},
        Cut{validate, after_fstat, at(3, payload)}, Cut{validate, after_fstat, at(3, last)},
        Cut{unpack, after_fstat, at(2, payload)}, Cut{unpack, after_fstat, at(2, last)}}) {
    fs::remove_all(o);
    fs::create_directory(o);
    WriteFile(klnt, block);
    const Ran r = RunKilnWith(c.args, -1, -1, [&] {
      ::setenv("LD_PRELOAD", ::kiln::testing::FaultPreloadLibrary(), 1);
      ::setenv(c.variable, c.spec.c_str(), 1);
      ::setenv("ASAN_OPTIONS", "verify_asan_link_order=0", 1);
    });
    const std::string label = c.args[0] + ", " + c.variable + "=" + c.spec;
    if (fs::file_size(klnt) == block.size()) {
      // Only a sanitizer runtime linked into kiln keeps a preloaded fstat
      // from running; anywhere else the count of fstat calls has changed.
      if (testing::kAddressSanitizer) GTEST_SKIP() << label << ": the file was not cut";
      ADD_FAILURE() << label << ": the file was not cut (kiln's fstat calls changed?)";
      continue;
    }
    EXPECT_EQ(r.code(), 2) << label << ": status " << r.status << " " << r.err;
    EXPECT_NE(r.err.find("truncated while it was read"), std::string::npos) << label << r.err;
    EXPECT_TRUE(Entries(o).empty()) << label << " left " << Entries(o).front();
  }
}

// The timeout bounds silence, not the whole stream: a writer that trickles
// the block in 8 pieces 300 ms apart (2.4 s in all) is read to the end with
// --idle-timeout 1 (and 0, no timeout), by validate and by ingest.
TEST(CliHostile, TricklingWriterIsNotGivenUpOn) {
  TempDir tmp;
  const std::string block = BigBlock(4000);
  // --idle-timeout 0 waits for ever: the pauses are never a timeout.
  for (const auto& [ingest, timeout] :
       {std::pair{false, "1"}, std::pair{true, "1"}, std::pair{false, "0"}, std::pair{true, "0"}}) {
    fs::remove(tmp / "out.klnt");
    int p[2] = {-1, -1};
    // Close-on-exec: kiln must not hold the writing end (it would never see
    // the end of the stream).
    ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
    std::thread writer([&block, fd = p[1]] {
      const std::size_t piece = block.size() / 8 + 1;
      for (std::size_t at = 0; at < block.size(); at += piece) {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        const std::size_t n = std::min(piece, block.size() - at);
        if (::write(fd, block.data() + at, n) != static_cast<ssize_t>(n)) break;
      }
      ::close(fd);
    });
    const std::vector<std::string> args =
        ingest ? std::vector<std::string>{"ingest", "--idle-timeout", timeout, tmp / "out.klnt"}
               : std::vector<std::string>{"validate", "--idle-timeout", timeout, "-"};
    const Ran r = RunKilnWith(args, p[0], -1, [] { ::alarm(20); });
    writer.join();
    ::close(p[0]);
    EXPECT_EQ(r.code(), 0) << args[0] << " --idle-timeout " << timeout << ": " << r.err;
    if (ingest) {
      EXPECT_EQ(ReadAll(tmp / "out.klnt"), block) << timeout;
    }
  }
}

// ---- faults placed between kiln's own calls (support/fault_preload.cc) ----

// Runs kiln with the fault library preloaded, `vars` set and the hooks'
// log at `log` (emptied first: an earlier run's line never stands for this
// run's hook); stdout goes to `out` (a file), stdin comes from `in` (-1:
// /dev/null).
Ran RunKilnFaulted(const std::vector<std::string>& args,
                   const std::vector<std::pair<std::string, std::string>>& vars,
                   const fs::path& log, const fs::path& out, int in = -1) {
  fs::remove(log);
  const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  const Ran r = RunKilnWith(args, in, fd, [&] {
    ::setenv("LD_PRELOAD", testing::FaultPreloadLibrary(), 1);
    ::setenv("KILN_TEST_FAULT_LOG", log.c_str(), 1);
    ::setenv("ASAN_OPTIONS", "verify_asan_link_order=0", 1);
    for (const auto& [name, value] : vars) ::setenv(name.c_str(), value.c_str(), 1);
  });
  if (fd >= 0) ::close(fd);
  return r;
}

// How many faults the hook `what` made (its lines in the log).
std::size_t HookCount(const fs::path& log, const std::string& what) {
  const std::string text = "\n" + ReadAll(log);
  std::size_t n = 0;
  for (std::size_t at = text.find("\n" + what + "\n"); at != std::string::npos;
       at = text.find("\n" + what + "\n", at + 1)) {
    ++n;
  }
  return n;
}

// Whether the hook `what` made its fault.
bool HookRan(const fs::path& log, const std::string& what) { return HookCount(log, what) > 0; }

// In a test body, after RunKilnFaulted: stops the test when the hook did not
// run. A sanitizer runtime linked into kiln resolves some of these functions
// before a preloaded library can (skipped there); anywhere else the test
// would not test what it claims (a failure).
#define KILN_REQUIRE_HOOK(log, what)                                                       \
  if (!HookRan(log, what)) {                                                               \
    if (testing::kAddressSanitizer) GTEST_SKIP() << "the " << what << " hook did not run"; \
    FAIL() << "the preloaded " << what << " hook did not run";                             \
  }

// kiln clean where listing a directory fails: fdopendir's allocation
// (ENOMEM) for DIR itself is an error (exit 2, nothing removed); for a
// staging directory inside it, that directory is kept with the reason. The
// same for a readdir() that fails part way (EIO from a failing disk): the
// names read so far are never taken for the whole listing.
TEST(CliHostile, CleanSaysCannotListWhenTheListingFails) {
  TempDir tmp;
  const fs::path o = tmp.path() / "o";
  const std::string dead = kDeadTemporary;
  const std::string staging = dead + "dir001";
  struct Case {
    std::string fail;  // KILN_TEST_FAIL
    std::string hook;
    int code;
    std::string err;
    std::string out;
  };
  const std::string dir = o.string();
  const std::vector<Case> cases = {
      {"fdopendir:1:12", "fdopendir", 2,
       "kiln clean: " + dir + ": cannot list: Cannot allocate memory\n", ""},
      {"fdopendir:2:12", "fdopendir", 0, "",
       "kept " + staging + ": cannot list: Cannot allocate memory\n0 removed, 1 kept\n"},
      // DIR holds four names and "." and "..": the third call fails.
      {"readdir:3:5", "readdir", 2, "kiln clean: " + dir + ": cannot list: Input/output error\n",
       ""},
  };
  for (const Case& c : cases) {
    fs::remove_all(o);
    fs::create_directory(o);
    fs::create_directory(o / staging);
    WriteFile(o / staging / "a", "a");
    for (const char* name : {"x", "y", "z"}) WriteFile(o / name, name);
    SetAge(o / staging / "a", 7200);
    SetAge(o / staging, 7200);
    const fs::path log = tmp.path() / "log";
    const Ran r =
        RunKilnFaulted({"clean", dir}, {{"KILN_TEST_FAIL", c.fail}}, log, tmp.path() / "out");
    KILN_REQUIRE_HOOK(log, c.hook);
    EXPECT_EQ(r.code(), c.code) << c.fail << ": " << r.err;
    EXPECT_EQ(r.err, c.err) << c.fail;
    EXPECT_EQ(ReadAll(tmp.path() / "out"), c.out) << c.fail;
    EXPECT_TRUE(fs::exists(o / staging / "a")) << c.fail;
  }
}

// kiln clean and another process that acts on a staging directory between
// clean's calls (the fault library renames just before clean's openat() of
// it: the first is the check's, the second the removal's). A directory
// swapped for another before either is kept, the newcomer's files untouched;
// one removed before the removal is named with openat's reason.
TEST(CliHostile, CleanNeverRemovesWhatChangedAfterItsCheck) {
  TempDir tmp;
  const fs::path o = tmp.path() / "o";
  const std::string dead = kDeadTemporary;
  const std::string staging = dead + "dir001";
  const std::string dir = o.string();
  const fs::path aside = tmp.path() / "aside";
  const fs::path newcomer = tmp.path() / "newcomer";
  const std::string at = (o / staging).string();
  const std::string swap = at + ">" + aside.string() + ":" + newcomer.string() + ">" + at;
  struct Case {
    std::string renames;  // KILN_TEST_RENAME_BEFORE_OPENAT
    int code;
    std::string err;
    std::string out;
    bool newcomer_kept;  // the newcomer's file is at DIR/staging/a
  };
  const std::string cannot = "kiln clean: " + dir + ": cannot remove " + staging + ": ";
  const std::vector<Case> cases = {
      {"1:" + staging + ":" + swap, 0, "",
       "kept " + staging + ": changed while it was checked\n0 removed, 1 kept\n", true},
      {"2:" + staging + ":" + at + ">" + aside.string(), 2, cannot + "No such file or directory\n",
       "0 removed, 1 kept\n", false},
      {"2:" + staging + ":" + swap, 2, cannot + "changed while it was checked\n",
       "0 removed, 1 kept\n", true},
  };
  for (const Case& c : cases) {
    for (const fs::path& d : {o, aside, newcomer}) fs::remove_all(d);
    fs::create_directory(o);
    for (const fs::path& d : {o / staging, newcomer}) {
      fs::create_directory(d);
      WriteFile(d / "a", d.filename().string());
      SetAge(d / "a", 7200);
      SetAge(d, 7200);
    }
    const fs::path log = tmp.path() / "log";
    const Ran r = RunKilnFaulted({"clean", dir}, {{"KILN_TEST_RENAME_BEFORE_OPENAT", c.renames}},
                                 log, tmp.path() / "out");
    KILN_REQUIRE_HOOK(log, "openat");
    EXPECT_EQ(r.code(), c.code) << c.renames << ": " << r.err;
    EXPECT_EQ(r.err, c.err) << c.renames;
    EXPECT_EQ(ReadAll(tmp.path() / "out"), c.out) << c.renames;
    if (c.newcomer_kept) {
      EXPECT_EQ(ReadAll(o / staging / "a"), "newcomer") << c.renames;
    }
    EXPECT_EQ(ReadAll(aside / "a"), staging) << c.renames << ": the checked directory";
  }
}

// unpack --force where the exchange is unsupported (renameat2 EINVAL): the
// earlier directory is moved aside, the new one put in place, the earlier
// one removed. When the rename of the new directory into DIR fails (EACCES)
// after the earlier one was moved aside, the earlier directory goes back to
// DIR and the error is given; when moving it back fails too, the error says
// where it is.
TEST(CliHostile, UnpackForceWhoseFallbackRenameFailsKeepsTheEarlierDirectory) {
  TempDir tmp;
  const std::string block = std::string(testing::GoldenDir()) + "/cases/kiln-v2-f32.klnt";
  const fs::path target = tmp.path() / "dir";
  enum class Then { kReplaced, kRestored, kLeftAside };
  struct Case {
    std::string fail;  // KILN_TEST_FAIL
    const char* hook;
    Then then;
  };
  const std::string onto = ":13:" + target.string();  // renames onto DIR: EACCES
  const std::vector<Case> cases = {
      {"renameat2:0:22", "renameat2", Then::kReplaced},
      {"renameat2:0:22;rename:1" + onto, "rename", Then::kRestored},
      {"renameat2:0:22;rename:0" + onto, "rename", Then::kLeftAside},
  };
  for (const Case& c : cases) {
    for (const auto& e : fs::directory_iterator(tmp.path())) fs::remove_all(e.path());
    fs::create_directory(target);
    WriteFile(target / "earlier", "e");
    const fs::path log = tmp.path() / "log";
    const Ran r = RunKilnFaulted({"unpack", "--force", block, target}, {{"KILN_TEST_FAIL", c.fail}},
                                 log, tmp.path() / "out");
    KILN_REQUIRE_HOOK(log, c.hook);
    std::string earlier;  // where the earlier directory is
    for (const auto& e : fs::directory_iterator(tmp.path())) {
      if (fs::exists(e.path() / "earlier")) earlier = e.path().string();
    }
    const std::string prefix =
        "kiln unpack: " + target.string() + ": rename into place: Permission denied";
    switch (c.then) {
      case Then::kReplaced:
        EXPECT_EQ(r.code(), 0) << c.fail << ": " << r.err;
        EXPECT_EQ(r.err, "") << c.fail;
        EXPECT_EQ(earlier, "") << c.fail << ": the earlier directory was not removed";
        EXPECT_TRUE(fs::exists(target / "index.tsv")) << c.fail;
        break;
      case Then::kRestored:
        EXPECT_EQ(r.code(), 2) << c.fail << ": " << r.err;
        EXPECT_EQ(earlier, target.string()) << c.fail;
        EXPECT_EQ(r.err, prefix + "\n") << c.fail;
        break;
      case Then::kLeftAside:
        EXPECT_EQ(r.code(), 2) << c.fail << ": " << r.err;
        EXPECT_FALSE(fs::exists(target)) << c.fail;
        ASSERT_FALSE(earlier.empty()) << c.fail << ": the earlier directory is lost";
        EXPECT_EQ(r.err, prefix + "; the earlier directory is at " + earlier + "\n") << c.fail;
        break;
    }
    // The report comes before the commit (SECURITY.md: the exit status
    // alone says whether DIR was replaced).
    EXPECT_EQ(ReadAll(tmp.path() / "out"), "unpacked 1 tensors into " + target.string() + "\n")
        << c.fail;
  }
}

// A stream whose O_NONBLOCK kiln cannot clear (fcntl(F_SETFL) fails: a
// descriptor it may not change) is waited for with poll(): read whole when
// the writer delivers it in pieces, given up on after --idle-timeout when
// the writer goes silent; never "Resource temporarily unavailable". A read
// that fails otherwise (EIO, the first) is an I/O error, not waited for.
TEST(CliHostile, StreamThatStaysNonBlockingIsPolled) {
  TempDir tmp;
  const std::string block = BigBlock(1 << 20);
  enum class Writer { kPieces, kSilent, kReadFails, kPollFails };
  // The failing calls last: a sanitizer runtime resolves read() and poll()
  // itself, and a hook that did not run skips the rest of the test there.
  for (const Writer how :
       {Writer::kPieces, Writer::kSilent, Writer::kReadFails, Writer::kPollFails}) {
    const bool silent = how == Writer::kSilent;
    int p[2] = {-1, -1};
    ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
    ASSERT_EQ(::fcntl(p[0], F_SETFL, O_NONBLOCK), 0);  // kiln's end: shared with kiln
    std::atomic<bool> done{false};
    std::thread writer([&] {
      // A kiln that stopped reading early makes write() fail (EPIPE), not
      // kill the test: SIGPIPE is blocked in this thread.
      sigset_t pipe_signal;
      sigemptyset(&pipe_signal);
      sigaddset(&pipe_signal, SIGPIPE);
      pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
      // In pieces, so kiln finds the pipe empty between them; or 100 bytes
      // and then silence until kiln is done.
      const std::size_t piece = silent ? 100 : 64 << 10;
      const std::size_t end = silent ? piece : block.size();
      for (std::size_t at = 0; at < end; at += piece) {
        if (::write(p[1], block.data() + at, std::min(piece, end - at)) < 0) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      while (silent && !done) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      ::close(p[1]);
    });
    const fs::path log = tmp.path() / "log";
    const char* fail = how == Writer::kReadFails   ? "fcntl_setfl:0:1;read:1:5"
                       : how == Writer::kPollFails ? "fcntl_setfl:0:1;poll:1:12"
                                                   : "fcntl_setfl:0:1";
    const Ran r = RunKilnFaulted({"validate", "--idle-timeout", "1", "-"},
                                 {{"KILN_TEST_FAIL", fail}}, log, tmp.path() / "out", p[0]);
    done = true;
    ::close(p[0]);  // a writer blocked on a full pipe is freed (EPIPE)
    writer.join();
    KILN_REQUIRE_HOOK(log, "fcntl_setfl");
    if (how == Writer::kReadFails) {
      KILN_REQUIRE_HOOK(log, "read");
      EXPECT_EQ(r.code(), 2) << r.err;
      EXPECT_EQ(r.err, "kiln: -: read: Input/output error\n");
    } else if (how == Writer::kPollFails) {  // the wait itself fails (ENOMEM)
      KILN_REQUIRE_HOOK(log, "poll");
      EXPECT_EQ(r.code(), 2) << r.err;
      EXPECT_EQ(r.err, "kiln: -: read: Cannot allocate memory\n");
    } else if (silent) {
      EXPECT_EQ(r.code(), 2) << r.err;
      EXPECT_EQ(r.err, "kiln: -: no data for 1 s (--idle-timeout); gave up\n");
    } else {
      EXPECT_EQ(r.code(), 0) << r.err;
      EXPECT_EQ(r.err, "");
      EXPECT_EQ(ReadAll(tmp.path() / "out").rfind("-: ok", 0), 0u) << ReadAll(tmp.path() / "out");
    }
  }
}

// validate and ingest --from of a named FIFO with no writer, under
// KILN_TEST_FAIL=`fail` (the hook `hook` must run): exit 2 with the
// message "PREFIX FIFO: `why`", and nothing written.
void ExpectFifoReadFaultIsAnIoError(const std::string& fail, const std::string& hook,
                                    const std::string& why) {
  TempDir tmp;
  const fs::path fifo = tmp.path() / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  fs::create_directory(tmp.path() / "o");
  const std::pair<std::vector<std::string>, std::string> commands[] = {
      {{"validate", fifo}, "kiln: "},
      {{"ingest", "--from", fifo, tmp.path() / "o/out.klnt"}, "kiln ingest: "},
  };
  for (const auto& [args, prefix] : commands) {
    const fs::path log = tmp.path() / "log";
    const Ran r = RunKilnFaulted(args, {{"KILN_TEST_FAIL", fail}}, log, tmp.path() / "out");
    KILN_REQUIRE_HOOK(log, hook);
    EXPECT_EQ(r.code(), 2) << args[0] << ": " << r.err;
    EXPECT_EQ(r.err, prefix + fifo.string() + ": " + why + "\n") << args[0];
    EXPECT_TRUE(Entries(tmp.path() / "o").empty()) << args[0];
  }
}

// A named FIFO whose first read fails (EIO: a failing device, or a FUSE
// file that says it is a FIFO) is an I/O error at once, for validate and
// for ingest --from: never taken for "no writer yet" and waited on for two
// seconds, then reported as a FIFO with no writer.
TEST(CliHostile, FifoWhoseFirstReadFailsIsAnIoErrorAtOnce) {
  ExpectFifoReadFaultIsAnIoError("read:1:5", "read", "read: Input/output error");
}

// A FIFO with no writer reads as end of file (0) whatever errno holds, and
// a read() that succeeds may leave errno as it likes (POSIX): one that
// still says EAGAIN (left by an earlier call) must not be taken for "a
// writer is connected, nothing sent yet", whose stream would then end at
// once as a truncated block (exit 1, a false verdict). Waited on for two
// seconds and reported as a FIFO with no writer, for validate and ingest.
TEST(CliHostile, FifoWithNoWriterIsNotTakenForOneByAStaleErrno) {
  ExpectFifoReadFaultIsAnIoError("read_errno:0:" + std::to_string(EAGAIN), "read_errno",
                                 "a FIFO with no writer (waited 2000 ms)");
}

// An output whose write() accepts nothing (returns 0: a device, or a FUSE
// file system that takes no byte) is an I/O error, exit 2, and nothing is
// left: never a loop that calls write() for ever, never a file committed
// without its bytes. Also after a write() a signal interrupted (EINTR, then
// 0: errno still says EINTR, which must not be taken for another retry).
TEST(CliHostile, OutputThatAcceptsNoByteIsAnIoError) {
  TempDir tmp;
  const fs::path in = tmp.path() / "in.klnt";
  WriteFile(in, BigBlock(4096));
  const fs::path o = tmp.path() / "o";
  struct Case {
    std::vector<std::string> args;
    bool from_stdin;
    std::string err;
  };
  // unpack: one .npy file per tensor; ingest: a block from standard input.
  const Case cases[] = {
      {{"unpack", in, o / "dir"},
       false,
       "kiln unpack: " + (o / "dir").string() +
           ": cannot write tensor-00000.npy: Input/output error; nothing changed\n"},
      {{"ingest", o / "out.klnt"},
       true,
       "kiln ingest: " + (o / "out.klnt").string() + ": write: Input/output error\n"},
  };
  for (const char* fail : {"write:0:0", "write:1:4;write:0:0"}) {
    for (const Case& c : cases) {
      fs::remove_all(o);
      fs::create_directory(o);
      const fs::path log = tmp.path() / "log";
      const int stdin_fd = c.from_stdin ? ::open(in.c_str(), O_RDONLY | O_CLOEXEC) : -1;
      const Ran r =
          RunKilnFaulted(c.args, {{"KILN_TEST_FAIL", fail}}, log, tmp.path() / "out", stdin_fd);
      if (stdin_fd >= 0) ::close(stdin_fd);
      KILN_REQUIRE_HOOK(log, "write");
      EXPECT_EQ(r.code(), 2) << c.args[0] << ", " << fail << ", status " << r.status << ": "
                             << r.err;
      EXPECT_EQ(r.err, c.err) << fail;
      EXPECT_TRUE(Entries(o).empty()) << c.args[0] << ", " << fail << ": left " << Entries(o)[0];
    }
  }
}

// This process's umask (which kiln inherits), read without changing it.
mode_t Umask() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return mask;
}

// kiln unpack of TMP/in.klnt (BigBlock(4096), written on first use) into
// `dir` with KILN_TEST_FAIL=`fail` (and the other variables); the hooks
// log to TMP/log.
Ran UnpackFaulted(const fs::path& tmp, const fs::path& dir, const std::string& fail,
                  std::vector<std::pair<std::string, std::string>> vars = {}) {
  const fs::path in = tmp / "in.klnt";
  if (!fs::exists(in)) WriteFile(in, BigBlock(4096));
  vars.emplace_back("KILN_TEST_FAIL", fail);
  return RunKilnFaulted({"unpack", in, dir}, vars, tmp / "log", tmp / "out");
}

// A file whose every write succeeded but whose close() fails (EIO that NFS
// or a FUSE file system report only at close: the data may not be stored)
// is not written: unpack reports it and changes nothing, for a tensor's
// file and for the index alike.
TEST(CliHostile, UnpackOfAFileWhoseCloseFailsIsAnIoError) {
  TempDir tmp;
  const fs::path o = tmp.path() / "o";
  for (const char* file : {"tensor-00000.npy", "index.tsv"}) {
    fs::remove_all(o);
    fs::create_directory(o);
    std::string fail = "close:0:5:";
    fail += file;  // not "..." + file: GCC 12's false -Wrestrict
    const Ran r = UnpackFaulted(tmp.path(), o / "dir", fail);
    KILN_REQUIRE_HOOK(tmp.path() / "log", "close");
    EXPECT_EQ(r.code(), 2) << file << ", status " << r.status << ": " << r.err;
    EXPECT_EQ(r.err, "kiln unpack: " + (o / "dir").string() + ": cannot write " + file +
                         ": Input/output error; nothing changed\n");
    EXPECT_TRUE(Entries(o).empty()) << file << ": left " << Entries(o)[0];
  }
}

// A staging directory that cannot be made after the target check passed
// (DIR's parent full, or made read-only in between) is reported as such,
// before any file is written, and nothing is created.
TEST(CliHostile, UnpackWhoseStagingDirectoryCannotBeMadeIsAnIoError) {
  TempDir tmp;
  const fs::path o = tmp.path() / "o";
  fs::create_directory(o);
  const fs::path dir = o / "p" / "q" / "dir";  // its parents made, then removed
  const Ran r = UnpackFaulted(tmp.path(), dir, "mkdtemp:0:28");
  KILN_REQUIRE_HOOK(tmp.path() / "log", "mkdtemp");
  EXPECT_EQ(r.code(), 2) << r.status << ": " << r.err;
  EXPECT_EQ(r.err, "kiln unpack: " + dir.string() +
                       ": cannot create a directory beside it: No space left on device\n");
  EXPECT_TRUE(Entries(o).empty()) << "left " << Entries(o)[0];
  // Tried once; a parent that vanished (ENOENT: another unpack that made
  // it failed and removed it) is made again and tried twice more.
  EXPECT_EQ(HookCount(tmp.path() / "log", "mkdtemp"), 1u);
  const Ran gone = UnpackFaulted(tmp.path(), dir, "mkdtemp:0:2");
  EXPECT_EQ(gone.code(), 2) << gone.err;
  EXPECT_EQ(gone.err, "kiln unpack: " + dir.string() +
                          ": cannot create a directory beside it: No such file or directory\n");
  EXPECT_EQ(HookCount(tmp.path() / "log", "mkdtemp"), 3u);
  EXPECT_TRUE(Entries(o).empty()) << "left " << Entries(o)[0];
}

// unpack makes DIR's missing parents (as mkdir -p would); when it then
// fails, "nothing changed" holds: the parents it made are removed again,
// but not one that holds anything (here a file someone put there) or that
// was there before. When it succeeds they stay, DIR inside them.
TEST(CliHostile, UnpackThatFailsRemovesTheParentsItMade) {
  TempDir tmp;
  const fs::path o = tmp.path() / "o";
  fs::create_directory(o);
  const fs::path dir = o / "p" / "q" / "r" / "dir";
  const Ran r = UnpackFaulted(tmp.path(), dir, "write:0:0");
  KILN_REQUIRE_HOOK(tmp.path() / "log", "write");
  EXPECT_EQ(r.code(), 2) << r.err;
  EXPECT_NE(r.err.find("; nothing changed\n"), std::string::npos) << r.err;
  EXPECT_TRUE(Entries(o).empty()) << "left " << Entries(o)[0];
  // One that another process put a file into while kiln wrote (before it
  // opens its first tensor's file) stays, with the parents above it; the
  // empty one below goes.
  WriteFile(tmp.path() / "theirs", "x");
  const Ran filled = UnpackFaulted(
      tmp.path(), dir, "write:0:0",
      {{"KILN_TEST_RENAME_BEFORE_OPENAT", "1:tensor-00000.npy:" + (tmp.path() / "theirs").string() +
                                              ">" + (o / "p" / "q" / "theirs").string()}});
  KILN_REQUIRE_HOOK(tmp.path() / "log", "openat");
  EXPECT_EQ(filled.code(), 2) << filled.err;
  EXPECT_EQ(Entries(o), std::vector<std::string>{"p"});
  EXPECT_EQ(Entries(o / "p"), std::vector<std::string>{"q"});
  EXPECT_EQ(Entries(o / "p" / "q"), std::vector<std::string>{"theirs"});
  // A parent that was there before stays.
  fs::remove(o / "p" / "q" / "theirs");
  const Ran again = UnpackFaulted(tmp.path(), dir, "write:0:0");
  EXPECT_EQ(again.code(), 2) << again.err;
  EXPECT_EQ(Entries(o / "p" / "q"), std::vector<std::string>{});
  const Ran made = RunKilnWith({"unpack", tmp.path() / "in.klnt", dir}, -1, -1);
  EXPECT_EQ(made.code(), 0) << made.err;
  EXPECT_TRUE(fs::is_regular_file(dir / "index.tsv"));
  EXPECT_EQ(Entries(o / "p" / "q" / "r"), std::vector<std::string>{"dir"});
  // A DIR whose parents name some twice ("x/./y"): each is made once, in
  // one pass (an existing one is passed over, not taken for a failure).
  const fs::path dotted = o / "x" / "." / "y" / "." / "z" / "." / "w" / "dir";
  const Ran twice = RunKilnWith({"unpack", tmp.path() / "in.klnt", dotted}, -1, -1);
  EXPECT_EQ(twice.code(), 0) << twice.err;
  EXPECT_TRUE(fs::is_regular_file(o / "x" / "y" / "z" / "w" / "dir" / "index.tsv"));
  // A parent it made has a plain mkdir's mode: 0777 less the umask.
  const mode_t mask = Umask();
  struct stat st {};
  ASSERT_EQ(::stat((o / "p" / "q" / "r").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0777 & ~mask);
}

// unpack's DIR as given, relative to the working directory: a trailing
// slash and a one-letter name are a name, and so is "-" (unpack reads no
// standard input); a DIR whose last part is . or .. is refused (a usage
// error), as is one below a regular file (the target check's reason, exit
// 2, nothing written). Its files' mode is 0666 less the umask.
TEST(CliHostile, UnpackTargetNamesAreReadAsGiven) {
  TempDir tmp;
  WriteFile(tmp.path() / "in.klnt", BigBlock(4096));
  WriteFile(tmp.path() / "file", "x");
  fs::create_directory(tmp.path() / "sub");
  for (const char* made : {"d/", "e", "-"}) {
    const Ran r = RunKilnIn(tmp.path(), {"unpack", "in.klnt", made});
    EXPECT_EQ(r.code(), 0) << made << ": " << r.err;
    EXPECT_TRUE(fs::is_regular_file(tmp.path() / made / "tensor-00000.npy")) << made;
  }
  // Its files are made as any program's: 0666 less the umask kiln inherits.
  const mode_t mask = Umask();
  for (const char* file : {"e/tensor-00000.npy", "e/index.tsv"}) {
    struct stat st {};
    ASSERT_EQ(::stat((tmp.path() / file).c_str(), &st), 0) << file;
    EXPECT_EQ(st.st_mode & 07777, 0666 & ~mask) << file;
  }
  for (const char* refused : {"sub/..", "sub/.", "/"}) {
    const Ran r = RunKilnIn(tmp.path(), {"unpack", "in.klnt", refused});
    EXPECT_EQ(r.code(), 2) << refused << ": " << r.err;
    EXPECT_EQ(r.err.rfind("kiln unpack: DIR must end in a name (not /, . or ..)\n", 0), 0u)
        << refused << ": " << r.err;
  }
  const Ran r = RunKilnIn(tmp.path(), {"unpack", "in.klnt", "file/d"});
  EXPECT_EQ(r.code(), 2) << r.err;
  EXPECT_EQ(r.err, "kiln unpack: file/d: Not a directory\n");
  EXPECT_EQ(Entries(tmp.path() / "sub"), std::vector<std::string>{});
}

}  // namespace
}  // namespace kiln
