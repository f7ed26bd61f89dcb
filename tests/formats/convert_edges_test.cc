// kiln convert on inputs that are valid in their own format but cannot be
// carried into the other one: refused (exit 1) with the reason, nothing
// written.
#include <filesystem>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kiln/writer.h"
#include "test_util.h"

namespace kiln::testing_formats {
namespace {

namespace fs = std::filesystem;

// A valid Kiln block whose tensors are unnamed: safetensors keys every
// tensor by its name, so there is nothing to key it by.
TEST(ConvertEdges, UnnamedKilnTensorCannotBecomeSafetensors) {
  TempDir tmp;
  BlockWriter w;
  const std::vector<std::uint8_t> bytes = {1, 2, 3, 4};
  TensorRequest r;
  r.dtype = Dtype::kU8;
  r.shape = {4};
  ASSERT_TRUE(w.Add(r, Payload::Bytes(bytes)).ok());
  ASSERT_TRUE(w.WriteToFile(tmp / "u.klnt").ok());
  const Outcome c = Convert({tmp / "u.klnt", tmp / "o.safetensors"});
  EXPECT_EQ(c.status, 1) << c.err;
  EXPECT_NE(c.err.find("tensor 0 has no name, and safetensors needs one"), std::string::npos)
      << c.err;
  EXPECT_FALSE(fs::exists(tmp / "o.safetensors"));
}

// A limit is the most allowed, not the first refused: a GGUF file with
// exactly --max-metadata-entries pairs (10) converts; one fewer refuses it.
TEST(ConvertEdges, MetadataLimitEqualToTheCountIsAllowed) {
  TempDir tmp;
  std::string log;
  ASSERT_EQ(RunPython("write_gguf.py", {tmp / "in.gguf", tmp / "data"}, &log), 0) << log;
  const Outcome at = Convert({tmp / "in.gguf", tmp / "o.klnt", "--max-metadata-entries", "10"});
  EXPECT_EQ(at.status, 0) << at.err;
  EXPECT_TRUE(fs::exists(tmp / "o.klnt"));
  const Outcome below = Convert({tmp / "in.gguf", tmp / "p.klnt", "--max-metadata-entries", "9"});
  EXPECT_EQ(below.status, 1) << below.err;
  EXPECT_NE(below.err.find("metadata_kv_count 10 exceeds the limit of 9"), std::string::npos)
      << below.err;
}

}  // namespace
}  // namespace kiln::testing_formats
