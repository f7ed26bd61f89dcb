// The golden cases: golden/manifest.tsv and golden/cases/<case>.klnt.
#ifndef KILN_TESTS_SUPPORT_GOLDEN_H_
#define KILN_TESTS_SUPPORT_GOLDEN_H_

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "block_builder.h"

namespace kiln::testing {

struct GoldenCase {
  std::string name;
  std::string expect;  // "ok", "FRAME", "TYPE", "LIMIT" or "UTF8"
  std::string rule;    // "-" or a rule id
  // Negative cases: the byte offset the error points at, and the tensor it
  // names ("-" in the manifest: none). Valid cases: both "-".
  std::optional<std::uint64_t> offset;
  std::optional<std::uint32_t> tensor;
  std::string description;
  std::string path;

  [[nodiscard]] bool valid() const { return expect == "ok"; }
};

// GoogleTest prints a case by its name.
inline void PrintTo(const GoldenCase& c, std::ostream* os) { *os << c.name; }

// Every case of the manifest, in manifest order. Fails the calling test
// (ADD_FAILURE) when the manifest is missing or malformed.
[[nodiscard]] std::vector<GoldenCase> LoadManifest();
// Only the valid cases.
[[nodiscard]] std::vector<GoldenCase> ValidCases();
// The case name as a GoogleTest parameter name ([A-Za-z0-9_]).
[[nodiscard]] std::string TestName(const GoldenCase& c);
// The file's bytes.
[[nodiscard]] Buffer ReadFile(const std::string& path);

}  // namespace kiln::testing

#endif  // KILN_TESTS_SUPPORT_GOLDEN_H_
