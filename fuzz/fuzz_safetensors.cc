// libFuzzer target: the safetensors reader of `kiln convert` on hostile bytes.
#include "alloc_guard.h"
#include "format_readers.h"
#include "kiln/formats/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> in(data, size);
  const auto r = kiln_fuzz::WithinBudget(size * kiln_fuzz::kSafetensorsBytesPerInputByte,
                                         kiln_fuzz::kReaderBudget,
                                         [&] { return kiln::formats::ReadSafetensors(in); });
  if (!r.ok()) {
    kiln_fuzz::Require(!r.error().message.empty() && r.error().offset <= size);
    return 0;
  }
  for (const auto& t : r.value().tensors) kiln_fuzz::RequireInside(t.data, in);
  std::uint64_t walked = 0;
  kiln::formats::ForEachSafetensorsMetadata(r.value(), [&](std::string_view, std::string_view) {
    ++walked;
    return true;
  });
  kiln_fuzz::Require(walked == r.value().metadata_count);
  return 0;
}
