#include "report.h"

#include <cerrno>
#include <cstring>
#include <iostream>
#include <string>

#include "commands.h"
#include "stream_input.h"

namespace kiln::cli {

int FinishReport(std::ostream& out, std::ostream& err, std::string_view who, int status) {
  if (&out == &std::cout && StandardOutputClosed()) {
    // Written to the /dev/null GuardStandardDescriptors put there: lost.
    err << who << ": cannot write the output: standard output is closed\n";
    err.flush();
    return kExitUsage;
  }
  const bool failed_before = !out;
  errno = 0;
  out.flush();
  if (out) return status;
  const int e = errno;
  err << who << ": cannot write the output"
      << (e != 0 && !failed_before ? std::string(": ") + std::strerror(e) : std::string()) << "\n";
  err.flush();
  return kExitUsage;
}

bool ReportBeforeCommit(std::ostream& out, std::ostream& err, std::string_view who,
                        const std::string& line) {
  out << line;
  if (FinishReport(out, err, who, kExitOk) != kExitOk) return false;
  err.flush();
  return static_cast<bool>(err);
}

}  // namespace kiln::cli
