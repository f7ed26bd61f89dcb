// Progress on stderr for long conversions: only past 64 MiB of payload, and
// only when stderr is a terminal, so logs and pipes never see "\r" updates.
#ifndef KILN_CLI_PROGRESS_H_
#define KILN_CLI_PROGRESS_H_

#include <cstdint>
#include <ostream>
#include <span>
#include <string>

#include "kiln/writer.h"

namespace kiln::cli {

inline constexpr std::uint64_t kProgressThreshold = std::uint64_t{64} << 20;

class Progress {
 public:
  // Enabled when total > kProgressThreshold and stderr is a terminal.
  Progress(std::ostream& err, std::string label, std::uint64_t total);
  // Enabled as the caller says (for tests).
  Progress(std::ostream& err, std::string label, std::uint64_t total, bool enabled);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  [[nodiscard]] bool enabled() const { return enabled_; }
  void Advance(std::uint64_t bytes);
  // Ends the progress line (once); the destructor calls it too.
  void Finish();

 private:
  std::ostream& err_;
  std::string label_;
  std::uint64_t total_;
  bool enabled_;
  std::uint64_t done_ = 0;
  int shown_ = -1;  // the last percentage printed
};

// A tensor's payload, taken from `bytes`. A plain view when nothing needs
// doing; otherwise a stream that reverses each `swap_width`-byte unit (0: no
// swapping) and advances `progress` (may be null) as the writer reads it.
[[nodiscard]] Payload SourcePayload(std::span<const std::uint8_t> bytes, unsigned swap_width,
                                    Progress* progress);

}  // namespace kiln::cli

#endif  // KILN_CLI_PROGRESS_H_
