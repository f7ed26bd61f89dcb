#include "safetensors_check.h"

#include <algorithm>
#include <array>
#include <map>
#include <string_view>
#include <vector>

#include "nlohmann/json.hpp"
#include "simdjson.h"

namespace kiln::bench {
namespace {

// Bytes per element, or 0 for an unknown dtype name.
std::uint64_t DtypeSize(std::string_view dtype) {
  static constexpr std::array<std::pair<std::string_view, std::uint64_t>, 14> kDtypes = {
      {{"F16", 2},
       {"BF16", 2},
       {"F32", 4},
       {"F64", 8},
       {"I8", 1},
       {"U8", 1},
       {"I16", 2},
       {"U16", 2},
       {"I32", 4},
       {"U32", 4},
       {"I64", 8},
       {"U64", 8},
       {"BOOL", 1},
       {"F8_E4M3", 1}}};
  for (const auto& [name, size] : kDtypes) {
    if (name == dtype) return size;
  }
  return 0;
}

struct Range {
  std::uint64_t begin;
  std::uint64_t end;
  std::uint64_t nbytes;
};

// Sort by offsets, then contiguity, size and total: the reference reader's
// checks after parsing.
long CheckRanges(std::vector<Range>& ranges, std::uint64_t data_length) {
  std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  std::uint64_t cursor = 0;
  for (const Range& r : ranges) {
    if (r.begin != cursor || r.end < r.begin || r.end - r.begin != r.nbytes) return -1;
    cursor = r.end;
  }
  return cursor == data_length ? static_cast<long>(ranges.size()) : -1;
}

// Element count times dtype size, or nullopt on overflow.
bool ByteSize(std::uint64_t size, const std::uint64_t* dims, std::size_t rank, std::uint64_t* out) {
  std::uint64_t n = size;
  for (std::size_t k = 0; k < rank; ++k) {
    if (__builtin_mul_overflow(n, dims[k], &n)) return false;
  }
  *out = n;
  return true;
}

}  // namespace

long CheckSafetensorsSimdjson(const simdjson::padded_string& header, std::uint64_t data_length) {
  thread_local simdjson::ondemand::parser parser;
  simdjson::ondemand::document doc;
  if (parser.iterate(header).get(doc) != simdjson::SUCCESS) return -1;
  simdjson::ondemand::object root;
  if (doc.get_object().get(root) != simdjson::SUCCESS) return -1;
  std::vector<Range> ranges;
  for (auto field : root) {
    std::string_view key;
    if (field.unescaped_key().get(key) != simdjson::SUCCESS) return -1;
    if (key == "__metadata__") continue;
    simdjson::ondemand::object info;
    if (field.value().get_object().get(info) != simdjson::SUCCESS) return -1;
    std::uint64_t size = 0;
    std::array<std::uint64_t, 16> dims{};
    std::size_t rank = 0;
    std::array<std::uint64_t, 2> offsets{};
    std::size_t n_offsets = 0;
    for (auto member : info) {
      std::string_view name;
      if (member.unescaped_key().get(name) != simdjson::SUCCESS) return -1;
      if (name == "dtype") {
        std::string_view dtype;
        if (member.value().get_string().get(dtype) != simdjson::SUCCESS) return -1;
        size = DtypeSize(dtype);
      } else if (name == "shape") {
        simdjson::ondemand::array shape;
        if (member.value().get_array().get(shape) != simdjson::SUCCESS) return -1;
        for (auto d : shape) {
          if (rank == dims.size() || d.get_uint64().get(dims[rank++]) != simdjson::SUCCESS) {
            return -1;
          }
        }
      } else if (name == "data_offsets") {
        simdjson::ondemand::array off;
        if (member.value().get_array().get(off) != simdjson::SUCCESS) return -1;
        for (auto o : off) {
          if (n_offsets == 2 || o.get_uint64().get(offsets[n_offsets++]) != simdjson::SUCCESS) {
            return -1;
          }
        }
      } else {
        return -1;
      }
    }
    Range r{offsets[0], offsets[1], 0};
    if (size == 0 || n_offsets != 2 || !ByteSize(size, dims.data(), rank, &r.nbytes)) return -1;
    ranges.push_back(r);
  }
  return CheckRanges(ranges, data_length);
}

long CheckSafetensorsNlohmann(const std::string& header, std::uint64_t data_length) {
  struct TensorInfo {
    std::string dtype;
    std::vector<std::uint64_t> shape;
    std::array<std::uint64_t, 2> data_offsets;
  };
  const nlohmann::json j = nlohmann::json::parse(header, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return -1;
  std::map<std::string, TensorInfo> tensors;
  for (const auto& [name, value] : j.items()) {
    if (name == "__metadata__") continue;
    if (!value.is_object() || !value.contains("dtype") || !value.contains("shape") ||
        !value.contains("data_offsets")) {
      return -1;
    }
    const auto& offsets = value["data_offsets"];
    if (!offsets.is_array() || offsets.size() != 2 || !value["dtype"].is_string() ||
        !value["shape"].is_array()) {
      return -1;
    }
    TensorInfo info{value["dtype"].get<std::string>(),
                    value["shape"].get<std::vector<std::uint64_t>>(),
                    {offsets[0].get<std::uint64_t>(), offsets[1].get<std::uint64_t>()}};
    tensors.emplace(name, std::move(info));
  }
  std::vector<Range> ranges;
  for (const auto& [name, info] : tensors) {
    Range r{info.data_offsets[0], info.data_offsets[1], 0};
    const std::uint64_t size = DtypeSize(info.dtype);
    if (size == 0 || !ByteSize(size, info.shape.data(), info.shape.size(), &r.nbytes)) return -1;
    ranges.push_back(r);
  }
  return CheckRanges(ranges, data_length);
}

}  // namespace kiln::bench
