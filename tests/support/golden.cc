#include "golden.h"

#include <cctype>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>

#include "gtest/gtest.h"
#include "support/paths.h"

namespace kiln::testing {
namespace {

constexpr char kManifestHeader[] = "case\texpect\trule\toffset\ttensor\tdescription";

// "-" is none; otherwise a decimal number no larger than max. False when
// the column is neither.
template <typename T>
bool ParseColumn(const std::string& col, std::optional<T>* out) {
  if (col == "-") {
    out->reset();
    return true;
  }
  if (col.empty() || col.size() > 20) return false;
  unsigned long long v = 0;
  for (char ch : col) {
    if (ch < '0' || ch > '9') return false;
    const unsigned long long digit = static_cast<unsigned long long>(ch - '0');
    if (v > (~0ull - digit) / 10) return false;
    v = v * 10 + digit;
  }
  if (v > std::numeric_limits<T>::max()) return false;
  *out = static_cast<T>(v);
  return true;
}

}  // namespace

std::vector<GoldenCase> LoadManifest() {
  const std::string dir = ::kiln::testing::GoldenDir();
  std::ifstream in(dir + "/manifest.tsv");
  std::vector<GoldenCase> cases;
  if (!in) {
    ADD_FAILURE() << "cannot open " << dir << "/manifest.tsv";
    return cases;
  }
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (header) {
      EXPECT_EQ(line, kManifestHeader);
      header = false;
      continue;
    }
    std::vector<std::string> cols;
    std::stringstream ss(line);
    std::string col;
    while (std::getline(ss, col, '\t')) cols.push_back(col);
    GoldenCase c;
    if (cols.size() != 6 || !ParseColumn(cols[3], &c.offset) || !ParseColumn(cols[4], &c.tensor)) {
      ADD_FAILURE() << "malformed manifest line: " << line;
      continue;
    }
    c.name = cols[0];
    c.expect = cols[1];
    c.rule = cols[2];
    c.description = cols[5];
    c.path = dir + "/cases/" + c.name + ".klnt";
    cases.push_back(std::move(c));
  }
  return cases;
}

std::vector<GoldenCase> ValidCases() {
  std::vector<GoldenCase> out;
  for (GoldenCase& c : LoadManifest()) {
    if (c.valid()) out.push_back(std::move(c));
  }
  return out;
}

std::string TestName(const GoldenCase& c) {
  std::string s = c.name;
  for (char& ch : s) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return s;
}

Buffer ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) ADD_FAILURE() << "cannot open " << path;
  return Buffer(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace kiln::testing
