// kiln convert: the conversions, one function per direction.
#ifndef KILN_CLI_CONVERT_H_
#define KILN_CLI_CONVERT_H_

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "kiln/directory.h"

namespace kiln::cli {

// Each returns an exit code: 0, 1 when the input is invalid or cannot be
// represented in the target format, 2 on an I/O error.
[[nodiscard]] int SafetensorsToKiln(const std::string& in, const std::string& out,
                                    std::ostream& log, std::ostream& err);
[[nodiscard]] int GgufToKiln(const std::string& in, const std::string& out, std::ostream& log,
                             std::ostream& err);
// `limits` bound the kiln input (LIMIT H7 past them).
[[nodiscard]] int KilnToSafetensors(const std::string& in, const std::string& out,
                                    const Limits& limits, std::ostream& log, std::ostream& err);

// Reports, on `err`, metadata the conversion cannot carry over: kiln has no
// place for it, and it must never vanish silently. Keys and values are
// escaped for the terminal and shortened.
void ReportDroppedMetadata(const std::vector<std::pair<std::string, std::string>>& entries,
                           std::ostream& err);

}  // namespace kiln::cli

#endif  // KILN_CLI_CONVERT_H_
