// base::GuardMapping's table when it is full.
//
// The table holds 4,096 mappings (kMaxGuardedMappings, the number
// SECURITY.md gives users): a process with that many inputs mapped at once
// has every one of them guarded, the last as much as the first, and only
// one more is refused (-1). The last mapping is then truncated by "another
// process" and its lost tail read: the read sees zeros and the input
// reports the cut, where an unguarded mapping would die of SIGBUS. Run in a
// child process, so that a SIGBUS fails the test instead of killing the
// test binary.
//
// And a MappedInput gives its mapping back when it is destroyed: a
// program that validates many files one after another (kiln validate a
// directory, a server) would otherwise run out of address space or of
// the kernel's mapping count.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "kiln/base/mapped_input.h"
#include "kiln/base/mapping_guard.h"
#include "support/syscall_fault.h"
#include "support/temp_dir.h"

namespace kiln {
namespace {

using base::kMaxGuardedMappings;

std::size_t PageSize() { return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)); }

// Only the first byte is this process's own copy: the rest stays the file's.
std::size_t FirstByte(std::span<const std::uint8_t>) { return 1; }

// A child's exit status names the first step that failed (0: every step
// held), or where a fault outside every guard went.
enum Step : int {
  kAllHeld = 0,
  kNoAddressSpace = 10,
  kFillerRefused = 11,
  kSlotTwice = 12,
  kInputFailed = 13,
  kOneTooManyAccepted = 14,
  kNotTruncated = 15,
  kTailNotZero = 16,
  kCutNotReported = 17,
  kCutBeforeTruncation = 18,
  kAnyCutNotReported = 19,
  kMapFailed = 20,
  kSetupFailed = 21,
  kScopeDidNotInstall = 22,
  kScopeDidNotRestore = 23,
  kInnerScopeRestored = 24,
  // A fault outside every guard reached...
  kSigInfoHandlerRan = 30,        // the previous SA_SIGINFO handler, with the fault's siginfo
  kSigInfoHandlerWrongInfo = 31,  // it, but with another signal, address or no context
  kPlainHandlerRan = 32,
  kPlainHandlerWrongSignal = 33,
  kReadReturnedZero = 34,  // nobody: the read returned (claimed by kiln's handler)
  kReadReturnedOther = 35,
  // A MappedInput cut while its prefix is privatized.
  kCutInputAccepted = 40,
  kWrongMessage = 41,
  kBytesKept = 42,
  kMappingKept = 43,
  kTruncateFailed = 44,
  // A guarded range's last byte, and its unguarded neighbour.
  kLastByteNotZero = 50,
  kLastByteCutNotSeen = 51,
};

// Writes `length` bytes of `byte` to a new file at `path`.
bool WriteFile(const std::string& path, std::size_t length, char byte) {
  const std::string bytes(length, byte);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  const bool written = ::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(length);
  return ::close(fd) == 0 && written;
}

// The deaths some children are expected to die (SIGBUS) leave no core file.
bool NoCoreFiles() {
  const rlimit no_core{0, 0};
  return ::setrlimit(RLIMIT_CORE, &no_core) == 0;
}

// The address of the read expected to fault; set before it, read by
// ExpectedFaultHandler (lock-free).
std::atomic<const void*> g_fault_address{nullptr};

// A process's own SA_SIGINFO handler, installed before kiln's: its siginfo
// must name the expected fault, and its context (the interrupted thread's
// ucontext_t, which the kernel always passes) must be there.
void ExpectedFaultHandler(int sig, siginfo_t* info, void* context) {
  const bool right = sig == SIGBUS && info != nullptr && info->si_signo == SIGBUS &&
                     info->si_addr == g_fault_address.load() && context != nullptr;
  testing::FlushCoverage();
  ::_exit(right ? kSigInfoHandlerRan : kSigInfoHandlerWrongInfo);
}

int FillTheTableThenCutTheLastMapping(const std::string& path) {
  const std::size_t page = PageSize();
  // 4,095 other mappings, one page each, at distinct addresses (plus one
  // page for the refused one at the end): the documented 4,096 with the
  // input, so a table of another size fails here, not only the constant.
  constexpr std::size_t kDocumentedCapacity = 4096;  // SECURITY.md
  const std::size_t others = kDocumentedCapacity - 1;
  void* const area =
      ::mmap(nullptr, (others + 1) * page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (area == MAP_FAILED) return kNoAddressSpace;
  auto* const at = static_cast<std::uint8_t*>(area);
  std::set<int> slots;
  for (std::size_t i = 0; i < others; ++i) {
    const int slot = base::GuardMapping(at + i * page, page);
    if (slot < 0) return kFillerRefused;
    if (!slots.insert(slot).second) return kSlotTwice;
  }
  // The last mapping the table has room for: a real input file.
  const base::MappedInput input(path, FirstByte);
  if (!input.ok() || input.bytes().size() != 4 * page) return kInputFailed;
  // The table is now full: one more is refused.
  if (base::GuardMapping(at + others * page, page) != -1) return kOneTooManyAccepted;
  // Another process truncates the file to its first page.
  if (::truncate(path.c_str(), static_cast<off_t>(page)) != 0) return kNotTruncated;
  std::uint64_t sum = 0;
  {
    const base::BusGuardScope scope;
    const std::span<const std::uint8_t> bytes = input.bytes();
    // A byte of the third page: past the file's new end (SIGBUS unless guarded).
    sum = static_cast<volatile const std::uint8_t&>(bytes[2 * page + 7]);
    sum += static_cast<volatile const std::uint8_t&>(bytes[4 * page - 1]);
  }
  if (sum != 0) return kTailNotZero;
  if (!input.cut()) return kCutNotReported;
  for (const int slot : slots) base::UnguardMapping(slot);
  return kAllHeld;
}

// Writes a file of four pages of 0x5a at `path`, then runs `step(path)` in
// a child process (a SIGBUS there fails the test instead of ending the test
// binary) and checks that every step held.
void InChildOnAFourPageFile(const std::string& path, int (*step)(const std::string&)) {
  ASSERT_TRUE(WriteFile(path, 4 * PageSize(), '\x5a'));
  EXPECT_EQ(testing::ExitStatusInChild([&] { return step(path); }), kAllHeld)
      << "the step that failed (enum Step)";
}

TEST(MappingGuard, EverySlotOfAFullTableGuardsItsMapping) {
  testing::ScratchDir tmp;
  InChildOnAFourPageFile(tmp / "input", FillTheTableThenCutTheLastMapping);
}

// A program that maps its inputs without the process-wide handler (a
// library caller: no InstallBusGuard) asks AnyMappingCut before it commits:
// it must see a cut that only the file's size tells (inside the last page,
// no SIGBUS), whichever slot the mapping holds, the first included. In a
// fresh child whose table is empty, so that the input takes slot 0.
int CutBySizeIsSeenByAnyMappingCut(const std::string& path) {
  const base::MappedInput input(path, FirstByte);
  if (!input.ok() || input.bytes().size() != 4 * PageSize()) return kInputFailed;
  if (base::AnyMappingCut()) return kCutBeforeTruncation;
  // Another process drops the last byte: the page is still mapped.
  if (::truncate(path.c_str(), static_cast<off_t>(4 * PageSize() - 1)) != 0) return kNotTruncated;
  if (!base::AnyMappingCut()) return kAnyCutNotReported;
  if (!input.cut()) return kCutNotReported;
  return kAllHeld;
}

TEST(MappingGuard, ACutOnlyTheSizeTellsIsSeenByAnyMappingCut) {
  testing::ScratchDir tmp;
  InChildOnAFourPageFile(tmp / "input", CutBySizeIsSeenByAnyMappingCut);
}

// kiln's main installs the handler for the whole process (InstallBusGuard):
// from then on a cut, once seen, stays seen after its mapping is released
// and its slot freed and taken by another mapping, so a commit made after
// the input was let go still refuses. Seen by a read past the cut (the handler) or, for a cut
// inside the last page, by the size (AnyMappingCut's fstat). In a fresh child.
int ACutStaysSeenAfterItsMappingIsGone(const std::string& path, bool by_fault) {
  base::InstallBusGuard();
  {
    const base::MappedInput input(path, FirstByte);
    if (!input.ok() || input.bytes().size() != 4 * PageSize()) return kInputFailed;
    if (base::AnyMappingCut()) return kCutBeforeTruncation;
    const off_t cut_to = static_cast<off_t>(by_fault ? PageSize() : 4 * PageSize() - 1);
    if (::truncate(path.c_str(), cut_to) != 0) return kNotTruncated;
    if (by_fault) {
      if (static_cast<volatile const std::uint8_t&>(input.bytes()[2 * PageSize() + 7]) != 0) {
        return kTailNotZero;
      }
    } else if (!base::AnyMappingCut()) {
      return kAnyCutNotReported;
    }
  }
  // The freed slot is taken by the next input, which is whole.
  const std::string next = path + ".next";
  if (!WriteFile(next, 4 * PageSize(), '\x5a')) return kSetupFailed;
  const base::MappedInput input(next, FirstByte);
  if (!input.ok()) return kInputFailed;
  if (input.cut()) return kCutBeforeTruncation;  // the first free slot again, its cut cleared
  if (!base::AnyMappingCut()) return kCutNotReported;
  return kAllHeld;
}

TEST(MappingGuard, ACutSeenByItsFaultStaysSeenAfterItsMappingIsGone) {
  testing::ScratchDir tmp;
  InChildOnAFourPageFile(tmp / "input", [](const std::string& p) {
    return ACutStaysSeenAfterItsMappingIsGone(p, true);
  });
}

TEST(MappingGuard, ACutSeenByTheSizeStaysSeenAfterItsMappingIsGone) {
  testing::ScratchDir tmp;
  InChildOnAFourPageFile(tmp / "input", [](const std::string& p) {
    return ACutStaysSeenAfterItsMappingIsGone(p, false);
  });
}

// Two mappings of one file guarded without a descriptor (GuardMapping's fd
// -1: no fstat can tell), then the file cut to its first page: reading past
// the cut in each is a SIGBUS that only the handler sees. Each read sees
// zeros and each slot reports the cut, the second as much as the first
// (the handler is still installed after it handled one).
int TwoCutsSeenOnlyByTheirFaults(const std::string& path) {
  const std::size_t page = PageSize();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return kInputFailed;
  void* const maps[2] = {::mmap(nullptr, 4 * page, PROT_READ, MAP_PRIVATE, fd, 0),
                         ::mmap(nullptr, 4 * page, PROT_READ, MAP_PRIVATE, fd, 0)};
  ::close(fd);
  if (maps[0] == MAP_FAILED || maps[1] == MAP_FAILED) return kMapFailed;
  const int slots[2] = {base::GuardMapping(maps[0], 4 * page),
                        base::GuardMapping(maps[1], 4 * page)};
  if (slots[0] < 0 || slots[1] < 0) return kFillerRefused;
  if (::truncate(path.c_str(), static_cast<off_t>(page)) != 0) return kNotTruncated;
  const base::BusGuardScope scope;
  for (int k = 0; k < 2; ++k) {
    if (base::MappingCut(slots[k])) return kCutBeforeTruncation;  // no fd: not yet seen
    const auto* bytes = static_cast<const std::uint8_t*>(maps[k]);
    if (static_cast<volatile const std::uint8_t&>(bytes[2 * page + 7]) != 0) return kTailNotZero;
    if (!base::MappingCut(slots[k])) return kCutNotReported;
  }
  for (const int slot : slots) base::UnguardMapping(slot);
  return kAllHeld;
}

TEST(MappingGuard, TwoCutsOnlyTheirFaultsTellAreBothSeen) {
  testing::ScratchDir tmp;
  InChildOnAFourPageFile(tmp / "input", TwoCutsSeenOnlyByTheirFaults);
}

// A scope that could not install the handler (sigaction refused: here by a
// seccomp filter on one thread, as a sandboxed thread would have it) undoes
// nothing when it ends: a later scope on another thread still installs the
// handler, and a read past a cut in a guarded mapping sees zeros where it
// would otherwise die of SIGBUS. In a child (the filter stays on its thread).
int AScopeThatCouldNotInstallUndoesNothing(const std::string& path) {
  int sandboxed_step = kAllHeld;
  std::thread sandboxed([&sandboxed_step] {
    if (!testing::FailSyscall(SYS_rt_sigaction, EPERM)) {
      sandboxed_step = testing::kNoSeccomp;
      return;
    }
    struct sigaction current {};
    if (::sigaction(SIGBUS, nullptr, &current) == 0) {
      sandboxed_step = kSetupFailed;  // the filter does not refuse sigaction
      return;
    }
    const base::BusGuardScope refused;
  });
  sandboxed.join();
  if (sandboxed_step != kAllHeld) return sandboxed_step;
  const base::MappedInput input(path, FirstByte);
  if (!input.ok() || input.bytes().size() != 4 * PageSize()) return kInputFailed;
  if (::truncate(path.c_str(), static_cast<off_t>(PageSize())) != 0) return kNotTruncated;
  const base::BusGuardScope scope;
  if (static_cast<volatile const std::uint8_t&>(input.bytes()[2 * PageSize() + 7]) != 0) {
    return kTailNotZero;
  }
  if (!input.cut()) return kCutNotReported;
  return kAllHeld;
}

TEST(MappingGuard, AScopeThatCouldNotInstallUndoesNothing) {
  testing::ScratchDir tmp;
  const std::string path = tmp / "input";
  ASSERT_TRUE(WriteFile(path, 4 * PageSize(), '\x5a'));
  const int status =
      testing::ExitStatusInChild([&] { return AScopeThatCouldNotInstallUndoesNothing(path); });
  if (status == testing::kNoSeccomp) GTEST_SKIP() << "seccomp filters are not allowed here";
  EXPECT_EQ(status, kAllHeld) << "the step that failed (enum Step)";
}

// A scope installs kiln's handler for its life and gives the earlier
// disposition back when it ends; overlapping scopes install once and
// restore once, when the last ends. In a child (it changes SIGBUS's
// disposition).
void OwnHandler(int) {}

bool CurrentIsOwn() {
  struct sigaction current {};
  return ::sigaction(SIGBUS, nullptr, &current) == 0 && (current.sa_flags & SA_SIGINFO) == 0 &&
         current.sa_handler == OwnHandler;
}

int ScopesRestoreTheEarlierHandler() {
  struct sigaction own {};
  own.sa_handler = OwnHandler;
  sigemptyset(&own.sa_mask);
  if (::sigaction(SIGBUS, &own, nullptr) != 0 || !CurrentIsOwn()) return kSetupFailed;
  {
    const base::BusGuardScope scope;
    if (CurrentIsOwn()) return kScopeDidNotInstall;
  }
  if (!CurrentIsOwn()) return kScopeDidNotRestore;
  {
    const auto outer = std::make_unique<base::BusGuardScope>();
    auto inner = std::make_unique<base::BusGuardScope>();
    if (CurrentIsOwn()) return kScopeDidNotInstall;
    inner.reset();
    if (CurrentIsOwn()) return kInnerScopeRestored;
  }
  if (!CurrentIsOwn()) return kScopeDidNotRestore;
  return kAllHeld;
}

TEST(MappingGuard, ScopesRestoreTheEarlierHandler) {
  EXPECT_EQ(testing::ExitStatusInChild(ScopesRestoreTheEarlierHandler), kAllHeld)
      << "the step that failed (enum Step)";
}

// A slot number outside the table (-1, as GuardMapping returns when it is
// full, or one past its end) is ignored by UnguardMapping and never cut.
TEST(MappingGuard, SlotsOutsideTheTableAreIgnored) {
  for (const int slot : {-1, kMaxGuardedMappings, kMaxGuardedMappings + 1}) {
    base::UnguardMapping(slot);
    EXPECT_FALSE(base::MappingCut(slot)) << slot;
  }
}

// The table takes any range whose end, rounded up to a page, fits the
// address space, and refuses one that would wrap: a length one byte too
// long, or a range starting in the last page. Only numbers are listed
// (nothing is read), and each slot is given back.
TEST(MappingGuard, RangesUpToTheTopOfTheAddressSpace) {
  const std::uintptr_t page = PageSize();
  const auto at = [](std::uintptr_t a) { return reinterpret_cast<const void*>(a); };
  const std::uintptr_t begin = std::uintptr_t{1} << 40;
  const int fits = base::GuardMapping(at(begin), UINTPTR_MAX - page - begin);
  EXPECT_GE(fits, 0) << "a range ending a page below the top";
  base::UnguardMapping(fits);
  EXPECT_EQ(base::GuardMapping(at(begin), UINTPTR_MAX - page - begin + 1), -1);
  const int top = base::GuardMapping(at(UINTPTR_MAX - page), 0);
  EXPECT_GE(top, 0) << "an empty range starting a page below the top";
  base::UnguardMapping(top);
  EXPECT_EQ(base::GuardMapping(at(UINTPTR_MAX - page + 1), 0), -1);
  EXPECT_EQ(base::GuardMapping(at(UINTPTR_MAX), 1), -1);
}

// A SIGBUS that is not kiln's (a fault in a mapping nobody guarded) gets
// what it would have had without kiln's handler: the process's previous
// handler, called the way it was installed (with its siginfo when it asked
// for one), or the default action (the process dies of SIGBUS) when the
// previous disposition was the default or "ignore" (the kernel does not
// let a fault's SIGBUS be ignored), whatever flags came with it. In a
// child: it installs the previous disposition, then kiln's handler (a
// BusGuardScope), then reads past the end of a file it mapped itself and
// cut, guarding nothing.
enum Previous : int { kSigInfoHandler, kPlainHandler, kDefault, kIgnore, kIgnoreWithSigInfo };

void PreviousPlainHandler(int sig) {
  testing::FlushCoverage();
  ::_exit(sig == SIGBUS ? kPlainHandlerRan : kPlainHandlerWrongSignal);
}

int FaultOutsideEveryGuard(const std::string& path, Previous previous) {
  if (!NoCoreFiles()) return kSetupFailed;
  struct sigaction act {};
  sigemptyset(&act.sa_mask);
  switch (previous) {
    case kSigInfoHandler:
      act.sa_sigaction = ExpectedFaultHandler;
      act.sa_flags = SA_SIGINFO;
      break;
    case kPlainHandler:
      act.sa_handler = PreviousPlainHandler;
      break;
    case kDefault:
      act.sa_handler = SIG_DFL;
      break;
    case kIgnore:
      act.sa_handler = SIG_IGN;
      break;
    case kIgnoreWithSigInfo:
      act.sa_handler = SIG_IGN;
      act.sa_flags = SA_SIGINFO;
      break;
  }
  if (::sigaction(SIGBUS, &act, nullptr) != 0) return kSetupFailed;
  const std::size_t page = PageSize();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return kSetupFailed;
  void* const map = ::mmap(nullptr, 4 * page, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) return kMapFailed;
  if (::truncate(path.c_str(), static_cast<off_t>(page)) != 0) return kNotTruncated;
  const base::BusGuardScope scope;
  const auto* byte = static_cast<const std::uint8_t*>(map) + 2 * page + 7;
  g_fault_address = byte;
  const std::uint8_t read = static_cast<volatile const std::uint8_t&>(*byte);
  return read == 0 ? kReadReturnedZero : kReadReturnedOther;
}

// The child's wait status after FaultOutsideEveryGuard(previous).
int StatusAfterFault(Previous previous) {
  testing::ScratchDir tmp;
  const std::string path = tmp / "input";
  if (!WriteFile(path, 4 * PageSize(), '\x5a')) {
    ADD_FAILURE() << "cannot write " << path;
    return -1;
  }
  return testing::WaitStatusInChild([&] { return FaultOutsideEveryGuard(path, previous); });
}

TEST(MappingGuard, AFaultOutsideEveryGuardReachesThePreviousSigInfoHandler) {
  const int status = StatusAfterFault(kSigInfoHandler);
  ASSERT_TRUE(WIFEXITED(status)) << "status " << status;
  EXPECT_EQ(WEXITSTATUS(status), kSigInfoHandlerRan) << "enum Step";
}

TEST(MappingGuard, AFaultOutsideEveryGuardReachesThePreviousPlainHandler) {
  const int status = StatusAfterFault(kPlainHandler);
  ASSERT_TRUE(WIFEXITED(status)) << "status " << status;
  EXPECT_EQ(WEXITSTATUS(status), kPlainHandlerRan) << "enum Step";
}

TEST(MappingGuard, AFaultOutsideEveryGuardDiesOfSigbusWithoutAPreviousHandler) {
  for (const Previous previous : {kDefault, kIgnore, kIgnoreWithSigInfo}) {
    const int status = StatusAfterFault(previous);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS)
        << "previous disposition " << previous << ": "
        << (WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                : "exit status " + std::to_string(WEXITSTATUS(status)));
  }
}

// A guarded range ends at its length rounded up to a whole page, no
// further. Two mappings side by side, each of a file of `first_length` and
// four pages: the first guarded, the second not; both files are then cut to
// nothing. A read of the first mapping's last byte (in its last, partly
// filled page) is claimed: zeros, and the cut seen. A read of the second
// mapping's first byte, just past the guarded range, is not: it reaches
// the previous SA_SIGINFO handler, with its address. In a child.
int MapFileAt(const std::string& path, std::size_t length, void* at) {
  if (!WriteFile(path, length, '\x5a')) return -1;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  void* const map = ::mmap(at, length, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0);
  ::close(fd);
  return map == at ? 0 : -1;
}

int OnlyTheGuardedRangeIsClaimed(const std::string& dir, std::size_t first_length) {
  if (!NoCoreFiles()) return kSetupFailed;
  const std::size_t page = PageSize();
  const std::size_t first_pages = (first_length + page - 1) / page;
  void* const area =
      ::mmap(nullptr, (first_pages + 4) * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (area == MAP_FAILED) return kNoAddressSpace;
  auto* const first = static_cast<std::uint8_t*>(area);
  std::uint8_t* const second = first + first_pages * page;
  const std::string first_path = dir + "/first", second_path = dir + "/second";
  if (MapFileAt(first_path, first_length, first) != 0) return kMapFailed;
  if (MapFileAt(second_path, 4 * page, second) != 0) return kMapFailed;
  const int slot = base::GuardMapping(first, first_length);
  if (slot < 0) return kFillerRefused;
  struct sigaction act {};
  act.sa_sigaction = ExpectedFaultHandler;
  act.sa_flags = SA_SIGINFO;
  sigemptyset(&act.sa_mask);
  if (::sigaction(SIGBUS, &act, nullptr) != 0) return kSetupFailed;
  const base::BusGuardScope scope;
  if (::truncate(first_path.c_str(), 0) != 0 || ::truncate(second_path.c_str(), 0) != 0) {
    return kNotTruncated;
  }
  if (static_cast<volatile const std::uint8_t&>(first[first_length - 1]) != 0) {
    return kLastByteNotZero;
  }
  if (!base::MappingCut(slot)) return kLastByteCutNotSeen;
  g_fault_address = second;
  const std::uint8_t read = static_cast<volatile const std::uint8_t&>(second[0]);
  return read == 0 ? kReadReturnedZero : kReadReturnedOther;
}

TEST(MappingGuard, OnlyTheGuardedRangeIsClaimed) {
  const std::size_t page = PageSize();
  for (const std::size_t first_length : {4 * page, 4 * page + 1, 5 * page - 1}) {
    testing::ScratchDir tmp;
    const std::string dir = tmp / "";
    const int status =
        testing::ExitStatusInChild([&] { return OnlyTheGuardedRangeIsClaimed(dir, first_length); });
    EXPECT_EQ(status, kSigInfoHandlerRan)
        << "first mapping of " << first_length << " bytes (enum Step)";
  }
}

// Whether /proc/self/maps lists a mapping of the file at `path`.
bool Mapped(const std::string& path) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.size() >= path.size() &&
        line.compare(line.size() - path.size(), path.size(), path) == 0) {
      return true;
    }
  }
  return false;
}

TEST(MappedInput, GivesItsMappingBackWhenDestroyed) {
  testing::ScratchDir tmp;
  const std::string path = tmp / "input";
  ASSERT_TRUE(WriteFile(path, 3 * PageSize(), '\x11'));
  ASSERT_FALSE(Mapped(path));
  {
    const base::MappedInput input(path, FirstByte);
    ASSERT_TRUE(input.ok());
    ASSERT_EQ(input.bytes().size(), 3 * PageSize());
    ASSERT_TRUE(Mapped(path)) << "the input is read through a mapping of the file";
  }
  EXPECT_FALSE(Mapped(path)) << "the destroyed input's mapping is still in /proc/self/maps";
}

// A MappedInput whose file is cut while its prefix is being privatized
// (the prefix's length is asked of the first page; "another process"
// truncates the file to that page right then, and the prefix asked for runs
// two pages past it) fails with kInputCutMessage and holds nothing: no
// bytes, and its mapping given back at once, not when it is destroyed. The
// commands ask ok() first; the object's own contract is what this holds. In
// a child: a fault there that the guard missed ends only the child.
const char* g_path_to_cut = nullptr;

std::size_t CutToOnePageThenAskForThree(std::span<const std::uint8_t>) {
  if (::truncate(g_path_to_cut, static_cast<off_t>(PageSize())) != 0) return 0;
  return 3 * PageSize();
}

int CutWhilePrivatizedHoldsNothing(const std::string& path) {
  g_path_to_cut = path.c_str();
  const base::MappedInput input(path, CutToOnePageThenAskForThree);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || static_cast<std::size_t>(st.st_size) != PageSize()) {
    return kTruncateFailed;
  }
  if (input.ok()) return kCutInputAccepted;
  if (input.error() != std::string(base::kInputCutMessage)) return kWrongMessage;
  if (!input.bytes().empty()) return kBytesKept;
  if (Mapped(path)) return kMappingKept;
  return kAllHeld;
}

TEST(MappedInput, CutWhileItsPrefixIsPrivatizedHoldsNothing) {
  testing::ScratchDir tmp;
  InChildOnAFourPageFile(tmp / "input", CutWhilePrivatizedHoldsNothing);
}

}  // namespace
}  // namespace kiln
