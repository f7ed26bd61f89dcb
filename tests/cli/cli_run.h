// Running the kiln binary from a test through /bin/sh, under `timeout`, so
// a command that hangs fails the test instead of hanging it.
#ifndef KILN_TESTS_CLI_RUN_H_
#define KILN_TESTS_CLI_RUN_H_

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "support/paths.h"

namespace kiln::testing {

struct Outcome {
  int status;  // the exit status; 124 when it timed out, -1 when killed
  std::string out;
};

inline std::string Quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs `kiln args` (KilnBinary()) with `redirects` appended (e.g. "2>&1", or
// "2>&1 >/dev/full") and standard input from `input` ("<&-" closes it);
// collects stdout. At most 60 seconds.
inline Outcome RunKiln(const std::string& args, const std::string& redirects,
                       const std::string& input = "</dev/null") {
  const std::string cmd =
      "timeout 60 " + Quote(KilnBinary()) + " " + args + " " + redirects + " " + input;
  FILE* p = popen(cmd.c_str(), "r");
  Outcome r{-1, ""};
  if (p == nullptr) return r;
  char buf[4096];
  std::size_t n = 0;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

// For a test that forks kiln itself (to hold a pipe end, or to run it with
// no shell in between): in the child, makes `in`, `out` and `err` its
// standard descriptors (-1: /dev/null, kClosed: left closed) and executes
// kiln (KilnBinary()) with `args`. Never returns; exit status 127 if the exec fails.
inline constexpr int kClosed = -2;
[[noreturn]] inline void ExecKiln(const std::vector<std::string>& args, int in, int out, int err) {
  const int null = ::open("/dev/null", O_RDWR);
  ::dup2(in >= 0 ? in : null, STDIN_FILENO);
  ::dup2(out >= 0 ? out : null, STDOUT_FILENO);
  ::dup2(err >= 0 ? err : null, STDERR_FILENO);
  if (in == kClosed) ::close(STDIN_FILENO);
  if (out == kClosed) ::close(STDOUT_FILENO);
  if (err == kClosed) ::close(STDERR_FILENO);
  std::vector<char*> argv{const_cast<char*>(KilnBinary())};
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execv(KilnBinary(), argv.data());
  ::_exit(127);
}

}  // namespace kiln::testing

#endif  // KILN_TESTS_CLI_RUN_H_
