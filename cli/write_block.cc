#include "write_block.h"

#include "commands.h"
#include "kiln/base/escape.h"

namespace kiln::cli {

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
