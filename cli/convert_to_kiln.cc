// kiln convert: safetensors and GGUF files into Kiln blocks.
#include "absl/strings/str_format.h"
#include "commands.h"
#include "convert.h"
#include "kiln/formats/gguf.h"
#include "kiln/formats/safetensors.h"
#include "kiln/writer.h"
#include "mapped_file.h"
#include "output_file.h"
#include "progress.h"

namespace kiln::cli {
namespace {

struct Item {
  TensorRequest request;
  std::span<const std::uint8_t> data;  // into the mapped input
};

// Writes the tensors as a Kiln block; an exit code.
int WriteKiln(const std::vector<Item>& items, const std::string& out, std::string_view from,
              std::ostream& log, std::ostream& err) {
  std::uint64_t total = 0;
  for (const Item& item : items) total += item.data.size();  // all in one mapped file
  Progress progress(err, "kiln convert", total);
  BlockWriter writer;
  for (const Item& item : items) {
    const Result<std::uint32_t> added =
        writer.Add(item.request, SourcePayload(item.data, 0, &progress));
    if (!added.ok()) {
      err << "kiln convert: tensor \"" << Printable(item.request.name.substr(0, 200))
          << "\" cannot be stored in kiln: " << added.error().ToString() << "\n";
      return kExitInvalid;
    }
  }
  const int code = WriteBlockFile(writer, out, "kiln convert", true, err);
  progress.Finish();
  if (code == kExitOk) {
    log << absl::StrFormat("converted %d tensors from %s to kiln: %s\n", items.size(), from,
                           Printable(out));
  }
  return code;
}

// Maps `in`; reports and returns an exit code when it cannot.
std::optional<int> Open(const MappedFile& file, const std::string& in, std::ostream& err) {
  if (file.ok()) return std::nullopt;
  err << "kiln convert: " << Printable(in) << ": " << file.error() << "\n";
  return kExitUsage;
}

int Invalid(const std::string& in, const std::string& message, std::ostream& err) {
  err << "kiln convert: " << Printable(in) << ": " << message << "\n";
  return kExitInvalid;
}

}  // namespace

int SafetensorsToKiln(const std::string& in, const std::string& out, std::ostream& log,
                      std::ostream& err) {
  const MappedFile file(in);
  if (const auto code = Open(file, in, err)) return *code;
  const formats::FormatResult<formats::SafetensorsFile> st = formats::ReadSafetensors(file.bytes());
  if (!st.ok()) return Invalid(in, st.error().message, err);
  ReportDroppedMetadata(st.value().metadata, err);
  std::vector<Item> items;
  for (const formats::SafetensorsTensor& t : st.value().tensors) {
    Item item{{}, t.data};
    item.request.name = t.name;
    item.request.dtype = t.dtype;
    item.request.shape = t.shape;
    items.push_back(std::move(item));
  }
  return WriteKiln(items, out, "safetensors", log, err);
}

int GgufToKiln(const std::string& in, const std::string& out, std::ostream& log,
               std::ostream& err) {
  const MappedFile file(in);
  if (const auto code = Open(file, in, err)) return *code;
  const formats::FormatResult<formats::GgufFile> gguf = formats::ReadGguf(file.bytes());
  if (!gguf.ok()) return Invalid(in, gguf.error().message, err);
  std::vector<std::pair<std::string, std::string>> metadata;
  for (const formats::GgufKeyValue& kv : gguf.value().metadata) {
    metadata.emplace_back(kv.key, formats::FormatGgufValue(kv));
  }
  ReportDroppedMetadata(metadata, err);
  std::vector<Item> items;
  for (const formats::GgufTensor& t : gguf.value().tensors) {
    items.push_back({formats::KilnRequest(t), t.data});
  }
  return WriteKiln(items, out, "gguf", log, err);
}

}  // namespace kiln::cli
