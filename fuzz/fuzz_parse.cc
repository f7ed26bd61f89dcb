// libFuzzer target: raw bytes into the parser, in whole-buffer and prefix
// mode, touching every accessor of a valid result. Also checks invariants a
// hostile input must never break: the verdict is deterministic, an error's
// offset lies within the buffer, the class is the rule's class, and a valid
// directory's views lie inside the buffer.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "kiln/kiln.h"

namespace {

void Require(bool ok) {
  if (!ok) std::abort();
}

void Touch(const kiln::Directory& d, std::span<const std::uint8_t> in) {
  const std::uint8_t* lo = in.data();
  const std::uint8_t* hi = in.data() + in.size();
  volatile std::uint64_t sink = 0;
  for (std::uint32_t i = 0; i < d.tensor_count(); ++i) {
    const kiln::Tensor t = d.tensor(i);
    Require(t.payload.size() == t.byte_length);
    if (!t.payload.empty()) {
      Require(t.payload.data() >= lo && t.payload.data() + t.payload.size() <= hi);
      sink = sink + t.payload.front() + t.payload.back();
    }
    for (char c : t.name) sink = sink + static_cast<unsigned char>(c);
    for (char c : t.layout) sink = sink + static_cast<unsigned char>(c);
    Require(kiln::IsWellFormedUtf8(t.name) && kiln::IsWellFormedUtf8(t.layout));
    sink = sink + t.element_count + t.rank + t.block_size;
  }
}

void Check(std::span<const std::uint8_t> in, kiln::Mode mode) {
  kiln::ParseOptions options;
  options.mode = mode;
  const kiln::Result<kiln::Directory> r = kiln::Parse(in, options);
  const kiln::Result<kiln::Directory> again = kiln::Parse(in, options);
  Require(r.ok() == again.ok());
  if (r.ok()) {
    Require(r.value().block_length() <= in.size());
    Require(mode == kiln::Mode::kPrefix || r.value().block_length() == in.size());
    Touch(r.value(), in);
    return;
  }
  const kiln::Error& e = r.error();
  Require(e.rule == again.error().rule && e.offset == again.error().offset);
  Require(e.error_class == kiln::RuleClass(e.rule));
  Require(e.offset <= in.size());
  Require(!e.message.empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> in(data, size);
  Check(in, kiln::Mode::kWhole);
  Check(in, kiln::Mode::kPrefix);
  return 0;
}
