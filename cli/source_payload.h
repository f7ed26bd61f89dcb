// The payloads kiln pack and kiln convert hand the writer: a tensor's bytes
// in a mapped input, byte-swapped to little-endian when the input is
// big-endian, with the conversion's progress advanced as the writer reads
// them. Only the commands that write a block link this (and the writer).
#ifndef KILN_CLI_SOURCE_PAYLOAD_H_
#define KILN_CLI_SOURCE_PAYLOAD_H_

#include <cstdint>
#include <span>

#include "kiln/writer.h"
#include "progress.h"

namespace kiln::cli {

// A tensor's payload, taken from `bytes`. A plain view when nothing needs
// doing; otherwise a stream that reverses each `swap_width`-byte unit (0: no
// swapping; formats::CopySwapped) and advances `progress` (may be null) as
// the writer reads it.
[[nodiscard]] Payload SourcePayload(std::span<const std::uint8_t> bytes, unsigned swap_width,
                                    Progress* progress);

}  // namespace kiln::cli

#endif  // KILN_CLI_SOURCE_PAYLOAD_H_
