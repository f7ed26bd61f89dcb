#include "flags.h"

#include <algorithm>
#include <iterator>
#include <optional>

#include "kiln/base/decimal.h"
#include "kiln/policy.h"
#include "size_arg.h"

namespace kiln::cli {

bool ParseU64(std::string_view text, std::uint64_t* out) {
  const std::optional<std::uint64_t> n = base::ParseDecimal(text);
  if (n) *out = *n;
  return n.has_value();
}

namespace {

enum class Value : std::uint8_t {
  kCount,  // a plain decimal number
  kSize,   // a byte count: a decimal number, optionally with K, M, G or T
};

// One row per limit flag: what its value is and which bounds it sets.
struct LimitFlag {
  std::string_view name;
  Value value;
  bool bounds_kiln_input;  // accepted by the commands that parse a Kiln block
  void (*apply)(formats::Policy& policy, std::uint64_t n);
};

constexpr LimitFlag kLimitFlags[] = {
    // A foreign input only lowers max_tensors: a file with more than
    // kMaxNamedKilnTensors tensors cannot become a Kiln block.
    {"--max-tensors", Value::kCount, true,
     [](formats::Policy& p, std::uint64_t n) {
       p.kiln.max_tensor_count = n;
       p.reader.max_tensors = std::min(n, formats::kMaxNamedKilnTensors);
     }},
    {"--max-name-bytes", Value::kSize, true,
     [](formats::Policy& p, std::uint64_t n) { p.kiln.max_name_bytes = n; }},
    {"--max-block-bytes", Value::kSize, true,
     [](formats::Policy& p, std::uint64_t n) {
       p.kiln.max_block_length = n;
       p.max_block_bytes = n;
     }},
    {"--max-metadata-entries", Value::kCount, false,
     [](formats::Policy& p, std::uint64_t n) { p.reader.max_metadata_entries = n; }},
    {"--max-header-bytes", Value::kCount, false,
     [](formats::Policy& p, std::uint64_t n) { p.reader.max_header_bytes = n; }},
};

// The row of `flag` when `allowed` (or, if `kiln_only`, the Kiln input's
// flags) admits it.
const LimitFlag* FindLimitFlag(const std::string& flag, const std::vector<std::string>& allowed,
                               bool kiln_only) {
  const auto admitted = [&](const LimitFlag& f) {
    return f.name == flag && (f.bounds_kiln_input || !kiln_only);
  };
  const auto* row = std::find_if(std::begin(kLimitFlags), std::end(kLimitFlags), admitted);
  if (row == std::end(kLimitFlags)) return nullptr;
  if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), flag) == allowed.end()) {
    return nullptr;
  }
  return row;
}

FlagParse Apply(const LimitFlag& row, const std::vector<std::string>& args, std::size_t* i,
                formats::Policy* policy, std::string* error) {
  std::optional<std::uint64_t> n;
  if (*i + 1 < args.size()) {
    std::uint64_t plain = 0;
    if (row.value == Value::kSize) {
      n = ParseSize(args[*i + 1]);
    } else if (ParseU64(args[*i + 1], &plain)) {
      n = plain;
    }
  }
  if (!n) {
    *error = std::string(row.name) +
             (row.value == Value::kSize ? " needs N (or N with K, M, G, T)" : " needs N");
    return FlagParse::kBadValue;
  }
  row.apply(*policy, *n);
  ++*i;
  return FlagParse::kParsed;
}

}  // namespace

FlagParse ParsePolicyFlag(const std::vector<std::string>& args, std::size_t* i,
                          const std::vector<std::string>& allowed, formats::Policy* policy,
                          std::string* error) {
  const LimitFlag* row = FindLimitFlag(args[*i], allowed, false);
  if (row == nullptr) return FlagParse::kNotALimit;
  return Apply(*row, args, i, policy, error);
}

FlagParse ParseLimitFlag(const std::vector<std::string>& args, std::size_t* i, Limits* limits,
                         std::string* error) {
  const LimitFlag* row = FindLimitFlag(args[*i], {}, true);
  if (row == nullptr) return FlagParse::kNotALimit;
  formats::Policy policy;
  policy.kiln = *limits;
  const FlagParse parsed = Apply(*row, args, i, &policy, error);
  *limits = policy.kiln;
  return parsed;
}

FlagParse ParseIdleTimeoutFlag(const std::vector<std::string>& args, std::size_t* i,
                               std::uint64_t* seconds, std::string* error) {
  if (args[*i] != "--idle-timeout") return FlagParse::kNotALimit;
  std::uint64_t n = 0;
  if (*i + 1 >= args.size() || !ParseU64(args[*i + 1], &n) || n > kMaxIdleTimeoutSeconds) {
    *error = "--idle-timeout needs SECONDS (0 to 86400; 0: no timeout)";
    return FlagParse::kBadValue;
  }
  *seconds = n;
  ++*i;
  return FlagParse::kParsed;
}

FlagParse ParseTimeoutOrLimitFlag(const std::vector<std::string>& args, std::size_t* i,
                                  std::uint64_t* seconds, Limits* limits, std::string* error) {
  const FlagParse timeout = ParseIdleTimeoutFlag(args, i, seconds, error);
  if (timeout != FlagParse::kNotALimit) return timeout;
  return ParseLimitFlag(args, i, limits, error);
}

}  // namespace kiln::cli
