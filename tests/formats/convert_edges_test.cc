// kiln convert and kiln pack on inputs that are valid in their own format
// but cannot be carried into the other one: refused (exit 1) with the
// reason, nothing written. And the limits' boundaries.
#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kiln/writer.h"
#include "progress.h"
#include "support/write_block.h"
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
  ASSERT_TRUE(kiln::testing::WriteBlockFile(w, tmp / "u.klnt"));
  const Outcome c = Convert({tmp / "u.klnt", tmp / "o.safetensors"});
  EXPECT_EQ(c.status, 1) << c.err;
  EXPECT_NE(c.err.find("tensor 0 has no name, and safetensors needs one"), std::string::npos)
      << c.err;
  EXPECT_FALSE(fs::exists(tmp / "o.safetensors"));
}

// Little-endian GGUF v3 fields, for files too many-tensored for a fixture.
void PutLe(std::vector<std::uint8_t>& out, std::uint64_t v, int bytes) {
  for (int k = 0; k < bytes; ++k) out.push_back(static_cast<std::uint8_t>(v >> (8 * k)));
}

// A GGUF file whose tensor names fill a Kiln name heap past offset 0xfffe
// (1,040 F32 tensors with 63-byte names, then a Q8_0 tensor named
// "q8.tensor.last.one.x", which starts below it): each tensor can be added,
// but the quantised tensor's layout name ("ggml.q8_0") would start at heap
// offset 65540, where layout_off (a u16 below 0xffff) cannot point. The
// block cannot be planned: refused with the writer's reason (exit 1, as
// the input's fault), nothing written.
TEST(ConvertEdges, GgufWhoseLayoutNameStartsPastTheHeapOffsetsIsRefused) {
  TempDir tmp;
  constexpr std::uint64_t kPlain = 1040;
  struct Info {
    std::string name;
    std::uint64_t dim;
    std::uint32_t type;
    std::uint64_t bytes;
  };
  std::vector<Info> infos;
  for (std::uint64_t i = 0; i < kPlain; ++i) {
    std::string name = std::to_string(i);
    name.insert(0, 63 - name.size(), 't');
    infos.push_back({name, 1, 0, 4});  // F32 [1]
  }
  infos.push_back({"q8.tensor.last.one.x", 32, 8, 34});  // Q8_0: one block of 32
  std::vector<std::uint8_t> file = {'G', 'G', 'U', 'F'};
  PutLe(file, 3, 4);
  PutLe(file, infos.size(), 8);
  PutLe(file, 0, 8);  // no metadata: alignment 32
  std::uint64_t offset = 0;
  for (const Info& t : infos) {
    PutLe(file, t.name.size(), 8);
    file.insert(file.end(), t.name.begin(), t.name.end());
    PutLe(file, 1, 4);
    PutLe(file, t.dim, 8);
    PutLe(file, t.type, 4);
    PutLe(file, offset, 8);
    offset += (t.bytes + 31) / 32 * 32;
  }
  file.resize((file.size() + 31) / 32 * 32 + offset, 0);
  WriteBytes(tmp / "in.gguf", file);
  const Outcome c = Convert({tmp / "in.gguf", tmp / "o.klnt"});
  EXPECT_EQ(c.status, 1) << c.err;
  EXPECT_EQ(c.err.rfind("kiln convert: cannot be stored in kiln: LIMIT H7", 0), 0u) << c.err;
  EXPECT_NE(c.err.find("layout name would start at heap offset 65540"), std::string::npos) << c.err;
  EXPECT_FALSE(fs::exists(tmp / "o.klnt"));
  EXPECT_EQ(std::distance(fs::directory_iterator(tmp.path()), fs::directory_iterator()), 1);
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

// A structured NumPy array (descr is a list of fields) has no Kiln dtype:
// kiln pack names the reason rather than a parse error.
TEST(ConvertEdges, StructuredNpyIsRefusedByName) {
  TempDir tmp;
  std::string dict =
      "{'descr': [('a', '<f4'), ('b', '<i2')], 'fortran_order': False, 'shape': (1,), }";
  dict.resize(128 - 10 - 1, ' ');
  dict += '\n';
  std::string file = "\x93NUMPY\x01";
  file += '\0';
  file += static_cast<char>(dict.size());
  file += '\0';
  file += dict;
  file.append(6, '\0');  // one record: a (4 bytes) and b (2)
  WriteBytes(tmp / "s.npy", std::vector<std::uint8_t>(file.begin(), file.end()));
  const Outcome r = Pack({tmp / "p.klnt", "s=" + (tmp / "s.npy")});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("structured dtypes (descr is a list of fields) are not supported"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(tmp / "p.klnt"));
}

// The progress line rounds down: 99.5% done shows 99%, not 100%, until the
// last byte. Both ways of computing it: done * 100 / total, and for totals
// of 2^57 bytes or more (where done * 100 could overflow) total / 100 first.
TEST(ConvertEdges, ProgressRoundsDown) {
  for (const std::uint64_t total : {std::uint64_t{200} << 20, std::uint64_t{1} << 60}) {
    std::ostringstream shown;
    {
      cli::Progress p(shown, "kiln convert", total, true);
      p.Advance(total - total / 200);
      EXPECT_NE(shown.str().find("\rkiln convert:  99% ("), std::string::npos) << shown.str();
      EXPECT_EQ(shown.str().find("100%"), std::string::npos) << shown.str();
      p.Advance(total / 200);
    }
    EXPECT_NE(shown.str().find("\rkiln convert: 100% ("), std::string::npos) << shown.str();
  }
  // A hundredth of the total, rounded down, is just under 1%: still 0%, for
  // totals whose product done * 100 needs more than 64 bits too.
  for (const std::uint64_t total : {std::uint64_t{1} << 57, ~std::uint64_t{0}}) {
    std::ostringstream shown;
    cli::Progress p(shown, "kiln convert", total, true);
    p.Advance(total / 100);
    EXPECT_EQ(shown.str(), "\rkiln convert:   0% (" + std::to_string((total / 100) >> 20) + " of " +
                               std::to_string(total >> 20) + " MiB)");
    p.Advance(1);
    EXPECT_NE(shown.str().find("\rkiln convert:   1% ("), std::string::npos) << shown.str();
  }
}

// Each percent is shown once: 200 MiB advanced a MiB at a time is 101
// updates (0% after the first MiB, then 1% to 100%), not 200.
TEST(ConvertEdges, ProgressShowsEachPercentOnce) {
  std::ostringstream shown;
  constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
  cli::Progress p(shown, "kiln convert", 200 * kMiB, true);
  for (int i = 0; i < 200; ++i) p.Advance(kMiB);
  const std::string text = shown.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\r'), 101) << text;
  EXPECT_TRUE(text.starts_with("\rkiln convert:   0% (1 of 200 MiB)\rkiln convert:   1% (2 of "))
      << text;
  EXPECT_TRUE(text.ends_with("\rkiln convert: 100% (200 of 200 MiB)")) << text;
}

}  // namespace
}  // namespace kiln::testing_formats
