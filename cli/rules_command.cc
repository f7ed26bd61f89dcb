#include "absl/strings/str_format.h"
#include "commands.h"

namespace kiln::cli {

int RunRules(bool markdown, std::ostream& out) {
  if (markdown) out << "| id | class | rule |\n|---|---|---|\n";
  for (std::size_t i = 0; i < kRuleCount; ++i) {
    const auto r = static_cast<Rule>(i);
    out << absl::StrFormat(markdown ? "| %s | %s | %s |\n" : "%s\t%s\t%s\n", RuleName(r),
                           ErrorClassName(RuleClass(r)), RuleSummary(r));
  }
  return kExitOk;
}

}  // namespace kiln::cli
