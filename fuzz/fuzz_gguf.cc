// libFuzzer target: the GGUF reader of `kiln convert` on hostile bytes,
// including the metadata walk and printer.
#include "alloc_guard.h"
#include "format_readers.h"
#include "kiln/formats/gguf.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> in(data, size);
  const auto r = kiln_fuzz::WithinBudget(size, kiln_fuzz::kReaderBudget,
                                         [&] { return kiln::formats::ReadGguf(in); });
  if (!r.ok()) {
    kiln_fuzz::Require(!r.error().message.empty() && r.error().offset <= size);
    return 0;
  }
  std::uint64_t walked = 0;
  kiln::formats::ForEachGgufMetadata(r.value(), [&](const kiln::formats::GgufKeyValue& kv) {
    kiln_fuzz::RequireInside(kv.raw, in);
    kiln_fuzz::Require(kiln::formats::FormatGgufValue(kv).size() < 4096);
    ++walked;
    return true;
  });
  kiln_fuzz::Require(walked == r.value().metadata_count);
  for (const auto& t : r.value().tensors) {
    kiln_fuzz::RequireInside(t.data, in);
    kiln_fuzz::Require(t.shape.size() <= 4);  // GGML_MAX_DIMS
  }
  return 0;
}
