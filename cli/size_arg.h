// Byte counts on the command line: "1048576", "64K", "512M", "10G", "1T"
// (binary multiples: K = 1024). Used by --max-block-bytes.
#ifndef KILN_CLI_SIZE_ARG_H_
#define KILN_CLI_SIZE_ARG_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace kiln::cli {

// nullopt when `text` is not digits with an optional K, M, G or T suffix
// (either case), or the value exceeds 2^64-1.
[[nodiscard]] std::optional<std::uint64_t> ParseSize(std::string_view text);

}  // namespace kiln::cli

#endif  // KILN_CLI_SIZE_ARG_H_
