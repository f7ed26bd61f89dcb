// Every rejection in the parser is built by Fail(): the class comes from the
// rule table, so a check cannot report a rule under the wrong class.
#ifndef KILN_INTERNAL_FAIL_H_
#define KILN_INTERNAL_FAIL_H_

#include <cstdint>
#include <optional>
#include <string>

#include "kiln/base/format.h"
#include "kiln/status.h"

namespace kiln::internal {

// The outcome of one check: nullopt when the rule holds.
using Check = std::optional<Error>;

[[nodiscard]] Error MakeError(Rule rule, std::uint64_t offset, std::optional<std::uint32_t> tensor,
                              std::string message);

// Rejects the block under `rule`, at absolute byte `offset`, for header rules.
template <typename... Args>
[[nodiscard]] Error Fail(Rule rule, std::uint64_t offset,
                         const base::FormatString<std::type_identity_t<Args>...>& format,
                         const Args&... args) {
  return MakeError(rule, offset, std::nullopt, base::Format<Args...>(format, args...));
}

// Rejects the block under `rule` for tensor `tensor`.
template <typename... Args>
[[nodiscard]] Error FailTensor(Rule rule, std::uint64_t offset, std::uint32_t tensor,
                               const base::FormatString<std::type_identity_t<Args>...>& format,
                               const Args&... args) {
  return MakeError(rule, offset, tensor, base::Format<Args...>(format, args...));
}

}  // namespace kiln::internal

#endif  // KILN_INTERNAL_FAIL_H_
