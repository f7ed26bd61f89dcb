// The block map: a Kiln v2 block described as byte regions, for a person to
// look at (`kiln inspect --map`, the browser page).
//
// It is a view of the verdict, built from what the validator holds: a valid
// block from its Directory, a rejected one from the bytes the verdict was
// decided on and the Error, drawing what the verdict says held (the header's
// layout if rules H1..H7 held, names and payload ranges if every descriptor
// rule held) and marking the verdict's own byte with the field that holds
// it. Field offsets, the decode and the payload walk are core's (the field
// table of kiln/internal/fields.h, WalkPayloads, the walk rule P2 makes). Every label is
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
#include "kiln/policy.h"
#include "kiln/random_access.h"
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

// Where a byte lies: the region and, in the header or a descriptor, the
// field of docs/spec.md (sections 2.2, 2.3) that holds it, from core's field
// table.
struct Place {
  RegionKind kind = RegionKind::kUnknown;
  // The descriptor holding the byte (kDescriptor), or the tensor whose
  // payload holds it (kPayload).
  std::optional<std::uint32_t> record;
  std::string_view field;  // "magic", "byte_length", "shape" ...; "" outside the two records
  std::optional<std::size_t> slot;  // the shape slot, for a byte of the shape
  // The bytes of that field (of the slot, for the shape), else of the
  // region holding the byte: [begin, end) from the start of the file.
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  std::optional<std::size_t> region;  // the payload or gap region holding it, if drawn
};

// The deciding byte of a rejection: the verdict's own offset, and where it
// lies.
struct Mark {
  std::uint64_t offset = 0;  // Error::offset
  std::optional<std::uint32_t> tensor;
  Place place;
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

// kiln/policy.h: each tensor its own regions up to this many tensors.
using kiln::kMaxItemRegions;

// A valid block: its directory (from Parse, a StreamValidator or a
// RangeValidator), read through it: its header, names and bytes.
[[nodiscard]] BlockMap Describe(const Directory& dir, std::uint64_t file_size);

// A rejected block: `bytes`, the start of the file the verdict was decided
// on (the whole file for Parse, the bytes a stream kept), `file_size` the
// whole file's length and `verdict` the rejection. What the verdict says
// held (core's HeldBefore) decides what is drawn: the header's layout once
// H1..H7 held, names and payload ranges once every descriptor rule held.
// The deciding byte is marked at verdict->offset. A null verdict says the
// caller found the block valid (the C ABI's kiln_block_map_new); every read
// is still bounded by `bytes`.
[[nodiscard]] BlockMap Describe(std::span<const std::uint8_t> bytes, std::uint64_t file_size,
                                const Error* verdict);

// The block a RangeValidator settled on: its directory when it was valid,
// else the bytes it kept and its own verdict, so the map marks the verdict's
// byte with nothing read again and no verdict handed over by a caller.
// Precondition: v.status() is kComplete or kRejected.
[[nodiscard]] BlockMap Describe(const RangeValidator& v);

// Where byte `offset` lies in the map (header field, descriptor field, name
// heap, padding, payload or gap, past block_length).
[[nodiscard]] Place Locate(const BlockMap& map, std::uint64_t offset);

// The name of the field that holds byte `offset`, as text: Locate's answer,
// e.g. "descriptor 2, byte_length (bytes 40..47)".
[[nodiscard]] std::string FieldAt(const BlockMap& map, std::uint64_t offset);

}  // namespace kiln::map

#endif  // KILN_BLOCK_MAP_H_
