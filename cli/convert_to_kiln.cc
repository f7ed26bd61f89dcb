// kiln convert: safetensors and GGUF files into Kiln blocks.
#include <algorithm>
#include <iterator>
#include <numeric>

#include "absl/strings/str_format.h"
#include "commands.h"
#include "convert.h"
#include "kiln/formats/gguf.h"
#include "kiln/formats/safetensors.h"
#include "kiln/writer.h"
#include "mapped_file.h"
#include "progress.h"
#include "report.h"
#include "source_payload.h"
#include "write_block.h"

namespace kiln::cli {
namespace {

struct Item {
  TensorRequest request;
  std::span<const std::uint8_t> data;  // into the mapped input
};

// The kiln request for a GGUF tensor: a plain type maps to its dtype; a
// quantised one becomes an opaque tensor with layout "ggml.<type name in
// lower case>" (e.g. "ggml.q4_k") and block_size the ggml block size.
TensorRequest GgufRequest(const formats::GgufTensor& tensor) {
  TensorRequest r;
  r.name = tensor.name;
  r.shape = tensor.shape;
  if (tensor.type->dtype) {
    r.dtype = *tensor.type->dtype;
    return r;
  }
  r.dtype = Dtype::kOpaque;
  r.layout = "ggml.";
  for (const char c : tensor.type->name) {
    r.layout += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  r.block_size = tensor.type->block_size;
  return r;
}

// Writes the tensors as a Kiln block; an exit code.
int WriteKiln(const std::vector<Item>& items, const std::string& out, std::string_view from,
              const InputLimits& limits, std::ostream& log, std::ostream& err) {
  // All in one mapped file: the sum fits.
  const std::uint64_t total =
      std::accumulate(items.begin(), items.end(), std::uint64_t{0},
                      [](std::uint64_t sum, const Item& item) { return sum + item.data.size(); });
  Progress progress(err, "kiln convert", total);
  BlockWriter writer;
  for (const Item& item : items) {
    const Result<std::uint32_t> added =
        writer.Add(item.request, SourcePayload(item.data, 0, &progress));
    if (!added.ok()) {
      err << "kiln convert: tensor \"" << base::Escape(item.request.name.substr(0, 200))
          << "\" cannot be stored in kiln: " << added.error().ToString() << "\n";
      return kExitInvalid;
    }
  }
  // Reported before the rename: exit 0 if and only if OUT is in place.
  const int code = WriteBlockFile(writer, limits, out, "kiln convert", true, err, [&] {
    return ReportBeforeCommit(log, err, "kiln convert",
                              absl::StrFormat("converted %d tensors from %s to kiln: %s\n",
                                              items.size(), from, base::Escape(out)));
  });
  progress.Finish();
  return code;
}

// Maps `in`; reports and returns an exit code when it cannot.
std::optional<int> Open(const MappedFile& file, const std::string& in, std::ostream& err) {
  if (file.ok()) return std::nullopt;
  err << "kiln convert: " << base::Escape(in) << ": " << file.error() << "\n";
  return kExitUsage;
}

int Invalid(const std::string& in, const formats::FormatError& error, std::ostream& err) {
  err << "kiln convert: " << base::Escape(in) << ": " << error.ToString() << "\n";
  return kExitInvalid;
}

}  // namespace

int SafetensorsToKiln(const std::string& in, const std::string& out, const InputLimits& limits,
                      std::ostream& log, std::ostream& err) {
  const MappedFile file(in);
  if (const auto code = Open(file, in, err)) return *code;
  const formats::FormatResult<formats::SafetensorsFile> st =
      formats::ReadSafetensors(file.bytes(), limits.reader);
  if (!st.ok()) return Invalid(in, st.error(), err);
  ReportDroppedMetadata(
      st.value().metadata_count,
      [&st](const MetadataVisitor& visit) {
        formats::ForEachSafetensorsMetadata(st.value(), visit);
      },
      err);
  std::vector<Item> items;
  for (const formats::SafetensorsTensor& t : st.value().tensors) {
    Item item{{}, t.data};
    item.request.name = std::string(t.name);
    item.request.dtype = t.dtype;
    item.request.shape = t.shape;
    items.push_back(std::move(item));
  }
  return WriteKiln(items, out, "safetensors", limits, log, err);
}

int GgufToKiln(const std::string& in, const std::string& out, const InputLimits& limits,
               std::ostream& log, std::ostream& err) {
  const MappedFile file(in);
  if (const auto code = Open(file, in, err)) return *code;
  const formats::FormatResult<formats::GgufFile> gguf =
      formats::ReadGguf(file.bytes(), limits.reader);
  if (!gguf.ok()) return Invalid(in, gguf.error(), err);
  // Only the entries the report prints are rendered.
  const auto walk = [&gguf](const MetadataVisitor& visit) {
    formats::ForEachGgufMetadata(gguf.value(), [&visit](const formats::GgufKeyValue& kv) {
      return visit(kv.key, formats::FormatGgufValue(kv));
    });
  };
  ReportDroppedMetadata(gguf.value().metadata_count, walk, err);
  std::vector<Item> items;
  items.reserve(gguf.value().tensors.size());
  std::transform(gguf.value().tensors.begin(), gguf.value().tensors.end(),
                 std::back_inserter(items), [](const formats::GgufTensor& t) {
                   return Item{GgufRequest(t), t.data};
                 });
  return WriteKiln(items, out, "gguf", limits, log, err);
}

}  // namespace kiln::cli
