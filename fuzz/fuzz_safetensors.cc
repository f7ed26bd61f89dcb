// libFuzzer target: the safetensors reader of `kiln convert` on hostile bytes.
#include "alloc_guard.h"
#include "format_readers.h"
#include "kiln/formats/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> in(data, size);
  const auto r = kiln_fuzz::WithinBudget(size, kiln_fuzz::kReaderBudget,
                                         [&] { return kiln::formats::ReadSafetensors(in); });
  if (!r.ok()) {
    kiln_fuzz::Require(!r.error().message.empty());
    return 0;
  }
  for (const auto& t : r.value().tensors) kiln_fuzz::RequireInside(t.data, in);
  return 0;
}
