// Peak memory of `kiln convert` and `kiln pack` on hostile inputs of 30 MB
// and more, generated here: at most twice the input plus 64 MiB, whatever
// the input (the mapped input itself counts once). The binary runs as a
// grandchild: kiln_peak_rss (support/peak_rss.cc), a small process, forks
// it and reports its peak RSS from wait4's rusage.ru_maxrss. Forked from
// this binary directly, the command's peak would start at this process's
// resident size (Linux records the forked address space's high-water mark
// at exec), which grows with every test run before in the same process.
//
// The inputs are written in small chunks so that this process stays small.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "formats/test_util.h"
#include "gtest/gtest.h"
#include "support/paths.h"
#include "support/syscall_fault.h"

namespace kiln::testing_formats {
namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

struct Peak {
  int status = -1;  // the exit status, or 128 + the signal
  std::uint64_t rss_bytes = 0;
  std::string err;
};

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Runs the kiln binary with `args` under kiln_peak_rss; stdout and stderr
// go to files in `dir`.
Peak RunMeasured(const TempDir& dir, const std::vector<std::string>& args) {
  const std::string report = dir / "peak", out = dir / "stdout", err = dir / "stderr";
  std::vector<std::string> argv_s = {::kiln::testing::PeakRssLauncher(), report, out, err,
                                     ::kiln::testing::KilnBinary()};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  Peak p;
  const int launcher = ::kiln::testing::ExitStatusInChild([&] {
    ::execv(argv[0], argv.data());
    return 127;
  });
  if (launcher != 0) {
    p.err = "kiln_peak_rss failed: exit status " + std::to_string(launcher);
    return p;
  }
  std::istringstream line(Slurp(report));
  if (!(line >> p.status >> p.rss_bytes))
    p.err = "kiln_peak_rss wrote no report";
  else
    p.err = Slurp(err);
  return p;
}

std::uint64_t Bound(std::uint64_t input_bytes) { return 2 * input_bytes + 64 * kMiB; }

// Appends little-endian integers and text to a buffer flushed to a file
// every megabyte.
class ChunkedWriter {
 public:
  explicit ChunkedWriter(const std::string& path) : out_(path, std::ios::binary) {}
  ~ChunkedWriter() { Flush(); }
  ChunkedWriter(const ChunkedWriter&) = delete;
  ChunkedWriter& operator=(const ChunkedWriter&) = delete;

  void Le(std::uint64_t v, int bytes) {
    for (int k = 0; k < bytes; ++k) buf_.push_back(static_cast<char>(v >> (8 * k)));
    MaybeFlush();
  }
  void Text(const std::string& s) {
    buf_ += s;
    MaybeFlush();
  }
  void Flush() {
    out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    written_ += buf_.size();
    buf_.clear();
    out_.flush();
  }
  [[nodiscard]] std::uint64_t size() const { return written_ + buf_.size(); }

 private:
  void MaybeFlush() {
    if (buf_.size() >= kMiB) Flush();
  }
  std::ofstream out_;
  std::string buf_;
  std::uint64_t written_ = 0;
};

// A short key unique to `i`: four characters from a 64-letter alphabet.
std::string Key(std::uint64_t i) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._";
  std::string k(4, 'A');
  for (int d = 3; d >= 0; --d, i /= 64) k[static_cast<std::size_t>(d)] = kAlphabet[i % 64];
  return k;
}

// A GGUF of about 30 MB of key/value pairs and no tensors: 100,000 pairs
// (the most the GGUF reader takes) of a 4-byte key and a 283-byte string
// value, 307 bytes each.
std::uint64_t WriteTinyMetadataGguf(const std::string& path) {
  constexpr std::uint64_t kPairs = 100'000;
  const std::string value(283, 'v');
  ChunkedWriter w(path);
  w.Text("GGUF");
  w.Le(3, 4);
  w.Le(0, 8);       // tensor_count
  w.Le(kPairs, 8);  // metadata_kv_count
  for (std::uint64_t i = 0; i < kPairs; ++i) {
    w.Le(4, 8);
    w.Text(Key(i));
    w.Le(8, 4);  // string
    w.Le(value.size(), 8);
    w.Text(value);
  }
  w.Flush();
  return w.size();
}

// A safetensors file whose header is 24+ MB of tiny __metadata__ entries
// ("KKKK":"", 10 bytes each), then one one-byte tensor: near the 25,000,000
// bytes @huggingface/hub reads, the longest header kiln reads.
std::uint64_t WriteTinyMetadataSafetensors(const std::string& path) {
  constexpr std::uint64_t kEntries = 24'000'000 / 10 + 1;
  std::string tail = R"(},"t":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})";
  const std::uint64_t header = 17 + kEntries * 10 - 1 + tail.size();  // {"__metadata__":{ ... }
  ChunkedWriter w(path);
  w.Le(header, 8);
  w.Text(R"({"__metadata__":{)");
  for (std::uint64_t i = 0; i < kEntries; ++i) w.Text((i > 0 ? ",\"" : "\"") + Key(i) + "\":\"\"");
  w.Text(tail);
  w.Text(std::string(1, '\x07'));
  w.Flush();
  EXPECT_EQ(w.size(), 8 + header + 1);
  return w.size();
}

// An 8 GiB sparse GGUF whose counts are the largest the file size allows:
// every remaining byte could be a 13-byte key/value pair or a 24-byte tensor
// info.
std::uint64_t WriteSparseGguf(const std::string& path, bool tensors) {
  constexpr std::uint64_t kSize = std::uint64_t{8} << 30;
  const std::uint64_t after_header = kSize - 24;
  {
    ChunkedWriter w(path);
    w.Text("GGUF");
    w.Le(3, 4);
    w.Le(tensors ? after_header / 24 : 0, 8);
    w.Le(tensors ? 0 : after_header / 13, 8);
  }
  EXPECT_EQ(truncate(path.c_str(), static_cast<off_t>(kSize)), 0);
  return kSize;
}

// Converts `in` (of `size` bytes) twice: with the default limits (refused at
// the metadata limit, with `refusal` on stderr) and with the entry limit
// raised (every entry read and checked, 200 printed, `report` on stderr).
// Both runs stay under the bound.
void ConvertBothWays(const TempDir& tmp, const std::string& in, std::uint64_t size,
                     const std::string& refusal, const std::string& report) {
  const Peak refused = RunMeasured(tmp, {"convert", in, tmp / "out.klnt"});
  EXPECT_EQ(refused.status, 1) << refused.err;
  EXPECT_NE(refused.err.find(refusal), std::string::npos) << refused.err;
  EXPECT_LE(refused.rss_bytes, Bound(size));
  const Peak read =
      RunMeasured(tmp, {"convert", in, tmp / "out.klnt", "--max-metadata-entries", "100000000"});
  EXPECT_EQ(read.status, 0) << read.err.substr(0, 2000);
  EXPECT_NE(read.err.find(report), std::string::npos) << read.err.substr(0, 2000);
  EXPECT_LE(read.rss_bytes, Bound(size)) << "input " << size;
  std::printf("%s: %llu bytes, peak RSS %llu (refused), %llu (read)\n", in.c_str(),
              static_cast<unsigned long long>(size),
              static_cast<unsigned long long>(refused.rss_bytes),
              static_cast<unsigned long long>(read.rss_bytes));
}

TEST(MemoryBound, GgufOfTinyMetadataEntries) {
  TempDir tmp;
  const std::uint64_t size = WriteTinyMetadataGguf(tmp / "in.gguf");
  ASSERT_GE(size, 30'000'000u);
  ConvertBothWays(tmp, tmp / "in.gguf", size, "exceeds the limit of 65536 entries",
                  "100000 entries not carried over");
}

TEST(MemoryBound, SafetensorsOfTinyMetadataEntries) {
  TempDir tmp;
  const std::uint64_t size = WriteTinyMetadataSafetensors(tmp / "in.safetensors");
  ASSERT_GE(size, 24'000'000u);
  ConvertBothWays(tmp, tmp / "in.safetensors", size, "more than the limit of 65536 entries",
                  "2400001 entries not carried over");
}

// Before: std::bad_alloc and abort (exit 134) from reserving count entries.
TEST(MemoryBound, SparseGgufWithTheLargestCountsItsSizeAllows) {
  TempDir tmp;
  for (const bool tensors : {false, true}) {
    const std::uint64_t size = WriteSparseGguf(tmp / "in.gguf", tensors);
    const Peak p = RunMeasured(tmp, {"convert", tmp / "in.gguf", tmp / "out.klnt"});
    EXPECT_EQ(p.status, 1) << p.err;
    EXPECT_NE(p.err.find(tensors ? "tensor_count 357913940 exceeds the limit of 65535 tensors"
                                 : "metadata_kv_count 660764197 exceeds the limit of 65536"),
              std::string::npos)
        << p.err;
    EXPECT_LE(p.rss_bytes, Bound(size));
    EXPECT_LE(p.rss_bytes, 64 * kMiB);  // nothing of the 8 GiB is touched
    // Raising the entry limit leaves the header-bytes limit.
    const Peak raised = RunMeasured(tmp, {"convert", tmp / "in.gguf", tmp / "out.klnt",
                                          "--max-metadata-entries", "100000000000"});
    EXPECT_EQ(raised.status, 1) << raised.err;
    EXPECT_LE(raised.rss_bytes, 64 * kMiB);
  }
}

// kiln pack of a 32 MB array: the payload is streamed from the mapped input.
TEST(MemoryBound, PackOfALargeArray) {
  TempDir tmp;
  const std::string path = tmp / "big.npy";
  {
    ChunkedWriter w(path);
    std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (8388608,), }";
    dict.append(64 - (10 + dict.size() + 1) % 64, ' ');
    dict += '\n';
    w.Text("\x93NUMPY");
    w.Le(1, 1);
    w.Le(0, 1);
    w.Le(dict.size(), 2);
    w.Text(dict);
    for (int i = 0; i < 32; ++i) w.Text(std::string(kMiB, '\x01'));
  }
  const std::uint64_t size = std::filesystem::file_size(path);
  const Peak p = RunMeasured(tmp, {"pack", tmp / "out.klnt", "w=" + path});
  EXPECT_EQ(p.status, 0) << p.err;
  EXPECT_LE(p.rss_bytes, Bound(size));
  std::printf("pack of %llu bytes: peak RSS %llu\n", static_cast<unsigned long long>(size),
              static_cast<unsigned long long>(p.rss_bytes));
}

}  // namespace
}  // namespace kiln::testing_formats
