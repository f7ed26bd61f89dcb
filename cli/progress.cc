#include "progress.h"

#include <unistd.h>

#include <algorithm>

#include "absl/strings/str_format.h"

namespace kiln::cli {
namespace {

constexpr std::size_t kChunk = std::size_t{1} << 20;

}  // namespace

Progress::Progress(std::ostream& err, std::string label, std::uint64_t total)
    : Progress(err, std::move(label), total,
               total > kProgressThreshold && ::isatty(STDERR_FILENO) == 1) {}

Progress::Progress(std::ostream& err, std::string label, std::uint64_t total, bool enabled)
    : err_(err), label_(std::move(label)), total_(total), enabled_(enabled && total > 0) {}

Progress::~Progress() { Finish(); }

void Progress::Finish() {
  if (enabled_ && shown_ >= 0) err_ << "\n" << std::flush;
  enabled_ = false;
}

void Progress::Advance(std::uint64_t bytes) {
  if (!enabled_) return;
  done_ = std::min(total_, done_ + std::min(bytes, total_));
  // Rounded down, exactly: done_ * 100 in 128 bits cannot overflow (in 64 it
  // would from 2^57 bytes, and dividing the total first overshoots).
  const auto percent =
      static_cast<std::uint64_t>(static_cast<unsigned __int128>(done_) * 100 / total_);
  if (static_cast<int>(percent) == shown_) return;
  shown_ = static_cast<int>(std::min<std::uint64_t>(percent, 100));
  err_ << absl::StrFormat("\r%s: %3d%% (%d of %d MiB)", label_, shown_, done_ >> 20, total_ >> 20)
       << std::flush;
}

int WriteAll(int fd, std::span<const std::uint8_t> bytes, Progress* progress) {
  while (!bytes.empty()) {
    const std::size_t n = std::min(bytes.size(), kChunk);
    if (const int e = base::WriteAll(fd, bytes.first(n))) return e;
    if (progress != nullptr) progress->Advance(n);
    bytes = bytes.subspan(n);
  }
  return 0;
}

bool WriteWithProgress(base::OutputFile& file, std::span<const std::uint8_t> bytes,
                       Progress* progress) {
  while (!bytes.empty()) {
    const std::size_t n = std::min(bytes.size(), kChunk);
    if (!file.Write(bytes.first(n))) return false;
    if (progress != nullptr) progress->Advance(n);
    bytes = bytes.subspan(n);
  }
  return file.ok();
}

}  // namespace kiln::cli
