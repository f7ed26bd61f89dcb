// The format tools end to end, against files written by tools kiln did not
// write: NumPy (python3-numpy) for .npy, and small independent writers that
// follow the published safetensors and GGUF layouts (tests/formats/*.py).
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "formats/test_util.h"
#include "gtest/gtest.h"
#include "kiln/kiln.h"
#include "progress.h"
#include "support/paths.h"
#include "support/write_block.h"

namespace kiln {
namespace {

using testing_formats::Convert;
using testing_formats::Outcome;
using testing_formats::Pack;
using testing_formats::ReadBytes;
using testing_formats::RunPython;
using testing_formats::TempDir;
using testing_formats::Unpack;

// The .npy files of `dir`, as NAME=PATH arguments in name order.
std::vector<std::string> NpyArguments(const std::string& dir) {
  std::vector<std::string> args;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".npy") {
      args.push_back(entry.path().stem().string() + "=" + entry.path().string());
    }
  }
  std::sort(args.begin(), args.end());
  return args;
}

std::optional<Tensor> Find(const Directory& dir, std::string_view name) {
  const auto i = dir.Find(name);
  if (!i) return std::nullopt;
  return dir.tensor(*i);
}

TEST(Numpy, PackUnpackAndNumpyReadsBackEqualArrays) {
  TempDir tmp;
  std::string log;
  ASSERT_EQ(RunPython("make_npy.py", {tmp / "good", tmp / "bad"}, &log), 0)
      << log << "(is python3-numpy installed? scripts/setup.sh installs it)";
  std::vector<std::string> args = {tmp / "all.klnt"};
  const std::vector<std::string> inputs = NpyArguments(tmp / "good");
  args.insert(args.end(), inputs.begin(), inputs.end());
  const Outcome packed = Pack(args);
  ASSERT_EQ(packed.status, 0) << packed.err;

  const std::vector<std::uint8_t> block = ReadBytes(tmp / "all.klnt");
  const Result<Directory> dir = Parse(block);
  ASSERT_TRUE(dir.ok()) << dir.error().ToString();
  ASSERT_EQ(dir.value().tensor_count(), inputs.size());
  // Argument order is tensor order.
  for (std::uint32_t i = 0; i < inputs.size(); ++i) {
    EXPECT_EQ(std::string(dir.value().tensor(i).name) + "=",
              inputs[i].substr(0, inputs[i].find('=') + 1));
  }
  const auto be = Find(dir.value(), "be_i32_5");
  ASSERT_TRUE(be);
  EXPECT_EQ(be->dtype, Dtype::kI32);
  // Big-endian 1 became little-endian 1.
  EXPECT_EQ(be->payload[0], 1);
  EXPECT_EQ(be->payload[3], 0);
  EXPECT_EQ(Find(dir.value(), "c128_2")->dtype, Dtype::kC128);
  EXPECT_EQ(Find(dir.value(), "f64_scalar")->rank, 0);

  const Outcome unpacked = Unpack({tmp / "all.klnt", tmp / "out"});
  ASSERT_EQ(unpacked.status, 0) << unpacked.err;
  std::string check;
  EXPECT_EQ(RunPython("check_npy.py", {tmp / "good", tmp / "out"}, &check), 0) << check;
}

TEST(Numpy, RefusesWhatKilnCannotHold) {
  TempDir tmp;
  std::string log;
  ASSERT_EQ(RunPython("make_npy.py", {tmp / "good", tmp / "bad"}, &log), 0) << log;
  const std::pair<const char*, const char*> cases[] = {
      {"object", "object array"}, {"fortran_2x3", "Fortran order"}, {"unicode", "string dtype"},
      {"bytes", "string dtype"},  {"structured", "structured"},     {"datetime", "datetime"},
      {"void", "void"},
  };
  for (const auto& [name, why] : cases) {
    const Outcome r =
        Pack({tmp / "x.klnt", std::string("x=") + (tmp / "bad") + "/" + name + ".npy"});
    EXPECT_EQ(r.status, 1) << name;
    EXPECT_NE(r.err.find(why), std::string::npos) << name << ": " << r.err;
    EXPECT_FALSE(std::filesystem::exists(tmp / "x.klnt")) << name;
  }
}

// numpy.load refuses a header whose shape, though empty, has an itemsize
// times its nonzero dimensions past 2^63-1; unpack writes such a tensor as
// raw .bin (no bytes), described by index.tsv, as it does a bf16 one.
TEST(Numpy, UnpackWritesWhatNumpyCannotHoldAsBin) {
  TempDir tmp;
  const struct {
    const char* name;
    Dtype dtype;
    std::vector<std::uint64_t> shape;
    const char* file;
  } cases[] = {
      {"u8_edge", Dtype::kU8, {0, 9223372036854775807u}, "tensor-00000.npy"},
      {"u8_past", Dtype::kU8, {0, 9223372036854775808u}, "tensor-00001.bin"},
      {"u8_max", Dtype::kU8, {18446744073709551615u, 0}, "tensor-00002.bin"},
      {"f32_edge", Dtype::kF32, {2305843009213693951u, 0}, "tensor-00003.npy"},
      {"f32_past", Dtype::kF32, {2305843009213693952u, 0}, "tensor-00004.bin"},
      {"bf16", Dtype::kBf16, {0, 3}, "tensor-00005.bin"},
  };
  BlockWriter w;
  for (const auto& c : cases) {
    TensorRequest r;
    r.name = c.name;
    r.dtype = c.dtype;
    r.shape = c.shape;
    ASSERT_TRUE(w.Add(r, Payload::Bytes({})).ok()) << c.name;
  }
  ASSERT_TRUE(testing::WriteBlockFile(w, tmp / "z.klnt"));
  const Outcome r = Unpack({tmp / "z.klnt", tmp / "out"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::vector<std::uint8_t> index = ReadBytes(tmp / "out/index.tsv");
  const std::string text(index.begin(), index.end());
  for (const auto& c : cases) {
    EXPECT_NE(text.find(std::string("\t") + c.name + "\t" + c.file + "\t"), std::string::npos)
        << c.name << "\n"
        << text;
    EXPECT_TRUE(std::filesystem::exists(tmp / "out/" + c.file)) << c.file;
  }
  EXPECT_EQ(std::filesystem::file_size(tmp / "out/tensor-00001.bin"), 0u);
}

TEST(Safetensors, IndependentFileConvertsToKilnAndBackByteForByte) {
  TempDir tmp;
  std::string log;
  ASSERT_EQ(RunPython("write_safetensors.py", {tmp / "in.safetensors"}, &log), 0) << log;
  const Outcome to_kiln = Convert({tmp / "in.safetensors", tmp / "mid.klnt"});
  ASSERT_EQ(to_kiln.status, 0) << to_kiln.err;
  EXPECT_EQ(to_kiln.err, "");  // no metadata, nothing to report

  const std::vector<std::uint8_t> block = ReadBytes(tmp / "mid.klnt");
  const Result<Directory> dir = Parse(block);
  ASSERT_TRUE(dir.ok()) << dir.error().ToString();
  ASSERT_EQ(dir.value().tensor_count(), 11u);
  EXPECT_EQ(dir.value().tensor(0).name, "embed.weight");  // file order kept
  EXPECT_EQ(dir.value().tensor(5).dtype, Dtype::kBf16);
  EXPECT_EQ(dir.value().tensor(9).dtype, Dtype::kF8E4m3fn);
  EXPECT_EQ(dir.value().tensor(10).name, "name with \"quotes\", \\ and \u00fc");

  const Outcome back = Convert({tmp / "mid.klnt", tmp / "out.safetensors"});
  ASSERT_EQ(back.status, 0) << back.err;
  EXPECT_EQ(ReadBytes(tmp / "out.safetensors"), ReadBytes(tmp / "in.safetensors"));
}

TEST(Safetensors, MetadataIsReportedNotDropped) {
  TempDir tmp;
  std::string log;
  ASSERT_EQ(RunPython("write_safetensors.py", {tmp / "in.safetensors", "--metadata"}, &log), 0);
  const Outcome r = Convert({tmp / "in.safetensors", tmp / "out.klnt"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("kiln has no place for metadata: 3 entries not carried over:"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("  format=pt\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("  note=" + std::string(80, 'n') + "...\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("  tab\\x09here=x\\x0ay\n"), std::string::npos) << r.err;
}

TEST(Gguf, IndependentFileConvertsWithQuantisedTensorsIntact) {
  TempDir tmp;
  std::string log;
  ASSERT_EQ(RunPython("write_gguf.py", {tmp / "in.gguf", tmp / "data"}, &log), 0) << log;
  const Outcome r = Convert({tmp / "in.gguf", tmp / "out.klnt"});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* line :
       {"kiln has no place for metadata: 10 entries not carried over:\n",
        "  general.architecture=llama\n", "  general.alignment=64\n", "  test.i32=-5\n",
        "  test.f32=0.5\n", "  test.bool=true\n", "  test.u64=1099511627776\n",
        "  test.tokens=[\"a\", \"b\", \"c\"]\n", "  test.ints=[1, -2, 3]\n"}) {
    EXPECT_NE(r.err.find(line), std::string::npos) << line << " not in: " << r.err;
  }

  const std::vector<std::uint8_t> block = ReadBytes(tmp / "out.klnt");
  const Result<Directory> dir = Parse(block);
  ASSERT_TRUE(dir.ok()) << dir.error().ToString();
  struct Want {
    const char* name;
    Dtype dtype;
    std::vector<std::uint64_t> shape;  // GGUF dims reversed
    const char* layout;
    std::uint32_t block_size;
  };
  const Want wants[] = {{"tok.f32", Dtype::kF32, {2, 3}, "", 0},
                        {"norm.f16", Dtype::kF16, {8}, "", 0},
                        {"blk.0.q4_0", Dtype::kOpaque, {2, 64}, "ggml.q4_0", 32},
                        {"blk.0.q8_0", Dtype::kOpaque, {3, 32}, "ggml.q8_0", 32}};
  ASSERT_EQ(dir.value().tensor_count(), 4u);
  for (std::uint32_t i = 0; i < 4; ++i) {
    const Tensor t = dir.value().tensor(i);
    const Want& w = wants[i];
    EXPECT_EQ(t.name, w.name);
    EXPECT_EQ(t.dtype, w.dtype) << w.name;
    EXPECT_EQ(std::vector<std::uint64_t>(t.dims().begin(), t.dims().end()), w.shape) << w.name;
    EXPECT_EQ(t.layout, w.layout) << w.name;
    EXPECT_EQ(t.block_size, w.block_size) << w.name;
    const std::vector<std::uint8_t> want = ReadBytes(tmp / "data" + "/" + w.name + ".bin");
    EXPECT_EQ(std::vector<std::uint8_t>(t.payload.begin(), t.payload.end()), want) << w.name;
  }
}

TEST(Gguf, UnpackWritesOpaqueTensorsAsRawBinWithTheirLayout) {
  TempDir tmp;
  std::string log;
  ASSERT_EQ(RunPython("write_gguf.py", {tmp / "in.gguf", tmp / "data"}, &log), 0) << log;
  ASSERT_EQ(Convert({tmp / "in.gguf", tmp / "k.klnt"}).status, 0);
  const Outcome r = Unpack({tmp / "k.klnt", tmp / "out"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(ReadBytes(tmp / "out/tensor-00002.bin"), ReadBytes(tmp / "data/blk.0.q4_0.bin"));
  const std::vector<std::uint8_t> index = ReadBytes(tmp / "out/index.tsv");
  const std::string text(index.begin(), index.end());
  EXPECT_NE(text.find("2\tblk.0.q4_0\ttensor-00002.bin\topaque\t[2, 64]\tggml.q4_0\t32\t-\n"),
            std::string::npos)
      << text;
}

TEST(Convert, UsageErrors) {
  TempDir tmp;
  EXPECT_EQ(Convert({tmp / "a.bin", tmp / "b.klnt"}).status, 2);          // unknown extension
  EXPECT_EQ(Convert({tmp / "a.gguf", tmp / "b.safetensors"}).status, 2);  // unsupported pair
  EXPECT_EQ(Convert({tmp / "a.klnt"}).status, 2);
  EXPECT_EQ(Convert({"--from", "zip", tmp / "a", tmp / "b.klnt"}).status, 2);
  const Outcome missing = Convert({tmp / "missing.safetensors", tmp / "b.klnt"});
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.err.find("cannot open"), std::string::npos) << missing.err;
}

TEST(Convert, FlagsOverrideExtensions) {
  TempDir tmp;
  std::string log;
  ASSERT_EQ(RunPython("write_safetensors.py", {tmp / "in.data"}, &log), 0) << log;
  const Outcome r = Convert({"--from", "safetensors", "--to", "kiln", tmp / "in.data", tmp / "o"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(Parse(ReadBytes(tmp / "o")).ok());
}

TEST(Convert, InvalidInputIsExit1AndLeavesNoOutput) {
  TempDir tmp;
  testing_formats::WriteBytes(tmp / "bad.gguf", {'G', 'G', 'U', 'F', 3, 0, 0, 0});
  const Outcome r = Convert({tmp / "bad.gguf", tmp / "out.klnt"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("gguf: the file ends inside the header counts"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(tmp / "out.klnt"));
}

TEST(Convert, KilnWithOpaqueTensorsHasNoSafetensorsDtype) {
  TempDir tmp;
  std::string log;
  ASSERT_EQ(RunPython("write_gguf.py", {tmp / "in.gguf", tmp / "data"}, &log), 0) << log;
  ASSERT_EQ(Convert({tmp / "in.gguf", tmp / "k.klnt"}).status, 0);
  const Outcome r = Convert({tmp / "k.klnt", tmp / "o.safetensors"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("safetensors has no dtype for kiln's opaque"), std::string::npos) << r.err;
}

// The caller limits of convert and pack: past one, exit 1 and no output.
TEST(Convert, LimitFlags) {
  TempDir tmp;
  std::string log;
  ASSERT_EQ(RunPython("write_gguf.py", {tmp / "in.gguf", tmp / "data"}, &log), 0) << log;
  const Outcome tensors = Convert({tmp / "in.gguf", tmp / "o.klnt", "--max-tensors", "2"});
  EXPECT_EQ(tensors.status, 1);
  EXPECT_NE(tensors.err.find("exceeds the limit of 2 tensors (at byte 8)"), std::string::npos)
      << tensors.err;
  const Outcome entries = Convert({tmp / "in.gguf", tmp / "o.klnt", "--max-metadata-entries", "9"});
  EXPECT_EQ(entries.status, 1);
  EXPECT_NE(entries.err.find("metadata_kv_count 10 exceeds the limit of 9"), std::string::npos)
      << entries.err;
  const Outcome header = Convert({tmp / "in.gguf", tmp / "o.klnt", "--max-header-bytes", "64"});
  EXPECT_EQ(header.status, 1);
  EXPECT_NE(header.err.find("header"), std::string::npos) << header.err;
  const Outcome block = Convert({tmp / "in.gguf", tmp / "o.klnt", "--max-block-bytes", "100"});
  EXPECT_EQ(block.status, 1);
  EXPECT_NE(block.err.find("LIMIT H7: the block would be"), std::string::npos) << block.err;
  EXPECT_FALSE(std::filesystem::exists(tmp / "o.klnt"));
  EXPECT_EQ(Convert({tmp / "in.gguf", tmp / "o.klnt", "--max-tensors", "x"}).status, 2);
  EXPECT_EQ(Convert({tmp / "in.gguf", tmp / "o.klnt", "--max-tensors"}).status, 2);
  EXPECT_EQ(Convert({tmp / "in.gguf", tmp / "o.klnt", "--max-tensors", "4"}).status, 0);

  const std::vector<std::uint8_t> npy = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 70, 0};
  std::string dict = "{'descr': '|u1', 'fortran_order': False, 'shape': (2,), }";
  dict.resize(69, ' ');
  dict += '\n';
  std::vector<std::uint8_t> file = npy;
  file.insert(file.end(), dict.begin(), dict.end());
  file.push_back(1);
  file.push_back(2);
  testing_formats::WriteBytes(tmp / "a.npy", file);
  const Outcome many =
      Pack({"--max-tensors", "1", tmp / "p.klnt", "a=" + (tmp / "a.npy"), "b=" + (tmp / "a.npy")});
  EXPECT_EQ(many.status, 1);
  EXPECT_NE(many.err.find("2 tensors, more than --max-tensors 1"), std::string::npos) << many.err;
  const Outcome big = Pack({tmp / "p.klnt", "--max-block-bytes", "128", "a=" + (tmp / "a.npy")});
  EXPECT_EQ(big.status, 1);
  EXPECT_NE(big.err.find("LIMIT H7"), std::string::npos) << big.err;
  EXPECT_FALSE(std::filesystem::exists(tmp / "p.klnt"));
  EXPECT_EQ(Pack({tmp / "p.klnt", "--max-block-bytes", "1000", "a=" + (tmp / "a.npy")}).status, 0);
  // A block of exactly --max-block-bytes is within the limit; one byte less
  // is not.
  const auto size = std::filesystem::file_size(tmp / "p.klnt");
  EXPECT_EQ(
      Pack({tmp / "q.klnt", "--max-block-bytes", std::to_string(size), "a=" + (tmp / "a.npy")})
          .status,
      0);
  EXPECT_EQ(
      Pack({tmp / "r.klnt", "--max-block-bytes", std::to_string(size - 1), "a=" + (tmp / "a.npy")})
          .status,
      1);
}

// The metadata report and reader errors print untrusted text through the
// one escaping function: C1, bidi, raw bytes and backslashes made visible.
TEST(Convert, UntrustedTextIsEscapedInTheReportAndInErrors) {
  TempDir tmp;
  auto str = [](std::vector<std::uint8_t>* b, std::string_view s) {
    for (int k = 0; k < 8; ++k) b->push_back(static_cast<std::uint8_t>(s.size() >> (8 * k)));
    b->insert(b->end(), s.begin(), s.end());
  };
  std::vector<std::uint8_t> g = {'G', 'G', 'U', 'F', 3, 0, 0, 0};
  for (const std::uint64_t count : {std::uint64_t{0}, std::uint64_t{1}}) {
    for (int k = 0; k < 8; ++k) g.push_back(static_cast<std::uint8_t>(count >> (8 * k)));
  }
  str(&g, "evil\u202e\u200bkey\\");
  g.insert(g.end(), {8, 0, 0, 0});
  str(&g,
      "v\xc2\x9b"
      "1m\xff\x1b[2J");
  testing_formats::WriteBytes(tmp / "m.gguf", g);
  const Outcome r = Convert({tmp / "m.gguf", tmp / "o.klnt"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("  evil\\u{202e}\\u{200b}key\\\\=v\\u{009b}1m\\xff\\x1b[2J\n"),
            std::string::npos)
      << r.err;
  g[16] = 2;  // two pairs claimed, one present: the error names the key escaped
  g.insert(g.end(), {1, 0, 0, 0, 0, 0, 0, 0, 0xe2, 0x80, 0xae});
  testing_formats::WriteBytes(tmp / "e.gguf", g);
  const Outcome e = Convert({tmp / "e.gguf", tmp / "o.klnt"});
  EXPECT_EQ(e.status, 1);
  EXPECT_EQ(e.err.find("\xe2\x80\xae"), std::string::npos) << e.err;
}

TEST(Progress, ReportsPercentagesOnlyWhenEnabled) {
  std::ostringstream shown, hidden;
  {
    cli::Progress p(shown, "kiln convert", std::uint64_t{200} << 20, true);
    p.Advance(std::uint64_t{100} << 20);
    p.Advance(std::uint64_t{100} << 20);
  }
  EXPECT_NE(shown.str().find("\rkiln convert:  50% (100 of 200 MiB)"), std::string::npos);
  EXPECT_NE(shown.str().find("\rkiln convert: 100% (200 of 200 MiB)\n"), std::string::npos);
  {
    cli::Progress p(hidden, "kiln convert", std::uint64_t{200} << 20, false);
    p.Advance(std::uint64_t{200} << 20);
  }
  EXPECT_EQ(hidden.str(), "");
}

TEST(Progress, SmallConversionsStaySilent) {
  TempDir tmp;
  std::string log;
  ASSERT_EQ(RunPython("write_safetensors.py", {tmp / "in.safetensors"}, &log), 0) << log;
  const Outcome r = Convert({tmp / "in.safetensors", tmp / "o.klnt"});
  EXPECT_EQ(r.err.find('\r'), std::string::npos);
}

// The wiring in main.cc: the command word reaches the right command.
TEST(Binary, CommandsAreWired) {
  TempDir tmp;
  std::string log;
  ASSERT_EQ(RunPython("write_safetensors.py", {tmp / "in.safetensors"}, &log), 0) << log;
  const std::string cmd = std::string(::kiln::testing::KilnBinary()) + " convert '" +
                          (tmp / "in.safetensors") + "' '" + (tmp / "o.klnt") +
                          "' >/dev/null 2>&1 && " + ::kiln::testing::KilnBinary() + " unpack '" +
                          (tmp / "o.klnt") + "' '" + (tmp / "u") + "' >/dev/null";
  const int st = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 0);
  EXPECT_TRUE(std::filesystem::exists(tmp / "u/index.tsv"));
  const int usage =
      std::system((std::string(::kiln::testing::KilnBinary()) + " pack >/dev/null 2>&1").c_str());
  EXPECT_EQ(WEXITSTATUS(usage), 2);
}

}  // namespace
}  // namespace kiln
