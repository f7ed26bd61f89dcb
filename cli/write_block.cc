#include "output_file.h"

#include <algorithm>

#include "commands.h"
#include "report.h"

namespace kiln::cli {
namespace {

constexpr std::size_t kChunk = std::size_t{1} << 20;

}  // namespace

int WriteAll(int fd, std::span<const std::uint8_t> bytes, Progress* progress) {
  while (!bytes.empty()) {
    const std::size_t n = std::min(bytes.size(), kChunk);
    if (const int e = base::WriteAll(fd, bytes.first(n))) return e;
    if (progress != nullptr) progress->Advance(n);
    bytes = bytes.subspan(n);
  }
  return 0;
}

bool WriteWithProgress(OutputFile& file, std::span<const std::uint8_t> bytes, Progress* progress) {
  while (!bytes.empty()) {
    const std::size_t n = std::min(bytes.size(), kChunk);
    if (!file.Write(bytes.first(n))) return false;
    if (progress != nullptr) progress->Advance(n);
    bytes = bytes.subspan(n);
  }
  return file.ok();
}

bool ReportBeforeCommit(std::ostream& out, std::ostream& err, std::string_view who,
                        const std::string& line) {
  out << line;
  if (FinishReport(out, err, who, kExitOk) != kExitOk) return false;
  err.flush();
  return static_cast<bool>(err);
}

int WriteBlockFile(const BlockWriter& writer, const InputLimits& limits, const std::string& path,
                   std::string_view who, bool input_fault, std::ostream& err,
                   const std::function<bool()>& report) {
  const Result<BlockPlan> plan = writer.Plan();
  if (!plan.ok()) {
    err << who << ": cannot be stored in kiln: " << plan.error().ToString() << "\n";
    return input_fault ? kExitInvalid : kExitUsage;
  }
  if (const auto code = CheckBlockLength(plan.value().block_length(), limits, who, err)) {
    return *code;
  }
  const Result<std::uint64_t, WriteError> n = plan.value().WriteToFile(path, report);
  if (n.ok()) return kExitOk;
  const WriteError& e = n.error();
  err << who << ": " << base::Escape(path) << ": ";
  switch (e.step) {
    case WriteError::Step::kBeforeCommit:
      err << "not written (the report failed)\n";
      break;
    case WriteError::Step::kCommit:
      err << e.message << "; not written\n";
      break;
    default:
      err << e.message << "\n";
  }
  return kExitUsage;
}

}  // namespace kiln::cli
