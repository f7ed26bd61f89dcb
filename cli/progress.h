// Progress on stderr for long conversions: only past 64 MiB of payload, and
// only when stderr is a terminal, so logs and pipes never see "\r" updates;
// and the chunked writes of unpack and convert that advance it.
#ifndef KILN_CLI_PROGRESS_H_
#define KILN_CLI_PROGRESS_H_

#include <cstdint>
#include <ostream>
#include <span>
#include <string>

#include "kiln/base/output_file.h"

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

// Writes all of `bytes` to `fd` in chunks of at most 1 MiB, advancing
// `progress` (may be null) as it goes. Returns an errno value, 0 on success.
[[nodiscard]] int WriteAll(int fd, std::span<const std::uint8_t> bytes, Progress* progress);

// Appends `bytes` to `file` in chunks of at most 1 MiB, advancing
// `progress` (may be null). False (and file.error()) on an I/O error.
bool WriteWithProgress(base::OutputFile& file, std::span<const std::uint8_t> bytes,
                       Progress* progress);

}  // namespace kiln::cli

#endif  // KILN_CLI_PROGRESS_H_
