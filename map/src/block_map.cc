// The block map, built from what the validator holds: a Directory, or the
// bytes a rejection was decided on and its Error. Every field offset, the
// header's decode, the descriptor decode, the payload walk (the one P2 makes)
// and what a verdict says held come from core; this file only names regions.
#include "kiln/block_map.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "kiln/base/escape.h"
#include "kiln/internal/fields.h"
#include "kiln/internal/layout.h"
#include "kiln/internal/rules.h"
#include "kiln/internal/scratch.h"

namespace kiln::map {
namespace {

using internal::Bytes;
using internal::Held;

// What the map may read: the block's first bytes, its header once H1..H7
// held, its names and payload ranges once every descriptor rule held.
struct Evidence {
  Bytes bytes;
  std::optional<HeaderInfo> header;
  bool descriptors = false;        // the descriptor table is present and its rules held
  const Directory* dir = nullptr;  // a valid block's directory
};

// The escaped, quoted name of tensor i (" \"name\""), or "" when the
// names are not known or the block has none.
std::string NameOf(const Evidence& ev, std::uint32_t i) {
  if (!ev.descriptors || !ev.header->has_names()) return "";
  std::string_view name;
  if (ev.dir != nullptr) {
    name = ev.dir->tensor(i).name;
  } else {
    const internal::RawDescriptor d =
        internal::DecodeDescriptor(internal::DescriptorAt(ev.bytes, i));
    const std::uint64_t begin = internal::HeapStart(ev.header->tensor_count) + d.name_off;
    const std::uint64_t end = begin + d.name_len;
    // N3 held: the slice lies in the heap. Checked again: a caller of the
    // C ABI may call a block valid that is not.
    if (std::uint64_t{d.name_off} + d.name_len > ev.header->name_bytes || end > ev.bytes.size()) {
      return "";
    }
    name = std::string_view(reinterpret_cast<const char*>(ev.bytes.data() + begin), d.name_len);
  }
  if (name.empty()) return "";
  // Appended in place: " " + std::string&& trips GCC 12's -Wrestrict at -O3.
  std::string out = " ";
  out += base::Quoted(name);
  return out;
}

std::string Plural(std::uint64_t n, std::string_view one, std::string_view many) {
  std::string out = std::to_string(n);
  out += ' ';
  out += n == 1 ? one : many;
  return out;
}

class Builder {
 public:
  explicit Builder(BlockMap* m) : m_(m) {}

  // [begin, end), the part past the end of the file as missing.
  void Add(RegionKind kind, std::uint64_t begin, std::uint64_t end, std::string label,
           std::optional<std::uint32_t> tensor = std::nullopt) {
    if (end <= begin) return;
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

// The payload region in offset order, from core's walk (WalkPayloads, the
// walk rule P2 makes): a region per tensor range and per gap.
class PayloadRegions final : public internal::PayloadVisitor {
 public:
  explicit PayloadRegions(const HeaderInfo& h) : h_(h) {}

  internal::Check Gap(std::uint64_t from, std::uint64_t to) override {
    Take({RegionKind::kGap, from, to, std::nullopt, "gap (no tensor)"});
    return std::nullopt;
  }
  void Range(std::uint32_t i, std::uint64_t begin, std::uint64_t end) override {
    Take({RegionKind::kPayload, begin, end, i, ""});
  }

  // Relative to payload_base; labels of payloads are filled in by the caller.
  [[nodiscard]] std::vector<Region>& pieces() { return pieces_; }

 private:
  // Kept only in order and inside the region (as P1, D8 and D9 make them;
  // checked again for a block a C caller calls valid).
  void Take(Region r) {
    if (r.begin < cursor_ || r.end <= r.begin || r.end > h_.payload_bytes) return;
    cursor_ = r.end;
    pieces_.push_back(std::move(r));
  }

  const HeaderInfo& h_;
  std::uint64_t cursor_ = 0;
  std::vector<Region> pieces_;
};

void AddPayloads(const Evidence& ev, Builder& b) {
  const HeaderInfo& h = *ev.header;
  const auto whole = [&](std::string_view why) {
    b.Add(RegionKind::kPayload, h.payload_base, h.block_length,
          "payload region (" + Plural(h.payload_bytes, "byte", "bytes") + ", " +
              Plural(h.tensor_count, "tensor", "tensors") + std::string(why) + ")");
  };
  if (!ev.descriptors || h.tensor_count > kMaxItemRegions) return whole("");
  internal::Scratch scratch({});
  PayloadRegions walk(h);
  if (internal::WalkPayloads(ev.bytes, h, scratch, walk)) {
    return whole("; ranges overlap (rule P1)");
  }
  std::uint64_t at = 0;
  for (Region& r : walk.pieces()) {
    if (r.begin > at)
      b.Add(RegionKind::kGap, h.payload_base + at, h.payload_base + r.begin, "gap (no tensor)");
    if (r.kind == RegionKind::kPayload) {
      r.label = "payload of tensor " + std::to_string(*r.tensor) + NameOf(ev, *r.tensor);
    }
    b.Add(r.kind, h.payload_base + r.begin, h.payload_base + r.end, std::move(r.label), r.tensor);
    at = r.end;
  }
  if (at < h.payload_bytes) {
    b.Add(RegionKind::kGap, h.payload_base + at, h.block_length, "gap (no tensor)");
  }
}

void AddDirectory(const Evidence& ev, Builder& b) {
  const HeaderInfo& h = *ev.header;
  const std::uint32_t n = h.tensor_count;
  const std::uint32_t each = std::min(n, kMaxItemRegions);
  for (std::uint32_t i = 0; i < each; ++i) {
    const std::uint64_t at = internal::DescriptorFieldOffset(i, 0);
    b.Add(RegionKind::kDescriptor, at, at + kDescriptorSize,
          "descriptor " + std::to_string(i) + NameOf(ev, i), i);
  }
  const std::uint64_t table_end = internal::HeapStart(n);
  if (each < n) {
    b.Add(RegionKind::kDescriptor, internal::HeapStart(each), table_end,
          "descriptors " + std::to_string(each) + ".." + std::to_string(n - 1));
  }
  const std::uint64_t dir_end = kHeaderSize + h.directory_bytes;
  b.Add(RegionKind::kNameHeap, table_end, dir_end,
        "name heap (" + Plural(h.name_bytes, "byte", "bytes") + ")");
  b.Add(RegionKind::kPadding, dir_end, h.payload_base, "directory padding");
}

BlockMap Build(const Evidence& ev, std::uint64_t file_size, const Error* verdict) {
  BlockMap m;
  m.file_size = file_size;
  Builder b(&m);
  b.Add(RegionKind::kHeader, 0, kHeaderSize, "header");
  if (!ev.header) {
    b.Add(RegionKind::kUnknown, kHeaderSize, file_size,
          "rest of the file (layout unknown: the header broke a rule)");
  } else {
    m.header_known = true;
    m.header = *ev.header;
    AddDirectory(ev, b);
    AddPayloads(ev, b);
    if (file_size > m.header.block_length) {
      b.Add(RegionKind::kTrailing, m.header.block_length, file_size, "bytes after block_length");
    }
  }
  if (verdict != nullptr) {
    Mark mark;
    mark.offset = verdict->offset;
    mark.tensor = verdict->tensor;
    mark.place = Locate(m, verdict->offset);
    mark.field = FieldAt(m, verdict->offset);
    mark.verdict = verdict->ToString();
    m.mark = std::move(mark);
  }
  return m;
}

void AppendBytes(std::uint64_t first, std::uint64_t last, std::string& out) {
  out += first == last ? "byte " : "bytes ";
  out += std::to_string(first);
  if (first == last) return;
  out += "..";
  out += std::to_string(last);
}

// The field and its bytes, "byte_length (bytes A..B)" or "shape[K] (bytes A..B)",
// within the record that starts at `record`.
std::string FieldText(const Place& p, std::uint64_t record) {
  std::string out(p.field);
  if (p.slot) {
    out += '[';
    out += std::to_string(*p.slot);
    out += ']';
  }
  out += " (";
  AppendBytes(p.begin - record, p.end - 1 - record, out);
  out += ')';
  return out;
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

BlockMap Describe(const Directory& dir, std::uint64_t file_size) {
  const Evidence ev{dir.block(), dir.header(), true, &dir};
  return Build(ev, file_size, nullptr);
}

BlockMap Describe(std::span<const std::uint8_t> bytes, std::uint64_t file_size,
                  const Error* verdict) {
  if (bytes.size() > file_size) bytes = bytes.first(static_cast<std::size_t>(file_size));
  const Held held = verdict == nullptr ? Held::kDescriptors : internal::HeldBefore(verdict->rule);
  Evidence ev{bytes, std::nullopt, false, nullptr};
  if (held != Held::kNothing) {
    // H1..H7 held on these bytes: core's header check is their decode.
    Result<HeaderInfo> h = internal::CheckHeader(bytes, Limits{});
    if (h.ok()) ev.header = h.value();
  }
  ev.descriptors = ev.header && held == Held::kDescriptors &&
                   bytes.size() >= internal::HeapStart(ev.header->tensor_count);
  return Build(ev, file_size, verdict);
}

BlockMap Describe(const RangeValidator& v) {
  if (v.status() == RangeStatus::kComplete) return Describe(v.directory(), v.file_size());
  return Describe(v.kept(), v.file_size(), &v.error());
}

Place Locate(const BlockMap& map, std::uint64_t offset) {
  Place p;
  const auto in_field = [&](RegionKind kind, std::uint64_t record, const internal::FieldHit& f) {
    p.kind = kind;
    p.field = f.name;
    p.slot = f.slot;
    p.begin = record + f.offset;
    p.end = p.begin + f.size;
    return p;
  };
  const auto in_region = [&](RegionKind kind, std::uint64_t begin, std::uint64_t end) {
    p.kind = kind;
    p.begin = begin;
    p.end = end;
    return p;
  };
  if (offset < kHeaderSize) {
    return in_field(RegionKind::kHeader, 0,
                    internal::HeaderFieldAt(static_cast<std::size_t>(offset)));
  }
  if (!map.header_known) return in_region(RegionKind::kUnknown, offset, offset + 1);
  const HeaderInfo& h = map.header;
  const std::uint64_t table_end = internal::HeapStart(h.tensor_count);
  const std::uint64_t dir_end = kHeaderSize + h.directory_bytes;
  if (offset < table_end) {
    const auto i = static_cast<std::uint32_t>((offset - kHeaderSize) / kDescriptorSize);
    const std::uint64_t record = internal::DescriptorFieldOffset(i, 0);
    p.record = i;
    return in_field(RegionKind::kDescriptor, record,
                    internal::DescriptorFieldAt(static_cast<std::size_t>(offset - record)));
  }
  if (offset < dir_end) return in_region(RegionKind::kNameHeap, table_end, dir_end);
  if (offset < h.payload_base) return in_region(RegionKind::kPadding, dir_end, h.payload_base);
  if (offset >= h.block_length) {
    return in_region(RegionKind::kTrailing, h.block_length, std::max(map.file_size, offset + 1));
  }
  for (std::size_t i = 0; i < map.regions.size(); ++i) {
    const Region& r = map.regions[i];
    if (r.begin <= offset && offset < r.end &&
        (r.kind == RegionKind::kPayload || r.kind == RegionKind::kGap)) {
      p.record = r.tensor;
      p.region = i;
      return in_region(r.kind, r.begin, r.end);
    }
  }
  return in_region(RegionKind::kPayload, h.payload_base, h.block_length);
}

std::string FieldAt(const BlockMap& map, std::uint64_t offset) {
  const Place p = Locate(map, offset);
  std::string field;
  switch (p.kind) {
    case RegionKind::kHeader:
      field = "header, " + FieldText(p, 0);
      break;
    case RegionKind::kUnknown:
      field = "byte " + std::to_string(offset) + " (after the header; layout unknown)";
      break;
    case RegionKind::kDescriptor:
      field = "descriptor " + std::to_string(*p.record) + ", " +
              FieldText(p, internal::DescriptorFieldOffset(*p.record, 0));
      break;
    case RegionKind::kNameHeap:
      field = "name heap, byte " + std::to_string(offset - p.begin);
      break;
    case RegionKind::kPadding:
      field = "directory padding, byte " + std::to_string(offset - p.begin);
      break;
    case RegionKind::kPayload:
    case RegionKind::kGap:
    case RegionKind::kMissing:
      field = "payload region, byte " + std::to_string(offset - map.header.payload_base);
      if (p.region) field += " (" + map.regions[*p.region].label + ")";
      break;
    case RegionKind::kTrailing:
      field = "byte " + std::to_string(offset) + ", after block_length " +
              std::to_string(map.header.block_length);
      break;
  }
  if (offset >= map.file_size) {
    field += "; the file ends at byte " + std::to_string(map.file_size);
  }
  return field;
}

}  // namespace kiln::map
