#include "source_payload.h"

#include "kiln/formats/npy.h"

namespace kiln::cli {

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
