// kiln clean [--min-age SECONDS] [--dry-run] DIR: removes the temporaries a
// kiln killed by SIGKILL (or a crash, or a power cut) left in DIR.
//
// Only what kiln itself makes is touched: an entry directly in DIR whose name
// is exactly a kiln temporary name (.kiln-tmp.PID.XXXXXX), that is a regular
// file or a directory holding only regular files (unpack's staging
// directory), owned by the caller (any owner for root), whose process PID is
// no longer running and that is at least --min-age seconds old (default one
// hour), the files inside a directory included. Every step works relative
// to DIR's descriptor with names that hold no "/", opened without following
// links (O_NOFOLLOW), and re-checked by inode after opening: a symlink is
// never followed, never removed, and nothing outside DIR is reached.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "commands.h"
#include "flags.h"
#include "kiln/base/escape.h"
#include "kiln/base/output_file.h"
#include "report.h"

namespace kiln::cli {
namespace {

constexpr std::uint64_t kDefaultMinAgeSeconds = 3600;

constexpr std::string_view kCleanUsage =
    "usage: kiln clean [--min-age SECONDS] [--dry-run] DIR\n"
    "removes kiln temporaries (.kiln-tmp.PID.XXXXXX) directly in DIR whose process is\n"
    "gone and that are at least SECONDS old (default 3600)\n";

int CleanUsage(std::ostream& err, const std::string& why) {
  err << "kiln clean: " << why << "\n" << kCleanUsage;
  return kExitUsage;
}

// Closes a descriptor (or a DIR*) when it goes out of scope.
struct DirStream {
  DIR* d = nullptr;
  ~DirStream() {
    if (d != nullptr) ::closedir(d);
  }
};

// The names in the directory `fd` (a duplicate is read, `fd` stays open),
// "." and ".." left out; nullopt with errno set when it cannot be read.
std::optional<std::vector<std::string>> List(int fd) {
  const int copy = ::dup(fd);
  if (copy < 0) return std::nullopt;
  DirStream dir{::fdopendir(copy)};
  if (dir.d == nullptr) {
    ::close(copy);
    return std::nullopt;
  }
  ::rewinddir(dir.d);
  std::vector<std::string> names;
  errno = 0;
  while (const dirent* e = ::readdir(dir.d)) {
    const std::string_view name = e->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  if (errno != 0) return std::nullopt;
  return names;
}

bool ProcessRunning(long pid) {
  if (pid <= 0) return true;  // never kill(0) or kill(-1); keep the entry
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH;
}

struct Policy {
  std::uint64_t min_age = kDefaultMinAgeSeconds;
  bool dry_run = false;
};

bool OldEnough(const struct stat& st, const Policy& p) {
  const std::time_t now = std::time(nullptr);
  return st.st_mtime <= now && static_cast<std::uint64_t>(now - st.st_mtime) >= p.min_age;
}

// Why `name` (a kiln temporary name) is kept, or "" when it may go.
std::string WhyKept(int dirfd, const std::string& name, long pid, const struct stat& st,
                    const Policy& p, std::vector<std::string>* inside) {
  if (S_ISLNK(st.st_mode)) return "a symbolic link, not a kiln temporary";
  if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) return "not a regular file or directory";
  if (::geteuid() != 0 && st.st_uid != ::geteuid()) return "owned by another user";
  if (ProcessRunning(pid)) return absl::StrFormat("process %d is running", pid);
  if (!OldEnough(st, p)) return absl::StrFormat("younger than %d s", p.min_age);
  if (S_ISREG(st.st_mode)) return "";
  // A staging directory: only regular files, each old enough.
  const int fd = ::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return std::string("cannot open: ") + std::strerror(errno);
  struct stat again {};
  std::string why;
  if (::fstat(fd, &again) != 0 || again.st_ino != st.st_ino || again.st_dev != st.st_dev) {
    why = "changed while it was checked";
  } else if (const auto names = List(fd); !names) {
    why = std::string("cannot list: ") + std::strerror(errno);
  } else {
    for (const std::string& entry : *names) {
      struct stat e {};
      if (::fstatat(fd, entry.c_str(), &e, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(e.st_mode)) {
        why = "holds " + base::Quoted(entry) + ", which is not a regular file";
        break;
      }
      if (!OldEnough(e, p)) {
        why = absl::StrFormat("holds a file younger than %d s", p.min_age);
        break;
      }
      inside->push_back(entry);
    }
  }
  ::close(fd);
  return why;
}

// Removes `name` (checked by WhyKept): a file, or a directory and the
// files listed in `inside`. An error message, "" on success.
std::string Remove(int dirfd, const std::string& name, const struct stat& st,
                   const std::vector<std::string>& inside) {
  if (S_ISREG(st.st_mode)) {
    return ::unlinkat(dirfd, name.c_str(), 0) == 0 ? "" : std::strerror(errno);
  }
  const int fd = ::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return std::strerror(errno);
  struct stat again {};
  std::string why;
  if (::fstat(fd, &again) != 0 || again.st_ino != st.st_ino || again.st_dev != st.st_dev) {
    why = "changed while it was checked";
  } else {
    for (const std::string& entry : inside) {
      // unlinkat never follows: a link swapped in since is removed, not its target.
      if (::unlinkat(fd, entry.c_str(), 0) != 0 && errno != ENOENT) {
        why = std::strerror(errno);
        break;
      }
    }
  }
  ::close(fd);
  if (!why.empty()) return why;
  return ::unlinkat(dirfd, name.c_str(), AT_REMOVEDIR) == 0 ? "" : std::strerror(errno);
}

}  // namespace

int RunClean(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  Policy policy;
  std::vector<std::string> paths;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--dry-run") {
      policy.dry_run = true;
    } else if (args[i] == "--min-age") {
      if (i + 1 >= args.size() || !ParseU64(args[i + 1], &policy.min_age)) {
        return CleanUsage(err, "--min-age needs SECONDS");
      }
      ++i;
    } else if (args[i].size() > 1 && args[i][0] == '-') {
      return CleanUsage(err, "unknown option " + base::Escape(args[i]));
    } else {
      paths.push_back(args[i]);
    }
  }
  if (paths.size() != 1) return CleanUsage(err, "expects one DIR");
  // "link/" names what the link points to, and O_NOFOLLOW does not apply to
  // a path that ends in a slash: the slashes go before the open.
  std::string dir = paths[0];
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  const int dirfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dirfd < 0) {
    const int e = errno;
    // O_DIRECTORY | O_NOFOLLOW on a link fails with ENOTDIR or ELOOP: the
    // link, not the errno, is the reason.
    struct stat st {};
    const bool link = ::lstat(dir.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
    err << "kiln clean: " << base::Escape(dir) << ": "
        << (link ? "is a symbolic link (give the directory itself)" : std::strerror(e)) << "\n";
    return kExitUsage;
  }
  const std::optional<std::vector<std::string>> names = List(dirfd);
  if (!names) {
    err << "kiln clean: " << base::Escape(dir) << ": cannot list: " << std::strerror(errno) << "\n";
    ::close(dirfd);
    return kExitUsage;
  }
  int status = kExitOk;
  int removed = 0;
  int kept = 0;
  for (const std::string& name : *names) {
    const std::optional<long> pid = base::TemporaryNamePid(name);
    if (!pid) continue;  // not a kiln temporary: never touched, never listed
    struct stat st {};
    if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone
    std::vector<std::string> inside;
    const std::string why = WhyKept(dirfd, name, *pid, st, policy, &inside);
    if (!why.empty()) {
      out << "kept " << base::Escape(name) << ": " << why << "\n";
      ++kept;
      continue;
    }
    const std::string failed = policy.dry_run ? "" : Remove(dirfd, name, st, inside);
    if (!failed.empty()) {
      err << "kiln clean: " << base::Escape(dir) << ": cannot remove " << base::Escape(name) << ": "
          << failed << "\n";
      status = kExitUsage;
      ++kept;
      continue;
    }
    out << (policy.dry_run ? "would remove " : "removed ") << base::Escape(name) << "\n";
    ++removed;
  }
  ::close(dirfd);
  out << absl::StrFormat("%d %s, %d kept\n", removed, policy.dry_run ? "to remove" : "removed",
                         kept);
  return FinishReport(out, err, "kiln clean", status);
}

}  // namespace kiln::cli
