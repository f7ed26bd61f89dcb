// libFuzzer target: the NumPy .npy reader of `kiln pack` on hostile bytes.
#include "alloc_guard.h"
#include "format_readers.h"
#include "kiln/formats/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> in(data, size);
  const kiln::formats::FormatResult<kiln::formats::NpyArray> r = kiln_fuzz::WithinBudget(
      size, kiln_fuzz::kReaderBudget, [&] { return kiln::formats::ReadNpy(in); });
  if (!r.ok()) {
    kiln_fuzz::Require(!r.error().message.empty());
    return 0;
  }
  kiln_fuzz::RequireInside(r.value().data, in);
  kiln_fuzz::Require(r.value().shape.size() <= 8);
  // What kiln reads, numpy.load can hold (and kiln unpack writes back as .npy).
  kiln_fuzz::Require(kiln::formats::NpyCanHold(r.value().dtype, r.value().shape));
  return 0;
}
