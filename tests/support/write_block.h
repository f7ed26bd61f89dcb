// How a test writes the block a BlockWriter holds: through the one write
// surface, the plan (Plan(), then one of its writes), failing the test with
// the rule (an Error from Plan) or the I/O failure (a WriteError from the
// write) when either stops it. Header-only: the tests that include it link
// kiln::writer themselves.
#ifndef KILN_TESTS_SUPPORT_WRITE_BLOCK_H_
#define KILN_TESTS_SUPPORT_WRITE_BLOCK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kiln/writer.h"

namespace kiln::testing {

// The block in memory; empty, with a test failure, when it cannot be written.
inline std::vector<std::uint8_t> BlockBytes(const BlockWriter& w) {
  const Result<BlockPlan> plan = w.Plan();
  if (!plan.ok()) {
    ADD_FAILURE() << plan.error().ToString();
    return {};
  }
  Result<std::vector<std::uint8_t>, WriteError> bytes = plan.value().WriteToMemory();
  if (!bytes.ok()) {
    ADD_FAILURE() << bytes.error().ToString();
    return {};
  }
  return std::move(bytes).value();
}

// Writes the block to `path`: success, or the rule or I/O failure as text.
inline ::testing::AssertionResult WriteBlockFile(const BlockWriter& w, const std::string& path) {
  const Result<BlockPlan> plan = w.Plan();
  if (!plan.ok()) return ::testing::AssertionFailure() << plan.error().ToString();
  const Result<std::uint64_t, WriteError> n = plan.value().WriteToFile(path);
  if (!n.ok()) return ::testing::AssertionFailure() << n.error().ToString();
  return ::testing::AssertionSuccess();
}

}  // namespace kiln::testing

#endif  // KILN_TESTS_SUPPORT_WRITE_BLOCK_H_
