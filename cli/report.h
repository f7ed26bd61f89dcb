// The end of every command's report on stdout: a write that failed (a full
// disk, /dev/full) must not look like a verdict.
#ifndef KILN_CLI_REPORT_H_
#define KILN_CLI_REPORT_H_

#include <ostream>
#include <string>
#include <string_view>

namespace kiln::cli {

// Flushes `out`. When that or any earlier write to it failed, says so on
// `err` ("kiln validate: cannot write the output: No space left on device",
// best effort) and returns kExitUsage (2); otherwise returns `status`.
// Standard output that kiln found closed at startup counts as a failed
// write ("standard output is closed").
[[nodiscard]] int FinishReport(std::ostream& out, std::ostream& err, std::string_view who,
                               int status);

// Writes `line` to `out` and flushes it, and checks `err` (where a command
// may have listed what it could not carry): true when both were written.
// For the report a command writes before it commits its output.
[[nodiscard]] bool ReportBeforeCommit(std::ostream& out, std::ostream& err, std::string_view who,
                                      const std::string& line);

}  // namespace kiln::cli

#endif  // KILN_CLI_REPORT_H_
