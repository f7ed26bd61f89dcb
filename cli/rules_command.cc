#include "absl/strings/str_format.h"
#include "commands.h"

namespace kiln::cli {

int RunRules(bool markdown, std::ostream& out) {
  if (markdown) out << "| id | class | rule |\n|---|---|---|\n";
  for (std::size_t i = 0; i < kRuleCount; ++i) {
    const auto r = static_cast<Rule>(i);
    const std::string_view id = RuleName(r), cls = ErrorClassName(RuleClass(r));
    out << (markdown ? absl::StrFormat("| %s | %s | %s |\n", id, cls, RuleSummary(r))
                     : absl::StrFormat("%s\t%s\t%s\n", id, cls, RuleSummary(r)));
  }
  return kExitOk;
}

}  // namespace kiln::cli
