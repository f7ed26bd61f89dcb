// RangeValidator: Parse's checks, in Parse's order, on the ranges they read
// (docs/spec.md, section 5.2).
//
// - Header: CheckHeader on the first min(size, 64) bytes (it reads no byte
//   past 64, so its verdict is the one it gives on the whole file), then H8
//   (CheckLength) on the file's size, as Parse does.
// - Directory region: kept; at payload_base, CheckBlock runs every rule from
//   H9 to P1 on it (the payloads absent) and hands back the gaps, as for
//   StreamValidator.
// - Payload: only the gaps' bytes are checked (CheckGapBytes, P2), in offset
//   order, so the first nonzero byte read is the one Parse reports.
#include "kiln/random_access.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "gap_recorder.h"
#include "kiln/base/format.h"
#include "kiln/internal/rules.h"

namespace kiln {

using internal::Check;

RangeValidator::RangeValidator(std::uint64_t file_size, RangeOptions options)
    : options_(options), size_(file_size) {
  // A request must fit a buffer: 1 <= max_range <= SIZE_MAX (a no-op but on
  // 32-bit targets such as wasm32).
  options_.max_range =
      std::clamp<std::uint64_t>(options_.max_range, 1, std::numeric_limits<std::size_t>::max());
  options_.merge_gap = std::min(options_.merge_gap, options_.max_range / 2);
  if (size_ == 0) {
    OnHeader();  // H1 on no bytes: nothing to read
  } else {
    want_ = ByteRange{0, std::min<std::uint64_t>(size_, kHeaderSize)};
  }
}

std::optional<ByteRange> RangeValidator::NextRange() const {
  if (status_ != RangeStatus::kNeedRange) return std::nullopt;
  return want_;
}

std::span<std::uint8_t> RangeValidator::Buffer() {
  if (status_ != RangeStatus::kNeedRange || !want_) return {};
  // want_->length <= max_range, and a header or directory range lies in a
  // file that H8 showed holds it: both fit in memory the caller can give.
  const auto length = static_cast<std::size_t>(want_->length);
  if (phase_ == Phase::kGaps) {
    buffer_.resize(length);
    return buffer_;
  }
  // Header and directory bytes go where they are kept: kept_ ends at
  // want_->offset, and grows by the wanted bytes only.
  kept_.resize(static_cast<std::size_t>(want_->offset) + length);
  return std::span<std::uint8_t>(kept_).subspan(static_cast<std::size_t>(want_->offset));
}

RangeStatus RangeValidator::Provide(std::span<const std::uint8_t> bytes) {
  if (status_ != RangeStatus::kNeedRange) return status_;
  if (bytes.size() != want_->length) {
    return ReaderFailed(base::Format("the reader returned %d bytes for the %d bytes at offset %d",
                                     bytes.size(), want_->length, want_->offset));
  }
  const std::span<std::uint8_t> to = Buffer();
  std::copy(bytes.begin(), bytes.end(), to.begin());
  return Filled();
}

RangeStatus RangeValidator::Filled() {
  if (status_ != RangeStatus::kNeedRange) return status_;
  (void)Buffer();  // sized, should the caller have filled it without asking for it
  ++reads_;
  bytes_read_ += want_->length;
  switch (phase_) {
    case Phase::kHeader:
      OnHeader();
      break;
    case Phase::kDirectory:
      if (kept_.size() == header_->payload_base) {
        OnDirectory();
      } else {
        PlanDirectory();
      }
      break;
    case Phase::kGaps:
      CheckGaps(buffer_);
      break;
    case Phase::kDone:
      break;
  }
  return status_;
}

RangeStatus RangeValidator::ReaderFailed(std::string message) {
  if (status_ != RangeStatus::kNeedRange) return status_;
  read_error_ = message.empty() ? std::string("the reader failed") : std::move(message);
  status_ = RangeStatus::kReadFailed;
  phase_ = Phase::kDone;
  want_.reset();
  kept_ = {};
  buffer_ = {};
  return status_;
}

void RangeValidator::OnHeader() {
  // H1..H7 on the bytes read, which are the whole file when it is shorter
  // than 64 bytes: CheckHeader reads nothing past byte 64.
  Result<HeaderInfo> r = internal::CheckHeader(kept_, options_.limits);
  if (!r.ok()) return Reject(r.error());
  // H8 on the file's size, as Parse on the whole file.
  if (Check e = internal::CheckLength(size_, r.value(), options_.mode)) {
    return Reject(*std::move(e));
  }
  header_ = r.value();
  if (header_->payload_base > kept_.max_size()) {
    // Only on a 32-bit target (payload_base < 2^41): the directory region
    // the file holds cannot be kept in this address space. Not a verdict.
    return static_cast<void>(ReaderFailed(base::Format(
        "the %d-byte directory region does not fit in memory", header_->payload_base)));
  }
  phase_ = Phase::kDirectory;
  if (header_->payload_base == kHeaderSize) return OnDirectory();
  PlanDirectory();
}

void RangeValidator::PlanDirectory() {
  const std::uint64_t at = kept_.size();
  want_ = ByteRange{at, std::min(header_->payload_base - at, options_.max_range)};
}

void RangeValidator::OnDirectory() {
  // H9, L1, D1..Q4, N3..N5, Q5..Q7, P1; the gaps to gaps_.
  if (Check e = internal::CheckDirectoryRegion(kept_, *header_, gaps_)) {
    return Reject(*std::move(e));
  }
  phase_ = Phase::kGaps;
  PlanGaps();
}

void RangeValidator::PlanGaps() {
  if (next_gap_ == gaps_.size()) return Complete();
  // The request starts where the first unread gap byte is and takes the
  // gaps that follow while each is closer than merge_gap to the previous
  // one's end and starts inside the max_range cap.
  // Offsets are below payload_bytes and payload_base + payload_bytes fits
  // (H7), so neither sum below can wrap; cap <= the last gap's end.
  const std::uint64_t start = std::max(gaps_[next_gap_].from, gap_done_);
  const std::uint64_t cap = start + std::min(options_.max_range, gaps_.back().to - start);
  std::uint64_t end = std::min(gaps_[next_gap_].to, cap);
  for (std::size_t k = next_gap_; end == gaps_[k].to && k + 1 < gaps_.size(); ++k) {
    const Gap& next = gaps_[k + 1];
    if (next.from - end >= options_.merge_gap || next.from >= cap) break;
    end = std::min(next.to, cap);
  }
  want_ = ByteRange{header_->payload_base + start, end - start};
}

void RangeValidator::CheckGaps(std::span<const std::uint8_t> bytes) {
  // The request covers payload offsets [start, end): P2 on the gap bytes in
  // it, skipping the covered bytes a merged request spans.
  const std::uint64_t start = want_->offset - header_->payload_base;
  const std::uint64_t end = start + want_->length;
  while (next_gap_ < gaps_.size() && gaps_[next_gap_].from < end) {
    const Gap& g = gaps_[next_gap_];
    const std::uint64_t lo = std::max({g.from, gap_done_, start}), hi = std::min(g.to, end);
    const auto seen =
        bytes.subspan(static_cast<std::size_t>(lo - start), static_cast<std::size_t>(hi - lo));
    if (Check e = internal::CheckGapBytes(*header_, lo, seen)) return Reject(*std::move(e));
    gap_done_ = hi;
    if (hi < g.to) break;
    ++next_gap_;
  }
  PlanGaps();
}

void RangeValidator::Reject(Error e) {
  error_ = std::move(e);
  status_ = RangeStatus::kRejected;
  phase_ = Phase::kDone;
  want_.reset();
  directory_.reset();
  buffer_ = {};
}

void RangeValidator::Complete() {
  status_ = RangeStatus::kComplete;
  phase_ = Phase::kDone;
  want_.reset();
  buffer_ = {};
  directory_ = Directory(*header_, kept_, /*has_payloads=*/false);
}

RangeValidator ValidateRanges(std::uint64_t file_size, RangeReader read,
                              const RangeOptions& options) {
  RangeValidator v(file_size, options);
  while (const std::optional<ByteRange> want = v.NextRange()) {
    std::string why;
    if (!read(want->offset, v.Buffer(), &why)) {
      v.ReaderFailed(std::move(why));
      break;
    }
    v.Filled();
  }
  return v;
}

}  // namespace kiln
