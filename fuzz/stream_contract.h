// The verdict contract of kiln::StreamValidator (kiln/stream.h,
// docs/spec.md section 5.1), checked against kiln::Parse. Shared by
// fuzz/fuzz_stream.cc and tests/parser/stream_test.cc. Header-only, no test
// framework: ContractBreak() returns what broke, or an empty string.
#ifndef KILN_FUZZ_STREAM_CONTRACT_H_
#define KILN_FUZZ_STREAM_CONTRACT_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kiln/directory.h"
#include "kiln/stream.h"

namespace kiln_fuzz {

using Bytes = std::span<const std::uint8_t>;

// Completions longer than this are not built (a flipped bit can declare a
// block of 2^63 bytes); the decision point is still checked.
inline constexpr std::uint64_t kMaxCompletion = std::uint64_t{1} << 16;

struct StreamRun {
  kiln::StreamStatus status = kiln::StreamStatus::kNeedMore;
  std::optional<kiln::Error> error;
  std::uint64_t consumed = 0;
  bool before_finish = false;  // settled by Feed, not by Finish
  std::string bookkeeping;     // a break of used()/consumed(), if any
  std::optional<kiln::Directory> directory;
};

// Feeds `t` in the chunks `next(left, validator)` asks for. Stops at a
// rejection, and in prefix mode at completion; then Finish().
template <typename Next>
StreamRun RunStream(Bytes t, kiln::Mode mode, Next&& next, kiln::StreamValidator& v) {
  StreamRun run;
  std::size_t at = 0;
  std::uint64_t used = 0;
  while (at < t.size()) {
    const std::size_t n = std::max<std::size_t>(1, std::min(next(t.size() - at, v), t.size() - at));
    const kiln::StreamStatus s = v.Feed(t.subspan(at, n));
    at += n;
    used += v.used();
    if (v.used() > n) run.bookkeeping = "used() exceeds the chunk";
    if (s == kiln::StreamStatus::kRejected) break;
    if (s == kiln::StreamStatus::kComplete && mode == kiln::Mode::kPrefix) {
      if (v.Feed(t.subspan(at)) != kiln::StreamStatus::kComplete || v.used() != 0) {
        run.bookkeeping = "a completed prefix-mode validator took more bytes";
      }
      break;
    }
  }
  run.before_finish = v.status() != kiln::StreamStatus::kNeedMore;
  run.status = v.Finish();
  if (used != v.consumed()) run.bookkeeping = "the used() counts do not add up to consumed()";
  run.consumed = v.consumed();
  if (run.status == kiln::StreamStatus::kRejected) run.error = v.error();
  if (run.status == kiln::StreamStatus::kComplete) run.directory = v.directory();
  return run;
}

inline std::string Show(const std::optional<kiln::Error>& e) {
  return e ? e->ToString() : "no error";
}

// Where the contract says a rejection is decided: the header rules as soon
// as their bytes are in, the directory rules at payload_base, P2 at its
// byte, trailing bytes at the first one.
inline std::uint64_t DecisionPoint(const kiln::Error& e, const std::optional<kiln::HeaderInfo>& h) {
  using kiln::Rule;
  switch (e.rule) {
    case Rule::H1:
      return 4;
    case Rule::H2:
      return 5;
    case Rule::H4:
      return 6;
    case Rule::H5:
    case Rule::P2:
      return e.offset + 1;
    case Rule::H3:
    case Rule::H6:
    case Rule::H7:
    case Rule::H9:
      return 64;
    case Rule::H8:  // the first trailing byte (block_length < 2^64-1 then)
      return h && h->block_length < UINT64_MAX ? h->block_length + 1 : 0;
    default:
      return h ? h->payload_base : 0;
  }
}

inline std::string SameError(const kiln::Error& got, const kiln::Error& want) {
  if (got.ToString() == want.ToString() && got.error_class == want.error_class &&
      got.rule == want.rule && got.offset == want.offset && got.tensor == want.tensor) {
    return "";
  }
  return "got " + got.ToString() + ", Parse gives " + want.ToString();
}

inline std::string SameDirectory(const kiln::Directory& got, const kiln::Directory& want) {
  if (got.has_payloads()) return "a streamed directory claims payloads";
  if (got.tensor_count() != want.tensor_count() || got.block_length() != want.block_length()) {
    return "directory header differs";
  }
  for (std::uint32_t i = 0; i < got.tensor_count(); ++i) {
    const kiln::Tensor a = got.tensor(i), b = want.tensor(i);
    if (a.name != b.name || a.layout != b.layout || a.dtype != b.dtype || a.shape != b.shape ||
        a.byte_offset != b.byte_offset || a.byte_length != b.byte_length || !a.payload.empty()) {
      return "tensor " + std::to_string(i) + " differs";
    }
  }
  return "";
}

// The stream reached block_length: the verdict is Parse's on the block.
inline std::string FullBlockBreak(Bytes t, kiln::Mode mode, const kiln::HeaderInfo& h,
                                  const StreamRun& run) {
  kiln::ParseOptions prefix;
  prefix.mode = kiln::Mode::kPrefix;
  const kiln::Result<kiln::Directory> want = kiln::Parse(t, prefix);  // the verdict on t[0, L)
  if (!want.ok()) {
    if (!run.error) return "not rejected; Parse gives " + want.error().ToString();
    if (std::string e = SameError(*run.error, want.error()); !e.empty()) return e;
    if (!run.before_finish || run.consumed != DecisionPoint(want.error(), h)) {
      return "rejected after " + std::to_string(run.consumed) + " bytes, decided at " +
             std::to_string(DecisionPoint(want.error(), h));
    }
    return "";
  }
  if (mode == kiln::Mode::kWhole && t.size() > h.block_length) {
    if (!run.error || run.error->rule != kiln::Rule::H8 ||
        run.error->error_class != kiln::ErrorClass::kFrame || run.error->offset != h.block_length ||
        run.consumed != h.block_length + 1) {
      return "trailing bytes: want FRAME H8 at block_length, got " + Show(run.error);
    }
    return "";
  }
  if (run.status != kiln::StreamStatus::kComplete) return "not complete: " + Show(run.error);
  if (run.consumed != h.block_length) return "complete after the wrong number of bytes";
  return SameDirectory(*run.directory, want.value());
}

// `t` filled with `fill` up to `length`.
inline std::vector<std::uint8_t> Complete(Bytes t, std::uint64_t length, std::uint8_t fill) {
  std::vector<std::uint8_t> c(t.begin(), t.end());
  c.resize(static_cast<std::size_t>(length), fill);
  return c;
}

// A rejection before the stream ended: every completion to the declared
// length gets it (checked with two, where they are small enough).
inline std::string EarlyRejectionBreak(Bytes t, const std::optional<kiln::HeaderInfo>& h,
                                       const StreamRun& run) {
  if (run.consumed != DecisionPoint(*run.error, h) || run.consumed > t.size()) {
    return "rejected after " + std::to_string(run.consumed) + " bytes, decided at " +
           std::to_string(DecisionPoint(*run.error, h)) + ": " + Show(run.error);
  }
  for (const std::uint8_t fill : {std::uint8_t{0}, std::uint8_t{0xFF}}) {
    std::vector<std::uint8_t> c = Complete(t, std::max<std::uint64_t>(t.size(), 64), fill);
    const kiln::Result<kiln::HeaderInfo> ch = kiln::ReadHeader(c);
    if (ch.ok()) {
      if (ch.value().block_length - c.size() > kMaxCompletion) continue;
      c = Complete(c, ch.value().block_length, fill);
    }
    const kiln::Result<kiln::Directory> want = kiln::Parse(c);
    if (want.ok()) return "rejected, but a completion is valid: " + Show(run.error);
    if (std::string e = SameError(*run.error, want.error()); !e.empty()) return "completion: " + e;
  }
  return "";
}

// The stream ended before its block did (or before 64 bytes).
inline std::string ShortStreamBreak(Bytes t, kiln::Mode mode,
                                    const std::optional<kiln::HeaderInfo>& h,
                                    const StreamRun& run) {
  if (!run.error) return "a short stream is not rejected";
  if (run.before_finish) return EarlyRejectionBreak(t, h, run);
  // Truncation: Parse's verdict on the bytes seen.
  kiln::ParseOptions options;
  options.mode = mode;
  const kiln::Result<kiln::Directory> want = kiln::Parse(t, options);
  if (want.ok()) return "Parse accepts a stream the validator calls short";
  if (std::string e = SameError(*run.error, want.error()); !e.empty()) return e;
  if (run.consumed != t.size()) return "a truncated stream was not read to its end";
  // Nothing decided was missed: past the directory, the zero completion is
  // valid (every rule but P2 was decided, and P2 sees only zeros).
  if (h && t.size() >= h->payload_base && h->block_length - t.size() <= kMaxCompletion) {
    const kiln::Result<kiln::Directory> zero = kiln::Parse(Complete(t, h->block_length, 0));
    if (!zero.ok()) return "missed a decided rejection: " + zero.error().ToString();
  }
  return "";
}

// Empty when `run` (the stream `t` in `mode`) meets the contract.
inline std::string ContractBreak(Bytes t, kiln::Mode mode, const StreamRun& run) {
  if (!run.bookkeeping.empty()) return run.bookkeeping;
  const kiln::Result<kiln::HeaderInfo> hr =
      kiln::ReadHeader(t.first(std::min<std::size_t>(t.size(), 64)));
  std::optional<kiln::HeaderInfo> h;
  if (hr.ok()) h = hr.value();
  if (h && t.size() >= h->block_length) return FullBlockBreak(t, mode, *h, run);
  return ShortStreamBreak(t, mode, h, run);
}

}  // namespace kiln_fuzz

#endif  // KILN_FUZZ_STREAM_CONTRACT_H_
