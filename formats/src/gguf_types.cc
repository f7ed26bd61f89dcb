// The ggml tensor types and their mapping to kiln.
#include <algorithm>
#include <array>

#include "kiln/formats/gguf.h"

namespace kiln::formats {
namespace {

// Block sizes and bytes per block as in ggml's type traits (ggml.c, read at
// ggml commit d99724f2, GGML_TYPE_COUNT 43). Ids 4 and 5 (Q4_2, Q4_3),
// 31..33 and 36..38 were removed from ggml (block size 0: gguf.cpp refuses
// them); ids from 43 do not exist. All of these are unknown here.
constexpr std::array<GgmlType, 35> kTypes = {{
    {0, "F32", 1, 4, Dtype::kF32},          {1, "F16", 1, 2, Dtype::kF16},
    {2, "Q4_0", 32, 18, std::nullopt},      {3, "Q4_1", 32, 20, std::nullopt},
    {6, "Q5_0", 32, 22, std::nullopt},      {7, "Q5_1", 32, 24, std::nullopt},
    {8, "Q8_0", 32, 34, std::nullopt},      {9, "Q8_1", 32, 36, std::nullopt},
    {10, "Q2_K", 256, 84, std::nullopt},    {11, "Q3_K", 256, 110, std::nullopt},
    {12, "Q4_K", 256, 144, std::nullopt},   {13, "Q5_K", 256, 176, std::nullopt},
    {14, "Q6_K", 256, 210, std::nullopt},   {15, "Q8_K", 256, 292, std::nullopt},
    {16, "IQ2_XXS", 256, 66, std::nullopt}, {17, "IQ2_XS", 256, 74, std::nullopt},
    {18, "IQ3_XXS", 256, 98, std::nullopt}, {19, "IQ1_S", 256, 50, std::nullopt},
    {20, "IQ4_NL", 32, 18, std::nullopt},   {21, "IQ3_S", 256, 110, std::nullopt},
    {22, "IQ2_S", 256, 82, std::nullopt},   {23, "IQ4_XS", 256, 136, std::nullopt},
    {24, "I8", 1, 1, Dtype::kI8},           {25, "I16", 1, 2, Dtype::kI16},
    {26, "I32", 1, 4, Dtype::kI32},         {27, "I64", 1, 8, Dtype::kI64},
    {28, "F64", 1, 8, Dtype::kF64},         {29, "IQ1_M", 256, 56, std::nullopt},
    {30, "BF16", 1, 2, Dtype::kBf16},       {34, "TQ1_0", 256, 54, std::nullopt},
    {35, "TQ2_0", 256, 66, std::nullopt},   {39, "MXFP4", 32, 17, std::nullopt},
    {40, "NVFP4", 64, 36, std::nullopt},    {41, "Q1_0", 128, 18, std::nullopt},
    {42, "Q2_0", 64, 18, std::nullopt},
}};

}  // namespace

const GgmlType* FindGgmlType(std::uint32_t id) {
  const auto* it =
      std::find_if(kTypes.begin(), kTypes.end(), [id](const GgmlType& t) { return t.id == id; });
  return it == kTypes.end() ? nullptr : it;
}

}  // namespace kiln::formats
