#include "progress.h"

#include <unistd.h>

#include <algorithm>

#include "absl/strings/str_format.h"
#include "kiln/formats/npy.h"

namespace kiln::cli {

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
  // done_ * 100 could overflow for totals of 2^57 and more; divide first then.
  const std::uint64_t percent =
      total_ < (std::uint64_t{1} << 57) ? done_ * 100 / total_ : done_ / (total_ / 100);
  if (static_cast<int>(percent) == shown_) return;
  shown_ = static_cast<int>(std::min<std::uint64_t>(percent, 100));
  err_ << absl::StrFormat("\r%s: %3d%% (%d of %d MiB)", label_, shown_, done_ >> 20, total_ >> 20)
       << std::flush;
}

Payload SourcePayload(std::span<const std::uint8_t> bytes, unsigned swap_width,
                      Progress* progress) {
  if (swap_width < 2 && (progress == nullptr || !progress->enabled())) {
    return Payload::Bytes(bytes);
  }
  std::uint64_t at = 0;
  return Payload::Stream(bytes.size(),
                         [bytes, swap_width, progress, at](std::span<std::uint8_t> out) mutable {
                           if (out.size() > bytes.size() - at) return false;
                           formats::CopySwapped(bytes, at, out, swap_width);
                           at += out.size();
                           if (progress != nullptr) progress->Advance(out.size());
                           return true;
                         });
}

}  // namespace kiln::cli
