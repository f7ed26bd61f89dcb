// kiln ingest [options] OUT.klnt: take an upload. The block is read from
// standard input (or --from FILE), validated as it arrives, and written to
// a temporary file next to OUT; only a complete, valid block is flushed
// (fsync) and renamed to OUT. A rejection or an I/O error stops the reading
// and removes the temporary file.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <span>
#include <vector>

#include "absl/strings/str_format.h"
#include "commands.h"
#include "flags.h"
#include "kiln/base/escape.h"
#include "kiln/base/output_file.h"
#include "kiln/formats/policy.h"
#include "report.h"
#include "stream_input.h"

namespace kiln::cli {
namespace {

// Start the disk writes every 16 MiB, while the upload is still arriving.
constexpr std::uint64_t kWritebackBytes = std::uint64_t{16} << 20;

constexpr std::string_view kIngestUsage =
    "usage: kiln ingest [--force] [--from FILE] [--max-block-bytes N[K|M|G|T]]\n"
    "                   [--max-tensors N] [--max-name-bytes N] [--no-limits]\n"
    "                   [--idle-timeout SECONDS] OUT.klnt\n"
    "defaults: --max-block-bytes 10G --max-tensors 100000 --max-name-bytes 1048576\n"
    "          --idle-timeout 60 (0: wait for ever for the next byte)\n";

struct IngestArgs {
  bool force = false;
  std::string from;  // empty: standard input
  std::string out;
  std::uint64_t idle_timeout_seconds = kDefaultIdleTimeoutSeconds;
  // An upload service's policy (kiln/formats/policy.h); --no-limits lifts it.
  Limits limits = formats::kUploadService.kiln;
};

int IngestUsage(std::ostream& err, const std::string& why) {
  err << "kiln ingest: " << why << "\n" << kIngestUsage;
  return kExitUsage;
}

// Parses the arguments; an exit code when they are wrong.
std::optional<int> ParseArgs(const std::vector<std::string>& args, IngestArgs* a,
                             std::ostream& err) {
  std::string why;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--force") {
      a->force = true;
    } else if (arg == "--no-limits") {
      a->limits = Limits{};
    } else if (arg == "--from") {
      if (i + 1 >= args.size()) return IngestUsage(err, "--from needs FILE");
      a->from = args[++i];
    } else if (const FlagParse f =
                   ParseTimeoutOrLimitFlag(args, &i, &a->idle_timeout_seconds, &a->limits, &why);
               f == FlagParse::kBadValue) {
      return IngestUsage(err, why);
    } else if (f == FlagParse::kParsed) {
      continue;
    } else if (arg.starts_with("-") && arg != "-") {
      return IngestUsage(err, "unknown option " + base::Escape(arg));
    } else if (a->out.empty()) {
      a->out = arg;
    } else {
      return IngestUsage(err, "more than one OUT given");
    }
  }
  if (a->out.empty()) return IngestUsage(err, "missing OUT.klnt");
  return std::nullopt;
}

// `first`: bytes already read from `fd` (PrepareStream), taken first.
int Ingest(int fd, std::span<const std::uint8_t> first, const IngestArgs& a, std::ostream& out,
           std::ostream& err) {
  const std::string source = a.from.empty() ? "-" : a.from;
  // Without --force, OUT is never replaced, even if it appears during the
  // upload (the check in RunIngest only saves reading a doomed upload).
  base::OutputFile file(a.out, a.force ? base::Replace::kAllowed : base::Replace::kNever);
  if (!file.ok()) {
    err << "kiln ingest: " << base::Escape(a.out) << ": " << file.error() << "\n";
    return kExitUsage;
  }
  StreamValidator v({.mode = Mode::kWhole, .limits = a.limits});
  std::uint64_t unflushed = 0;
  auto write = [&](std::span<const std::uint8_t> b) {
    // Overlap the disk writes with the reading, so the final fsync is short.
    unflushed += b.size();
    if (unflushed >= kWritebackBytes) {
      file.StartWriteback();
      unflushed = 0;
    }
    return file.Write(b);
  };
  StreamOutcome o;
  if (!first.empty() && v.Feed(first) != StreamStatus::kRejected && !write(first.first(v.used()))) {
    o.io_error = "write failed";
  } else if (v.status() == StreamStatus::kNeedMore) {
    o = ReadStream(fd, v, write, err, "kiln ingest", a.idle_timeout_seconds);
  } else {
    o = SettledOutcome(v);
  }
  if (!file.ok()) {
    err << "kiln ingest: " << base::Escape(a.out) << ": " << file.error() << "\n";
    return kExitUsage;
  }
  if (!o.io_error.empty()) {
    err << "kiln ingest: " << base::Escape(source) << ": " << o.io_error << "\n";
    return kExitUsage;
  }
  if (o.error) {
    out << base::Escape(source) << ": " << o.error->ToString() << "\n";
    return kExitInvalid;
  }
  // The report is written and flushed before the rename, so the exit status
  // alone says whether OUT was committed: 0 if and only if it was. A report
  // that cannot be written (stdout on a full disk, or closed) is exit 2 with
  // nothing committed; a rename that fails after the report is exit 2 too.
  if (!ReportBeforeCommit(
          out, err, "kiln ingest",
          absl::StrFormat("%s: ok, %d bytes, %d tensors -> %s\n", base::Escape(source),
                          v.consumed(), v.directory().tensor_count(), base::Escape(a.out)))) {
    err << "kiln ingest: " << base::Escape(a.out) << ": not written (the report failed)\n";
    return kExitUsage;
  }
  if (!file.Commit()) {  // fsync, rename, fsync of the directory
    err << "kiln ingest: " << base::Escape(a.out) << ": " << file.error() << "; not written\n";
    return kExitUsage;
  }
  return kExitOk;
}

}  // namespace

int RunIngest(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  IngestArgs a;
  if (const auto code = ParseArgs(args, &a, err)) return *code;
  struct stat st {};
  if (!a.force && ::lstat(a.out.c_str(), &st) == 0) {
    err << "kiln ingest: " << base::Escape(a.out) << ": exists (use --force to replace it)\n";
    return kExitUsage;
  }
  if (a.from.empty() || a.from == "-") {
    if (StandardInputClosed()) {
      err << "kiln ingest: standard input is closed\n";
      return kExitUsage;
    }
    return Ingest(STDIN_FILENO, {}, a, out, err);
  }
  // O_NONBLOCK: a FIFO given as --from cannot block the open; PrepareStream
  // waits a bounded time for its writer.
  const base::InputFile in(a.from);
  std::string why = in.error();
  const std::optional<std::vector<std::uint8_t>> first =
      in.ok() ? PrepareStream(in, &why) : std::nullopt;
  if (!first) {
    err << "kiln ingest: " << base::Escape(a.from) << ": " << why << "\n";
    return kExitUsage;
  }
  return Ingest(in.fd(), *first, a, out, err);
}

}  // namespace kiln::cli
