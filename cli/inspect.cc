#include <algorithm>
#include <array>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "commands.h"
#include "json.h"
#include "kiln/base/escape.h"
#include "kiln/block_map_svg.h"
#include "mapped_file.h"
#include "remote_file.h"
#include "report.h"

namespace kiln::cli {
namespace {

std::string ShapeText(const Tensor& t) {
  return absl::StrCat("[", absl::StrJoin(t.dims(), ", "), "]");
}

std::string QuantText(const Tensor& t) {
  const Quantization& q = t.quant;
  if (q.scheme == QuantScheme::kNone) return "-";
  std::string out = q.scheme == QuantScheme::kPerAxis
                        ? absl::StrFormat("axis %d", q.axis)
                        : absl::StrFormat("axis %d group %d", q.axis, q.group_size);
  if (q.scale_index) absl::StrAppendFormat(&out, " scale #%d", *q.scale_index);
  if (q.outer_index) absl::StrAppendFormat(&out, " outer #%d", *q.outer_index);
  return out;
}

std::string FlagsText(const HeaderInfo& h) {
  return absl::StrFormat("0x%02x (%slittle-endian)", h.flags, h.has_names() ? "names, " : "");
}

// A column of the table is at most this many display columns wide, so one
// long name cannot pad every row (the full name is in --json).
constexpr std::size_t kMaxColumn = 48;
constexpr std::string_view kCutMarker = "...";

bool IsContinuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Display columns of printable text, counted as code points (an escape like
// \x1b is four ASCII columns; wide characters count one).
std::size_t Columns(std::string_view s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return !IsContinuation(c); }));
}

// The first `n` code points of `s`.
std::string_view FirstColumns(std::string_view s, std::size_t n) {
  std::size_t at = 0;
  for (std::size_t seen = 0; at < s.size(); ++at) {
    if (!IsContinuation(s[at]) && seen++ == n) break;
  }
  return s.substr(0, at);
}

// `text` escaped for the terminal and cut to kMaxColumn columns, "..."
// marking a cut. Only a bounded prefix is escaped: escaping never makes a
// code point narrower, so kMaxColumn code points (at most 4 bytes each) give
// at least kMaxColumn columns.
std::string Cell(std::string_view text) {
  if (text.empty()) return "-";
  std::size_t n = std::min(text.size(), 4 * kMaxColumn + 4);
  while (n < text.size() && n > 0 && IsContinuation(text[n])) --n;
  std::string shown = base::Escape(text.substr(0, n));
  if (n == text.size() && Columns(shown) <= kMaxColumn) return shown;
  return std::string(FirstColumns(shown, kMaxColumn - kCutMarker.size())) + std::string(kCutMarker);
}

using Row = std::array<std::string, 8>;

Row TensorRow(const Tensor& t, std::uint32_t i) {
  return {absl::StrCat(i),
          Cell(t.name),
          std::string(GetDtypeInfo(t.dtype).name),
          ShapeText(t),
          absl::StrCat(t.byte_offset),
          absl::StrCat(t.byte_length),
          QuantText(t),
          t.layout.empty() ? "-" : absl::StrFormat("%s/%d", Cell(t.layout), t.block_size)};
}

void PrintRow(const Row& r, const std::array<std::size_t, 8>& width, std::ostream& out) {
  std::string line;
  for (std::size_t c = 0; c < r.size(); ++c) {
    line += r[c];
    if (c + 1 < r.size()) line += std::string(width[c] - Columns(r[c]) + 2, ' ');
  }
  out << line << "\n";
}

// The header fields, then one row per tensor. Every cell is bounded (names
// and layouts cut at kMaxColumn, shapes at 8 dimensions), so the output is
// linear in the tensor count. Two passes: the widths, then the rows,
// written as they are made; a failed write stops it.
void PrintTable(const Directory& dir, std::ostream& out) {
  const HeaderInfo& h = dir.header();
  out << absl::StrFormat(
      "version 2, flags %s\ntensor_count %d, name_bytes %d, directory_bytes %d, payload_base %d, "
      "payload_bytes %d, block_length %d\n",
      FlagsText(h), h.tensor_count, h.name_bytes, h.directory_bytes, h.payload_base,
      h.payload_bytes, h.block_length);
  if (h.tensor_count == 0) return;
  const Row head = {"index", "name", "dtype", "shape", "offset", "length", "quant", "layout"};
  std::array<std::size_t, 8> width{};
  auto widen = [&](const Row& r) {
    for (std::size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], Columns(r[c]));
  };
  widen(head);
  for (std::uint32_t i = 0; i < dir.tensor_count(); ++i) widen(TensorRow(dir.tensor(i), i));
  PrintRow(head, width, out);
  for (std::uint32_t i = 0; i < dir.tensor_count() && out; ++i) {
    PrintRow(TensorRow(dir.tensor(i), i), width, out);
  }
}

std::string TensorJson(const Tensor& t) {
  const Quantization& q = t.quant;
  std::string out = absl::StrFormat(
      R"({"index": %d, "name": %s, "dtype": "%s", "shape": [%s], "element_count": %d, )"
      R"("byte_offset": %d, "byte_length": %d, "layout": %s, "block_size": %d, )"
      R"("quant": {"scheme": %d)",
      t.index, t.name.empty() ? "null" : JsonString(t.name), GetDtypeInfo(t.dtype).name,
      absl::StrJoin(t.dims(), ", "), t.element_count, t.byte_offset, t.byte_length,
      t.layout.empty() ? "null" : JsonString(t.layout), t.block_size, static_cast<int>(q.scheme));
  if (q.scheme != QuantScheme::kNone) {
    absl::StrAppendFormat(&out, R"(, "axis": %d, "group_size": %d)", q.axis, q.group_size);
  }
  if (q.scale_index) absl::StrAppendFormat(&out, R"(, "scale_index": %d)", *q.scale_index);
  if (q.outer_index) absl::StrAppendFormat(&out, R"(, "outer_index": %d)", *q.outer_index);
  return out + "}}";
}

void PrintJson(const std::string& path, const Directory& dir, std::ostream& out) {
  const HeaderInfo& h = dir.header();
  out << absl::StrFormat(
      R"({"file": %s, "ok": true, "header": {"version": 2, "flags": %d, "tensor_count": %d, )"
      R"("name_bytes": %d, "payload_bytes": %d, "directory_bytes": %d, "payload_base": %d, )"
      R"("block_length": %d}, "tensors": [)",
      JsonString(path), h.flags, h.tensor_count, h.name_bytes, h.payload_bytes, h.directory_bytes,
      h.payload_base, h.block_length);
  for (std::uint32_t i = 0; i < dir.tensor_count() && out; ++i) {
    out << (i == 0 ? "\n  " : ",\n  ") << TensorJson(dir.tensor(i));
  }
  out << (dir.tensor_count() == 0 ? "]}\n" : "\n]}\n");
}

// The report on one block: `dir` when it is valid, else `error`; `prefix`
// holds the file's first bytes (at least what the block map reads) and
// `size` is the file's size.
int Report(const std::string& path, const Directory* dir, const Error* error,
           std::span<const std::uint8_t> prefix, std::uint64_t size, const Options& options,
           std::ostream& out, std::ostream& err) {
  if (options.map) {  // the block map, valid or not
    const map::BlockMap m =
        dir != nullptr ? map::Describe(*dir, size) : map::Describe(prefix, size, error);
    out << map::Svg(m, base::Escape(path));
    return FinishReport(out, err, "kiln inspect", dir != nullptr ? kExitOk : kExitInvalid);
  }
  if (dir == nullptr) {
    if (options.json) {
      out << "{\"file\": " << JsonString(path) << ", " << ErrorFields(*error) << "}\n";
    } else {
      out << base::Escape(path) << ": " << error->ToString() << "\n";
    }
    return FinishReport(out, err, "kiln inspect", kExitInvalid);
  }
  if (options.json) {
    PrintJson(path, *dir, out);
  } else {
    out << base::Escape(path) << ": ok\n";
    PrintTable(*dir, out);
  }
  return FinishReport(out, err, "kiln inspect", kExitOk);
}

// A remote block (remote_file.h): its structure read with range requests.
int InspectUrl(const std::string& url, const Options& options, std::ostream& out,
               std::ostream& err) {
  const RemoteCheck c = CheckRemote(url, options);
  if (!c.io_error.empty()) {
    err << "kiln: " << base::Escape(url) << ": " << c.io_error << "\n";
    return kExitUsage;
  }
  const RangeValidator& v = *c.validator;
  if (v.status() == RangeStatus::kComplete) {
    return Report(url, &v.directory(), nullptr, {}, c.size, options, out, err);
  }
  // The map of a rejection from the bytes the validator kept (the header,
  // or the directory region once H1..H8 held): nothing is asked again.
  return Report(url, nullptr, &v.error(), v.kept(), c.size, options, out, err);
}

}  // namespace

int RunInspect(const Options& options, std::ostream& out, std::ostream& err) {
  if (options.files.size() != 1) {
    err << "kiln inspect: expects exactly one FILE\n";
    return kExitUsage;
  }
  const std::string& path = options.files.front();
  if (IsUrl(path)) return InspectUrl(path, options, out, err);
  const MappedFile file(path);
  if (!file.ok()) {
    err << "kiln: " << base::Escape(path) << ": " << file.error() << "\n";
    return kExitUsage;
  }
  const Result<Directory> r = Parse(file.bytes(), options.parse);
  if (file.cut()) {  // no verdict on the zeros a truncated file left
    err << "kiln: " << base::Escape(path) << ": " << base::kInputCutMessage << "\n";
    return kExitUsage;
  }
  return Report(path, r.ok() ? &r.value() : nullptr, r.ok() ? nullptr : &r.error(), file.bytes(),
                file.bytes().size(), options, out, err);
}

}  // namespace kiln::cli
