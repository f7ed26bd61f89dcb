// kiln unpack and pack on hostile names and existing files: tensor names
// never choose where bytes are written, and nothing is overwritten unless
// --force says so (and even then, never through a symlink).
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "formats/test_util.h"
#include "gtest/gtest.h"
#include "kiln/kiln.h"
#include "kiln/writer.h"
#include "support/tmpfs.h"
#include "support/write_block.h"

namespace kiln::testing_formats {
namespace {

namespace fs = std::filesystem;

const std::uint8_t kByte[1] = {42};

// A block with one u8 [bytes] tensor per name (an empty name: unnamed),
// tensor i filled with the byte i + 1.
void WriteBlock(const std::string& path, const std::vector<std::string>& names,
                std::uint64_t bytes = 1) {
  BlockWriter w;
  std::vector<std::vector<std::uint8_t>> payloads;
  for (const std::string& name : names) {
    TensorRequest r;
    r.name = name;
    r.dtype = Dtype::kU8;
    r.shape = {bytes};
    const auto fill = static_cast<std::uint8_t>(payloads.size() + 1);
    payloads.emplace_back(bytes == 1 ? std::vector<std::uint8_t>{kByte[0]}
                                     : std::vector<std::uint8_t>(bytes, fill));
    ASSERT_TRUE(w.Add(r, Payload::Bytes(payloads.back())).ok()) << name.size();
  }
  ASSERT_TRUE(kiln::testing::WriteBlockFile(w, path));
}

std::set<std::string> Tree(const fs::path& root) {
  std::set<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    out.insert(fs::relative(e.path(), root).string());
  }
  return out;
}

std::string Text(const std::string& path) {
  const std::vector<std::uint8_t> b = ReadBytes(path);
  return {b.begin(), b.end()};
}

TEST(UnpackSafety, HostileNamesNeverChooseWhereBytesGo) {
  TempDir tmp;
  const std::string long_name(60000, 'x');
  const std::vector<std::string> names = {"../../evil", "/etc/passwd", std::string("nul\0byte", 8),
                                          long_name, "tab\tnew\nline\\ \x7f"};
  WriteBlock(tmp / "hostile.klnt", names);
  const Outcome r = Unpack({tmp / "hostile.klnt", tmp / "a/b"});
  ASSERT_EQ(r.status, 0) << r.err;

  const std::set<std::string> want = {
      "hostile.klnt",
      "a",
      "a/b",
      "a/b/index.tsv",
      "a/b/tensor-00000.npy",
      "a/b/tensor-00001.npy",
      "a/b/tensor-00002.npy",
      "a/b/tensor-00003.npy",
      "a/b/tensor-00004.npy",
  };
  EXPECT_EQ(Tree(tmp.path()), want);
  EXPECT_FALSE(fs::exists(tmp.path().parent_path() / "evil"));

  std::istringstream index(Text(tmp / "a/b/index.tsv"));
  std::vector<std::string> lines;
  for (std::string line; std::getline(index, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 6u);  // header + one line per tensor: no raw newline leaked
  EXPECT_TRUE(lines[1].starts_with("0\t../../evil\ttensor-00000.npy\t")) << lines[1].substr(0, 80);
  EXPECT_TRUE(lines[2].starts_with("1\t/etc/passwd\ttensor-00001.npy\t")) << lines[2].substr(0, 80);
  EXPECT_TRUE(lines[3].starts_with("2\tnul\\x00byte\t")) << lines[3].substr(0, 80);
  EXPECT_TRUE(lines[4].starts_with("3\t" + long_name)) << lines[4].substr(0, 80);
  EXPECT_TRUE(lines[5].starts_with("4\ttab\\x09new\\x0aline\\\\ \\x7f\t"))
      << lines[5].substr(0, 80);
  for (const std::string& line : lines) {
    EXPECT_EQ(std::count(line.begin(), line.end(), '\t'), 7) << line.substr(0, 40);
  }
}

TEST(UnpackSafety, RefusesToOverwriteWithoutForce) {
  TempDir tmp;
  WriteBlock(tmp / "in.klnt", {"a", "b"});
  ASSERT_EQ(Unpack({tmp / "in.klnt", tmp / "out"}).status, 0);
  WriteBytes(tmp / "out/tensor-00001.npy", {'m', 'i', 'n', 'e'});
  const Outcome again = Unpack({tmp / "in.klnt", tmp / "out"});
  EXPECT_EQ(again.status, 2);
  EXPECT_NE(again.err.find("exists (use --force to replace it)"), std::string::npos) << again.err;
  EXPECT_EQ(Text(tmp / "out/tensor-00001.npy"), "mine");
  const Outcome forced = Unpack({"--force", tmp / "in.klnt", tmp / "out"});
  EXPECT_EQ(forced.status, 0) << forced.err;
  EXPECT_NE(Text(tmp / "out/tensor-00001.npy"), "mine");
}

using Plant = void (*)(const fs::path& to, const fs::path& link);
void PlantSymlink(const fs::path& to, const fs::path& link) { fs::create_symlink(to, link); }
void PlantHardLink(const fs::path& to, const fs::path& link) { fs::create_hard_link(to, link); }

// Plants a link to a file outside DIR as DIR/tensor-00000.npy, then unpacks
// with --force: DIR is replaced whole, the link removed with the old DIR,
// never written through.
void ExpectForceLeavesTheLinkTargetAlone(Plant plant) {
  TempDir tmp;
  WriteBlock(tmp / "in.klnt", {"a"});
  fs::create_directory(tmp / "out");
  WriteBytes(tmp / "target", {'k', 'e', 'e', 'p'});
  plant(tmp / "target", tmp / "out/tensor-00000.npy");
  const Outcome r = Unpack({"--force", tmp / "in.klnt", tmp / "out"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Text(tmp / "target"), "keep");
  EXPECT_FALSE(fs::is_symlink(tmp / "out/tensor-00000.npy"));
  EXPECT_EQ(ReadBytes(tmp / "out/tensor-00000.npy").back(), 42);
}

TEST(UnpackSafety, ForceNeverFollowsASymlink) { ExpectForceLeavesTheLinkTargetAlone(PlantSymlink); }

// Before the fix --force opened DIR/tensor-00000.npy with O_TRUNC: through a
// hard link planted there, it overwrote a file outside DIR.
TEST(UnpackSafety, ForceNeverWritesThroughAHardLink) {
  ExpectForceLeavesTheLinkTargetAlone(PlantHardLink);
}

TEST(UnpackSafety, InvalidInputIsReportedLikeValidate) {
  TempDir tmp;
  WriteBytes(tmp / "junk.klnt", {'G', 'G', 'U', 'F', 3, 0, 0, 0});
  const Outcome r = Unpack({tmp / "junk.klnt", tmp / "out"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("junk.klnt: FRAME H1 at byte 0: "), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(tmp / "out"));
}

TEST(UnpackSafety, UnnamedTensorsHaveAnEmptyNameField) {
  TempDir tmp;
  WriteBlock(tmp / "in.klnt", {"", ""});
  ASSERT_EQ(Unpack({tmp / "in.klnt", tmp / "out"}).status, 0);
  EXPECT_NE(Text(tmp / "out/index.tsv").find("\n1\t\ttensor-00001.npy\tu8\t[1]\t-\t0\t-\n"),
            std::string::npos);
}

// Every file (relative path) under `root` with its contents.
std::map<std::string, std::string> Snapshot(const fs::path& root) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    const std::string rel = fs::relative(e.path(), root).string();
    out[rel] = e.is_regular_file() ? Text(e.path().string()) : "<dir>";
  }
  return out;
}

// Before the fix --force rewrote DIR in place: files of the earlier unpack
// that the new one does not make stayed beside the new ones.
TEST(UnpackSafety, ForceOverAnEarlierUnpackLeavesNothingStale) {
  TempDir tmp;
  WriteBlock(tmp / "three.klnt", {"a", "b", "c"});
  WriteBlock(tmp / "one.klnt", {"z"});
  ASSERT_EQ(Unpack({tmp / "three.klnt", tmp / "out"}).status, 0);
  const Outcome r = Unpack({"--force", tmp / "one.klnt", tmp / "out"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Tree(tmp / "out"), (std::set<std::string>{"index.tsv", "tensor-00000.npy"}));
  const std::string index = Text(tmp / "out/index.tsv");
  EXPECT_EQ(std::count(index.begin(), index.end(), '\n'), 2) << index;
  std::set<std::string> siblings;  // no staging or set-aside directory left
  for (const auto& e : fs::directory_iterator(tmp.path())) siblings.insert(e.path().filename());
  EXPECT_EQ(siblings, (std::set<std::string>{"one.klnt", "out", "three.klnt"}));
}

// Before the fix `unpack --force DIR/tensor-00000.npy DIR` truncated its own
// (memory-mapped) input while reading it. Now DIR is built beside the old
// one and swapped in; the mapping of the old input stays valid.
// Before the fix `unpack --force DIR/tensor-00000.npy DIR` truncated its own
// input while reading it; and --force replaces DIR whole, so an input kept
// in DIR (under any name) would be deleted. Refused: DIR and the input stay.
TEST(UnpackSafety, DirHoldingItsOwnInput) {
  TempDir tmp;
  WriteBlock(tmp / "seed.klnt", {"x"});
  ASSERT_EQ(Unpack({tmp / "seed.klnt", tmp / "out"}).status, 0);
  WriteBlock(tmp / "out/tensor-00000.npy", {"a", "b", "c"}, 4096);  // a block, by that name
  WriteBlock(tmp / "out/in.klnt", {"a"}, 64);
  const std::vector<std::uint8_t> before = ReadBytes(tmp / "out/tensor-00000.npy");
  for (const char* input : {"out/tensor-00000.npy", "out/in.klnt"}) {
    const Outcome r = Unpack({"--force", tmp / input, tmp / "out"});
    EXPECT_EQ(r.status, 2) << input << "\n" << r.err;
    EXPECT_NE(r.err.find("holds the input"), std::string::npos) << r.err;
    EXPECT_TRUE(fs::exists(tmp / input)) << input;
  }
  EXPECT_EQ(ReadBytes(tmp / "out/tensor-00000.npy"), before);
  EXPECT_TRUE(fs::exists(tmp / "out/index.tsv"));
}

// Before the fix a 12.8 MB block of 100,001 tiny tensors made 100,002 files.
TEST(UnpackSafety, DefaultBoundOnTheFilesCreated) {
  TempDir tmp;
  BlockWriter w;
  for (std::uint32_t i = 0; i <= 100'000; ++i) {
    TensorRequest r;
    r.dtype = Dtype::kU8;
    r.shape = {0};
    ASSERT_TRUE(w.Add(r, Payload::Bytes({})).ok());
  }
  ASSERT_TRUE(kiln::testing::WriteBlockFile(w, tmp / "many.klnt"));
  const Outcome r = Unpack({tmp / "many.klnt", tmp / "out"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("LIMIT H7"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(tmp / "out"));
}

TEST(UnpackSafety, MaxTensorsAndMaxBlockBytes) {
  TempDir tmp;
  WriteBlock(tmp / "in.klnt", {"a", "b", "c", "d", "e"});
  const Outcome over = Unpack({"--max-tensors", "4", tmp / "in.klnt", tmp / "out"});
  EXPECT_EQ(over.status, 1);
  EXPECT_NE(over.err.find("LIMIT H7"), std::string::npos) << over.err;
  EXPECT_FALSE(fs::exists(tmp / "out"));
  const Outcome big = Unpack({"--max-block-bytes", "100", tmp / "in.klnt", tmp / "out"});
  EXPECT_EQ(big.status, 1);
  EXPECT_NE(big.err.find("LIMIT H7"), std::string::npos) << big.err;
  EXPECT_EQ(Unpack({"--max-tensors", "x", tmp / "in.klnt", tmp / "out"}).status, 2);
  EXPECT_EQ(Unpack({tmp / "in.klnt", tmp / "out", "--max-tensors"}).status, 2);
  const Outcome ok = Unpack({"--max-tensors", "5", tmp / "in.klnt", tmp / "out"});
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_EQ(Tree(tmp / "out").size(), 6u);
}

TEST(UnpackSafety, DirThatIsASymlinkOrAFileIsRefused) {
  TempDir tmp;
  WriteBlock(tmp / "in.klnt", {"a"});
  fs::create_directory(tmp / "real");
  fs::create_directory_symlink(tmp / "real", tmp / "link");
  const Outcome link = Unpack({"--force", tmp / "in.klnt", tmp / "link"});
  EXPECT_EQ(link.status, 2);
  EXPECT_NE(link.err.find("symbolic link"), std::string::npos) << link.err;
  EXPECT_TRUE(fs::is_empty(tmp / "real"));
  const Outcome file = Unpack({"--force", tmp / "in.klnt", tmp / "in.klnt"});
  EXPECT_EQ(file.status, 2);
  EXPECT_TRUE(Parse(ReadBytes(tmp / "in.klnt")).ok());
  EXPECT_EQ(Unpack({tmp / "in.klnt", tmp / "."}).status, 2);
  EXPECT_EQ(Unpack({tmp / "in.klnt", (tmp / "new") + "/"}).status, 0);
  EXPECT_TRUE(fs::exists(tmp / "new/index.tsv"));
}

// Before the fix an unpack that ran out of space left truncated
// tensor-*.npy files in DIR and, with --force, the earlier index.tsv beside
// them. Now the earlier DIR stays whole and nothing else is left.
TEST(UnpackSafety, FullFileSystemLeavesTheEarlierStateWhole) {
  testing::SmallTmpfs disk("1m");
  if (!disk.mounted()) GTEST_SKIP() << disk.why();
  TempDir tmp;
  WriteBlock(tmp / "small.klnt", {"a", "b"});
  WriteBlock(tmp / "big.klnt", {"a", "b", "c"}, 512 * 1024);  // 1.5 MiB of payload
  const fs::path root = disk.path();
  ASSERT_EQ(Unpack({tmp / "small.klnt", (root / "out").string()}).status, 0);
  const auto before = Snapshot(root);
  const Outcome forced = Unpack({"--force", tmp / "big.klnt", (root / "out").string()});
  EXPECT_EQ(forced.status, 2);
  EXPECT_NE(forced.err.find("No space left on device"), std::string::npos) << forced.err;
  EXPECT_EQ(Snapshot(root), before);
  const Outcome fresh = Unpack({tmp / "big.klnt", (root / "fresh").string()});
  EXPECT_EQ(fresh.status, 2);
  EXPECT_EQ(Snapshot(root), before);
}

TEST(Pack, UsageErrors) {
  TempDir tmp;
  EXPECT_EQ(Pack({}).status, 2);
  EXPECT_EQ(Pack({tmp / "o.klnt"}).status, 2);
  EXPECT_EQ(Pack({tmp / "o.klnt", "no-equals.npy"}).status, 2);
  EXPECT_EQ(Pack({tmp / "o.klnt", "=x.npy"}).status, 2);
  const Outcome missing = Pack({tmp / "o.klnt", "a=" + (tmp / "missing.npy")});
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.err.find("cannot open"), std::string::npos);
  EXPECT_FALSE(fs::exists(tmp / "o.klnt"));
}

TEST(Pack, RepeatedNameIsAUsageError) {
  TempDir tmp;
  WriteBlock(tmp / "k.klnt", {"a"});
  ASSERT_EQ(Unpack({tmp / "k.klnt", tmp / "u"}).status, 0);
  const std::string npy = tmp / "u/tensor-00000.npy";
  const Outcome r = Pack({tmp / "o.klnt", "a=" + npy, "a=" + npy});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("TYPE N5"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(tmp / "o.klnt"));
}

TEST(Pack, OutputMayReplaceAnInput) {
  TempDir tmp;
  WriteBlock(tmp / "k.klnt", {"a"});
  ASSERT_EQ(Unpack({tmp / "k.klnt", tmp / "u"}).status, 0);
  const std::string npy = tmp / "u/tensor-00000.npy";
  const Outcome r = Pack({npy, "a=" + npy});  // the input stays readable while written
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(Parse(ReadBytes(npy)).ok());
}

}  // namespace
}  // namespace kiln::testing_formats
