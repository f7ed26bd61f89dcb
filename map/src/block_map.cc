#include "kiln/block_map.h"

#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include "kiln/base/bytes.h"
#include "kiln/base/checked.h"
#include "kiln/base/escape.h"
#include "kiln/internal/layout.h"

namespace kiln::map {
namespace {

namespace hdr = internal::hdr;
namespace desc = internal::desc;

// A field's name and bytes; the offsets are core's (kiln/internal/layout.h),
// the one place the format's layout is written down.
struct Field {
  std::size_t offset;
  std::uint32_t size;
  std::string_view name;
};

// docs/spec.md, section 2.2.
constexpr std::array<Field, 9> kHeaderFields = {{
    {hdr::kMagic, 4, "magic"},
    {hdr::kVersion, 1, "version"},
    {hdr::kFlags, 1, "flags"},
    {hdr::kReserved0, 2, "reserved"},
    {hdr::kTensorCount, 4, "tensor_count"},
    {hdr::kNameBytes, 4, "name_bytes"},
    {hdr::kPayloadBytes, 8, "payload_bytes"},
    {hdr::kDirectoryBytes, 8, "directory_bytes"},
    {hdr::kReserved1, 32, "reserved"},
}};

// docs/spec.md, section 2.3 (shape is eight slots of 8 bytes).
constexpr std::array<Field, 17> kDescriptorFields = {{
    {desc::kDtype, 2, "dtype"},
    {desc::kRank, 1, "rank"},
    {desc::kReserved0, 1, "reserved"},
    {desc::kNameOff, 2, "name_off"},
    {desc::kNameLen, 2, "name_len"},
    {desc::kLayoutOff, 2, "layout_off"},
    {desc::kLayoutLen, 2, "layout_len"},
    {desc::kBlockSize, 4, "block_size"},
    {desc::kQuantScheme, 2, "quant_scheme"},
    {desc::kQuantAxis, 2, "quant_axis"},
    {desc::kGroupSize, 4, "group_size"},
    {desc::kScaleIndex, 4, "scale_index"},
    {desc::kOuterIndex, 4, "outer_index"},
    {desc::kByteOffset, 8, "byte_offset"},
    {desc::kByteLength, 8, "byte_length"},
    {desc::kShape, 64, "shape"},
    {desc::kReserved1, 16, "reserved"},
}};

std::string Range(std::uint64_t first, std::uint64_t last) {
  return first == last ? "byte " + std::to_string(first)
                       : "bytes " + std::to_string(first) + ".." + std::to_string(last);
}

std::string FieldName(std::span<const Field> table, std::uint64_t within) {
  for (const Field& f : table) {
    if (f.size == 0 || within < f.offset || within >= std::uint64_t{f.offset} + f.size) continue;
    std::string name(f.name);
    if (name == "shape") {
      const std::uint64_t slot = (within - f.offset) / 8;
      return "shape[" + std::to_string(slot) + "] (" +
             Range(f.offset + 8 * slot, f.offset + 8 * slot + 7) + ")";
    }
    return name + " (" + Range(f.offset, f.offset + f.size - 1) + ")";
  }
  return "byte " + std::to_string(within);
}

// Descriptor i's field at `within`, read from the prefix if it holds it.
template <typename T>
std::optional<T> DescriptorValue(std::span<const std::uint8_t> prefix, std::uint64_t i,
                                 std::size_t within) {
  const std::optional<std::uint64_t> at =
      base::CheckedAdd(kHeaderSize + within, i * std::uint64_t{kDescriptorSize});
  base::ByteReader r(prefix);
  if (!at || !r.Skip64(*at)) return std::nullopt;
  const auto b = r.ReadFixed<sizeof(T)>();
  if (!b) return std::nullopt;
  return base::LoadLe<T, 0>(*b);
}

// The escaped, quoted name of tensor i, or "" when the prefix does not hold
// it or the block has no names.
std::string NameOf(std::span<const std::uint8_t> prefix, const HeaderInfo& h, std::uint32_t i) {
  if (!h.has_names()) return "";
  const auto off = DescriptorValue<std::uint16_t>(prefix, i, 4);
  const auto len = DescriptorValue<std::uint16_t>(prefix, i, 6);
  if (!off || !len || *len == 0) return "";
  const std::uint64_t heap = kHeaderSize + std::uint64_t{kDescriptorSize} * h.tensor_count;
  const std::uint64_t begin = heap + *off;
  if (std::uint64_t{*off} + *len > h.name_bytes || begin > prefix.size() ||
      prefix.size() - begin < *len) {
    return "";
  }
  const std::string_view text(reinterpret_cast<const char*>(prefix.data() + begin), *len);
  // Appended in place: " " + std::string&& trips GCC 12's -Wrestrict at -O3.
  std::string out = " ";
  out += base::Quoted(text);
  return out;
}

// Every directory rule held: the names and payload ranges may be read.
bool DirectoryHeld(const Error* verdict) {
  if (verdict == nullptr) return true;
  switch (verdict->rule) {
    case Rule::N5:
    case Rule::Q5:
    case Rule::Q6:
    case Rule::Q7:
    case Rule::P1:
    case Rule::P2:
      return true;
    default:
      return false;
  }
}

class Builder {
 public:
  explicit Builder(BlockMap* m) : m_(m) {}
  void Add(RegionKind kind, std::uint64_t begin, std::uint64_t end, std::string label,
           std::optional<std::uint32_t> tensor = std::nullopt) {
    if (end <= begin) return;
    // The part past the end of the file was declared but is missing.
    if (begin < m_->file_size) {
      const std::uint64_t present_end = std::min(end, m_->file_size);
      m_->regions.push_back({kind, begin, present_end, tensor, label});
      begin = present_end;
      if (begin == end) return;
    }
    if (kind != RegionKind::kMissing) {
      label = "missing: " + label;
      kind = RegionKind::kMissing;
    }
    m_->regions.push_back({kind, begin, end, tensor, std::move(label)});
  }

 private:
  BlockMap* m_;
};

void AddPayloads(std::span<const std::uint8_t> prefix, const HeaderInfo& h, bool ranges_known,
                 Builder& b) {
  const std::uint64_t base = h.payload_base;
  const std::uint64_t end = h.block_length;
  const std::uint64_t table_end =
      kHeaderSize + std::uint64_t{kDescriptorSize} * std::uint64_t{h.tensor_count};
  if (!ranges_known || h.tensor_count > kMaxItemRegions || prefix.size() < table_end) {
    b.Add(RegionKind::kPayload, base, end,
          "payload region (" + std::to_string(h.payload_bytes) + " bytes, " +
              std::to_string(h.tensor_count) + (h.tensor_count == 1 ? " tensor)" : " tensors)"));
    return;
  }
  struct Span {
    std::uint64_t offset;
    std::uint64_t length;
    std::uint32_t index;
  };
  std::vector<Span> spans;
  for (std::uint32_t i = 0; i < h.tensor_count; ++i) {
    const auto off = DescriptorValue<std::uint64_t>(prefix, i, 32);
    const auto len = DescriptorValue<std::uint64_t>(prefix, i, 40);
    if (!off || !len || *len == 0) continue;
    const std::optional<std::uint64_t> stop = base::CheckedAdd(*off, *len);
    if (!stop || *stop > h.payload_bytes) continue;  // D8/D9 held; kept safe anyway
    spans.push_back({*off, *len, i});
  }
  std::sort(spans.begin(), spans.end(),
            [](const Span& a, const Span& c) { return a.offset < c.offset; });
  std::uint64_t at = 0;  // relative to payload_base
  for (const Span& s : spans) {
    if (s.offset < at) continue;  // overlapping (P1): the mark shows it
    if (s.offset > at) b.Add(RegionKind::kGap, base + at, base + s.offset, "gap (no tensor)");
    b.Add(RegionKind::kPayload, base + s.offset, base + s.offset + s.length,
          "payload of tensor " + std::to_string(s.index) + NameOf(prefix, h, s.index), s.index);
    at = s.offset + s.length;
  }
  if (at < h.payload_bytes) b.Add(RegionKind::kGap, base + at, end, "gap (no tensor)");
}

}  // namespace

std::string_view RegionKindName(RegionKind kind) {
  switch (kind) {
    case RegionKind::kHeader:
      return "header";
    case RegionKind::kDescriptor:
      return "descriptor";
    case RegionKind::kNameHeap:
      return "name-heap";
    case RegionKind::kPadding:
      return "padding";
    case RegionKind::kPayload:
      return "payload";
    case RegionKind::kGap:
      return "gap";
    case RegionKind::kTrailing:
      return "trailing";
    case RegionKind::kMissing:
      return "missing";
    case RegionKind::kUnknown:
      return "unknown";
  }
  return "unknown";
}

BlockMap Describe(std::span<const std::uint8_t> prefix, std::uint64_t file_size,
                  const Error* verdict) {
  BlockMap m;
  m.file_size = file_size;
  if (prefix.size() > file_size) prefix = prefix.first(static_cast<std::size_t>(file_size));
  Builder b(&m);
  const Result<HeaderInfo> header = ReadHeader(prefix);
  if (!header.ok()) {
    b.Add(RegionKind::kHeader, 0, kHeaderSize, "header");
    if (file_size > kHeaderSize) {
      b.Add(RegionKind::kUnknown, kHeaderSize, file_size,
            "rest of the file (layout unknown: the header broke a rule)");
    }
  } else {
    const HeaderInfo& h = header.value();
    m.header_known = true;
    m.header = h;
    const bool held = DirectoryHeld(verdict);
    b.Add(RegionKind::kHeader, 0, kHeaderSize, "header");
    const std::uint32_t n = h.tensor_count;
    const std::uint32_t each = std::min(n, kMaxItemRegions);
    for (std::uint32_t i = 0; i < each; ++i) {
      const std::uint64_t at = kHeaderSize + std::uint64_t{kDescriptorSize} * i;
      b.Add(RegionKind::kDescriptor, at, at + kDescriptorSize,
            "descriptor " + std::to_string(i) + (held ? NameOf(prefix, h, i) : ""), i);
    }
    const std::uint64_t table_end = kHeaderSize + std::uint64_t{kDescriptorSize} * n;
    if (each < n) {
      b.Add(RegionKind::kDescriptor, kHeaderSize + std::uint64_t{kDescriptorSize} * each, table_end,
            "descriptors " + std::to_string(each) + ".." + std::to_string(n - 1));
    }
    const std::uint64_t dir_end = kHeaderSize + h.directory_bytes;
    b.Add(RegionKind::kNameHeap, table_end, dir_end,
          "name heap (" + std::to_string(h.name_bytes) + " bytes)");
    b.Add(RegionKind::kPadding, dir_end, h.payload_base, "directory padding");
    AddPayloads(prefix, h, held, b);
    if (file_size > h.block_length) {
      b.Add(RegionKind::kTrailing, h.block_length, file_size, "bytes after block_length");
    }
  }
  if (verdict != nullptr) {
    Mark mark;
    mark.offset = verdict->offset;
    mark.tensor = verdict->tensor;
    mark.field = FieldAt(m, verdict->offset);
    mark.verdict = verdict->ToString();
    m.mark = std::move(mark);
  }
  return m;
}

BlockMap Describe(const Directory& dir, std::uint64_t file_size) {
  return Describe(dir.block(), file_size, nullptr);
}

std::string FieldAt(const BlockMap& map, std::uint64_t offset) {
  std::string field;
  if (offset < kHeaderSize) {
    field = "header, " + FieldName(kHeaderFields, offset);
  } else if (!map.header_known) {
    field = "byte " + std::to_string(offset) + " (after the header; layout unknown)";
  } else {
    const HeaderInfo& h = map.header;
    const std::uint64_t table_end =
        kHeaderSize + std::uint64_t{kDescriptorSize} * std::uint64_t{h.tensor_count};
    const std::uint64_t dir_end = kHeaderSize + h.directory_bytes;
    if (offset < table_end) {
      const std::uint64_t i = (offset - kHeaderSize) / kDescriptorSize;
      const std::uint64_t within = (offset - kHeaderSize) % kDescriptorSize;
      field = "descriptor " + std::to_string(i) + ", " + FieldName(kDescriptorFields, within);
    } else if (offset < dir_end) {
      field = "name heap, byte " + std::to_string(offset - table_end);
    } else if (offset < h.payload_base) {
      field = "directory padding, byte " + std::to_string(offset - dir_end);
    } else if (offset < h.block_length) {
      field = "payload region, byte " + std::to_string(offset - h.payload_base);
      const auto holder =
          std::find_if(map.regions.begin(), map.regions.end(), [&](const Region& r) {
            return r.begin <= offset && offset < r.end &&
                   (r.kind == RegionKind::kPayload || r.kind == RegionKind::kGap);
          });
      if (holder != map.regions.end()) field += " (" + holder->label + ")";
    } else {
      field = "byte " + std::to_string(offset) + ", after block_length " +
              std::to_string(h.block_length);
    }
  }
  if (offset >= map.file_size) {
    field += "; the file ends at byte " + std::to_string(map.file_size);
  }
  return field;
}

}  // namespace kiln::map
