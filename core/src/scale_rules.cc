// Rules Q5, Q6, Q7: a quantised tensor and the scale tensors it names.
#include "kiln/internal/primitives.h"
#include "kiln/internal/rules.h"

namespace kiln::internal {
namespace {

constexpr std::uint16_t kSchemePerAxis = 1;

// A tensor that may serve as a scale: scheme 0 and a scale dtype. Parse
// checks a quantised tensor in its descriptor pass, where a scale tensor
// further on has not yet been checked: an unknown dtype is simply not a
// scale dtype (and D1 is reported for it first, as it comes earlier).
bool IsScaleTensor(const RawDescriptor& s) {
  const DtypeInfo* dt = FindDtype(s.dtype);
  return s.quant_scheme == 0 && dt != nullptr && dt->is_scale;
}

// Q5: scale_index names another tensor, with scheme 0 and a scale dtype.
// On success *s is that tensor's descriptor (read once, for Q5 and Q6).
Check CheckScaleRef(const RawDescriptor& d, std::uint32_t i, std::uint32_t count,
                    DescriptorLookup descriptor, RawDescriptor* scale) {
  const std::uint64_t at = DescriptorFieldOffset(i, desc::kScaleIndex);
  if (d.scale_index >= count || d.scale_index == i) {
    return FailTensor(Rule::Q5, at, i, "scale_index %d is %s (tensor_count %d)", d.scale_index,
                      d.scale_index == i ? "the tensor itself" : "out of range", count);
  }
  *scale = descriptor(d.scale_index);
  const RawDescriptor& s = *scale;
  if (!IsScaleTensor(s)) {
    return FailTensor(Rule::Q5, at, i,
                      "scale tensor %d has dtype %s and quant_scheme %d (needs scheme 0 and one "
                      "of f16, bf16, f32, f64, f8_e4m3fn, f8_e8m0)",
                      d.scale_index, GetDtypeInfo(static_cast<Dtype>(s.dtype)).name,
                      s.quant_scheme);
  }
  return std::nullopt;
}

// Q6: the scale's shape. Scheme 1: [shape[axis]]. Scheme 2: the tensor's
// shape with dimension axis replaced by ceil(shape[axis] / group_size).
// Precondition: Q5 held for s, the scale tensor.
Check CheckScaleShape(const RawDescriptor& d, std::uint32_t i, const RawDescriptor& s) {
  RawDescriptor want{};
  if (d.quant_scheme == kSchemePerAxis) {
    want.rank = 1;
    want.shape[0] = d.shape[d.quant_axis];
  } else {
    want.rank = d.rank;
    want.shape = d.shape;
    want.shape[d.quant_axis] = CeilDiv(d.shape[d.quant_axis], d.group_size);  // Q4: >= 1
  }
  if (s.rank != want.rank || s.shape != want.shape) {
    return FailTensor(Rule::Q6, DescriptorFieldOffset(i, desc::kScaleIndex), i,
                      "scale tensor %d has shape %s, expected %s for quant_scheme %d, axis %d, "
                      "group_size %d",
                      d.scale_index, FormatShape(s), FormatShape(want), d.quant_scheme,
                      d.quant_axis, d.group_size);
  }
  return std::nullopt;
}

// Q7: outer_index is absent, or names another rank-0 scale tensor.
Check CheckOuterRef(const RawDescriptor& d, std::uint32_t i, std::uint32_t count,
                    DescriptorLookup descriptor) {
  if (d.outer_index == kNoTensor) return std::nullopt;
  const std::uint64_t at = DescriptorFieldOffset(i, desc::kOuterIndex);
  if (d.outer_index >= count || d.outer_index == i) {
    return FailTensor(Rule::Q7, at, i, "outer_index %d is %s (tensor_count %d)", d.outer_index,
                      d.outer_index == i ? "the tensor itself" : "out of range", count);
  }
  const RawDescriptor o = descriptor(d.outer_index);
  if (o.rank != 0 || !IsScaleTensor(o)) {
    return FailTensor(Rule::Q7, at, i,
                      "outer tensor %d has rank %d, dtype %s, quant_scheme %d (needs a rank-0 "
                      "scale tensor with scheme 0)",
                      d.outer_index, o.rank, GetDtypeInfo(static_cast<Dtype>(o.dtype)).name,
                      o.quant_scheme);
  }
  return std::nullopt;
}

}  // namespace

Check CheckQuantRefs(const RawDescriptor& d, std::uint32_t i, std::uint32_t count,
                     DescriptorLookup descriptor) {
  // Q2 made every scheme-0 tensor's references absent.
  if (d.quant_scheme == 0) return std::nullopt;
  RawDescriptor scale;
  if (Check e = CheckScaleRef(d, i, count, descriptor, &scale)) return e;  // Q5
  if (Check e = CheckScaleShape(d, i, scale)) return e;                    // Q6
  return CheckOuterRef(d, i, count, descriptor);                           // Q7
}

}  // namespace kiln::internal
