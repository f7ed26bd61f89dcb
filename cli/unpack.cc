// kiln unpack: a Kiln block into one file per tensor plus DIR/index.tsv.
//
// Tensor names are untrusted (they may hold "../", "/", NUL bytes, or be
// 64 KiB long), so they never become file names: tensor i is written to
// "tensor-<i>.npy" (".bin" when NumPy has no dtype for it), created with
// openat() inside DIR without following symlinks, and the names appear only,
// escaped, inside index.tsv.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "commands.h"
#include "kiln/directory.h"
#include "kiln/formats/npy.h"
#include "mapped_file.h"
#include "output_file.h"
#include "progress.h"

namespace kiln::cli {
namespace {

constexpr std::string_view kIndexName = "index.tsv";

// Closes a file descriptor when it goes out of scope.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

int UnpackUsage(std::ostream& err, const std::string& why) {
  err << "kiln unpack: " << why << "\nusage: kiln unpack [--force] IN.klnt DIR\n";
  return kExitUsage;
}

std::string FileName(std::uint32_t i, bool npy) {
  return absl::StrFormat("tensor-%05d.%s", i, npy ? "npy" : "bin");
}

// One TSV field: a backslash as "\\", and tabs, newlines and every other C0
// or C1 control character or DEL as \xNN (a C1 character's two UTF-8 bytes
// as \xc2\xNN), so a field is one line without tabs and reads back exactly.
std::string TsvField(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    const bool c1 = c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
                    static_cast<unsigned char>(s[i + 1]) <= 0x9f;
    if (c == '\\') {
      out += "\\\\";
    } else if (c < 0x20 || c == 0x7f) {
      absl::StrAppendFormat(&out, "\\x%02x", c);
    } else if (c1) {
      absl::StrAppendFormat(&out, "\\xc2\\x%02x", static_cast<unsigned char>(s[++i]));
    } else {
      out += s[i];
    }
  }
  return out;
}

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

// Creates `name` inside dirfd, never through a symlink, and writes `head`
// then `body`. Without `replace` an existing file is an error. Returns an
// error message, empty on success.
std::string WriteAt(int dirfd, const std::string& name, bool replace,
                    std::span<const std::uint8_t> head, std::span<const std::uint8_t> body,
                    Progress* progress) {
  const int flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | (replace ? O_TRUNC : O_EXCL);
  Fd f{::openat(dirfd, name.c_str(), flags, 0666)};
  if (f.fd < 0) return name + ": " + std::strerror(errno);
  int e = WriteAll(f.fd, head, nullptr);
  if (e == 0) e = WriteAll(f.fd, body, progress);
  if (e == 0 && ::close(f.fd) != 0) e = errno;
  f.fd = -1;
  return e == 0 ? "" : name + ": " + std::strerror(e);
}

// Opens DIR, creating it (and its parents) if needed.
int OpenDirectory(const std::string& dir, std::string* error) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) *error = std::strerror(ec ? ec.value() : errno);
  return fd;
}

// Writes every tensor and the index; an exit code.
int WriteOutputs(const Directory& dir, int dirfd, const std::string& dir_path, bool replace,
                 std::ostream& err) {
  std::string index = "index\tname\tfile\tdtype\tshape\tlayout\tblock_size\tquant\n";
  Progress progress(err, "kiln unpack", dir.header().payload_bytes);
  for (std::uint32_t i = 0; i < dir.tensor_count(); ++i) {
    const Tensor t = dir.tensor(i);
    const bool npy = formats::NpyDescr(t.dtype).has_value();
    const std::string file = FileName(i, npy);
    const std::string head = npy ? formats::NpyHeader(t.dtype, t.dims()).value() : "";
    const std::string e = WriteAt(dirfd, file, replace, AsBytes(head), t.payload, &progress);
    if (!e.empty()) {
      err << "kiln unpack: " << base::Escape(dir_path) << "/" << e << "\n";
      return kExitUsage;
    }
    index += IndexLine(t, file);
  }
  progress.Finish();
  const std::string e =
      WriteAt(dirfd, std::string(kIndexName), replace, AsBytes(index), {}, nullptr);
  if (!e.empty()) {
    err << "kiln unpack: " << base::Escape(dir_path) << "/" << e << "\n";
    return kExitUsage;
  }
  return kExitOk;
}

// Without --force, nothing is written when any output exists already.
bool AnyExists(const Directory& dir, int dirfd, const std::string& dir_path, std::ostream& err) {
  std::vector<std::string> names = {std::string(kIndexName)};
  for (std::uint32_t i = 0; i < dir.tensor_count(); ++i) {
    names.push_back(FileName(i, formats::NpyDescr(dir.tensor(i).dtype).has_value()));
  }
  for (const std::string& name : names) {
    struct stat st {};
    if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
      err << "kiln unpack: " << base::Escape(dir_path) << "/" << name
          << " exists (use --force to replace it)\n";
      return true;
    }
  }
  return false;
}

}  // namespace

int RunUnpack(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  bool replace = false;
  std::vector<std::string> paths;
  for (const std::string& a : args) {
    if (a == "--force") {
      replace = true;
    } else if (a.size() > 1 && a[0] == '-') {
      return UnpackUsage(err, "unknown option " + base::Escape(a));
    } else {
      paths.push_back(a);
    }
  }
  if (paths.size() != 2) return UnpackUsage(err, "expects IN.klnt and DIR");
  const MappedFile file(paths[0]);
  if (!file.ok()) {
    err << "kiln unpack: " << base::Escape(paths[0]) << ": " << file.error() << "\n";
    return kExitUsage;
  }
  const Result<Directory> parsed = Parse(file.bytes());
  if (!parsed.ok()) {  // as kiln validate prints it
    err << base::Escape(paths[0]) << ": " << parsed.error().ToString() << "\n";
    return kExitInvalid;
  }
  std::string why;
  const Fd dirfd{OpenDirectory(paths[1], &why)};
  if (dirfd.fd < 0) {
    err << "kiln unpack: " << base::Escape(paths[1]) << ": " << why << "\n";
    return kExitUsage;
  }
  if (!replace && AnyExists(parsed.value(), dirfd.fd, paths[1], err)) return kExitUsage;
  const int code = WriteOutputs(parsed.value(), dirfd.fd, paths[1], replace, err);
  if (code == kExitOk) {
    out << absl::StrFormat("unpacked %d tensors into %s\n", parsed.value().tensor_count(),
                           base::Escape(paths[1]));
  }
  return code;
}

}  // namespace kiln::cli
