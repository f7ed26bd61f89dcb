#include "synthetic.h"

#include <array>

#include "support/block_builder.h"

namespace kiln::bench {
namespace {

struct Module {
  const char* path;
  std::uint16_t dtype;
  std::vector<std::uint64_t> shape;
};

// One transformer layer's tensors, with small shapes.
const std::array<Module, 9>& LayerModules() {
  static const std::array<Module, 9> kModules = {{
      {"self_attn.q_proj.weight", 16, {8, 4}},
      {"self_attn.k_proj.weight", 16, {8, 4}},
      {"self_attn.v_proj.weight", 16, {8, 4}},
      {"self_attn.o_proj.weight", 16, {8, 4}},
      {"mlp.gate_proj.weight", 10, {16, 2}},
      {"mlp.up_proj.weight", 10, {16, 2}},
      {"mlp.down_proj.weight", 10, {2, 16}},
      {"input_layernorm.weight", 1, {16}},
      {"post_attention_layernorm.weight", 1, {7}},  // 28 bytes: a 36-byte gap follows
  }};
  return kModules;
}

std::uint64_t DtypeBytes(std::uint16_t dtype) { return dtype == 1 ? 4 : 2; }

const char* SafetensorsDtype(std::uint16_t dtype) {
  return dtype == 1 ? "F32" : dtype == 10 ? "F16" : "BF16";
}

}  // namespace

std::vector<SynthTensor> MakeTensors(std::size_t n) {
  std::vector<SynthTensor> out;
  out.reserve(n);
  const auto& modules = LayerModules();
  for (std::size_t i = 0; i < n; ++i) {
    const Module& m = modules[i % modules.size()];
    SynthTensor t;
    t.name = "model.layers." + std::to_string(i / modules.size()) + "." + m.path;
    t.dtype = m.dtype;
    t.shape = m.shape;
    std::uint64_t count = 1;
    for (std::uint64_t d : t.shape) count *= d;
    t.bytes = count * DtypeBytes(t.dtype);
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<SynthTensor> WithShortNames(std::vector<SynthTensor> tensors) {
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    std::string name;
    std::size_t v = i;
    do {
      name.insert(name.begin(), "0123456789abcdefghijklmnopqrstuvwxyz"[v % 36]);
      v /= 36;
    } while (v != 0);
    tensors[i].name = "t" + name;
  }
  return tensors;
}

bool NamesFit(const std::vector<SynthTensor>& tensors) {
  std::uint64_t start = 0;
  for (const SynthTensor& t : tensors) {
    if (start >= 0xFFFF || t.name.size() > 0xFFFF) return false;
    start += t.name.size();
  }
  return true;
}

std::vector<std::uint8_t> KilnBlock(const std::vector<SynthTensor>& tensors, bool named) {
  testing::BlockSpec spec;
  spec.tensors.reserve(tensors.size());
  for (const SynthTensor& s : tensors) {
    testing::TensorSpec t;
    t.dtype = s.dtype;
    t.rank = static_cast<std::uint8_t>(s.shape.size());
    for (std::size_t k = 0; k < s.shape.size(); ++k) t.shape[k] = s.shape[k];
    if (named) t.name = s.name;
    spec.tensors.push_back(std::move(t));
  }
  return testing::Build(spec);
}

std::string SafetensorsHeader(const std::vector<SynthTensor>& tensors) {
  std::string json = "{";
  std::uint64_t offset = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const SynthTensor& t = tensors[i];
    if (i != 0) json += ",";
    json += "\"" + t.name + "\":{\"dtype\":\"" + SafetensorsDtype(t.dtype) + "\",\"shape\":[";
    for (std::size_t k = 0; k < t.shape.size(); ++k) {
      json += (k == 0 ? "" : ",") + std::to_string(t.shape[k]);
    }
    json += "],\"data_offsets\":[" + std::to_string(offset) + "," +
            std::to_string(offset + t.bytes) + "]}";
    offset += t.bytes;
  }
  return json + "}";
}

}  // namespace kiln::bench
