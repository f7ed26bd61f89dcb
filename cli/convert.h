// kiln convert: the conversions, one function per direction.
#ifndef KILN_CLI_CONVERT_H_
#define KILN_CLI_CONVERT_H_

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

#include "reader_limits.h"

#include "kiln/directory.h"

namespace kiln::cli {

// Each returns an exit code: 0, 1 when the input is invalid or cannot be
// represented in the target format, 2 on an I/O error.
[[nodiscard]] int SafetensorsToKiln(const std::string& in, const std::string& out,
                                    const InputLimits& limits, std::ostream& log,
                                    std::ostream& err);
[[nodiscard]] int GgufToKiln(const std::string& in, const std::string& out,
                             const InputLimits& limits, std::ostream& log, std::ostream& err);
// `limits` bound the kiln input (LIMIT H7 past them).
[[nodiscard]] int KilnToSafetensors(const std::string& in, const std::string& out,
                                    const Limits& limits, std::ostream& log, std::ostream& err);

// Visits metadata entries (key, value as text) in file order until the
// visitor returns false.
using MetadataVisitor = std::function<bool(std::string_view key, std::string_view value)>;
using MetadataWalk = std::function<void(const MetadataVisitor&)>;

// Reports, on `err`, the `count` metadata entries the conversion cannot
// carry over: kiln has no place for them, and they must never vanish
// silently. Only the entries printed are visited (and so rendered); keys and
// values are escaped for the terminal and shortened.
void ReportDroppedMetadata(std::uint64_t count, const MetadataWalk& walk, std::ostream& err);

}  // namespace kiln::cli

#endif  // KILN_CLI_CONVERT_H_
