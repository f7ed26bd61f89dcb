// Running the kiln binary from a test through /bin/sh, under `timeout`, so
// a command that hangs fails the test instead of hanging it.
#ifndef KILN_TESTS_CLI_RUN_H_
#define KILN_TESTS_CLI_RUN_H_

#include <sys/wait.h>

#include <cstdio>
#include <string>

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

// Runs `KILN_BINARY args` with `redirects` appended (e.g. "2>&1", or
// "2>&1 >/dev/full") and standard input from `input` ("<&-" closes it);
// collects stdout. At most 60 seconds.
inline Outcome RunKiln(const std::string& args, const std::string& redirects,
                       const std::string& input = "</dev/null") {
  const std::string cmd =
      "timeout 60 " + Quote(KILN_BINARY) + " " + args + " " + redirects + " " + input;
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

}  // namespace kiln::testing

#endif  // KILN_TESTS_CLI_RUN_H_
