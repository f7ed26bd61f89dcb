// The block kiln pack and kiln convert write: the writer's plan, sealed
// once, checked against --max-block-bytes, written to OUT (through
// kiln::base::OutputFile: a fresh temporary next to OUT, fsync'd and renamed
// into place), and its outcome reported with the command's exit code.
#ifndef KILN_CLI_WRITE_BLOCK_H_
#define KILN_CLI_WRITE_BLOCK_H_

#include <functional>
#include <ostream>
#include <string>
#include <string_view>

#include "kiln/writer.h"
#include "reader_limits.h"

namespace kiln::cli {

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

}  // namespace kiln::cli

#endif  // KILN_CLI_WRITE_BLOCK_H_
