#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include "absl/strings/str_format.h"
#include "commands.h"
#include "json.h"
#include "kiln/base/escape.h"
#include "kiln/base/input_file.h"
#include "mapped_file.h"
#include "remote_file.h"
#include "report.h"
#include "stream_input.h"

namespace kiln::cli {

StreamOutcome ValidateStream(int fd, const std::string& name, const Options& options,
                             std::ostream& err, std::span<const std::uint8_t> already_read) {
  StreamValidator v({.mode = options.parse.mode, .limits = options.parse.limits});
  if (!already_read.empty()) (void)v.Feed(already_read);
  if (v.status() != StreamStatus::kNeedMore) return SettledOutcome(v);
  return ReadStream(
      fd, v, [](std::span<const std::uint8_t>) { return true; }, err,
      "kiln validate " + base::Escape(name), options.idle_timeout_seconds);
}

namespace {

StreamOutcome IoError(std::string why) {
  StreamOutcome outcome;
  outcome.io_error = std::move(why);
  return outcome;
}

// Validates a pipe or socket named on the command line as a stream (a FIFO
// once it has a writer). Other kinds that are not regular files (devices,
// directories) are refused, as every command refuses them.
StreamOutcome ValidateStreamPath(const base::InputFile& in, const std::string& path,
                                 const Options& options, std::ostream& err) {
  std::string why;
  const std::optional<std::vector<std::uint8_t>> first = PrepareStream(in, &why);
  if (!first) return IoError(why);
  return ValidateStream(in.fd(), path, options, err, *first);
}

// The verdict on a regular file, memory-mapped.
StreamOutcome ValidateMapped(const std::string& path, const Options& options) {
  const MappedFile file(path);
  if (!file.ok()) return IoError(file.error());
  const Result<Directory> r = Parse(file.bytes(), options.parse);
  if (file.cut()) return IoError(base::kInputCutMessage);  // no verdict on zeros
  StreamOutcome outcome;
  if (!r.ok()) outcome.error = r.error();
  return outcome;
}

StreamOutcome Validate(const std::string& path, const Options& options, std::ostream& err) {
  if (path == "-") {
    if (StandardInputClosed()) return IoError("standard input is closed");
    return ValidateStream(STDIN_FILENO, path, options, err);
  }
  if (IsUrl(path)) return ValidateUrl(path, options);  // range requests (remote_file.h)
  const base::InputFile in(path);                      // O_NONBLOCK: a FIFO cannot block the open
  if (!in.ok()) return IoError(in.error());
  if (in.kind() == base::InputKind::kRegular) return ValidateMapped(path, options);
  return ValidateStreamPath(in, path, options, err);
}

}  // namespace

int RunValidate(const Options& options, std::ostream& out, std::ostream& err) {
  int status = kExitOk;
  if (options.json) out << "[";
  bool first = true;
  for (const std::string& path : options.files) {
    std::string line;
    const StreamOutcome v = Validate(path, options, err);
    if (!v.io_error.empty()) {
      err << "kiln: " << base::Escape(path) << ": " << v.io_error << "\n";
      status = kExitUsage;
      line = absl::StrFormat(R"("ok": false, "io_error": %s)", JsonString(v.io_error));
    } else if (!v.error) {
      line = R"("ok": true)";
      if (!options.json) out << base::Escape(path) << ": ok\n";
    } else {
      if (status == kExitOk) status = kExitInvalid;
      line = ErrorFields(*v.error);
      if (!options.json) out << base::Escape(path) << ": " << v.error->ToString() << "\n";
    }
    if (options.json) {
      out << (first ? "\n  " : ",\n  ") << "{\"file\": " << JsonString(path) << ", " << line << "}";
      first = false;
    }
    if (!out) break;  // the report cannot be written: stop checking
  }
  if (options.json) out << (first ? "]\n" : "\n]\n");
  return FinishReport(out, err, "kiln validate", status);
}

}  // namespace kiln::cli
