// kiln unpack: a Kiln block into one file per tensor plus DIR/index.tsv.
//
// Tensor names are untrusted (they may hold "../", "/", NUL bytes, or be
// 64 KiB long), so they never become file names: tensor i is written to
// "tensor-<i>.npy", or "tensor-<i>.bin" (the raw bytes; index.tsv gives the
// dtype and shape) when numpy.load could not read it as .npy (NumPy has no
// such dtype, or a zero-element shape exceeds NumPy's sizes:
// formats::NpyCanHold), created with openat() inside DIR without following
// symlinks, and the names appear only, escaped, inside index.tsv.
//
// Every file goes into a fresh private directory (StagedDirectory) that is
// renamed over DIR only once it is complete: DIR is never written into, so a
// link planted there is never written through, the input (mapped, even if it
// lies in DIR) is never truncated, and a failure leaves DIR as it was.
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "commands.h"
#include "flags.h"
#include "kiln/base/escape.h"
#include "kiln/base/mapping_guard.h"
#include "kiln/directory.h"
#include "kiln/formats/npy.h"
#include "kiln/formats/policy.h"
#include "mapped_file.h"
#include "progress.h"
#include "report.h"
#include "staged_dir.h"

namespace kiln::cli {
namespace {

constexpr std::string_view kIndexName = "index.tsv";

constexpr std::string_view kUnpackUsage =
    "usage: kiln unpack [--force] [--max-tensors N] [--max-block-bytes N] [--max-name-bytes N] "
    "IN.klnt DIR\n";

// Closes a file descriptor when it goes out of scope.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

int UnpackUsage(std::ostream& err, const std::string& why) {
  err << "kiln unpack: " << why << "\n" << kUnpackUsage;
  return kExitUsage;
}

std::string FileName(std::uint32_t i, bool npy) {
  return absl::StrFormat("tensor-%05d.%s", i, npy ? "npy" : "bin");
}

// One TSV field: base::Escape, so a tab or newline in a name (\x09, \x0a)
// can forge neither a column nor a row, and a name reads as the terminal
// reports show it (a backslash "\\"; C0, DEL and bytes that are not UTF-8
// "\xNN"; C1, bidi, zero-width, separator and tag characters "\u{NNNN}").
std::string TsvField(std::string_view s) { return base::Escape(s); }

std::string QuantField(const Quantization& q) {
  if (q.scheme == QuantScheme::kNone) return "-";
  std::string out = absl::StrFormat("axis %d", q.axis);
  if (q.scheme == QuantScheme::kGrouped) absl::StrAppendFormat(&out, " group %d", q.group_size);
  if (q.scale_index) absl::StrAppendFormat(&out, " scale #%d", *q.scale_index);
  if (q.outer_index) absl::StrAppendFormat(&out, " outer #%d", *q.outer_index);
  return out;
}

std::string IndexLine(const Tensor& t, const std::string& file) {
  return absl::StrFormat("%d\t%s\t%s\t%s\t[%s]\t%s\t%d\t%s\n", t.index, TsvField(t.name), file,
                         GetDtypeInfo(t.dtype).name, absl::StrJoin(t.dims(), ", "),
                         t.layout.empty() ? "-" : TsvField(t.layout), t.block_size,
                         QuantField(t.quant));
}

std::span<const std::uint8_t> AsBytes(std::string_view s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// Creates `name`, a new file, in the staging directory `dirfd` and writes
// `head` then `body`. Returns an error message, empty on success.
std::string WriteNew(int dirfd, const std::string& name, std::span<const std::uint8_t> head,
                     std::span<const std::uint8_t> body, Progress* progress) {
  Fd f{base::OpenNewFileAt(dirfd, name)};
  if (f.fd < 0) return name + ": " + std::strerror(errno);
  int e = WriteAll(f.fd, head, nullptr);
  if (e == 0) e = WriteAll(f.fd, body, progress);
  if (::close(f.fd) != 0 && e == 0) e = errno;
  f.fd = -1;
  if (e == EFAULT) return name + ": " + base::kInputCutMessage;  // the source was cut short
  return e == 0 ? "" : name + ": " + std::strerror(e);
}

// Writes every tensor and the index into the staging directory; an exit code.
int WriteOutputs(const Directory& dir, int dirfd, const std::string& dir_path, std::ostream& err) {
  auto failed = [&](const std::string& e) {
    err << "kiln unpack: " << base::Escape(dir_path) << ": cannot write " << base::Escape(e)
        << "; nothing changed\n";
    return kExitUsage;
  };
  std::string index = "index\tname\tfile\tdtype\tshape\tlayout\tblock_size\tquant\n";
  Progress progress(err, "kiln unpack", dir.header().payload_bytes);
  for (std::uint32_t i = 0; i < dir.tensor_count(); ++i) {
    const Tensor t = dir.tensor(i);
    const bool npy = formats::NpyCanHold(t.dtype, t.dims());
    const std::string file = FileName(i, npy);
    const std::string head = npy ? formats::NpyHeader(t.dtype, t.dims()).value() : "";
    const std::string e = WriteNew(dirfd, file, AsBytes(head), t.payload, &progress);
    if (!e.empty()) return failed(e);
    index += IndexLine(t, file);
  }
  progress.Finish();
  const std::string e = WriteNew(dirfd, std::string(kIndexName), AsBytes(index), {}, nullptr);
  return e.empty() ? kExitOk : failed(e);
}

// Whether the file `in` lies somewhere below the directory `dir` (both
// resolved, links included). --force replaces DIR whole, so it would delete
// an input kept inside it.
bool Inside(const std::string& in, const std::string& dir) {
  char in_real[PATH_MAX];
  char dir_real[PATH_MAX];
  if (::realpath(in.c_str(), in_real) == nullptr || ::realpath(dir.c_str(), dir_real) == nullptr) {
    return false;
  }
  const std::string_view d(dir_real);
  const std::string_view f(in_real);
  return f.size() > d.size() && f.substr(0, d.size()) == d && (d == "/" || f[d.size()] == '/');
}

// DIR must be absent, an empty directory, or (with --force) a directory
// that does not hold the input.
bool TargetAllowed(const std::string& in, const std::string& target, bool replace,
                   std::ostream& err) {
  std::string why;
  switch (InspectTarget(target, &why)) {
    case TargetState::kAbsent:
    case TargetState::kEmptyDirectory:
      return true;
    case TargetState::kDirectory:
      if (replace && !Inside(in, target)) return true;
      why = replace ? "holds the input, which --force would delete with the rest of DIR"
                    : "a directory with files in it exists (use --force to replace it)";
      break;
    case TargetState::kNotADirectory:
    case TargetState::kError:
      break;
  }
  err << "kiln unpack: " << base::Escape(target) << ": " << why << "\n";
  return false;
}

// DIR without trailing slashes; empty when it does not end in a name.
std::string TargetPath(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  const std::size_t slash = dir.find_last_of('/');
  const std::string_view last =
      std::string_view(dir).substr(slash == std::string::npos ? 0 : slash + 1);
  return last.empty() || last == "." || last == ".." ? "" : dir;
}

struct UnpackArgs {
  bool replace = false;
  ParseOptions parse;
  std::vector<std::string> paths;
};

// An exit code when the arguments are wrong.
std::optional<int> ParseArgs(const std::vector<std::string>& args, UnpackArgs* a,
                             std::ostream& err) {
  // At most kUnpackMaxTensors files by default (kiln/formats/policy.h).
  a->parse.limits = formats::kUnpackPolicy.kiln;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string why;
    if (args[i] == "--force") {
      a->replace = true;
    } else if (const FlagParse f = ParseLimitFlag(args, &i, &a->parse.limits, &why);
               f == FlagParse::kBadValue) {
      return UnpackUsage(err, why);
    } else if (f == FlagParse::kParsed) {
      continue;
    } else if (args[i].size() > 1 && args[i][0] == '-') {
      return UnpackUsage(err, "unknown option " + base::Escape(args[i]));
    } else {
      a->paths.push_back(args[i]);
    }
  }
  if (a->paths.size() != 2) return UnpackUsage(err, "expects IN.klnt and DIR");
  a->paths[1] = TargetPath(a->paths[1]);
  if (a->paths[1].empty()) return UnpackUsage(err, "DIR must end in a name (not /, . or ..)");
  return std::nullopt;
}

}  // namespace

int RunUnpack(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  UnpackArgs a;
  if (const auto code = ParseArgs(args, &a, err)) return *code;
  const std::string& in = a.paths[0];
  const std::string& target = a.paths[1];
  const MappedFile file(in);
  if (!file.ok()) {
    err << "kiln unpack: " << base::Escape(in) << ": " << file.error() << "\n";
    return kExitUsage;
  }
  const Result<Directory> parsed = Parse(file.bytes(), a.parse);
  if (!parsed.ok()) {  // as kiln validate prints it
    err << base::Escape(in) << ": " << parsed.error().ToString() << "\n";
    return kExitInvalid;
  }
  if (!TargetAllowed(in, target, a.replace, err)) return kExitUsage;
  StagedDirectory staged(target);
  if (!staged.ok()) {
    err << "kiln unpack: " << base::Escape(target) << ": " << base::Escape(staged.error()) << "\n";
    return kExitUsage;
  }
  if (const int code = WriteOutputs(parsed.value(), staged.fd(), target, err)) return code;
  // Reported before the rename, so exit 0 if and only if DIR was replaced.
  if (!ReportBeforeCommit(out, err, "kiln unpack",
                          absl::StrFormat("unpacked %d tensors into %s\n",
                                          parsed.value().tensor_count(), base::Escape(target)))) {
    return kExitUsage;
  }
  if (!staged.Commit(a.replace)) {
    err << "kiln unpack: " << base::Escape(target) << ": " << base::Escape(staged.error()) << "\n";
    return kExitUsage;
  }
  return kExitOk;
}

}  // namespace kiln::cli
