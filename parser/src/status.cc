#include <array>
#include <string>

#include "fail.h"
#include "kiln/base/format.h"
#include "kiln/status.h"

namespace kiln {
namespace {

struct RuleEntry {
  std::string_view name;
  ErrorClass error_class;
  std::string_view summary;
};

constexpr std::array<RuleEntry, kRuleCount> kRules = {{
#define KILN_RULE(id, cls, summary) {#id, ErrorClass::cls, summary},
#include "kiln/rules.inc"
#undef KILN_RULE
}};

const RuleEntry& Entry(Rule r) { return kRules.at(static_cast<std::size_t>(r)); }

}  // namespace

std::string_view ErrorClassName(ErrorClass c) {
  switch (c) {
    case ErrorClass::kFrame:
      return "FRAME";
    case ErrorClass::kType:
      return "TYPE";
    case ErrorClass::kLimit:
      return "LIMIT";
    case ErrorClass::kUtf8:
      return "UTF8";
  }
  return "UNKNOWN";
}

std::string_view RuleName(Rule r) { return Entry(r).name; }
ErrorClass RuleClass(Rule r) { return Entry(r).error_class; }
std::string_view RuleSummary(Rule r) { return Entry(r).summary; }

std::optional<Rule> RuleFromName(std::string_view name) {
  for (std::size_t i = 0; i < kRules.size(); ++i) {
    if (kRules[i].name == name) return static_cast<Rule>(i);
  }
  return std::nullopt;
}

std::string Error::ToString() const {
  std::string out =
      base::Format("%s %s at byte %d", ErrorClassName(error_class), RuleName(rule), offset);
  if (tensor) base::AppendFormat(&out, " (tensor %d)", *tensor);
  base::AppendFormat(&out, ": %s", message);
  return out;
}

namespace internal {

Error MakeError(Rule rule, std::uint64_t offset, std::optional<std::uint32_t> tensor,
                std::string message) {
  Error e;
  e.error_class = RuleClass(rule);
  e.rule = rule;
  e.offset = offset;
  e.tensor = tensor;
  e.message = std::move(message);
  return e;
}

}  // namespace internal
}  // namespace kiln
