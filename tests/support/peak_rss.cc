// kiln_peak_rss: runs a command and reports its peak resident memory,
// measured from a process that is itself small.
//
// wait4's ru_maxrss of a forked child does not start at zero: the child's
// address space at the fork is a copy of its parent's, and Linux records
// that address space's high-water mark when the child execs. A test binary
// that has run other tests (a large heap) therefore cannot fork the command
// it measures itself: the parent's pages would count against the command's
// bound. The test execs this program instead, which forks the command from
// its own few pages.
//
// usage: kiln_peak_rss REPORT STDOUT STDERR PROGRAM [ARG...]
// The command's standard output and error go to the files STDOUT and
// STDERR; REPORT gets one line "<status> <peak RSS in bytes>", the status
// being the exit status or 128 + the signal that ended it. Exit status 0
// when REPORT was written, 2 otherwise (usage, fork, wait or write failed).
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fputs("usage: kiln_peak_rss REPORT STDOUT STDERR PROGRAM [ARG...]\n", stderr);
    return 2;
  }
  const pid_t pid = ::fork();
  if (pid < 0) return 2;
  if (pid == 0) {
    const int out = ::open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    const int err = ::open(argv[3], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (out < 0 || err < 0 || ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0) ::_exit(127);
    ::execv(argv[4], argv + 4);
    ::_exit(127);
  }
  int status = 0;
  rusage usage{};
  if (::wait4(pid, &status, 0, &usage) != pid) return 2;
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::FILE* const report = std::fopen(argv[1], "w");
  if (report == nullptr) return 2;
  // ru_maxrss is in KiB on Linux.
  const bool written =
      std::fprintf(report, "%d %lld\n", code, static_cast<long long>(usage.ru_maxrss) * 1024) > 0;
  return std::fclose(report) == 0 && written ? 0 : 2;
}
