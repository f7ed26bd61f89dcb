// A system call made to fail with a chosen errno, in the calling process
// only (a seccomp filter; run it in a child, ExitStatusInChild): stands for a file system or
// kernel without a feature (renameat2, RENAME_EXCHANGE), which a test
// machine cannot otherwise provide.
#ifndef KILN_TESTS_SUPPORT_SYSCALL_FAULT_H_
#define KILN_TESTS_SUPPORT_SYSCALL_FAULT_H_

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>

#include "gtest/gtest.h"

namespace kiln::testing {

// Installs a seccomp filter program for the calling process (and its
// children); false where seccomp filters are not allowed.
template <std::size_t N>
inline bool Install(sock_filter (&filter)[N]) {
  sock_fprog program{static_cast<unsigned short>(N), filter};
  return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
         ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) == 0;
}

// renameat2 fails with `error` from here on: every call, or with
// `only_flags` set, the calls whose flags are exactly those (e.g.
// RENAME_EXCHANGE). False where seccomp filters are not allowed.
inline bool FailRenameat2(int error, std::uint32_t only_flags = 0) {
  constexpr auto kFlagsLow = static_cast<std::uint32_t>(offsetof(seccomp_data, args) + 4 * 8);
  const auto fail = static_cast<std::uint32_t>(
      SECCOMP_RET_ERRNO | (static_cast<std::uint32_t>(error) & SECCOMP_RET_DATA));
  const std::uint8_t skip_flags = only_flags == 0 ? 2 : 0;
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_renameat2, skip_flags, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kFlagsLow),  // little-endian: the low 32 bits
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, only_flags, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, fail),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  return Install(filter);
}

// Every call of system call `nr` fails with `error` from here on. False
// where seccomp filters are not allowed.
inline bool FailSyscall(std::uint32_t nr, int error) {
  const auto fail = static_cast<std::uint32_t>(
      SECCOMP_RET_ERRNO | (static_cast<std::uint32_t>(error) & SECCOMP_RET_DATA));
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, fail),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  return Install(filter);
}

// The exit status of a child whose filter could not be installed (seccomp
// filters are not allowed here): the test skips.
inline constexpr int kNoSeccomp = 77;

// In the coverage map's build (scripts/covmap.py links __gcov_dump in) a
// child writes its coverage counters before _exit, which skips the exit
// handlers that would: without it the map would not see what a test runs
// in a child. Elsewhere __gcov_dump is absent (a weak null) and this does
// nothing.
extern "C" void __gcov_dump(void) __attribute__((weak));
inline void FlushCoverage() {
  if (__gcov_dump != nullptr) __gcov_dump();
}

// Runs `step` (returning the exit status) in a child process and returns
// the child's raw wait status (for WIFEXITED, WIFSIGNALED...); -1, after a
// test failure that says why, when there is none (fork or waitpid failed).
template <typename Step>
int WaitStatusInChild(Step step) {
  const pid_t pid = ::fork();
  if (pid < 0) {
    ADD_FAILURE() << "fork: " << std::strerror(errno);
    return -1;
  }
  if (pid == 0) {
    const int code = step();
    FlushCoverage();
    ::_exit(code);
  }
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) {
    ADD_FAILURE() << "waitpid: " << std::strerror(errno);
    return -1;
  }
  return status;
}

// Runs `step` (returning the exit status) in a child process, where the
// filter it installs stays, and returns the child's exit status; -1, after a
// test failure that says why, when there is none (fork or waitpid failed,
// or a signal ended the child: SIGBUS named as such).
template <typename Step>
int ExitStatusInChild(Step step) {
  const int status = WaitStatusInChild(step);
  if (status == -1) return -1;
  if (!WIFEXITED(status)) {
    ADD_FAILURE() << "the child did not exit: status " << status
                  << (WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS
                          ? " (killed by SIGBUS: a mapping was unguarded)"
                          : "");
    return -1;
  }
  return WEXITSTATUS(status);
}

}  // namespace kiln::testing

#endif  // KILN_TESTS_SUPPORT_SYSCALL_FAULT_H_
