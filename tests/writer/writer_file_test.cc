// BlockPlan::WriteToFile against a hostile or failing file system: a
// planted symlink is replaced, never followed; a full disk is an I/O error
// (WriteError, with errno), not a format rule, and leaves nothing behind.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "gtest/gtest.h"
#include "kiln/kiln.h"
#include "kiln/writer.h"
#include "support/golden.h"
#include "support/temp_dir.h"
#include "support/tmpfs.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

const std::uint8_t kBytes[8] = {1, 2, 3, 4, 5, 6, 7, 8};

BlockWriter SmallBlock() {
  BlockWriter w;
  TensorRequest r;
  r.name = "w";
  r.dtype = Dtype::kU8;
  r.shape = {8};
  EXPECT_TRUE(w.Add(r, Payload::Bytes(kBytes)).ok());
  return w;
}

// `size` bytes of u8 payload, produced while the block is written.
BlockWriter StreamedBlock(std::uint64_t size) {
  BlockWriter w;
  TensorRequest r;
  r.dtype = Dtype::kU8;
  r.shape = {size};
  EXPECT_TRUE(w.Add(r, Payload::Stream(size,
                                       [](std::span<std::uint8_t> out) {
                                         std::fill(out.begin(), out.end(), std::uint8_t{7});
                                         return true;
                                       }))
                  .ok());
  return w;
}

std::string Text(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

using TempDir = testing::ScratchDir;

std::size_t Entries(const fs::path& dir) {
  return static_cast<std::size_t>(
      std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

using Plant = void (*)(const fs::path& to, const fs::path& link);
void PlantSymlink(const fs::path& to, const fs::path& link) { fs::create_symlink(to, link); }
void PlantHardLink(const fs::path& to, const fs::path& link) { fs::create_hard_link(to, link); }

// Plants a link to a file "victim" as `link_name`, then writes out.klnt
// beside it: the victim keeps its bytes, out.klnt is a block of its own,
// and no temporary file is left.
void ExpectLinkNotWrittenThrough(Plant plant, const std::string& link_name) {
  TempDir tmp;
  const fs::path victim = tmp.path() / "victim";
  std::ofstream(victim) << "keep";
  plant(victim, tmp.path() / link_name);
  const fs::path out = tmp.path() / "out.klnt";
  const BlockWriter w = SmallBlock();
  const Result<BlockPlan> plan = w.Plan();
  ASSERT_TRUE(plan.ok()) << plan.error().ToString();
  const Result<std::uint64_t, WriteError> n = plan.value().WriteToFile(out);
  ASSERT_TRUE(n.ok()) << n.error().ToString();
  EXPECT_EQ(Text(victim), "keep");
  EXPECT_FALSE(fs::is_symlink(out));
  EXPECT_TRUE(Parse(testing::ReadFile(out)).ok());
  for (const auto& e : fs::directory_iterator(tmp.path())) {
    EXPECT_FALSE(e.path().filename().string().starts_with(".kiln-")) << e.path();
  }
}

// The old writer opened path + ".tmp" with fopen, which follows a symlink
// planted there: the block went into the file it pointed to.
TEST(WriterFile, SymlinkAtTheOldTemporaryNameIsNotFollowed) {
  ExpectLinkNotWrittenThrough(PlantSymlink, "out.klnt.tmp");
}

TEST(WriterFile, SymlinkAtTheTargetIsReplacedNotFollowed) {
  ExpectLinkNotWrittenThrough(PlantSymlink, "out.klnt");
}

TEST(WriterFile, HardLinkAtTheTargetIsReplacedNotWrittenThrough) {
  ExpectLinkNotWrittenThrough(PlantHardLink, "out.klnt");
}

// A target name as long as the file system allows (255 bytes) still works:
// the temporary name does not grow with it.
TEST(WriterFile, LongestFileNameWorks) {
  TempDir tmp;
  const fs::path out = tmp.path() / std::string(255, 'n');
  const BlockWriter w = SmallBlock();
  const Result<BlockPlan> plan = w.Plan();
  ASSERT_TRUE(plan.ok()) << plan.error().ToString();
  const Result<std::uint64_t, WriteError> n = plan.value().WriteToFile(out);
  ASSERT_TRUE(n.ok()) << n.error().ToString();
  EXPECT_TRUE(Parse(testing::ReadFile(out)).ok());
}

TEST(WriterFile, MissingDirectoryIsAnIoErrorWithErrno) {
  TempDir tmp;
  const BlockWriter w = SmallBlock();
  const Result<BlockPlan> plan = w.Plan();
  ASSERT_TRUE(plan.ok()) << plan.error().ToString();
  const Result<std::uint64_t, WriteError> n =
      plan.value().WriteToFile(tmp.path() / "no/such/dir/out.klnt");
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.error().error_number, ENOENT);
  EXPECT_EQ(n.error().step, WriteError::Step::kCreate);
  EXPECT_NE(n.error().ToString().find("cannot write"), std::string::npos) << n.error().ToString();
}

// A rule broken is the plan's Error: there is no plan to write, so no file.
TEST(WriterFile, RuleBrokenIsThePlansErrorAndWritesNothing) {
  TempDir tmp;
  BlockWriter w;
  TensorRequest r;
  r.dtype = Dtype::kI8;
  r.shape = {4, 6};
  r.scheme = QuantScheme::kPerAxis;
  r.axis = 1;
  r.scale_index = 1;  // no tensor 1: Q5, found when the block is written
  static const std::uint8_t kPayload[24] = {};
  ASSERT_TRUE(w.Add(r, Payload::Bytes(kPayload)).ok());
  const Result<BlockPlan> plan = w.Plan();
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().rule, Rule::Q5) << plan.error().ToString();
  EXPECT_EQ(Entries(tmp.path()), 0u);
}

TEST(WriterFile, FullFileSystemIsAnIoErrorAndLeavesNothingBehind) {
  testing::SmallTmpfs fs1("1m");
  if (!fs1.mounted()) GTEST_SKIP() << fs1.why();
  const fs::path out = fs::path(fs1.path()) / "big.klnt";
  std::ofstream(out) << "earlier";
  const BlockWriter w = StreamedBlock(std::uint64_t{3} << 20);
  const Result<BlockPlan> plan = w.Plan();
  ASSERT_TRUE(plan.ok()) << plan.error().ToString();
  const Result<std::uint64_t, WriteError> n = plan.value().WriteToFile(out);
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.error().error_number, ENOSPC) << n.error().ToString();
  EXPECT_EQ(n.error().step, WriteError::Step::kWrite) << n.error().ToString();
  EXPECT_EQ(Text(out), "earlier");  // the target keeps its contents
  EXPECT_EQ(Entries(fs1.path()), 1u);
}

}  // namespace
}  // namespace kiln
