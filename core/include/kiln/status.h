// Error classes, rule ids and the error a failed parse returns.
//
// Classes and rule ids are a stable contract: tools may match on the strings
// returned by ErrorClassName() and RuleName().
#ifndef KILN_STATUS_H_
#define KILN_STATUS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "kiln/base/result.h"

namespace kiln {

// The four error classes of the rule set.
enum class ErrorClass : std::uint8_t {
  kFrame,  // not a v2 block this reader can take (magic, version, flags,
           // reserved bytes, truncation, trailing bytes)
  kType,   // framed, but the contents are inconsistent
  kLimit,  // exact arithmetic exceeds 2^64-1, or a caller limit is exceeded
  kUtf8,   // a name is not well-formed UTF-8
};

// Every rule of the rule set, generated from rules.inc.
enum class Rule : std::uint8_t {
#define KILN_RULE(id, cls, summary) id,
#include "kiln/rules.inc"
#undef KILN_RULE
};

namespace rules_detail {
enum RuleIndex : std::size_t {
#define KILN_RULE(id, cls, summary) id,
#include "kiln/rules.inc"
#undef KILN_RULE
  kCount
};
}  // namespace rules_detail

// The number of rules.
inline constexpr std::size_t kRuleCount = rules_detail::kCount;

// "FRAME", "TYPE", "LIMIT" or "UTF8".
[[nodiscard]] std::string_view ErrorClassName(ErrorClass c);
// "H1" .. "P2".
[[nodiscard]] std::string_view RuleName(Rule r);
// The class a rule reports; fixed by the rule set.
[[nodiscard]] ErrorClass RuleClass(Rule r);
// One-line statement of the rule.
[[nodiscard]] std::string_view RuleSummary(Rule r);
// Looks a rule up by its id ("D7"); nullopt when there is no such rule.
[[nodiscard]] std::optional<Rule> RuleFromName(std::string_view name);

// Why a block was rejected.
struct Error {
  ErrorClass error_class = ErrorClass::kFrame;
  Rule rule = Rule::H1;
  // Offset, from the start of the block, of the field or byte that broke the
  // rule (for truncation: the buffer length, where the missing bytes start).
  std::uint64_t offset = 0;
  // The descriptor index when the rule concerns one tensor.
  std::optional<std::uint32_t> tensor;
  // The field and the values it held, e.g.
  // "range [0, 12) ends past payload_bytes 8".
  std::string message;

  // "TYPE D9 at byte 104 (tensor 0): range [0, 12) ends past payload_bytes 8"
  [[nodiscard]] std::string ToString() const;
};

// A value or the error (by default an Error) that prevented it. Cannot be
// ignored. The format readers use it with their own error type. Defined in
// base (kiln/base/result.h), which every component shares.
template <typename T, typename E = Error>
using Result = base::Result<T, E>;

}  // namespace kiln

#endif  // KILN_STATUS_H_
