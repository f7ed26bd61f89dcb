// Surviving a mapped file that another process truncates while kiln reads it.
//
// Reading a page of a file mapping that lies past the file's (new) end
// raises SIGBUS, which would kill the process. A guarded mapping is listed
// in a fixed table; the SIGBUS handler, when the faulting address lies in a
// listed mapping, maps anonymous zero pages over the mapping from the
// faulting page to its end (mmap MAP_FIXED: one system call, no allocation,
// no lock), marks the mapping cut and returns, so the read that faulted is
// redone and sees zeros. No sigsetjmp/siglongjmp: no C++ frame is skipped,
// every destructor runs, every temporary is removed as on any error path.
// The code that read the mapping then asks MappingCut() and turns the cut
// into an I/O error: the bytes it checked or copied are not the file's.
// A SIGBUS at any other address goes to the handler that was there before
// (or the default action: the process dies as it would have).
#ifndef KILN_BASE_MAPPING_GUARD_H_
#define KILN_BASE_MAPPING_GUARD_H_

#include <signal.h>

#include <cstddef>

namespace kiln::base {

// Lists the mapping [addr, addr + length) (length rounded up to pages) of
// the file open as `fd` (the caller keeps it open until UnguardMapping; -1
// when there is none to ask). Returns its slot, or -1 when the table
// (kMaxGuardedMappings) is full: such a mapping is not guarded (a
// truncation kills the process, as before).
inline constexpr int kMaxGuardedMappings = 4096;
[[nodiscard]] int GuardMapping(const void* addr, std::size_t length, int fd = -1);
// Forgets a slot before the mapping is unmapped; -1 is ignored.
void UnguardMapping(int slot);
// Whether the mapping in `slot` was cut short: the handler found a read past
// the file's new end (its tail now reads as zeros), or the file is now
// shorter than `length` (fstat of `fd`). A cut inside the file's last page
// raises no SIGBUS: the bytes past the new end silently read as zeros, so
// only the size tells. False for -1.
[[nodiscard]] bool MappingCut(int slot);

// Installs the SIGBUS handler for the life of the process (kiln's main).
// From then on, once any guarded mapping was cut, OutputFile::Commit and
// the command's other commits refuse (AnyMappingCut): a program that does
// one job should commit nothing built from an input that changed under it.
void InstallBusGuard();
// True once any guarded mapping was cut (MappingCut of every listed slot):
// by the handler installed by InstallBusGuard, or found shorter by fstat.
[[nodiscard]] bool AnyMappingCut();
// What a command says when it refuses for that reason.
inline constexpr char kInputCutMessage[] =
    "an input file was truncated while it was read (changed by another process)";

// Installs the handler for the life of the object and restores the earlier
// action after (for a library call, such as the Python module's, that must
// not change the process's signal handling for good). Scopes may overlap in
// several threads: the first installs, the last restores.
class BusGuardScope {
 public:
  BusGuardScope();
  ~BusGuardScope();
  BusGuardScope(const BusGuardScope&) = delete;
  BusGuardScope& operator=(const BusGuardScope&) = delete;

 private:
  bool installed_ = false;
};

}  // namespace kiln::base

#endif  // KILN_BASE_MAPPING_GUARD_H_
