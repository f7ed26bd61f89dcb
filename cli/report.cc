#include "report.h"

#include <cerrno>
#include <cstring>
#include <string>

#include "commands.h"

namespace kiln::cli {

int FinishReport(std::ostream& out, std::ostream& err, std::string_view who, int status) {
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

}  // namespace kiln::cli
