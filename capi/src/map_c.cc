// The block map through the C ABI (kiln/kiln_c_map.h).
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "boundary.h"
#include "handles.h"
#include "kiln/base/escape.h"
#include "kiln/block_map.h"
#include "kiln/block_map_svg.h"
#include "kiln/kiln_c_map.h"

struct kiln_block_map {
  kiln::map::BlockMap map;
  std::string json;
  std::string svg;  // the last kiln_block_map_svg
};

namespace {

using kiln::capi::BadArgument;
using kiln::capi::ClearError;
using kiln::capi::ErrorUsable;
using kiln::capi::Guard;
using kiln::capi::KnownSize;

constexpr std::uint64_t kMaxExactJson = std::uint64_t{1} << 53;

std::string Number(std::uint64_t v) {
  if (v <= kMaxExactJson) return std::to_string(v);
  // Appended in place: "\"" + std::string&& trips GCC 12's -Wrestrict at -O3.
  std::string out = "\"";
  out += std::to_string(v);
  out += '"';
  return out;
}

std::string Tensor(const std::optional<std::uint32_t>& t) {
  return t ? std::to_string(*t) : "null";
}

std::string Json(const kiln::map::BlockMap& m) {
  std::string out = "{\"file_size\": " + Number(m.file_size) + ", \"header\": ";
  if (m.header_known) {
    const kiln::HeaderInfo& h = m.header;
    out += "{\"flags\": " + std::to_string(h.flags) +
           ", \"tensor_count\": " + std::to_string(h.tensor_count) +
           ", \"name_bytes\": " + std::to_string(h.name_bytes) +
           ", \"payload_bytes\": " + Number(h.payload_bytes) +
           ", \"directory_bytes\": " + Number(h.directory_bytes) +
           ", \"payload_base\": " + Number(h.payload_base) +
           ", \"block_length\": " + Number(h.block_length) + "}";
  } else {
    out += "null";
  }
  out += ", \"regions\": [";
  bool first = true;
  for (const kiln::map::Region& r : m.regions) {
    out += first ? "" : ", ";
    first = false;
    out += "{\"kind\": \"" + std::string(kiln::map::RegionKindName(r.kind)) +
           "\", \"begin\": " + Number(r.begin) + ", \"end\": " + Number(r.end) +
           ", \"tensor\": " + Tensor(r.tensor) + ", \"label\": \"" +
           kiln::base::JsonEscape(r.label) + "\"}";
  }
  out += "], \"mark\": ";
  if (m.mark) {
    out += "{\"offset\": " + Number(m.mark->offset) + ", \"tensor\": " + Tensor(m.mark->tensor) +
           ", \"field\": \"" + kiln::base::JsonEscape(m.mark->field) + "\", \"verdict\": \"" +
           kiln::base::JsonEscape(m.mark->verdict) + "\"}";
  } else {
    out += "null";
  }
  return out + "}";
}

// The verdict as the C++ Error, or false when it is not one kiln gives.
bool ToError(const kiln_error& in, kiln::Error* out) {
  if (in.error_class == KILN_CLASS_ARGUMENT) return false;
  const std::optional<kiln::Rule> rule =
      kiln::RuleFromName(std::string_view(in.rule, strnlen(in.rule, sizeof in.rule)));
  if (!rule) return false;
  out->rule = *rule;
  out->error_class = kiln::RuleClass(*rule);
  out->offset = in.offset;
  if (in.tensor != KILN_NO_TENSOR) out->tensor = in.tensor;
  const std::size_t n =
      in.message_length < KILN_MESSAGE_CAPACITY ? in.message_length : KILN_MESSAGE_CAPACITY - 1;
  out->message.assign(in.message, strnlen(in.message, n));
  return true;
}

// A new map handle holding `map` (and its JSON) in *out; the error cleared.
kiln_status Hand(kiln::map::BlockMap map, kiln_block_map** out, kiln_error* error) {
  auto m = std::make_unique<kiln_block_map>();
  m->map = std::move(map);
  m->json = Json(m->map);
  *out = m.release();
  ClearError(error);
  return KILN_OK;
}

}  // namespace

extern "C" {

KILN_C_API kiln_status kiln_block_map_new(const uint8_t* prefix, size_t prefix_size,
                                          uint64_t file_size, const kiln_error* verdict,
                                          kiln_block_map** out, kiln_error* error) {
  if (out != nullptr) *out = nullptr;
  if (!ErrorUsable(error)) return KILN_BAD_ARGUMENT;
  if (out == nullptr) return BadArgument(error, "out is NULL");
  if (prefix == nullptr && prefix_size > 0) {
    return BadArgument(error, "prefix is NULL and prefix_size is not 0");
  }
  if (prefix_size > file_size) return BadArgument(error, "prefix_size exceeds file_size");
  if (verdict != nullptr && !KnownSize<kiln_error>(verdict->struct_size)) {
    return BadArgument(error, "verdict->struct_size is not sizeof(kiln_error)");
  }
  return Guard(error, [&] {
    kiln::Error e;
    const bool rejected = verdict != nullptr && verdict->error_class != KILN_CLASS_NONE;
    if (rejected && !ToError(*verdict, &e)) {
      return BadArgument(error,
                         "verdict is not a verdict of kiln (class ARGUMENT or INTERNAL, "
                         "or an unknown rule)");
    }
    return Hand(kiln::map::Describe(std::span<const std::uint8_t>(prefix, prefix_size), file_size,
                                    rejected ? &e : nullptr),
                out, error);
  });
}

KILN_C_API kiln_status kiln_ranges_block_map(const kiln_ranges* ranges, kiln_block_map** out,
                                             kiln_error* error) {
  if (out != nullptr) *out = nullptr;
  if (!ErrorUsable(error)) return KILN_BAD_ARGUMENT;
  if (ranges == nullptr) return BadArgument(error, "ranges is NULL");
  if (out == nullptr) return BadArgument(error, "out is NULL");
  const kiln::RangeStatus status = ranges->validator.status();
  if (status != kiln::RangeStatus::kComplete && status != kiln::RangeStatus::kRejected) {
    return BadArgument(error,
                       "ranges has no verdict (a range is still wanted, or the reader failed)");
  }
  return Guard(error, [&] { return Hand(kiln::map::Describe(ranges->validator), out, error); });
}

KILN_C_API void kiln_block_map_free(kiln_block_map* map) { delete map; }

KILN_C_API kiln_status kiln_block_map_region_count(const kiln_block_map* map, uint32_t* count) {
  if (count == nullptr) return KILN_BAD_ARGUMENT;
  *count = 0;
  if (map == nullptr) return KILN_BAD_ARGUMENT;
  *count = static_cast<uint32_t>(map->map.regions.size());
  return KILN_OK;
}

KILN_C_API kiln_status kiln_block_map_region(const kiln_block_map* map, uint32_t index,
                                             kiln_region* out) {
  if (map == nullptr || out == nullptr || !KnownSize<kiln_region>(out->struct_size) ||
      index >= map->map.regions.size()) {
    return KILN_BAD_ARGUMENT;
  }
  const kiln::map::Region& r = map->map.regions[index];
  out->kind = static_cast<int32_t>(r.kind);
  out->tensor = r.tensor.value_or(KILN_NO_TENSOR);
  out->reserved = 0;
  out->begin = r.begin;
  out->end = r.end;
  out->label = r.label.c_str();
  out->label_length = r.label.size();
  return KILN_OK;
}

KILN_C_API kiln_status kiln_block_map_mark(const kiln_block_map* map, kiln_map_mark* out) {
  if (map == nullptr || out == nullptr || !KnownSize<kiln_map_mark>(out->struct_size)) {
    return KILN_BAD_ARGUMENT;
  }
  const std::uint32_t struct_size = out->struct_size;
  *out = kiln_map_mark{};
  out->struct_size = struct_size;
  out->tensor = KILN_NO_TENSOR;
  out->field = "";
  if (!map->map.mark) return KILN_OK;
  const kiln::map::Mark& m = *map->map.mark;
  out->present = 1;
  out->tensor = m.tensor.value_or(KILN_NO_TENSOR);
  out->offset = m.offset;
  out->field = m.field.c_str();
  out->field_length = m.field.size();
  return KILN_OK;
}

KILN_C_API kiln_status kiln_block_map_json(const kiln_block_map* map, const char** json,
                                           size_t* length) {
  if (length != nullptr) *length = 0;
  if (json == nullptr) return KILN_BAD_ARGUMENT;
  *json = nullptr;
  if (map == nullptr) return KILN_BAD_ARGUMENT;
  *json = map->json.c_str();
  if (length != nullptr) *length = map->json.size();
  return KILN_OK;
}

KILN_C_API kiln_status kiln_block_map_svg(kiln_block_map* map, const char* title,
                                          size_t title_length, const char** svg, size_t* length) {
  if (length != nullptr) *length = 0;
  if (svg == nullptr) return KILN_BAD_ARGUMENT;
  *svg = nullptr;
  if (map == nullptr || (title == nullptr && title_length > 0)) return KILN_BAD_ARGUMENT;
  return Guard(nullptr, [&] {
    const std::string_view name =
        title_length == 0 ? std::string_view() : std::string_view(title, title_length);
    map->svg = kiln::map::Svg(map->map, kiln::base::Escape(name));
    *svg = map->svg.c_str();
    if (length != nullptr) *length = map->svg.size();
    return KILN_OK;
  });
}

KILN_C_API const char* kiln_region_kind_name(int32_t kind) {
  if (kind < 0 || kind > static_cast<int32_t>(kiln::map::RegionKind::kUnknown)) return "";
  return kiln::map::RegionKindName(static_cast<kiln::map::RegionKind>(kind)).data();
}

}  // extern "C"
