// Writing the outputs of pack, unpack and convert: every file goes through
// kiln::base::OutputFile (a fresh temporary next to the target, fsync'd and
// renamed into place).
#ifndef KILN_CLI_OUTPUT_FILE_H_
#define KILN_CLI_OUTPUT_FILE_H_

#include <cstdint>
#include <functional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>

#include "kiln/base/output_file.h"
#include "kiln/writer.h"
#include "progress.h"
#include "reader_limits.h"

namespace kiln::cli {

using OutputFile = base::OutputFile;

// Writes all of `bytes` to `fd` in chunks of at most 1 MiB, advancing
// `progress` (may be null) as it goes. Returns an errno value, 0 on success.
[[nodiscard]] int WriteAll(int fd, std::span<const std::uint8_t> bytes, Progress* progress);

// Appends `bytes` to `file` in chunks of at most 1 MiB, advancing
// `progress` (may be null). False (and file.error()) on an I/O error.
bool WriteWithProgress(OutputFile& file, std::span<const std::uint8_t> bytes, Progress* progress);

// Seals the block (BlockWriter::Plan, once) and, when it fits `limits`,
// writes it to `path` (BlockPlan::WriteToFile). Returns an exit code and
// reports on `err`, prefixed by `who` ("kiln pack"): a rule the block
// breaks is 1 when `input_fault` (the input cannot be represented in kiln),
// else 2; a block over --max-block-bytes is 1; an I/O error is 2. `report`
// (may be empty) writes the command's success report once the block is
// written and before the rename: false (the report could not be written) is
// 2 with nothing committed, so exit 0 alone says the file is in place.
[[nodiscard]] int WriteBlockFile(const BlockWriter& writer, const InputLimits& limits,
                                 const std::string& path, std::string_view who, bool input_fault,
                                 std::ostream& err, const std::function<bool()>& report = {});

// Writes `line` to `out` and flushes it, and checks `err` (where a command
// may have listed what it could not carry): true when both were written.
// For the report a command writes before it commits its output.
[[nodiscard]] bool ReportBeforeCommit(std::ostream& out, std::ostream& err, std::string_view who,
                                      const std::string& line);

}  // namespace kiln::cli

#endif  // KILN_CLI_OUTPUT_FILE_H_
