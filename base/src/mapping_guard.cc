#include "kiln/base/mapping_guard.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>

namespace kiln::base {
namespace {

// One entry of the table. The handler reads begin/end only in state kListed,
// which is stored after them.
enum GuardState : int { kFree, kClaimed, kListed };
struct Guard {
  std::uintptr_t begin = 0;
  std::uintptr_t end = 0;
  std::size_t length = 0;  // the file's size when it was mapped
  int fd = -1;             // the file, for fstat (never used by the handler)
  std::atomic<int> state{kFree};
  std::atomic<int> cut{0};
};
// A std::array: with the hardened library (-D_GLIBCXX_ASSERTIONS) a slot
// index past the table's end stops the program instead of reading past it.
std::array<Guard, kMaxGuardedMappings> g_guards;
Guard& Slot(int i) { return g_guards[static_cast<std::size_t>(i)]; }
std::atomic<std::uintptr_t> g_page{4096};
std::atomic<bool> g_any_cut{false};
std::atomic<bool> g_process_guard{false};
// The action before ours, for a SIGBUS that is not ours.
struct sigaction g_previous {};

void OnBus(int sig, siginfo_t* info, void* context) {
  const auto addr = reinterpret_cast<std::uintptr_t>(info->si_addr);
  for (Guard& g : g_guards) {
    if (g.state.load() != kListed || addr < g.begin || addr >= g.end) continue;
    const std::uintptr_t into_page = addr & (g_page.load() - 1);
    const std::uintptr_t page = addr - into_page;
    // Zero pages over the rest of the mapping (the file ends before them):
    // the faulting read is redone on them. Readable and writable, as
    // PrivatizePrefix may be writing the page; it makes the mapping read-only
    // after.
    void* const r = ::mmap(static_cast<char*>(info->si_addr) - into_page, g.end - page,
                           PROT_READ | PROT_WRITE, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (r == MAP_FAILED) break;
    g.cut.store(1);
    if (g_process_guard.load()) g_any_cut.store(true);
    return;
  }
  // Not a guarded mapping: what would have happened without us. The
  // previous handler, called as it was installed; SIG_DFL (null) and SIG_IGN are
  // not handlers whatever the flags (SIG_IGN with SA_SIGINFO is no function
  // to call), and the kernel does not let a fault's SIGBUS be ignored.
  if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
    if ((g_previous.sa_flags & SA_SIGINFO) != 0) {
      g_previous.sa_sigaction(sig, info, context);
    } else {
      g_previous.sa_handler(sig);
    }
    return;
  }
  // The default action: restored, and the faulting access is redone.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  (void)::sigaction(SIGBUS, &dfl, nullptr);
}

bool Install(struct sigaction* saved) {
  struct sigaction act {};
  act.sa_sigaction = OnBus;
  act.sa_flags = SA_SIGINFO;
  sigemptyset(&act.sa_mask);
  if (::sigaction(SIGBUS, &act, saved) != 0) return false;
  if (saved->sa_sigaction != OnBus) g_previous = *saved;
  return true;
}

}  // namespace

int GuardMapping(const void* addr, std::size_t length, int fd) {
  const long page_size = ::sysconf(_SC_PAGESIZE);
  const std::uintptr_t page = page_size > 0 ? static_cast<std::uintptr_t>(page_size) : 4096;
  g_page.store(page);
  const auto begin = reinterpret_cast<std::uintptr_t>(addr);
  // begin + length + page cannot wrap, so neither can the end rounded up.
  if (begin > UINTPTR_MAX - page || length > UINTPTR_MAX - page - begin) return -1;
  const std::uintptr_t end = (begin + length + page - 1) & ~(page - 1);
  for (int i = 0; i < kMaxGuardedMappings; ++i) {
    int expected = kFree;
    if (!Slot(i).state.compare_exchange_strong(expected, kClaimed)) continue;
    Slot(i).begin = begin;
    Slot(i).end = end;
    Slot(i).length = length;
    Slot(i).fd = fd;
    Slot(i).cut.store(0);
    Slot(i).state.store(kListed);
    return i;
  }
  return -1;
}

void UnguardMapping(int slot) {
  if (slot >= 0 && slot < kMaxGuardedMappings) Slot(slot).state.store(kFree);
}

bool MappingCut(int slot) {
  if (slot < 0 || slot >= kMaxGuardedMappings) return false;
  Guard& g = Slot(slot);
  if (g.cut.load() != 0) return true;
  // A cut inside the last page faults nowhere: only the size tells.
  struct stat st {};
  if (g.state.load() != kListed || g.fd < 0 || ::fstat(g.fd, &st) != 0 ||
      static_cast<std::uint64_t>(st.st_size) >= g.length) {
    return false;
  }
  g.cut.store(1);
  if (g_process_guard.load()) g_any_cut.store(true);
  return true;
}

void InstallBusGuard() {
  struct sigaction saved {};
  if (Install(&saved)) g_process_guard.store(true);
}

bool AnyMappingCut() {
  if (g_any_cut.load()) return true;
  bool cut = false;
  for (int i = 0; i < kMaxGuardedMappings; ++i) cut = MappingCut(i) || cut;
  return cut;
}

// Scopes in several threads at once (Python releases the GIL while it
// parses a mapping): the first installs, the last restores.
std::mutex g_scope_mu;
int g_scope_depth = 0;
struct sigaction g_scope_saved {};

BusGuardScope::BusGuardScope() {
  const std::lock_guard<std::mutex> lock(g_scope_mu);
  if (g_scope_depth == 0 && !Install(&g_scope_saved)) return;
  ++g_scope_depth;
  installed_ = true;
}

BusGuardScope::~BusGuardScope() {
  if (!installed_) return;
  const std::lock_guard<std::mutex> lock(g_scope_mu);
  if (--g_scope_depth == 0) (void)::sigaction(SIGBUS, &g_scope_saved, nullptr);
}

}  // namespace kiln::base
