// kiln convert: a Kiln block into a safetensors file.
#include <algorithm>
#include <iterator>

#include "absl/strings/str_format.h"
#include "commands.h"
#include "convert.h"
#include "kiln/base/output_file.h"
#include "kiln/directory.h"
#include "kiln/formats/safetensors.h"
#include "mapped_file.h"
#include "progress.h"
#include "report.h"

namespace kiln::cli {
namespace {

// safetensors has no quantisation fields: the scale tensors travel as
// ordinary tensors, but which tensor they scale is lost. Say so.
void ReportDroppedQuantisation(const Directory& dir, std::ostream& err) {
  std::vector<std::string> names;
  for (std::uint32_t i = 0; i < dir.tensor_count(); ++i) {
    const Tensor t = dir.tensor(i);
    if (t.quant.scheme != QuantScheme::kNone) names.push_back(base::Escape(t.name.substr(0, 80)));
  }
  if (names.empty()) return;
  err << absl::StrFormat(
      "kiln convert: safetensors has no place for quantisation parameters: %d tensors keep their "
      "values but lose axis, group size and scale references:",
      names.size());
  for (std::size_t i = 0; i < names.size() && i < 20; ++i) err << " \"" << names[i] << "\"";
  err << (names.size() > 20 ? " ...\n" : "\n");
}

}  // namespace

int KilnToSafetensors(const std::string& in, const std::string& out, const Limits& limits,
                      std::ostream& log, std::ostream& err) {
  const MappedFile file(in);
  if (!file.ok()) {
    err << "kiln convert: " << base::Escape(in) << ": " << file.error() << "\n";
    return kExitUsage;
  }
  ParseOptions options;
  options.limits = limits;
  const Result<Directory> parsed = Parse(file.bytes(), options);
  if (!parsed.ok()) {  // as kiln validate prints it
    err << base::Escape(in) << ": " << parsed.error().ToString() << "\n";
    return kExitInvalid;
  }
  const Directory& dir = parsed.value();
  std::vector<Tensor> tensors;
  std::vector<formats::SafetensorsEntry> entries;
  for (std::uint32_t i = 0; i < dir.tensor_count(); ++i) {
    tensors.push_back(dir.tensor(i));
    if (tensors.back().name.empty()) {
      err << "kiln convert: " << base::Escape(in) << ": tensor " << i
          << " has no name, and safetensors needs one\n";
      return kExitInvalid;
    }
  }
  // After the loop, so the dims() views stay put.
  entries.reserve(tensors.size());
  std::transform(tensors.begin(), tensors.end(), std::back_inserter(entries), [](const Tensor& t) {
    return formats::SafetensorsEntry{t.name, t.dtype, t.dims(), t.byte_length};
  });
  const formats::FormatResult<std::string> header = formats::SafetensorsHeader(entries);
  if (!header.ok()) {
    err << "kiln convert: " << base::Escape(in) << ": " << header.error().message << "\n";
    return kExitInvalid;
  }
  ReportDroppedQuantisation(dir, err);
  Progress progress(err, "kiln convert", dir.header().payload_bytes);
  base::OutputFile output(out);  // a failed Write leaves it !ok(): Commit then fails
  const auto& h = header.value();
  output.Write({reinterpret_cast<const std::uint8_t*>(h.data()), h.size()});
  for (const Tensor& t : tensors) WriteWithProgress(output, t.payload, &progress);
  progress.Finish();
  if (!output.ok()) {
    err << "kiln convert: " << base::Escape(out) << ": " << output.error() << "\n";
    return kExitUsage;
  }
  // Reported before the rename: exit 0 if and only if OUT is in place.
  if (!ReportBeforeCommit(log, err, "kiln convert",
                          absl::StrFormat("converted %d tensors from kiln to safetensors: %s\n",
                                          tensors.size(), base::Escape(out)))) {
    err << "kiln convert: " << base::Escape(out) << ": not written (the report failed)\n";
    return kExitUsage;
  }
  if (!output.Commit()) {
    err << "kiln convert: " << base::Escape(out) << ": " << output.error() << "; not written\n";
    return kExitUsage;
  }
  return kExitOk;
}

}  // namespace kiln::cli
