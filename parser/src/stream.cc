// StreamValidator: the parser's checks, run at the points where the bytes
// seen decide them (docs/spec.md, section 5.1).
//
// - Header (bytes 0..63): while fewer than 64 bytes are in, CheckHeader runs
//   on them zero-filled to 64 bytes; its rejection is reported only when no
//   completion can change it (DecidedEarly). At byte 64: CheckHeader (H1..H7
//   with the caller's limits) and H9.
// - Directory region (up to payload_base): kept; at payload_base,
//   CheckBlock runs every rule from L1 to P1 on it (the payloads absent) and
//   hands back the uncovered payload ranges.
// - Payload: only the bytes inside those ranges are looked at (P2); covered
//   bytes go by untouched.
#include "kiln/stream.h"

#include <algorithm>
#include <array>
#include <utility>

#include "gap_recorder.h"
#include "kiln/internal/rules.h"

namespace kiln {
namespace {

using internal::Bytes;
using internal::Check;

// Whether CheckHeader's rejection of the first n < 64 bytes, zero-filled to
// 64, is the rejection of every completion of them. CheckHeader reads H1
// (bytes 0..3), H2 (byte 4), H3 (the length, which every completion to 64
// bytes passes), H4 (byte 5), then H5 over bytes 6, 7, 32..63 in increasing
// order (the first nonzero one), and only then H6 and H7. So H1, H2 and H4
// are decided once their bytes are in; an H5 failure at a byte already seen
// is decided (every reserved byte before it was seen and is zero); the rest
// needs all 64 bytes.
// (Not where the rules are checked: `using enum` keeps docs/rules.md, which
// lists every `Rule::` id in parser/src as a check, from listing it.)
bool DecidedEarly(const Error& e, std::size_t n) {
  using enum Rule;
  switch (e.rule) {
    case H1:
      return n >= 4;
    case H2:
      return n >= 5;
    case H4:
      return n >= 6;
    case H5:
      return e.offset < n;
    default:
      return false;
  }
}

}  // namespace

StreamValidator::StreamValidator(StreamOptions options) : options_(options) {}

StreamStatus StreamValidator::Feed(std::span<const std::uint8_t> chunk) {
  const std::size_t size = chunk.size();
  while (!chunk.empty() && status_ == StreamStatus::kNeedMore) {
    switch (phase_) {
      case Phase::kHeader:
        TakeHeader(chunk);
        break;
      case Phase::kDirectory:
        TakeDirectory(chunk);
        break;
      case Phase::kPayload:
        TakePayload(chunk);
        break;
      case Phase::kDone:
        break;
    }
  }
  if (!chunk.empty() && status_ == StreamStatus::kComplete && options_.mode == Mode::kWhole) {
    // H8: the stream goes on after the block.
    chunk = chunk.subspan(1);
    ++consumed_;
    Reject(internal::StreamGoesOnError(*header_));
  }
  used_ = size - chunk.size();
  return status_;
}

StreamStatus StreamValidator::Finish() {
  finished_ = true;
  if (status_ != StreamStatus::kNeedMore) return status_;
  if (!header_) {
    // Fewer than 64 bytes: the header rule Parse gives for them.
    const Result<HeaderInfo> r = internal::CheckHeader(kept_, options_.limits);
    Reject(r.ok() ? internal::CheckLength(consumed_, r.value(), options_.mode).value() : r.error());
  } else {
    // H8: the stream ended before block_length.
    Reject(internal::CheckLength(consumed_, *header_, options_.mode).value());
  }
  return status_;
}

std::uint64_t StreamValidator::bytes_to_checkpoint() const {
  if (finished_) return 0;
  if (status_ != StreamStatus::kNeedMore) {
    return status_ == StreamStatus::kComplete && options_.mode == Mode::kWhole ? 1 : 0;
  }
  switch (phase_) {
    case Phase::kHeader:
      return kHeaderSize - consumed_;
    case Phase::kDirectory:
      return header_->payload_base - consumed_;
    case Phase::kPayload:
      return header_->block_length - consumed_;
    case Phase::kDone:
      break;
  }
  return 0;
}

void StreamValidator::TakeHeader(std::span<const std::uint8_t>& chunk) {
  const std::size_t take = std::min<std::size_t>(kHeaderSize - kept_.size(), chunk.size());
  // Decided before byte 64? Then stop at the byte that decides it.
  const std::size_t early = std::min<std::size_t>(take, kHeaderSize - 1 - kept_.size());
  if (early > 0 && EarlyHeaderError(chunk.first(early))) {
    for (std::size_t k = 1; k <= early; ++k) {
      if (std::optional<Error> e = EarlyHeaderError(chunk.first(k))) {
        Append(chunk, k);
        return Reject(*std::move(e));
      }
    }
  }
  Append(chunk, take);
  if (kept_.size() == kHeaderSize) OnHeader();
}

std::optional<Error> StreamValidator::EarlyHeaderError(std::span<const std::uint8_t> more) const {
  std::array<std::uint8_t, kHeaderSize> padded{};
  std::copy(kept_.begin(), kept_.end(), padded.begin());
  std::copy(more.begin(), more.end(), padded.begin() + static_cast<std::ptrdiff_t>(kept_.size()));
  Result<HeaderInfo> r = internal::CheckHeader(padded, options_.limits);
  if (!r.ok() && DecidedEarly(r.error(), kept_.size() + more.size())) return r.error();
  return std::nullopt;
}

void StreamValidator::Append(std::span<const std::uint8_t>& chunk, std::size_t n) {
  kept_.insert(kept_.end(), chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(n));
  chunk = chunk.subspan(n);
  consumed_ += n;
}

void StreamValidator::OnHeader() {
  Result<HeaderInfo> r = internal::CheckHeader(kept_, options_.limits);
  if (!r.ok()) return Reject(r.error());
  if (Check e = internal::CheckNameFlag(r.value())) return Reject(*std::move(e));
  header_ = r.value();
  phase_ = Phase::kDirectory;
  if (header_->payload_base == kHeaderSize) OnDirectory();
}

void StreamValidator::TakeDirectory(std::span<const std::uint8_t>& chunk) {
  // The limits held at byte 64, and kept_ grows only by bytes that arrived.
  const std::uint64_t want = header_->payload_base - kept_.size();
  Append(chunk, static_cast<std::size_t>(std::min<std::uint64_t>(want, chunk.size())));
  if (kept_.size() == header_->payload_base) OnDirectory();
}

void StreamValidator::OnDirectory() {
  if (Check e = internal::CheckDirectoryRegion(kept_, *header_, gaps_)) {
    return Reject(*std::move(e));
  }
  directory_ = Directory(*header_, kept_, /*has_payloads=*/false);
  EnterPayload();
}

void StreamValidator::EnterPayload() {
  phase_ = Phase::kPayload;
  if (consumed_ == header_->block_length) {
    phase_ = Phase::kDone;
    status_ = StreamStatus::kComplete;
  }
}

void StreamValidator::TakePayload(std::span<const std::uint8_t>& chunk) {
  const std::uint64_t pos = consumed_ - header_->payload_base;  // payload offset of chunk[0]
  const std::uint64_t left = header_->block_length - consumed_;
  const std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(left, chunk.size()));
  const std::uint64_t end = pos + take;
  // P2 on the uncovered bytes of [pos, end); covered bytes are not read.
  while (next_gap_ < gaps_.size() && gaps_[next_gap_].from < end) {
    const Gap g = gaps_[next_gap_];
    const std::uint64_t lo = std::max(g.from, pos), hi = std::min(g.to, end);
    if (lo < hi) {
      const Bytes seen =
          chunk.subspan(static_cast<std::size_t>(lo - pos), static_cast<std::size_t>(hi - lo));
      if (Check e = internal::CheckGapBytes(*header_, lo, seen)) {
        // Taken up to and including the byte at e->offset (in the block).
        const std::uint64_t taken = e->offset + 1 - consumed_;
        consumed_ += taken;
        chunk = chunk.subspan(static_cast<std::size_t>(taken));
        return Reject(*std::move(e));
      }
    }
    if (g.to > end) break;
    ++next_gap_;
  }
  chunk = chunk.subspan(take);
  consumed_ += take;
  if (consumed_ == header_->block_length) {
    phase_ = Phase::kDone;
    status_ = StreamStatus::kComplete;
  }
}

void StreamValidator::Reject(Error e) {
  error_ = std::move(e);
  status_ = StreamStatus::kRejected;
  phase_ = Phase::kDone;
  directory_.reset();
}

}  // namespace kiln
