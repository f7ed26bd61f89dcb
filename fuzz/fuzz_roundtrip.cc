// libFuzzer target: the writer against the parser.
// 1. A block that parses is written again (BlockWriter::From): the result
//    must parse to the same tensors, and writing it again must give the same
//    bytes (the canonical form is a fixed point).
// 2. A model built from the input with FuzzedDataProvider is written: each
//    refused request carries its rule's class, and a written block parses
//    back with the same payloads.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <vector>

#include "kiln/kiln.h"
#include "kiln/writer.h"

namespace {

void Require(bool ok) {
  if (!ok) std::abort();
}

bool SameTensors(const kiln::Directory& a, const kiln::Directory& b) {
  if (a.tensor_count() != b.tensor_count()) return false;
  for (std::uint32_t i = 0; i < a.tensor_count(); ++i) {
    const kiln::Tensor x = a.tensor(i), y = b.tensor(i);
    if (x.name != y.name || x.dtype != y.dtype || x.rank != y.rank || x.shape != y.shape ||
        x.layout != y.layout || x.block_size != y.block_size || x.quant.scheme != y.quant.scheme ||
        x.quant.axis != y.quant.axis || x.quant.group_size != y.quant.group_size ||
        x.quant.scale_index != y.quant.scale_index || x.quant.outer_index != y.quant.outer_index ||
        !std::equal(x.payload.begin(), x.payload.end(), y.payload.begin(), y.payload.end())) {
      return false;
    }
  }
  return true;
}

// The block `w` seals and writes to memory; nullopt when either fails.
std::optional<std::vector<std::uint8_t>> Write(const kiln::BlockWriter& w) {
  const kiln::Result<kiln::BlockPlan> plan = w.Plan();
  if (!plan.ok()) return std::nullopt;
  kiln::Result<std::vector<std::uint8_t>, kiln::WriteError> out = plan.value().WriteToMemory();
  if (!out.ok()) return std::nullopt;
  return std::move(out).value();
}

void RewriteParsed(std::span<const std::uint8_t> in) {
  const kiln::Result<kiln::Directory> d = kiln::Parse(in);
  if (!d.ok()) return;
  const kiln::Result<kiln::BlockWriter> w = kiln::BlockWriter::From(d.value());
  // A valid block can only be refused for the writer's own limit (a heap
  // slice at offset 0xFFFF is valid to read but the writer keeps names in
  // tensor order, so it never needs one: it must accept every valid block).
  Require(w.ok());
  const auto out = Write(w.value());
  Require(out.has_value());
  const kiln::Result<kiln::Directory> again = kiln::Parse(*out);
  Require(again.ok() && SameTensors(d.value(), again.value()));
  const kiln::Result<kiln::BlockWriter> w2 = kiln::BlockWriter::From(again.value());
  Require(w2.ok());
  const auto out2 = Write(w2.value());
  Require(out2.has_value() && *out2 == *out);
}

void BuildModel(FuzzedDataProvider& fdp) {
  static constexpr std::uint16_t kCodes[] = {1,  2,  3,  4,  5,  6,  7,  8,      9,
                                             10, 11, 12, 13, 14, 15, 16, 17,     18,
                                             19, 20, 21, 22, 23, 24, 25, 0x8000, 0x8001};
  kiln::BlockWriter w;
  std::vector<std::vector<std::uint8_t>> payloads;
  const std::size_t n = fdp.ConsumeIntegralInRange<std::size_t>(0, 12);
  payloads.reserve(n);
  for (std::size_t t = 0; t < n; ++t) {
    kiln::TensorRequest r;
    r.name = fdp.ConsumeRandomLengthString(24);
    r.dtype = static_cast<kiln::Dtype>(fdp.PickValueInArray(kCodes));
    const std::size_t rank = fdp.ConsumeIntegralInRange<std::size_t>(0, 9);
    for (std::size_t k = 0; k < rank; ++k) {
      r.shape.push_back(fdp.ConsumeBool() ? fdp.ConsumeIntegralInRange<std::uint64_t>(0, 6)
                                          : fdp.ConsumeIntegral<std::uint64_t>());
    }
    if (fdp.ConsumeBool()) {
      r.layout = fdp.ConsumeRandomLengthString(12);
      r.block_size = fdp.ConsumeIntegralInRange<std::uint32_t>(0, 64);
    }
    if (fdp.ConsumeIntegralInRange<int>(0, 3) == 0) {
      r.scheme = static_cast<kiln::QuantScheme>(fdp.ConsumeIntegralInRange<std::uint16_t>(0, 3));
      r.axis = fdp.ConsumeIntegralInRange<std::uint16_t>(0, 9);
      r.group_size = fdp.ConsumeIntegralInRange<std::uint32_t>(0, 4);
      r.scale_index = fdp.ConsumeIntegralInRange<std::uint32_t>(0, 12);
      if (fdp.ConsumeBool()) r.outer_index = fdp.ConsumeIntegralInRange<std::uint32_t>(0, 12);
    }
    payloads.push_back(
        fdp.ConsumeBytes<std::uint8_t>(fdp.ConsumeIntegralInRange<std::size_t>(0, 256)));
    const kiln::Result<std::uint32_t> added = w.Add(r, kiln::Payload::Bytes(payloads.back()));
    if (!added.ok()) {
      Require(added.error().error_class == kiln::RuleClass(added.error().rule));
      payloads.pop_back();
    }
  }
  const kiln::Result<kiln::BlockPlan> plan = w.Plan();
  if (!plan.ok()) {  // a rule the writer refused
    Require(plan.error().error_class == kiln::RuleClass(plan.error().rule));
    return;
  }
  // In memory there is no I/O to fail.
  const auto out = plan.value().WriteToMemory();
  Require(out.ok());
  const kiln::Result<kiln::Directory> d = kiln::Parse(out.value());
  Require(d.ok() && d.value().tensor_count() == payloads.size());
  for (std::uint32_t i = 0; i < d.value().tensor_count(); ++i) {
    const auto p = d.value().tensor(i).payload;
    Require(std::equal(p.begin(), p.end(), payloads[i].begin(), payloads[i].end()));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  RewriteParsed({data, size});
  FuzzedDataProvider fdp(data, size);
  BuildModel(fdp);
  return 0;
}
