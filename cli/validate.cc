#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_format.h"
#include "commands.h"
#include "json.h"
#include "mapped_file.h"
#include "stream_input.h"

namespace kiln::cli {

// `path` names something to read as a stream rather than map: "-"
// (standard input), or a pipe, socket or character device.
bool IsStreamInput(const std::string& path) {
  struct stat st {};
  if (path == "-") return true;
  return ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

StreamVerdict ValidateStream(int fd, const std::string& name, const Options& options,
                             std::ostream& err) {
  StreamValidator v({.mode = options.parse.mode, .limits = options.parse.limits});
  const StreamOutcome o = ReadStream(
      fd, v, [](std::span<const std::uint8_t>) { return true; }, err,
      "kiln validate " + Printable(name));
  StreamVerdict verdict;
  if (!o.io_error.empty()) {
    verdict.io_error = o.io_error;
  } else if (o.status == StreamStatus::kRejected) {
    verdict.error = v.error();
  }
  return verdict;
}

namespace {

StreamVerdict IoError(std::string why) {
  StreamVerdict verdict;
  verdict.io_error = std::move(why);
  return verdict;
}

// Opens a pipe (or other non-regular file) and validates it as a stream.
// The open blocks until a pipe has a writer: opened non-blocking, a FIFO
// without one reads as empty, which would be a false FRAME H1.
StreamVerdict ValidateStreamPath(const std::string& path, const Options& options,
                                 std::ostream& err) {
  if (path == "-") return ValidateStream(STDIN_FILENO, path, options, err);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError(std::string("cannot open: ") + std::strerror(errno));
  StreamVerdict verdict = ValidateStream(fd, path, options, err);
  ::close(fd);
  return verdict;
}

// The verdict on a regular file, memory-mapped.
StreamVerdict ValidateMapped(const std::string& path, const Options& options) {
  const MappedFile file(path);
  if (!file.ok()) return IoError(file.error());
  const Result<Directory> r = Parse(file.bytes(), options.parse);
  StreamVerdict verdict;
  if (!r.ok()) verdict.error = r.error();
  return verdict;
}

}  // namespace

int RunValidate(const Options& options, std::ostream& out, std::ostream& err) {
  int status = kExitOk;
  if (options.json) out << "[";
  bool first = true;
  for (const std::string& path : options.files) {
    std::string line;
    const StreamVerdict v = IsStreamInput(path) ? ValidateStreamPath(path, options, err)
                                                : ValidateMapped(path, options);
    if (!v.io_error.empty()) {
      err << "kiln: " << Printable(path) << ": " << v.io_error << "\n";
      status = kExitUsage;
      line = absl::StrFormat(R"("ok": false, "io_error": %s)", JsonString(v.io_error));
    } else if (!v.error) {
      line = R"("ok": true)";
      if (!options.json) out << Printable(path) << ": ok\n";
    } else {
      if (status == kExitOk) status = kExitInvalid;
      line = ErrorFields(*v.error);
      if (!options.json) out << Printable(path) << ": " << v.error->ToString() << "\n";
    }
    if (options.json) {
      out << (first ? "\n  " : ",\n  ") << "{\"file\": " << JsonString(path) << ", " << line << "}";
      first = false;
    }
  }
  if (options.json) out << (first ? "]\n" : "\n]\n");
  return status;
}

}  // namespace kiln::cli
