// The block map: a Kiln v2 block described as byte regions, for a person to
// look at (`kiln inspect --map`, the browser page).
//
// It describes a valid block from its directory region, and a rejected one
// from what is known: the header's layout if rules H1..H7 held, the payload
// ranges if every directory rule held (a P1 or P2 rejection), and the
// deciding byte with the field or tensor it belongs to. Every label is
// escaped by base::Escape / base::Quoted, as `kiln validate` escapes names.
//
// Memory is bounded by the bytes given: at most kMaxItemRegions descriptors
// and payloads get a region each; the rest are described by one region.
#ifndef KILN_BLOCK_MAP_H_
#define KILN_BLOCK_MAP_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/directory.h"
#include "kiln/status.h"

namespace kiln::map {

enum class RegionKind : std::uint8_t {
  kHeader,      // [0, 64)
  kDescriptor,  // 128 bytes per tensor (or several, summarised)
  kNameHeap,    // name_bytes
  kPadding,     // directory padding, up to payload_base
  kPayload,     // one tensor's bytes (or several, summarised)
  kGap,         // payload bytes no tensor covers (must be zero)
  kTrailing,    // bytes after block_length (H8 in whole mode)
  kMissing,     // declared by the header but not in the file (truncation)
  kUnknown,     // bytes whose role is unknown (the header broke a rule)
};

// "header", "descriptor", "name-heap", "padding", "payload", "gap",
// "trailing", "missing", "unknown".
[[nodiscard]] std::string_view RegionKindName(RegionKind kind);

struct Region {
  RegionKind kind = RegionKind::kUnknown;
  std::uint64_t begin = 0;  // from the start of the file
  std::uint64_t end = 0;    // exclusive
  std::optional<std::uint32_t> tensor;
  std::string label;  // escaped: safe on a terminal, still needs XML/HTML escaping
};

// The deciding byte of a rejection.
struct Mark {
  std::uint64_t offset = 0;
  std::optional<std::uint32_t> tensor;
  std::string field;    // e.g. "descriptor 2, byte_length (bytes 40..47)"
  std::string verdict;  // Error::ToString()
};

struct BlockMap {
  std::uint64_t file_size = 0;
  bool header_known = false;
  HeaderInfo header;  // valid when header_known
  std::vector<Region>
      regions;               // in byte order, contiguous, cover [0, max(file_size, block_length))
  std::optional<Mark> mark;  // set for a rejection
};

inline constexpr std::uint32_t kMaxItemRegions = 1024;

// `prefix` is the start of the file (the whole file, or at least its first
// payload_base bytes for a map with names and payload ranges; fewer bytes
// give less detail, never a wrong region). `file_size` is the whole file's
// length. `verdict` is the rejection, or nullptr for a valid block.
[[nodiscard]] BlockMap Describe(std::span<const std::uint8_t> prefix, std::uint64_t file_size,
                                const Error* verdict);

// A valid block: its directory (from Parse or a StreamValidator).
[[nodiscard]] BlockMap Describe(const Directory& dir, std::uint64_t file_size);

// The name of the field that holds byte `offset` (header fields, descriptor
// fields from docs/spec.md section 2.3, name heap, padding, payload).
[[nodiscard]] std::string FieldAt(const BlockMap& map, std::uint64_t offset);

}  // namespace kiln::map

#endif  // KILN_BLOCK_MAP_H_
