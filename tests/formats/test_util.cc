#include "test_util.h"

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>

#include "commands.h"
#include "gtest/gtest.h"
#include "support/paths.h"

namespace kiln::testing_formats {
namespace {

std::string Quote(const std::string& s) {
  std::string q = "'";
  for (const char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

template <typename F>
Outcome RunCommand(F run, const std::vector<std::string>& args) {
  std::ostringstream out, err;
  Outcome r;
  r.status = run(args, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

}  // namespace

std::vector<std::uint8_t> ReadBytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void WriteBytes(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

int RunPython(const std::string& script, const std::vector<std::string>& args,
              std::string* output) {
  // -B: write no bytecode into the source tree.
  std::string cmd = "/usr/bin/python3 -B " +
                    Quote(std::string(::kiln::testing::FormatsFixtures()) + "/" + script);
  for (const std::string& a : args) cmd += " " + Quote(a);
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (p == nullptr) return -1;
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) output->append(buf, n);
  const int st = ::pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

Outcome Pack(const std::vector<std::string>& args) { return RunCommand(cli::RunPack, args); }
Outcome Unpack(const std::vector<std::string>& args) { return RunCommand(cli::RunUnpack, args); }
Outcome Convert(const std::vector<std::string>& args) { return RunCommand(cli::RunConvert, args); }

}  // namespace kiln::testing_formats
