// kiln unpack and pack on hostile names and existing files: tensor names
// never choose where bytes are written, and nothing is overwritten unless
// --force says so (and even then, never through a symlink).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "gtest/gtest.h"
#include "kiln/kiln.h"
#include "kiln/writer.h"
#include "test_util.h"

namespace kiln::testing_formats {
namespace {

namespace fs = std::filesystem;

const std::uint8_t kByte[1] = {42};

// A block with one u8 [1] tensor per name (an empty name: unnamed).
void WriteBlock(const std::string& path, const std::vector<std::string>& names) {
  BlockWriter w;
  for (const std::string& name : names) {
    TensorRequest r;
    r.name = name;
    r.dtype = Dtype::kU8;
    r.shape = {1};
    ASSERT_TRUE(w.Add(r, Payload::Bytes(kByte)).ok()) << name.size();
  }
  ASSERT_TRUE(w.WriteToFile(path).ok());
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

TEST(UnpackSafety, ForceNeverFollowsASymlink) {
  TempDir tmp;
  WriteBlock(tmp / "in.klnt", {"a"});
  fs::create_directory(tmp / "out");
  WriteBytes(tmp / "target", {'k', 'e', 'e', 'p'});
  fs::create_symlink(tmp / "target", tmp / "out/tensor-00000.npy");
  // --force replaces DIR whole: the symlink is removed with the old DIR,
  // never written through.
  const Outcome r = Unpack({"--force", tmp / "in.klnt", tmp / "out"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Text(tmp / "target"), "keep");
  EXPECT_FALSE(fs::is_symlink(tmp / "out/tensor-00000.npy"));
  EXPECT_EQ(ReadBytes(tmp / "out/tensor-00000.npy").back(), 42);
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
