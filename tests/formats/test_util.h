// Helpers for the format tests: temporary directories, files, the fixture
// scripts (run with Debian's /usr/bin/python3, which has python3-numpy) and
// the kiln commands run in-process.
#ifndef KILN_TESTS_FORMATS_TEST_UTIL_H_
#define KILN_TESTS_FORMATS_TEST_UTIL_H_

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "support/temp_dir.h"

namespace kiln::testing_formats {

// A fresh directory, removed with everything in it on destruction.
using TempDir = testing::ScratchDir;

[[nodiscard]] std::vector<std::uint8_t> ReadBytes(const std::string& path);
void WriteBytes(const std::string& path, const std::vector<std::uint8_t>& bytes);

// Runs tests/formats/<script> with /usr/bin/python3 and the arguments;
// returns its exit status, its stdout and stderr in *output.
int RunPython(const std::string& script, const std::vector<std::string>& args, std::string* output);

struct Outcome {
  int status = -1;
  std::string out;
  std::string err;
};

// kiln pack / unpack / convert, in-process.
Outcome Pack(const std::vector<std::string>& args);
Outcome Unpack(const std::vector<std::string>& args);
Outcome Convert(const std::vector<std::string>& args);

}  // namespace kiln::testing_formats

#endif  // KILN_TESTS_FORMATS_TEST_UTIL_H_
