// libFuzzer target: the GGUF reader of `kiln convert` on hostile bytes,
// including the metadata printer and the conversion to kiln requests.
#include "alloc_guard.h"
#include "format_readers.h"
#include "kiln/formats/gguf.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> in(data, size);
  const auto r = kiln_fuzz::WithinBudget(size, kiln_fuzz::kReaderBudget,
                                         [&] { return kiln::formats::ReadGguf(in); });
  if (!r.ok()) {
    kiln_fuzz::Require(!r.error().message.empty());
    return 0;
  }
  for (const auto& kv : r.value().metadata) {
    kiln_fuzz::Require(kiln::formats::FormatGgufValue(kv).size() < 4096);
  }
  for (const auto& t : r.value().tensors) {
    kiln_fuzz::RequireInside(t.data, in);
    const kiln::TensorRequest req = kiln::formats::KilnRequest(t);
    kiln_fuzz::Require(req.shape.size() <= 8);
  }
  return 0;
}
