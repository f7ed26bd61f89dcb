// The block codec of the structure-aware fuzz target (fuzz/structured/):
// decoding a golden case and encoding it again gives back its bytes, byte
// for byte; Decode refuses exactly the inputs it documents (shorter than a
// header, or more descriptors claimed than present); and deriving the
// dependent fields of a valid case gives a block kiln accepts.
#include <cstddef>
#include <span>

#include "gtest/gtest.h"
#include "kiln/directory.h"
#include "structured/codec.h"
#include "structured/derive.h"
#include "support/golden.h"

namespace {

using kiln::testing::Buffer;
using kiln::testing::GoldenCase;
namespace structured = kiln_fuzz::structured;

// What Decode documents it cannot split into regions.
bool Undecodable(const Buffer& b) {
  if (b.size() < kiln::kHeaderSize) return true;
  const std::uint32_t count =
      static_cast<std::uint32_t>(b[8]) | static_cast<std::uint32_t>(b[9]) << 8 |
      static_cast<std::uint32_t>(b[10]) << 16 | static_cast<std::uint32_t>(b[11]) << 24;
  return count > (b.size() - kiln::kHeaderSize) / kiln::kDescriptorSize;
}

class StructuredCodecTest : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(StructuredCodecTest, DecodeThenEncodeGivesTheSameBytes) {
  const Buffer bytes = kiln::testing::ReadFile(GetParam().path);
  const std::optional<structured::Block> block = structured::Decode(bytes);
  if (Undecodable(bytes)) {
    EXPECT_FALSE(block.has_value()) << "decoded an input Decode documents as undecodable";
    return;
  }
  ASSERT_TRUE(block.has_value());
  EXPECT_EQ(block->d.size(), block->h.tensor_count);
  EXPECT_EQ(structured::Encode(*block), bytes);
}

// Derive with nothing pinned lays a valid case out again (canonically, which
// may move its payloads), and the result is still valid.
class StructuredDeriveTest : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(StructuredDeriveTest, DeriveKeepsAValidCaseValid) {
  const GoldenCase& c = GetParam();
  const Buffer bytes = kiln::testing::ReadFile(c.path);
  std::optional<structured::Block> block = structured::Decode(bytes);
  ASSERT_TRUE(block.has_value());
  ASSERT_TRUE(structured::Derive(*block, structured::Pins{}, 1 << 20));
  const Buffer derived = structured::Encode(*block);
  const kiln::Result<kiln::Directory> r = kiln::Parse(derived);
  EXPECT_TRUE(r.ok()) << r.error().ToString();
}

INSTANTIATE_TEST_SUITE_P(Golden, StructuredCodecTest,
                         ::testing::ValuesIn(kiln::testing::LoadManifest()),
                         [](const auto& info) { return kiln::testing::TestName(info.param); });
INSTANTIATE_TEST_SUITE_P(GoldenValid, StructuredDeriveTest,
                         ::testing::ValuesIn(kiln::testing::ValidCases()),
                         [](const auto& info) { return kiln::testing::TestName(info.param); });

}  // namespace
