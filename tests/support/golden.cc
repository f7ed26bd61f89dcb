#include "golden.h"

#include <cctype>
#include <fstream>
#include <iterator>
#include <sstream>

#include "gtest/gtest.h"

namespace kiln::testing {

std::vector<GoldenCase> LoadManifest() {
  const std::string dir = KILN_GOLDEN_DIR;
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
      EXPECT_EQ(line, "case\texpect\trule\tdescription");
      header = false;
      continue;
    }
    std::vector<std::string> cols;
    std::stringstream ss(line);
    std::string col;
    while (std::getline(ss, col, '\t')) cols.push_back(col);
    if (cols.size() != 4) {
      ADD_FAILURE() << "malformed manifest line: " << line;
      continue;
    }
    cases.push_back({cols[0], cols[1], cols[2], cols[3], dir + "/cases/" + cols[0] + ".klnt"});
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
