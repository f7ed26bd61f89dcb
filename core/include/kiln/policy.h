// Kiln's own bounds, beside the format's maxima (kiln::Limits{}, block.h):
// what a caller that takes Kiln blocks from strangers sets, and why. They
// live in core, so the parser, the streaming validator and every binding
// (the C ABI, Python, the npm package) can reach them without the
// foreign-format readers; today the command applies them (ingest, unpack,
// --idle-timeout), while the bindings default to kiln::Limits{}, the
// format's maxima, and take lower limits from their caller. The bounds of
// the foreign formats (safetensors, GGUF, NumPy) and the readers' profiles
// are in kiln/formats/policy.h, which builds on this header. No other file
// defines a default bound (docs/limits.md).
#ifndef KILN_POLICY_H_
#define KILN_POLICY_H_

#include <cstdint>

#include "kiln/block.h"

namespace kiln {

// ---- The Kiln format's maxima for named tensors -----------------------------
//
// kiln::Limits{} (block.h) is the parser's default: the header's own field
// widths (tensor_count and name_bytes are u32, the block length u64), so a
// default parse is bounded by the input's size alone: the directory is read
// in place and scratch is at most 16 bytes per 128-byte descriptor.

// The most tensors a Kiln block can hold when they are named (every
// safetensors and GGUF tensor is): a name is at least one byte and must
// start at a u16 heap offset below 0xFFFF (docs/spec.md, "Heap size").
inline constexpr std::uint64_t kMaxNamedKilnTensors = 0xFFFF;
// The most name bytes such a heap can address: the last name starts at
// offset 0xFFFE at the latest and is at most 0xFFFF bytes long.
inline constexpr std::uint64_t kMaxKilnNameBytes = 0xFFFE + 0xFFFF;

// ---- An upload service's policy (kiln ingest) ------------------------------
//
// Not the format's maxima (which allow a 2^64-byte block and four billion
// tensors): what a service taking blocks from strangers would set. The
// directory kept in memory is then at most 100,000 * 128 + 1 MiB bytes
// (about 13.8 MB). kiln ingest --no-limits lifts all three.

inline constexpr std::uint64_t kUploadMaxBlockBytes = std::uint64_t{10} << 30;  // 10 GiB
inline constexpr std::uint64_t kUploadMaxTensors = 100'000;
// Heap offsets are u16, so no valid heap is much larger than 128 KiB.
inline constexpr std::uint64_t kUploadMaxNameBytes = std::uint64_t{1} << 20;
// kiln ingest's limits.
inline constexpr Limits kUploadLimits{kUploadMaxTensors, kUploadMaxNameBytes, kUploadMaxBlockBytes};

// --idle-timeout of kiln validate and kiln ingest: a writer that sends
// nothing for this long is given up on (exit 2). Long enough for a slow
// client, short enough that a stalled one cannot hold a worker forever.
inline constexpr std::uint64_t kDefaultIdleTimeoutSeconds = 60;
// The largest --idle-timeout: a day (the value becomes milliseconds for
// poll(), an int).
inline constexpr std::uint64_t kMaxIdleTimeoutSeconds = 86'400;

// ---- Random access (kiln/random_access.h: RangeOptions' defaults) ---------
//
// 64 KiB: below it, one request costs more than the covered bytes it reads
// over (an HTTP range request's round trip, a seek and a syscall); a block of
// small tensors with alignment gaps is read in a few large requests instead
// of one per tensor, while tensors of 64 KiB and more are never read over.
inline constexpr std::uint64_t kDefaultMergeGap = std::uint64_t{64} << 10;
// 1 MiB: the largest single request, so a hostile 1 GiB gap is read (P2
// needs it) in bounded pieces with a bounded buffer.
inline constexpr std::uint64_t kDefaultMaxRange = std::uint64_t{1} << 20;

// ---- The block map (kiln/block_map.h) ----------------------------------------

// A map draws each tensor's descriptor, name and payload as regions of
// their own up to this many tensors, and the descriptors, names and payloads
// of a larger block as one region each: the map of a hostile block of 2^32-1
// tensors costs a few hundred KiB, not one region per descriptor.
inline constexpr std::uint32_t kMaxItemRegions = 1024;

// ---- kiln validate URL, kiln inspect URL (HTTP range requests) ------------
//
// A remote block is read with range requests for only the bytes the rules
// read (kiln/random_access.h); a server that misbehaves, is too slow or
// needs more than these bounds is an I/O error (exit 2), never a verdict.

// Redirects followed per request (only to http:// and https://).
inline constexpr std::uint64_t kHttpMaxRedirects = 5;
// Seconds to connect (DNS, TCP, TLS), or --idle-timeout when it is shorter.
inline constexpr std::uint64_t kHttpConnectTimeoutSeconds = 30;
// --idle-timeout S over HTTP: a reply that delivers fewer than this many
// bytes per second, on average over S seconds, is given up on. A stalled
// server and one that drips a byte a second are both stopped after S
// seconds; a request is at most RangeOptions::max_range (1 MiB), so one
// request lasts at most about 1024 s however slow the server stays above it.
inline constexpr std::uint64_t kHttpMinBytesPerSecond = 1024;
// The most HTTP requests one URL may cost: RangeValidator's reads (the
// first, bytes 0-63, also gives the size and the validators), at most
//   1 + ceil((payload_base - 64) / 1 MiB) + F + ceil(R / (1 MiB - 64 KiB))
// (random_access.h: F runs of gaps, at most tensor_count + 1; R the bytes
// the gap reads span; inspect --map reads nothing more: the map is drawn
// from the bytes the validator kept). Every block with at
// most kMaxNamedKilnTensors tensors and a directory region and gaps of under
// 32 GiB each needs fewer (under 170,000); a block that needs more is an
// I/O error.
inline constexpr std::uint64_t kHttpMaxRequests = std::uint64_t{1} << 18;
// The most bytes read of a reply that is not the file (an empty file's 416
// page, an error page): enough for any server's message, and a server that
// sends an endless page is stopped there.
inline constexpr std::uint64_t kHttpMaxDiscardedBytes = std::uint64_t{64} << 10;

// ---- kiln unpack -----------------------------------------------------------

// The default bound on the tensors of one block, hence on the files one
// unpack creates (one per tensor, plus index.tsv). The format allows 2^32-1,
// and a 128 MB upload holds a million 128-byte descriptors; 100,000 files is
// well past any model's tensor count (the largest have a few thousand) and
// still a directory that ls, rm and file managers handle.
inline constexpr std::uint64_t kUnpackMaxTensors = 100'000;
// kiln unpack's limits: the format's maxima but for the tensor count, which
// is the number of files it creates.
inline constexpr Limits kUnpackLimits = [] {
  Limits l;
  l.max_tensors = kUnpackMaxTensors;
  return l;
}();

}  // namespace kiln

#endif  // KILN_POLICY_H_
